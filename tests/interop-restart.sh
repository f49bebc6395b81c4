#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The real app restarts while the routers run (tools -> tl -> tcp -> rt <-
# app, in connect mode): the next command reaches the new process, with
# its new pid and cookie, and never a parked connection of the old one:
# after SIGTERM, after SIGKILL, when the command is sent the moment the
# old process is killed, when the old process is killed with the command
# unread, and when it is killed in the middle of a trace.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

# processinfo NAME: dsclient ProcessInfo through both routers.
processinfo() {
	client "$1" --timeout 60 --port "$T/tool.sock,connect" processinfo
}

pid_in() {
	sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/$1.out"
}

cookie_in() {
	sed -n 's/^pid=[0-9]* cookie=\([-0-9a-f]*\) .*/\1/p' "$T/$1.out"
}

# launch NAME: start an app that dials the router; wait until it is parked.
launch() {
	start_app "$1" "DOTNET_DiagnosticPorts=$T/rt.sock,nosuspend"
	wait_for 60 parked "$1" rt || fail "$1 is parked" "$(cat "$T/rt.err")"
}

# reparked NAME N: the router parked N connections of the app.
reparked() {
	[ "$(count_lines "$T/rt.err" "runtime_pid=$(pid_of "$1") .*end=\"runtime \
connection parked\"")" -ge "$2" ]
}

# takes NAME N: N commands went to parked connections of the app.
takes() {
	[ "$(count_lines "$T/rt.err" "takes the parked connection of runtime \
pid $(pid_of "$1") ")" -ge "$2" ]
}

gone() {
	has_line "$T/rt.err" "runtime pid $(pid_of "$1") \(cookie [0-9a-f]+\) \
(went away|closed with)"
}

start_dsroute rt -v debug "uds:$T/rt.sock" tcp:127.0.0.1:0
P=$(port_of rt remote)
start_dsroute tl "uds:$T/tool.sock" "tcp:127.0.0.1:$P,connect"

launch a1
check "ProcessInfo reaches the first process" processinfo p1
is "it is the first process" "$(pid_in p1)" "$(pid_of a1)"

# SIGTERM: the app exits 0 and its parked connection closes.
stop_app a1
check "the router notices" wait_for 30 gone a1
launch a2
check "after SIGTERM and a restart, ProcessInfo" processinfo p2
is "it reaches the new process" "$(pid_in p2)" "$(pid_of a2)"
check "which has a new cookie" test "$(cookie_in p2)" != "$(cookie_in p1)"

# SIGKILL, the next command at once: it waits for the app to come back.
kill -KILL "$(pid_of a2)"
bg p3 env DOTNET_EnableDiagnostics=0 "$DSCLIENT" --timeout 60 \
    --port "$T/tool.sock,connect" processinfo
wait "$(pid_of a2)" 2>/dev/null
launch a3
if wait_exit p3 60 && wait "$(pid_of p3)"; then
	pass "a command sent as the app is killed gets an answer"
else
	fail "a command sent as the app is killed gets an answer" \
	    "$(cat "$T/p3.out" "$T/p3.err")"
fi
is "from the restarted process" "$(pid_in p3)" "$(pid_of a3)"
check "with a new cookie" test "$(cookie_in p3)" != "$(cookie_in p2)"

# SIGKILL with the command unread: the killed runtime's parked
# connection is open until the kernel has torn the process down; stop the
# app so that the window stays open until the command is in it.
check "the restarted app parked its next connection" wait_for 30 reparked a3 2
launch a4
kill -STOP "$(pid_of a3)"
N=$(count_lines "$T/rt.err" "takes the parked connection of runtime pid \
$(pid_of a3) ")
# ProcessInfo2, which this app was never asked: its ProcessInfo3 would be
# answered from the router's record of it, and never reach the app.
bg p4 "$FAKETOOL" --timeout 60 "$T/tool.sock" processinfo2
check "the command is handed to the stopped app" \
    wait_for 60 takes a3 $((N + 1))
kill -KILL "$(pid_of a3)"
wait "$(pid_of a3)" 2>/dev/null
if wait_exit p4 60 && wait "$(pid_of p4)"; then
	pass "a command the killed app never read gets an answer"
else
	fail "a command the killed app never read gets an answer" \
	    "$(cat "$T/p4.out" "$T/p4.err")"
fi
is "from the process that lives" "$(pid_in p4)" "$(pid_of a4)"
check "the router says why" has_line "$T/rt.err" "runtime pid $(pid_of a3) \
\(cookie [0-9a-f]+\) closed with ProcessInfo2 unanswered"

# SIGKILL in the middle of a trace: the stream ends, the router goes on.
check "the live app parked its next connection" wait_for 30 reparked a4 2
N=$(count_lines "$T/rt.err" "runtime_pid=$(pid_of a4) .*end=\"runtime \
connection parked\"")
bg tr "$FAKETOOL" --timeout 60 "tcp:127.0.0.1:$P" collect
check "a trace starts (the app re-dials once its session runs)" \
    wait_for 30 reparked a4 $((N + 1))
kill -KILL "$(pid_of a4)"
wait "$(pid_of a4)" 2>/dev/null
if wait_exit tr 30 && wait "$(pid_of tr)"; then
	pass "the trace stream ends when the app is killed"
else
	fail "the trace stream ends when the app is killed" \
	    "$(cat "$T/tr.out" "$T/tr.err")"
fi
like "it had started" "$(cat "$T/tr.out")" "bytes=[1-9][0-9]* "
check "the router ends that session" wait_for 30 has_line "$T/rt.err" \
    "command=CollectTracing2 .*runtime_pid=$(pid_of a4) "
launch a5
check "after the killed trace, ProcessInfo" processinfo p5
is "it reaches the new process" "$(pid_in p5)" "$(pid_of a5)"
check "tl still runs" alive tl
check "rt still runs" alive rt
stop_app a5

stop_dsroute tl
stop_dsroute rt

done_testing
