#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A mirror linked to another router (peer=router): the workstation's router
# lists the node router's runtimes (ListRuntimes) and shows each as a local
# stand-in; a tool's command for one goes to the node with SelectRuntime in
# front, and the node judges it under its own ACL.  Over TCP and TLS; a node
# that refuses, is away, is no dsroute, or lies is survived with one line;
# one that restarts keeps the stand-ins' pids (--link-grace).

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

make_base_certs

W=$T/ws
mkdir -m 700 "$W"
start_dsroute node -v debug tcp:127.0.0.1:0 "uds:$T/rt.sock,listen"
NP=$(port_of node local)
start_fakert a --connect "$T/rt.sock" --name Orders.Api
start_fakert b --connect "$T/rt.sock" --name Billing
A=$(pid_of a)
B=$(pid_of b)
start_dsroute ws -v debug --link-poll 0.5 --link-grace 1 "dir:$W,listen" \
    "tcp:127.0.0.1:$NP,connect,peer=router"
check "the workstation mirrors the node's runtime a" \
    wait_for 10 eval '[ -n "$(standin_of ws $A)" ]'
check "... and b" wait_for 10 eval '[ -n "$(standin_of ws $B)" ]'
SA=$(standin_of ws "$A")
SB=$(standin_of ws "$B")
like "the workstation says where the node found it" \
    "$(grep "runtime pid $A " "$T/ws.err" | grep 'is listed by' | head -n 1)" \
    "is listed by tcp:127\.0\.0\.1:$NP, where it is on uds:$T/rt\.sock$"
is "a's stand-in is named after the app" "$(cat /proc/$SA/comm)" "Orders.Api"
is "... its command line says what it stands for, not the app's words" \
    "$(tr '\0' ' ' </proc/$SA/cmdline)" \
    "Orders.Api [dsroute stand-in for pid $A on tcp:127.0.0.1:$NP] "

# dsroute ps: the node's runtimes over the network, the mirror's locally.
"$DSROUTE" ps "tcp:127.0.0.1:$NP" >"$T/ps.out" 2>"$T/ps.err"
is "dsroute ps lists the node's runtimes" "$?" 0
like "... a, by pid, name and how it was found" "$(grep "^ *$A " "$T/ps.out")" \
    "^ *$A +Orders\.Api +advertise +0\.0\.0-fake +fakert "
like "... and b" "$(grep "^ *$B " "$T/ps.out")" "^ *$B +Billing +advertise "
"$DSROUTE" ps "dir:$W" >"$T/psw.out" 2>"$T/psw.err"
is "dsroute ps dir: lists the workstation's mirror" "$?" 0
like "... a's stand-in, the pid it stands for, a ready --diagnostic-port, its command line" \
    "$(grep "^ *$SA " "$T/psw.out")" \
    "^ *$SA +$A +Orders\.Api +tcp:127\.0\.0\.1:$NP +$W/dsroute-Orders\.Api-$A-[0-9a-f]{8}-socket,connect +fakert .*--name Orders\.Api$"
"$DSROUTE" ps "uds:$(ls "$W"/dsroute-Orders.Api-*)" >"$T/psm.out" 2>"$T/psm.err"
like "dsroute ps on a mirror's name lists the linked runtimes, one hop away" \
    "$(grep "^ *$B " "$T/psm.out")" "^ *$B +Billing +link\\+1 "

# Each stand-in's name reaches its own runtime on the node.
check "a tool on a's name is served" tool --timeout 10 "$(plain "$W" "$SA")" processinfo2
is "... by runtime a, on the node" "$(field pid "$T/tool.out")" "$A"
check "a tool on b's name is served" tool --timeout 10 "$(plain "$W" "$SB")" processinfo2
is "... by runtime b" "$(field pid "$T/tool.out")" "$B"
check "a stream from b through both routers ends whole" \
    tool --timeout 30 "$(plain "$W" "$SB")" collect --stop-after-bytes 3000000
is "the runtimes never saw a dsroute command" \
    "$(cat "$T/a.ev" "$T/b.ev" | grep -c '^command 0xd5')" 0
check "the node served the command for the runtime SelectRuntime named" \
    wait_for 10 has_line "$T/node.err" \
    "command=ProcessInfo2 tool=tcp:.* runtime_pid=$B cookie=[0-9a-f]{32} .*answer=ok decision=allow"

# The node's ACL decides: a network peer may not dump by default.
DUMP=070000002f0074006d0070002f00780000000100000000000000
tool --timeout 10 "$(plain "$W" "$SA")" command 1 1 "$DUMP"
is "a dump through the link is refused by the node's default ACL" \
    "$(field hresult "$T/tool.out")" "0x80070005"
