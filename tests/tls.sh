#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Two routers chained over mutual TLS, the cross-host tunnel, in both
# directions: 64 MiB traces arrive with the runtime's SHA-256, a tool's
# close_notify half-close still gets its answer, and a TLS peer that
# vanishes mid-stream without close_notify is reported as truncation.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

STREAM=67108864

make_base_certs
mkcert client pod

# chain_checks DESC TOOLSOCK PID RUNTIME: a ProcessInfo and a 64 MiB trace.
chain_checks() {
	if tool --timeout 30 "$2" processinfo; then
		is "$1: ProcessInfo through two routers over mTLS" \
		    "$(field pid "$T/tool.out")" "$3"
	else
		fail "$1: ProcessInfo through two routers over mTLS" \
		    "$(cat "$T/tool.out" "$T/tool.err")"
	fi
	tool --timeout 120 "$2" collect --expect-bytes $STREAM
	id=$(field session "$T/tool.out")
	wait_for 10 has_line "$T/$4.ev" "^stream-end $id "
	is "$1: 64 MiB trace over mTLS, same SHA-256 at both ends" \
	    "$(field sha256 "$T/tool.out")" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/$4.ev")"
	# A reader slower than the link: the routers' batches of records
	# wait for the socket again and again, and every byte still arrives.
	tool --timeout 120 "$2" collect --rate 16000000 --expect-bytes $STREAM
	id=$(field session "$T/tool.out")
	wait_for 10 has_line "$T/$4.ev" "^stream-end $id "
	is "$1: 64 MiB to a slow reader, same SHA-256 at both ends" \
	    "$(field sha256 "$T/tool.out")" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/$4.ev")"
	check "$1: 20 commands in a row" \
	    tool --timeout 60 "$2" repeat 20 processinfo
	check "$1: a tool's half-close (close_notify) still gets the answer" \
	    tool --timeout 30 --shut-wr "$2" processinfo
}

# The tools' router dials: tool -> uds -> A -> tls -> B <- runtime (uds).
start_dsroute b "uds:$T/b-rt.sock" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,allow-cn=client1"
start_fakert rt --connect "$T/b-rt.sock" --stream-bytes $STREAM
start_dsroute a "uds:$T/a-tool.sock" \
    "tls:127.0.0.1:$(port_of b remote),connect,ca=$C/ca.pem,$(cert client1)"
wait_for 10 has_line "$T/b.err" "runtime pid $(pid_of rt) .* connected"
chain_checks "tools' router dials" "$T/a-tool.sock" "$(pid_of rt)" rt
like "the runtime side logs the tool's verified identity" \
    "$(grep 'command=CollectTracing' "$T/b.err")" \
    "tool=tls:[^ ]*\(cn:client1,sha256:[0-9a-f]{16}\)"
stop_dsroute a
stop_dsroute b
stop rt

# The runtime's router dials: runtime -> uds -> C -> tls -> D <- tool
# (uds).  D's allow-list names the pod's router, which may advertise its
# runtimes there, whose connections park.
start_dsroute d "uds:$T/d-tool.sock" "tls:127.0.0.1:0,$(cert localhost),\
ca=$C/ca.pem,allow-cn=pod,advertise=cn:pod"
start_dsroute c "uds:$T/c-rt.sock" "tls:127.0.0.1:$(port_of d remote),\
connect,peer=tool,ca=$C/ca.pem,$(cert pod)"
start_fakert rt2 --connect "$T/c-rt.sock" --stream-bytes $STREAM
wait_for 10 has_line "$T/d.err" "runtime pid $(pid_of rt2) .* connected"
chain_checks "runtime's router dials" "$T/d-tool.sock" "$(pid_of rt2)" rt2
stop_dsroute c
stop_dsroute d
stop rt2

# A runtime's router whose certificate is not on the allow-list: its
# connections are closed and never parked.
start_dsroute e "uds:$T/e-tool.sock" "tls:127.0.0.1:0,$(cert localhost),\
ca=$C/ca.pem,allow-cn=pod,advertise=any"
start_dsroute f "uds:$T/f-rt.sock" "tls:127.0.0.1:$(port_of e remote),\
connect,peer=tool,ca=$C/ca.pem,$(cert client1)"
start_fakert rt3 --connect "$T/f-rt.sock"
check "a runtime's router not on the allow-list is refused" \
    wait_for 15 has_line "$T/e.err" \
    'command=advertise decision=deny .*rule="allow-list" reason="identity not on the allow-list"'
check "and never parked" eval \
    "! has_line '$T/e.err' 'runtime pid $(pid_of rt3) .*connected'"
stop rt3
stop_dsroute f
stop_dsroute e

# TLS-22: the runtime's router vanishes mid-stream (no close_notify): the
# tools' router reports truncation, not a clean end.
start_dsroute g "uds:$T/g-rt.sock" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
start_fakert rt4 --connect "$T/g-rt.sock" \
    --stream-bytes 17179869184
start_dsroute h "uds:$T/h-tool.sock" \
    "tls:127.0.0.1:$(port_of g remote),connect,ca=$C/ca.pem,$(cert client1)"
wait_for 10 has_line "$T/g.err" "runtime pid $(pid_of rt4) .* connected"
bg collector "$FAKETOOL" --timeout 60 "$T/h-tool.sock" collect
if wait_for 20 has_line "$T/rt4.ev" '^stream-start'; then
	kill -KILL "$(pid_of g)"
	wait "$(pid_of g)" 2>/dev/null
	_seen_sessions=0
	ended h "TLS-22 a peer gone without close_notify: truncation" \
	    "command=CollectTracing.* end=\"reading from runtime: truncated: the peer closed without a TLS close_notify\""
else
	fail "TLS-22 the stream starts"
fi
wait "$(pid_of collector)" 2>/dev/null
stop rt4
stop_dsroute h

done_testing
