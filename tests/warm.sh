#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Warm connections (router/warm.c): a router that reaches another dsroute
# (peer=router) keeps spares made, handshaken and announced with
# WarmConnection, and a tool's command takes one: over TCP, mutual TLS
# and ws:, it is served on a spare and judged, with the peer's identity,
# on the other router as on a fresh connection.  Spares are replaced
# before the other side's --silent-timeout; a far side that does not take
# WarmConnection turns them off with one line, and every command is
# dialled as before; a far side that comes up later gets its spares;
# warm=0 makes none, and warm= belongs to a connect endpoint to a router.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

make_base_certs

# spares NAME: how many WarmConnections router NAME has answered.
spares() {
	count_lines "$T/$1.err" 'command=WarmConnection decision=allow'
}

# --- TCP: the tool's commands ride on spares.
start_dsroute b -v debug "uds:$T/b-rt.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/b-rt.sock"
start_dsroute a "uds:$T/a.sock" \
    "tcp:127.0.0.1:$(port_of b remote),connect,peer=router"
like "a says it keeps spares" "$(cat "$T/a.err")" \
    "it reaches a router, another dsroute \\(peer= given\\); 2 warm connections kept to it"
check "two spares are announced to b" wait_for 10 eval '[ "$(spares b)" -ge 2 ]'
check "ProcessInfo through a spare" tool --timeout 30 "$T/a.sock" processinfo
is "... from the runtime" "$(field pid "$T/tool.out")" "$(pid_of rt)"
check "ten commands in a row" tool --timeout 30 "$T/a.sock" repeat 10 \
    processinfo
wait_for 10 eval '[ "$(count_lines "$T/a.err" "command=ProcessInfo .*warm=taken")" -ge 11 ]'
is "a's end lines say each took a spare" \
    "$(count_lines "$T/a.err" 'command=ProcessInfo .*warm=taken')" 11
is "b's end lines say each arrived warm, judged as any command" \
    "$(count_lines "$T/b.err" 'command=ProcessInfo .*decision=allow .*warm=arrived')" 11
check "each taken spare was replaced" wait_for 10 eval '[ "$(spares b)" -ge 13 ]'
is "b logs no unused spare at info" \
    "$(count_lines "$T/b.err" '^info: .*warm connection closed unused')" 0
stop_dsroute a
wait_for 10 has_line "$T/b.err" 'end="a warm connection closed unused"'
like "b says when a spare goes unused (at debug)" "$(cat "$T/b.err")" \
    '^dbug: session [0-9]+: .*warm=arrived end="a warm connection closed unused"'
stop_dsroute b
stop rt

# --- Spares are replaced before the far side's --silent-timeout cuts them.
start_dsroute b --silent-timeout 3s -v debug "uds:$T/b2.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/b2.sock"
start_dsroute a "uds:$T/a2.sock" \
    "tcp:127.0.0.1:$(port_of b remote),connect,peer=router"
wait_for 10 eval '[ "$(spares b)" -ge 2 ]'
sleep 5		# past the far side's deadline; not a sync
check "after 5 s, a command still takes a spare" \
    tool --timeout 30 "$T/a2.sock" processinfo
check "... and it is served warm" wait_for 10 has_line "$T/a.err" \
    'command=ProcessInfo .*answer=ok .*warm=taken'
is "b cut no spare for silence" \
    "$(count_lines "$T/b.err" 'sent nothing within')" 0
check "a replaced its spares at 2 s (two thirds of b's 3 s)" \
    test "$(spares b)" -ge 4
stop_dsroute a
stop_dsroute b
stop rt

# --- Mutual TLS: the identity is the handshake's, the allow-list holds.
start_dsroute b "uds:$T/b3.sock" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,allow-cn=client1"
start_fakert rt --connect "$T/b3.sock" --stream-bytes 16777216
start_dsroute a "uds:$T/a3.sock" \
    "tls:127.0.0.1:$(port_of b remote),connect,peer=router,ca=$C/ca.pem,$(cert client1)"
wait_for 10 eval '[ "$(spares b)" -ge 2 ]' 2>/dev/null
check "TLS: a command takes a handshaken spare" \
    tool --timeout 30 "$T/a3.sock" processinfo
check "... which b judged with the client's certificate" \
    wait_for 10 has_line "$T/b.err" \
    'command=ProcessInfo tool=tls:[^ ]*\(cn:client1,sha256:[0-9a-f]{16}\) .*warm=arrived'
