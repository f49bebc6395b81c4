#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The dotnet-dsrouter command line: each command routes between the fake
# runtime and the fake tool in its own mode, every spelling of the options
# is taken, bad command lines are one-line errors with exit status 1, and
# the runtime timeout stops the router with exit status 0.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/dsrouter.sh"

mode_is() {
	like "$1: route mode" "$(grep "^info: route $2:" "$T/$3.err")" \
	    "route $2: $4\$"
}

# server-server with each spelling of -ipcs and -tcps: the runtime dials
# TCP, the tool connects to the IPC socket.
n=0
for spelling in "-ipcs @ -tcps 127.0.0.1:0" \
    "--ipc-server @ --tcp-server 127.0.0.1:0" \
    "--ipc-server:@ --tcp-server:127.0.0.1:0" \
    "--ipc-server=@ -tcps:127.0.0.1:0" \
    "-ipcs:@ --tcp-server=tcp://127.0.0.1:0/" \
    "-ipcs=@ -tcps net.tcp://127.0.0.1:0"; do
	n=$((n + 1))
	args=$(echo "$spelling" | sed "s|@|$T/ss$n.sock|")
	# shellcheck disable=SC2086
	dsr ss$n /dev/null server-server $args || continue
	[ $n -eq 1 ] && mode_is "server-server" server-server ss1 server-server
	start_fakert rt$n --connect "tcp:127.0.0.1:$(tcp_port ss$n)" \
	    --pid $((2000 + n))
	processinfo "server-server $spelling" "$T/ss$n.sock,connect" \
	    $((2000 + n))
	stop rt$n
	stop_dsroute ss$n
	check "server-server $spelling: socket removed" test ! -e "$T/ss$n.sock"
done

# client-server: a tool listens on the IPC path, the runtime dials TCP.
bg lt "$FAKETOOL" --timeout 30 "$T/cs.sock,listen" processinfo
wait_for 10 test -S "$T/cs.sock" || fail "the listening tool is up"
dsr cs /dev/null client-server -ipcc "$T/cs.sock" --tcp-server 127.0.0.1:0 &&
mode_is "client-server" client-server cs client-server
start_fakert rtcs --connect "tcp:127.0.0.1:$(tcp_port cs)" --pid 2101
if wait "$(pid_of lt)"; then
	like "client-server: the listening tool gets ProcessInfo" \
	    "$(cat "$T/lt.out")" "^pid=2101 "
else
	fail "client-server: the listening tool gets ProcessInfo" \
	    "$(cat "$T/lt.err")"
fi
stop rtcs
stop_dsroute cs

# server-client: the runtime listens on TCP, the tool connects to IPC.
start_fakert rtsc --listen tcp:127.0.0.1:0 --pid 2201
dsr sc /dev/null server-client --ipc-server "$T/sc.sock" \
    -tcpc "127.0.0.1:$(fakert_port rtsc)" &&
mode_is "server-client" server-client sc server-client
processinfo "server-client: ProcessInfo reaches the runtime" \
    "$T/sc.sock,connect" 2201
stop_dsroute sc
stop rtsc

# client-client: the runtime listens on TCP, a tool listens on IPC.
start_fakert rtcc --listen tcp:127.0.0.1:0 --pid 2301
bg ltcc "$FAKETOOL" --timeout 30 "$T/cc.sock,listen" processinfo
wait_for 10 test -S "$T/cc.sock" || fail "the listening tool is up"
dsr cc /dev/null client-client --ipc-client:"$T/cc.sock" \
    "--tcp-client=127.0.0.1:$(fakert_port rtcc)" &&
mode_is "client-client" client-client cc client-client
if wait "$(pid_of ltcc)"; then
	like "client-client: the tool gets the runtime's advertise and reply" \
	    "$(cat "$T/ltcc.out")" "^pid=2301 "
else
	fail "client-client: the tool gets the runtime's advertise and reply" \
	    "$(cat "$T/ltcc.err")"
fi
stop_dsroute cc
stop rtcc

# The WebSocket commands: a browser runtime (python3-websockets playing
# it, tests/helpers/wspeer.py) dials the router's ws: server.
RESUME=444f544e45545f4950435f563100140004010000
WSPEER="/usr/bin/python3 $top_srcdir/tests/helpers/wspeer.py"

