#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dir: with the real runtime: a router that shares an app's TMPDIR finds
# the app's default socket without its pid, the real dotnet-trace records
# the app's events through it, a newer app in the same directory does not
# take the tools from it, and once it is killed (its socket file left
# behind) the newer app serves.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5
D=$T/a.d

start_app a
wait_for 60 app_ready a || fail "a starts" "$(cat "$T/a.out")"
wait_for 30 has_socket a
start_dsroute rt -v debug "dir:$D" tcp:127.0.0.1:0
P=$(port_of rt remote)
start_dsroute tl "uds:$T/tool.sock" "tcp:127.0.0.1:$P,connect"

check "ProcessInfo through dir: finds the app" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo
is "... its pid" "$(field pid "$T/tool.out")" "$(pid_of a)"

if dotnet_tool dotnet-trace; then
	check "dotnet-trace collect through dir: and a second router" \
	    collect_trace "$T/tool.sock,connect" "$T/a.nettrace"
	check "dsclient parses the trace" client dp parse "$T/a.nettrace"
	like "it holds the app's Dsroute-Test events" "$(cat "$T/dp.out")" \
	    "dsroute-test=[1-9][0-9]*"
else
	skip "dotnet-trace collect through dir:" "$why"
fi

# A second app in the same directory, newer: a keeps the tools (a trace's
# StopTracing must reach the app its CollectTracing went to).
start_app b TMPDIR="$D"
wait_for 60 app_ready b || fail "b starts" "$(cat "$T/b.out")"
wait_for 30 eval "[ -S \"\$(echo $D/dotnet-diagnostic-$(pid_of b)-*-socket)\" ]"
check "ProcessInfo after a newer app started" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo
is "... still reaches the app serving" "$(field pid "$T/tool.out")" \
    "$(pid_of a)"

# Killed, a leaves its socket file: the router passes over it for b.
kill -KILL "$(pid_of a)"
wait "$(pid_of a)" 2>/dev/null
check "a's socket file stays behind" \
    test -S "$(echo "$D/dotnet-diagnostic-$(pid_of a)-"*-socket)"
check "dsclient ProcessInfo through both routers once a is gone" \
    client ci --timeout 60 --port "$T/tool.sock,connect" processinfo
like "... reaches b, the newest" "$(cat "$T/ci.out")" \
    "^pid=$(pid_of b) .*cmdline=.*dsapp"
check "the router said it passed over the stale file" has_line "$T/rt.err" \
    "dotnet-diagnostic-$(pid_of a)-.*its process is gone\); the next is tried"

stop_dsroute tl
stop_dsroute rt
stop_app b

done_testing