check "... the node's audit line says why" wait_for 10 has_line \
    "$T/node.err" 'audit:.*command=GenerateCoreDump decision=deny role=operate role_from="default: a network peer"'
check "... and the workstation says a router on the way refused it" \
    wait_for 10 has_line "$T/ws.err" "GenerateCoreDump .*a router on the way refused it"
is "... and runtime a never saw it" "$(count_lines "$T/a.ev" '^command 0x01 ')" 0

# A runtime that goes on the node goes on the workstation; a new one comes.
stop a KILL
check "a runtime that goes on the node leaves the workstation's mirror" \
    wait_for 10 eval '[ -z "$(plain "$W" "$SA")" ]'
check "... once --link-grace is over" eval "grep -n '' '$T/ws.err' |
    grep -A99 'runtime pid $A .* is not listed by tcp:127.0.0.1:$NP; it keeps its stand-in for 1.0s (--link-grace)' |
    grep -q 'runtime pid $A .* is no longer listed by'"
check "... with one line" has_line "$T/ws.err" \
    "runtime pid $A .* is no longer listed by tcp:127\.0\.0\.1:$NP"
check "... and its stand-in ends" wait_for 10 eval "! kill -0 $SA"
start_fakert c --connect "$T/rt.sock" --name Shipping
RC=$(pid_of c)
check "a new runtime on the node appears on the workstation" \
    wait_for 10 eval '[ -n "$(standin_of ws $RC)" ]'

# The node goes away: said once; its runtimes stay for a while, then go;
# it comes back: said once, and they are back.
stop_dsroute node
check "a node that is away is said once" \
    wait_for 10 has_line "$T/ws.err" "cannot list the linked router's runtimes: Connection refused"
check "... its runtimes leave the mirror after --link-grace" \
    wait_for 10 eval '[ -z "$(plain "$W" "$(standin_of ws $RC)")" ]'
is "... and it was said once, not at each try" \
    "$(count_lines "$T/ws.err" "cannot list the linked router's runtimes")" 1
start_dsroute node2 -v debug "tcp:127.0.0.1:$NP" "uds:$T/rt.sock,listen"
check "the node back: said once" \
    wait_for 15 has_line "$T/ws.err" "the linked router answers again"
stop_dsroute node2
stop_dsroute ws
is "the workstation's mirror is empty after SIGTERM" "$(ls "$W" | wc -l)" 0
stop b
stop c

# A node router restarts: it lists nothing at first, its runtimes dial it
# again and are listed once known.  Within --link-grace (30 s by default)
# the workstation keeps each stand-in, so a pid a tool was given stays.
start_dsroute rn -v debug tcp:127.0.0.1:0 "uds:$T/rt4.sock,listen"
RP=$(port_of rn local)
start_fakert g --connect "$T/rt4.sock" --name Restart.App
G=$(pid_of g)
start_dsroute rw --link-poll 0.3 "dir:$W,listen" \
    "tcp:127.0.0.1:$RP,connect,peer=router"
check "the node's runtime is mirrored" \
    wait_for 10 eval '[ -n "$(standin_of rw $G)" ]'
SG=$(standin_of rw "$G")
stop_dsroute rn
check "while the node is down, the workstation cannot list it" wait_for 10 \
    has_line "$T/rw.err" "cannot list the linked router's runtimes"
check "... and says it keeps the stand-in" wait_for 5 has_line "$T/rw.err" \
    "runtime pid $G .* is not listed by tcp:127\.0\.0\.1:$RP; it keeps its stand-in for 30\.0s \(--link-grace\)"
start_dsroute rn2 -v debug "tcp:127.0.0.1:$RP" "uds:$T/rt4.sock,listen"
check "the restarted node has the runtime again" wait_for 15 has_line \
    "$T/rn2.err" "runtime pid $G .* connected on uds:"
check "... and that it is listed again" wait_for 15 has_line "$T/rw.err" \
    "runtime pid $G .* is listed by tcp:127\.0\.0\.1:$RP again; it keeps its record and its stand-in"
check "the stand-in's pid is the one from before the restart" \
    eval "kill -0 $SG && [ \"\$(standin_of rw $G)\" = $SG ]"
is "... mirrored once, never replaced" \
    "$(count_lines "$T/rw.err" "runtime pid $G .* is mirrored as pid")" 1
