"""Minimal raw helpers for the .NET diagnostic IPC protocol (probe use only).

Everything here is deliberately low level: build exact bytes, send them on a Unix
socket, read whatever comes back with a deadline, and decode it without trusting it.
Used by probe.py to observe what a real runtime does; not a client library.
"""
import os
import select
import socket
import struct
import time
import uuid

MAGIC = b"DOTNET_IPC_V1\x00"
ADVR_MAGIC = b"ADVR_V1\x00"

HRESULTS = {
    0x80131384: "BAD_ENCODING",
    0x80131385: "UNKNOWN_COMMAND",
    0x80131386: "UNKNOWN_MAGIC",
    0x80131387: "UNKNOWN_ERROR",
    0x80131515: "NOTSUPPORTED",
    0x80004005: "E_FAIL",
    0x8013135B: "NOT_YET_AVAILABLE",
    0x80131371: "RUNTIME_UNINITIALIZED",
    0x80070057: "INVALIDARG",
    0x8007007A: "INSUFFICIENT_BUFFER",
    0x800000CB: "ENVVAR_NOT_FOUND",
    0x80070005: "E_ACCESSDENIED",
}


def header(cmd_set, cmd_id, payload=b"", size=None, reserved=0, magic=MAGIC):
    if size is None:
        size = 20 + len(payload)
    return magic + struct.pack("<HBBH", size, cmd_set, cmd_id, reserved) + payload


def ipc_string(s):
    """u32 char count including NUL, then UTF-16LE; None -> count 0."""
    if s is None:
        return struct.pack("<I", 0)
    data = (s + "\x00").encode("utf-16-le")
    return struct.pack("<I", len(data) // 2) + data


def provider_v0(name, keywords, level, args=""):
    return struct.pack("<QI", keywords & 0xFFFFFFFFFFFFFFFF, level) + ipc_string(name) + ipc_string(args)


def collect_tracing2(providers, buffer_mb=64, fmt=1, rundown=False):
    body = struct.pack("<II?", buffer_mb, fmt, rundown) + struct.pack("<I", len(providers))
    for p in providers:
        body += p
    return header(0x02, 0x03, body)


def stop_tracing(session_id):
    return header(0x02, 0x01, struct.pack("<Q", session_id))


def unix_connect(path, timeout=5.0):
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(timeout)
    s.connect(path)
    return s


def unix_listen(path, backlog=16):
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(backlog)
    return s


def recv_exact(sock, n, timeout):
    """Read exactly n bytes or until EOF/timeout; returns (bytes, eof, timed_out)."""
    deadline = time.monotonic() + timeout
    buf = b""
    while len(buf) < n:
        left = deadline - time.monotonic()
        if left <= 0:
            return buf, False, True
        r, _, _ = select.select([sock], [], [], left)
        if not r:
            return buf, False, True
        try:
            chunk = sock.recv(n - len(buf))
        except ConnectionResetError:
            return buf, True, False
        if not chunk:
            return buf, True, False
        buf += chunk
    return buf, False, False


def recv_until_eof(sock, timeout, limit=1 << 24):
    """Read until EOF or timeout; returns (bytes, eof, elapsed_s)."""
    t0 = time.monotonic()
    deadline = t0 + timeout
    buf = b""
    while len(buf) < limit:
        left = deadline - time.monotonic()
        if left <= 0:
            return buf, False, time.monotonic() - t0
        r, _, _ = select.select([sock], [], [], left)
        if not r:
            return buf, False, time.monotonic() - t0
        try:
            chunk = sock.recv(65536)
        except ConnectionResetError:
            return buf, True, time.monotonic() - t0
        if not chunk:
            return buf, True, time.monotonic() - t0
        buf += chunk
    return buf, False, time.monotonic() - t0


def read_response(sock, timeout=5.0):
    """Read one response frame (header + size-20 payload). Returns dict."""
    hdr, eof, to = recv_exact(sock, 20, timeout)
    out = {"raw_header": hdr, "eof": eof, "timeout": to}
    if len(hdr) < 20:
        return out
    magic = hdr[:14]
    size, cs, cid, res = struct.unpack("<HBBH", hdr[14:20])
    out.update(magic=magic, size=size, set=cs, id=cid, reserved=res)
    payload, eof2, to2 = recv_exact(sock, max(0, size - 20), timeout)
    out["payload"] = payload
    out["eof"] = eof2
    out["timeout"] = to2
    return out


def describe(resp):
    if "size" not in resp:
        return "no complete header (%d bytes%s%s)" % (
            len(resp["raw_header"]), ", EOF" if resp["eof"] else "", ", timeout" if resp["timeout"] else "")
    kind = {0x00: "OK", 0xFF: "ERROR"}.get(resp["id"], "?") if resp["set"] == 0xFF else "set=%#x" % resp["set"]
    s = "%s size=%d set=0x%02X id=0x%02X reserved=%d payload=%d bytes" % (
        kind, resp["size"], resp["set"], resp["id"], resp["reserved"], len(resp["payload"]))
    if resp["set"] == 0xFF and resp["id"] == 0xFF and len(resp["payload"]) >= 4:
        hr = struct.unpack("<I", resp["payload"][:4])[0]
        s += " hresult=0x%08X (%s)" % (hr, HRESULTS.get(hr, "?"))
    return s


def parse_string(buf, off):
    n = struct.unpack_from("<I", buf, off)[0]
    off += 4
    if n == 0:
        return None, off
    raw = buf[off:off + 2 * n]
    return raw.decode("utf-16-le").rstrip("\x00"), off + 2 * n


def parse_process_info(payload, version):
    """version 1, 2 or 3. Returns list of (offset, size, name, value)."""
    fields = []
    off = 0
    if version == 3:
        fields.append((off, 4, "version", struct.unpack_from("<I", payload, off)[0]))
        off += 4
    fields.append((off, 8, "pid", struct.unpack_from("<Q", payload, off)[0]))
    off += 8
    fields.append((off, 16, "cookie", str(uuid.UUID(bytes_le=bytes(payload[off:off + 16])))))
    off += 16
    names = ["commandLine", "OS", "arch"]
    if version >= 2:
        names += ["managedEntrypointAssemblyName", "clrProductVersion"]
    if version == 3:
        names += ["runtimeIdentifier"]
    for name in names:
        start = off
        val, off = parse_string(payload, off)
        fields.append((start, off - start, name, val))
    fields.append((off, len(payload) - off, "(trailing)", payload[off:].hex()))
    return fields


def parse_advertise(b):
    if len(b) != 34:
        return None
    return {
        "magic": b[:8],
        "cookie": str(uuid.UUID(bytes_le=bytes(b[8:24]))),
        "pid": struct.unpack_from("<Q", b, 24)[0],
        "future": struct.unpack_from("<H", b, 32)[0],
    }


def hexdump(b, width=16, limit=None):
    lines = []
    data = b if limit is None else b[:limit]
    for i in range(0, len(data), width):
        chunk = data[i:i + width]
        hx = " ".join("%02x" % c for c in chunk)
        asc = "".join(chr(c) if 32 <= c < 127 else "." for c in chunk)
        lines.append("  %04x  %-*s  %s" % (i, width * 3, hx, asc))
    if limit is not None and len(b) > limit:
        lines.append("  ... (%d bytes total)" % len(b))
    return "\n".join(lines)
