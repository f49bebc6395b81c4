#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Who may offer itself as a runtime, and what an advertise can do
# (dsroute(1), "Who may advertise"; docs/threat-model.md): never reach a
# runtime, never come from the network by default, never claim a pid or
# a cookie that is not the peer's, never fill the router with parked
# connections, never flood the log, and a refused runtime is held, not
# made to redial in a loop.  Each refusal is audited and no byte of it
# reaches a runtime.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

CROWD=$top_builddir/tests/crowd
COOKIE=00112233445566778899aabbccddeeff
# advr PID [COOKIE]: an advertise, as hex.
advr() {
	printf '414456525f563100%s' "${2:-$COOKIE}"
	printf '%016x' "$1" | sed 's/\(..\)/\1 /g' |
	    awk '{ for (i = NF; i > 0; i--) printf "%s", $i }'
	printf '0000\n'
}
denied() {
	count_lines "$T/$1.err" "command=advertise decision=deny .*rule=\"$2\""
}

# --- A runtime never gets an advertise -----------------------------------

# client-server on a runtime's port: an advertise over TCP is refused,
# whatever the TCP side's policy, and the runtime gets no byte.
start_fakert rt0 --listen "$T/rt0.sock"
start_dsroute p --handshake-timeout 2 "uds:$T/rt0.sock" \
    "tcp:127.0.0.1:0,policy=none,advertise=any"
rx0=$(runtime_rx rt0)
bg adv0 "$FAKETOOL" --timeout 30 "tcp:127.0.0.1:$(port_of p remote)" raw \
    "$(advr 4242)" --hold-ms 3000
check "to a runtime's port: refused" wait_for 10 eval \
    "[ \$(denied p 'peer=runtime') -ge 1 ]"
check "the runtime still answers at once" tool --timeout 2 "$T/rt0.sock" \
    processinfo
is "not a byte of it reached the runtime: only that ProcessInfo" \
    "$(runtime_rx rt0) $(grep -E '^(command|bad-message [^s])' "$T/rt0.ev")" \
    "$((rx0 + 20)) command 0x04 0x00 20 ProcessInfo"
stop adv0
stop_dsroute p

# server-client, the iOS shape: a local advertise toward a runtime that
# listens on TCP is refused the same way.
start_fakert rt1 --listen tcp:127.0.0.1:0
start_dsroute q --handshake-timeout 2 "uds:$T/q.sock" \
    "tcp:127.0.0.1:$(fakert_port rt1),connect"
tool --timeout 10 "$T/q.sock" raw "$(advr $$)" --hold-ms 500
is "to a runtime listening on TCP: refused" "$(denied q 'peer=runtime')" 1
is "it got no connection, no byte" "$(count_lines "$T/rt1.ev" '^accept')" 0
stop_dsroute q
stop rt1

# A runtime's default port cannot be made a listening tool.
refused "peer=tool on a runtime's default port is refused" \
    "is named like a runtime's default diagnostic port" \
    "uds:$T/dotnet-diagnostic-4242-1-socket,connect,peer=tool" \
    tcp:127.0.0.1:0
refused "advertise= on a connect endpoint is refused" \
    'advertise= is for listeners' "uds:$T/x.sock,connect,advertise=any" \
    tcp:127.0.0.1:0
refused "peer= on a listener is refused" 'peer= is for connect endpoints' \
    "uds:$T/x.sock,listen,peer=tool" tcp:127.0.0.1:0
refused "advertise=none goes alone" 'cannot go with other' \
    "uds:$T/x.sock,advertise=none,advertise=uid:0" tcp:127.0.0.1:0

# --- Network peers may not advertise unless granted ----------------------

start_dsroute n -v debug --handshake-timeout 1 --backend-wait 1 \
    "uds:$T/n.sock" tcp:127.0.0.1:0
start_fakert rt2 --connect "tcp:127.0.0.1:$(port_of n remote)"
check "a network runtime is refused by default" wait_for 10 eval \
    "[ \$(denied n 'default: a network peer') -ge 1 ]"
