#!/usr/bin/env python3
"""A fake diagnostic endpoint that answers every request with one IPC error frame.

    python3 tests/interop/probe/errserver.py PATH [--hresult 0x80070005] [--count N]

Listens on the Unix socket PATH; for each connection it reads one request (20-byte
header + payload, 5 s deadline), prints the command it saw, writes a 24-byte error
frame (set 0xFF, id 0xFF, i32 HRESULT) and closes. Lets you see how dsclient (and
so the real client library) reports a denied command without a router in between:

    python3 errserver.py /tmp/e.sock --count 1 &
    dsclient --port /tmp/e.sock,connect dump --type mini --path /tmp/x.dmp
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dsipc as ipc  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("path")
    ap.add_argument("--hresult", default="0x80070005")
    ap.add_argument("--count", type=int, default=0, help="exit after N connections (0 = forever)")
    args = ap.parse_args()
    hr = int(args.hresult, 0) & 0xFFFFFFFF
    srv = ipc.unix_listen(args.path)
    served = 0
    try:
        while args.count == 0 or served < args.count:
            c, _ = srv.accept()
            with c:
                r = ipc.read_response(c, timeout=5.0)  # same framing as a request
                if "size" in r:
                    print("errserver: request set=0x%02X id=0x%02X size=%d -> error 0x%08X" % (
                        r["set"], r["id"], r["size"], hr), flush=True)
                else:
                    print("errserver: incomplete request (%d bytes)" % len(r["raw_header"]), flush=True)
                c.sendall(ipc.header(0xFF, 0xFF, hr.to_bytes(4, "little")))
            served += 1
    finally:
        srv.close()
        os.unlink(args.path)


if __name__ == "__main__":
    sys.exit(main())
