#!/usr/bin/python3
# SPDX-License-Identifier: ISC
#
# wspeer: WebSocket peers for tests/ws.sh, on Debian's python3-websockets
# (10.4, asyncio API) as the generic, third-party WebSocket end:
#
#   runtime URL EVENTS [--stream-bytes N] [--tiny N] [--connections K]
#       a browser runtime: each connection opens with the ADVR_V1 advertise
#       as one binary message, takes one request per message (a request
#       split over messages gets BAD_ENCODING and a close, as the real one
#       does), answers ResumeRuntime and CollectTracing2 (OK and the first
#       stream bytes in one message, then N bytes, the first --tiny of
#       them as 1-4 byte messages with pings between), closes, redials.
#   server PORTFILE EVENTS [--stream-bytes N]
#       a WebSocket server the router dials, answering as above, without
#       an advertise (a runtime that listens).
#   tool URL split|fragments|collect [--expect N]
#       a tool: ResumeRuntime cut 7 + 13 with a ping between, or as one
#       message in three fragments with a ping among them; or
#       CollectTracing2, printing the stream's size and SHA-256.
#   rawserver PORTFILE EVENTS
#       a WebSocket server written by hand: logs each frame the router
#       sends, with its mask bit, and answers after two pings.
#   raw HOST PORT CASE
#       a hostile client on a plain socket: prints "status N" for the HTTP
#       answer, then "close N" for the close code, or "closed".
#   flood HOST PORT MIB SECONDS [park]
#       after the upgrade (and, with park, an advertise), pings of 125
#       bytes, MIB MiB of them, never reading a pong: prints "sent N" when
#       all went, "stalled N" when the router took no more for SECONDS,
#       or "cut N" when it ended the connection, N the bytes it took.
#
# Events: one line each, "request LEN whole|split SET ID", "stream-end N
# SHA256", "advertise PID".

import asyncio
import hashlib
import os
import socket
import ssl
import struct
import sys

import websockets

MAGIC = b"DOTNET_IPC_V1\0"


def header(size, cset, cid):
    return MAGIC + struct.pack("<HBBH", size, cset, cid, 0)


def ok_reply(payload):
    return header(20 + len(payload), 0xFF, 0x00) + payload


def error_reply(hresult):
    return header(24, 0xFF, 0xFF) + struct.pack("<I", hresult)


def ssl_context(url):
    if not url.startswith("wss:"):
        return None
    ctx = ssl.create_default_context(cafile=os.environ["WSPEER_CA"])
    return ctx


def stream_bytes(n):
    # Deterministic, not constant: a byte lost or moved shows in the hash.
    out = bytearray()
    i = 0
    while len(out) < n:
        out += hashlib.sha256(str(i).encode()).digest()
        i += 1
    return bytes(out[:n])


def log(events, line):
    with open(events, "a") as f:
        f.write(line + "\n")


async def serve_commands(ws, events, nstream, tiny):
    """Answer requests on ws until the command is done."""
    async for msg in ws:
        if not isinstance(msg, bytes):
            log(events, "text-message")
            return
        whole = len(msg) >= 20 and msg[:14] == MAGIC and \
            struct.unpack_from("<H", msg, 14)[0] == len(msg)
        cset, cid = (msg[16], msg[17]) if len(msg) >= 18 else (-1, -1)
        log(events, "request %d %s %d %d" %
            (len(msg), "whole" if whole else "split", cset, cid))
        if not whole:
            await ws.send(error_reply(0x80131384))
            return
        if (cset, cid) == (4, 1):
            await ws.send(ok_reply(struct.pack("<I", 0)))
            return
        if (cset, cid) == (2, 3):
            data = stream_bytes(nstream)
            first = min(16, len(data))
            # The OK and the stream's first bytes merged in one message.
            await ws.send(ok_reply(struct.pack("<Q", 7)) + data[:first])
            i = first
            k = 0
            while i < min(tiny, len(data)):
                step = 1 + k % 4
                await ws.send(data[i:i + step])
                i += step
                k += 1
                if k % 16 == 0:
                    await ws.ping()
            while i < len(data):
                await ws.send(data[i:i + 65536])
                i += 65536
            log(events, "stream-end %d %s" %
                (len(data), hashlib.sha256(data).hexdigest()))
            return
        await ws.send(error_reply(0x80131385))
        return


