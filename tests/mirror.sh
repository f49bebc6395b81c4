#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The mirror, dir:PATH,listen: each runtime that dials the router appears in
# PATH as a local stand-in process with the names the tools look for, bound
# to that runtime alone, and with nothing of the app's command line in its
# own; its names go when the runtime goes, and its stand-in a little later.
# What a runtime says of itself must agree with its advertise; the
# directory is made safely.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

M=$T/mir
mkdir -m 700 "$M"

# names_of STANDIN: the mirror's socket files named after a stand-in.
names_of() {
	ls "$M" | grep -E "^dotnet-diagnostic-(dsrouter-)?$1-[0-9]+-socket$"
}

# stable_of RUNTIME_PID: the name that does not depend on the stand-in.
stable_of() {
	ls "$M" | grep -E "^dsroute-[A-Za-z0-9._+-]+-$1-[0-9a-f]{8}-socket$"
}

start_dsroute d -v debug "dir:$M,listen" "uds:$T/rt.sock,listen"
start_fakert a --connect "$T/rt.sock" --name Orders.Api
start_fakert b --connect "$T/rt.sock" --name Billing
A=$(pid_of a)
B=$(pid_of b)
check "runtime a is mirrored" wait_for 10 eval '[ -n "$(standin_of d $A)" ]'
check "runtime b is mirrored" wait_for 10 eval '[ -n "$(standin_of d $B)" ]'
SA=$(standin_of d "$A")
SB=$(standin_of d "$B")

# The stand-ins, as the tools see them: a local process named after the app.
is "a's stand-in is named after its app" "$(cat /proc/$SA/comm)" "Orders.Api"
is "b's stand-in is named after its app" "$(cat /proc/$SB/comm)" "Billing"
is "a's stand-in's command line says what it stands for, and no more" \
    "$(tr '\0' ' ' </proc/$SA/cmdline)" \
    "Orders.Api [dsroute stand-in for pid $A on uds:$T/rt.sock] "
is "the stand-ins are the router's children" \
    "$(awk '{ print $4 }' /proc/$SA/stat)" "$(pid_of d)"
is "a stand-in's environment is TMPDIR, the mirror's directory, alone" \
    "$(tr '\0' '\n' </proc/$SA/environ | grep -v '^$')" "TMPDIR=$M"

# A command line may carry secrets, which the runtime gives its own uid
# alone (ProcessInfo); a stand-in's argv is every local user's to read.
# So it holds the app's name and fixed words, never the app's words.
start_fakert v --connect "$T/rt.sock" --name Vault.Api -- --password=Hunter2
V=$(pid_of v)
check "a runtime whose command line holds a secret is mirrored" \
    wait_for 10 eval '[ -n "$(standin_of d $V)" ]'
SV=$(standin_of d "$V")
is "... its stand-in's /proc cmdline: the name and fixed words" \
    "$(tr '\0' ' ' </proc/$SV/cmdline)" \
    "Vault.Api [dsroute stand-in for pid $V on uds:$T/rt.sock] "
is "... ps -o args= shows the same" "$(ps -o args= -p "$SV")" \
    "Vault.Api [dsroute stand-in for pid $V on uds:$T/rt.sock]"
is "... its comm is the app's name" "$(cat /proc/$SV/comm)" Vault.Api
is "... no trace of the secret in its cmdline, comm or environ" \
    "$(cat /proc/$SV/cmdline /proc/$SV/comm /proc/$SV/environ |
    grep -ac Hunter2)" 0
