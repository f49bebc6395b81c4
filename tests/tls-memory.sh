#!/bin/sh
# SPDX-License-Identifier: ISC
#
# What an idle TLS session costs the router, in RSS and PSS: a measurement
# for docs/tls-memory.md, not part of make check (sanitizers and valgrind
# change memory beyond recognition).  Run it from a build directory
# configured without sanitizers:
#
#	mkdir -p build/mem && cd build/mem && ../../configure CFLAGS="-O2 -g"
#	make && make tests/tlscrowd && sh ../../tests/tls-memory.sh [N]
#
# For each case, one router (uds:sink,connect <- tls:127.0.0.1:0) is
# started, warmed up with one session, and measured; then N clients
# (default 500) connect one after the other and stay idle, and the router
# is measured again.  The silent sink stands in for the runtimes: a
# forwarded command is never answered, so each session stays in the pump.
#
#	mtls		client certificate verified, ProcessInfo forwarded
#	mtls-keyupd	the same, then a TLS 1.3 KeyUpdate answered by the
#			router (OpenSSL only: mbed TLS 2.28 has no TLS 1.3)
#	mtls-nocmd	client certificate verified, no command yet
#	verify-none	no client certificate, ProcessInfo forwarded
#	tcp-nocmd	plaintext TCP, no command yet (for comparison)
#
# Output: one line per case: the router's RSS before and after, in KiB,
# then KiB per session of RSS, PSS and private dirty memory (the heap),
# and descriptors per session.  PSS moves with the clients, which share
# the TLS library's pages; RSS and private dirty memory are the router's
# own.

set -eu

N=${1:-500}
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
DSROUTE=${DSROUTE:-./dsroute}
TLSCROWD=${TLSCROWD:-./tests/tlscrowd}
CROWD=${CROWD:-./tests/crowd}

# tlscrowd is an OpenSSL client: a build without OpenSSL (mbed TLS alone)
# has none, and nothing to measure with.
if [ ! -x "$TLSCROWD" ] && [ -f config.h ] &&
    ! grep -q '^#define HAVE_OPENSSL 1' config.h; then
	echo "tls-memory.sh: skipped: tests/tlscrowd needs OpenSSL," \
	    "which configure did not find (install libssl-dev)" >&2
	exit 77
fi
[ -x "$DSROUTE" ] && [ -x "$TLSCROWD" ] && [ -x "$CROWD" ] || {
	echo "tls-memory.sh: run it in a build directory after" \
	    "make tests/tlscrowd tests/crowd" >&2
	exit 2
}
[ "$(ulimit -n)" -gt $((N * 2 + 64)) ] || ulimit -n $((N * 2 + 256))

T=$(mktemp -d /tmp/dsrmem.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null || true
	done
	wait 2>/dev/null || true
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

C=$T/certs
mk() {
	sh "$top_srcdir/certs/mkcerts.sh" -d "$C" "$@" >/dev/null
}
mk ca ca
mk server localhost dns:localhost ip:127.0.0.1
mk client client1 dns:client1.dsroute.test uri:spiffe://dsroute.test/tool

# until SECONDS COMMAND...: poll for a condition with a deadline.
until_true() {
	_end=$(($(date +%s) + $1))
	shift
	until "$@" 2>/dev/null; do
		[ "$(date +%s)" -le "$_end" ] || return 1
		sleep 0.05
	done
}

# kib PID FIELD: Rss or Pss of a process, in KiB.
kib() {
	awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/smaps_rollup"
}

cpu() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# settle PID: wait until the process used no CPU for half a second.
settle() {
	_last=-1
	_now=$(cpu "$1")
	while [ "$_now" != "$_last" ]; do
		_last=$_now
		sleep 0.5
		_now=$(cpu "$1")
	done
}

fds() {
	ls "/proc/$1/fd" | wc -l
}

# clients N CLIENT ADDR: start N clients of a kind (tcp, or tlscrowd's
# options and certificate), in the background; $! is their pid.  One
# client closes at once, more stay until killed.
clients() {
	_hold=3600
	[ "$1" = 1 ] && _hold=0
	case "$2" in
	tcp) "$CROWD" hold "$1" $_hold "$3" <&3 & ;;
	*) "$TLSCROWD" hold $2 "$1" $_hold "$3" "$C/ca.pem" $4 & ;;
	esac
}

