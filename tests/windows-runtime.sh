#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute.exe with the real win-x64 runtime under wine, and the real
# Linux tools on the far side (tests/windows/README.md):
#
#	dotnet-trace -> uds -> dsroute (Linux) -> tcp -> dsroute.exe -> pipe
#	    -> dsapp under wine (launch.exe)
#
#  - dsapp's own \\.\pipe\dotnet-diagnostic-<pid>, bridged to TCP by
#    dsroute.exe pipe:dotnet-diagnostic-<pid> tcp:127.0.0.1:0 (client-
#    server): ProcessInfo says Windows, dotnet-trace records the app's
#    EventSource, and the trace names the runtime's Windows pid;
#    dotnet-counters and dotnet-stack through the same chain;
#  - a suspended start, DOTNET_DiagnosticPorts=<pipe>,suspend: the runtime
#    dials dsroute.exe's pipe (pipe:NAME,listen, server-server), waits,
#    and the Linux dotnet-trace starts a session and resumes it: the trace
#    holds the app's first tick.
#
# The Linux interop helpers (dsclient) and the pinned tools come the way
# the interop scenarios get them; without dotnet, dotnet-trace, dsroute.exe
# or wine the scenario skips.  The app's console lines end in CRLF.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

# Before wine.sh: tests/windows/setup.sh publishes dsapp with the SDK.
command -v dotnet >/dev/null 2>&1 || skip_all "no dotnet on PATH"
. "$top_srcdir/tests/lib/wine.sh"
interop_setup
dotnet_tool dotnet-trace || skip_all "$why"
path_trace=$tool_path
path_counters=""
path_stack=""
dotnet_tool dotnet-counters && path_counters=$tool_path
dotnet_tool dotnet-stack && path_stack=$tool_path

PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5
PAUSED='awaiting a Diagnostics IPC ResumeStartup command'

# app_has NAME EREGEX: the wine app's stdout, CRs dropped, has a match.
app_has() {
	[ -f "$T/$1.out" ] && tr -d '\r' <"$T/$1.out" | grep -Eq -- "$2"
}

# wine_app NAME [VAR=VALUE ...]: dsapp under wine through launch.exe; its
# Windows pid (the launcher's, which is the runtime's) in $wpid.
wine_app() {
	_name=$1
	shift
	bg "$_name" env "$@" wine "$DSWIN_LAUNCH" "$DSWIN_DSAPP"
	wpid=""
	if wait_for 60 app_has "$_name" '^launch pid=[0-9]+ '; then
		wpid=$(tr -d '\r' <"$T/$_name.out" |
		    sed -n 's/^launch pid=\([0-9]*\) .*/\1/p')
	fi
}

# stop_wine_app NAME WPID: Ctrl-C; dsapp says it exits, and exits 0.
stop_wine_app() {
	if stop "$1" INT && app_has "$1" "^dsapp pid=$2 exiting count=[0-9]+\$"
	then
		pass "$1 exits 0 on Ctrl-C"
	else
		fail "$1 exits 0 on Ctrl-C" "$(tr -d '\r' <"$T/$1.out")"
	fi
}

# trace_pid FILE: the process id in a nettrace file's Trace object, which
# TraceEvent takes as the trace's process: after "Nettrace", the
# "!FastSerialization.1" header, the type named "Trace", a SYSTEMTIME, two
# 8-byte clock fields and the pointer size (8).
trace_pid() {
	[ "$(head -c 52 "$1" | tail -c 5)" = Trace ] &&
	    [ "$(od -A n -t u4 -j 85 -N 4 "$1" | tr -d ' ')" = 8 ] &&
	    od -A n -t u4 -j 89 -N 4 "$1" | tr -d ' '
}

# trace NAME PORT: dotnet-trace for 3 s through PORT into $T/NAME.nettrace,
# its output in $T/NAME.out.
trace() {
	DOTNET_EnableDiagnostics=0 timeout 120 "$path_trace" collect \
	    --providers "$PROVIDERS" --diagnostic-port "$2" \
	    --duration 00:00:00:03 -o "$T/$1.nettrace" </dev/null \
	    >"$T/$1.out" 2>&1
}

mode_is() {
	like "$1: mode" "$(grep '^info: route main:' "$T/$2.err")" \
	    "route main: $3\$"
}

# bytes_to_tool NAME COMMAND: to_tool= of router NAME's session line.
bytes_to_tool() {
	grep "command=$2 " "$T/$1.err" | head -n 1 |
	    sed -n 's/.* to_tool=\([0-9]*\) .*/\1/p'
}

