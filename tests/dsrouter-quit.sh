#!/bin/sh
# SPDX-License-Identifier: ISC
#
# How a dotnet-dsrouter is stopped: q or Q on standard input when a tool
# launched it (--parentprocess) or a person types it on a terminal, but
# not from any redirected input, and never by its end; --block-signals
# makes it ignore the signals a launching tool lets through; the end of
# the tool that launched it stops it too.  Each way removes its sockets.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/dsrouter.sh"

# A tool launched it: Q on a pipe quits, with status 0.
mkfifo "$T/in1"
exec 7<>"$T/in1"
dsr q1 "$T/in1" server-server -tcps 127.0.0.1:0 --parentprocess "$$:test"
start_fakert rt1 --connect "tcp:127.0.0.1:$(tcp_port q1)" --pid 3001
processinfo "launched by a tool: routes through its default socket" \
    "$(default_socket q1),connect" 3001
echo Q >&7
wait_for 10 eval "! kill -0 $(pid_of q1)"
exits_ok q1 "Q from the launching tool: exit status 0"
check "Q: the default sockets are removed" no_sockets q1
check "Q: says why" has_line "$T/q1.err" 'q read on standard input: stopping'
exec 7>&-
stop rt1

# Redirected input without --parentprocess is not read; its end never
# stops a router either.
mkfifo "$T/in2"
exec 8<>"$T/in2"
dsr q2 "$T/in2" server-server -ipcs "$T/q2.sock" -tcps 127.0.0.1:0 \
    -v debug
echo q >&8
exec 8>&-
start_fakert rt2 --connect "tcp:127.0.0.1:$(tcp_port q2)" --pid 3002
processinfo "not launched by a tool: q on a pipe does not quit" \
    "$T/q2.sock,connect" 3002
check "... and the router says it does not watch its input" eval \
    "! has_line '$T/q2.err' 'q on standard input quits'"
stop_dsroute q2
mkfifo "$T/in3"
exec 8<>"$T/in3"
dsr q3 "$T/in3" server-server -ipcs "$T/q3.sock" -tcps 127.0.0.1:0 \
    --parentprocess "$$:test" -v debug
exec 8>&-
check "launched by a tool, input at its end: the router notices" \
    wait_for 10 has_line "$T/q3.err" 'standard input ended'
start_fakert rt3 --connect "tcp:127.0.0.1:$(tcp_port q3)" --pid 3003
processinfo "... and keeps routing" "$T/q3.sock,connect" 3003
stop_dsroute q3
stop rt2
stop rt3

# A person on a terminal: q and Enter quits.
if command -v script >/dev/null 2>&1; then
	mkfifo "$T/in4"
	exec 9<>"$T/in4"
	TMPDIR=$T script -qec "'$DSROUTE' server-server -ipcs '$T/q4.sock' \
	    -tcps 127.0.0.1:0 -v debug" /dev/null <"$T/in4" >"$T/q4.err" \
	    2>&1 9>&- &
	echo $! >"$T/q4.pid"
	_pids="$_pids $!"
	check "on a terminal: the router watches its input" wait_for 10 \
	    has_line "$T/q4.err" 'q on standard input quits'
	echo hello >&9
	echo q >&9
	wait_for 10 eval "! kill -0 $(pid_of q4)"
	exits_ok q4 "on a terminal: q and Enter quits with status 0"
	check "on a terminal: the socket is removed" test ! -e "$T/q4.sock"
	exec 9>&-
else
	skip "on a terminal: q quits" "script(1) is not installed"
fi

# --block-signals: SIGINT, SIGQUIT and SIGTERM are ignored.
mkfifo "$T/in5"
exec 7<>"$T/in5"
dsr b1 "$T/in5" server-server -tcps 127.0.0.1:0 --parentprocess "$$:test" \
    --block-signals 'SIGINT;SIGQUIT;SIGTERM'
is "blocked signals are blocked in the process" \
    "$(sed -n 's/^SigBlk:[[:space:]]*//p' "/proc/$(pid_of b1)/status")" \
    0000000000004006
kill -INT "$(pid_of b1)"
kill -QUIT "$(pid_of b1)"
kill -TERM "$(pid_of b1)"
start_fakert rt5 --connect "tcp:127.0.0.1:$(tcp_port b1)" --pid 3005
processinfo "after SIGINT, SIGQUIT and SIGTERM, still routing" \
    "$(default_socket b1),connect" 3005
check "... and none of them was seen" eval \
    "! has_line '$T/b1.err' 'received'"
echo Q >&7
wait_for 10 eval "! kill -0 $(pid_of b1)"
exits_ok b1 "blocked signals: Q still quits"
exec 7>&-
stop rt5

# -bsig as dotnet-trace passes it: SIGTERM still stops the router.
dsr b2 /dev/null server-server -ipcs "$T/b2.sock" -tcps 127.0.0.1:0 \
    -bsig:'SIGINT;SIGQUIT'
stop_dsroute b2
# Not blocked, SIGQUIT stops it as dotnet-dsrouter's does.
dsr b3 /dev/null server-server -ipcs "$T/b3.sock" -tcps 127.0.0.1:0
kill -QUIT "$(pid_of b3)"
wait_for 10 eval "! kill -0 $(pid_of b3)"
exits_ok b3 "SIGQUIT: exit status 0"
check "SIGQUIT: the socket is removed" test ! -e "$T/b3.sock"

# The launching tool ends without a word: the router stops too.
TMPDIR=$T sh -c '"$0" server-server -tcps 127.0.0.1:0 --parentprocess "$$:sh" \
    </dev/null 2>"$1" & echo $! >"$2"; wait' "$DSROUTE" "$T/p1.err" \
    "$T/p1.pid" &
parent=$!
_pids="$_pids $parent"
wait_for 10 has_line "$T/p1.err" '^info: ready$' || fail "p1 started"
check "its default sockets exist" test -S "$(default_socket p1)"
kill -KILL "$parent"
check "the launching tool is gone: the router stops" wait_for 10 eval \
    "! kill -0 $(pid_of p1)"
check "... saying why" has_line "$T/p1.err" 'is gone'
check "... and removes its sockets" no_sockets p1

done_testing
