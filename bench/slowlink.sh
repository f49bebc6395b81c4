#!/bin/bash
# SPDX-License-Identifier: ISC
#
# A tool's command over a slow link (bench/README.md, "Slow links"): a
# fresh ProcessInfo, and a trace's time to its first event, with DELAY
# ms each way (25 by default: a 50 ms round trip) between the tool's side
# and the runtime's, through bench/slowlink.py's relay:
#
#	direct-tcp	the tool dials the runtime's TCP port across the link
#	chain-tcp	tool -> uds -> router -> tcp -> router -> uds -> runtime
#	chain-mtls	the same over mutual TLS (the README's remote recipe)
#	...-warm	the same with the near router's warm connections
#
# and the relay checked against itself: direct-tcp should take two round
# trips (the TCP handshake, the command), within 10%.
#
#	bench/slowlink.sh	N=40 fresh commands per row, DELAY=25

set -eu
cd "$(dirname "$0")/.."
top=$(pwd)
: "${N:=40}" "${DELAY:=25}" "${PORT_BASE:=17400}" "${OUT:=$top/bench/results}"
B=$top/bench/build
PY=/usr/bin/python3
SL="$PY $top/bench/slowlink.py"

log() {
	echo "slowlink: $*" >&2
}

# The router as users run it, and the benchmark's runtime.
if [ -z "${DSROUTE:-}" ]; then
	mkdir -p "$B/dsroute"
	[ -x configure ] || ./autogen.sh >/dev/null 2>&1
	[ -f "$B/dsroute/Makefile" ] ||
	    (cd "$B/dsroute" && CFLAGS="-O2 -g" "$top/configure" -q)
	make -s -C "$B/dsroute" -j"$(nproc)" dsroute
	DSROUTE=$B/dsroute/dsroute
fi
if [ ! -x "$B/dsbench" ] || [ "$B/dsbench" -ot bench/dsbench.c ]; then
	gcc -O2 -g -Wall -Wextra -Wno-unused-parameter -o "$B/dsbench" \
	    bench/dsbench.c -lssl -lcrypto -lpthread
fi

W=$(mktemp -d /tmp/dsr-slow.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do kill "$p" 2>/dev/null || true; done
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT

bgrun() {
	"$@" >>"$W/log" 2>&1 &
	pids="$pids $!"
}

wait_port() {
	local i
	for i in $(seq 100); do
		"$PY" -c "import socket,sys; socket.create_connection(('127.0.0.1', $1), 1)" \
		    2>/dev/null && return 0
		sleep 0.1
	done
	log "nothing listens on $1"
	return 1
}

wait_sock() {
	local i
	for i in $(seq 100); do
		[ -S "$1" ] && return 0
		sleep 0.1
	done
	log "no socket $1"
	return 1
}

sh certs/mkcerts.sh -d "$W/c" ca ca >/dev/null
sh certs/mkcerts.sh -d "$W/c" server localhost dns:localhost ip:127.0.0.1 \
    >/dev/null
sh certs/mkcerts.sh -d "$W/c" client tool >/dev/null
C=$W/c
P_RT=$PORT_BASE
P_FAR=$((PORT_BASE + 1))
P_LINK=$((PORT_BASE + 2))
P_DLINK=$((PORT_BASE + 3))

bgrun "$B/dsbench" server --unix "$W/rt.sock" --tcp "127.0.0.1:$P_RT"
wait_port "$P_RT"
# The link to the runtime's TCP port, and to the far router's.
bgrun $SL relay "$P_DLINK" "$P_RT" "$DELAY"
bgrun $SL relay "$P_LINK" "$P_FAR" "$DELAY"
wait_port "$P_DLINK"
wait_port "$P_LINK"

results=$W/results
: >"$results"

# row NAME ADDR: both workloads through ADDR.
row() {
	local what line
	for what in processinfo trace; do
		line=$($SL measure "$2" "$N" "$what")
		echo "RESULT config=$1 delay_ms=$DELAY ${line#RESULT }" |
		    tee -a "$results"
	done
}

row direct-tcp "tcp:127.0.0.1:$P_DLINK"

# chain FAR-SPEC NEAR-SPEC NAME
chain() {
	local far near
	bgrun "$DSROUTE" -v warning "uds:$W/rt.sock,connect" "$1"
	far=$!
	wait_port "$P_FAR"
	rm -f "$W/near.sock"
	bgrun "$DSROUTE" -v warning "uds:$W/near.sock,listen" "$2"
	near=$!
	wait_sock "$W/near.sock"
	sleep 1		# the near router's spares: made, across the link
	row "$3" "unix:$W/near.sock"
	kill "$near" "$far"
	wait "$near" "$far" 2>/dev/null || true
}

TLSFAR="tls:127.0.0.1:$P_FAR,listen,cert=$C/localhost.pem,key=$C/localhost.key,ca=$C/ca.pem,allow-cn=tool"
TLSNEAR="tls:127.0.0.1:$P_LINK,connect,ca=$C/ca.pem,cert=$C/tool.pem,key=$C/tool.key,sni=localhost"
chain "tcp:127.0.0.1:$P_FAR,listen" "tcp:127.0.0.1:$P_LINK,connect" chain-tcp
chain "tcp:127.0.0.1:$P_FAR,listen" \
    "tcp:127.0.0.1:$P_LINK,connect,peer=router" chain-tcp-warm
chain "$TLSFAR" "$TLSNEAR" chain-mtls
chain "$TLSFAR" "$TLSNEAR,peer=router" chain-mtls-warm

mkdir -p "$OUT"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
{
	echo "# slowlink $stamp: $(uname -srm), $(nproc) CPUs," \
	    "load $(cut -d' ' -f1-3 /proc/loadavg), dsroute $DSROUTE" \
	    "($(git describe --always --dirty 2>/dev/null || echo '?'))"
	cat "$results"
} >"$OUT/slowlink-$stamp.txt"
log "wrote $OUT/slowlink-$stamp.txt"