# ws_port NAME: the port of the command's ws: server.
ws_port() {
	sed -n 's/^info: remote ws:.*:\([0-9][0-9]*\)\/[^ ]*: listening.*/\1/p' \
	    "$T/$1.err" | head -n 1
}

n=0
for spelling in "-ipcs @ -ws ws://127.0.0.1:0/diag" \
    "--ipc-server:@ --web-socket=ws://127.0.0.1:0/diag" \
    "-ipcs=@ -ws:http://127.0.0.1:0/diag" \
    "--ipc-server @ --web-socket WS://127.0.0.1:0"; do
	n=$((n + 1))
	args=$(echo "$spelling" | sed "s|@|$T/sw$n.sock|")
	# shellcheck disable=SC2086
	dsr sw$n /dev/null server-websocket $args || continue
	path=/diag
	[ $n -eq 4 ] && path=/
	check "server-websocket $spelling: a ws: server on $path" has_line \
	    "$T/sw$n.err" "^info: remote ws:127\\.0\\.0\\.1:[0-9]+$path: listening"
	check "server-websocket $spelling: the IPC server" has_line \
	    "$T/sw$n.err" "^info: local uds:$T/sw$n\\.sock: listening"
	[ $n -eq 1 ] || stop_dsroute sw$n
done
mode_is "server-websocket" server-websocket sw1 server-server
if /usr/bin/python3 -c 'import websockets' 2>/dev/null; then
	: >"$T/swrt.ev"
	bg swrt $WSPEER runtime "ws://127.0.0.1:$(ws_port sw1)/diag" \
	    "$T/swrt.ev" --connections 2
	check "server-websocket: the browser runtime's advertise is taken" \
	    wait_for 10 has_line "$T/sw1.err" "connected on ws:127"
	tool "$T/sw1.sock,connect" raw $RESUME
	like "server-websocket: a tool's request through -ipcs is answered" \
	    "$(cat "$T/tool.out")" "^reply 444f544e45545f4950435f5631001800ff00"
	is "server-websocket: ...by the browser runtime, as one message" \
	    "$(grep -c '^request 20 whole 4 1$' "$T/swrt.ev")" 1
else
	skip "server-websocket: a browser runtime routed" \
	    "python3-websockets is not installed (dev.sh installs it)"
fi
stop_dsroute sw1

# client-websocket: a tool listens on -ipcc; the browser runtime dials.
if /usr/bin/python3 -c 'import websockets' 2>/dev/null; then
	bg ltcw "$FAKETOOL" --timeout 30 "$T/cw.sock,listen" raw $RESUME
	wait_for 10 test -S "$T/cw.sock" || fail "the listening tool is up"
	dsr cw /dev/null client-websocket -ipcc "$T/cw.sock" \
	    -ws ws://127.0.0.1:0/diag &&
	mode_is "client-websocket" client-websocket cw client-server
	: >"$T/cwrt.ev"
	bg cwrt $WSPEER runtime "ws://127.0.0.1:$(ws_port cw)/diag" \
	    "$T/cwrt.ev" --connections 1
	if wait "$(pid_of ltcw)"; then
		like "client-websocket: the listening tool's request is answered" \
		    "$(cat "$T/ltcw.out")" \
		    "^reply 444f544e45545f4950435f5631001800ff00"
	else
		fail "client-websocket: the listening tool's request is answered" \
		    "$(cat "$T/ltcw.out" "$T/ltcw.err")"
	fi
	is "client-websocket: ...by the browser runtime, as one message" \
	    "$(grep -c '^request 20 whole 4 1$' "$T/cwrt.ev")" 1
	stop_dsroute cw
else
	skip "client-websocket: a browser runtime routed" \
	    "python3-websockets is not installed (dev.sh installs it)"
fi

# The default -ws is dotnet-dsrouter's, when its port is free here.
if ! /usr/bin/python3 -c 'import socket
socket.socket().bind(("127.0.0.1", 8088))' 2>/dev/null; then
	skip "server-websocket: the default -ws" "port 8088 is in use here"
