#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The mirror with the real runtime and the real tools, as README's "7.
# Many runtimes" tells it, two machines simulated on one:
#
#  - the node: routers the apps dial (DOTNET_DiagnosticPorts), each with
#    a TCP listener for the workstation: node with the default ACL (a
#    network peer gets operate), dnode granting dump= (and dump-dir=);
#    two real apps, dsapp and Orders.Api (dsapp under another assembly
#    name), told apart by the name the runtime gives and by what their
#    traces hold;
#  - the workstation: its own pid and mount namespace, where no process
#    of the node exists; there the routers linked to the nodes (peer=router)
#    mirror the apps in $W and $WD, and the five tools, with only TMPDIR
#    set as usual, find them by the stand-ins' pids and names.
#
# Then a tool with another TMPDIR, which reads the stand-in's; the node
# router restarted, its stand-ins kept; a mirror without a link, on the
# router the apps dial (mir, in the namespace too); an app killed and one
# started on the node; dotnet-trace
# ps again and again while runtimes leave the mirror; an app the
# node finds with dir:, listed over mutual TLS; and a mirror that is pid
# 1 of its namespace, as in a container.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"
. "$top_srcdir/tests/lib/tls.sh"

command -v unshare >/dev/null || skip_all "no unshare(1)"
command -v nsenter >/dev/null || skip_all "no nsenter(1)"
unshare --pid --fork --mount-proc --mount true 2>/dev/null ||
    skip_all "cannot make pid and mount namespaces here"
interop_setup
dotnet_tool dotnet-trace || skip_all "dotnet-trace: $why"
path_trace=$tool_path
tools_or_why counters gcdump dump stack

# unshare ignores SIGTERM while it waits: the namespaces' pid 1 get
# SIGKILL, and every process in them goes with it.
trap 'for n in ns ns1; do [ -f "$T/$n.pid" ] &&
    pkill -KILL -P "$(cat "$T/$n.pid")"; done; _cleanup' EXIT

PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5
W=$T/w
WD=$T/wd
WM=$T/wm
mkdir -m 0700 "$W" "$WD" "$WM" "$T/dumps"

# The workstation: pid 1 of its namespace only waits; routers and tools
# are put in with nsenter.  $NS is its pid 1, seen from here.
bg ns unshare --pid --fork --kill-child --mount-proc --mount sleep infinity
wait_for 10 eval '[ -n "$(pgrep -P "$(pid_of ns)")" ]' ||
    fail "the workstation's namespace is made"
NS=$(pgrep -P "$(pid_of ns)")

# in_ns COMMAND...: run on the workstation.
in_ns() {
	nsenter -t "$NS" -p -m "$@"
}

# start_ws NAME ARGS...: a router on the workstation; $T/NAME.pid is
# nsenter's, outside, which ends with it and gives its status.
start_ws() {
	_name=$1
	shift
	bg "$_name" nsenter -t "$NS" -p -m "$DSROUTE" "$@"
	if ! wait_for 10 has_line "$T/$_name.err" '^info: ready$'; then
		fail "$_name started" "$(cat "$T/$_name.err")"
		return 1
	fi
}

# stop_ws NAME: SIGTERM to the router itself; it must exit 0, cleanly.
stop_ws() {
	kill -TERM "$(pgrep -P "$(pid_of "$1")")" 2>/dev/null
	if wait "$(pid_of "$1")" && ! grep -Eq \
	    'Sanitizer|runtime error:|^==[0-9]+==' "$T/$1.err"; then
		pass "$1 exits cleanly on SIGTERM"
	else
		fail "$1 exits cleanly on SIGTERM" "$(tail -n 5 "$T/$1.err")"
	fi
}

# ws_tool NAME DIR TOOL ARGS...: a real tool on the workstation with
# TMPDIR=DIR; its output in $T/NAME.out.  Its own runtime opens no port.
ws_tool() {
	_name=$1
	_dir=$2
	_tool=$3
	shift 3
	in_ns env TMPDIR="$_dir" DOTNET_EnableDiagnostics=0 timeout 120 \
	    "$(eval echo \$path_$_tool)" "$@" </dev/null >"$T/$_name.out" 2>&1
}

# ps_line DIR NAME PID: dotnet-trace ps with TMPDIR=DIR lists NAME as PID.
ps_line() {
	ws_tool ps "$1" trace ps && grep -Eq "^ *$3 +$2 " "$T/ps.out"
}

