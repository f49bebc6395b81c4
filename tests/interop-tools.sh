#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The five real diagnostic tools, at one pinned version, through dsroute
# to a real app, each judged on what it made: dotnet-trace's trace holds
# the app's events, dotnet-counters' file names System.Runtime and the
# app's own Meter, dotnet-gcdump's report names the app's type,
# dotnet-dump's core file shows the app's Main to the analyzer, and
# dotnet-stack prints Main's frame.  The client library
# (dsclient) does ProcessInfo, the environment and an EventPipe session.
#
#  - two routers, as a node and a workstation: app socket -> rt (tcp,
#    policy=full, dump-dir=) -> tl (uds) -> the tools, --diagnostic-port;
#  - several tools at once on one runtime, and tools killed mid-trace: the
#    runtime keeps at most 64 EventPipe sessions, so a leak shows;
#  - the default policy on the node: what a refused user sees, and the
#    workstation's router saying that the far side refused;
#  - the dotnet-dsrouter mode, where -p names the router: dotnet-stack,
#    and dotnet-gcdump's trap when the tool's TMPDIR is not the router's;
#  - a start-up trace of a suspended app: dotnet-trace listens.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5

# counters_alone NAME ARGS...: dotnet-counters collect the app's ticks
# for 2 s into $T/NAME.csv; false while the runtime still runs an earlier
# metrics session (the tool exits 0 then, and says so).
counters_alone() {
	_name=$1
	shift
	run_tool "$_name" counters collect --diagnostic-port "$PORT" "$@" \
	    --counters Dsroute.Test --format csv --duration 00:00:00:02 \
	    -o "$T/$_name.csv"
	! grep -q 'Another metrics collection session' "$T/$_name.out"
}

# have TOOL: the tool installed.
have() {
	[ -n "$(eval echo \${path_$1:-})" ]
}

for t in trace counters gcdump dump stack; do
	if dotnet_tool "dotnet-$t"; then
		eval "path_$t=\$tool_path"
		pass "dotnet-$t $DOTNET_TOOLS_VERSION installed"
	else
		skip "dotnet-$t $DOTNET_TOOLS_VERSION installed" "$why"
	fi
done

start_app app
wait_for 60 app_ready app || fail "the app starts" "$(cat "$T/app.out")"
wait_for 30 has_socket app
mkdir -m 0700 "$T/dumps"
start_dsroute rt "uds:$(app_socket app)" \
    "tcp:127.0.0.1:0,policy=full,dump-dir=$T/dumps"
start_dsroute tl "uds:$T/tool.sock" \
    "tcp:127.0.0.1:$(port_of rt remote),connect"
PORT=$T/tool.sock,connect
rt_idle_fds=$(fd_count "$(pid_of rt)")

# rt_idle: the node holds no session: its descriptors are back to those
# it had before any tool came.
rt_idle() {
	[ "$(fd_count "$(pid_of rt)")" -le "$rt_idle_fds" ]
}

# dotnet-trace: the app's own events and the runtime's GCs.
if have trace; then
	check "dotnet-trace collect through two routers" run_tool dt trace \
	    collect --providers "$PROVIDERS" --diagnostic-port "$PORT" \
	    --duration 00:00:00:03 -o "$T/dt.nettrace"
	check "dotnet-trace says the trace completed" \
	    has_line "$T/dt.out" '^Trace completed\.'
	judge_trace "dotnet-trace" "$T/dt.nettrace"
	for r in rt tl; do
		wait_for 30 logged $r 'command=StopTracing '
	done
	like "its session and its stop crossed both routers" \
	    "$(grep -c 'command=\(CollectTracing[0-9]*\|StopTracing\) ' \
	    "$T/rt.err" "$T/tl.err" | tr '\n' ' ')" ":2 .*:2 \$"
else
	skip "dotnet-trace through two routers" "no dotnet-trace"
fi

