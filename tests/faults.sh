#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Either peer killed (SIGKILL) or resetting its connection (RST) in each
# state a session passes through (security.md DI-3, DI-4): classifying
# a partial header, waiting for a parked runtime, dialling a runtime slow
# to accept, awaiting a listening tool's command, pumping a stream,
# half-closed either way, and denied.  Each time the session ends at
# once with one line (or at its own deadline where a killed tool cannot
# be told from one that half-closed), the other peer sees its end, the
# descriptors return to the baseline and the next connection works.
# Every router must exit cleanly, without a sanitizer report.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

CROWD=$top_builddir/tests/crowd
command -v ss >/dev/null || skip_all "ss(8) is not installed"

MAGIC=444f544e45545f4950435f563100
PROCESSINFO=${MAGIC}140004000000
RESUME=${MAGIC}140004010000
COLLECT=${MAGIC}7500020300004000000001000000010100000001000000000000000400000020
COLLECT=${COLLECT}0000004d006900630072006f0073006f00660074002d00570069006e0064006f
COLLECT=${COLLECT}00770073002d0044006f0074004e0045005400520075006e00740069006d0065
COLLECT=${COLLECT}00000000000000
JUNK=6a756e6b6a756e6b6a756e6b6a756e6b
ADVR=414456525f5631000102030405060708090a0b0c0d0e0f10b11b0000000000000000
DENIED_FRAME=444f544e45545f4950435f5631001800ffff000005000780

# The session lines of a router, those of parked runtime connections
# left out.
sessions_of() {
	grep -E '^(info|dbug): session [0-9]+: route=' "$T/$1.err" |
	    grep -v 'end="runtime connection parked"'
}

ends() {
	sessions_of "$1" | wc -l
}

# settled NAME: every session the router has numbered so far has logged
# its line (parked runtime connections included).
settled() {
	_last=$(sed -En 's/^(info|dbug): session ([0-9]+): .*/\2/p' \
	    "$T/$1.err" | sort -n | tail -n 1)
	[ "$(count_lines "$T/$1.err" '^(info|dbug): session [0-9]+: route=')" \
	    -ge "${_last:-0}" ]
}

# mark NAME: the number of session lines, once the sessions of earlier
# steps have all logged theirs: a tool has its answer before the router
# logs the session's end, and a late line would be taken for the next.
mark() {
	wait_for 10 settled "$1"
	ends "$1"
}

# ends_as NAME BEFORE DESC EREGEX: within 10 s a session ends beyond the
# first BEFORE, and its line matches.
ends_as() {
	if ! wait_for 10 eval "[ \$(ends $1) -gt $2 ]"; then
		fail "$3" "no session ended"
		return
	fi
	like "$3" "$(sessions_of "$1" | sed -n "$(($2 + 1))p")" "$4"
}

# based NAME BASE DESC: the router's descriptors come back to BASE.
based() {
	wait_for 10 eval "[ \$(fd_count $(pid_of "$1")) -eq $2 ]"
	is "$3" "$(fd_count "$(pid_of "$1")")" "$2"
}

# peer NAME ARGS...: a raw peer (faketool raw ... --hold-ms): killed with
# "hit NAME kill", reset with "hit NAME rst" (given --reset).
peer() {
	_p=$1
	shift
	bg "$_p" "$FAKETOOL" --timeout 60 "$@" --hold-ms 60000
}

hit() {
	case $2 in
	kill)	kill -9 "$(pid_of "$1")" ;;
	rst)	kill -USR1 "$(pid_of "$1")" ;;
	esac
	wait "$(pid_of "$1")" 2>/dev/null
}

rst_opt() {
	[ "$1" = rst ] && echo --reset
}

# --- A route where both sides listen: runtimes dial LP, tools dial RP.
start_dsroute p -v debug --backend-wait 3 --handshake-timeout 30 \
    tcp:127.0.0.1:0,advertise=any "tcp:127.0.0.1:0,deny=ResumeRuntime"
