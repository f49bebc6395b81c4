#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The runtime serves one command at a time and waits forever on a client
# that sent part of a header.  Through the router, such a client never
# reaches the runtime and never delays anyone else.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

MAGIC=444f544e45545f4950435f563100

# hold_then_command DESC HOLD-ADDR CMD-ADDR: while one client holds half a
# header (10 s), a ProcessInfo from another must be answered first.
hold_then_command() {
	bg holder "$FAKETOOL" --timeout 15 "$2" raw "${MAGIC}14" --hold-ms 10000
	wait_for 5 eval "grep -q 'accepted' '$T/d.err' || grep -q 'command' '$T/rt.ev'"
	if tool --timeout 5 "$3" processinfo; then
		pass "$1: another client is served at once"
	else
		fail "$1: another client is served at once" \
		    "$(cat "$T/tool.out" "$T/tool.err")"
	fi
	check "$1: the half-sent client is still connected meanwhile" \
	    alive holder
	stop holder
}

# Directly, with no router, the fake runtime blocks like the real one:
# this is what the router protects against.
start_fakert rt0 --listen "$T/rt0.sock"
bg holder0 "$FAKETOOL" --timeout 15 "$T/rt0.sock" raw "${MAGIC}14" --hold-ms 10000
wait_for 5 has_line "$T/rt0.ev" '^accept'
if tool --timeout 1 "$T/rt0.sock" processinfo; then
	fail "without a router, a half-sent header blocks the runtime"
else
	pass "without a router, a half-sent header blocks the runtime"
fi
stop holder0
stop rt0

# A runtime's listening port behind the router (client-server).
start_fakert rt --listen "$T/rt.sock" --pid 5001
start_dsroute d "uds:$T/rt.sock" tcp:127.0.0.1:0
addr="tcp:127.0.0.1:$(port_of d remote)"
hold_then_command "runtime's port" "$addr" "$addr"
is "runtime's port: only the complete command reached the runtime" \
    "$(grep -c '^command' "$T/rt.ev"):$(runtime_rx rt)" "1:20"
stop_dsroute d
stop rt

# A parked runtime (server-server): a silent client does not take it.
: >"$T/d.err"
start_dsroute d "uds:$T/rt2.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/rt2.sock"
addr="tcp:127.0.0.1:$(port_of d remote)"
hold_then_command "parked runtime" "$addr" "$addr"
bg silent "$FAKETOOL" --timeout 15 "$addr" raw "" --hold-ms 10000
# ProcessInfo2: a ProcessInfo would be the router's, from its record.
check "parked runtime: a silent client does not delay the next" \
    tool --timeout 5 "$addr" processinfo2
stop silent
is "parked runtime: only the complete commands reached the runtime" \
    "$(grep -Ec '^(command|bad-message)' "$T/rt.ev"):$(runtime_rx rt)" "2:40"
stop_dsroute d
stop rt

done_testing
