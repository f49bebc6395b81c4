#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Two routers chained over TCP, the cross-host story, in both directions:
# tools reach a router that dials the router next to the runtime, or the
# router next to the runtime dials the router next to the tools.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

STREAM=67108864

chain_checks() {
	check "$1: ProcessInfo through two routers" \
	    tool --timeout 30 "$2" processinfo
	is "$1: it reached the runtime" "$(field pid "$T/tool.out")" "$3"
	tool --timeout 60 "$2" collect --expect-bytes $STREAM
	id=$(field session "$T/tool.out")
	wait_for 10 has_line "$T/$4.ev" "^stream-end $id "
	is "$1: 64 MiB stream through two routers, same SHA-256" \
	    "$(field sha256 "$T/tool.out")" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/$4.ev")"
	check "$1: 20 commands in a row" \
	    tool --timeout 60 "$2" repeat 20 processinfo
}

# The tools' router dials: tool -> uds -> A -> tcp -> B <- runtime (uds).
start_dsroute b "uds:$T/b-rt.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/b-rt.sock" --stream-bytes $STREAM
start_dsroute a "uds:$T/a-tool.sock" \
    "tcp:127.0.0.1:$(port_of b remote),connect"
chain_checks "tools' router dials" "$T/a-tool.sock" "$(pid_of rt)" rt
# B refuses the environment to a network peer; A, next to the tool, says
# that the far side did, where the tool's user looks.
if tool --timeout 30 "$T/a-tool.sock" env; then
	fail "the far router refuses the environment" "$(cat "$T/tool.out")"
else
	pass "the far router refuses the environment"
fi
check "the tool gets its error frame" has_line "$T/tool.out" \
    'error 0x80070005'
check "B's audit line says why" wait_for 10 has_line "$T/b.err" \
    'command=ProcessEnvironment decision=deny role=operate'
check "A says the runtime side refused it, and where to look" \
    wait_for 10 has_line "$T/a.err" \
    '^info: session [0-9]+: the runtime side answered ProcessEnvironment with error 0x80070005 \(access denied\): a router on the way refused it, and its audit line says why$'
check "A's end line: answer=error:0x80070005, though A allowed it" \
    has_line "$T/a.err" \
    'command=ProcessEnvironment .* answer=error:0x80070005 decision=allow '
check "A's end lines say answer=ok for what the runtime answered" \
    has_line "$T/a.err" 'command=ProcessInfo .* answer=ok decision=allow '
stop_dsroute a
stop_dsroute b
stop rt

# The runtime's router dials: runtime -> uds -> C -> tcp -> D <- tool (uds).
# D lets C's address advertise; C reaches D as a tool that listens.
start_dsroute d "uds:$T/d-tool.sock" tcp:127.0.0.1:0,advertise=addr:127.0.0.1
start_dsroute c "uds:$T/c-rt.sock" \
    "tcp:127.0.0.1:$(port_of d remote),connect,peer=tool"
start_fakert rt2 --connect "$T/c-rt.sock" --stream-bytes $STREAM
chain_checks "runtime's router dials" "$T/d-tool.sock" "$(pid_of rt2)" rt2
stop_dsroute c
stop_dsroute d
stop rt2

done_testing
