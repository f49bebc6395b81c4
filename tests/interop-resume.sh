#!/bin/sh
# SPDX-License-Identifier: ISC
#
# --resume-after with the real runtime: two apps start suspended
# (DOTNET_DiagnosticPorts=<router's socket>, suspend is the default there)
# and no tool comes.  The one whose router has --resume-after 3 runs Main;
# the other, behind a router without it, stays paused until a tool
# resumes it.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

PAUSED='awaiting a Diagnostics IPC ResumeStartup command'
SENT='no tool resumed it within 3.000s \(--resume-after\); the router sends ResumeRuntime$'

start_dsroute on --resume-after 3 "uds:$T/on.sock" "uds:$T/on-tool.sock"
start_dsroute off "uds:$T/off.sock" "uds:$T/off-tool.sock"
start_app a "DOTNET_DiagnosticPorts=$T/on.sock"
start_app b "DOTNET_DiagnosticPorts=$T/off.sock"

check "both suspended runtimes dial their routers" \
    eval "wait_for 60 parked a on && wait_for 60 parked b off"
check "with --resume-after, Main runs though no tool came" \
    wait_for 60 app_ready a
like "the router said it resumed the runtime" "$(cat "$T/on.err")" \
    "runtime pid $(pid_of a) .*$SENT"
check "and that the runtime answered ok" wait_for 10 has_line "$T/on.err" \
    "runtime pid $(pid_of a) .*answered the router's ResumeRuntime: ok\$"

# The runtime prints its pause message about 5 s after exec.
check "without it the runtime says it is paused" \
    wait_for 60 has_line "$T/b.out" "$PAUSED"
check "and Main has not run" eval "! app_ready b"
is "the router without --resume-after sent no ResumeRuntime" \
    "$(count_lines "$T/off.err" 'the router sends ResumeRuntime')" 0
check "a tool resumes it through that router" \
    client re --timeout 60 --port "$T/off-tool.sock,connect" resume
check "then Main runs" wait_for 60 app_ready b

check "the resumed app still answers through its router" \
    client ci --timeout 60 --port "$T/on-tool.sock,connect" processinfo
like "its ProcessInfo names it" "$(cat "$T/ci.out")" "^pid=$(pid_of a) "

stop_app a
stop_app b
stop_dsroute on
stop_dsroute off

done_testing
