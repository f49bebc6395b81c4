#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Session limits: --max-sessions and --max-sessions-per-peer (by address,
# by uid, by TLS certificate) refuse a connection before reading it and
# count down as sessions end; --idle-timeout cuts a quiet forwarding
# session, only when given, and never a parked runtime connection.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/netns.sh"
. "$top_srcdir/tests/lib/lib.sh"

CROWD=$top_builddir/tests/crowd
command -v socat >/dev/null || skip_all "socat(1) is not installed"
printf 'DOTNET_IPC_V1\000\024\000\004\000\000\000' >"$T/processinfo.bin"

# hold NAME N ADDR [SOURCE]: N silent connections from SOURCE, open
# until "stop NAME".  Its stdin is a FIFO it holds open itself, so that
# only the signal ends it.
hold() {
	mkfifo "$T/$1.fifo"
	bg "$1" sh -c "exec \"$CROWD\" hold $2 120 $3 ${4:-} <>\"$T/$1.fifo\""
	wait_for 10 has_line "$T/$1.out" '^hold: opened='
}

# probe PORT SOURCE: a ProcessInfo from SOURCE; print the reply's size.
probe() {
	socat -t 10 -T 10 - "TCP:127.0.0.1:$1,bind=$2" \
	    <"$T/processinfo.bin" 2>/dev/null | wc -c
}

# as_nobody COMMAND...: run it as uid nobody, its output in $T/nobody.out.
as_nobody() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups "$@" \
	    >"$T/nobody.out" 2>&1
}

refusals() {
	count_lines "$T/$1.err" "$2"
}

# By address, and in all: 8 per peer, 12 in all.
start_fakert rt --listen "$T/rt.sock" --pid 7001
start_dsroute d --handshake-timeout 60 --max-sessions 12 \
    --max-sessions-per-peer 8 "uds:$T/rt.sock" tcp:127.0.0.1:0
port=$(port_of d remote)
dpid=$(pid_of d)
like "the descriptor budget is logged" "$(cat "$T/d.err")" \
    '^info: descriptors: limit [0-9]+, [0-9]+ open; up to 12 sessions'
like "the soft descriptor limit is raised to the hard one" \
    "$(grep '^Max open files' "/proc/$dpid/limits")" \
    'Max open files +([0-9]+) +\1 '
check "a first ProcessInfo is served" test "$(probe "$port" 127.0.0.1)" -gt 20
base=$(fd_count "$dpid")

hold h1 8 "tcp:127.0.0.1:$port" 127.0.0.1
wait_for 10 eval "[ \$(fd_count $dpid) -eq $((base + 8)) ]"
is "8 sessions of 127.0.0.1 are open" "$(fd_count "$dpid")" $((base + 8))
is "per peer: a 9th from 127.0.0.1 is refused without a reply" \
    "$(probe "$port" 127.0.0.1)" 0
check "per peer: one warning names the peer and the limit" \
    wait_for 5 has_line "$T/d.err" \
    '^warn: tcp:127\.0\.0\.1:[0-9]+: refused a connection from loopback: 8 sessions of this peer are open \(--max-sessions-per-peer\)$'
is "per peer: the runtime saw one command only" \
    "$(count_lines "$T/rt.ev" '^command')" 1
# Every loopback address is this host: 127.0.0.0/8 is one peer.
is "per peer: 127.0.0.2 is the same peer, loopback, and refused" \
    "$(probe "$port" 127.0.0.2)" 0
check "per peer: the warning names it loopback" \
    wait_for 5 has_line "$T/d.err" 'refused a connection from loopback: '

# Other peers: addresses of this namespace's own, not loopback ones.
if [ -n "${DSR_NETNS_PRIVATE:-}" ] &&
    ip addr add 10.99.0.2/32 dev lo 2>/dev/null &&
    ip addr add 10.99.0.3/32 dev lo 2>/dev/null; then
	check "per peer: 10.99.0.2 is still served" \
	    test "$(probe "$port" 10.99.0.2)" -gt 20
	others=4
	hold h2 $others "tcp:127.0.0.1:$port" 10.99.0.2
	wait_for 10 eval "[ \$(fd_count $dpid) -eq $((base + 12)) ]"
	is "12 sessions are open in all" "$(fd_count "$dpid")" \
	    $((base + 12))
	is "in all: a 13th, from 10.99.0.3, is refused" \
	    "$(probe "$port" 10.99.0.3)" 0