check "a tool on that pid's name is served by the runtime, through the new node" \
    tool --timeout 10 "$(plain "$W" "$SG")" processinfo2
is "... runtime g" "$(field pid "$T/tool.out")" "$G"
stop_dsroute rw
stop_dsroute rn2
stop g

# A node whose ACL does not let this router list: one line naming the role.
start_fakert d --connect "$T/rt2.sock"
start_dsroute node3 "tcp:127.0.0.1:0,policy=none" "uds:$T/rt2.sock,listen"
start_dsroute ws3 --link-poll 0.3 "dir:$W,listen" \
    "tcp:127.0.0.1:$(port_of node3 local),connect,peer=router"
check "a node that refuses the listing is said once, naming the role" \
    wait_for 10 has_line "$T/ws3.err" \
    "it refused the listing: 0x80070005 .*its ACL must give this router the observe role"
sleep 1
is "... once" "$(count_lines "$T/ws3.err" "refused the listing")" 1
stop_dsroute ws3
stop_dsroute node3
stop d

# A peer that is no dsroute: a runtime listening on TCP.
start_fakert e --listen tcp:127.0.0.1:0
start_dsroute ws4 --link-poll 0.3 "dir:$W,listen" \
    "tcp:127.0.0.1:$(fakert_port e),connect,peer=router"
check "a peer that is no dsroute is said so, once" \
    wait_for 10 has_line "$T/ws4.err" "is it a dsroute, and new enough\?"
is "... and nothing is mirrored" "$(ls "$W" | wc -l)" 0
stop_dsroute ws4
stop e

# Over TLS, each side authenticating the other.
start_dsroute tnode -v debug \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,allow-cn=client1,observe=cn:client1,operate=cn:client1" \
    "uds:$T/rt3.sock,listen"
start_fakert f --connect "$T/rt3.sock" --name Tls.App
start_dsroute tws --link-poll 0.5 "dir:$W,listen" \
    "tls:127.0.0.1:$(port_of tnode local),connect,peer=router,ca=$C/ca.pem,$(cert client1)"
check "a node is listed over TLS" \
    wait_for 15 eval '[ -n "$(standin_of tws $(pid_of f))" ]'
check "a tool is served through the TLS link" \
    tool --timeout 10 "$(plain "$W" "$(standin_of tws "$(pid_of f)")")" processinfo
is "... by the node's runtime" "$(field pid "$T/tool.out")" "$(pid_of f)"
stop_dsroute tws
stop_dsroute tnode
stop f

# A node that lies: hostile listings are survived, names made safe.
# serve PORTFILE ANSWERFILE: answer every connection with the file's bytes.
serve() {
	bg "$1" python3 -c '
import socket, sys
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(8)
open(sys.argv[1], "w").write(str(s.getsockname()[1]))
data = open(sys.argv[2], "rb").read()
while True:
    c, _ = s.accept(); c.recv(64); c.sendall(data); c.close()
' "$T/$1.port" "$2"
	wait_for 10 test -s "$T/$1.port"
}

# entry NAME PID HOPS: one ENTRY frame (docs/extension.md), hex.
entry() {
	python3 -c '
import struct, sys, os
name, pid, hops = sys.argv[1].encode(), int(sys.argv[2]), int(sys.argv[3])
strs = [name, b"/usr/bin/dotnet app.dll", b"Linux", b"x64", b"10.0.0", b"uds:/x"]
body = struct.pack("<H", 1) + os.urandom(16) + struct.pack("<QBB", pid, 4, hops)
for x in strs: body += struct.pack("<H", len(x)) + x
hdr = b"DOTNET_IPC_V1\0" + struct.pack("<HBBH", 20 + len(body), 0xd5, 3, 0)
sys.stdout.buffer.write(hdr + body)' "$@"
}

# end COUNT: the END frame.
end_frame() {
	python3 -c '
import struct, sys
sys.stdout.buffer.write(b"DOTNET_IPC_V1\0" + struct.pack("<HBBHHI", 26, 0xff, 0, 0, 1, int(sys.argv[1])))' "$1"
}

{ entry "../../etc/passwd" 41 0; entry "$(printf 'Bad\033[31mName')" 42 0
  entry Looped 43 7; end_frame 3; } >"$T/hostile.bin"
serve liar "$T/hostile.bin"
start_dsroute ws5 --link-poll 0.3 "dir:$W,listen" \
    "tcp:127.0.0.1:$(cat "$T/liar.port"),connect,peer=router"
check "a listed name with a path in it is made safe" \
    wait_for 10 eval 'ls "$W" | grep -Eq "^dsroute-[A-Za-z0-9_+-][A-Za-z0-9._+-]*etc_passwd-41-"'
