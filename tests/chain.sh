#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Two routers chained over TCP, the cross-host story, in both directions:
# tools reach a router that dials the router next to the runtime, or the
# router next to the runtime dials the router next to the tools.

. "$top_srcdir/tests/lib/lib.sh"

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