else
	for _t in "per peer: 10.99.0.2 is still served" \
	    "12 sessions are open in all" "in all: a 13th is refused"; do
		skip "$_t" "no private network namespace for other addresses"
	done
	others=0
fi

# A flood of refused connections: one warning line, not one each.
before=$(refusals d '^warn: .*refused a connection')
"$CROWD" cycles 200 "tcp:127.0.0.1:$port" >"$T/flood.out"
is "a flood of 200 over the limit: all refused" "$(cat "$T/flood.out")" \
    "cycles: ok=0 failed=200"
after=$(refusals d '^warn: .*refused a connection')
echo "# refusal warnings: $before before the flood, $after after"
check "the flood is logged in at most 2 rate-limited lines" \
    test $((after - before)) -le 2
check "the router is still up" alive d

stop h1
wait_for 10 eval "[ \$(fd_count $dpid) -eq $((base + others)) ]"
is "counted down: 127.0.0.1's sessions ended" "$(fd_count "$dpid")" \
    $((base + others))
check "counted down: 127.0.0.1 is served again" \
    test "$(probe "$port" 127.0.0.1)" -gt 20
[ "$others" -eq 0 ] || stop h2
wait_for 10 eval "[ \$(fd_count $dpid) -eq $base ]"
is "descriptors back to the baseline" "$(fd_count "$dpid")" "$base"
hold h3 8 "tcp:127.0.0.1:$port" 127.0.0.1
check "counted down: 8 from one peer open again" \
    wait_for 10 eval "[ \$(fd_count $dpid) -eq $((base + 8)) ]"
stop h3
stop_dsroute d

# The limits are settings of the configuration file too.
cat >"$T/limits.conf" <<EOF
max-sessions = 10
max-sessions-per-peer = 2
idle-timeout = 30

[main]
local = uds:$T/rt.sock
remote = tcp:127.0.0.1:0
EOF
start_dsroute f --handshake-timeout 60 -f "$T/limits.conf"
fport=$(port_of f remote)
fbase=$(fd_count "$(pid_of f)")
like "from the file: the budget names its limits" "$(cat "$T/f.err")" \
    'up to 10 sessions \(--max-sessions\) of 2 each, 2 per peer'
hold h5 2 "tcp:127.0.0.1:$fport" 127.0.0.1
wait_for 10 eval "[ \$(fd_count $(pid_of f)) -eq $((fbase + 2)) ]"
is "from the file: a third from one peer is refused" \
    "$(probe "$fport" 127.0.0.1)" 0
stop h5
stop_dsroute f

# A local peer is counted by its uid: root's are full, nobody's are not.
if [ "$(id -u)" -eq 0 ]; then
	chmod 0755 "$T"
	start_dsroute u --handshake-timeout 60 --max-sessions-per-peer 3 \
	    "uds:$T/in.sock,listen,mode=0666,observe=uid:nobody" \
	    "uds:$T/rt.sock"
	upid=$(pid_of u)
	ubase=$(fd_count "$upid")
	hold h4 3 "$T/in.sock"
	wait_for 10 eval "[ \$(fd_count $upid) -eq $((ubase + 3)) ]"
	if tool --timeout 10 "$T/in.sock" processinfo; then
		fail "per uid: a 4th from root is refused"
	else
		pass "per uid: a 4th from root is refused"
	fi
	check "per uid: the warning names uid 0" has_line "$T/u.err" \
	    'refused a connection from uid 0: 3 sessions of this peer'
	check "per uid: uid nobody is served meanwhile" as_nobody \
	    "$FAKETOOL" --timeout 10 "$T/in.sock" processinfo
	stop h4
	wait_for 10 eval "[ \$(fd_count $upid) -eq $ubase ]"
	is "per uid: descriptors back to the baseline" "$(fd_count "$upid")" \
	    "$ubase"
	check "per uid: root is served again" \
	    tool --timeout 10 "$T/in.sock" processinfo
	stop_dsroute u
else
	skip "per uid: the limit counts each uid" "needs root for a second uid"
fi

