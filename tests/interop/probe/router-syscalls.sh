#!/bin/sh
# SPDX-License-Identifier: ISC
#
# What the router does with the runtime's trace stream, which the runtime
# writes in very small pieces (docs/protocol-notes.md, finding 14): how
# many reads the router next to the runtime makes per MB of stream.
#
#   tests/interop/probe/router-syscalls.sh OUT DSROUTE [INTERVAL_MS [SECONDS]]
#
# OUT is a tests/interop/build.sh output directory.  dsapp ticks every
# INTERVAL_MS (10 by default; 0 is as fast as it can), and dsclient traces
# it for SECONDS (10) without rundown through two routers (the app's
# default socket -> rt -> tcp -> tl -> dsclient).  The read count comes
# from /proc/PID/io (syscr), which costs the router nothing; each read
# is forwarded at once by one send(), and polled for by one epoll_wait().
# With STRACE=1 the router also runs under strace -c (which slows it, so
# that it reads larger pieces).

set -eu

if [ $# -lt 2 ]; then
	echo "usage: $0 OUT DSROUTE [INTERVAL_MS [SECONDS]]" >&2
	exit 2
fi
out=$1
dsroute=$2
interval=${3:-10}
seconds=${4:-10}

d=$(mktemp -d /tmp/dsrs.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$d"
}
trap cleanup EXIT

# await FILE PATTERN: poll, for at most 30 s, until FILE has a line.
await() {
	n=0
	until grep -q "$2" "$1" 2>/dev/null; do
		n=$((n + 1))
		[ $n -lt 1500 ] || { echo "$0: timed out on $1" >&2; exit 1; }
		sleep 0.02
	done
}

TMPDIR=$d "$out/app/dsapp" --interval-ms "$interval" >"$d/app.out" &
app=$!
pids="$pids $app"
await "$d/app.out" ready
sock=$(ls "$d"/dotnet-diagnostic-"$app"-*-socket)

"$dsroute" "uds:$sock" tcp:127.0.0.1:0 2>"$d/rt.err" &
rt=$!
pids="$pids $rt"
await "$d/rt.err" '^info: ready'
port=$(sed -n 's/^info: remote tcp:.*:\([0-9]*\): listening.*/\1/p' \
    "$d/rt.err")
"$dsroute" "uds:$d/t.sock" "tcp:127.0.0.1:$port,connect" 2>"$d/tl.err" &
tl=$!
pids="$pids $tl"
await "$d/tl.err" '^info: ready'

if [ -n "${STRACE:-}" ]; then
	strace -c -f -o "$d/rt.strace" -p "$rt" &
	st=$!
fi
syscr0=$(awk '/^syscr:/ { print $2 }' "/proc/$rt/io")
DOTNET_EnableDiagnostics=0 "$out/client/dsclient" --port "$d/t.sock,connect" \
    trace --seconds "$seconds" --no-rundown --out "$d/x.nettrace" \
    >"$d/client.out"
syscr1=$(awk '/^syscr:/ { print $2 }' "/proc/$rt/io")
[ -n "${STRACE:-}" ] && { kill -INT "$st"; wait "$st" || true; }

bytes=$(sed -n 's/.*command=CollectTracing2 .*to_tool=\([0-9]*\) .*/\1/p' \
    "$d/rt.err")
reads=$((syscr1 - syscr0))
echo "interval ${interval} ms, ${seconds} s: stream $bytes bytes," \
    "router reads $reads (about $((bytes / reads)) bytes each," \
    "$((reads * 1048576 / bytes)) per MB)"
[ -n "${STRACE:-}" ] && sed -n '1,8p' "$d/rt.strace"
exit 0