# dotnet-counters: System.Runtime's counters and the app's Meter.
if have counters; then
	check "dotnet-counters collect through two routers" run_tool dc \
	    counters collect --diagnostic-port "$PORT" \
	    --counters System.Runtime,Dsroute.Test --format csv \
	    --duration 00:00:00:03 -o "$T/dc.csv"
	judge_counters "dotnet-counters" "$T/dc.csv"
else
	skip "dotnet-counters through two routers" "no dotnet-counters"
fi

# dotnet-gcdump: the heap, with the app's own objects.
if have gcdump; then
	check "dotnet-gcdump collect through two routers" run_tool dg gcdump \
	    collect --diagnostic-port "$PORT" -o "$T/dg.gcdump"
	judge_gcdump "dotnet-gcdump" "$T/dg.gcdump" dsapp.dll
	# gcdump tries CollectTracing6 (for .NET 11's block buffering)
	# first; a runtime that does not know it says so, and it falls back.
	if wait_for 10 logged tl \
	    'command=CollectTracing6 .*answer=error:0x80131385'; then
		check "an unknown newer command is no news: no info line" \
		    eval "! logged tl 'answered CollectTracing6'"
	else
		skip "an unknown newer command is no news: no info line" \
		    "this gcdump sent no CollectTracing6 the runtime refused"
	fi
else
	skip "dotnet-gcdump through two routers" "no dotnet-gcdump"
fi

# dotnet-dump: a core file the analyzer reads, where dump-dir= lets it.
if have dump; then
	check "dotnet-dump collect through two routers" run_tool dd dump \
	    collect --diagnostic-port "$PORT" --type Mini -o "$T/dumps/app.core"
	check "dotnet-dump says Complete" has_line "$T/dd.out" '^Complete$'
	is "the runtime wrote the core file, mode 0600" \
	    "$(stat -c %a "$T/dumps/app.core" 2>&1)" 600
	check "dotnet-dump analyze reads it" run_tool dda dump analyze \
	    "$T/dumps/app.core" -c "clrstack -all" -c exit
	like "the analyzer shows the app's Main" "$(cat "$T/dda.out")" \
	    "DsApp\.Program\.Main\("
	rm -f "$T/dumps/app.core"
	# -o is made absolute where the tool runs, then written by the runtime.
	mkdir "$T/dumps/cwd"
	check "a relative -o" sh -c "cd '$T/dumps/cwd' && DOTNET_EnableDiagnostics=0 \
	    timeout 120 '$path_dump' collect --diagnostic-port '$PORT' \
	    --type Mini -o rel.core </dev/null >'$T/ddr.out' 2>&1"
	check "... is the tool's working directory's" \
	    test -s "$T/dumps/cwd/rel.core"
	rm -f "$T/dumps/cwd/rel.core"
	# Outside dump-dir=: the node refuses, the workstation says so.
	if run_tool ddx dump collect --diagnostic-port "$PORT" --type Mini \
	    -o "$T/elsewhere.core"; then
		fail "a dump outside dump-dir= is refused" "$(cat "$T/ddx.out")"
	else
		pass "a dump outside dump-dir= is refused"
	fi
	check "dotnet-dump: Write dump failed - HRESULT: 0x80070005." \
	    has_line "$T/ddx.out" '^Write dump failed - HRESULT: 0x80070005\.$'
	check "... and nothing was written" test ! -e "$T/elsewhere.core"
	check "the node's audit line says why" wait_for 10 logged rt \
	    'command=GenerateCoreDump3 decision=deny .*rule="dump-dir" reason="the dump path is outside the dump directory"'
	check "the workstation's router says the far side refused it" \
	    wait_for 10 logged tl 'answered GenerateCoreDump3 with error 0x80070005 \(access denied\): a router on the way refused it'
	check "... and ends the session with answer=error:0x80070005" \
	    wait_for 10 logged tl 'command=GenerateCoreDump3 .* answer=error:0x80070005 decision=allow '
else
	skip "dotnet-dump through two routers" "no dotnet-dump"