elif dsr swd /dev/null server-websocket -rt 600; then
	check "server-websocket: -ws defaults to ws://127.0.0.1:8088/diagnostics" \
	    has_line "$T/swd.err" \
	    '^info: remote ws:127\.0\.0\.1:8088/diagnostics: listening'
	check "server-websocket: -ipcs defaults to the -p socket" has_line \
	    "$T/swd.err" "^info: tools find this router with -p $(pid_of swd):"
	stop_dsroute swd
fi

# Installed as dotnet-dsrouter: chosen by its name, whatever follows.
ln -s "$DSROUTE" "$T/dotnet-dsrouter"
like "as dotnet-dsrouter: --version" "$("$T/dotnet-dsrouter" --version)" \
    "^dsroute .*dotnet-dsrouter"
DSROUTE_SAVED=$DSROUTE
DSROUTE=$T/dotnet-dsrouter
dsr dd /dev/null server-server -ipcs "$T/dd.sock" -tcps 127.0.0.1:0 &&
start_fakert rtdd --connect "tcp:127.0.0.1:$(tcp_port dd)" --pid 2401
processinfo "as dotnet-dsrouter: server-server routes" "$T/dd.sock,connect" \
    2401
stop rtdd
stop_dsroute dd
refused "as dotnet-dsrouter: an unknown command" 'unknown command' \
    uds:/tmp/x.sock tcp:127.0.0.1:0
DSROUTE=$DSROUTE_SAVED

# Verbosity, in its spellings.
dsr v1 /dev/null server-server -tcps 127.0.0.1:0 -v:debug -rt 600 &&
check "-v:debug logs debug lines" has_line "$T/v1.err" '^dbug: '
stop_dsroute v1
TMPDIR=$T "$DSROUTE" server-server --verbose none -rt 0 </dev/null \
    >"$T/v2.out" 2>"$T/v2.err"
is "--verbose none: exit 0 and nothing logged" "$?:$(cat "$T/v2.err")" "0:"
TMPDIR=$T "$DSROUTE" android-emu --verbose=warning -rt 0 </dev/null \
    >"$T/v3.out" 2>"$T/v3.err"
is "--verbose=warning: no --info text" "$(cat "$T/v3.out")" ""

# Bad command lines: one line, exit status 1.
refused "client-server without -ipcc" 'needs --ipc-client' client-server
refused "client-client without -ipcc" 'needs --ipc-client' client-client \
    -tcpc 127.0.0.1:1
refused "server-client without -tcpc" 'needs --tcp-client' server-client
# -ipcc naming a runtime's own socket: said in dotnet-dsrouter's terms,
# with the command that does bridge a runtime's socket.
rts=$T/dotnet-diagnostic-4242-17236512-socket
refused "-ipcc at a runtime's socket: what -ipcc is, what to run instead" \
    "^crit: client-server --ipc-client $rts: that is a runtime's own diagnostic port; -ipcc is where a tool listens for runtimes \\(dotnet-trace collect --diagnostic-port PATH\\)\\.  To reach this runtime from TCP, run dsroute uds:$rts tcp:127\\.0\\.0\\.1:9000 " \
    client-server -ipcc "$rts" -tcps 127.0.0.1:0
refused "-ipcc at a runtime's socket: no word of peer= or advertise" \
    "^[^=]*$" client-client -ipcc "$rts" -tcpc 127.0.0.1:1
refused "client-websocket without -ipcc" 'needs --ipc-client' \
    client-websocket -ws ws://127.0.0.1:0/diag
refused "-ws on a TCP command" 'server-server does not take --web-socket' \
    server-server -ws ws://127.0.0.1:8088/diagnostics
refused "-tcps on a WebSocket command" \
    'server-websocket does not take --tcp-server' server-websocket \
    -tcps 127.0.0.1:0
refused "-fp on a WebSocket command" \
    'server-websocket does not take --forward-port' server-websocket -fp Android
for host in '*' '+' 0.0.0.0 '[::]'; do
	ere=$(printf '%s\n' "$host" | sed 's/[][*+.]/\\&/g')
	refused "-ws with the wildcard host $host" \
	    "ws://$ere:0/diag: refusing a wildcard host" \
	    server-websocket -ws "ws://$host:0/diag"