tool --timeout 10 "$T/n.sock" processinfo
like "a tool gets no runtime" "$(cat "$T/tool.out")" '^(eof|error)'
is "and the network runtime no command" \
    "$(count_lines "$T/rt2.ev" '^command')" 0
# Held, not closed at once: a runtime redials the moment its connection
# closes, and the real one did so 18,000 times a second.
a0=$(count_lines "$T/rt2.ev" '^advertise')
sleep 3		# three holds of 1 s; counting, not a sync
a1=$(count_lines "$T/rt2.ev" '^advertise')
echo "# a refused runtime dialled $((a1 - a0)) times in 3 s"
check "a refused runtime is held: it redials at most once a second" \
    test $((a1 - a0)) -le 4
check "its audit line names the runtime and its address" has_line \
    "$T/n.err" 'peer="tcp:127\.0\.0\.1:[0-9]+" addr=127\.0\.0\.1:[0-9]+ runtime_pid=[0-9]+ cookie=[0-9a-f]{32} command=advertise decision=deny'
before=$(count_lines "$T/n.err" '^info: audit: .*command=advertise')
"$CROWD" advertise 200 "tcp:127.0.0.1:$(port_of n remote)" >"$T/crowd.out"
after=$(count_lines "$T/n.err" '^info: audit: .*command=advertise')
echo "# $((after - before)) audit lines for 200 refused advertises"
check "200 refused advertises: at most 3 audit lines" \
    test $((after - before)) -le 3
check "the rest are counted" wait_for 5 has_line "$T/n.err" \
    '^info: [0-9]+ more advertise refusals not logged'
stop rt2
stop_dsroute n

start_dsroute g --backend-wait 5 "uds:$T/g.sock" \
    tcp:127.0.0.1:0,advertise=addr:127.0.0.1
start_fakert rt3 --connect "tcp:127.0.0.1:$(port_of g remote)"
check "advertise=addr: grants a network runtime" tool --timeout 10 \
    "$T/g.sock" processinfo
is "... and its answer comes back" "$(field pid "$T/tool.out")" \
    "$(pid_of rt3)"
stop rt3
stop_dsroute g

# --- Claims: the pid, the cookie -----------------------------------------

if [ "$(id -u)" -eq 0 ]; then
	chmod 0755 "$T"
	# A group-shared socket, as a sidecar with another app uid has it.
	start_dsroute u -v debug --handshake-timeout 2 --backend-wait 2 \
	    "uds:$T/u.sock,listen,mode=0666" tcp:127.0.0.1:0,policy=full
	uaddr="tcp:127.0.0.1:$(port_of u remote)"
	bg imp setpriv --reuid=nobody --regid=nogroup --clear-groups \
	    "$FAKETOOL" --timeout 30 "$T/u.sock" raw "$(advr 0)" \
	    --own-pid-at 24 --hold-ms 5000
	check "another local uid may not advertise" wait_for 10 eval \
	    "[ \$(denied u 'default: another local uid') -ge 1 ]"
	tool --timeout 10 "$uaddr" processinfo
	like "a network tool's command reaches no impostor" \
	    "$(cat "$T/tool.out")" '^(eof|error)'
	stop imp
	stop_dsroute u

	# Granted, it may advertise its own pid, and no other.
	start_dsroute v -v debug --handshake-timeout 2 --backend-wait 5 \
	    "uds:$T/v.sock,listen,mode=0666,advertise=uid:nobody" \
	    tcp:127.0.0.1:0,policy=full
	vaddr="tcp:127.0.0.1:$(port_of v remote)"
	bg pid1 setpriv --reuid=nobody --regid=nogroup --clear-groups \
	    "$FAKETOOL" --timeout 30 "$T/v.sock" raw "$(advr 1)" --hold-ms 3000
	check "advertise=uid: a claim of another pid is still refused" \
	    wait_for 10 eval "[ \$(denied v pid-mismatch) -ge 1 ]"
	check "the audit line has the claimed pid and the peer's own" \
	    has_line "$T/v.err" "uid=65534 gid=65534 pid=$(pid_of pid1) runtime_pid=1 .*command=advertise"
	stop pid1
	# The real runtime parks with its cookie; nobody claims it too.
	start_fakert rt4 --connect "$T/v.sock" --cookie $COOKIE
	wait_for 10 has_line "$T/v.err" "runtime pid $(pid_of rt4) .* connected"
	check "the runtime serves" tool --timeout 10 "$vaddr" processinfo
	bg thief setpriv --reuid=nobody --regid=nogroup --clear-groups \
	    "$FAKETOOL" --timeout 30 "$T/v.sock" raw "$(advr 0)" \
	    --own-pid-at 24 --hold-ms 3000
	check "a known cookie from another peer is refused" \
	    wait_for 10 has_line "$T/v.err" 'refused: the cookie is runtime pid'
	check "the runtime's own connection stays, and serves" tool \
	    --timeout 10 "$vaddr" processinfo
	is "... its answer, not the thief's" "$(field pid "$T/tool.out")" \
	    "$(pid_of rt4)"
	is "the runtime was never replaced" \
	    "$(count_lines "$T/v.err" 'replaces the parked one')" 0
	stop thief
	stop rt4
	stop_dsroute v
