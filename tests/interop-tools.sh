#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The real diagnostic tools as peers of dsroute, each installed from the
# NuGet feed once per build tree.  A tool the feed does not have is
# reported as skipped, with the reason.  What they would do is done with
# the client library (dsclient) instead: counters, a dump, the
# environment.
#
#  - dotnet-trace collect --diagnostic-port <router's socket>,connect,
#    through two routers to a running app's default socket;
#  - dotnet-trace listening (--diagnostic-port PATH): a start-up trace of
#    a suspended app whose router dials a router that dials the tool
#    (app -> uds -> sr -> tcp -> cs -> uds -> dotnet-trace).

. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

TRACE_VERSION=10.0.750501
PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5

# dotnet_trace NAME ARGS...: run dotnet-trace collect; output in
# $T/NAME.out.  Its own runtime opens no diagnostic port.
dotnet_trace() {
	_name=$1
	shift
	DOTNET_EnableDiagnostics=0 timeout 120 "$DSTOOLS/dotnet-trace" \
	    collect --providers "$PROVIDERS" "$@" </dev/null \
	    >"$T/$_name.out" 2>&1
}

have_trace=0
if install_tool dotnet-trace "$TRACE_VERSION"; then
	have_trace=1
	pass "dotnet-trace $TRACE_VERSION installed from the NuGet feed"
else
	skip "dotnet-trace from the NuGet feed" \
	    "dotnet-trace unavailable: $(install_failure dotnet-trace)"
fi
for t in dotnet-counters dotnet-dump dotnet-gcdump dotnet-dsrouter; do
	if install_tool "$t"; then
		# Installed, but nothing here has run it yet: say so.
		skip "$t through dsroute" "$t installed; no scenario uses it yet"
	else
		skip "$t through dsroute" \
		    "$t unavailable: $(install_failure "$t")"
	fi
done

# A running app, its default socket bridged to TCP, and a socket for the
# tools turned back from TCP.  A network peer gets "operate" by default;
# this route also carries a dump and the environment, so it grants "full".
start_app app
wait_for 60 app_ready app || fail "the app starts" "$(cat "$T/app.out")"
wait_for 30 has_socket app
start_dsroute rt "uds:$(app_socket app)" tcp:127.0.0.1:0,policy=full
start_dsroute tl "uds:$T/tool.sock" "tcp:127.0.0.1:$(port_of rt remote),connect"

if [ $have_trace -eq 1 ]; then
	check "dotnet-trace collect --diagnostic-port ...,connect" \
	    dotnet_trace dt --diagnostic-port "$T/tool.sock,connect" \
	    --duration 00:00:00:03 -o "$T/dt.nettrace"
	check "dotnet-trace says the trace completed" \
	    has_line "$T/dt.out" '^Trace completed\.'
	is "its file starts with Nettrace" "$(head -c 8 "$T/dt.nettrace")" \
	    Nettrace
	check "dsclient parses it" client dp parse "$T/dt.nettrace"
	like "with Dsroute-Test and GC events" "$(cat "$T/dp.out")" \
	    "dsroute-test=[1-9][0-9]* gc=[1-9]"
	for r in rt tl; do
		wait_for 30 logged $r 'command=StopTracing '
		wait_for 30 logged $r 'command=CollectTracing[0-9]* '
	done
	like "dotnet-trace's session and stop crossed both routers" \
	    "$(grep -c 'command=\(CollectTracing[0-9]*\|StopTracing\) ' \
	    "$T/rt.err" "$T/tl.err" | tr '\n' ' ')" ":2 .*:2 \$"
else
	skip "dotnet-trace collect through dsroute" "no dotnet-trace"
fi

# The client library for what the missing tools do.
check "counters through two routers (what dotnet-counters does)" \
    client ct --timeout 60 --port "$T/tool.sock,connect" counters --seconds 3
like "System.Runtime counters arrive" "$(cat "$T/ct.out")" \
    "^counters samples=[1-9][0-9]* names=[1-9]"
check "a GC heap counter among them" has_line "$T/ct.out" \
    '^counter gc-heap-size='
check "GenerateCoreDump through two routers (what dotnet-dump does)" \
    client du --timeout 120 --port "$T/tool.sock,connect" dump --type mini \
    --path "$T/app.dmp"
like "the runtime wrote the dump" "$(cat "$T/du.out")" \
    "^dump ok path=$T/app\.dmp bytes=[1-9][0-9]*\$"
rm -f "$T/app.dmp"
check "ProcessEnvironment through two routers" \
    client en --timeout 60 --port "$T/tool.sock,connect" env
check "the whole environment crossed, the app's TMPDIR in it" \
    has_line "$T/en.out" "^TMPDIR=$T/app\.d\$"
like "dsclient read the whole continuation" "$(head -n 1 "$T/en.out")" \
    "^env count=[1-9][0-9]*\$"

stop_dsroute tl
stop_dsroute rt
stop_app app

# Start-up tracing: dotnet-trace listens, the suspended app dials its
# router, and the routers dial on to the tool.
if [ $have_trace -eq 1 ]; then
	bg st env DOTNET_EnableDiagnostics=0 timeout 120 \
	    "$DSTOOLS/dotnet-trace" collect --providers "$PROVIDERS" \
	    --diagnostic-port "$T/dt.sock" --duration 00:00:00:03 \
	    -o "$T/st.nettrace"
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
