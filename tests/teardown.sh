#!/bin/sh
# SPDX-License-Identifier: ISC
#
# How conversations end: a tool hanging up mid-stream frees the runtime,
# a runtime dying mid-stream ends the tool's side, and a tool that
# half-closes after its command still gets the whole reply.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

STREAM=67108864

start_dsroute d "uds:$T/rt.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/rt.sock"
addr="tcp:127.0.0.1:$(port_of d remote)"

# The tool hangs up after 1 MiB of an endless trace.
tool --timeout 20 "$addr" collect --hangup-after-bytes 1048576
id=$(field session "$T/tool.out")
check "a tool hanging up mid-stream: the runtime's stream breaks" \
    wait_for 10 has_line "$T/rt.ev" "^stream-broken $id "
check "a tool hanging up mid-stream: its session ends" \
    wait_for 10 has_line "$T/d.err" 'command=CollectTracing2 .* end="tool'
check "the runtime is free for the next command" \
    tool --timeout 10 "$addr" processinfo

# The tool half-closes right after its command.
check "half-close after ProcessInfo: the reply arrives" \
    tool --timeout 10 --shut-wr "$addr" processinfo
is "half-close after ProcessInfo: from the right runtime" \
    "$(field pid "$T/tool.out")" "$(pid_of rt)"
stop rt
stop_dsroute d

start_dsroute d2 "uds:$T/rt2.sock" tcp:127.0.0.1:0
start_fakert rt2 --connect "$T/rt2.sock" --stream-bytes $STREAM
addr="tcp:127.0.0.1:$(port_of d2 remote)"
tool --timeout 30 --shut-wr "$addr" collect --expect-bytes $STREAM
id=$(field session "$T/tool.out")
wait_for 10 has_line "$T/rt2.ev" "^stream-end $id "
is "half-close after CollectTracing: the whole 64 MiB stream arrives" \
    "$(field sha256 "$T/tool.out")" \
    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/rt2.ev")"
stop rt2
stop_dsroute d2

# The runtime dies (SIGKILL) in the middle of an endless trace.
start_dsroute d3 "uds:$T/rt3.sock" tcp:127.0.0.1:0
start_fakert rt3 --connect "$T/rt3.sock"
addr="tcp:127.0.0.1:$(port_of d3 remote)"
bg tr "$FAKETOOL" --timeout 30 "$addr" collect
wait_for 10 has_line "$T/rt3.ev" '^stream-start '
# Once its next connection is parked, so that its death can be noticed.
wait_for 10 eval "[ \$(count_lines '$T/rt3.ev' '^advertise') -ge 2 ]"
stop rt3 KILL
if wait_exit tr 10; then
	pass "a runtime dying mid-stream ends the tool's side"
else
	fail "a runtime dying mid-stream ends the tool's side"
fi
check "its session ends with one line" \
    wait_for 10 has_line "$T/d3.err" 'command=CollectTracing2 .* end="runtime'
check "the router forgets the dead runtime" \
    wait_for 10 has_line "$T/d3.err" "runtime pid $(pid_of rt3) .* went away"
check "the router is still up" alive d3
stop_dsroute d3

done_testing