done
refused "-ws beyond loopback" 'refusing to listen for plaintext' \
    server-websocket -ws ws://192.0.2.1:0/diag
refused "-ws wss:// needs a certificate" 'wss needs a certificate' \
    server-websocket -ws wss://127.0.0.1:0/diag
refused "-ws with another scheme" 'give ws://HOST:PORT/PATH' \
    server-websocket -ws tcp://127.0.0.1:0
refused "-ws with a query" 'no spaces, controls, \? or #' \
    server-websocket -ws 'ws://127.0.0.1:0/diag?x=1'
refused "an option the command does not take" \
    'android does not take --tcp-server' android -tcps 127.0.0.1:9
refused "an unknown option" 'unknown option --bogus' server-server --bogus
refused "an option without its value" '-ipcs needs a value|--ipc-server needs a value' \
    server-server -ipcs
refused "a child after -- where the runtime listens" \
    'runtime dials the router, which only client-server and server-server take' \
    server-client -tcpc 127.0.0.1:9 -- app
refused "a bad verbosity" 'give none, critical' server-server -v loud
refused "a bad signal name" 'give SIGINT, SIGQUIT or SIGTERM' server-server \
    -bsig 'SIGINT;SIGHUP'
refused "a bad runtime timeout" 'give whole seconds' server-server -rt soon
refused "--forward-port iOS on a TCP server" 'give Android' server-server \
    -fp iOS
refused "--forward-port with port 0" 'needs a fixed port' server-server \
    -fp Android
refused "--serial without forwarding" '--serial chooses the device' \
    server-client -tcpc 127.0.0.1:1 -s abc
refused "a comma in a path" 'a comma cannot appear' server-server \
    -ipcs "$T/a,b"
refused "plaintext TCP beyond loopback" 'refusing to listen for plaintext' \
    server-server -tcps 0.0.0.0:0
TMPDIR=$T "$DSROUTE" server-server -tcps 0.0.0.0:0 --unsafe-listen -rt 0 \
    </dev/null >/dev/null 2>"$T/unsafe.err"
like "--unsafe-listen: dotnet-dsrouter's loopback warning" \
    "$(cat "$T/unsafe.err")" "warn: Binding tcp server endpoint to anything"

TMPDIR=$T "$DSROUTE" server-websocket -ws 'ws://*:0/diag' --unsafe-listen \
    -rt 0 </dev/null >/dev/null 2>"$T/unsafe-ws.err"
like "--unsafe-listen: -ws ws://*:0 listens on every interface" \
    "$(cat "$T/unsafe-ws.err")" "remote ws:0\.0\.0\.0:[0-9]+/diag: listening"
like "--unsafe-listen: the loopback warning names the WebSocket server" \
    "$(cat "$T/unsafe-ws.err")" "warn: Binding WebSocket server endpoint"

# A port in use is a start-up error, and no socket file is left behind.
dsr busy /dev/null server-server -tcps 127.0.0.1:0 &&
busy_port=$(tcp_port busy)
TMPDIR=$T "$DSROUTE" server-server -tcps "127.0.0.1:$busy_port" </dev/null \
    >/dev/null 2>"$T/inuse.err"
is "a port in use: exit status 1" "$?" 1
like "a port in use: said why" "$(cat "$T/inuse.err")" \
    'Address already in use'
is "a port in use: no default socket left behind" \
    "$(ls "$T" | grep -c '^dotnet-diagnostic-')" 2
stop_dsroute busy

# --runtime-timeout: no runtime in time, the router stops with status 0.
dsr rt0 /dev/null server-server -ipcs "$T/rt0.sock" -tcps 127.0.0.1:0 -rt:1
wait_for 10 eval "! kill -0 $(pid_of rt0)"
exits_ok rt0 "-rt:1 without a runtime: exit status 0"
check "-rt: says why" has_line "$T/rt0.err" \
    '^info: No runtime connected before timeout\.$'
check "-rt: the socket is removed" test ! -e "$T/rt0.sock"

