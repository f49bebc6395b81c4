#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Bad input on a router with a parked runtime: each case closes only its
# own session with one log line, the router stays up, and not one byte
# reaches the runtime.  Afterwards a good command still goes through.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

MAGIC=444f544e45545f4950435f563100		# "DOTNET_IPC_V1\0"
BAD_ENCODING=${MAGIC}1800ffff000084131380	# the runtime's error frames
UNKNOWN_MAGIC=${MAGIC}1800ffff000086131380

start_dsroute d --handshake-timeout 1 --silent-timeout 1 "uds:$T/rt.sock" \
    tcp:127.0.0.1:0
start_fakert rt --connect "$T/rt.sock"
addr="tcp:127.0.0.1:$(port_of d remote)"
wait_for 10 has_line "$T/d.err" "runtime pid $(pid_of rt) .* connected"

sessions=0
# bad DESCRIPTION REASON-EREGEX RAW-ARGS...: send it, expect one end line.
bad() {
	_desc=$1
	_why=$2
	shift 2
	tool --timeout 10 "$addr" raw "$@"
	sessions=$((sessions + 1))
	session_says "$_desc" "$_why" d "$sessions" 5
}

bad "garbage first bytes" 'not a diagnostic IPC message' \
    474554202f20485454502f312e300d0a0d0a
is "garbage: the runtime's UNKNOWN_MAGIC frame, as it would answer" \
    "$(sed -n 's/^reply //p' "$T/tool.out")" "$UNKNOWN_MAGIC"
bad "advertise magic, then garbage" 'not a diagnostic IPC message' \
    414456525f56325858
bad "size below 20" 'header size below 20' "${MAGIC}130004000000"
is "size below 20: the runtime's BAD_ENCODING frame" \
    "$(sed -n 's/^reply //p' "$T/tool.out")" "$BAD_ENCODING"
bad "reserved field not zero" 'reserved header field' \
    "${MAGIC}140004000100"
is "reserved not zero: BAD_ENCODING frame" \
    "$(sed -n 's/^reply //p' "$T/tool.out")" "$BAD_ENCODING"
bad "client sends the server command set" 'server response' \
    "${MAGIC}1800ffff000000000000"
bad "truncated header, then EOF" 'closed before a complete first message' \
    "${MAGIC}1400" --shut-wr
bad "header without its payload, then EOF" \
    'closed before a complete first message' "${MAGIC}18000401000000" \
    --shut-wr
bad "truncated header, then silence" 'no complete first message within' \
    "${MAGIC}14" --hold-ms 2000
bad "header without its payload, then silence" \
    'no complete first message within' "${MAGIC}180004010000" --hold-ms 2000
bad "connect and send nothing" 'sent nothing within 1\.0s \(--silent-timeout\)' "" \
    --hold-ms 2000
bad "reset after half a header" 'reset the connection|closed before' \
    "${MAGIC}" --hold-ms 200 --reset
bad "a header dribbled a byte at a time, then silence" \
    'no complete first message within' "${MAGIC}1400" --chunk 1 \
    --delay-ms 100 --hold-ms 2000

is "no bad input reached the runtime" \
    "$(grep -Ec '^(command|bad-message)' "$T/rt.ev")" 0
check "the router is still up" alive d
check "a good command still goes through" tool --timeout 10 "$addr" \
    processinfo
is "only that command reached the runtime" \
    "$(grep -E '^(command|bad-message)' "$T/rt.ev")" \
    "command 0x04 0x00 20 ProcessInfo"

# The runtime side misbehaves: half an advertise, or bytes while parked.
cut=$(count_lines "$T/d.err" 'no complete first message')
bg half "$FAKETOOL" --timeout 5 "$T/rt.sock" raw 414456525f5631 --hold-ms 2000
check "half an advertise is cut at the deadline" \
    wait_for 5 eval "[ \$(count_lines '$T/d.err' 'no complete first message') -gt $cut ]"
stop_dsroute d
stop rt

done_testing