if [ "$(id -u)" -eq 0 ] && command -v setpriv >/dev/null; then
	nobody="setpriv --reuid=65534 --regid=65534 --clear-groups"
	$nobody cat "/proc/$SV/cmdline" >"$T/nobody.cmdline" 2>&1
	is "uid 65534 reads the stand-in's command line" "$?" 0
	like "... which names the app and what it stands for" \
	    "$(tr '\0' ' ' <"$T/nobody.cmdline")" "^Vault\.Api \[dsroute stand-in "
	is "... and not the secret" "$(grep -ac Hunter2 "$T/nobody.cmdline")" 0
	is "... nor in its ps" \
	    "$($nobody ps -o args= -p "$SV" | grep -c Hunter2)" 0
	# dsroute ps asks the mirror through a 0600 name: not for uid 65534.
	chmod 711 "$T"
	chmod 755 "$M"
	$nobody "$DSROUTE" ps "dir:$M" >"$T/nobody.ps" 2>"$T/nobody.pserr"
	chmod 700 "$M" "$T"
	like "dsroute ps as uid 65534 lists the stand-in" \
	    "$(grep "^ *$SV " "$T/nobody.ps")" "^ *$SV +$V +Vault\.Api +uds:"
	is "... but not the command line, and says nothing of it" \
	    "$(cat "$T/nobody.ps" "$T/nobody.pserr" | grep -c Hunter2)" 0
	is "... nor on its standard error" "$(cat "$T/nobody.pserr")" ""
else
	skip "uid 65534 reads the stand-in's command line" "not root"
fi
check "ProcessInfo on its name, for the router's uid, has the command line" \
    tool --timeout 10 "$M/$(stable_of "$V")" processinfo
like "... the app's own, secret included" "$(cat "$T/tool.out")" \
    "^pid=$V .*cmdline=fakert .*--name Vault\.Api -- --password=Hunter2 os="
"$DSROUTE" ps "dir:$M" >"$T/owner.ps" 2>&1
like "dsroute ps for the router's uid shows it, asked of the mirror" \
    "$(grep "^ *$SV " "$T/owner.ps")" \
    "^ *$SV +$V +Vault\.Api +uds:.* fakert .*-- --password=Hunter2$"

# A stand-in killed in its grace (below) is reaped, and not replaced.
stop v
wait_for 10 eval '[ -z "$(stable_of $V)" ]'
kill -KILL "$SV"
check "a stand-in killed in its grace is reaped" \
    wait_for 5 eval "[ -z \"\$(state $SV)\" ]"
is "... and not replaced: its runtime is gone" \
    "$(count_lines "$T/d.err" "stand-in pid $SV ended")" 0

# Their names: the plain one, the router's one not older, and a stable one.
is "a has two default-socket names, after its stand-in" \
    "$(names_of "$SA" | wc -l)" 2
is "... and one stable name" "$(stable_of "$A" | wc -l)" 1
plain=$M/$(names_of "$SA" | grep -v dsrouter)
router=$M/$(names_of "$SA" | grep dsrouter)
stable=$M/$(stable_of "$A")
check "the router's name is not older than the plain one" \
    test ! "$router" -ot "$plain"
is "the names are sockets of mode 0600" \
    "$(stat -c '%F %a' "$plain" "$router" "$stable" | sort -u)" "socket 600"

# Each name reaches its own runtime, and no other.
check "a tool on a's plain name is served" tool --timeout 10 "$plain" processinfo2
is "... by runtime a" "$(field pid "$T/tool.out")" "$A"
check "a tool on a's router name is served" tool --timeout 10 "$router" processinfo
is "... by runtime a" "$(field pid "$T/tool.out")" "$A"
check "a tool on a's stable name is served" tool --timeout 10 "$stable" processinfo
is "... by runtime a" "$(field pid "$T/tool.out")" "$A"
plain_b=$M/$(names_of "$SB" | grep -v dsrouter)
check "a tool on b's name is served" tool --timeout 10 "$plain_b" repeat 5 processinfo
is "... by runtime b alone, once: the rest from b's record" \
    "$(count_lines "$T/b.ev" '^command 0x04 0x00 ')" 1

# A stream to one runtime while another tool uses the other.
bg streamer "$FAKETOOL" --timeout 30 "$plain" collect --stop-after-bytes 4000000
check "a tool uses b while a streams" tool --timeout 10 "$plain_b" processinfo
is "... and b answered it" "$(field pid "$T/tool.out")" "$B"
check "the stream from a ends whole" wait_exit streamer 30

# A stand-in killed by someone: another takes its place, with new names.
kill -KILL "$SB"
check "a stand-in killed is replaced, with one line" wait_for 10 has_line \
    "$T/d.err" "runtime pid $B .*\(Billing\): its stand-in pid $SB ended; another takes its place"