# A TLS peer is counted by its certificate once the handshake verified it.
if command -v openssl >/dev/null; then
	. "$top_srcdir/tests/lib/tls.sh"
	make_base_certs
	mkcert client client2
	start_dsroute t --handshake-timeout 60 --max-sessions-per-peer 2 \
	    "uds:$T/rt.sock,connect" \
	    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
	tport=$(port_of t remote)
	tpid=$(pid_of t)
	tbase=$(fd_count "$tpid")
	for i in 1 2; do
		mkfifo "$T/tls$i.fifo"
		bg "tls$i" sh -c "exec openssl s_client -connect \
		    127.0.0.1:$tport -quiet -CAfile $C/ca.pem \
		    -cert $C/client1.pem -key $C/client1.key <>$T/tls$i.fifo"
	done
	wait_for 15 eval "[ \$(fd_count $tpid) -eq $((tbase + 2)) ]"
	is "per certificate: two held by client1" "$(fd_count "$tpid")" \
	    $((tbase + 2))
	sclient third "$tport" -cert "$C/client1.pem" -key "$C/client1.key"
	is "per certificate: a third from client1 gets no reply" \
	    "$(wc -c <"$T/third.out")" 0
	check "per certificate: the warning names the certificate" \
	    has_line "$T/t.err" "refused a connection from certificate sha256:$(fp client1 | cut -c1-16): 2 sessions of this peer"
	sclient other "$tport" -cert "$C/client2.pem" -key "$C/client2.key"
	check "per certificate: client2, from the same address, is served" \
	    test "$(wc -c <"$T/other.out")" -gt 20
	stop tls1
	stop tls2
	wait_for 10 eval "[ \$(fd_count $tpid) -eq $tbase ]"
	is "per certificate: descriptors back to the baseline" \
	    "$(fd_count "$tpid")" "$tbase"
	stop_dsroute t
else
	skip "per certificate: the limit counts each TLS client" \
	    "openssl(1) is not installed"
fi
stop rt

# The idle timeout.  A runtime that takes a command and never answers:
# an advertise, then silence.
ADVR=414456525f5631000102030405060708090a0b0c0d0e0f10b11b0000000000000000
# 2 s: a reader paced at 1 MB/s on a loaded machine keeps well inside it.
start_dsroute i --idle-timeout 2 "uds:$T/irt.sock" "uds:$T/itool.sock"
iaddr=$T/itool.sock
ipid=$(pid_of i)
ibase=$(fd_count "$ipid")
bg mute "$FAKETOOL" --timeout 60 "$T/irt.sock" raw "$ADVR" --own-pid-at 24 \
    --hold-ms 60000
wait_for 10 has_line "$T/i.err" "runtime pid $(pid_of mute) .* connected"
start=$(date +%s%N)
if tool --timeout 30 "$iaddr" processinfo; then
	fail "idle: a session with no byte either way is closed"
else
	pass "idle: a session with no byte either way is closed"
fi
ms=$(( ($(date +%s%N) - start) / 1000000 ))
echo "# closed after $ms ms"
check "idle: after the idle timeout, not before (2 s to 6 s)" \
    test "$ms" -ge 2000 -a "$ms" -lt 6000
check "idle: the session line says why" has_line "$T/i.err" \
    'command=ProcessInfo .*end="idle: no byte either way for 2\.0s \(--idle-timeout\)"'
kill "$(pid_of mute)"
wait_for 10 eval "[ \$(fd_count $ipid) -eq $ibase ]"
is "idle: descriptors back to the baseline" "$(fd_count "$ipid")" "$ibase"

# A parked runtime connection is quiet by nature: it stays.
start_fakert irt --connect "$T/irt.sock" --stream-bytes 4194304
wait_for 10 has_line "$T/i.err" "runtime pid $(pid_of irt) .* connected"
sleep 3	# the parked connection idles past the timeout; not a sync
is "idle: a parked runtime connection is not cut" \
    "$(count_lines "$T/i.err" "runtime pid $(pid_of irt) .*went away")" 0
is "idle: the runtime did not have to dial again" \
    "$(count_lines "$T/irt.ev" '^advertise')" 1
check "idle: the parked connection serves the next command" \
    tool --timeout 10 "$iaddr" processinfo

