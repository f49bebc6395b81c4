#!/bin/sh
# SPDX-License-Identifier: ISC
#
# ProcessInfo answered from the router's record, with the real runtime:
# 100 asks of each version through the router get the very bytes the
# runtime gives on its own default socket, and at most one of each
# reaches it; a runtime paused at start-up answers with the host alone
# as its command line, and once a tool resumed it through the router the
# next ask is the runtime's again, with the app's.  The real dotnet-trace
# ps and dotnet-counters ps list a mirror's stand-ins as before, and
# dotnet-counters, which asks ProcessInfo, collects through the router.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

N=100
rq() {
	printf '444f544e45545f4950435f563100140004%s0000' "$1"
}

# reply ADDR HEX: one request on a connection of its own; the reply's hex.
reply() {
	"$FAKETOOL" --timeout 30 "$1" raw "$2" | sed -n 's/^reply //p'
}

# reached ROUTER CMD: how many CMD sessions the router sent to a runtime.
reached() {
	count_lines "$T/$1.err" \
	    "^info: session [0-9]+: .*command=$2 .*to_runtime=20 "
}

mkdir -m 0700 "$T/w"
start_dsroute rt "uds:$T/rt.sock,listen" "uds:$T/tools.sock,listen"
start_dsroute mir "dir:$T/w,listen" "uds:$T/rtm.sock,listen"
start_app a "DOTNET_DiagnosticPorts=$T/rt.sock,nosuspend;$T/rtm.sock,nosuspend"
wait_for 60 app_ready a || fail "the app starts" "$(cat "$T/a.out")"
wait_for 30 has_socket a
check "its runtime is parked" wait_for 60 parked a rt
OWN=$(app_socket a)

for v in 00:ProcessInfo 04:ProcessInfo2 08:ProcessInfo3; do
	id=${v%%:*}
	name=${v#*:}
	own=$(reply "$OWN" "$(rq "$id")")
	same=0
	i=0
	while [ $i -lt $N ]; do
		[ "$(reply "$T/tools.sock" "$(rq "$id")")" = "$own" ] &&
		    same=$((same + 1))
		i=$((i + 1))
	done
	is "$name: $N asks through the router, each the runtime's own bytes" \
	    "$same" $N
	check "... at most one reached the runtime" \
	    [ "$(reached rt "$name")" -le 1 ]
done
like "the runtime's own answer names its pid and the app" \
    "$(client ci --timeout 60 --port "$T/tools.sock,connect" processinfo &&
    cat "$T/ci.out")" "^pid=$(pid_of a) .*cmdline=.*dsapp"

# dotnet-counters asks ProcessInfo; through the router it works as ever.
if dotnet_tool dotnet-counters; then
	check "dotnet-counters collect through the router" eval \
	    "DOTNET_EnableDiagnostics=0 timeout 120 '$tool_path' collect \
	    --diagnostic-port '$T/tools.sock,connect' \
	    --counters Dsroute.Test --format csv --duration 00:00:00:02 \
	    -o '$T/dc.csv' </dev/null >'$T/dc.out' 2>&1"
	like "... with the app's Meter" "$(cut -d, -f2,3,5 "$T/dc.csv")" \
	    "^Dsroute\.Test,dsapp\.ticks [^,]*,[1-9]"
	counters=$tool_path
else
	skip "dotnet-counters collect through the router" "$why"
	skip "... with the app's Meter" "$why"
	counters=
fi

# dotnet-trace ps and dotnet-counters ps: the same lines before the
# mirror keeps the app's answers and after a hundred asks on its names.
check "the mirror shows the app" \
    wait_for 30 eval '[ -n "$(standin_of mir $(pid_of a))" ]'
SA=$(standin_of mir "$(pid_of a)")
if dotnet_tool dotnet-trace; then
	trace=$tool_path
	# ps_of TOOL: its lines for the app and the stand-in, spaces
	# squeezed: it lists every .NET process of the host, in columns as
	# wide as the widest.
	ps_of() {
		env TMPDIR="$T/w" DOTNET_EnableDiagnostics=0 timeout 60 \
		    "$1" ps </dev/null 2>&1 |
		    grep -E "^ *($(pid_of a)|$SA) " | tr -s ' '
	}
	ps_of "$trace" >"$T/ps1.out"
	[ -n "$counters" ] && ps_of "$counters" >"$T/cps1.out"
	i=0
	while [ $i -lt $N ]; do
		reply "$(plain "$T/w" "$SA")" "$(rq 00)" >/dev/null
		reply "$(plain "$T/w" "$SA")" "$(rq 08)" >/dev/null
		i=$((i + 1))
	done
	like "dotnet-trace ps lists the stand-in" "$(cat "$T/ps1.out")" \
	    "^ *$SA dsapp "
	is "... the same lines after the asks" "$(ps_of "$trace")" \
	    "$(cat "$T/ps1.out")"
	if [ -n "$counters" ]; then
		like "dotnet-counters ps lists it" "$(cat "$T/cps1.out")" \
		    "^ *$SA dsapp "
		is "... the same lines after" "$(ps_of "$counters")" \
		    "$(cat "$T/cps1.out")"
	else
		skip "dotnet-counters ps" "no dotnet-counters"
		skip "dotnet-counters ps" "no dotnet-counters"
	fi
else
	skip "dotnet-trace ps" "$why"
fi
stop_app a

# A runtime paused at start-up: the host alone, then, resumed, the app.
start_dsroute rs "uds:$T/rs.sock,listen" "uds:$T/rs-tools.sock,listen"
start_app p "DOTNET_DiagnosticPorts=$T/rs.sock"
check "the paused runtime dials the router" wait_for 60 parked p rs
wait_for 30 has_socket p
paused=$(reply "$T/rs-tools.sock" "$(rq 00)")
is "paused: its answer again from the record, the same bytes" \
    "$(reply "$T/rs-tools.sock" "$(rq 00)")" "$paused"
is "... as the runtime's own" "$paused" "$(reply "$(app_socket p)" "$(rq 00)")"
check "a tool resumes it through the router" \
    tool --timeout 30 "$T/rs-tools.sock" resume
wait_for 60 app_ready p || fail "Main runs" "$(cat "$T/p.out")"
resumed=$(reply "$T/rs-tools.sock" "$(rq 00)")
check "resumed, the answer is no longer the paused one" \
    [ "$resumed" != "$paused" ]
is "... it is the runtime's own" "$resumed" \
    "$(reply "$(app_socket p)" "$(rq 00)")"
check "... which names the app's assembly" eval "client cp --timeout 60 \
    --port '$T/rs-tools.sock,connect' processinfo &&
    grep -q 'dsapp\.dll' '$T/cp.out'"
stop_app p
stop_dsroute rs
stop_dsroute mir
stop_dsroute rt

done_testing