check "... which is mirrored anew" \
    wait_for 10 eval '[ "$(standin_of d $B)" != "$SB" ]'
is "... and the old stand-in's names are gone" "$(names_of "$SB" | wc -l)" 0
SB=$(standin_of d "$B")
plain_b=$M/$(names_of "$SB" | grep -v dsrouter)
check "... and b is served on the new one's name" \
    tool --timeout 10 "$plain_b" processinfo

# An advertise on a mirror name is refused: tools only there.
start_fakert c --connect "$plain"
check "a runtime dialling a mirror name is refused, with a reason" \
    wait_for 10 has_line "$T/d.err" "an advertise where a tool's command belongs"
stop c

# A runtime that goes takes its names with it at once, and its stand-in a
# little later: dotnet-trace ps, which lists the names and then reads each
# process, fails whole on one that went in between.
stop a KILL
check "a's names go when runtime a goes" \
    wait_for 10 eval '[ -z "$(names_of $SA)$(stable_of $A)" ]'
st=$(state "$SA")
check "... its stand-in still runs once they are gone (state '$st', not Z)" \
    eval "[ -n '$st' ] && [ '$st' != Z ]"
check "... and goes within a few seconds, reaped (no zombie)" \
    wait_for 5 eval "[ -z \"\$(state $SA)\" ]"
is "b's names stay" "$(names_of "$SB" | wc -l)" 2
check "a tool on a's old stable name is refused (the file is gone)" \
    eval "! tool --timeout 5 '$stable' processinfo"

# A new runtime appears.
start_fakert e --connect "$T/rt.sock" --name Orders.Api
E=$(pid_of e)
check "a new runtime appears in the mirror" \
    wait_for 10 eval '[ -n "$(standin_of d $E)" ]'

# A runtime whose ProcessInfo disagrees with its advertise is not mirrored.
start_fakert liar --connect "$T/rt.sock" --info-pid 999999
check "a runtime that lies about its pid is not mirrored, with one line" \
    wait_for 10 has_line "$T/d.err" \
    "runtime pid $(pid_of liar) .*: its ProcessInfo says pid 999999, not what it advertised; not mirrored"
is "... and has no names" "$(stable_of "$(pid_of liar)" | wc -l)" 0
stop liar

# SIGTERM: every name and every stand-in goes, one in its grace too.
SE=$(standin_of d "$E")
stop e KILL
wait_for 10 eval '[ -z "$(stable_of $E)" ]'
st=$(state "$SE")
check "e's stand-in is in its grace (state '$st') when the router stops" \
    eval "[ -n '$st' ] && [ '$st' != Z ]"
stop_dsroute d
is "no name is left in the mirror" "$(ls "$M" | wc -l)" 0
check "no stand-in is left, nor a zombie, once the router exited" \
    eval "[ -z \"\$(state $SB)\$(state $SE)\" ]"
stop b

# app= on the mirror: only the runtimes it names appear.
M2=$T/mir2
mkdir -m 700 "$M2"
start_dsroute q -v debug "dir:$M2,listen,app=Orders.*" "uds:$T/rt5.sock,listen"
start_fakert q1 --connect "$T/rt5.sock" --name Orders.Api
start_fakert q2 --connect "$T/rt5.sock" --name Billing
check "app=: the runtime it names is mirrored" \
    wait_for 10 eval 'ls "$M2" | grep -q "^dsroute-Orders\.Api-"'
check "... and the other's ProcessInfo was asked too" \
    wait_for 10 has_line "$T/q2.ev" "^command 0x04 0x04 "
is "... but it is not mirrored" "$(ls "$M2" | grep -c Billing)" 0
is "... and no stand-in stands for it" \
    "$(ps -o comm= --ppid "$(pid_of q)" | grep -c Billing)" 0
