#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A runtime killed with SIGKILL keeps its parked connection open until the
# kernel has torn the process down, so the router can hand a tool's
# command to a runtime that is already dead (the real runtime shows it
# nine times in ten when a command follows the kill at once).  Made
# deterministic here: the runtime is stopped (SIGSTOP) when the command
# reaches it, then killed.  The command must reach the next runtime, not
# vanish with the dead one.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# parks NAME PID N: the router has parked N connections of runtime PID.
parks() {
	[ "$(count_lines "$T/$1.err" \
	    "runtime_pid=$2 .*end=\"runtime connection parked\"")" -ge "$3" ]
}

# takes NAME COMMAND PID N: N commands went to parked connections of PID.
takes() {
	[ "$(count_lines "$T/$1.err" "^dbug: session [0-9]+: $2 takes the \
parked connection of runtime pid $3 ")" -ge "$4" ]
}

start_dsroute rt -v debug "uds:$T/rt.sock" tcp:127.0.0.1:0
P=$(port_of rt remote)
start_fakert r1 --connect "$T/rt.sock"
p1=$(pid_of r1)
wait_for 10 parks rt $p1 1
check "ProcessInfo reaches the first runtime" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo
is "it is the first runtime" "$(field pid "$T/tool.out")" "$p1"
check "the first runtime parked its next connection" wait_for 10 parks rt $p1 2
start_fakert r2 --connect "$T/rt.sock"
p2=$(pid_of r2)
check "a second runtime parks" wait_for 10 parks rt $p2 1

# The command goes to the current runtime, stopped; then it dies unread.
# ProcessInfo2, which it was never asked: a ProcessInfo would be answered
# from the router's record of it.
kill -STOP "$(pid_of r1)"
bg q "$FAKETOOL" --timeout 30 "tcp:127.0.0.1:$P" processinfo2
check "the command is handed to the stopped runtime" \
    wait_for 10 takes rt 'ProcessInfo2?' $p1 2
kill -KILL "$(pid_of r1)"
wait "$(pid_of r1)" 2>/dev/null
if wait_exit q 30 && wait "$(pid_of q)"; then
	pass "the tool gets an answer although its runtime died"
else
	fail "the tool gets an answer although its runtime died" \
	    "$(cat "$T/q.out" "$T/q.err")"
fi
is "the answer comes from the runtime that lives" "$(field pid "$T/q.out")" \
    $p2
check "the router says why" has_line "$T/rt.err" \
    "runtime pid $p1 .* closed with ProcessInfo2 unanswered"

# Alone: the dead runtime's command waits for the one that replaces it.
check "the second runtime parked its next connection" \
    wait_for 10 parks rt $p2 2
kill -STOP "$(pid_of r2)"
N=$(count_lines "$T/rt.err" "takes the parked connection of runtime pid $p2 ")
bg q2 "$FAKETOOL" --timeout 30 "tcp:127.0.0.1:$P" processinfo
check "the next command is handed to the stopped runtime" \
    wait_for 10 takes rt 'ProcessInfo2?' $p2 $((N + 1))
kill -KILL "$(pid_of r2)"
wait "$(pid_of r2)" 2>/dev/null
check "the router forgets the dead runtime" wait_for 10 has_line \
    "$T/rt.err" "runtime pid $p2 .* closed with ProcessInfo unanswered"
start_fakert r3 --connect "$T/rt.sock"
p3=$(pid_of r3)
if wait_exit q2 30 && wait "$(pid_of q2)"; then
	pass "the waiting tool gets an answer from the new runtime"
else
	fail "the waiting tool gets an answer from the new runtime" \
	    "$(cat "$T/q2.out" "$T/q2.err")"
fi
is "the answer comes from the restarted runtime" \
    "$(field pid "$T/q2.out")" $p3
check "and one ProcessInfo reached it" wait_for 10 has_line "$T/r3.ev" \
    '^command 0x04 0x00 '
is "only one" "$(count_lines "$T/r3.ev" '^command ')" 1

stop_dsroute rt
stop r3

done_testing