check "TLS: 16 MiB stream on a spare" tool --timeout 60 "$T/a3.sock" collect \
    --expect-bytes 16777216
stop_dsroute a
mkcert client intruder
start_dsroute a "uds:$T/a4.sock" \
    "tls:127.0.0.1:$(port_of b remote),connect,peer=router,ca=$C/ca.pem,$(cert intruder)"
check "an identity off b's allow-list is refused WarmConnection: one line" \
    wait_for 10 has_line "$T/a.err" \
    '^warn: tls:127\.0\.0\.1:[0-9]+: no warm connections: it refused WarmConnection'
tool --timeout 30 "$T/a4.sock" processinfo
like "... and its tool is refused by b as before" "$(cat "$T/tool.out")" \
    "error 0x80070005"
stop_dsroute a
stop_dsroute b
stop rt

# --- ws: spares on a WebSocket, announced in a binary message.
start_dsroute b "uds:$T/b5.sock" "ws:127.0.0.1:0/diag"
P=$(sed -n 's/^info: remote ws:127\.0\.0\.1:\([0-9]*\)\/diag: listening.*/\1/p' \
    "$T/b.err")
start_fakert rt --connect "$T/b5.sock"
start_dsroute a "uds:$T/a5.sock" "ws:127.0.0.1:$P/diag,connect,peer=router"
wait_for 10 eval '[ "$(spares b)" -ge 2 ]' 2>/dev/null
check "ws: a command takes a spare" tool --timeout 30 "$T/a5.sock" processinfo
check "... served warm" wait_for 10 has_line "$T/a.err" \
    'command=ProcessInfo .*answer=ok .*warm=taken'
stop_dsroute a
stop_dsroute b
stop rt

# --- A far side that is no router (here the fake runtime itself, as an
# older dsroute would forward WarmConnection to one): one line, and every
# command is dialled as before.
start_fakert tr --listen tcp:127.0.0.1:0
start_dsroute a "uds:$T/a6.sock" \
    "tcp:127.0.0.1:$(fakert_port tr),connect,peer=router"
check "a runtime that refuses WarmConnection: one line" \
    wait_for 10 has_line "$T/a.err" \
    'no warm connections: it refused WarmConnection \(an older dsroute\?\); each tool.s command dials it'
check "... the tool is served, dialled" tool --timeout 30 "$T/a6.sock" processinfo
is "... only one line said so" \
    "$(count_lines "$T/a.err" 'no warm connections')" 1
stop_dsroute a
stop tr

# --- The far side comes up after the near one: its spares follow.
port=$(/usr/bin/python3 -c 'import socket; s = socket.socket();
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_dsroute a "uds:$T/a7.sock" "tcp:127.0.0.1:$port,connect,peer=router"
tool --timeout 30 "$T/a7.sock" processinfo
like "before b listens, the tool is told at once" "$(cat "$T/tool.out")" \
    "error 0x8007274D"
start_dsroute b -v debug "uds:$T/b7.sock" "tcp:127.0.0.1:$port"
start_fakert rt --connect "$T/b7.sock"
check "spares reach b once it listens" wait_for 20 eval '[ "$(spares b)" -ge 2 ]'
check "... and serve the next command" tool --timeout 30 "$T/a7.sock" processinfo
stop_dsroute a
stop_dsroute b
stop rt

# --- warm=0, and where warm= belongs.
start_dsroute b -v debug "uds:$T/b8.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/b8.sock"
start_dsroute a "uds:$T/a8.sock" \
    "tcp:127.0.0.1:$(port_of b remote),connect,peer=router,warm=0"
check "warm=0: the command is served" tool --timeout 30 "$T/a8.sock" processinfo
is "... on a connection dialled for it" "$(spares b)" 0
stop_dsroute a
stop_dsroute b
stop rt
refused "warm= on a listener is refused" "warm= is for a connect endpoint" \
    "uds:$T/x.sock" "tcp:127.0.0.1:0,listen,warm=2"
refused "warm= without peer=router is refused" "warm= is for a connect endpoint" \
    "uds:$T/x.sock,listen" "tcp:127.0.0.1:1,connect,peer=runtime,warm=2"
refused "warm= takes a number" "warm=x: give a number of connections" \
    "uds:$T/x.sock,listen" "tcp:127.0.0.1:1,connect,peer=router,warm=x"

done_testing