# ps_gone DIR NAME: dotnet-trace ps with TMPDIR=DIR has no NAME.
ps_gone() {
	ws_tool ps "$1" trace ps && ! grep -Eq "^ *[0-9]+ +$2 " "$T/ps.out"
}

# start_rt NAME PROGRAM: a real app on the node; it dials the node's two
# routers and the workstation's mir.
start_rt() {
	rm -rf "$T/$1.d"
	mkdir -m 0700 "$T/$1.d"
	bg "$1" env TMPDIR="$T/$1.d" \
	    "DOTNET_DiagnosticPorts=$T/rt.sock,nosuspend;$T/rtd.sock,nosuspend;$T/rtm.sock,nosuspend" \
	    "$2"
}

start_dsroute node -v debug "uds:$T/rt.sock,listen" tcp:127.0.0.1:0
start_dsroute dnode -v debug "uds:$T/rtd.sock,listen" \
    "tcp:127.0.0.1:0,dump=addr:127.0.0.1,dump-dir=$T/dumps"
NODEP=$(port_of node remote)
start_ws ws -v debug --link-poll 0.5 --link-grace 8 "dir:$W,listen" \
    "tcp:127.0.0.1:$NODEP,connect,peer=router"

start_rt a "$DSAPP"
start_rt b "$ORDERS"
A=$(pid_of a)
B=$(pid_of b)
wait_for 60 app_ready a || fail "dsapp starts" "$(cat "$T/a.out" "$T/a.err")"
wait_for 60 app_ready b || fail "Orders.Api starts" "$(cat "$T/b.out" "$T/b.err")"
check "the workstation mirrors dsapp" \
    wait_for 20 eval '[ -n "$(standin_of ws $A)" ]'
check "... and Orders.Api" wait_for 20 eval '[ -n "$(standin_of ws $B)" ]'
SA=$(standin_of ws "$A")
SB=$(standin_of ws "$B")
check "no process of the node exists on the workstation" in_ns sh -c \
    "! [ -e /proc/$A ] && ! [ -e /proc/$B ] && ! [ -e /proc/$(pid_of node) ]"
is "... where the stand-ins are pids of its own" \
    "$(in_ns cat "/proc/$SA/comm" "/proc/$SB/comm" | tr '\n' ' ')" \
    "dsapp Orders.Api "

# dotnet-trace ps: every app, by its name and its stand-in's pid.
check "dotnet-trace ps lists dsapp as its stand-in's pid ($SA)" \
    ps_line "$W" dsapp "$SA"
check "... and Orders.Api as its stand-in's ($SB)" grep -Eq \
    "^ *$SB +Orders\.Api " "$T/ps.out"
is "... and nothing else" "$(grep -Ec '^ *[0-9]+ ' "$T/ps.out")" 2

# dotnet-trace collect -p, -n: the app's events, not the other's.
check "dotnet-trace collect -p $SB (Orders.Api's stand-in)" ws_tool dtp "$W" \
    trace collect -p "$SB" --providers "$PROVIDERS" \
    --duration 00:00:00:03 -o "$T/dtp.nettrace"
check "... says the trace completed" has_line "$T/dtp.out" '^Trace completed\.'
is "... its trace comes from Orders.Api's process" \
    "$(trace_pid "$T/dtp.nettrace")" "$B"
is "... whose rundown names Orders.Api.dll and not dsapp.dll" \
    "$(modules "$T/dtp.nettrace")" "/Orders.Api.dll "
check "... dsclient parses it" client dpp parse "$T/dtp.nettrace"
like "... it holds the app's Dsroute-Test and GC events" "$(cat "$T/dpp.out")" \
    "dsroute-test=[1-9][0-9]* gc=[1-9]"

check "dotnet-trace collect -n dsapp" ws_tool dtn "$W" trace collect \
    -n dsapp --providers "$PROVIDERS" --duration 00:00:00:03 \
    -o "$T/dtn.nettrace"
is "... its trace comes from dsapp's process" \
    "$(trace_pid "$T/dtn.nettrace")" "$A"
is "... whose rundown names dsapp.dll and not Orders.Api.dll" \
    "$(modules "$T/dtn.nettrace")" "/dsapp.dll "
check "... dsclient parses it" client dpn parse "$T/dtn.nettrace"
like "... it holds the app's Dsroute-Test events" "$(cat "$T/dpn.out")" \
    "dsroute-test=[1-9]"

# The other mirrors only now: each stand-in's TMPDIR is its mirror's, and
# dotnet-trace finds a process by its TMPDIR wherever it is, so with
# three mirrors of dsapp, -n dsapp would name three processes.
start_ws wsd -v debug --link-poll 0.5 --link-grace 8 "dir:$WD,listen" \
    "tcp:127.0.0.1:$(port_of dnode remote),connect,peer=router"