async def runtime(url, events, nstream, tiny, connections):
    cookie = os.urandom(16)
    pid = os.getpid()
    for _ in range(connections):
        async with websockets.connect(url, ssl=ssl_context(url),
                                      compression=None, max_size=None,
                                      ping_interval=None) as ws:
            await ws.send(b"ADVR_V1\0" + cookie + struct.pack("<QH", pid, 0))
            log(events, "advertise %d" % pid)
            await serve_commands(ws, events, nstream, tiny)
    log(events, "done")


async def server(portfile, events, nstream):
    async def handler(ws, path=None):
        await serve_commands(ws, events, nstream, 0)

    async with websockets.serve(handler, "127.0.0.1", 0, compression=None,
                                max_size=None) as srv:
        port = srv.sockets[0].getsockname()[1]
        with open(portfile + ".tmp", "w") as f:
            f.write("%d\n" % port)
        os.rename(portfile + ".tmp", portfile)
        await asyncio.Future()


async def tool(url, what, expect):
    async with websockets.connect(url, ssl=ssl_context(url),
                                  compression=None, max_size=None,
                                  ping_interval=None) as ws:
        if what in ("split", "fragments"):
            req = header(20, 4, 1)
            if what == "split":
                await ws.send(req[:7])
                await (await ws.ping())
                await ws.send(req[7:])
            else:
                # One message in three fragments, a ping between two.
                async def fragments():
                    yield req[:5]
                    await ws.ping()
                    yield req[5:12]
                    yield req[12:]
                await ws.send(fragments())
            data = b""
            while len(data) < 24:
                data += await ws.recv()
            print("reply %d id %d hresult %d" %
                  (len(data), data[17], struct.unpack_from("<I", data, 20)[0]))
            return 0
        payload = struct.pack("<IIBIQI", 64, 1, 1, 1, 1, 4)
        name = "Microsoft-Windows-DotNETRuntime\0"
        payload += struct.pack("<I", len(name)) + name.encode("utf-16-le")
        payload += struct.pack("<I", 0)
        req = header(20 + len(payload), 2, 3) + payload
        # Cut across three messages, a ping among them.
        await ws.send(req[:3])
        await ws.send(req[3:30])
        await ws.ping()
        await ws.send(req[30:])
        data = b""
        try:
            while True:
                data += await ws.recv()
        except websockets.ConnectionClosed:
            pass
        if len(data) < 28 or data[17] != 0:
            print("bad reply")
            return 1
        stream = data[28:]
        print("bytes=%d sha256=%s" %
              (len(stream), hashlib.sha256(stream).hexdigest()))
        return 0 if expect is None or len(stream) == expect else 1