fi

# The client library: ProcessInfo, the environment, an EventPipe session.
check "ProcessInfo through two routers" \
    client pi --timeout 60 --port "$PORT" processinfo
like "it names the app" "$(cat "$T/pi.out")" "^pid=$(pid_of app) "
check "ProcessEnvironment through two routers" \
    client en --timeout 60 --port "$PORT" env
check "the whole environment crossed, the app's TMPDIR in it" \
    has_line "$T/en.out" "^TMPDIR=$T/app\.d\$"
check "an EventPipe session through two routers" \
    client tr --timeout 60 --port "$PORT" trace --seconds 2 \
    --out "$T/tr.nettrace"
check "dsclient parses its trace" client trp parse "$T/tr.nettrace"
like "with the app's events" "$(cat "$T/trp.out")" "dsroute-test=[1-9]"
check "the tool's router logged answer=ok for them" \
    logged tl 'command=ProcessEnvironment .* answer=ok decision=allow '

# Several tools at once on one runtime.
if have trace && have counters && have gcdump; then
	bg at1 run_tool at1t trace collect --providers "$PROVIDERS" \
	    --diagnostic-port "$PORT" --duration 00:00:00:04 \
	    -o "$T/at1.nettrace"
	bg at2 run_tool at2t counters collect --diagnostic-port "$PORT" \
	    --counters Dsroute.Test --format csv --duration 00:00:00:04 \
	    -o "$T/at2.csv"
	bg at3 run_tool at3t gcdump collect --diagnostic-port "$PORT" \
	    -o "$T/at3.gcdump"
	bg at4 client at4c --timeout 60 --port "$PORT" processinfo
	for j in at1 at2 at3 at4; do
		if wait "$(pid_of $j)"; then
			pass "at once: $j exits 0"
		else
			fail "at once: $j exits 0" "$(cat "$T/${j}"[tc].*)"
		fi
	done
	check "at once: the trace holds the app's events" \
	    client at1p parse "$T/at1.nettrace"
	like "... (dsclient)" "$(cat "$T/at1p.out")" "dsroute-test=[1-9]"
	like "at once: the counters have the app's ticks" \
	    "$(cut -d, -f2,3 "$T/at2.csv")" "^Dsroute\.Test,dsapp\.ticks "
	check "at once: the gcdump was written" test -s "$T/at3.gcdump"
else
	skip "several tools at once on one runtime" \
	    "dotnet-trace, -counters and -gcdump are not all here"
fi

# Tools killed mid-trace must not leak the runtime's EventPipe sessions:
# it keeps 64, and a 65th fails with 0x80004005.
killed=0
if have trace; then
	for i in 1 2 3; do
		bg kt$i env DOTNET_EnableDiagnostics=0 "$path_trace" collect \
		    --providers "$PROVIDERS" --diagnostic-port "$PORT" \
		    --duration 00:00:05:00 -o "$T/kt$i.nettrace"
		if wait_for 60 test -s "$T/kt$i.nettrace"; then
			kill -9 "$(pid_of kt$i)"
			killed=$((killed + 1))
		fi
	done
	is "three dotnet-traces killed with SIGKILL mid-trace" $killed 3
fi
# Seventy more hang up after 4 KiB, ten at a time: a session ends when
# the runtime next writes to a closed peer, a second or two later, with
# or without a router, so each ten is let go before the next.
check "the node lets the killed ones go" wait_for 30 rt_idle
n=0
for batch in 1 2 3 4 5 6 7; do
	for i in 1 2 3 4 5 6 7 8 9 10; do
		"$FAKETOOL" --timeout 20 "$PORT" collect \
		    --hangup-after-bytes 4096 >"$T/hang$i.out" 2>&1 &
		echo $! >"$T/hang$i.pid"
	done
	for i in 1 2 3 4 5 6 7 8 9 10; do
		wait "$(cat "$T/hang$i.pid")" && n=$((n + 1))
	done
	wait_for 30 rt_idle || break
