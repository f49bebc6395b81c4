#!/usr/bin/env python3
# SPDX-License-Identifier: ISC
#
# A router's side of LIST (docs/extension.md), written from the document
# and not from ext.c, for tests/ps.sh: it answers each connection's LIST
# as MODE says, then closes.
#
#	fakelister.py MODE ADDRFILE tcp|uds:PATH|tls:CERT:KEY
#
# MODE: list (two runtimes), hostile (control bytes and bad UTF-8 in the
# strings), empty, denied (0x80070005), unknown (0x80131385, what a
# runtime answers), short (END counts 3 of 2), close (closes after the
# first entry), silent (never answers), other (not the protocol).  The
# bound TCP port, or the path, goes to ADDRFILE once listening; each
# request received is appended to ADDRFILE.req as hex.

import socket
import ssl
import struct
import sys

MAGIC = b"DOTNET_IPC_V1\0"


def header(size, cset, cid):
    return MAGIC + struct.pack("<HBBH", size, cset, cid, 0)


def string(s):
    return struct.pack("<H", len(s)) + s


def entry(cookie, pid, found, hops, strings, version=1):
    p = struct.pack("<H", version) + cookie + struct.pack("<QBB", pid, found,
                                                          hops)
    p += b"".join(string(s) for s in strings)
    return header(20 + len(p), 0xD5, 0x03) + p


def end(count):
    return header(26, 0xFF, 0x00) + struct.pack("<HI", 1, count)


def error(hresult):
    return header(24, 0xFF, 0xFF) + struct.pack("<I", hresult)


WEBAPI = entry(bytes(range(16)), 4242, 1, 0,
               [b"webapi", b"dotnet /srv/webapi.dll --urls http://*:80",
                b"Linux", b"x64", b"10.0.1", b"tcp:0.0.0.0:6000"])
WORKER = entry(b"\xaa" * 16, 77, 4, 2,
               [b"worker", "/app/worker --name \u00e9t\u00e9".encode(),
                b"Linux", b"arm64", b"9.0.3", b"tls:node-b:6000"],
               version=2)
HOSTILE = entry(b"\x01" * 16, 9, 3, 0,
                [b"evil\x1b[2J", b"run\x00\x07 \xff\xc3( \xc2\x9b end",
                 b"Linux", b"x64", b"8.0.0", b"proc:"])

ANSWERS = {
    "list": WEBAPI + WORKER + end(2),
    "hostile": HOSTILE + end(1),
    "empty": end(0),
    "denied": error(0x80070005),
    "unknown": error(0x80131385),
    "short": WEBAPI + WORKER + end(3),
    "close": WEBAPI,
    "other": b"HTTP/1.1 400 Bad Request\r\n\r\n",
}


def read_exactly(c, n):
    data = b""
    while len(data) < n:
        more = c.recv(n - len(data))
        if not more:
            break
        data += more
    return data


def main():
    mode, addrfile, where = sys.argv[1], sys.argv[2], sys.argv[3]
    ctx = None
    if where.startswith("uds:"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(where[4:])
        bound = where[4:]
    else:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.bind(("127.0.0.1", 0))
        bound = str(s.getsockname()[1])
        if where.startswith("tls:"):
            _, cert, key = where.split(":")
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            ctx.load_cert_chain(cert, key)
    s.listen(8)
    with open(addrfile + ".tmp", "w") as f:
        f.write(bound + "\n")
    import os
    os.rename(addrfile + ".tmp", addrfile)
    held = []
    while True:
        c, _ = s.accept()
        try:
            if ctx is not None:
                c = ctx.wrap_socket(c, server_side=True)
            req = read_exactly(c, 22)
            with open(addrfile + ".req", "a") as f:
                f.write(req.hex() + "\n")
            if mode == "silent":
                held.append(c)
                continue
            c.sendall(ANSWERS[mode])
            c.close()
        except (OSError, ssl.SSLError):
            c.close()


main()