def raw(host, port, case):
    key = "dGhlIHNhbXBsZSBub25jZQ=="
    path = "/diag"
    method = "GET"
    headers = ["Host: %s:%d" % (host, port), "Upgrade: websocket",
               "Connection: Upgrade", "Sec-WebSocket-Version: 13",
               "Sec-WebSocket-Key: " + key]
    frame = None
    slow = False
    if case == "post":
        method = "POST"
    elif case == "nokey":
        headers = headers[:-1]
    elif case == "path":
        path = "/other"
    elif case == "bigheader":
        headers.append("X-Big: " + "a" * 65536)
    elif case == "manyheaders":
        headers += ["X-H%d: v" % i for i in range(1000)]
    elif case == "slow":
        slow = True
    elif case.startswith("origin="):
        headers.append("Origin: " + case[7:])
    elif case in ("ok", "park"):
        pass
    else:
        mask = b"\x01\x02\x03\x04"
        frames = {
            "unmasked": b"\x82\x05hello",
            "bigping": b"\x89\xfe\x00\xc8" + mask + bytes(200),
            "fragping": b"\x09\x80" + mask,
            "huge": b"\x82\xff\x7f\xff\xff\xff\xff\xff\xff\xff" + mask,
            "reserved": b"\xc2\x80" + mask,
            "close999": b"\x88\x82" + mask +
                        bytes(a ^ b for a, b in zip(b"\x03\xe7", mask)),
            "opcode": b"\x83\x80" + mask,
            "cont": b"\x80\x80" + mask,
            "interleaved": b"\x02\x80" + mask + b"\x82\x80" + mask,
        }
        frame = frames[case]
    req = "%s %s HTTP/1.1\r\n%s\r\n\r\n" % (method, path, "\r\n".join(headers))
    s = socket.create_connection((host, port), timeout=30)
    if slow:
        s.sendall(req[:20].encode())
        # Never finish: the router's deadline must end it.
        s.settimeout(60)
    else:
        s.sendall(req.encode())
    buf = b""
    try:
        while b"\r\n\r\n" not in buf:
            d = s.recv(4096)
            if not d:
                break
            buf += d
    except (ConnectionResetError, socket.timeout):
        pass
    if b"\r\n\r\n" not in buf:
        print("closed")
        return 0
    head, _, rest = buf.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    print("status " + lines[0].split(" ")[1])
    for line in lines[1:]:
        print("header " + line)
    if case == "park":
        return park(s, rest)
    if frame is None:
        return 0
    try:
        s.sendall(frame)
        while len(rest) < 4:
            d = s.recv(4096)
            if not d:
                break
            rest += d
    except (ConnectionResetError, BrokenPipeError):
        pass
    if len(rest) >= 4 and rest[0] == 0x88:
        print("close %d" % struct.unpack_from(">H", rest, 2)[0])
    else:
        print("closed")
    return 0


def park(s, rest):
    """Advertise as a browser runtime, then answer two pings of the router's."""
    mask = os.urandom(4)
    adv = b"ADVR_V1\0" + os.urandom(16) + struct.pack("<QH", os.getpid(), 0)
    s.sendall(b"\x82" + bytes([0x80 | len(adv)]) + mask +
              bytes(b ^ mask[i % 4] for i, b in enumerate(adv)))
    pings = 0
    while pings < 2:
        while len(rest) < 2 or len(rest) < 2 + (rest[1] & 0x7F):
            d = s.recv(4096)
            if not d:
                print("closed after %d pings" % pings)
                return 0
            rest += d
        n = 2 + (rest[1] & 0x7F)
        op, payload, rest = rest[0] & 0x0F, rest[2:n], rest[n:]
        if op == 9:
            pings += 1
            s.sendall(bytes([0x8A, 0x80 | len(payload)]) + mask +
                      bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))
    print("pings %d" % pings)
    return 0


def upgrade(host, port):
    s = socket.create_connection((host, port), timeout=30)
    s.sendall(("GET /diag HTTP/1.1\r\nHost: %s:%d\r\nUpgrade: websocket"
               "\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
               "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n" %
               (host, port)).encode())
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = s.recv(4096)
        if not d:
            raise SystemExit("closed before the upgrade")
        buf += d
    if not buf.startswith(b"HTTP/1.1 101"):
        raise SystemExit("upgrade refused: " + buf.split(b"\r\n")[0].decode())
    return s


def flood(host, port, mib, seconds, park):
    """Pings and never a read: what the router holds for us is bounded."""
    import select
    s = upgrade(host, port)
    mask = b"\x01\x02\x03\x04"
    if park:
        adv = b"ADVR_V1\0" + os.urandom(16) + struct.pack("<QH", os.getpid(), 0)
        s.sendall(b"\x82" + bytes([0x80 | len(adv)]) + mask +
                  bytes(b ^ mask[i % 4] for i, b in enumerate(adv)))
    ping = b"\x89\xfd" + mask + bytes(b ^ mask[i % 4]
                                     for i, b in enumerate(b"p" * 125))
    chunk = ping * 8192
    total, want = 0, mib * 1024 * 1024
    s.setblocking(False)
    view, off = memoryview(chunk), 0
    while total < want:
        _, w, _ = select.select([], [s], [], seconds)
        if not w:
            print("stalled %d" % total)
            return 0
        try:
            n = s.send(view[off:])
        except (BrokenPipeError, ConnectionResetError):
            print("cut %d" % total)
            return 0
        total += n
        off = (off + n) % len(chunk)
    print("sent %d" % total)
    return 0


