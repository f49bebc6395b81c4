#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Two routers chained over TCP, the cross-host story, with the real
# runtime in connect mode and the real client library:
#
#	dsclient -> uds -> tl -> tcp -> rt <- uds <- app (DiagnosticPorts)
#
# A trace, then 50 commands in a row, each on a connection of its own and
# each served by a connection the runtime re-dialled.  Then a start-up
# trace of a suspended app: the session starts before the resume.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

start_dsroute rt "uds:$T/rt.sock" tcp:127.0.0.1:0
start_dsroute tl "uds:$T/tool.sock" "tcp:127.0.0.1:$(port_of rt remote),connect"
start_app app "DOTNET_DiagnosticPorts=$T/rt.sock,nosuspend"
PID=$(pid_of app)
check "the app runs without waiting" wait_for 60 app_ready app
check "and it is parked in the router" wait_for 30 parked app rt

check "dsclient trace through the chain" client tr --timeout 60 \
    --port "$T/tool.sock,connect" trace --seconds 3 --out "$T/c.nettrace"
like "the stream is a Nettrace stream" "$(cat "$T/tr.out")" \
    "^trace bytes=[0-9]+ nettrace=yes"
is "the file starts with Nettrace" "$(head -c 8 "$T/c.nettrace")" Nettrace
like "it holds Dsroute-Test and GC events" "$(cat "$T/tr.out")" \
    "events total=[0-9]+ dsroute-test=[1-9][0-9]* gc=[1-9]"
BYTES=$(sed -n 's/^trace bytes=\([0-9]*\) .*/\1/p' "$T/tr.out")
wait_for 30 logged tl 'command=CollectTracing2 '
wait_for 30 logged rt 'command=CollectTracing2 '
like "the runtime ended the stream; every byte crossed the chain" \
    "$(grep 'command=CollectTracing2 ' "$T/tl.err")" \
    "runtime_pid=- .*to_tool=$((BYTES + 28)) .*end=\"runtime closed\""
like "the runtime's router knows whose stream it was" \
    "$(grep 'command=CollectTracing2 ' "$T/rt.err")" \
    "runtime_pid=$PID .*to_tool=$((BYTES + 28)) .*end=\"runtime closed\""

# 50 commands in a row: one dsclient process, one connection per command.
set -- processinfo
i=1
while [ $i -lt 50 ]; do
	set -- "$@" + processinfo
	i=$((i + 1))
done
check "50 ProcessInfo in a row through the chain" \
    client fifty --timeout 120 --port "$T/tool.sock,connect" "$@"
is "all 50 answered by the app" \
    "$(count_lines "$T/fifty.out" "^pid=$PID cookie=")" 50
wait_for 30 logged rt "command=ProcessInfo3 .*runtime_pid=$PID " 50
is "the runtime's router served 50 ProcessInfo3, all from the app" \
    "$(count_lines "$T/rt.err" \
    "command=ProcessInfo3 .*runtime=uds:.*runtime_pid=$PID ")" 50
stop_app app
wait_for 30 has_line "$T/rt.err" "runtime pid $PID .* went away"

# A start-up trace through the chain: the app waits, dsclient starts the
# session on one parked connection and resumes on the next one.
start_app sus "DOTNET_DiagnosticPorts=$T/rt.sock"
SPID=$(pid_of sus)
check "a suspended app is parked" wait_for 60 parked sus rt
check "and has not run Main" eval "! app_ready sus"
check "start-up trace with --resume through the chain" client st \
    --timeout 60 --port "$T/tool.sock,connect" trace --seconds 3 --resume \
    --out "$T/s.nettrace"
check "Main ran once the trace had started" app_ready sus
like "the start-up trace is a Nettrace with the app's events" \
    "$(cat "$T/st.out")" "dsroute-test=[1-9][0-9]* gc=[1-9]"
# dsapp counts ticks from 1 when Main starts: tick 1 is in the trace.
like "the trace began before Main: it holds the first tick" \
    "$(cat "$T/st.out")" "first-tick=1\$"
stop_app sus

stop_dsroute tl
stop_dsroute rt

done_testing
