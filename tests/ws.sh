#!/bin/sh
# SPDX-License-Identifier: ISC
#
# ws: with Debian's python3-websockets as the third-party peer: a browser
# runtime that advertises over a WebSocket gets every request as one
# message however the tool cut it, and its trace, arriving merged with
# the reply and as 1-4 byte messages with pings between, reaches the tool
# byte-exact; a tool over ws cutting its request across messages; the
# router dialling a WebSocket server; two routers chained over ws; two
# browser runtimes on one listener; a parked runtime kept alive with
# pings past every deadline; and the hostile catalogue, each refused
# with its HTTP status or close code and one log line while the daemon
# serves the others.  wss: is in ws-tls.sh.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

PY=/usr/bin/python3
WSPEER="$PY $top_srcdir/tests/helpers/wspeer.py"
if ! $PY -c 'import websockets' 2>/dev/null; then
	skip_all "python3-websockets is not installed (dev.sh installs it)"
fi

STREAM=3145728
RESUME=444f544e45545f4950435f563100140004010000

# ws_port NAME local|remote: the port a router's WebSocket endpoint got.
ws_port() {
	sed -n "s/^info: $2 wss*:[^ ]*:\([0-9][0-9]*\)\/[^ ]*: listening.*/\1/p" \
	    "$T/$1.err" | head -n 1
}

refused "ws:// is refused, saying how to write it" "without the // of a URL" \
    "uds:$T/x.sock" ws://127.0.0.1:8088/diag
refused "origin= takes a page's origin" "give a page's origin" \
    "uds:$T/x.sock" "ws:127.0.0.1:0/diag,origin=app.example"
refused "origin= is for listeners" "origin= is for listeners" \
    "uds:$T/x.sock" "ws:127.0.0.1:1/diag,connect,origin=https://a.example"
refused "plain ws beyond loopback needs --unsafe-listen" "unsafe-listen" \
    "uds:$T/x.sock" "ws:*:0/diag"

# --- A browser runtime on a ws listener, a tool on a socket.
start_dsroute r "uds:$T/tool.sock" "ws:127.0.0.1:0/diag,advertise=any"
P=$(ws_port r remote)
like "the listener is named with its path" "$(cat "$T/r.err")" \
    "remote ws:127.0.0.1:[0-9]+/diag: listening"
like "it tells how a browser runtime dials it" "$(cat "$T/r.err")" \
    "DOTNET_DiagnosticPorts=ws://127.0.0.1:$P/diag"
: >"$T/brt.ev"
bg brt $WSPEER runtime "ws://127.0.0.1:$P/diag" "$T/brt.ev" \
    --stream-bytes $STREAM --tiny 2000 --connections 4
wait_for 10 has_line "$T/r.err" "connected on ws:127.0.0.1:$P/diag"
tool "$T/tool.sock" raw $RESUME --chunk 7 --delay-ms 100
like "ResumeRuntime cut in 7-byte writes is answered OK" \
    "$(cat "$T/tool.out")" "^reply 444f544e45545f4950435f5631001800ff00"
is "...and reached the browser runtime as one whole message" \
    "$(grep -c '^request 20 whole 4 1$' "$T/brt.ev")" 1
wait_for 10 eval "[ \$(grep -c '^advertise' '$T/brt.ev') -ge 2 ]"
tool "$T/tool.sock" raw $RESUME$RESUME
like "two requests in one write: the first answered" \
    "$(cat "$T/tool.out")" "^reply 444f544e45545f4950435f5631001800ff00"
is "...each went as its own message" \
    "$(grep -c '^request 20 whole 4 1$' "$T/brt.ev")" 2
wait_for 10 eval "[ \$(grep -c '^advertise' '$T/brt.ev') -ge 3 ]"
tool --timeout 60 "$T/tool.sock" collect --expect-bytes $STREAM
wait_for 10 has_line "$T/brt.ev" "^stream-end "
is "3 MiB trace, reply merged with its first bytes, 2000 bytes as 1-4 byte messages with pings: same SHA-256" \
    "$(field sha256 "$T/tool.out")" \
    "$(sed -n "s/^stream-end $STREAM //p" "$T/brt.ev")"