start_ws mir -v debug "dir:$WM,listen" "uds:$T/rtm.sock,listen"

# dotnet-counters: --duration is a TimeSpan, dd:hh:mm:ss ("3" is three
# days, with or without a router).
if have_tool counters; then
	check "dotnet-counters collect -p $SA, csv, 3 s" ws_tool dc "$W" \
	    counters collect -p "$SA" --format csv \
	    --duration 00:00:00:03 -o "$T/dc.csv"
	like "... System.Runtime's counters are in its file" \
	    "$(cut -d, -f2,3 "$T/dc.csv" 2>&1)" \
	    "^System\.Runtime,dotnet\.gc\.heap\.total_allocated "
fi

# dotnet-gcdump: the heap of the app asked for.
if have_tool gcdump; then
	check "dotnet-gcdump collect -p $SB" ws_tool dg "$W" gcdump collect \
	    -p "$SB" -o "$T/dg.gcdump"
	check "... dotnet-gcdump report reads it" ws_tool dgr "$W" gcdump \
	    report "$T/dg.gcdump"
	like "... it names Orders.Api's 64 DsApp.Retained" "$(cat "$T/dgr.out")" \
	    "[0-9] +64 +DsApp\.Retained +\[Orders\.Api\.dll\]"
	check "... and nothing of dsapp.dll" eval "! grep -q 'dsapp\.dll' '$T/dgr.out'"
fi

# dotnet-dump: the node's default ACL refuses; a node granting dump=
# writes it, on its side.
if have_tool dump; then
	if ws_tool dd "$W" dump collect -p "$SA" --type Mini \
	    -o "$T/dumps/refused.core"; then
		fail "dotnet-dump collect -p is refused by the node's default ACL" \
		    "$(cat "$T/dd.out")"
	else
		pass "dotnet-dump collect -p is refused by the node's default ACL"
	fi
	check "... the tool says: Write dump failed - HRESULT: 0x80070005." \
	    has_line "$T/dd.out" '^Write dump failed - HRESULT: 0x80070005\.$'
	check "... the node's audit line says why" wait_for 10 logged node \
	    'audit: .*command=GenerateCoreDump3 decision=deny role=operate role_from="default: a network peer"'
	check "... the workstation's router says a router on the way refused it" \
	    wait_for 10 logged ws 'answered GenerateCoreDump3 with error 0x80070005 \(access denied\): a router on the way refused it'
	check "... and nothing was written" test ! -e "$T/dumps/refused.core"

	check "dnode's runtime dsapp is mirrored in $WD" \
	    wait_for 20 eval '[ -n "$(standin_of wsd $A)" ]'
	DA=$(standin_of wsd "$A")
	check "dotnet-dump collect -p through a node that grants dump=" \
	    ws_tool ddg "$WD" dump collect -p "$DA" --type Mini \
	    -o "$T/dumps/a.core"
	check "... says Complete" has_line "$T/ddg.out" '^Complete$'
	is "... the app wrote the core file, on the node, mode 0600" \
	    "$(stat -c %a "$T/dumps/a.core" 2>&1)" 600
	check "... the node's audit line allows it" wait_for 10 logged dnode \
	    'audit: .*command=GenerateCoreDump3 decision=allow role=dump role_from="dump=addr:127\.0\.0\.1"'
	rm -f "$T/dumps/a.core"
fi

# dotnet-stack: the managed stacks of the app asked for.
if have_tool stack; then
	check "dotnet-stack report -p $SA" ws_tool ds "$W" stack report -p "$SA"
	like "... prints dsapp's Main" "$(cat "$T/ds.out")" \
	    "dsapp!DsApp\.Program\.Main\("
	check "... and nothing of Orders.Api" eval "! grep -q 'Orders' '$T/ds.out'"
fi

# Without a link: the mirror on the router the apps dial.
check "mir mirrors dsapp" wait_for 20 eval '[ -n "$(standin_of mir $A)" ]'
check "... and Orders.Api" wait_for 20 eval '[ -n "$(standin_of mir $B)" ]'
MA=$(standin_of mir "$A")
MB=$(standin_of mir "$B")
check "no link: dotnet-trace ps lists dsapp as its stand-in's pid ($MA)" \
    ps_line "$WM" dsapp "$MA"
check "... and Orders.Api as its stand-in's ($MB)" grep -Eq \
    "^ *$MB +Orders\.Api " "$T/ps.out"
