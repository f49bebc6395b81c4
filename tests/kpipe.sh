#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A stream out of TCP into a Unix socket moves through a kernel pipe
# (splice(2), router/pump.c): byte for byte, to a tool that reads slower
# than the runtime writes, to its end; the pipe goes with the session;
# and where no descriptor is to spare the stream is copied instead.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

[ "$(uname -s)" = Linux ] || skip_all "splice(2) is Linux's alone"

STREAM=16777216

# pipes PID: the kernel pipes a process holds open.
pipes() {
	ls -l "/proc/$1/fd" 2>/dev/null | grep -c 'pipe:\['
}

# kpipe_checks NAME: a fast stream, a slow one, the pipes of router NAME.
kpipe_checks() {
	_rp=$(pid_of "$1")
	_before=$(pipes "$_rp")
	if tool --timeout 60 "$T/$1.sock" collect --expect-bytes $STREAM; then
		stream_same "$1: at full speed" rt "$T/tool.out" $STREAM
	else
		fail "$1: at full speed" "$(cat "$T/tool.out" "$T/tool.err")"
	fi
	# 4 MiB/s: the tool's socket fills and the pipe holds the rest.
	bg slow "$FAKETOOL" --timeout 60 "$T/$1.sock" collect \
	    --rate 4194304 --expect-bytes $STREAM
	if wait_for 10 eval "[ \$(pipes $_rp) -gt $_before ]"; then
		_during="through a kernel pipe"
	else
		_during="by copies"
	fi
	wait_exit slow 30
	stream_same "$1: to a tool reading 4 MiB/s" rt "$T/slow.out" $STREAM
	is "$1: the stream went $2" "$_during" "$2"
	wait_for 10 eval "[ \$(pipes $_rp) -eq $_before ]"
	is "$1: no pipe is left once the session ends" "$(pipes "$_rp")" \
	    "$_before"
}

start_fakert rt --listen tcp:127.0.0.1:0 --stream-bytes $STREAM
RP=$(fakert_port rt)

start_dsroute kp -v debug "uds:$T/kp.sock" "tcp:127.0.0.1:$RP,connect"
kpipe_checks kp "through a kernel pipe"
like "the session ended as the runtime did" \
    "$(grep -E '^info: session [0-9]+: ' "$T/kp.err" | tail -n 1)" \
    'runtime closed|tool closed'
# A tool that dies mid-stream, bytes still in the pipe for it.
_before=$(pipes "$(pid_of kp)")
n=$(count_lines "$T/kp.err" '^info: session [0-9]+: ')
tool --timeout 30 "$T/kp.sock" collect --rate 8388608 \
    --hangup-after-bytes 4194304
session_says "a tool gone mid-stream" 'tool (closed|reset)' kp $((n + 1)) 10
wait_for 10 eval "[ \$(pipes $(pid_of kp)) -eq $_before ]"
is "a tool gone mid-stream: its pipe went with it" \
    "$(pipes "$(pid_of kp)")" "$_before"
processinfo_via "after it" tool "$T/kp.sock" "$(pid_of rt)"
stop_dsroute kp

# No descriptor beyond the budget of --max-sessions: copies, not pipes.
bg lean sh -c 'ulimit -n 64 && exec "$0" "$@"' "$DSROUTE" -v debug \
    --max-sessions 100 "uds:$T/lean.sock" "tcp:127.0.0.1:$RP,connect"
wait_for 10 has_line "$T/lean.err" '^info: ready$' || fail "lean started"
kpipe_checks lean "by copies"
check "the router says why it copied" has_line "$T/lean.err" \
    'no descriptors to spare for a kernel pipe'
stop_dsroute lean

stop rt
done_testing
