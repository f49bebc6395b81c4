#!/bin/sh
# SPDX-License-Identifier: ISC
#
# ProcessInfo, ProcessInfo2 and ProcessInfo3 answered from the router's
# records: for a runtime the router keeps a record of (dialled in, found
# by dir:, listed over a link), 100 asks of each version reach the
# runtime at most once each, and every answer is byte for byte the
# runtime's own, as it answers on a socket of its own.  Each ask is
# still judged and audited; a ResumeRuntime forgets what was kept; what
# was kept goes with its runtime.  The fake runtime logs every command
# it gets (its events file).

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

N=100
# The three requests: 20 bytes each, set 4, ids 0, 4 and 8.
rq() {
	printf '444f544e45545f4950435f563100140004%s0000' "$1"
}
V0=$(rq 00)
V4=$(rq 04)
V8=$(rq 08)

# reply ADDR HEX: one request on a connection of its own; the reply's hex.
reply() {
	"$FAKETOOL" --timeout 10 "$1" raw "$2" | sed -n 's/^reply //p'
}

# asks RT ID: how many ProcessInfo commands of that id the fake got.
asks() {
	count_lines "$T/$1.ev" "^command 0x04 $2 "
}

# same_n ADDR HEX WANT: N asks on ADDR all get WANT; print how many did.
same_n() {
	_same=0
	_i=0
	while [ $_i -lt $N ]; do
		[ "$(reply "$1" "$2")" = "$3" ] && _same=$((_same + 1))
		_i=$((_i + 1))
	done
	echo $_same
}

# --- A runtime that dials the router: its record keeps what it said.
start_dsroute r -v debug "uds:$T/rt.sock,listen" "uds:$T/tools.sock,listen"
start_fakert a --connect "$T/rt.sock" --listen "$T/a.sock" --name Orders.Api
wait_for 10 has_line "$T/r.err" 'connected on uds:'
for v in 0x00:$V0 0x04:$V4 0x08:$V8; do
	id=${v%%:*}
	hex=${v#*:}
	own=$(reply "$T/a.sock" "$hex")
	before=$(asks a "$id")
	is "ProcessInfo $id: $N asks through the router, each the runtime's own bytes" \
	    "$(same_n "$T/tools.sock" "$hex" "$own")" $N
	is "... of which one reached the runtime" \
	    "$(( $(asks a "$id") - before ))" 1
done
is "each ask was judged and audited" "$(count_lines "$T/r.err" \
    '^dbug: audit: .* command=ProcessInfo[23]? decision=allow ')" $((3 * N))
is "... and the rest answered from the record" "$(count_lines "$T/r.err" \
    "^info: session [0-9]+: .*command=ProcessInfo[23]? .*to_runtime=0 .*answer=ok decision=allow .*end=\"answered from the router's record of runtime pid $(pid_of a) ")" \
    $((3 * (N - 1)))

# The judge still decides: a tool refused ProcessInfo2 gets no answer.
stop_dsroute r
start_dsroute r2 -v debug "uds:$T/rt.sock,listen" \
    "uds:$T/tools.sock,listen,deny=ProcessInfo2"
wait_for 10 has_line "$T/r2.err" 'connected on uds:'
reply "$T/tools.sock" "$V0" >/dev/null
reply "$T/tools.sock" "$V0" >/dev/null
check "a record of the runtime again" has_line "$T/r2.err" \
    "end=\"answered from the router's record"
is "ProcessInfo2 denied by the ACL: the error frame, not the record" \
    "$(reply "$T/tools.sock" "$V4")" 444f544e45545f4950435f5631001800ffff000005000780
check "... with its audit line" wait_for 10 has_line "$T/r2.err" \
    '^info: audit: .* command=ProcessInfo2 decision=deny .*rule="deny=ProcessInfo2"'

