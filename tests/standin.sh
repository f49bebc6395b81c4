#!/bin/sh
# SPDX-License-Identifier: ISC
#
# standin: the local stand-ins of remote runtimes (platform/posix_standin.c),
# started through the module by tests/standins: the name and command line
# the tools read, nothing open but the lifeline, an empty environment
# (but TMPDIR, when given);
# stopped and reaped, killed with their parent (PR_SET_PDEATHSIG, with
# the lifeline held open elsewhere), and 200 started and stopped leave
# nothing behind.  dsroute itself runs as one when so marked.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

STANDINS=$top_builddir/tests/standins
[ -d /proc/self/fd ] || skip_all "no /proc"

# dead PID: gone, or a zombie left to whoever adopted it.
dead() {
	_s=$(state "$1")
	[ -z "$_s" ] || [ "$_s" = Z ]
}

named() {
	[ "$(cat "/proc/$1/comm" 2>/dev/null)" = "$2" ]
}

name=dsapp.Standin-Test
what="dsroute stand-in for pid 4242 on tcp:10.0.0.5:9000:"
bg one "$STANDINS" one "$name" "$what"
wait_for 10 has_line "$T/one.out" '^pid=' || fail "one started"
pid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/one.out")
start=$(sed -n 's/.* start=\([0-9]*\).*/\1/p' "$T/one.out")
check "the stand-in took its name as comm (15 bytes)" \
    wait_for 10 named "$pid" "dsapp.Standin-T"
is "its command line is its name, then the words of what" \
    "$(tr '\0' ' ' <"/proc/$pid/cmdline")" "$name $what "
is "standin_start_time() is field 22 of its stat" "$start" \
    "$(sed -n 's/.*) //p' "/proc/$pid/stat" | awk '{ print $20 }')"
is "it has 0, 1, 2 and its lifeline open" \
    "$(ls "/proc/$pid/fd" | sort -n | tr '\n' ' ')" "0 1 2 3 "
is "0, 1 and 2 are /dev/null" \
    "$(readlink "/proc/$pid/fd/0" "/proc/$pid/fd/1" "/proc/$pid/fd/2" |
    sort -u)" /dev/null
like "3 is a socket" "$(readlink "/proc/$pid/fd/3")" '^socket:'
is "its environment is empty" \
    "$(tr -d '\0' <"/proc/$pid/environ" | wc -c)" 0
# With a TMPDIR, that alone: the tools read it to find the socket.
bg tmp env STANDIN_TMPDIR="$T/mirror dir" SECRET=hunter2 "$STANDINS" one \
    "$name" "$what"
wait_for 10 has_line "$T/tmp.out" '^pid=' || fail "tmp started"
tpid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/tmp.out")
wait_for 10 named "$tpid" "dsapp.Standin-T"
is "given a TMPDIR, its environment is that alone" \
    "$(tr '\0' '\n' <"/proc/$tpid/environ" | grep -v '^$')" \
    "TMPDIR=$T/mirror dir"
kill -USR1 "$(pid_of tmp)"
wait_for 10 has_line "$T/tmp.out" '^reaped$'
wait "$(pid_of tmp)"
is "it leads a session of its own, with no terminal" \
    "$(awk '{ sub(/.*\) /, ""); print $3, $4, $5 }' "/proc/$pid/stat")" \
    "$pid $pid 0"
rss=$(rss_kb "$pid")
echo "# stand-in VmRSS ${rss} kB (this build's standins binary)"
kill -USR1 "$(pid_of one)"
check "standin_stop ends it and child.c reaps it" \
    wait_for 10 has_line "$T/one.out" '^reaped$'
check "its pid is gone, no zombie" wait_for 5 eval "[ -z \"\$(state $pid)\" ]"
wait "$(pid_of one)"
is "the driver exits 0" "$?" 0

# Killed with its parent, though the lifeline stays open in a leak.
bg two "$STANDINS" one "$name" "$what" leak
wait_for 10 has_line "$T/two.out" '^pid=' || fail "two started"
pid=$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/two.out")
leak=$(sed -n 's/.* leak=\([0-9]*\).*/\1/p' "$T/two.out")
_pids="$_pids $leak"
wait_for 10 named "$pid" "dsapp.Standin-T"
kill -KILL "$(pid_of two)"
check "SIGKILL to its parent ends it (PR_SET_PDEATHSIG)" \
    wait_for 10 dead "$pid"
kill "$leak" 2>/dev/null

# 200 stand-ins, started and stopped.
"$STANDINS" churn 200 churn.$$ >"$T/churn.out" 2>"$T/churn.err"
is "200 stand-ins: the driver exits 0" "$?" 0
check "all 200 ran under their name" has_line "$T/churn.out" '^running 200$'
check "all 200 were reaped" has_line "$T/churn.out" '^reaped 200$'
check "no child left, zombie or not" has_line "$T/churn.out" \
    '^children none$'
like "no descriptor left" "$(cat "$T/churn.out")" \
    'fds before=([0-9]+) after=\1'
left=$(grep -lx "churn.$$" /proc/[0-9]*/comm 2>/dev/null | wc -l)
is "no process of that name is left" "$left" 0

# dsroute itself: marked as a stand-in, it is one and nothing else.
if command -v python3 >/dev/null 2>&1; then
	python3 -c '
import os, socket, sys, time
ours, theirs = socket.socketpair()
pid = os.fork()
if pid == 0:
    os.dup2(theirs.fileno(), 3)
    os.execve(sys.argv[1], ["dsapp", "stand-in", "test"],
        {"DSROUTE_STANDIN": "3:%d" % os.getppid()})
theirs.close()
for i in range(500):
    with open("/proc/%d/comm" % pid) as f:
        if f.read().strip() == "dsapp":
            break
    time.sleep(0.01)
with open("/proc/%d/status" % pid) as f:
    rss = [l.split()[1] for l in f if l.startswith("VmRSS:")][0]
fds = sorted(int(x) for x in os.listdir("/proc/%d/fd" % pid))
print("fds", " ".join(map(str, fds)), "rss", rss)
ours.close()
print("status", os.waitpid(pid, 0)[1])
' "$DSROUTE" >"$T/self.out" 2>"$T/self.err"
	check "dsroute runs as a stand-in with 0 1 2 3 open" \
	    has_line "$T/self.out" '^fds 0 1 2 3 rss [0-9]+$'
	check "and exits 0 at the lifeline's EOF" \
	    has_line "$T/self.out" '^status 0$'
	echo "# dsroute stand-in VmRSS $(sed -n 's/.* rss //p' \
	    "$T/self.out") kB"
else
	skip "dsroute runs as a stand-in" "no python3"
	skip "and exits at the lifeline's EOF" "no python3"
fi

# A DSROUTE_STANDIN that is not ours makes dsroute neither a stand-in
# nor a router: its command line may be a remote app's.
DSROUTE_STANDIN=3:1 "$DSROUTE" --version >"$T/ver.out" 2>&1
is "a stray DSROUTE_STANDIN stops dsroute" "$?" 1
like "... in one line that says why" "$(cat "$T/ver.out")" \
    "^dsroute: DSROUTE_STANDIN is set, but this is no stand-in of a running dsroute; unset it$"

done_testing