LP="tcp:127.0.0.1:$(port_of p local)"
RP="tcp:127.0.0.1:$(port_of p remote)"
base0=$(fd_count "$(pid_of p)")

# Classifying: half a header from a tool, half an advertise from a
# runtime.
for how in kill rst; do
	for who in tool runtime; do
		if [ $who = tool ]; then
			addr=$RP hex=444f544e4554
		else
			addr=$LP hex=414456525f
		fi
		n=$(mark p)
		peer c "$addr" raw $hex $(rst_opt $how)
		wait_for 10 eval "[ \$(fd_count $(pid_of p)) -gt $base0 ]"
		hit c $how
		if [ $how = kill ]; then
			want='end="closed before a complete first message"'
		else
			want='end="peer reset the connection"'
		fi
		ends_as p "$n" "classifying, $who $how: the session ends" "$want"
		based p "$base0" "classifying, $who $how: descriptors back"
	done
done

# Waiting for a parked runtime, there being none.  A killed tool looks
# like one that half-closed after its command: it waits out the backend
# wait.  A reset ends it at once.
for how in kill rst; do
	n=$(mark p)
	w=$(count_lines "$T/p.err" 'ProcessInfo waits for a runtime')
	peer w "$RP" raw $PROCESSINFO $(rst_opt $how)
	wait_for 10 eval "[ \$(count_lines '$T/p.err' \
	    'ProcessInfo waits for a runtime') -gt $w ]"
	hit w $how
	if [ $how = kill ]; then
		want='end="no runtime connection on [^ ]* within 3\.0s; the tool got error 0x800705b4"'
	else
		want='end="tool reset the connection"'
	fi
	ends_as p "$n" "waiting for a runtime, tool $how: the session ends" \
	    "$want"
	based p "$base0" "waiting for a runtime, tool $how: descriptors back"
done

# A runtime parks.  rt_up NAME PID: start it and wait until it parked.
rt_up() {
	start_fakert "$1" --connect "$LP" --pid "$2" ${3:-}
	wait_for 10 has_line "$T/p.err" "runtime pid $2 .* connected"
}
rt_up rt 5001
base=$((base0 + 1))
check "the next command is served" tool --timeout 10 "$RP" processinfo
based p "$base" "a runtime parked: the baseline"

streams() {
	count_lines "$T/$1.ev" '^stream-start'
}

# Pumping a stream: the tool dies, or resets.
for how in kill rst; do
	n=$(mark p)
	b=$(count_lines "$T/rt.ev" '^stream-broken')
	s=$(streams rt)
	if [ $how = kill ]; then
		bg t "$FAKETOOL" --timeout 60 "$RP" collect
	else
		peer t "$RP" raw "$COLLECT" --reset
	fi
	wait_for 10 eval "[ \$(streams rt) -gt $s ]"
	hit t $how
	ends_as p "$n" "pumping, tool $how: the session ends" \
	    'command=CollectTracing2 .*end="tool (reset the connection|closed)"'
	check "pumping, tool $how: the runtime's stream breaks at once" \
	    wait_for 10 eval "[ \$(count_lines '$T/rt.ev' '^stream-broken') -gt $b ]"
	based p "$base" "pumping, tool $how: descriptors back"
done