# since T0: seconds since date +%s%N was T0, to one decimal.
since() {
	echo "$1 $(date +%s%N)" | awk '{ printf "%.1f", ($2 - $1) / 1e9 }'
}

# 1. dsapp's own pipe, bridged by dsroute.exe, reached from Linux.
t0=$(date +%s%N)
wine_app app
if [ -n "$wpid" ] && wait_for 60 app_has app '^dsapp pid=[0-9]+ ready$'; then
	pass "dsapp runs under wine"
	echo "# wine start to dsapp's ready line: $(since "$t0") s"
else
	fail "dsapp runs under wine" "$(cat "$T/app.out" "$T/app.err")"
	done_testing
	exit
fi
check "the launcher's pid is the runtime's ($wpid)" \
    app_has app "^dsapp pid=$wpid ready\$"
pipe=dotnet-diagnostic-$wpid

start_exe d1 "pipe:$pipe" tcp:127.0.0.1:0 &&
mode_is "the app's pipe to tcp" d1 client-server
check "dsroute.exe finds the runtime serving its pipe" has_line "$T/d1.err" \
    "pipe:$pipe: connecting per session \\(a server is already at the pipe\\)"
start_dsroute tl "uds:$T/x.sock" "tcp:127.0.0.1:$(port_of d1 remote),connect"
PORT=$T/x.sock,connect

check "dsclient ProcessInfo through the chain" \
    client pi --timeout 60 --port "$PORT" processinfo
like "ProcessInfo names the app by its Windows pid" "$(cat "$T/pi.out")" \
    "^pid=$wpid cookie=[-0-9a-f]+ cmdline=.*launch\\.exe.* .*dsapp\\.dll\$"
like "ProcessInfo: os Windows, x64" "$(cat "$T/pi.out")" \
    "^os=Windows arch=[Xx]64 "

t0=$(date +%s%N)
check "dotnet-trace collect through the chain" trace dt "$PORT"
echo "# dotnet-trace (3 s) ran $(since "$t0") s"
check "dotnet-trace says the trace completed" \
    has_line "$T/dt.out" '^Trace completed\.'
check "dsclient parses it" client dp parse "$T/dt.nettrace"
like "it holds the app's Dsroute-Test events, and GCs" "$(cat "$T/dp.out")" \
    "dsroute-test=[1-9][0-9]* gc=[1-9]"
is "the trace's process is the runtime's Windows pid" \
    "$(trace_pid "$T/dt.nettrace")" "$wpid"
wait_for 30 logged d1 'command=StopTracing '
wait_for 30 logged tl 'command=StopTracing '
like "dsroute.exe's audit line names the pipe and its peer's pid" \
    "$(grep 'command=CollectTracing[0-9]* ' "$T/d1.err")" \
    "runtime=pipe:$pipe\\(pid $wpid [^)]*\\) .*answer=ok .*end=\"runtime closed\""
n1=$(bytes_to_tool d1 'CollectTracing[0-9]*')
is "every byte of the stream crossed both routers (${n1:-?} bytes)" \
    "$(bytes_to_tool tl 'CollectTracing[0-9]*')" "${n1:-none}"

if [ -n "$path_counters" ]; then
	check "dotnet-counters collect through the chain" sh -c \
	    "DOTNET_EnableDiagnostics=0 timeout 120 '$path_counters' collect \
	    --diagnostic-port '$PORT' --counters System.Runtime,Dsroute.Test \
	    --format csv --duration 00:00:00:03 -o '$T/dc.csv' </dev/null \
	    >'$T/dc.out' 2>&1"
	like "System.Runtime's counters are in its file" \
	    "$(cut -d, -f2,3 "$T/dc.csv" 2>&1)" \
	    "^System\.Runtime,dotnet\.gc\.heap\.total_allocated "
	like "and the app's Meter, Dsroute.Test, with its ticks" \
	    "$(cut -d, -f2,3,5 "$T/dc.csv" 2>&1)" \
	    "^Dsroute\.Test,dsapp\.ticks [^,]*,[1-9]"
else
	skip "dotnet-counters through the chain" "no dotnet-counters"
fi