# measure NAME ENDPOINT CLIENT [CERTIFICATE]: one case.
measure() {
	_case=$1
	rm -f "$T/rt.sock"
	"$TLSCROWD" sink "$T/rt.sock" >"$T/sink.out" 2>&1 &
	_sink=$!
	pids="$pids $_sink"
	until_true 10 test -S "$T/rt.sock"
	# Every session comes from one peer: lift the session limits.
	"$DSROUTE" --handshake-timeout 3600 --max-sessions $((N + 100)) \
	    --max-sessions-per-peer $((N + 100)) "uds:$T/rt.sock,connect" "$2" \
	    2>"$T/router.err" &
	_router=$!
	pids="$pids $_router"
	until_true 10 grep -q '^info: ready$' "$T/router.err"
	_port=$(sed -n \
	    's/^info: remote t[cl][ps]:[^ ]*:\([0-9]*\): listening.*/\1/p' \
	    "$T/router.err")
	_addr=tcp:127.0.0.1:$_port

	# One session first, so that lazy start-up allocations are counted
	# in the baseline, not in the sessions.
	clients 1 "$3" "$_addr" "${4:-}" >/dev/null
	wait $!
	settle "$_router"
	_rss0=$(kib "$_router" Rss)
	_pss0=$(kib "$_router" Pss)
	_prv0=$(kib "$_router" Private_Dirty)
	_fd0=$(fds "$_router")

	clients "$N" "$3" "$_addr" "${4:-}" >"$T/clients.out"
	_clients=$!
	pids="$pids $_clients"
	until_true 300 grep -q '^hold: opened=' "$T/clients.out"
	grep -q "^hold: opened=$N of $N" "$T/clients.out" || {
		echo "tls-memory.sh: $_case: $(cat "$T/clients.out")" >&2
		exit 1
	}
	case "$3" in
	tcp|*-n*) until_true 60 test "$(fds "$_router")" -ge $((_fd0 + N)) ;;
	*) until_true 60 grep -q "^accepted $((N + 1))\$" "$T/sink.out" ;;
	esac
	settle "$_router"
	_rss1=$(kib "$_router" Rss)
	_pss1=$(kib "$_router" Pss)
	_prv1=$(kib "$_router" Private_Dirty)
	_fd1=$(fds "$_router")
	awk -v c="$_case" -v n="$N" -v r0="$_rss0" -v r1="$_rss1" \
	    -v p0="$_pss0" -v p1="$_pss1" -v d0="$_prv0" -v d1="$_prv1" \
	    -v f0="$_fd0" -v f1="$_fd1" 'BEGIN {
		printf("%-12s %5d %8d %8d %8.1f %8.1f %8.1f %6.1f\n", c, n,
		    r0, r1, (r1 - r0) / n, (p1 - p0) / n, (d1 - d0) / n,
		    (f1 - f0) / n)
	    }'
	# The router would drain its sessions for seconds on SIGTERM.
	kill -KILL "$_router"
	kill "$_clients" "$_sink"
	wait "$_router" "$_clients" "$_sink" 2>/dev/null || true
	pids=""
}

# crowd holds its connections until its input ends: give it an input
# that never does.
mkfifo "$T/forever"
exec 3<>"$T/forever"

srv="cert=$C/localhost.pem,key=$C/localhost.key"
cli="$C/client1.pem $C/client1.key"
printf '%-12s %5s %8s %8s %8s %8s %8s %6s\n' case n rss0_KiB rss1_KiB \
    rss/sess pss/sess prv/sess fd/sess
measure mtls "tls:127.0.0.1:0,$srv,ca=$C/ca.pem" "" "$cli"
library=$(sed -n 's/^info: remote tls:.*, \(.*\), verify .*/\1/p' \
    "$T/router.err")
if grep -q 'mbed TLS' "$T/router.err"; then
	echo "mtls-keyupd  skipped: mbed TLS 2.28 has no TLS 1.3"
else
	measure mtls-keyupd "tls:127.0.0.1:0,$srv,ca=$C/ca.pem" -k "$cli"
fi
measure mtls-nocmd "tls:127.0.0.1:0,$srv,ca=$C/ca.pem" -n "$cli"
measure verify-none "tls:127.0.0.1:0,$srv,verify=none" ""
measure tcp-nocmd "tcp:127.0.0.1:0" tcp
echo "# $library, $(uname -m), $(getconf GNU_LIBC_VERSION)"