done
is "70 more EventPipe clients hang up mid-stream" $n 70
check "the node closed every one of their sessions" rt_idle
if have trace; then
	check "a new dotnet-trace still gets a session" run_tool dt2 trace \
	    collect --providers "$PROVIDERS" --diagnostic-port "$PORT" \
	    --duration 00:00:00:02 -o "$T/dt2.nettrace"
	check "... and its trace" has_line "$T/dt2.out" '^Trace completed\.'
fi
check "no router saw the runtime refuse a session (0x80004005)" eval \
    "! grep -q 'error 0x80004005' '$T/rt.err' '$T/tl.err'"

stop_dsroute tl
stop_dsroute rt

# The node's default policy: network peers may trace, not dump.
start_dsroute rt "uds:$(app_socket app)" tcp:127.0.0.1:0
start_dsroute tl "uds:$T/tool.sock" \
    "tcp:127.0.0.1:$(port_of rt remote),connect"
if have dump; then
	if run_tool dn dump collect --diagnostic-port "$PORT" --type Mini \
	    -o "$T/dumps/denied.core"; then
		fail "default policy: dotnet-dump is refused" "$(cat "$T/dn.out")"
	else
		pass "default policy: dotnet-dump is refused"
	fi
	check "... with: Write dump failed - HRESULT: 0x80070005." \
	    has_line "$T/dn.out" '^Write dump failed - HRESULT: 0x80070005\.$'
fi
if client ev --timeout 60 --port "$PORT" env; then
	fail "default policy: the environment is refused" "$(cat "$T/ev.out")"
else
	pass "default policy: the environment is refused"
fi
like "... the library says GetProcessEnvironmentAsync failed" \
    "$(cat "$T/ev.err")" "GetProcessEnvironmentAsync failed - HRESULT: 0x80070005"
check "the workstation's router says the far side refused it" \
    wait_for 10 logged tl 'answered ProcessEnvironment with error 0x80070005'
if have counters; then
	check "default policy: dotnet-counters still works" \
	    wait_for 30 counters_alone dcd
	like "... with the app's ticks" "$(cut -d, -f2,3 "$T/dcd.csv" 2>&1)" \
	    "^Dsroute\.Test,dsapp\.ticks "
fi
stop_dsroute tl
stop_dsroute rt

# policy=observe: the tools' default commands work, their ResumeRuntime
# answered by the router and sent to no runtime.
start_dsroute rt -v debug "uds:$(app_socket app)" tcp:127.0.0.1:0,policy=observe
start_dsroute tl "uds:$T/tool.sock" \
    "tcp:127.0.0.1:$(port_of rt remote),connect"
if have counters; then
	wait_for 30 counters_alone ob
	like "observe: plain dotnet-counters collect gets the ticks" \
	    "$(cut -d, -f2,3 "$T/ob.csv" 2>&1)" "^Dsroute\.Test,dsapp\.ticks "
	check "... its ResumeRuntime answered by the router, sent on to none" \
	    wait_for 10 logged rt 'command=ResumeRuntime decision=deny role=observe .*reason="observe resumes nothing'
fi
stop_dsroute tl
stop_dsroute rt

# The dotnet-dsrouter mode: -p names the router, found in its TMPDIR.
start_dsroute rt "uds:$(app_socket app)" tcp:127.0.0.1:0,policy=full
mkdir -m 0700 "$T/ws.d" "$T/other.d"
bg ws env TMPDIR="$T/ws.d" "$DSROUTE" server-client \
    -tcpc "127.0.0.1:$(port_of rt remote)"
check "dsroute server-client starts" wait_for 10 has_line "$T/ws.err" \
    '^info: ready$'
