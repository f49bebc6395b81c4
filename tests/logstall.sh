#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A standard error nobody reads: the router keeps serving, queues what it
# can, drops the rest with a count, and says how many once a reader comes.
# Its standard error is a FIFO held open by a process that never reads,
# as when the process supervising dsroute hangs.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

mkfifo "$T/err.fifo"
# The read end is opened by the child: opening it here would wait for a
# writer that is not started yet.
bg holder sh -c 'exec sleep 600 <"$1"' sh "$T/err.fifo"
start_fakert rt --listen "$T/rt.sock"
"$DSROUTE" -v debug "uds:$T/rt.sock,connect" "uds:$T/tool.sock,listen" \
    2>"$T/err.fifo" &
echo $! >"$T/d.pid"
_pids="$_pids $!"
wait_for 10 test -S "$T/tool.sock" || fail "the router listens"

# At debug level a session writes about 0.7 KiB of log: 1000 of them are
# far more than the pipe (64 KiB) and the router's queue (256 KiB) hold.
if tool --timeout 60 "$T/tool.sock" repeat 1000 processinfo; then
	pass "stuck standard error: 1000 sessions served"
else
	fail "stuck standard error: 1000 sessions served" \
	    "$(cat "$T/tool.err")"
fi
is "stuck standard error: the runtime answered every one" \
    "$(count_lines "$T/rt.ev" '^command 0x04 0x00 ')" 1000
check "stuck standard error: the router is alive" alive d

# A reader comes: the queue drains and one line counts what was dropped.
bg reader cat "$T/err.fifo"
if wait_for 20 has_line "$T/reader.out" \
    '^warn: [0-9]+ log lines dropped: standard error did not take them$'
then
	pass "the dropped lines are counted once a reader comes"
else
	fail "the dropped lines are counted once a reader comes" \
	    "$(tail -n 3 "$T/reader.out")"
fi
check "logging goes on after the drain" \
    tool --timeout 10 "$T/tool.sock" processinfo
after_drop() {
	sed -n '/log lines dropped/,$p' "$T/reader.out" |
	    grep -q 'command=ProcessInfo'
}
check "the next session's line comes after the count" wait_for 10 after_drop
is "every line that came through is whole" \
    "$(grep -Evc '^(info|dbug|warn|fail|crit|trce): ' "$T/reader.out")" 0

stop d
kill "$(pid_of holder)" "$(pid_of reader)" 2>/dev/null
done_testing