# Pumping a stream: the runtime dies.  Killed, it closes; killed with
# bytes of the tool unread, its kernel resets the connection.
pid=5002
for how in kill rst; do
	n=$(mark p)
	s=$(streams rt)
	if [ $how = kill ]; then
		bg t "$FAKETOOL" --timeout 60 "$RP" collect
	else
		peer t "$RP" raw "$COLLECT$JUNK"
	fi
	wait_for 10 eval "[ \$(streams rt) -gt $s ]"
	# Its next connection parked: the session and it, on top.
	wait_for 10 eval "[ \$(fd_count $(pid_of p)) -eq $((base + 2)) ]"
	stop rt KILL
	if [ $how = kill ]; then
		want='end="runtime closed"'
	else
		want='end="runtime reset the connection"'
	fi
	ends_as p "$n" "pumping, runtime $how: the session ends" \
	    "command=CollectTracing2 .*$want"
	if [ $how = kill ]; then
		check "pumping, runtime kill: the tool sees the end at once" \
		    wait_exit t 10
	else
		hit t rst
		like "pumping, runtime rst: the tool saw the end" \
		    "$(tail -n 1 "$T/t.out")" '^eof$'
	fi
	based p "$base0" "pumping, runtime $how: descriptors back"
	rt_up rt $pid
	pid=$((pid + 1))
	check "pumping, runtime $how: the next command is served" \
	    tool --timeout 10 "$RP" processinfo
done

# Half-closed by the tool after its command, while the stream runs.
for who in tool runtime; do
	n=$(mark p)
	s=$(streams rt)
	bg t "$FAKETOOL" --timeout 60 --shut-wr "$RP" collect
	wait_for 10 eval "[ \$(streams rt) -gt $s ]"
	wait_for 10 eval "[ \$(fd_count $(pid_of p)) -eq $((base + 2)) ]"
	if [ $who = tool ]; then
		hit t kill
		ends_as p "$n" "half-closed by the tool, tool killed: the session \
ends" 'end="tool (reset the connection|closed)"'
		based p "$base" "half-closed by the tool, tool killed: \
descriptors back"
	else
		stop rt KILL
		ends_as p "$n" "half-closed by the tool, runtime killed: the \
session ends" 'end="(runtime|tool) closed"'
		check "half-closed by the tool, runtime killed: the tool sees \
the end" wait_exit t 10
		based p "$base0" "half-closed by the tool, runtime killed: \
descriptors back"
		rt_up rt $pid
		pid=$((pid + 1))
	fi
done

# Half-closed by the runtime: its stream ended, the tool holds on (the
# close timeout runs).
stop rt
rt_up rtf 5100 "--stream-bytes 1048576"
for how in kill rst; do
	n=$(mark p)
	e=$(count_lines "$T/rtf.ev" '^stream-end')
	peer t "$RP" raw "$COLLECT" $(rst_opt $how)
	wait_for 10 eval "[ \$(count_lines '$T/rtf.ev' '^stream-end') -gt $e ]"
	check "half-closed by the runtime, tool $how: the router waits" \
	    test "$(ends p)" -eq "$n"
	hit t $how
	ends_as p "$n" "half-closed by the runtime, tool $how: the session \
ends" 'end="(runtime closed|tool reset the connection)"'
	based p "$base" "half-closed by the runtime, tool $how: descriptors \
back"
done
stop rtf

# The command forwarded, its reply pending: a runtime that dies before
# answering lost the command, which goes to the next runtime; a tool
# that resets ends it.
takes() {
	count_lines "$T/p.err" 'ProcessInfo takes the parked connection'
}
for how in kill rst; do
	peer mute "$LP" raw "$ADVR" $(rst_opt $how)
	wait_for 10 eval "[ \$(fd_count $(pid_of p)) -eq $base ]"
	k=$(takes)
	bg t "$FAKETOOL" --timeout 30 "$RP" processinfo
	wait_for 10 eval "[ \$(takes) -gt $k ]"
	l=$(count_lines "$T/p.err" 'closed with ProcessInfo unanswered')
	hit mute $how
	check "reply pending, runtime $how: the command waits for the next \
runtime" wait_for 10 eval "[ \$(count_lines '$T/p.err' \
	    'closed with ProcessInfo unanswered') -gt $l ]"
	rt_up rt $pid
	if wait_exit t 10 && wait "$(pid_of t)"; then
		is "reply pending, runtime $how: which answers it" \
		    "$(field pid "$T/t.out")" $pid
	else
		fail "reply pending, runtime $how: which answers it" \
		    "$(cat "$T/t.out" "$T/t.err")"
	fi
	pid=$((pid + 1))
	based p "$base" "reply pending, runtime $how: descriptors back"
	stop rt
	wait_for 10 eval "[ \$(fd_count $(pid_of p)) -eq $base0 ]"