is "no request reached the browser runtime split" \
    "$(grep -c ' split ' "$T/brt.ev")" 0

# Two browser runtimes at once on the one listener: each its own.
: >"$T/brt2.ev"
bg brt2 $WSPEER runtime "ws://127.0.0.1:$P/diag" "$T/brt2.ev" \
    --connections 1
wait_for 10 has_line "$T/brt2.ev" "^advertise"
wait_for 10 eval "[ \$(grep -c 'runtime pid .* connected on ws:' '$T/r.err') -ge 2 ]"
is "two browser runtimes parked on one ws listener, by cookie" \
    "$(sed -n 's/.*runtime pid \([0-9]*\) .*connected on ws:.*/\1/p' \
    "$T/r.err" | sort -u | wc -l)" 2
stop brt 2>/dev/null
stop brt2 2>/dev/null

# Node's own WebSocket, which the browser runtime uses under Node.
if node --experimental-websocket -e 'new WebSocket("ws://127.0.0.1:1")' \
    2>/dev/null; then
	: >"$T/node.ev"
	bg node node --experimental-websocket \
	    "$top_srcdir/tests/helpers/wsnode.cjs" \
	    "ws://127.0.0.1:$P/diag" "$T/node.ev"
	wait_for 10 has_line "$T/r.err" "runtime pid $(pid_of node) .*connected"
	tool "$T/tool.sock" raw $RESUME --chunk 7 --delay-ms 100
	wait_for 10 has_line "$T/node.ev" "^closed"
	is "Node's WebSocket (permessage-deflate offered, no Origin) as a runtime" \
	    "$(sed -n 's/^\(request\|closed\)/\1/p' "$T/node.ev" | tr '\n' ' ')" \
	    "request 20 whole closed 1000 "
else
	skip "Node's WebSocket: this node has none (node 20 or later)"
fi
stop_dsroute r

# --- A tool over ws, a runtime on a socket.
start_dsroute s "uds:$T/rt.sock" "ws:127.0.0.1:0/diag"
start_fakert rt --connect "$T/rt.sock" --stream-bytes $STREAM
wait_for 10 has_line "$T/s.err" "runtime pid $(pid_of rt) .* connected"
P=$(ws_port s remote)
$WSPEER tool "ws://127.0.0.1:$P/diag" split >"$T/wt.out" 2>&1
is "a tool's request cut 7 + 13 with a ping between is answered" \
    "$(cat "$T/wt.out")" "reply 24 id 0 hresult 0"
$WSPEER tool "ws://127.0.0.1:$P/diag" fragments >"$T/wt.out" 2>&1
is "...sent as one message in three fragments, a ping among them" \
    "$(cat "$T/wt.out")" "reply 24 id 0 hresult 0"
$WSPEER tool "ws://127.0.0.1:$P/diag" collect --expect $STREAM \
    >"$T/wt.out" 2>&1
wait_for 10 has_line "$T/rt.ev" "^stream-end "
is "a tool over ws: 3 MiB trace with the runtime's SHA-256" \
    "$(sed -n 's/.*sha256=//p' "$T/wt.out")" \
    "$(sed -n "s/^stream-end [0-9]* $STREAM //p" "$T/rt.ev")"
stop_dsroute s

# --- The router dials a WebSocket server (a runtime that listens).
: >"$T/srv.ev"
bg srv $WSPEER server "$T/srv.port" "$T/srv.ev" --stream-bytes $STREAM
wait_for 10 test -s "$T/srv.port"
start_dsroute c "uds:$T/c.sock" "ws:127.0.0.1:$(cat "$T/srv.port")/diag,connect"
tool "$T/c.sock" raw $RESUME --chunk 7 --delay-ms 100
like "connect role: ResumeRuntime through a dialled WebSocket" \
    "$(cat "$T/tool.out")" "^reply 444f544e45545f4950435f5631001800ff00"