dsr rtw /dev/null server-websocket -ipcs "$T/rtw.sock" \
    -ws ws://127.0.0.1:0/diag -rt 1
wait_for 10 eval "! kill -0 $(pid_of rtw)"
exits_ok rtw "server-websocket -rt 1 without a browser runtime: exit status 0"

dsr rt1 /dev/null client-client -ipcc "$T/none.sock" -tcpc 127.0.0.1:1 \
    --runtime-timeout=1
wait_for 10 eval "! kill -0 $(pid_of rt1)"
exits_ok rt1 "client-client, nothing answers: stops after -rt"

# A runtime in time: the timeout no longer applies.
dsr rt2 /dev/null server-server -ipcs "$T/rt2.sock" -tcps 127.0.0.1:0 -rt 3 \
    -v debug && start_fakert rtrt --connect "tcp:127.0.0.1:$(tcp_port rt2)" \
    --pid 2501
check "a runtime in time: the timeout is cancelled" wait_for 10 has_line \
    "$T/rt2.err" 'runtime timeout no longer applies'
# Absence can only be shown by letting the deadline pass.
sleep 3
processinfo "a runtime in time: still routing after the deadline" \
    "$T/rt2.sock,connect" 2501
stop rtrt
stop_dsroute rt2

# A runtime that answers a dial (server-client) cancels it too.
start_fakert rtsc2 --listen tcp:127.0.0.1:0 --pid 2601
dsr rt3 /dev/null server-client -ipcs "$T/rt3.sock" \
    -tcpc "127.0.0.1:$(fakert_port rtsc2)" -rt 60 -v debug
processinfo "server-client: a tool's dial reaches the runtime" \
    "$T/rt3.sock,connect" 2601
check "server-client: that cancels the timeout" has_line "$T/rt3.err" \
    'runtime timeout no longer applies'
stop_dsroute rt3
stop rtsc2

# --info for the four commands: the application's settings and the tool.
dsr i1 /dev/null server-server -tcps 127.0.0.1:0 -i
p=$(tcp_port i1)
check "server-server -i: the application dials the TCP server" has_line \
    "$T/i1.out" "^DOTNET_DiagnosticPorts=127\.0\.0\.1:$p,nosuspend,connect\$"
check "server-server -i: MSBuild properties" has_line "$T/i1.out" \
    "-p:DiagnosticAddress=127\.0\.0\.1 -p:DiagnosticPort=$p -p:DiagnosticSuspend=true -p:DiagnosticListenMode=connect\$"
check "server-server -i: the tool uses -p" has_line "$T/i1.out" \
    "^dotnet-trace collect -p $(pid_of i1)\$"
stop_dsroute i1
dsr i2 /dev/null server-client -ipcs "$T/i2.sock" -tcpc 127.0.0.1:7777 -i
check "server-client -i: the application listens" has_line "$T/i2.out" \
    '^DOTNET_DiagnosticPorts=127\.0\.0\.1:7777,suspend,listen$'
check "server-client -i: the tool connects to the IPC socket" has_line \
    "$T/i2.out" "^dotnet-trace collect --diagnostic-port $T/i2.sock,connect\$"
stop_dsroute i2
dsr i3 /dev/null client-server -ipcc "$T/i3.sock" -tcps 127.0.0.1:0 --info
check "client-server -i: the tool listens" has_line "$T/i3.out" \
    "^dotnet-trace collect --diagnostic-port $T/i3.sock "
stop_dsroute i3
dsr i5 /dev/null server-websocket -ipcs "$T/i5.sock" \
    -ws ws://127.0.0.1:0/diag -i
check "server-websocket -i: the browser app dials the ws: server" has_line \
    "$T/i5.out" "^DOTNET_DiagnosticPorts=ws://127\\.0\\.0\\.1:$(ws_port i5)/diag\$"
check "server-websocket -i: the tool connects to the IPC socket" has_line \
    "$T/i5.out" "^dotnet-trace collect --diagnostic-port $T/i5.sock,connect\$"
stop_dsroute i5
dsr i4 /dev/null server-server -tcps 127.0.0.1:0
is "without -i, a command prints no --info text" "$(cat "$T/i4.out")" ""
stop_dsroute i4

done_testing