done
peer mute "$LP" raw "$ADVR"
wait_for 10 eval "[ \$(fd_count $(pid_of p)) -eq $base ]"
k=$(takes)
n=$(mark p)
peer t "$RP" raw $PROCESSINFO --reset
wait_for 10 eval "[ \$(takes) -gt $k ]"
hit t rst
ends_as p "$n" "reply pending, tool rst: the session ends" \
    'command=ProcessInfo .*end="tool reset the connection"'
hit mute rst
like "reply pending, tool rst: the runtime saw the end" \
    "$(tail -n 1 "$T/mute.out")" '^eof$'
based p "$base0" "reply pending, tool rst: descriptors back"
rt_up rt $pid
pid=$((pid + 1))

# Denied: the error frame sent, the tool not gone yet.
audits() {
	count_lines "$T/p.err" 'command=ResumeRuntime decision=deny'
}
for how in kill rst runtime; do
	n=$(mark p)
	a=$(audits)
	peer t "$RP" raw $RESUME $( [ $how = rst ] && echo --reset)
	wait_for 10 eval "[ \$(audits) -gt $a ]"
	case $how in
	runtime)
		stop rt KILL
		check "denied, runtime killed: the router notices" \
		    wait_for 10 has_line "$T/p.err" \
		    "runtime pid $((pid - 1)) .*went away"
		hit t rst
		is "denied, runtime killed: the tool has its error frame" \
		    "$(sed -n 's/^reply //p' "$T/t.out")" "$DENIED_FRAME"
		;;
	*)
		hit t $how
		;;
	esac
	ends_as p "$n" "denied, $how: the session ends" \
	    'command=ResumeRuntime .*decision=deny .*end='
	if [ $how = runtime ]; then
		based p "$base0" "denied, runtime killed: descriptors back"
		rt_up rt $pid
		pid=$((pid + 1))
	else
		based p "$base" "denied, tool $how: descriptors back"
	fi
done
is "nothing denied reached the runtime" \
    "$(cat "$T"/rt*.ev | grep -c '^command 0x04 0x01')" 0
check "the route still serves" tool --timeout 10 "$RP" processinfo
stop_dsroute p
stop rt

# --- Dialling a runtime that is slow to accept: its backlog is full.
bg stall "$CROWD" stall
wait_for 10 has_line "$T/stall.out" '^stall: port='
SP=$(sed -n 's/^stall: port=//p' "$T/stall.out")
start_dsroute q -v debug --connect-timeout 2 tcp:127.0.0.1:0 \
    "tcp:127.0.0.1:$SP,connect"
QP="tcp:127.0.0.1:$(port_of q local)"
qbase=$(fd_count "$(pid_of q)")
syn_sent() {
	[ "$(ss -Htn state syn-sent "( dport = :$SP )" | wc -l)" -ge 1 ]
}
for how in kill rst; do
	n=$(ends q)
	peer t "$QP" raw $PROCESSINFO $(rst_opt $how)
	wait_for 10 syn_sent
	hit t $how
	if [ $how = kill ]; then
		want="end=\"connect to tcp:127\\.0\\.0\\.1:$SP timed out after 2\\.0s; the tool got error 0x8007274c\""
	else
		want='end="tool reset the connection"'
	fi
	ends_as q "$n" "dialling, tool $how: the session ends" "$want"
	based q "$qbase" "dialling, tool $how: descriptors back"
done
n=$(ends q)
bg t "$FAKETOOL" --timeout 30 "$QP" processinfo
wait_for 10 syn_sent
stop stall KILL
# Its pending connect is refused at once, or (a SYN lost) times out.
ends_as q "$n" "dialling, runtime killed: the session ends" \
    "end=\"connect to tcp:127\\.0\\.0\\.1:$SP (failed: Connection refused; the tool got error 0x8007274d|timed out after 2\\.0s)\""
