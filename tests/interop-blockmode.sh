#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Block mode with the real dotnet-gcdump, which asks for a non-lossy
# (Block) session first, CollectTracing6: through a network hop the node
# router refuses it as an unknown command, with the reason in its audit
# line, and the tool goes on in Drop mode and makes its gcdump; with
# may-stall-app the command goes on to the runtime (.NET 10 does not
# know it, and says so itself).

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup
dotnet_tool dotnet-gcdump || skip_all "$why"
GCDUMP=$tool_path

# gcdump NAME PORT: dotnet-gcdump collect through PORT, then its report.
gcdump() {
	DOTNET_EnableDiagnostics=0 timeout 120 "$GCDUMP" collect \
	    --diagnostic-port "$2" -o "$T/$1.gcdump" </dev/null \
	    >"$T/$1.out" 2>&1 &&
	    DOTNET_EnableDiagnostics=0 timeout 120 "$GCDUMP" report \
	    "$T/$1.gcdump" </dev/null >"$T/$1.report" 2>&1
}

start_app app
wait_for 60 app_ready app || fail "the app starts" "$(cat "$T/app.out")"
wait_for 30 has_socket app
start_dsroute rt "uds:$(app_socket app)" tcp:127.0.0.1:0
start_dsroute tl "uds:$T/tool.sock" \
    "tcp:127.0.0.1:$(port_of rt remote),connect"

check "dotnet-gcdump collect through a network hop" gcdump g1 \
    "$T/tool.sock,connect"
like "its report names the app's objects" "$(cat "$T/g1.report")" \
    "[0-9] +64 +DsApp\.Retained +\[dsapp\.dll\]"
check "it fell back from Block to Drop" has_line "$T/g1.out" \
    'does not support non-lossy \(Block\) buffering'
check "the node's audit line says why it refused Block" wait_for 10 \
    has_line "$T/rt.err" \
    '^info: audit: .* peer="tcp:127\.0\.0\.1:[0-9]+" .*command=CollectTracing6 decision=deny role=operate .*rule="block-mode" reason="a Block \(non-lossy\) session from a network peer'
check "then the Drop session crossed both routers" wait_for 30 eval \
    "logged rt 'command=CollectTracing2 .*decision=allow' && \
    logged tl 'command=CollectTracing2 .*decision=allow'"
check "the workstation, whose tool is local, let Block on" wait_for 10 \
    logged tl 'command=CollectTracing6 .*answer=error:0x80131385 decision=allow'
stop_dsroute tl
stop_dsroute rt

# may-stall-app: the node lets it on; the runtime answers for itself.
start_dsroute rs "uds:$(app_socket app)" "tcp:127.0.0.1:0,may-stall-app"
start_dsroute ts "uds:$T/tool2.sock" \
    "tcp:127.0.0.1:$(port_of rs remote),connect"
check "dotnet-gcdump through a node with may-stall-app" gcdump g2 \
    "$T/tool2.sock,connect"
check "the node let CollectTracing6 on; .NET 10 does not know it" \
    wait_for 10 logged rs \
    'command=CollectTracing6 .*answer=error:0x80131385 decision=allow'
is "... and refused nothing" "$(count_lines "$T/rs.err" 'decision=deny')" 0
stop_dsroute ts
stop_dsroute rs
stop_app app

done_testing