check "no link: dotnet-trace collect -p $MB" ws_tool dtm "$WM" trace \
    collect -p "$MB" --providers "$PROVIDERS" --duration 00:00:00:02 \
    -o "$T/dtm.nettrace"
is "... its trace comes from Orders.Api's process" \
    "$(trace_pid "$T/dtm.nettrace")" "$B"
check "... with its events" client dpm parse "$T/dtm.nettrace"
like "... (dsclient)" "$(cat "$T/dpm.out")" "dsroute-test=[1-9]"

# A tool whose TMPDIR is another: it reads the stand-in's, the mirror's
# directory, from /proc/PID/environ, and finds its socket there.
mkdir -m 0700 "$T/elsewhere"
check "dotnet-trace collect -p $SB with TMPDIR another directory" \
    ws_tool dte "$T/elsewhere" trace collect -p "$SB" \
    --providers "$PROVIDERS" --duration 00:00:00:02 -o "$T/dte.nettrace"
is "... its trace comes from Orders.Api's process" \
    "$(trace_pid "$T/dte.nettrace")" "$B"
is "... the stand-in's environment is its TMPDIR alone" \
    "$(in_ns sh -c "tr '\\0' '\\n' </proc/$SB/environ" | grep -v '^$')" \
    "TMPDIR=$W"

# The node router restarts: it lists nothing until its apps dial it
# again.  The workstation keeps the stand-ins (--link-grace), so a pid
# noted before still reaches its app.
stop_dsroute node
check "the workstation cannot list the node while it is down" wait_for 10 \
    has_line "$T/ws.err" "cannot list the linked router's runtimes"
start_dsroute node -v debug "uds:$T/rt.sock,listen" "tcp:127.0.0.1:$NODEP"
check "the apps dial the restarted node" wait_for 30 eval \
    "parked a node && parked b node"
check "the workstation lists Orders.Api again, under the same stand-in" \
    wait_for 20 has_line "$T/ws.err" \
    "runtime pid $B .* is listed by tcp:127\.0\.0\.1:[0-9]+ again; it keeps its record and its stand-in"
is "... mirrored once, never replaced" \
    "$(count_lines "$T/ws.err" "runtime pid $B .* is mirrored as pid")" 1
check "dotnet-trace collect -p $SB, the pid from before the restart" \
    ws_tool dtr "$W" trace collect -p "$SB" --providers "$PROVIDERS" \
    --duration 00:00:00:02 -o "$T/dtr.nettrace"
is "... its trace comes from Orders.Api's process" \
    "$(trace_pid "$T/dtr.nettrace")" "$B"

# An app killed on the node leaves the workstation after --link-grace; a
# new one comes.
stop a KILL 2>/dev/null	# no "Killed" from the shell
check "dsapp killed on the node: gone from dotnet-trace ps within 20 s" \
    wait_for 20 ps_gone "$W" dsapp
check "... Orders.Api stays" grep -Eq "^ *$SB +Orders\.Api " "$T/ps.out"
check "... and its stand-in ends" wait_for 10 in_ns sh -c "! [ -e /proc/$SA ]"
check "... and without a link too" wait_for 10 ps_gone "$WM" dsapp

# dotnet-trace ps lists the names, then reads each one's process, and
# fails whole (InvalidOperationException, exit 1) on a process that went
# in between: a stand-in must outlive its names.  Runtimes come and go on
# mir while it runs again and again; they are fakes, since dotnet-trace
# ps never speaks to them.
: >"$T/psloop.bad"
(
	i=1
	while [ $i -le 150 ]; do
		"$FAKERT" --connect "$T/rtm.sock" --name Churn >/dev/null 2>&1 &
		p=$!
		wait_for 10 eval "[ \$(count_lines '$T/mir.err' \
		    '\(Churn\) is mirrored as pid') -ge $i ]"
		kill -KILL $p
		wait $p 2>/dev/null
		i=$((i + 1))
	done
) &
churn=$!
runs=0
while kill -0 $churn 2>/dev/null; do
	ws_tool psloop "$WM" trace ps || cat "$T/psloop.out" >>"$T/psloop.bad"
	runs=$((runs + 1))
done
wait $churn
is "dotnet-trace ps, $runs times while 150 runtimes went: it never failed" \
    "$(head -n 3 "$T/psloop.bad")" ""
is "... all 150 were mirrored" \
    "$(count_lines "$T/mir.err" '\(Churn\) is mirrored as pid')" 150