stop_dsroute q
rm -f "$M2"/*
start_dsroute q3 -v debug "dir:$M2,listen,cmdline=*--name Billing*" \
    "uds:$T/rt5.sock,listen"
check "cmdline=: the runtime whose command line it matches is mirrored" \
    wait_for 10 eval 'ls "$M2" | grep -q "^dsroute-Billing-"'
is "... and not the other" "$(ls "$M2" | grep -c Orders)" 0
stop_dsroute q3
stop q1
stop q2

# The mirror's directory must be safe: not another user's, not writable by
# others without the sticky bit.  Refused at start-up, not runtime by runtime.
mkdir -m 777 "$T/open"
refused "a mirror directory anyone may write to is refused at start-up" \
    "directory $T/open is writable by others and not sticky" \
    "dir:$T/open,listen" "uds:$T/rt2.sock,listen"
is "... and nothing is made there" "$(ls "$T/open" | wc -l)" 0
refused "a mirror on both sides is refused at start-up" \
    "a mirror on both sides: neither has runtimes to show" \
    "dir:$M,listen" "dir:$T,listen"
refused "a mirror directory that does not exist is refused at start-up" \
    "directory $T/none: No such file" \
    "dir:$T/none,listen" "uds:$T/rt2.sock,listen"

# Runtimes coming and going: no stand-in, name or descriptor left behind.
# One killed between two of its connections goes after the backend wait.
start_dsroute g --backend-wait 5 "dir:$M,listen" "uds:$T/rt3.sock,listen"
fds=$(fd_count "$(pid_of g)")
i=0
while [ $i -lt 20 ]; do
	j=0
	while [ $j -lt 10 ]; do
		"$FAKERT" --connect "$T/rt3.sock" --name "churn$j" \
		    >/dev/null 2>&1 &
		echo $! >>"$T/churn.pids"
		j=$((j + 1))
	done
	wait_for 20 eval '[ "$(ls "$M" | wc -l)" -ge 30 ]'
	xargs kill -9 <"$T/churn.pids" 2>/dev/null
	wait_for 20 eval '[ "$(ls "$M" | wc -l)" -eq 0 ]'
	: >"$T/churn.pids"
	i=$((i + 1))
done
is "200 runtimes came and went: every name went with them" \
    "$(ls "$M" | wc -l)" 0
check "... every stand-in was reaped, its grace over" wait_for 5 eval \
    "[ \"\$(ps -o pid= --ppid $(pid_of g) | wc -l)\" -eq 0 ]"
check "... and the router holds the descriptors it held before" \
    wait_for 5 eval "[ \"\$(fd_count $(pid_of g))\" -eq $fds ]"
is "... 200 were mirrored" \
    "$(count_lines "$T/g.err" ' is mirrored as pid ')" 200
stop_dsroute g

# A runtime that dies after a command and before it dials again leaves
# no parked connection to tell of its end: it goes once the backend wait
# is over, with one line, not only when a tool next comes for a runtime.
# One that answers the router's ProcessInfo and exits is such a one.
start_dsroute w -v debug --backend-wait 2 "dir:$M,listen" \
    "uds:$T/rt6.sock,listen"
start_fakert live --connect "$T/rt6.sock" --name Live.Api
LIVE=$(pid_of live)
check "a runtime that dials again after each command is mirrored" \
    wait_for 10 eval '[ -n "$(standin_of w $LIVE)" ]'
start_fakert once --connect "$T/rt6.sock" --name Once.Api --exit-after 1
ONCE=$(pid_of once)
check "one that exits after the router's ProcessInfo is mirrored too" \
    wait_for 10 eval '[ -n "$(standin_of w $ONCE)" ]'
SO=$(standin_of w "$ONCE")
check "... and goes after the backend wait, with one line" \
    wait_for 10 has_line "$T/w.err" \
    "^info: runtime pid $ONCE \(cookie [0-9a-f]+\) went away: it did not dial again within 2000 ms of its last command$"
check "... its names with it" wait_for 5 eval '[ -z "$(stable_of $ONCE)" ]'
check "... and then its stand-in, reaped" \
    wait_for 5 eval "[ -z \"\$(state $SO)\" ]"
sleep 2
is "the runtime that dials again is still mirrored, past the wait" \
    "$(stable_of "$LIVE" | wc -l)" 1
is "... and did not go away" \
    "$(count_lines "$T/w.err" "runtime pid $LIVE .* went away")" 0
stop live
stop_dsroute w

done_testing