else
	for t in "another local uid may not advertise" \
	    "a claim of another pid" "a known cookie from another peer"; do
		skip "$t" "needs root to run a peer as another uid"
	done
fi

# --- Parked runtimes are bounded in all and per peer ---------------------

start_dsroute c -v debug --handshake-timeout 1 --max-runtimes 6 \
    --max-runtimes-per-peer 3 "uds:$T/c.sock" tcp:127.0.0.1:0,advertise=any
caddr="tcp:127.0.0.1:$(port_of c remote)"
start_fakert rt5 --connect "$caddr"
wait_for 10 has_line "$T/c.err" "runtime pid $(pid_of rt5) .* connected"
check "the first runtime serves" tool --timeout 10 "$T/c.sock" processinfo
"$CROWD" advertise 40 "$caddr" hold >"$T/flood.out" 2>&1 &
echo $! >"$T/flood.pid"
_pids="$_pids $!"
wait_for 10 has_line "$T/flood.out" '^advertise: sent='
is "a flood of 40 new cookies: 2 more parked (3 from this peer)" \
    "$(count_lines "$T/c.err" '^info: runtime pid [0-9]+ .* connected')" 3
check "the rest are refused, said so" has_line "$T/c.err" \
    'refused: 3 runtime connections of this peer are parked \(--max-runtimes-per-peer\)'
check "in at most a few lines" \
    test "$(count_lines "$T/c.err" '^warn: .*refused: ')" -le 3
for i in 1 2 3; do
	check "the known runtime still redials and serves ($i)" \
	    tool --timeout 10 "$T/c.sock" processinfo
done
is "... its own answers" "$(field pid "$T/tool.out")" "$(pid_of rt5)"
kill "$(cat "$T/flood.pid")" 2>/dev/null
stop rt5
stop_dsroute c

# --- A listening tool may hold an offer for --offer-timeout only ---------

bg lt "$FAKETOOL" --timeout 30 "$T/lt.sock,listen" raw "" --hold-ms 30000
wait_for 10 test -S "$T/lt.sock"
start_dsroute o --offer-timeout 1 "uds:$T/lt.sock,peer=tool" \
    tcp:127.0.0.1:0,advertise=any
start_fakert rt6 --connect "tcp:127.0.0.1:$(port_of o remote)"
check "a tool that sends no command loses the offer" wait_for 10 has_line \
    "$T/o.err" 'end="the tool sent no command within 1\.0s \(--offer-timeout\)"'
check "the runtime sees its connection end, and dials again" \
    wait_for 10 eval "[ \$(count_lines '$T/rt6.ev' '^advertise') -ge 2 ]"
stop rt6
stop lt
stop_dsroute o

done_testing