check "... and control bytes never reach a name or the log" \
    wait_for 10 eval 'ls "$W" | grep -Eq "^dsroute-Bad_+31mName-42-"'
is "no file was made outside the mirror" "$(ls "$T" | grep -c passwd)" 0
check "a runtime listed through 8 routers is taken for a loop" \
    wait_for 10 has_line "$T/ws5.err" "runtime pid 43 is listed through 8 routers: a loop of links\? passed over"
check "the log has no escape byte" eval "! grep -q \"$(printf '\033')\" '$T/ws5.err'"
stop_dsroute ws5
stop liar

{ entry One 51 0; end_frame 2; } >"$T/short.bin"
serve short "$T/short.bin"
start_dsroute ws6 --link-poll 0.3 "dir:$W,listen" \
    "tcp:127.0.0.1:$(cat "$T/short.port"),connect,peer=router"
check "a listing whose count is not its entries is a protocol error, said once" \
    wait_for 10 has_line "$T/ws6.err" "the listing's count is not its number of entries"
check "... and the router stays up" alive ws6
stop_dsroute ws6
stop short

head -c 5000 /dev/urandom >"$T/junk.bin"
serve junk "$T/junk.bin"
start_dsroute ws7 --link-poll 0.3 "dir:$W,listen" \
    "tcp:127.0.0.1:$(cat "$T/junk.port"),connect,peer=router"
check "a node that answers junk is said once" \
    wait_for 10 has_line "$T/ws7.err" "protocol error: an answer that is no listing"
is "... and nothing is mirrored" "$(ls "$W" | wc -l)" 0
stop_dsroute ws7
stop junk

# app=: a node's listener shows and serves only the runtimes it names.
start_dsroute anode -v debug "tcp:127.0.0.1:0,app=Bill*" "uds:$T/rt4.sock,listen"
AP=$(port_of anode local)
start_fakert o --connect "$T/rt4.sock" --name Orders.Api
start_fakert p --connect "$T/rt4.sock" --name Billing
wait_for 10 eval "[ \$(count_lines '$T/anode.err' 'connected on uds:') -ge 2 ]"
wait_for 10 eval '"$DSROUTE" ps "tcp:127.0.0.1:$AP" | grep -q Billing'
"$DSROUTE" ps "tcp:127.0.0.1:$AP" >"$T/aps.out" 2>&1
like "app=: the listing holds the runtime it names" "$(cat "$T/aps.out")" \
    "$(pid_of p) +Billing "
is "... and not the other" "$(grep -c Orders "$T/aps.out")" 0
check "app=: a plain tool is served by the runtime it names" \
    tool --timeout 10 "tcp:127.0.0.1:$AP" repeat 3 processinfo
is "... always that one, though the other advertised too" \
    "$(count_lines "$T/o.ev" '^command 0x04 0x00 ')" 0
# SelectRuntime naming the other runtime, then ProcessInfo, by hand.
OC=$(sed -n "s/^info: runtime pid $(pid_of o) (cookie \([0-9a-f]*\)) connected.*/\1/p" \
    "$T/anode.err" | head -n 1)
SELECT=444f544e45545f4950435f5631002600d50200000100$OC
PINFO=444f544e45545f4950435f563100140004000000
tool --timeout 10 "tcp:127.0.0.1:$AP" raw "${SELECT}${PINFO}"
like "app=: SelectRuntime of a runtime it does not name is refused" \
    "$(cat "$T/tool.out")" "reply 444f544e45545f4950435f5631001800ffff000005000780"
check "... with an audit line naming app=" wait_for 10 has_line "$T/anode.err" \
    "audit: .*cookie=$OC command=ProcessInfo decision=deny .*rule=\"app=, cmdline=, found=\""
is "... and the runtime never saw it" \
    "$(count_lines "$T/o.ev" '^command 0x04 0x00 ')" 0
refused "app= on a route that dials its one runtime is refused at start-up" \
    "app=, cmdline= and found= name runtimes the router knows by their ProcessInfo" \
    "uds:$T/y.sock,listen,app=X" "uds:$T/rt4.sock,connect"
stop_dsroute anode
stop o
stop p

# Start-up: peer=router reaches a router for the tools of a listener.
refused "peer=router where the other side dials too is refused" \
    "peer=router reaches another dsroute for the tools of the other endpoint" \
    "uds:$T/x.sock,connect" "tcp:127.0.0.1:1,connect,peer=router"

done_testing