is "...which got it as one whole message" \
    "$(grep -c '^request 20 whole 4 1$' "$T/srv.ev")" 1
tool "$T/c.sock" raw $RESUME$RESUME
is "connect role, peer a runtime: two requests in one write, two messages" \
    "$(grep -c '^request 20 whole 4 1$' "$T/srv.ev")" 2
tool --timeout 60 "$T/c.sock" collect --expect-bytes $STREAM
wait_for 10 has_line "$T/srv.ev" "^stream-end "
is "connect role: 3 MiB trace with the server's SHA-256" \
    "$(field sha256 "$T/tool.out")" \
    "$(sed -n "s/^stream-end $STREAM //p" "$T/srv.ev")"
stop_dsroute c
stop srv 2>/dev/null

# A dialler masks its frames and pings a quiet server.
: >"$T/raw.ev"
bg rawsrv $WSPEER rawserver "$T/raw.port" "$T/raw.ev"
wait_for 10 test -s "$T/raw.port"
start_dsroute p --ws-ping-interval 0.3 "uds:$T/p.sock" \
    "ws:127.0.0.1:$(cat "$T/raw.port")/diag,connect"
tool "$T/p.sock" resume
# The close follows the answer the tool already has: wait for it.
wait_for 10 has_line "$T/raw.ev" '^close '
is "a dialler's frames: the request, two pings, the close, all masked" \
    "$(tr '\n' ' ' <"$T/raw.ev")" \
    "frame 2 masked 20 frame 9 masked 0 frame 9 masked 0 close masked "
stop_dsroute p
stop rawsrv 2>/dev/null

# --- Two routers chained over ws.
start_dsroute b "uds:$T/b-rt.sock" "ws:127.0.0.1:0/diag"
start_fakert rt2 --connect "$T/b-rt.sock" --stream-bytes 8388608
start_dsroute a "uds:$T/a-tool.sock" "ws:127.0.0.1:$(ws_port b remote)/diag,connect"
wait_for 10 has_line "$T/b.err" "runtime pid $(pid_of rt2) .* connected"
tool "$T/a-tool.sock" processinfo
is "chained over ws: ProcessInfo" "$(field pid "$T/tool.out")" \
    "$(pid_of rt2)"
tool --timeout 60 "$T/a-tool.sock" collect --expect-bytes 8388608
id=$(field session "$T/tool.out")
wait_for 10 has_line "$T/rt2.ev" "^stream-end $id "
is "chained over ws: 8 MiB trace, same SHA-256 at both ends" \
    "$(field sha256 "$T/tool.out")" \
    "$(sed -n "s/^stream-end $id 8388608 //p" "$T/rt2.ev")"
stop_dsroute a
stop_dsroute b
stop rt2

# --- A parked browser runtime outlives every deadline, pinged.
start_dsroute k --tls-handshake-timeout 1 --handshake-timeout 1 \
    --idle-timeout 1 --ws-ping-interval 1 \
    "uds:$T/k.sock" "ws:127.0.0.1:0/diag,advertise=any"
$WSPEER raw 127.0.0.1 "$(ws_port k remote)" park >"$T/park.out" 2>&1
like "a parked runtime gets pings and stays past the 1 s deadlines" \
    "$(cat "$T/park.out")" "^pings 2$"
stop_dsroute k

# --- The hostile catalogue.
start_dsroute h --tls-handshake-timeout 1 "uds:$T/h.sock" \
    "ws:127.0.0.1:0/diag,advertise=any"
P=$(ws_port h remote)
: >"$T/hrt.ev"
bg hrt $WSPEER runtime "ws://127.0.0.1:$P/diag" "$T/hrt.ev" --connections 2
wait_for 10 has_line "$T/h.err" "connected on ws:"