wsp=$(pid_of ws)
if have stack; then
	check "dotnet-stack report -p <router's pid>" env TMPDIR="$T/ws.d" \
	    sh -c "DOTNET_EnableDiagnostics=0 timeout 120 '$path_stack' \
	    report -p $wsp </dev/null >'$T/ds.out' 2>&1"
	like "it prints the app's Main" "$(cat "$T/ds.out")" \
	    "dsapp!DsApp\.Program\.Main\("
else
	skip "dotnet-stack through the dotnet-dsrouter mode" "no dotnet-stack"
fi
if have gcdump; then
	check "dotnet-gcdump collect -p <router's pid>, the router's TMPDIR" \
	    env TMPDIR="$T/ws.d" sh -c "DOTNET_EnableDiagnostics=0 timeout 120 \
	    '$path_gcdump' collect -p $wsp -o '$T/wg.gcdump' </dev/null \
	    >'$T/wg.out' 2>&1"
	check "... its report names DsApp.Retained" run_tool wgr gcdump report \
	    "$T/wg.gcdump"
	like "... (64 of them)" "$(cat "$T/wgr.out")" "64 +DsApp\.Retained"
	# As documented: another TMPDIR, and gcdump keeps only the events
	# of the router's pid, which sends none.
	env TMPDIR="$T/other.d" sh -c "DOTNET_EnableDiagnostics=0 timeout 120 \
	    '$path_gcdump' collect -p $wsp -o '$T/wo.gcdump' </dev/null \
	    >'$T/wo.out' 2>&1"
	check "another TMPDIR: gcdump collects nothing, as documented" \
	    has_line "$T/wo.out" 'Failed to collect gcdump'
fi
stop ws
stop_dsroute rt
stop_app app

# Start-up tracing: dotnet-trace listens, the suspended app dials its
# router, and the routers dial on to the tool.
if have trace; then
	bg st env DOTNET_EnableDiagnostics=0 timeout 120 "$path_trace" \
	    collect --providers "$PROVIDERS" --diagnostic-port "$T/dt.sock" \
	    --duration 00:00:00:03 -o "$T/st.nettrace"
	check "dotnet-trace listens" wait_for 60 test -S "$T/dt.sock"
	# The tool listens (peer=tool); the app's router dials in from
	# this host and may advertise the app there.
	start_dsroute cs "uds:$T/dt.sock,connect,peer=tool" \
	    tcp:127.0.0.1:0,advertise=addr:127.0.0.1
	check "the tools' router is in client-server mode" has_line \
	    "$T/cs.err" '^info: route main: client-server$'
	start_dsroute sr "uds:$T/rt.sock" \
	    "tcp:127.0.0.1:$(port_of cs remote),connect,peer=tool"
	start_app sus "DOTNET_DiagnosticPorts=$T/rt.sock"
	if wait_exit st 90 && wait "$(pid_of st)"; then
		pass "dotnet-trace traced the app from its start"
	else
		fail "dotnet-trace traced the app from its start" \
		    "$(cat "$T/st.out" "$T/st.err")"
	fi
	check "dotnet-trace resumed the app" wait_for 30 app_ready sus
	is "the file starts with Nettrace" "$(head -c 8 "$T/st.nettrace")" \
	    Nettrace
	check "dsclient parses it" client sp parse "$T/st.nettrace"
	like "it holds the app's first tick: the trace began before Main" \
	    "$(cat "$T/sp.out")" "gc=[1-9][0-9]* first-tick=1\$"
	for r in cs sr; do
		wait_for 30 logged $r "command=CollectTracing[0-9]* .*runtime_pid=$(pid_of sus) "
	done
	like "the advertise, the session and the resume crossed both routers" \
	    "$(grep -c 'command=\(CollectTracing[0-9]*\|ResumeRuntime\) .*runtime_pid='"$(pid_of sus)" \
	    "$T/cs.err" "$T/sr.err" | tr '\n' ' ')" ":2 .*:2 \$"
	stop_app sus
	stop_dsroute sr
	stop_dsroute cs
else
	skip "dotnet-trace start-up trace through dsroute" "no dotnet-trace"
fi

done_testing