def read_frame(conn, buf):
    """One frame from conn: (opcode, masked, payload, rest), or None."""
    while True:
        if len(buf) >= 2:
            n, off = buf[1] & 0x7F, 2
            if n == 126 and len(buf) >= 4:
                n, off = struct.unpack_from(">H", buf, 2)[0], 4
            elif n == 127 and len(buf) >= 10:
                n, off = struct.unpack_from(">Q", buf, 2)[0], 10
            masked = buf[1] & 0x80
            end = off + (4 if masked else 0) + n
            if n < 126 or off > 2:
                if len(buf) >= end:
                    mask = buf[off:off + 4] if masked else b"\0\0\0\0"
                    data = bytes(b ^ mask[i % 4] for i, b in
                                 enumerate(buf[end - n:end]))
                    return buf[0] & 0x0F, bool(masked), data, buf[end:]
        d = conn.recv(65536)
        if not d:
            return None
        buf += d


def rawserver(portfile, events):
    """A WebSocket server by hand: the request as it came, then two pings
    of the router's (each logged with its mask bit) before the answer."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    with open(portfile + ".tmp", "w") as f:
        f.write("%d\n" % srv.getsockname()[1])
    os.rename(portfile + ".tmp", portfile)
    conn, _ = srv.accept()
    conn.settimeout(30)
    buf = b""
    while b"\r\n\r\n" not in buf:
        buf += conn.recv(4096)
    head, _, buf = buf.partition(b"\r\n\r\n")
    key = [l.split(b":", 1)[1].strip() for l in head.split(b"\r\n")
           if l.lower().startswith(b"sec-websocket-key:")][0]
    import base64
    accept = base64.b64encode(hashlib.sha1(
        key + b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11").digest())
    conn.sendall(b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket"
                 b"\r\nConnection: Upgrade\r\nSec-WebSocket-Accept: " +
                 accept + b"\r\n\r\n")
    pings = 0
    while pings < 2:
        got = read_frame(conn, buf)
        if got is None:
            log(events, "closed")
            return 0
        op, masked, data, buf = got
        log(events, "frame %d %s %d" % (op, "masked" if masked else
                                         "unmasked", len(data)))
        if op == 9:
            pings += 1
            conn.sendall(bytes([0x8A, len(data)]) + data)
    reply = ok_reply(struct.pack("<I", 0))
    conn.sendall(bytes([0x82, len(reply)]) + reply + b"\x88\x02\x03\xe8")
    got = read_frame(conn, buf)
    while got is not None and got[0] != 8:
        got = read_frame(conn, got[3])
    log(events, "close %s" % ("masked" if got and got[1] else "none"))
    conn.close()
    return 0


def option(args, name, default):
    if name in args:
        i = args.index(name)
        v = args[i + 1]
        del args[i:i + 2]
        return int(v)
    return default


def main(argv):
    args = argv[1:]
    nstream = option(args, "--stream-bytes", 4096)
    tiny = option(args, "--tiny", 0)
    connections = option(args, "--connections", 1)
    expect = option(args, "--expect", None)
    cmd = args[0]
    if cmd == "runtime":
        asyncio.run(runtime(args[1], args[2], nstream, tiny, connections))
        return 0
    if cmd == "server":
        asyncio.run(server(args[1], args[2], nstream))
        return 0
    if cmd == "tool":
        return asyncio.run(tool(args[1], args[2], expect))
    if cmd == "rawserver":
        return rawserver(args[1], args[2])
    if cmd == "raw":
        return raw(args[1], int(args[2]), args[3])
    if cmd == "flood":
        return flood(args[1], int(args[2]), int(args[3]), float(args[4]),
                     len(args) > 5 and args[5] == "park")
    print("usage: see the comment at the top", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
