#!/usr/bin/env python3
"""Observe what a real .NET runtime does on its diagnostic ports, byte by byte.

    python3 tests/interop/probe/probe.py --app OUT/app/dsapp [--only NAME[,NAME]] [--list]

Starts dsapp (built by tests/interop/build.sh) several times with its own TMPDIR under
/tmp, talks raw IPC to its default listen socket and to DOTNET_DiagnosticPorts connect
ports, and prints what it saw. Every app it starts is killed by pid when the
experiment ends. No router is involved: this is the reference behaviour that
docs/protocol-notes.md summarises.
"""
import argparse
import glob
import os
import re
import select
import shutil
import signal
import socket
import stat
import struct
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import dsipc as ipc  # noqa: E402

SUSPEND_TEXT = "The runtime has been configured to pause during startup"


def log(msg=""):
    print(msg, flush=True)


class App:
    """One dsapp process with its own TMPDIR and timestamped stdout."""

    def __init__(self, exe, tmpdir, env_extra=None, args=(), wrapper=()):
        self.tmpdir = tmpdir
        env = dict(os.environ)
        for k in list(env):
            if k.startswith("DOTNET_") and k not in ("DOTNET_ROOT",):
                del env[k]
        env["TMPDIR"] = tmpdir
        env.update(env_extra or {})
        self.t0 = time.monotonic()
        self.proc = subprocess.Popen(list(wrapper) + [exe] + list(args), env=env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                     stdin=subprocess.DEVNULL)
        self.pid = self.proc.pid
        self.lines = []  # (t, text)
        self._lock = threading.Lock()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for raw in self.proc.stdout:
            line = raw.decode("utf-8", "replace").rstrip("\n")
            with self._lock:
                self.lines.append((time.monotonic() - self.t0, line))

    def wait_line(self, needle, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            with self._lock:
                for t, line in self.lines:
                    if needle in line:
                        return t, line
            time.sleep(0.02)
        return None

    def output(self):
        with self._lock:
            return list(self.lines)

    def default_socket(self, pid=None, timeout=10.0):
        pid = pid or self.pid
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            m = glob.glob(os.path.join(self.tmpdir, "dotnet-diagnostic-%d-*-socket" % pid))
            if m:
                return m[0]
            time.sleep(0.02)
        return None

    def descendants(self):
        """Pids whose parent chain leads to our process (e.g. the app under strace)."""
        parent = {}
        for d in os.listdir("/proc"):
            if d.isdigit():
                try:
                    with open("/proc/%s/stat" % d) as f:
                        st = f.read()
                    parent[int(d)] = int(st[st.rindex(")") + 2:].split()[1])
                except (OSError, ValueError, IndexError):
                    pass
        out, frontier = [], {self.pid}
        while frontier:
            kids = {p for p, pp in parent.items() if pp in frontier}
            out += sorted(kids)
            frontier = kids
        return out

    def stop(self):
        # Wrapped apps (strace) would survive their wrapper: signal the app itself first.
        for pid in self.descendants():
            try:
                os.kill(pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
        if self.proc.poll() is None:
            try:
                self.proc.send_signal(signal.SIGTERM)
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self._reader.join(2)


class Env:
    def __init__(self, exe):
        self.exe = exe
        self.dirs = []
        self.apps = []

    def tmp(self):
        d = tempfile.mkdtemp(prefix="dsp.", dir="/tmp")
        self.dirs.append(d)
        return d

    def app(self, env_extra=None, args=(), tmpdir=None, wrapper=()):
        a = App(self.exe, tmpdir or self.tmp(), env_extra, args, wrapper)
        self.apps.append(a)
        return a

    def cleanup(self):
        for a in self.apps:
            a.stop()
        for d in self.dirs:
            shutil.rmtree(d, ignore_errors=True)


def request(path, data, timeout=5.0, shut_wr=False):
    """Send raw bytes on a new connection; read one response frame and then to EOF."""
    s = ipc.unix_connect(path, timeout)
    try:
        t0 = time.monotonic()
        s.sendall(data)
        if shut_wr:
            s.shutdown(socket.SHUT_WR)
        resp = ipc.read_response(s, timeout)
        rest, eof, _ = ipc.recv_until_eof(s, 1.0) if not resp["eof"] else (b"", True, 0)
        resp["rest"] = rest
        resp["closed"] = eof or resp["eof"]
        resp["elapsed"] = time.monotonic() - t0
        return resp
    finally:
        s.close()


def show(resp, hexdump=True):
    log("    -> %s; connection %s after the reply%s" % (
        ipc.describe(resp), "closed (EOF)" if resp.get("closed") else "still open",
        "; %d more bytes" % len(resp["rest"]) if resp.get("rest") else ""))
    if hexdump and "size" in resp:
        log(ipc.hexdump(resp["raw_header"] + resp["payload"], limit=96))


# --------------------------------------------------------------------------------------
# Experiments on the default listen socket
# --------------------------------------------------------------------------------------

def exp_default_socket(env):
    """Default socket name, key and file mode."""
    a = env.app()
    path = a.default_socket()
    if not path:
        log("    no default socket appeared")
        return
    name = os.path.basename(path)
    key = int(re.match(r"dotnet-diagnostic-\d+-(\d+)-socket$", name).group(1))
    with open("/proc/%d/stat" % a.pid) as f:
        st = f.read()
    fields = st[st.rindex(")") + 2:].split()
    starttime = int(fields[22 - 3])  # fields after ')' start at field 3
    info = os.stat(path)
    log("    path: %s" % path)
    log("    key in name: %d; /proc/<pid>/stat field 22 (starttime): %d; equal: %s" % (key, starttime, key == starttime))
    log("    boot-relative seconds: %.2f (CLK_TCK=%d)" % (starttime / os.sysconf("SC_CLK_TCK"), os.sysconf("SC_CLK_TCK")))
    log("    mode: %s (0%o) uid=%d gid=%d; is socket: %s" % (
        stat.filemode(info.st_mode), stat.S_IMODE(info.st_mode), info.st_uid, info.st_gid, stat.S_ISSOCK(info.st_mode)))
    log("    other files in TMPDIR: %s" % sorted(f for f in os.listdir(a.tmpdir) if f != name))
    a.wait_line("ready", 15)
    a.stop()
    log("    after SIGTERM once Main runs (app handles it, rc=%s): socket file %s" % (
        a.proc.returncode, "still exists" if os.path.exists(path) else "removed"))
    b = env.app()
    bpath = b.default_socket()
    b.stop()
    log("    after SIGTERM before Main runs (runtime default handling, rc=%s): socket file %s" % (
        b.proc.returncode, "still exists" if os.path.exists(bpath) else "removed"))
    c = env.app()
    cpath = c.default_socket()
    c.wait_line("ready", 15)
    c.proc.kill()
    c.proc.wait(5)
    log("    after SIGKILL (rc=%s): socket file %s" % (
        c.proc.returncode, "still exists" if os.path.exists(cpath) else "removed"))
    c2 = env.app(args=("--exit-after-ms", "300"))
    c2path = c2.default_socket()
    c2.proc.wait(15)
    log("    after a normal exit from Main (rc=%s): socket file %s" % (
        c2.proc.returncode, "still exists" if os.path.exists(c2path) else "removed"))
    # A TMPDIR so long that the socket path exceeds sun_path.
    longdir = os.path.join(env.tmp(), "x" * 90)
    os.makedirs(longdir)
    b = env.app(tmpdir=longdir)
    ok = b.wait_line("ready", 15)
    time.sleep(0.5)
    files = os.listdir(longdir)
    log("    TMPDIR of %d chars (socket path > 108 bytes): app %s; files created in TMPDIR: %s" % (
        len(longdir), "ran" if ok else "did NOT print ready", files or "none"))
    b.stop()


def exp_processinfo(env):
    """Exact ProcessInfo / ProcessInfo2 / ProcessInfo3 responses."""
    a = env.app()
    path = a.default_socket()
    a.wait_line("ready", 15)
    for cid, ver in ((0x00, 1), (0x04, 2), (0x08, 3)):
        log("  ProcessInfo%s (0x04%02X), 20-byte request:" % ("" if ver == 1 else ver, cid))
        r = request(path, ipc.header(0x04, cid))
        show(r, hexdump=(ver == 3))
        if "payload" in r and r["set"] == 0xFF and r["id"] == 0x00:
            for off, size, name, val in ipc.parse_process_info(r["payload"], ver):
                log("      payload[%3d..%3d) %-30s %r" % (off, off + size, name, val))


def exp_resume_and_env(env):
    """ResumeRuntime reply when not suspended; ProcessEnvironment layout."""
    a = env.app()
    path = a.default_socket()
    a.wait_line("ready", 15)
    log("  ResumeRuntime (0x0401) on a runtime that is not suspended:")
    show(request(path, ipc.header(0x04, 0x01)))
    log("  ProcessEnvironment (0x0402):")
    s = ipc.unix_connect(path)
    s.sendall(ipc.header(0x04, 0x02))
    r = ipc.read_response(s)
    log("    -> %s" % ipc.describe(r))
    log(ipc.hexdump(r["raw_header"] + r["payload"]))
    n_bytes, future = struct.unpack("<IH", r["payload"][:6])
    rest, eof, _ = ipc.recv_until_eof(s, 3.0)
    s.close()
    count = struct.unpack_from("<I", rest, 0)[0] if len(rest) >= 4 else None
    log("    payload: nIncomingBytes=%d future=%d; continuation %d bytes then %s; continuation count=%s; "
        "nIncomingBytes == continuation length: %s" % (
            n_bytes, future, len(rest), "EOF" if eof else "no EOF", count, n_bytes == len(rest)))


def exp_errors(env):
    """Error frames: unknown command/set, client-sent 0xFF, bad magic, size < 20."""
    a = env.app()
    path = a.default_socket()
    a.wait_line("ready", 15)
    cases = [
        ("unknown id in Process set (0x04,0x7F)", ipc.header(0x04, 0x7F)),
        ("unknown command set (0x05,0x00)", ipc.header(0x05, 0x00)),
        ("reserved set 0x00 (0x00,0x00)", ipc.header(0x00, 0x00)),
        ("client-sent server set (0xFF,0x00)", ipc.header(0xFF, 0x00)),
        ("client-sent server error (0xFF,0xFF)", ipc.header(0xFF, 0xFF)),
        ("bad magic DOTNET_IPC_V2 + ProcessInfo", ipc.header(0x04, 0x00, magic=b"DOTNET_IPC_V2\x00")),
        ("magic without NUL (…V1X) + ProcessInfo", ipc.header(0x04, 0x00, magic=b"DOTNET_IPC_V1X")),
        ("ADVR_V1 magic sent as a request (34 bytes)", b"ADVR_V1\x00" + bytes(26)),
        ("size=10 (< 20), ProcessInfo", ipc.header(0x04, 0x00, size=10)),
        ("size=0, ProcessInfo", ipc.header(0x04, 0x00, size=0)),
        ("size=19, ProcessInfo", ipc.header(0x04, 0x00, size=19)),
        ("StopTracing with no payload (size 20)", ipc.header(0x02, 0x01)),
        ("StopTracing with unknown session id 0x1234", ipc.stop_tracing(0x1234)),
    ]
    for name, data in cases:
        log("  %s:" % name)
        r = request(path, data, timeout=3.0)
        show(r, hexdump=False)
        if "payload" in r and r.get("set") == 0xFF and r.get("id") == 0xFF:
            log(ipc.hexdump(r["raw_header"] + r["payload"]))
    log("  a normal ProcessInfo afterwards:")
    show(request(path, ipc.header(0x04, 0x00)), hexdump=False)


def exp_header_leniency(env):
    """Reserved field, trailing bytes, payload on a no-payload command, split writes."""
    a = env.app()
    path = a.default_socket()
    a.wait_line("ready", 15)
    log("  ProcessInfo with reserved=0xBEEF:")
    show(request(path, ipc.header(0x04, 0x00, reserved=0xBEEF)), hexdump=False)
    log("  ProcessInfo (size 20) followed by 64 garbage bytes in the same write:")
    show(request(path, ipc.header(0x04, 0x00) + b"\xAA" * 64), hexdump=False)
    log("  ProcessInfo followed by a second complete ResumeRuntime request in the same write:")
    r = request(path, ipc.header(0x04, 0x00) + ipc.header(0x04, 0x01))
    show(r, hexdump=False)
    for cid, name in ((0x00, "ProcessInfo"), (0x04, "ProcessInfo2"), (0x08, "ProcessInfo3"), (0x02, "ProcessEnvironment")):
        for n in (1, 8, 64):
            pl = bytes(0x41 + i % 26 for i in range(n))
            s = ipc.unix_connect(path)
            s.sendall(ipc.header(0x04, cid, payload=pl))
            data, eof, _ = ipc.recv_until_eof(s, 3.0)
            s.close()
            log("  %s (0x04%02X) with %d unexpected payload bytes (request size %d): %d bytes back, %s, "
                "starts with IPC magic: %s, first %d bytes equal the request payload: %s" % (
                    name, cid, n, 20 + n, len(data), "EOF" if eof else "no EOF", data[:14] == ipc.MAGIC,
                    n, data[:n] == pl))
            if n == 8:
                log("    first %d bytes (the request payload, then 20 bytes that were not sent by us):" % (20 + n))
                log(ipc.hexdump(data[:20 + n]))
    log("  ResumeRuntime with size=24 and 4 payload bytes:")
    show(request(path, ipc.header(0x04, 0x01, payload=b"\x00" * 4)), hexdump=False)
    log("  ProcessInfo written one byte at a time, 20 ms apart:")
    s = ipc.unix_connect(path)
    data = ipc.header(0x04, 0x00)
    for b in data:
        s.sendall(bytes([b]))
        time.sleep(0.02)
    r = ipc.read_response(s)
    log("    -> %s" % ipc.describe(r))
    s.close()
    log("  StopTracing whose size says 28 but only 24 bytes sent, then SHUT_WR:")
    r = request(path, ipc.stop_tracing(0x1)[:24], timeout=3.0, shut_wr=True)
    show(r, hexdump=False)


def exp_half_close(env):
    """Reply after the client shuts down its write side."""
    a = env.app()
    path = a.default_socket()
    a.wait_line("ready", 15)
    log("  ProcessInfo then shutdown(SHUT_WR) immediately:")
    show(request(path, ipc.header(0x04, 0x00), shut_wr=True), hexdump=False)
    log("  ResumeRuntime then shutdown(SHUT_WR):")
    show(request(path, ipc.header(0x04, 0x01), shut_wr=True), hexdump=False)
    log("  CollectTracing2 then shutdown(SHUT_WR); read the stream for 1.5 s, then StopTracing:")
    s = ipc.unix_connect(path)
    s.sendall(ipc.collect_tracing2([ipc.provider_v0("Dsroute-Test", -1, 5)]))
    s.shutdown(socket.SHUT_WR)
    r = ipc.read_response(s)
    log("    -> %s" % ipc.describe(r))
    data, eof, _ = ipc.recv_until_eof(s, 1.5)
    log("    stream after SHUT_WR: %d bytes in 1.5 s, EOF=%s, starts with %r" % (len(data), eof, data[:8]))
    if r.get("set") == 0xFF and r.get("id") == 0x00:
        sid = struct.unpack("<Q", r["payload"][:8])[0]
        show(request(path, ipc.stop_tracing(sid)), hexdump=False)
        more, eof, _ = ipc.recv_until_eof(s, 5.0)
        log("    after stop: %d more bytes, EOF=%s" % (len(more), eof))
    s.close()


def exp_stall(env):
    """Does one silent or partial client block the server for everyone?"""
    a = env.app()
    path = a.default_socket()
    a.wait_line("ready", 15)
    for label, first in (("silent connection (0 bytes)", b""), ("partial header (10 bytes)", ipc.header(0x04, 0x00)[:10]),
                         ("complete header, payload missing (size 28, 20 sent)", ipc.stop_tracing(1)[:20])):
        log("  A: %s, held open; B: ProcessInfo on a second connection:" % label)
        sa = ipc.unix_connect(path)
        if first:
            sa.sendall(first)
        time.sleep(0.2)
        sb = ipc.unix_connect(path)
        t0 = time.monotonic()
        sb.sendall(ipc.header(0x04, 0x00))
        r = ipc.read_response(sb, timeout=3.0)
        log("    B after 3 s: %s" % ipc.describe(r))
        if "size" not in r:
            sa.close()
            r = ipc.read_response(sb, timeout=5.0)
            log("    B after closing A: %s (%.2f s after B's request)" % (ipc.describe(r), time.monotonic() - t0))
            sa = None
        if sa is not None:
            ra = ipc.recv_until_eof(sa, 0.5)
            log("    A: %d bytes, EOF=%s" % (len(ra[0]), ra[1]))
            sa.close()
        sb.close()
    a.stop()
    log("  connect port: 10 header bytes on the parked connection, held; ProcessInfo on the default socket:")
    d = env.tmp()
    port = os.path.join(d, "port")
    lst = Listener(port, time.monotonic())
    b = env.app(env_extra={"DOTNET_DiagnosticPorts": port + ",nosuspend"}, tmpdir=d)
    c1 = lst.wait_count(1, 15)
    b.wait_line("ready", 15)
    dsock = b.default_socket()
    c1["sock"].sendall(ipc.header(0x04, 0x00)[:10])
    time.sleep(0.2)
    sb = ipc.unix_connect(dsock)
    t0 = time.monotonic()
    sb.sendall(ipc.header(0x04, 0x00))
    r = ipc.read_response(sb, timeout=3.0)
    log("    default socket after 3 s: %s" % ipc.describe(r))
    c1["sock"].close()
    if "size" not in r:
        r = ipc.read_response(sb, timeout=5.0)
        log("    after closing the connect-port connection: %s (%.2f s after the request)" % (
            ipc.describe(r), time.monotonic() - t0))
    sb.close()
    lst.close()


def exp_tracing(env):
    """CollectTracing2 reply, stream start, StopTracing ordering."""
    a = env.app()
    path = a.default_socket()
    a.wait_line("ready", 15)
    for rundown in (False, True):
        log("  CollectTracing2 (0x0203), providers Dsroute-Test Verbose + runtime GC, rundown=%s:" % rundown)
        req = ipc.collect_tracing2([ipc.provider_v0("Microsoft-Windows-DotNETRuntime", 0x1, 4),
                                    ipc.provider_v0("Dsroute-Test", -1, 5)], rundown=rundown)
        s = ipc.unix_connect(path)
        t0 = time.monotonic()
        s.sendall(req)
        r = ipc.read_response(s)
        log("    -> %s after %.0f ms" % (ipc.describe(r), (time.monotonic() - t0) * 1000))
        log(ipc.hexdump(r["raw_header"] + r["payload"]))
        sid = struct.unpack("<Q", r["payload"][:8])[0]
        log("    session id 0x%016x" % sid)
        first, _, _ = ipc.recv_exact(s, 8, 5.0)
        log("    first stream bytes after %.0f ms: %r" % ((time.monotonic() - t0) * 1000, first))
        head, _, _ = ipc.recv_exact(s, 64, 2.0)
        log(ipc.hexdump(first + head, limit=48))
        stream = first + head
        end = time.monotonic() + 2.0
        while time.monotonic() < end:
            d, eof, _ = ipc.recv_until_eof(s, 0.1)
            stream += d
            if eof:
                log("    unexpected EOF before stop")
                break
        # Stop on a second connection; watch both sockets.
        st = ipc.unix_connect(path)
        tstop = time.monotonic()
        st.sendall(ipc.stop_tracing(sid))
        events = []
        stop_buf = b""
        eof_stream = eof_stop = False
        deadline = time.monotonic() + 15
        after = 0
        while not (eof_stream and eof_stop) and time.monotonic() < deadline:
            rl = [x for x, done in ((s, eof_stream), (st, eof_stop)) if not done]
            rr, _, _ = select.select(rl, [], [], 0.5)
            for x in rr:
                d = x.recv(65536)
                t = (time.monotonic() - tstop) * 1000
                if x is s:
                    if d:
                        after += len(d)
                        stream += d
                    else:
                        eof_stream = True
                        events.append((t, "stream EOF"))
                else:
                    if d:
                        if not stop_buf:
                            events.append((t, "stop reply first bytes"))
                        stop_buf += d
                    else:
                        eof_stop = True
                        events.append((t, "stop connection EOF"))
        for t, what in events:
            log("    +%7.1f ms  %s" % (t, what))
        log("    stop reply (%d bytes): same session id: %s" % (
            len(stop_buf), stop_buf[20:28] == struct.pack("<Q", sid)))
        log(ipc.hexdump(stop_buf))
        log("    stream: %d bytes total, %d after StopTracing was sent; last 8 bytes %s" % (
            len(stream), after, stream[-8:].hex()))
        s.close()
        st.close()
    log("  a consumer that disappears: CollectTracing2, read 0.5 s, close; then StopTracing(id) 1 s later:")
    s = ipc.unix_connect(path)
    s.sendall(ipc.collect_tracing2([ipc.provider_v0("Dsroute-Test", -1, 5)]))
    r = ipc.read_response(s)
    sid = struct.unpack("<Q", r["payload"][:8])[0]
    ipc.recv_until_eof(s, 0.5)
    s.close()
    time.sleep(1.0)
    show(request(path, ipc.stop_tracing(sid)), hexdump=False)
    log("  StopTracing sent twice for one session (second after the first reply):")
    s = ipc.unix_connect(path)
    s.sendall(ipc.collect_tracing2([ipc.provider_v0("Dsroute-Test", -1, 5)]))
    r = ipc.read_response(s)
    sid = struct.unpack("<Q", r["payload"][:8])[0]
    show(request(path, ipc.stop_tracing(sid)), hexdump=False)
    show(request(path, ipc.stop_tracing(sid)), hexdump=False)
    s.close()


# --------------------------------------------------------------------------------------
# Connect-mode (DOTNET_DiagnosticPorts) experiments
# --------------------------------------------------------------------------------------

class Listener:
    """Accept loop on a UDS; records (t, conn, advertise bytes)."""

    def __init__(self, path, t0, read_advertise=True):
        self.sock = ipc.unix_listen(path)
        self.t0 = t0
        self.conns = []
        self.read_advertise = read_advertise
        self.lock = threading.Lock()
        self.stop = False
        self.th = threading.Thread(target=self._run, daemon=True)
        self.th.start()

    def _run(self):
        while not self.stop:
            r, _, _ = select.select([self.sock], [], [], 0.05)
            if not r:
                continue
            try:
                c, _ = self.sock.accept()
            except OSError:
                return
            t = time.monotonic() - self.t0
            adv = b""
            if self.read_advertise:
                adv, _, _ = ipc.recv_exact(c, 34, 2.0)
            with self.lock:
                self.conns.append({"t": t, "sock": c, "adv": adv, "t_adv": time.monotonic() - self.t0})

    def count(self):
        with self.lock:
            return len(self.conns)

    def wait_count(self, n, timeout):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.count() >= n:
                return self.conns[n - 1]
            time.sleep(0.005)
        return None

    def close(self):
        self.stop = True
        self.th.join(1)
        self.sock.close()
        for c in self.conns:
            c["sock"].close()


def exp_connect_suspend(env):
    """Connect port with the default (suspend) mode: advertise, parking, re-dial, pause message, resume."""
    d = env.tmp()
    port = os.path.join(d, "port")
    t0 = time.monotonic()
    lst = Listener(port, t0)
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": port}, tmpdir=d)
    c1 = lst.wait_count(1, 15)
    if not c1:
        log("    no connection within 15 s")
        return
    adv = ipc.parse_advertise(c1["adv"])
    log("    1st connection at +%.0f ms after exec; advertise (%d bytes):" % (c1["t"] * 1000, len(c1["adv"])))
    log(ipc.hexdump(c1["adv"]))
    log("    advertise: magic=%r cookie=%s pid=%d future=%d (app pid %d)" % (
        adv["magic"], adv["cookie"], adv["pid"], adv["future"], a.pid))
    dsock = a.default_socket(timeout=3)
    log("    default listen socket while suspended: %s" % (dsock or "absent"))
    if dsock:
        r = request(dsock, ipc.header(0x04, 0x00))
        fields = dict((n, v) for _, _, n, v in ipc.parse_process_info(r["payload"], 1)) if r.get("id") == 0 else {}
        log("    ProcessInfo via default socket while suspended: %s; cookie matches advertise: %s; commandLine=%r" % (
            ipc.describe(r), fields.get("cookie") == adv["cookie"], fields.get("commandLine")))
    time.sleep(2.0)
    log("    parked connections after holding the first one 2 s: %d" % lst.count())
    # Take the parked connection with a ProcessInfo; time the re-dial.
    ts = time.monotonic()
    c1["sock"].sendall(ipc.header(0x04, 0x00))
    r = ipc.read_response(c1["sock"])
    c2 = lst.wait_count(2, 5)
    log("    ProcessInfo on the parked connection: %s; commandLine=%r" % (
        ipc.describe(r), ipc.parse_process_info(r["payload"], 1)[2][3] if r.get("id") == 0 else None))
    log("    next connection arrived %s after the request was sent; it has an advertise: %s (same cookie: %s)" % (
        "%.1f ms" % ((c2["t"] + t0 - ts) * 1000) if c2 else "NOT",
        bool(c2 and ipc.parse_advertise(c2["adv"])),
        c2 and ipc.parse_advertise(c2["adv"])["cookie"] == adv["cookie"]))
    c1["sock"].close()
    # HUP: close the parked connection without sending anything.
    if c2:
        th = time.monotonic()
        c2["sock"].close()
        c3 = lst.wait_count(3, 5)
        log("    closing the parked connection unused: re-dial after %s" % (
            "%.1f ms" % ((c3["t"] + t0 - th) * 1000) if c3 else "NOT within 5 s"))
    # Suspend message.
    msg = a.wait_line(SUSPEND_TEXT, 10)
    if msg:
        log("    pause message printed at +%.2f s after exec:" % msg[0])
        for t, line in a.output():
            if not line.startswith("dsapp"):
                log("      | %s" % line)
    else:
        log("    no pause message within 10 s")
    log("    'ready' printed before resume: %s" % bool(a.wait_line("ready", 0.1)))
    # Error on the parked connection -> new connection?
    c3 = lst.conns[-1]
    n = lst.count()
    c3["sock"].sendall(ipc.header(0x04, 0x7F))
    r = ipc.read_response(c3["sock"])
    c4 = lst.wait_count(n + 1, 5)
    log("    unknown command on a parked connection: %s; re-dial with advertise: %s" % (
        ipc.describe(r), bool(c4 and ipc.parse_advertise(c4["adv"]))))
    # Resume on the latest connection.
    c = lst.conns[-1]
    tr = time.monotonic()
    c["sock"].sendall(ipc.header(0x04, 0x01))
    r = ipc.read_response(c["sock"])
    ready = a.wait_line("ready", 10)
    log("    ResumeRuntime on the connect port: %s; app printed ready %s" % (
        ipc.describe(r), "%.0f ms later" % ((ready[0] + a.t0 - tr) * 1000) if ready else "NOT within 10 s"))
    time.sleep(0.5)
    log("    connections accepted in total: %d" % lst.count())
    lst.close()
    a.stop()


def exp_resume_via_default_port(env):
    """Suspended on a connect port: does ResumeRuntime on the default listen socket release it?"""
    d = env.tmp()
    port = os.path.join(d, "port")
    t0 = time.monotonic()
    lst = Listener(port, t0)
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": port}, tmpdir=d)
    c1 = lst.wait_count(1, 15)
    dsock = a.default_socket(timeout=5)
    r = request(dsock, ipc.header(0x04, 0x01))
    ready = a.wait_line("ready", 3)
    log("    ResumeRuntime via the default socket: %s; app ready within 3 s: %s" % (ipc.describe(r), bool(ready)))
    if not ready:
        c1["sock"].sendall(ipc.header(0x04, 0x01))
        r = ipc.read_response(c1["sock"])
        ready = a.wait_line("ready", 5)
        log("    then ResumeRuntime via the connect port: %s; ready: %s" % (ipc.describe(r), bool(ready)))
    lst.close()
    a.stop()
    log("  DefaultDiagnosticPortSuspend=1 and no DiagnosticPorts; ResumeRuntime on the default socket:")
    b = env.app(env_extra={"DOTNET_DefaultDiagnosticPortSuspend": "1"})
    dsock = b.default_socket(timeout=5)
    time.sleep(0.5)
    log("    ready before resume: %s" % bool(b.wait_line("ready", 0.1)))
    r = request(dsock, ipc.header(0x04, 0x01))
    log("    %s; ready within 3 s: %s" % (ipc.describe(r), bool(b.wait_line("ready", 3))))
    b.stop()


def exp_connect_nosuspend(env):
    """nosuspend connect port: app runs at once; advertise still sent."""
    d = env.tmp()
    port = os.path.join(d, "port")
    t0 = time.monotonic()
    lst = Listener(port, t0)
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": port + ",nosuspend"}, tmpdir=d)
    ready = a.wait_line("ready", 15)
    c1 = lst.wait_count(1, 5)
    log("    ready at +%s ms; first connection at +%s ms with advertise: %s" % (
        "%.0f" % (ready[0] * 1000) if ready else "never", "%.0f" % (c1["t"] * 1000) if c1 else "never",
        bool(c1 and ipc.parse_advertise(c1["adv"]))))
    # Start a trace on the parked connection; does the runtime re-dial while it streams?
    n = lst.count()
    treq = time.monotonic() - t0
    c1["sock"].sendall(ipc.collect_tracing2([ipc.provider_v0("Dsroute-Test", -1, 5)]))
    r = ipc.read_response(c1["sock"])
    c2 = lst.wait_count(n + 1, 5)
    log("    CollectTracing2 on the parked connection: %s; new connection while streaming: %s" % (
        ipc.describe(r), "%.1f ms after the request" % ((c2["t"] - treq) * 1000) if c2 else "no"))
    if c2 and r.get("id") == 0:
        sid = struct.unpack("<Q", r["payload"][:8])[0]
        c2["sock"].sendall(ipc.stop_tracing(sid))
        rs = ipc.read_response(c2["sock"])
        data, eof, _ = ipc.recv_until_eof(c1["sock"], 5)
        log("    StopTracing on the next parked connection: %s; trace stream then %s" % (
            ipc.describe(rs), "EOF" if eof else "no EOF"))
    # A long command (core dump): when does the next connection come?
    time.sleep(0.3)  # let the runtime offer the connection that follows StopTracing
    c = lst.conns[-1]
    if c2 is not None and c is c2:
        log("    no fresh connection after StopTracing")
        lst.close()
        return
    n = lst.count()
    dump = os.path.join(d, "core.dmp")
    treq = time.monotonic()
    c["sock"].sendall(ipc.header(0x01, 0x01, ipc.ipc_string(dump) + struct.pack("<II", 1, 0)))
    r = ipc.read_response(c["sock"], timeout=60)
    trep = time.monotonic()
    cn = lst.wait_count(n + 1, 5)
    log("    GenerateCoreDump (0x0101, Normal) on the parked connection: %s after %.0f ms; dump file %s; "
        "next connection %s" % (
            ipc.describe(r), (trep - treq) * 1000, "%d bytes" % os.path.getsize(dump) if os.path.exists(dump) else "absent",
            "%.0f ms after the request (%.1f ms after the reply)" % ((cn["t"] + t0 - treq) * 1000, (cn["t"] + t0 - trep) * 1000)
            if cn else "none within 5 s"))
    # Listener that does not accept: how many connections queue up?
    lst.close()
    a.stop()
    log("  listener that never accepts (backlog 16), nosuspend, 3 s:")
    d = env.tmp()
    port = os.path.join(d, "port")
    srv = ipc.unix_listen(port, backlog=16)
    b = env.app(env_extra={"DOTNET_DiagnosticPorts": port + ",nosuspend"}, tmpdir=d)
    b.wait_line("ready", 15)
    time.sleep(3)
    queued = []
    srv.setblocking(False)
    while True:
        try:
            c, _ = srv.accept()
            queued.append(c)
        except BlockingIOError:
            break
    advs = [ipc.recv_exact(c, 34, 1.0)[0] for c in queued]
    log("    queued connections: %d; each had its advertise already buffered: %s" % (
        len(queued), [len(x) == 34 for x in advs]))
    for c in queued:
        c.close()
    srv.close()
    b.stop()


def exp_listen_tag(env):
    """A ',listen' entry in DOTNET_DiagnosticPorts on desktop Linux."""
    d = env.tmp()
    port = os.path.join(d, "lsn")
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": port + ",listen"}, tmpdir=d)
    ready = a.wait_line("ready", 15)
    time.sleep(0.5)
    log("    app ready without resume: %s; %s exists: %s; files in TMPDIR: %s" % (
        bool(ready), port, os.path.exists(port), sorted(os.listdir(d))))
    a.stop()
    log("  same with ',listen,suspend':")
    d = env.tmp()
    port = os.path.join(d, "lsn")
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": port + ",listen,suspend"}, tmpdir=d)
    ready = a.wait_line("ready", 8)
    log("    app ready within 8 s: %s; %s exists: %s; output: %s" % (
        bool(ready), port, os.path.exists(port), [l for _, l in a.output()][:3]))
    a.stop()


def exp_stream_syscalls(env):
    """How the runtime writes a trace stream and orders stream close vs StopTracing reply (strace)."""
    if not shutil.which("strace"):
        log("    strace not installed; skipped")
        return
    d = env.tmp()
    tracefile = os.path.join(d, "strace.txt")
    a = env.app(tmpdir=d, wrapper=("strace", "-f", "-ttt", "-s", "16", "-e", "trace=sendto,write,close",
                                   "-o", tracefile))
    a.wait_line("ready", 30)
    path = glob.glob(os.path.join(d, "dotnet-diagnostic-*-socket"))[0]
    s = ipc.unix_connect(path)
    s.sendall(ipc.collect_tracing2([ipc.provider_v0("Microsoft-Windows-DotNETRuntime", 0x1, 4),
                                    ipc.provider_v0("Dsroute-Test", -1, 5)]))
    r = ipc.read_response(s)
    sid = struct.unpack("<Q", r["payload"][:8])[0]
    got, _, _ = ipc.recv_until_eof(s, 2.0)
    st = ipc.unix_connect(path)
    st.sendall(ipc.stop_tracing(sid))
    rs = ipc.read_response(st, timeout=20)
    more, eof, _ = ipc.recv_until_eof(s, 20)
    s.close()
    st.close()
    log("    stop reply: %s; stream EOF: %s; %d stream bytes received" % (ipc.describe(rs), eof, len(got) + len(more)))
    time.sleep(0.3)
    a.stop()
    rx = re.compile(r'^(\d+)\s+([\d.]+) (sendto|write|close)\((\d+)(?:, "(.*?)"(?:\.\.\.)?, (\d+))?.*\)\s+= (-?\d+)')
    calls = []
    with open(tracefile) as f:
        for line in f:
            m = rx.match(line)
            if m:
                calls.append((int(m.group(1)), float(m.group(2)), m.group(3), int(m.group(4)), m.group(5) or "",
                              int(m.group(7))))
    start = next((i for i, c in enumerate(calls) if c[2] == "sendto" and c[4].startswith("Nettrace")), None)
    if start is None:
        log("    could not find the stream in the strace output")
        return
    fd = calls[start][3]
    reply = next((i for i in range(len(calls) - 1, start, -1)
                  if calls[i][2] == "sendto" and calls[i][4].startswith("DOTNET_IPC_V1") and calls[i][5] == 28
                  and calls[i][3] != fd), None)
    close = next((i for i in range(start, len(calls)) if calls[i][2] == "close" and calls[i][3] == fd), None)
    sends = [c for c in calls[start:close] if c[2] == "sendto" and c[3] == fd]
    sizes = sorted(c[5] for c in sends)
    log("    stream fd %d: %d send() calls for %d bytes; median %d bytes, %d calls of <= 8 bytes, largest %d; "
        "writer threads: %d" % (fd, len(sends), sum(sizes), sizes[len(sizes) // 2], sum(1 for x in sizes if x <= 8),
                                sizes[-1], len({c[0] for c in sends})))
    if reply is not None and close is not None:
        log("    close(stream fd) by thread %d at %+.3f ms, StopTracing reply send() by thread %d at %+.3f ms "
            "(relative to the reply): stream closed %s the reply was written" % (
                calls[close][0], (calls[close][1] - calls[reply][1]) * 1000, calls[reply][0], 0.0,
                "before" if close < reply else "after"))


def exp_tcp_address(env):
    """DOTNET_DiagnosticPorts=127.0.0.1:PORT on desktop Linux (strace the connect() calls)."""
    if not shutil.which("strace"):
        log("    strace not installed; skipped")
        return
    d = env.tmp()
    tracefile = os.path.join(d, "strace.txt")
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": "127.0.0.1:9000,nosuspend"}, tmpdir=d,
                wrapper=("strace", "-f", "-e", "trace=connect", "-o", tracefile))
    a.wait_line("ready", 20)
    time.sleep(1.0)
    a.stop()
    with open(tracefile) as f:
        hits = sorted({l.split(" ", 1)[1].strip() for l in f if "9000" in l})
    log("    connect() calls mentioning 9000: %s" % (hits[:3] or "none"))


def exp_backoff(env):
    """Re-dial timing when nobody listens (strace the connect() calls)."""
    if not shutil.which("strace"):
        log("    strace not installed; skipped")
        return
    d = env.tmp()
    port = os.path.join(d, "nobody")
    tracefile = os.path.join(d, "strace.txt")
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": port + ",nosuspend"}, tmpdir=d,
                wrapper=("strace", "-f", "-ttt", "-e", "trace=connect", "-o", tracefile))
    a.wait_line("ready", 20)
    time.sleep(6)
    # Now start listening and time the first connection.
    t_listen = time.monotonic()
    lst = Listener(port, t_listen)
    c = lst.wait_count(1, 5)
    log("    listener created after ~6 s of failures: first connection %s later" % (
        "%.0f ms" % (c["t"] * 1000) if c else "NOT within 5 s"))
    time.sleep(0.5)
    lst.close()  # closes the parked connection; the socket file stays (stale)
    time.sleep(3)
    a.stop()
    times = []
    results = []
    with open(tracefile) as f:
        for line in f:
            if port in line and "connect(" in line:
                parts = line.split()
                times.append(float(parts[1]))
                if "<unfinished" not in line:
                    results.append(line.strip().split("=")[-1].strip())
    if len(times) < 2:
        log("    only %d connect() calls to the port seen" % len(times))
        return
    gaps = [round((b - a_) * 1000) for a_, b in zip(times, times[1:])]
    log("    connect() calls to the port: %d; results: %s" % (len(times), sorted(set(results))))
    log("    gaps between attempts (ms), whole run: %s" % gaps[:60])
    if len(gaps) > 10:
        log("    steady-state gap (median of gaps 21-27): %d ms" % sorted(gaps[20:27])[3])


def exp_two_ports(env):
    """Two connect ports (one suspend, one nosuspend): who must resume?"""
    d = env.tmp()
    p1 = os.path.join(d, "p1")
    p2 = os.path.join(d, "p2")
    t0 = time.monotonic()
    l1 = Listener(p1, t0)
    l2 = Listener(p2, t0)
    a = env.app(env_extra={"DOTNET_DiagnosticPorts": "%s,suspend;%s,nosuspend" % (p1, p2)}, tmpdir=d)
    c1 = l1.wait_count(1, 15)
    c2 = l2.wait_count(1, 15)
    log("    both ports dialled: p1 %s, p2 %s" % (bool(c1), bool(c2)))
    c2["sock"].sendall(ipc.header(0x04, 0x01))
    r = ipc.read_response(c2["sock"])
    log("    ResumeRuntime via the nosuspend port p2: %s; ready within 3 s: %s" % (
        ipc.describe(r), bool(a.wait_line("ready", 3))))
    c1["sock"].sendall(ipc.header(0x04, 0x01))
    r = ipc.read_response(c1["sock"])
    log("    ResumeRuntime via the suspend port p1: %s; ready within 3 s: %s" % (
        ipc.describe(r), bool(a.wait_line("ready", 3))))
    l1.close()
    l2.close()
    a.stop()


EXPERIMENTS = [
    ("default-socket", exp_default_socket),
    ("processinfo", exp_processinfo),
    ("resume-env", exp_resume_and_env),
    ("errors", exp_errors),
    ("leniency", exp_header_leniency),
    ("half-close", exp_half_close),
    ("stall", exp_stall),
    ("tracing", exp_tracing),
    ("stream-syscalls", exp_stream_syscalls),
    ("connect-suspend", exp_connect_suspend),
    ("resume-default-port", exp_resume_via_default_port),
    ("connect-nosuspend", exp_connect_nosuspend),
    ("listen-tag", exp_listen_tag),
    ("tcp-address", exp_tcp_address),
    ("backoff", exp_backoff),
    ("two-ports", exp_two_ports),
]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--app", help="path to dsapp (built by tests/interop/build.sh)")
    ap.add_argument("--only", help="comma-separated experiment names")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.list:
        for name, fn in EXPERIMENTS:
            log("%-20s %s" % (name, fn.__doc__))
        return 0
    if not args.app or not os.access(args.app, os.X_OK):
        ap.error("--app must name the dsapp executable")
    only = set(args.only.split(",")) if args.only else None
    unknown = (only or set()) - {n for n, _ in EXPERIMENTS}
    if unknown:
        ap.error("unknown experiment(s): %s" % ", ".join(sorted(unknown)))
    version = subprocess.run(["dotnet", "--list-runtimes"], capture_output=True, text=True).stdout
    log("# probe of the .NET diagnostic IPC protocol")
    log("runtimes: %s" % "; ".join(l for l in version.splitlines() if "NETCore.App" in l))
    failures = 0
    for name, fn in EXPERIMENTS:
        if only and name not in only:
            continue
        log("")
        log("## %s: %s" % (name, fn.__doc__))
        env = Env(os.path.abspath(args.app))
        try:
            fn(env)
        except Exception as e:  # report and go on with the next experiment
            failures += 1
            log("    EXPERIMENT FAILED: %s: %s" % (type(e).__name__, e))
        finally:
            env.cleanup()
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