# One killed between two of its connections (after a command, before it
# dialled again) goes only once the backend wait (30 s) is over.
check "... and their stand-ins all went, their grace over" wait_for 40 \
    eval '[ -z "$(in_ns pgrep -x Churn)" ]'
start_rt c "$DSAPP"
NEWC=$(pid_of c)
wait_for 60 app_ready c || fail "a new dsapp starts" "$(cat "$T/c.out")"
check "a new app on the node is mirrored" \
    wait_for 20 eval '[ -n "$(standin_of ws $NEWC)" ]'
SC=$(standin_of ws "$NEWC")
check "... and dotnet-trace ps lists it, as its stand-in's pid ($SC)" \
    wait_for 10 ps_line "$W" dsapp "$SC"

# An app the node finds by its default socket (dir:), listed to the
# workstation over mutual TLS.
make_base_certs
start_app f
wait_for 60 app_ready f || fail "a dsapp for dir: starts" "$(cat "$T/f.out")"
F=$(pid_of f)
start_dsroute tnode -v debug "dir:$T/f.d,connect" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,allow-cn=client1,operate=cn:client1"
WT=$T/wt
mkdir -m 0700 "$WT"
start_ws wst -v debug --link-poll 0.5 "dir:$WT,listen" \
    "tls:127.0.0.1:$(port_of tnode remote),connect,peer=router,ca=$C/ca.pem,$(cert client1)"
check "an app found by dir: on the node is mirrored over TLS" \
    wait_for 20 eval '[ -n "$(standin_of wst $F)" ]'
SF=$(standin_of wst "$F")
check "... dotnet-trace ps lists it as its stand-in's pid ($SF)" \
    wait_for 10 ps_line "$WT" dsapp "$SF"
check "... dotnet-trace collect -p $SF" ws_tool dtf "$WT" trace collect \
    -p "$SF" --providers "$PROVIDERS" --duration 00:00:00:02 \
    -o "$T/dtf.nettrace"
is "... its trace comes from that app's process" \
    "$(trace_pid "$T/dtf.nettrace")" "$F"
check "... with its events" client dpf parse "$T/dtf.nettrace"
like "... (dsclient)" "$(cat "$T/dpf.out")" "dsroute-test=[1-9]"
check "... the node dialled the app's socket, over the TLS listing" \
    wait_for 10 has_line "$T/tnode.err" \
    "command=CollectTracing[0-9]* tool=tls:.* runtime=dir:$T/f\.d.* runtime_pid=$F "
stop_ws wst
stop_dsroute tnode
stop_app f

stop_app b
stop_app c
check "the workstation's mirror empties when the apps end" \
    wait_for 10 eval '[ -z "$(ls "$W")" ]'
stop_ws mir
stop_ws wsd
stop_ws ws
is "nothing is left in the mirrors" "$(ls "$W" "$WD" "$WM" | grep -c socket)" 0
stop_dsroute dnode
stop_dsroute node

# A mirror that is pid 1 of its namespace, as dsroute is in a container
# (Dockerfile's ENTRYPOINT): its stand-ins have a parent of pid 1.
mkdir -m 0700 "$T/w1"
bg ns1 unshare --pid --fork --kill-child --mount-proc --mount "$DSROUTE" \
    -v debug "dir:$T/w1,listen" "uds:$T/rt1.sock,listen"
wait_for 10 has_line "$T/ns1.err" '^info: ready$' || fail "pid 1 mirror starts"
start_fakert f --connect "$T/rt1.sock" --name Pid1.App
wait_for 10 eval '[ -n "$(standin_of ns1 $(pid_of f))" ]'
N1=$(pgrep -P "$(pid_of ns1)")
S1=$(standin_of ns1 "$(pid_of f)")
DOTNET_EnableDiagnostics=0 nsenter -t "$N1" -p -m env TMPDIR="$T/w1" \
    timeout 60 "$path_trace" ps </dev/null >"$T/ps1.out" 2>&1
like "a mirror that is pid 1 of its namespace: ps lists its app" \
    "$(cat "$T/ps1.out")" "^ *$S1 +Pid1\.App "
is "... and the router said nothing of a stand-in gone wrong" \
    "$(count_lines "$T/ns1.err" '^crit:|DSROUTE_STANDIN|usage')" 0
pkill -KILL -P "$(pid_of ns1)"
wait "$(pid_of ns1)" 2>/dev/null
stop f

pkill -KILL -P "$(pid_of ns)"
wait "$(pid_of ns)" 2>/dev/null

done_testing
