#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The real .NET browser runtime through dsroute: dswasm (tests/wasm), a
# WebAssembly app with the diagnostic server linked in, runs headless
# under Node and dials a ws: or wss: listener of dsroute; the real tools
# reach it through the router's Unix socket.
#
#  - ProcessInfo from the client library (dsclient): the browser runtime
#    answers, as itself (/managed dswasm), and the audit line names it;
#  - dotnet-trace records the app's own EventSource, Dsroute-Wasm, and
#    TraceEvent (dsclient parse) reads the file;
#  - two browser runtimes at once: a route serves one runtime (the newest
#    that dialled), so each runtime has a route of its own, [a] and [b],
#    each a ws: listener with its path and a Unix socket for the tools;
#    both traced at once, each trace holds only its own runtime's events;
#  - dotnet-dsrouter's command line: `dsroute server-websocket -ipcs SOCK
#    -ws URL` serves the browser runtime to dsclient and dotnet-trace;
#  - over wss:, Node trusting the test CA (NODE_EXTRA_CA_CERTS);
#  - in Debian's headless Chromium, the page served from loopback (its
#    Origin is the router's host), where chromium is installed.
#
# The runtime never redials: the router listens before the app starts.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"
. "$top_srcdir/tests/lib/tls.sh"
. "$top_srcdir/tests/lib/wasm.sh"

interop_setup
wasm_setup

PROVIDERS=Dsroute-Wasm:0xffffffff:5

if dotnet_tool dotnet-trace; then
	TRACE=$tool_path
	pass "dotnet-trace $DOTNET_TOOLS_VERSION installed"
else
	TRACE=""
	skip "dotnet-trace $DOTNET_TOOLS_VERSION installed" "$why"
fi

# ws_port ROUTER PATH: the port of the router's ws: or wss: listener
# whose path is PATH.
ws_port() {
	sed -n "s|^info: remote wss\{0,1\}:[^ ]*:\([0-9][0-9]*\)$2: listening.*|\1|p" \
	    "$T/$1.err" | head -n 1
}

# runtimes ROUTER N: N browser runtimes have dialled the router.
runtimes() {
	[ "$(count_lines "$T/$1.err" \
	    '^info: runtime pid [0-9]+ \(cookie [0-9a-f]+\) connected on ')" \
	    -ge "$2" ]
}

# audited ROUTER ROUTE PID COMMAND: the router's line for a session of
# COMMAND (an ERE) on ROUTE names the runtime PID.
audited() {
	has_line "$T/$1.err" \
	    "^info: session [0-9]+: route=$2 command=$4 .* runtime_pid=$3 "
}

# trace NAME SOCKET: dotnet-trace collect the app's events for 4 s
# through SOCKET into $T/NAME.nettrace; its output in $T/NAME.out.
trace() {
	DOTNET_EnableDiagnostics=0 timeout 120 "$TRACE" collect \
	    --diagnostic-port "$2,connect" --providers "$PROVIDERS" \
	    --duration 00:00:00:04 -o "$T/$1.nettrace" \
	    </dev/null >"$T/$1.out" 2>&1
}

# holds FILE TEXT: the nettrace FILE holds TEXT as UTF-16 (an event's
# string payload).
holds() {
	python3 -c 'import sys
sys.exit(sys.argv[2].encode("utf-16-le") not in open(sys.argv[1], "rb").read())' \
	    "$1" "$2"
}

# traced NAME SOCKET APP: dotnet-trace through SOCKET, judged on its file:
# TraceEvent reads Dsroute-Wasm's ticks, and they are APP's.
traced() {
	check "$1: dotnet-trace collect through the router" trace "$1" "$2"
	check "$1: dotnet-trace says the trace completed" \
	    has_line "$T/$1.out" '^Trace completed\.'
	DSCLIENT_DEBUG=1 client "$1p" parse "$T/$1.nettrace"
	like "$1: TraceEvent reads the app's Dsroute-Wasm ticks in it" \
	    "$(cat "$T/$1p.err")" "event Dsroute-Wasm/Tick x[1-9]"
	check "$1: the ticks are $3's" holds "$T/$1.nettrace" "dswasm-$3"
}

