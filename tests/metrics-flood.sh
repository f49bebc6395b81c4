#!/bin/sh
# SPDX-License-Identifier: ISC
#
# --metrics under a connection flood (issue 32.3): one client opening
# about 2000 empty connections a second, each held until the router
# closes it, must not take /healthz down, or a liveness probe restarts
# the pod.  Probes sent at 10 a second, each given a second as a
# kubelet's are, are answered at least 95% of the time, whether the
# flood comes from the probes' own address or from another one.  The
# flood's connections are the ones closed; the router stays up.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/netns.sh"
. "$top_srcdir/tests/lib/lib.sh"

PY=/usr/bin/python3
CROWD=$top_builddir/tests/crowd
[ -x "$PY" ] || skip_all "python3 is not installed (dev.sh installs it)"

metrics_port() {
	sed -n 's|^info: metrics: http://127\.0\.0\.1:\([0-9]*\)/metrics.*|\1|p' \
	    "$T/$1.err" | head -n 1
}

# probe SECONDS: /healthz 10 times a second, a second each; "OK of N".
cat >"$T/probe.py" <<'EOF2'
import socket, sys, time
port, seconds = int(sys.argv[1]), float(sys.argv[2])
ok = n = 0
end = time.monotonic() + seconds
while time.monotonic() < end:
    t = time.monotonic()
    n += 1
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=1)
        s.settimeout(1)
        s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
        data = b""
        while b"\r\n\r\n" not in data:
            d = s.recv(4096)
            if not d:
                break
            data += d
        if data.startswith(b"HTTP/1.1 200"):
            ok += 1
        s.close()
    except OSError:
        pass
    time.sleep(max(0, 0.1 - (time.monotonic() - t)))
print("%d of %d" % (ok, n))
EOF2

# keep PORT SOURCE N: N keep-alive connections from SOURCE, one request
# each, kept open; "answered K of N".
cat >"$T/keep.py" <<'EOF2'
import socket, sys, time
port, source, n = int(sys.argv[1]), sys.argv[2], int(sys.argv[3])
conns, ok = [], 0
for i in range(n):
    s = socket.socket()
    s.bind((source, 0))
    s.settimeout(2)
    s.connect(("127.0.0.1", port))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n")
    try:
        if s.recv(4096).startswith(b"HTTP/1.1 200"):
            ok += 1
    except OSError:
        pass
    conns.append(s)
print("answered %d of %d" % (ok, n), flush=True)
time.sleep(60)
EOF2

start_dsroute d --metrics 127.0.0.1:0 "uds:$T/d.sock" tcp:127.0.0.1:0
mport=$(metrics_port d)

"$PY" "$T/probe.py" "$mport" 2 >"$T/calm.out"
like "without a flood, every probe is answered" "$(cat "$T/calm.out")" \
    '^([0-9]+) of \1$'

# flood WHAT [SOURCE]: the probes while the flood runs, from SOURCE.
flood() {
	bg flood "$CROWD" churn 2000 10 "tcp:127.0.0.1:$mport" ${2:-}
	sleep 1		# let the flood take hold; not a sync
	"$PY" "$T/probe.py" "$mport" 8 >"$T/probes.out"
	wait_exit flood 30
	echo "# $1: $(cat "$T/probes.out") probes answered; $(cat "$T/flood.out")"
	opened=$(sed -n 's/^churn: opened=\([0-9]*\) .*/\1/p' "$T/flood.out")
	check "$1: the flood opened over 10000 connections (${opened:-0})" \
	    test "${opened:-0}" -gt 10000
	set -- "$1" $(sed -n 's/^\([0-9]*\) of \([0-9]*\)$/\1 \2/p' \
	    "$T/probes.out")
	check "$1: at least 95% of the probes are answered (${2:-0} of ${3:-0})" \
	    test $(( ${2:-0} * 100 )) -ge $(( ${3:-1} * 95 ))
}

flood "a flood from the probes' own address"
if [ -n "${DSR_NETNS_PRIVATE:-}" ] &&
    ip addr add 10.99.0.2/32 dev lo 2>/dev/null; then
	flood "a flood from another address" 10.99.0.2
	# One address cannot hold every slot, not even with answered
	# connections, which are never cut for a newer one.
	bg keep "$PY" "$T/keep.py" "$mport" 10.99.0.2 40
	wait_for 10 has_line "$T/keep.out" '^answered '
	"$PY" "$T/probe.py" "$mport" 2 >"$T/probes.out"
	like "40 keep-alive connections from one address: 8 answered" \
	    "$(cat "$T/keep.out")" '^answered 8 of 40$'
	like "...and the probes from another are all answered" \
	    "$(cat "$T/probes.out")" '^([0-9]+) of \1$'
	stop keep
else
	skip "a flood from another address" "no private network namespace"
	skip "40 keep-alive connections from one address" \
	    "no private network namespace"
	skip "...and the probes from another" "no private network namespace"
fi
check "the router stays up" alive d
stop_dsroute d

done_testing