# hostile CASE WANT LOGLINE: the answer and exactly one log line.
hostile() {
	_before=$(grep -c -- "$3" "$T/h.err")
	$WSPEER raw 127.0.0.1 "$P" "$1" >"$T/raw.out" 2>&1
	like "$1: refused ($2)" "$(cat "$T/raw.out")" "$2"
	wait_for 5 eval "[ \$(grep -c -- '$3' '$T/h.err') -gt $_before ]"
	is "$1: one log line" "$(grep -c -- "$3" "$T/h.err")" $((_before + 1))
}
hostile post "^status 405" "upgrade refused: 405 method"
hostile nokey "^status 400" "upgrade refused: 400 no Sec-WebSocket-Key"
hostile path "^status 404" "upgrade refused: 404"
hostile bigheader "^status 431" "upgrade refused: 431"
hostile manyheaders "^status 431" "upgrade refused: 431"
hostile slow "^closed" "handshake not complete within 1.0s"
hostile origin=http://evil.example "^status 403" "upgrade refused: 403"
hostile unmasked "close 1002" "unmasked frame from a client"
hostile bigping "close 1002" "control frame over 125 bytes"
hostile fragping "close 1002" "fragmented control frame"
hostile huge "close 1009" "frame larger than the router takes"
hostile reserved "close 1002" "reserved bits set"
hostile close999 "close 1002" "close code not allowed"
hostile opcode "close 1002" "unknown opcode"
hostile cont "close 1002" "continuation of no message"
hostile interleaved "close 1002" "new message inside a fragmented one"
$WSPEER raw 127.0.0.1 "$P" ok >"$T/raw.out" 2>&1
like "an upgrade is answered 101" "$(cat "$T/raw.out")" "^status 101"
like "...with Cross-Origin-Embedder-Policy: require-corp" \
    "$(cat "$T/raw.out")" "header Cross-Origin-Embedder-Policy: require-corp"
like "...and Cross-Origin-Opener-Policy: same-origin" \
    "$(cat "$T/raw.out")" "header Cross-Origin-Opener-Policy: same-origin"
$WSPEER raw 127.0.0.1 "$P" origin=http://localhost:8080 >"$T/raw.out" 2>&1
like "a page from localhost may upgrade" "$(cat "$T/raw.out")" "^status 101"
$WSPEER raw 127.0.0.1 "$P" 'origin=http://[::1]:8080' >"$T/raw.out" 2>&1
like "a page from [::1]:8080 may upgrade" "$(cat "$T/raw.out")" "^status 101"
# Only a port or the end may follow the host (issue 32.6).
hostile 'origin=http://[::1]evil.example' "^status 403" "upgrade refused: 403"
hostile 'origin=http://localhost@evil.example' "^status 403" \
    "upgrade refused: 403"
hostile 'origin=http://localhost:80evil' "^status 403" "upgrade refused: 403"
tool "$T/h.sock" resume
like "the parked browser runtime was served meanwhile" \
    "$(cat "$T/tool.out")" "OK|ok"
check "the daemon stays up" alive h
stop_dsroute h
stop hrt 2>/dev/null

# --- origin= allows other pages; repeatable, in a configuration file.
cat >"$T/o.conf" <<EOF
[browser]
local = uds:$T/o.sock
remote = ws:127.0.0.1:0/diag
remote.origin = https://app.example
remote.origin = http://b.example:8080
EOF
start_dsroute o -f "$T/o.conf"
P=$(ws_port o remote)
$WSPEER raw 127.0.0.1 "$P" origin=https://app.example >"$T/raw.out" 2>&1
like "origin= allows that page" "$(cat "$T/raw.out")" "^status 101"
$WSPEER raw 127.0.0.1 "$P" origin=http://b.example:8080 >"$T/raw.out" 2>&1
like "origin= is repeatable" "$(cat "$T/raw.out")" "^status 101"
$WSPEER raw 127.0.0.1 "$P" origin=https://app.example:444 >"$T/raw.out" 2>&1
like "...and allows no other port" "$(cat "$T/raw.out")" "^status 403"
stop_dsroute o

done_testing
