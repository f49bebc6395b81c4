#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A WebSocket peer that pings and never reads (issue 32.1): the router
# answers only the latest ping, reads nothing more while that pong waits,
# and cuts the peer once the pong stayed unread past --ws-ping-interval,
# with one line.  Its memory stays flat: a tool that never sent a command
# and a runtime parked after its advertise, both unauthenticated, each
# flood it with 256 MiB of pings.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

PY=/usr/bin/python3
WSPEER="$PY $top_srcdir/tests/helpers/wspeer.py"
[ -x "$PY" ] || skip_all "python3 is not installed (dev.sh installs it)"

# ASan keeps freed memory in quarantine; that would look like growth.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
export ASAN_OPTIONS

ws_port() {
	sed -n "s/^info: $2 wss*:[^ ]*:\([0-9][0-9]*\)\/[^ ]*: listening.*/\1/p" \
	    "$T/$1.err" | head -n 1
}

hwm_kb() {
	awk '/^VmHWM:/ { print $2 }' "/proc/$1/status"
}

start_dsroute d --ws-ping-interval 1s --handshake-timeout 30s \
    "uds:$T/d.sock" "ws:127.0.0.1:0/diag,advertise=any"
P=$(ws_port d remote)
$WSPEER raw 127.0.0.1 "$P" ok >"$T/warm.out" 2>&1	# warm up

# flood NAME [park]: 256 MiB of pings; the peak memory before and after.
flood() {
	before=$(hwm_kb "$(pid_of d)")
	$WSPEER flood 127.0.0.1 "$P" 256 20 ${2:-} >"$T/$1.out" 2>&1
	after=$(hwm_kb "$(pid_of d)")
	echo "# $1: peak RSS KiB $before before, $after after;" \
	    "$(cat "$T/$1.out")"
	check "$1: the router's peak memory grew by under 8 MiB" \
	    test $((after - before)) -lt 8192
	like "$1: the router cut the peer, having taken little" \
	    "$(cat "$T/$1.out")" "^cut [0-9]{1,8}$"
}

flood tool
wait_for 5 has_line "$T/d.err" "left our pong unread"
is "tool: one line says why" \
    "$(count_lines "$T/d.err" "WebSocket peer left our pong unread")" 1

check "the daemon stays up" alive d
$WSPEER raw 127.0.0.1 "$P" ok >"$T/after.out" 2>&1
like "...and upgrades the next peer" "$(cat "$T/after.out")" "^status 101"
stop_dsroute d

# The same from a runtime parked after its advertise: no session, no
# deadline of one.
start_dsroute d --ws-ping-interval 1s "uds:$T/d2.sock" \
    "ws:127.0.0.1:0/diag,advertise=any"
P=$(ws_port d remote)
$WSPEER raw 127.0.0.1 "$P" ok >"$T/warm.out" 2>&1
flood runtime park
wait_for 5 has_line "$T/d.err" "went away: WebSocket peer left our pong"
is "runtime: one line says why" \
    "$(count_lines "$T/d.err" "WebSocket peer left our pong unread")" 1
check "the daemon stays up" alive d
stop_dsroute d

done_testing