# A ResumeRuntime answered OK forgets what was kept (a runtime paused at
# start-up tells more of itself once it runs): the next ask goes on.
before=$(asks a 0x00)
check "ResumeRuntime through the router" tool --timeout 10 "$T/tools.sock" resume
reply "$T/tools.sock" "$V0" >/dev/null
reply "$T/tools.sock" "$V0" >/dev/null
is "after it, ProcessInfo is asked of the runtime again, once" \
    "$(( $(asks a 0x00) - before ))" 1

# What was kept goes with the runtime: a new one answers for itself.
stop a KILL 2>/dev/null
check "the record goes with the runtime" wait_for 10 has_line "$T/r2.err" \
    "runtime pid $(pid_of a) .* went away"
start_fakert b --connect "$T/rt.sock" --listen "$T/b.sock" --name Billing
wait_for 10 has_line "$T/r2.err" "runtime pid $(pid_of b) .* connected on"
is "a runtime after it: its own answer, not the one before" \
    "$(reply "$T/tools.sock" "$V0")" "$(reply "$T/b.sock" "$V0")"

# Tools at once, before anything is kept: the runtime serves one command
# at a time, and those that waited get the first one's answer.
own=$(reply "$T/b.sock" "$V8")
before=$(asks b 0x08)
i=0
at=""
while [ $i -lt 20 ]; do
	reply "$T/tools.sock" "$V8" >"$T/at.$i" &
	at="$at $!"
	i=$((i + 1))
done
# shellcheck disable=SC2086
wait $at
is "20 asks at once: each the runtime's answer" \
    "$(cat "$T"/at.* | grep -c "^$own\$")" 20
is "... which one of them reached" "$(( $(asks b 0x08) - before ))" 1
stop_dsroute r2
stop b

# --- Found by dir:, shown by a mirror: the probe's ProcessInfo2 is kept.
D=$T/d
W=$T/w
mkdir -m 0700 "$D" "$W"
runtime_in f "$D"
F=$(pid_of f)
own=$(reply "$D/dotnet-diagnostic-$F-"*-socket "$V4")
start_dsroute m -v debug "dir:$W,listen" "dir:$D"
check "the mirror shows the runtime found" \
    wait_for 10 eval '[ -n "$(standin_of m $F)" ]'
S=$(standin_of m "$F")
is "ProcessInfo2 on its stand-in's name, $N times, the runtime's own bytes" \
    "$(same_n "$(plain "$W" "$S")" "$V4" "$own")" $N
is "... none but the router's probe reached it" "$(asks f 0x04)" 2
own=$(reply "$D/dotnet-diagnostic-$F-"*-socket "$V8")
is "ProcessInfo3 there, $N times, its own bytes" \
    "$(same_n "$(plain "$W" "$S")" "$V8" "$own")" $N
is "... one reached it" "$(asks f 0x08)" 2
stop_dsroute m
stop f

# --- Listed over a link: the workstation keeps its own, the node too.
start_dsroute node -v debug tcp:127.0.0.1:0 "uds:$T/n.sock,listen"
start_fakert g --connect "$T/n.sock" --listen "$T/g.sock" --name Linked.App
G=$(pid_of g)
start_dsroute ws -v debug --link-poll 0.5 "dir:$W,listen" \
    "tcp:127.0.0.1:$(port_of node local),connect,peer=router"
check "the workstation mirrors the node's runtime" \
    wait_for 10 eval '[ -n "$(standin_of ws $G)" ]'
SG=$(standin_of ws "$G")
for v in 0x00:$V0 0x04:$V4 0x08:$V8; do
	id=${v%%:*}
	hex=${v#*:}
	own=$(reply "$T/g.sock" "$hex")
	before=$(asks g "$id")
	is "linked, ProcessInfo $id: $N asks, each the runtime's own bytes" \
	    "$(same_n "$(plain "$W" "$SG")" "$hex" "$own")" $N
	check "... of which at most one reached the runtime" \
	    [ "$(( $(asks g "$id") - before ))" -le 1 ]
done
is "... none of them crossed the link but the first of each" \
    "$(count_lines "$T/node.err" '^info: session [0-9]+: .*command=ProcessInfo')" 3
stop_dsroute ws
stop_dsroute node
stop g

done_testing