check "dialling, runtime killed: the tool sees the end" wait_exit t 10
based q "$qbase" "dialling, runtime killed: descriptors back"
start_fakert rtq --listen "tcp:127.0.0.1:$SP" --pid 5200
if tool --timeout 10 "$QP" processinfo; then
	is "dialling: the runtime back on its port serves the next command" \
	    "$(field pid "$T/tool.out")" 5200
else
	fail "dialling: the runtime back on its port serves the next command"
fi
stop_dsroute q
stop rtq

# --- Probing a runtime's port that accepts and never answers: the
# connect succeeds at once, and the connect timeout bounds the answer.
bg mute socat -u "UNIX-LISTEN:$T/mute.sock,fork" OPEN:/dev/null
wait_for 10 test -S "$T/mute.sock"
start_dsroute m -v debug --connect-timeout 1 "uds:$T/mute.sock" \
    tcp:127.0.0.1:9,connect
ends_as m 0 "probing, the runtime never answers: the offer ends" \
    'end="runtime did not answer ProcessInfo within 1\.0s"'
ends_as m 1 "probing, the runtime never answers: the next offer ends" \
    'end="runtime did not answer ProcessInfo within 1\.0s"'
stop_dsroute m
stop mute

# --- Awaiting the command of a listening tool the router dialled, after
# forwarding a runtime's advertise.
bg lt "$FAKETOOL" --timeout 60 tcp:127.0.0.1:0,listen raw "" --hold-ms 60000
wait_for 10 has_line "$T/lt.out" '^listening tcp:'
TP=$(sed -n 's/^listening tcp:127\.0\.0\.1://p' "$T/lt.out")
start_dsroute a -v debug --connect-timeout 2 tcp:127.0.0.1:0,advertise=any \
    "tcp:127.0.0.1:$TP,connect,peer=tool"
AP="tcp:127.0.0.1:$(port_of a local)"
abase=$(fd_count "$(pid_of a)")
awaiting() {
	count_lines "$T/a.err" 'has the advertise; its command is awaited'
}
# tool_up [--reset]: a listening tool that takes the advertise and holds.
tool_up() {
	if ! alive lt; then
		bg lt "$FAKETOOL" --timeout 60 "tcp:127.0.0.1:$TP,listen" \
		    raw "" --hold-ms 60000 "$@"
		wait_for 10 has_line "$T/lt.out" '^listening tcp:'
	fi
}
start_fakert art --connect "$AP" --pid 5300
for how in kill rst; do
	tool_up $(rst_opt $how)
	w=$(awaiting)
	wait_for 15 eval "[ \$(awaiting) -gt $w ]"
	n=$(ends a)
	h=$(count_lines "$T/art.ev" '^parked-hup')
	hit lt $how
	ends_as a "$n" "awaiting the command, tool $how: the session ends" \
	    'end="(tool closed without a command|tool reset the connection)"'
	check "awaiting the command, tool $how: the runtime sees the end" \
	    wait_for 10 eval "[ \$(count_lines '$T/art.ev' '^parked-hup') -gt $h ]"
done
stop art
tool_up
for how in kill rst; do
	w=$(awaiting)
	if [ $how = kill ]; then
		start_fakert art --connect "$AP" --pid 5301
	else
		peer art "$AP" raw "$ADVR" --reset
	fi
	wait_for 15 eval "[ \$(awaiting) -gt $w ]"
	n=$(ends a)
	hit art $how
	ends_as a "$n" "awaiting the command, runtime $how: the session ends" \
	    'end="(runtime closed its connection|runtime reset the connection)"'
	hit lt rst
	like "awaiting the command, runtime $how: the tool saw the end" \
	    "$(tail -n 1 "$T/lt.out")" '^(eof|reset)$'
	: >"$T/lt.out"
	tool_up