# --- two browser runtimes, a route each, over ws: ------------------------

cat >"$T/ws.conf" <<EOF
[a]
local = uds:$T/a.sock
remote = ws:127.0.0.1:0/a
remote.advertise = addr:127.0.0.1
[b]
local = uds:$T/b.sock
remote = ws:127.0.0.1:0/b
remote.advertise = addr:127.0.0.1
EOF
if ! start_dsroute rt -v info -f "$T/ws.conf"; then
	skip "the rest" "the router did not start with ws: listeners"
	done_testing
	exit
fi
pa=$(ws_port rt /a)
pb=$(ws_port rt /b)
like "the router names its two ws: ports" "$pa $pb" "^[0-9]+ [0-9]+\$"

start_wasm wa "ws://127.0.0.1:$pa/a"
check "browser runtime wa starts under Node" wait_for 60 wasm_ready wa
check "... and dials route a" wait_for 30 runtimes rt 1
start_wasm wb "ws://127.0.0.1:$pb/b"
check "browser runtime wb starts under Node" wait_for 60 wasm_ready wb
check "... and dials route b" wait_for 30 runtimes rt 2

check "ProcessInfo through route a (dsclient)" \
    client pia --timeout 60 --port "$T/a.sock,connect" processinfo
like "the browser runtime answers, as /managed dswasm" \
    "$(cat "$T/pia.out")" "cmdline=/managed dswasm"
check "ProcessInfo through route b (dsclient)" \
    client pib --timeout 60 --port "$T/b.sock,connect" processinfo
ra=$(field pid "$T/pia.out")
rb=$(field pid "$T/pib.out")
like "two runtimes: two pids" "$ra $rb" "^([0-9]+) [0-9]+\$"
check "... not the same" test "$ra" != "$rb"
check "route a's audit line names runtime $ra" \
    wait_for 10 audited rt a "$ra" 'ProcessInfo[0-9]*'
check "route b's audit line names runtime $rb" \
    wait_for 10 audited rt b "$rb" 'ProcessInfo[0-9]*'

if [ -n "$TRACE" ]; then
	traced ta "$T/a.sock" wa
	check "ta: none of wb's" eval "! holds '$T/ta.nettrace' dswasm-wb"
	# Both at once, each through its route.
	bg jb trace tb2 "$T/b.sock"
	bg ja trace ta2 "$T/a.sock"
	for j in a b; do
		if wait "$(pid_of j$j)"; then
			pass "at once: route $j's dotnet-trace exits 0"
		else
			fail "at once: route $j's dotnet-trace exits 0" \
			    "$(cat "$T/t${j}2.out")"
		fi
	done
	check "at once: ta2 holds wa's ticks" holds "$T/ta2.nettrace" dswasm-wa
	check "at once: ... and none of wb's" \
	    eval "! holds '$T/ta2.nettrace' dswasm-wb"
	check "at once: tb2 holds wb's ticks" holds "$T/tb2.nettrace" dswasm-wb
	check "at once: ... and none of wa's" \
	    eval "! holds '$T/tb2.nettrace' dswasm-wa"
	DSCLIENT_DEBUG=1 client tb2p parse "$T/tb2.nettrace"
	like "at once: TraceEvent reads tb2's ticks" "$(cat "$T/tb2p.err")" \
	    "event Dsroute-Wasm/Tick x[1-9]"
	check "route b's audit line for its trace names runtime $rb" \
	    wait_for 30 audited rt b "$rb" 'CollectTracing[0-9]*'
else
	skip "dotnet-trace through ws:" "no dotnet-trace"