# Bytes moving keep a session open past the idle timeout: 4 MiB at
# 1 MB/s take 4 s.  (The tool is on a Unix socket: megabytes of TCP
# buffers on loopback would take over a second to drain between two
# writes of the router, which are what it counts.)
if tool --timeout 30 "$iaddr" collect --expect-bytes 4194304 --rate 1000000
then
	pass "idle: a 4 s trace that keeps moving is not cut"
else
	fail "idle: a 4 s trace that keeps moving is not cut" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi

# A reader that stopped taking the stream is idle, though the kernel
# still holds bytes for it (the stream is larger than every buffer on
# the way).
bg stall "$FAKETOOL" --timeout 30 "$iaddr" collect --pause-after-bytes 65536
if wait_for 10 has_line "$T/i.err" \
    'command=CollectTracing2 .*end="idle: no byte either way'; then
	pass "idle: a stalled reader is cut"
else
	fail "idle: a stalled reader is cut" "$(tail -n 5 "$T/i.err")"
fi
kill "$(pid_of stall)" 2>/dev/null
stop_dsroute i
stop irt

# Without --idle-timeout the silent runtime's session stays.
start_dsroute j "uds:$T/jrt.sock" tcp:127.0.0.1:0
bg mute2 "$FAKETOOL" --timeout 60 "$T/jrt.sock" raw "$ADVR" --own-pid-at 24 \
    --hold-ms 60000
wait_for 10 has_line "$T/j.err" "runtime pid $(pid_of mute2) .* connected"
bg quiet "$FAKETOOL" --timeout 60 "tcp:127.0.0.1:$(port_of j remote)" \
    processinfo
sleep 2.5	# the session idles past 1 s; not a sync
check "no idle timeout by default: the quiet session is still open" \
    alive quiet
is "no idle timeout by default: no session ended" \
    "$(count_lines "$T/j.err" 'command=ProcessInfo')" 0
kill "$(pid_of quiet)" "$(pid_of mute2)"
stop_dsroute j

# --max-sessions-per-runtime: two stalled traces hold the runtime, a third
# tool is refused with ERROR_BUSY and one line, and served once a trace
# ends.  Both for a runtime that dials in and for one the router dials.
# cap_case NAME: router NAME and its runtime NAMErt are up.
cap_case() {
	_addr="tcp:127.0.0.1:$(port_of "$1" remote)"
	bg "${1}t1" "$FAKETOOL" --timeout 60 "$_addr" collect \
	    --pause-after-bytes 65536
	bg "${1}t2" "$FAKETOOL" --timeout 60 "$_addr" collect \
	    --pause-after-bytes 65536
	wait_for 10 eval "[ \$(count_lines '$T/${1}rt.ev' '^command 0x02') -ge 2 ]"
	tool --timeout 10 "$_addr" processinfo
	like "$1: a third tool on a runtime two use is refused" \
	    "$(cat "$T/tool.out")" '^error 0x800700AA$'
	wait_for 5 has_line "$T/$1.err" 'end="refused: 2 sessions use this'
	like "$1: ... with one line that names the cap" \
	    "$(grep 'end="refused: 2 sessions' "$T/$1.err")" \
	    'command=ProcessInfo .*end="refused: 2 sessions use this runtime \(--max-sessions-per-runtime\)"'
	is "$1: ... and the runtime never saw it" \
	    "$(count_lines "$T/${1}rt.ev" '^command 0x04')" 0
	kill "$(pid_of "${1}t1")"
	wait_for 10 has_line "$T/$1.err" 'command=CollectTracing'
	check "$1: once a trace ends, a tool is served again" \
	    tool --timeout 10 "$_addr" processinfo
	kill "$(pid_of "${1}t2")"
	stop_dsroute "$1"
}
start_dsroute p --max-sessions-per-runtime 2 "uds:$T/p.sock" tcp:127.0.0.1:0
start_fakert prt --connect "$T/p.sock" --stream-bytes 1000000000
wait_for 10 has_line "$T/p.err" "runtime pid $(pid_of prt) .* connected"
cap_case p
stop prt
start_fakert crt --listen "$T/c.sock" --stream-bytes 1000000000
start_dsroute c --max-sessions-per-runtime 2 "uds:$T/c.sock" tcp:127.0.0.1:0
cap_case c
stop crt

done_testing
