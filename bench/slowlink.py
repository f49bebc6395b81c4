#!/usr/bin/python3
# SPDX-License-Identifier: ISC
#
# slowlink: a slow link on loopback, for bench/slowlink.sh (this kernel
# has no netem), and the client that times commands over it.
#
#   slowlink.py relay PORT TARGET-PORT DELAY-MS
#       listen on 127.0.0.1:PORT; each connection goes to TARGET-PORT,
#       every chunk delayed DELAY-MS in each direction, in order.  A TCP
#       connect costs a round trip: the far end is dialled DELAY-MS after
#       the accept, and what the client sends is held until the client
#       would have seen the handshake (2 x DELAY-MS), then delayed.
#   slowlink.py measure ADDR N processinfo|trace
#       N fresh connections one after the other (unix:PATH or
#       tcp:HOST:PORT), each a ProcessInfo read to its end, or a
#       CollectTracing2 of dsbench's form timed to its first stream byte;
#       prints "RESULT what=... n=N p50_ms=... p10_ms=... p90_ms=..."
#       (connect included).

import asyncio
import socket
import statistics
import struct
import sys
import time

MAGIC = b"DOTNET_IPC_V1\0"


def header(size, cset, cid):
    return MAGIC + struct.pack("<HBBH", size, cset, cid, 0)


def ipc_string(s):
    s += "\0"
    return struct.pack("<I", len(s)) + s.encode("utf-16-le")


def collect_tracing(nbytes):
    body = struct.pack("<IIBI", 256, 1, 0, 1)
    body += struct.pack("<QI", 0xFFFFFFFFFFFFFFFF, 5)
    body += ipc_string("Microsoft-DotNETCore-SampleProfiler")
    body += ipc_string("Bytes=%d;Hold=0" % nbytes)
    return header(20 + len(body), 0x02, 0x03) + body


async def pump(reader, writer, delay, not_before):
    """Copy reader to writer, each chunk due delay after it came (and
    after not_before), in order."""
    queue = asyncio.Queue()

    async def sender():
        while True:
            due, data = await queue.get()
            if data is None:
                break
            wait = due - time.monotonic()
            if wait > 0:
                await asyncio.sleep(wait)
            writer.write(data)
            await writer.drain()
        try:
            writer.write_eof()
        except OSError:
            pass

    task = asyncio.ensure_future(sender())
    try:
        while True:
            data = await reader.read(65536)
            due = max(time.monotonic(), not_before) + delay
            await queue.put((due, data if data else None))
            if not data:
                break
    except OSError:
        await queue.put((time.monotonic(), None))
    try:
        await task
    except OSError:
        pass
    writer.close()


async def relay(port, target, delay_ms):
    delay = delay_ms / 1000.0

    async def handle(creader, cwriter):
        accepted = time.monotonic()
        await asyncio.sleep(delay)          # the SYN on its way
        try:
            sreader, swriter = await asyncio.open_connection("127.0.0.1",
                                                             target)
        except OSError:
            cwriter.close()
            return
        for w in (cwriter, swriter):
            w.get_extra_info("socket").setsockopt(socket.IPPROTO_TCP,
                                                  socket.TCP_NODELAY, 1)
        await asyncio.gather(
            pump(creader, swriter, delay, accepted + 2 * delay),
            pump(sreader, cwriter, delay, 0),
            return_exceptions=True)

    server = await asyncio.start_server(handle, "127.0.0.1", port)
    async with server:
        await server.serve_forever()


def dial(addr):
    if addr.startswith("unix:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(addr[5:])
    else:
        host, port = addr[4:].rsplit(":", 1)
        s = socket.create_connection((host, int(port)))
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(30)
    return s


def once(addr, what):
    t0 = time.monotonic()
    s = dial(addr)
    if what == "processinfo":
        s.sendall(header(20, 0x04, 0x00))
        got = b""
        while True:
            d = s.recv(65536)
            if not d:
                break
            got += d
        ok = got[:14] == MAGIC and got[16] == 0xFF and got[17] == 0x00
    else:
        s.sendall(collect_tracing(1 << 20))
        got = b""
        while len(got) <= 28:
            d = s.recv(65536)
            if not d:
                break
            got += d
        ok = len(got) > 28 and got[16] == 0xFF and got[17] == 0x00
    t = (time.monotonic() - t0) * 1000
    s.close()
    if not ok:
        raise SystemExit("%s: a bad answer: %r" % (what, got[:32]))
    return t


def measure(addr, n, what):
    once(addr, what)                # warm-up: caches, first dials
    samples = []
    for _ in range(n):
        samples.append(once(addr, what))
        time.sleep(0.05)
    q = statistics.quantiles(samples, n=10)
    print("RESULT what=%s n=%d p50_ms=%.1f p10_ms=%.1f p90_ms=%.1f" %
          (what, n, statistics.median(samples), q[0], q[-1]))


def main(argv):
    if len(argv) == 5 and argv[1] == "relay":
        asyncio.run(relay(int(argv[2]), int(argv[3]), float(argv[4])))
        return 0
    if len(argv) == 5 and argv[1] == "measure":
        measure(argv[2], int(argv[3]), argv[4])
        return 0
    print("usage: slowlink.py relay PORT TARGET-PORT DELAY-MS\n"
          "       slowlink.py measure ADDR N processinfo|trace",
          file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
