#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A real runtime started with DOTNET_DiagnosticPorts=<router's socket>
# (connect mode, suspended by default) dials the router, is parked, and
# stays paused at start-up until a ResumeRuntime reaches it through the
# router; then Main runs.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

PAUSED='awaiting a Diagnostics IPC ResumeStartup command'

start_dsroute rt "uds:$T/rt.sock" tcp:127.0.0.1:0
P=$(port_of rt remote)
start_dsroute tl "uds:$T/tool.sock" "tcp:127.0.0.1:$P,connect"
start_app app "DOTNET_DiagnosticPorts=$T/rt.sock"
PID=$(pid_of app)

check "the suspended runtime dials the router and is parked" \
    wait_for 60 parked app rt
check "ProcessInfo over TCP while it is paused" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo
is "ProcessInfo while paused: the app's pid" "$(field pid "$T/tool.out")" \
    "$PID"
check "dsclient ProcessInfo through two routers while paused" \
    client ci --timeout 60 --port "$T/tool.sock,connect" processinfo
like "while paused the command line is the host alone" "$(cat "$T/ci.out")" \
    "^pid=$PID cookie=[-0-9a-f]+ cmdline=[^ ]*/dsapp\$"

# The runtime's own word that it waits, about 5 s after exec.
check "the runtime says it is paused" wait_for 60 has_line "$T/app.out" \
    "$PAUSED"
check "and Main has not run" eval "! app_ready app"
check "the app is still alive" alive app

check "dsclient ResumeRuntime through two routers" \
    client re --timeout 60 --port "$T/tool.sock,connect" resume
is "ResumeRuntime: ok" "$(cat "$T/re.out")" ok
check "Main runs after ResumeRuntime" wait_for 60 app_ready app
check "the ready line follows the pause message" eval \
    "grep -n '' '$T/app.out' | grep -A9 '$PAUSED' | grep -q 'ready\$'"
wait_for 30 logged rt 'command=ResumeRuntime '
wait_for 30 logged tl 'command=ResumeRuntime '
like "both routers logged ResumeRuntime, answered by the runtime" \
    "$(grep -c 'command=ResumeRuntime .*to_runtime=20 to_tool=24 ' \
    "$T/rt.err" "$T/tl.err" | tr '\n' ' ')" ":1 .*:1 \$"

check "ProcessInfo after the resume" \
    client ci --timeout 60 --port "$T/tool.sock,connect" processinfo
like "after the resume the command line names the assembly" \
    "$(cat "$T/ci.out")" "^pid=$PID .*cmdline=.*/dsapp .*/dsapp\.dll\$"

stop_app app
check "the router notices the app went away" wait_for 30 has_line \
    "$T/rt.err" "runtime pid $PID \(cookie [0-9a-f]+\) went away"
stop_dsroute tl
stop_dsroute rt

done_testing