done
stop lt
based a "$abase" "awaiting the command: descriptors back"
bg lt "$FAKETOOL" --timeout 30 "tcp:127.0.0.1:$TP,listen" processinfo
start_fakert art --connect "$AP" --pid 5302
if wait_exit lt 15 && wait "$(pid_of lt)"; then
	is "awaiting the command: the next listening tool is served" \
	    "$(field pid "$T/lt.out")" 5302
else
	fail "awaiting the command: the next listening tool is served" \
	    "$(cat "$T/lt.out" "$T/lt.err")"
fi
stop art
stop_dsroute a

# --- Over TLS, with the runtime on a Unix socket: the handshake cut,
# and either peer killed mid-stream.
if ! command -v openssl >/dev/null; then
	skip "TLS: peers killed and reset" "openssl(1) is not installed"
	done_testing
	exit
fi
. "$top_srcdir/tests/lib/tls.sh"
make_base_certs
start_dsroute s -v debug "uds:$T/srt.sock" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
SP="tcp:127.0.0.1:$(port_of s remote)"
sbase=$(fd_count "$(pid_of s)")
for how in kill rst; do
	n=$(ends s)
	peer h "$SP" raw 16030100c8010000c40303 $(rst_opt $how)
	wait_for 10 eval "[ \$(fd_count $(pid_of s)) -gt $sbase ]"
	hit h $how
	ends_as s "$n" "TLS handshake half done, tool $how: the session ends" \
	    'end="TLS handshake failed: '
	based s "$sbase" "TLS handshake half done, tool $how: descriptors back"
done
start_fakert srt --connect "$T/srt.sock"
wait_for 10 has_line "$T/s.err" "runtime pid $(pid_of srt) .* connected"
sbase=$((sbase + 1))
printf '%s' "$COLLECT" | sed 's/../\\x&/g' | xargs -0 printf >"$T/collect.bin"
# s_client NAME: a TLS tool that sends CollectTracing2 and reads on.
s_client() {
	mkfifo "$T/$1.fifo"
	bg "$1" sh -c "exec openssl s_client -connect 127.0.0.1:${SP##*:} \
	    -quiet -CAfile $C/ca.pem -cert $C/client1.pem \
	    -key $C/client1.key <>$T/$1.fifo >/dev/null"
	cat "$T/collect.bin" >"$T/$1.fifo"
}
for who in tool runtime; do
	n=$(ends s)
	st=$(streams srt)
	b=$(count_lines "$T/srt.ev" '^stream-broken')
	s_client "tc$who"
	wait_for 10 eval "[ \$(streams srt) -gt $st ]"
	wait_for 10 eval "[ \$(fd_count $(pid_of s)) -eq $((sbase + 2)) ]"
	if [ $who = tool ]; then
		hit "tc$who" kill
		ends_as s "$n" "TLS, pumping, tool killed: the session ends" \
		    'command=CollectTracing2 .*end="(tool reset the connection|tool closed|reading from tool: truncated: .*)"'
		check "TLS, pumping, tool killed: the stream breaks at once" \
		    wait_for 10 eval "[ \$(count_lines '$T/srt.ev' '^stream-broken') -gt $b ]"
		based s "$sbase" "TLS, pumping, tool killed: descriptors back"
	else
		stop srt KILL
		ends_as s "$n" "TLS, pumping, runtime killed: the session ends" \
		    'command=CollectTracing2 .*end="runtime closed"'
		check "TLS, pumping, runtime killed: the tool sees the end" \
		    wait_exit "tc$who" 10
		based s "$((sbase - 1))" "TLS, pumping, runtime killed: \
descriptors back"
	fi
done
start_fakert srt2 --connect "$T/srt.sock"
wait_for 10 has_line "$T/s.err" "runtime pid $(pid_of srt2) .* connected"
sclient last "${SP##*:}" -cert "$C/client1.pem" -key "$C/client1.key"
check "TLS: the next tool is served" test "$(wc -c <"$T/last.out")" -gt 20
stop_dsroute s
stop srt2

done_testing