fi
check "runtime wa still runs" alive wa
check "runtime wb still runs" alive wb
stop wa
stop wb
stop_dsroute rt

# --- dotnet-dsrouter's server-websocket command ---------------------------

if start_dsroute dw server-websocket -ipcs "$T/dw.sock" \
    -ws ws://127.0.0.1:0/diag -v info; then
	pw=$(ws_port dw /diag)
	like "server-websocket names its ws: port" "$pw" "^[0-9]+\$"
	start_wasm wd "ws://127.0.0.1:$pw/diag"
	check "browser runtime wd starts, dialling server-websocket" \
	    wait_for 60 wasm_ready wd
	check "... and server-websocket takes its advertise" \
	    wait_for 30 runtimes dw 1
	check "ProcessInfo through server-websocket's -ipcs (dsclient)" \
	    client pid --timeout 60 --port "$T/dw.sock,connect" processinfo
	like "... the browser runtime answers, as /managed dswasm" \
	    "$(cat "$T/pid.out")" "cmdline=/managed dswasm"
	if [ -n "$TRACE" ]; then
		traced td "$T/dw.sock" wd
	else
		skip "dotnet-trace through server-websocket" "no dotnet-trace"
	fi
	check "runtime wd still runs" alive wd
	stop wd
	stop_dsroute dw
fi

# --- wss: Node trusts the test CA -----------------------------------------

make_base_certs
if ! start_dsroute rs -v info "uds:$T/s.sock" \
    "wss:127.0.0.1:0/diagnostics,$(cert localhost),verify=none,advertise=addr:127.0.0.1"; then
	skip "wss:" "the router did not start with a wss: listener"
	done_testing
	exit
fi
ps=$(ws_port rs /diagnostics)
like "the router names its wss: port" "$ps" "^[0-9]+\$"
start_wasm wt "wss://127.0.0.1:$ps/diagnostics" NODE_EXTRA_CA_CERTS="$C/ca.pem"
check "browser runtime wt starts, dialling wss:" wait_for 60 wasm_ready wt
check "... and its TLS handshake with the router succeeds" \
    wait_for 30 runtimes rs 1
check "ProcessInfo over wss: (dsclient)" \
    client pis --timeout 60 --port "$T/s.sock,connect" processinfo
like "... the browser runtime answers" "$(cat "$T/pis.out")" \
    "cmdline=/managed dswasm"
if [ -n "$TRACE" ]; then
	traced ts "$T/s.sock" wt
else
	skip "dotnet-trace through wss:" "no dotnet-trace"
fi
check "runtime wt still runs" alive wt
stop wt
stop_dsroute rs

# --- Chromium: a page served from loopback -------------------------------

if ! command -v chromium >/dev/null 2>&1; then
	skip "the browser runtime in Chromium" "no chromium (Debian's chromium)"
	done_testing
	exit
fi
start_dsroute rc -v info "uds:$T/c.sock" \
    "ws:127.0.0.1:0/diagnostics,advertise=addr:127.0.0.1"
pc=$(ws_port rc /diagnostics)
check "the app is served over HTTP" serve_wasm
start_chromium wc "ws://127.0.0.1:$pc/diagnostics"
check "browser runtime wc starts in headless Chromium" \
    wait_for 60 chromium_ready wc
check "... and dials the router, its page's Origin accepted" \
    wait_for 30 runtimes rc 1
check "ProcessInfo from Chromium's runtime (dsclient)" \
    client pic --timeout 60 --port "$T/c.sock,connect" processinfo
like "... it answers, as /managed dswasm" "$(cat "$T/pic.out")" \
    "cmdline=/managed dswasm"
if [ -n "$TRACE" ]; then
	traced tc "$T/c.sock" wc
else
	skip "dotnet-trace of Chromium's runtime" "no dotnet-trace"
fi
check "Chromium still runs" alive wc
stop wc
stop http
stop_dsroute rc

done_testing
