#!/bin/sh
# SPDX-License-Identifier: ISC
#
# wss: WebSocket over TLS, with whichever TLS library the build has (CI
# runs it against OpenSSL and mbed TLS): two routers chained over wss with
# client certificates, the listener naming the verified tool; and a
# browser runtime (python3-websockets) over wss to a verify=none
# listener, each request one message, its trace of tiny messages
# byte-exact.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

PY=/usr/bin/python3
WSPEER="$PY $top_srcdir/tests/helpers/wspeer.py"
if ! $PY -c 'import websockets' 2>/dev/null; then
	skip_all "python3-websockets is not installed (dev.sh installs it)"
fi

STREAM=8388608
RESUME=444f544e45545f4950435f563100140004010000

make_base_certs

ws_port() {
	sed -n "s/^info: $2 wss*:[^ ]*:\([0-9][0-9]*\)\/[^ ]*: listening.*/\1/p" \
	    "$T/$1.err" | head -n 1
}

# Two routers chained over wss, mutual TLS.
start_dsroute b "uds:$T/b-rt.sock" \
    "wss:127.0.0.1:0/diag,$(cert localhost),ca=$C/ca.pem,allow-cn=client1"
start_fakert rt --connect "$T/b-rt.sock" --stream-bytes $STREAM
start_dsroute a "uds:$T/a-tool.sock" \
    "wss:127.0.0.1:$(ws_port b remote)/diag,connect,ca=$C/ca.pem,$(cert client1)"
wait_for 10 has_line "$T/b.err" "runtime pid $(pid_of rt) .* connected"
tool "$T/a-tool.sock" processinfo
is "chained over wss: ProcessInfo" "$(field pid "$T/tool.out")" \
    "$(pid_of rt)"
tool --timeout 60 "$T/a-tool.sock" collect --expect-bytes $STREAM
id=$(field session "$T/tool.out")
wait_for 10 has_line "$T/rt.ev" "^stream-end $id "
is "chained over wss: 8 MiB trace, same SHA-256 at both ends" \
    "$(field sha256 "$T/tool.out")" \
    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/rt.ev")"
like "the wss listener names the tool's verified certificate" \
    "$(grep 'command=CollectTracing' "$T/b.err")" \
    "tool=wss:[^ ]*\(cn:client1,sha256:[0-9a-f]{16}\)"
stop_dsroute a
stop_dsroute b
stop rt

# A client without a certificate the listener trusts is refused.
start_dsroute d "uds:$T/d-rt.sock" \
    "wss:127.0.0.1:0/diag,$(cert localhost),ca=$C/ca.pem"
start_dsroute e "uds:$T/e-tool.sock" \
    "wss:127.0.0.1:$(ws_port d remote)/diag,connect,ca=$C/ca.pem"
tool "$T/e-tool.sock" resume
wait_for 10 has_line "$T/d.err" "session .*end="
unlike_upgrade=$(grep -c "WebSocket upgrade" "$T/d.err")
like "wss without a client certificate: refused in the TLS handshake" \
    "$(grep 'session .*end=' "$T/d.err")" "end=\".*(certificate|handshake|alert)"
is "...before any upgrade" "$unlike_upgrade" 0
stop_dsroute e
stop_dsroute d

# A browser runtime over wss (browsers send no client certificate).
start_dsroute r "uds:$T/tool.sock" \
    "wss:127.0.0.1:0/diag,$(cert localhost),verify=none,advertise=any"
P=$(ws_port r remote)
: >"$T/brt.ev"
WSPEER_CA=$C/ca.pem bg brt $WSPEER runtime "wss://127.0.0.1:$P/diag" \
    "$T/brt.ev" --stream-bytes $STREAM --tiny 4000 --connections 3
wait_for 10 has_line "$T/r.err" "connected on wss:127.0.0.1:$P/diag"
tool "$T/tool.sock" raw $RESUME$RESUME
like "wss: ResumeRuntime answered" "$(cat "$T/tool.out")" \
    "^reply 444f544e45545f4950435f5631001800ff00"
wait_for 10 eval "[ \$(grep -c '^advertise' '$T/brt.ev') -ge 2 ]"
tool --timeout 60 "$T/tool.sock" collect --expect-bytes $STREAM
wait_for 10 has_line "$T/brt.ev" "^stream-end "
is "wss: 8 MiB trace, 4000 bytes of it as 1-4 byte messages: same SHA-256" \
    "$(field sha256 "$T/tool.out")" \
    "$(sed -n "s/^stream-end $STREAM //p" "$T/brt.ev")"
is "wss: every request reached the browser runtime whole" \
    "$(grep -c '^request 20 whole\|^request 117 whole' "$T/brt.ev") $(grep -c ' split ' "$T/brt.ev")" "2 0"
stop brt 2>/dev/null
stop_dsroute r

done_testing