# dotnet-stack has -p only: a Linux router in the dotnet-dsrouter mode
# names a socket like a runtime's after its own pid.
if [ -n "$path_stack" ]; then
	mkdir -m 0700 "$T/ws.d"
	bg ws env TMPDIR="$T/ws.d" "$DSROUTE" server-client \
	    -tcpc "127.0.0.1:$(port_of d1 remote)"
	if wait_for 10 has_line "$T/ws.err" '^info: ready$'; then
		check "dotnet-stack report -p <the Linux router's pid>" \
		    sh -c "TMPDIR='$T/ws.d' DOTNET_EnableDiagnostics=0 \
		    timeout 120 '$path_stack' report -p $(pid_of ws) \
		    </dev/null >'$T/ds.out' 2>&1"
		like "it prints the app's Main, on Windows" "$(cat "$T/ds.out")" \
		    "dsapp!DsApp\.Program\.Main\("
	else
		fail "dsroute server-client -tcpc starts" "$(cat "$T/ws.err")"
	fi
	stop ws
else
	skip "dotnet-stack through the chain" "no dotnet-stack"
fi

stop_wine_app app "$wpid"
stop_exe d1
stop_dsroute tl

# 2. A suspended start: the runtime dials dsroute.exe's pipe; the Linux
# dotnet-trace starts a session and resumes it through both routers.
rtpipe=${P}rt
start_exe d2 "pipe:$rtpipe,listen" tcp:127.0.0.1:0 &&
mode_is "the runtime dials the pipe" d2 server-server
start_dsroute t2 "uds:$T/y.sock" "tcp:127.0.0.1:$(port_of d2 remote),connect"
PORT=$T/y.sock,connect
t0=$(date +%s%N)
wine_app sus "DOTNET_DiagnosticPorts=$rtpipe,suspend"
spid=${wpid:-none}
check "the suspended runtime dials dsroute.exe's pipe and is parked" \
    wait_for 60 has_line "$T/d2.err" \
    "^info: runtime pid $spid \\(cookie [0-9a-f]+\\) connected on pipe:$rtpipe\$"
check "dsclient ProcessInfo through the chain while it is paused" \
    client si --timeout 60 --port "$PORT" processinfo
like "ProcessInfo while paused: its Windows pid, os Windows" \
    "$(tr '\n' ' ' <"$T/si.out")" "^pid=$spid .* os=Windows "
check "the runtime says it is paused" wait_for 60 app_has sus "$PAUSED"
echo "# wine start to the pause message: $(since "$t0") s"
check "and Main has not run" eval "! app_has sus ' ready\$'"
check "the app is still alive" alive sus

t0=$(date +%s%N)
check "dotnet-trace collect through the chain, resuming the runtime" \
    trace st "$PORT"
echo "# dotnet-trace (3 s) ran $(since "$t0") s"
check "dotnet-trace says the trace completed" \
    has_line "$T/st.out" '^Trace completed\.'
check "Main ran after the resume" \
    wait_for 30 app_has sus "^dsapp pid=$spid ready\$"
check "the ready line follows the pause message" eval \
    "tr -d '\\r' <'$T/sus.out' | grep -A9 '$PAUSED' | grep -q ' ready\$'"
check "dsclient parses the start-up trace" client sp parse "$T/st.nettrace"
like "it holds the app's events from the first tick: it began before Main" \
    "$(cat "$T/sp.out")" "dsroute-test=[1-9][0-9]* gc=[1-9][0-9]* first-tick=1\$"
is "the start-up trace's process is the runtime's Windows pid" \
    "$(trace_pid "$T/st.nettrace")" "$spid"
wait_for 30 logged d2 'command=ResumeRuntime '
wait_for 30 logged t2 'command=ResumeRuntime '
like "dsroute.exe passed the ResumeRuntime to the parked runtime: ok" \
    "$(grep 'command=ResumeRuntime ' "$T/d2.err")" \
    "runtime=pipe:$rtpipe\\(pid $spid [^)]*\\) runtime_pid=$spid .*to_runtime=20 to_tool=24 .*answer=ok "
like "and the Linux router too" "$(grep 'command=ResumeRuntime ' "$T/t2.err")" \
    "to_runtime=20 to_tool=24 .*answer=ok "
wait_for 30 logged d2 'command=StopTracing '
wait_for 30 logged t2 'command=StopTracing '
n2=$(bytes_to_tool d2 'CollectTracing[0-9]*')
is "every byte of the start-up trace crossed both routers (${n2:-?} bytes)" \
    "$(bytes_to_tool t2 'CollectTracing[0-9]*')" "${n2:-none}"

stop_wine_app sus "$spid"
check "dsroute.exe notices the runtime went away" wait_for 30 has_line \
    "$T/d2.err" "runtime pid $spid \\(cookie [0-9a-f]+\\) went away"
stop_exe d2
stop_dsroute t2

done_testing
