#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Access control in every mode: a denied command gets the error frame
# byte for byte, not one byte of it reaches the runtime and no connection
# to the runtime is opened for it (the fake runtime's events say so), a
# parked runtime stays parked, and one audit line says who, what and why,
# never with payload bytes.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

MAGIC=444f544e45545f4950435f563100		# "DOTNET_IPC_V1\0"
DENIED=${MAGIC}1800ffff000005000780		# HRESULT 0x80070005
UNKNOWN=${MAGIC}1800ffff000085131380		# UNKNOWN_COMMAND 0x80131385
BAD_ENCODING=${MAGIC}1800ffff000084131380

# msg SET ID [PAYLOAD]: a whole message in hex; SET and ID are two hex
# digits each.
msg() {
	_p=${3:-}
	printf '%s%s%s%s0000%s' "$MAGIC" "$(hex16 $((20 + ${#_p} / 2)))" \
	    "$1" "$2" "$_p"
}

# reply: the bytes the last raw tool run received.
reply() {
	sed -n 's/^reply //p' "$T/tool.out"
}

# audit_line D SESSION-COMMAND: the last audit line of router D about it.
audit_line() {
	grep "^info: audit: .* command=$2 " "$T/$1.err" | tail -n 1
}

# --- server-server: the runtime dials uds and parks; tools on tcp ------

start_dsroute d "uds:$T/rt.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/rt.sock"
addr="tcp:127.0.0.1:$(port_of d remote)"
wait_for 10 has_line "$T/d.err" "runtime pid $(pid_of rt) .* connected"

check "tcp peer, default operate: ProcessInfo goes through" \
    tool --timeout 10 "$addr" processinfo
wait_for 5 has_line "$T/d.err" 'command=ProcessInfo .*decision=allow'
like "the session line of an allowed command names its rule" \
    "$(grep 'command=ProcessInfo ' "$T/d.err" | tail -n 1)" \
    'decision=allow rule="role operate" end='
wait_for 10 eval "[ \$(count_lines '$T/rt.ev' '^advertise') -ge 2 ]"

adv=$(count_lines "$T/rt.ev" '^advertise')
rx=$(runtime_rx rt)
tool --timeout 10 "$addr" raw "$(msg 01 03 "$(dump_payload /tmp/SECRETMARKER)")"
is "GenerateCoreDump3 from tcp: the 24-byte deny frame, byte for byte" \
    "$(reply)" "$DENIED"
wait_for 5 has_line "$T/d.err" '^info: audit: .*command=GenerateCoreDump3'
line=$(audit_line d GenerateCoreDump3)
like "audit line: time, session, route, peer" "$line" \
    '^info: audit: time=20[0-9]{2}-[0-9]{2}-[0-9]{2}T[0-9:]{8}\.[0-9]{3}Z session=[0-9]+ route=main peer="tcp:127\.0\.0\.1:[0-9]+" addr=127\.0\.0\.1:[0-9]+ '
like "audit line: runtime, command, decision, role, rule, reason" "$line" \
    ' runtime_pid=- cookie=- command=GenerateCoreDump3 decision=deny role=operate role_from="default: a network peer" rule="role operate" reason="[^"]+"$'
sid=$(printf '%s\n' "$line" | sed 's/.* session=\([0-9]*\) .*/\1/')
is "a denied session has one info line, the audit line" \
    "$(grep -Ec "^info: (session $sid:|audit: .* session=$sid )" "$T/d.err")" 1
is "no payload byte is logged" \
    "$(grep -c SECRETMARKER "$T/d.err")" 0

tool --timeout 10 "$addr" raw "$(msg 04 7f)"
is "an unknown command: UNKNOWN_COMMAND, so clients fall back" \
    "$(reply)" "$UNKNOWN"
tool --timeout 10 "$addr" raw "$(msg 04 00 00)"
is "ProcessInfo with a payload (the runtime leaks its heap): BAD_ENCODING" \
    "$(reply)" "$BAD_ENCODING"
tool --timeout 10 "$addr" raw "$(msg 02 06 0100000040000000)"
is "CollectTracing5 user_events over tcp: denied" "$(reply)" "$DENIED"
wait_for 5 has_line "$T/d.err" 'rule="user-events"'

dpid=$(pid_of d)
fds=$(fd_count "$dpid")
i=0
frames=0
while [ $i -lt 50 ]; do
	tool --timeout 10 "$addr" raw "$(msg 04 02)"
	[ "$(reply)" = "$DENIED" ] && frames=$((frames + 1))
	i=$((i + 1))
done
is "50 ProcessEnvironment from tcp: 50 deny frames" $frames 50
check "50 denials later, the router holds as many descriptors as before" \
    wait_for 10 eval "[ \$(fd_count $dpid) -eq $fds ]"
is "denied commands: zero bytes reached the runtime" "$(runtime_rx rt)" "$rx"
is "denied commands: the parked runtime connection stayed parked" \
    "$(count_lines "$T/rt.ev" '^(parked-hup|advertise)')" "$adv"
check "the parked connection then serves an allowed command" \
    tool --timeout 10 "$addr" processinfo2
is "the runtime saw only the allowed commands" \
    "$(grep -E '^(command|bad-message)' "$T/rt.ev" | sort | uniq -c |
    tr -s ' ' | tr '\n' ';')" " 1 command 0x04 0x00 20 ProcessInfo; 1 command 0x04 0x04 20 ProcessInfo2;"
stop_dsroute d
stop rt

# --- policy= and rules on the tcp endpoint -------------------------------

start_dsroute d2 -v debug "uds:$T/rt2.sock" \
    "tcp:127.0.0.1:0,policy=observe,deny=CollectTracing*,allow=ProcessEnvironment"
start_fakert rt2 --connect "$T/rt2.sock"
addr="tcp:127.0.0.1:$(port_of d2 remote)"
wait_for 10 has_line "$T/d2.err" "runtime pid $(pid_of rt2) .* connected"
check "policy=observe: ProcessInfo goes through" \
    tool --timeout 10 "$addr" processinfo
before=$(count_lines "$T/rt2.ev" 'ResumeRuntime')
tool --timeout 10 "$addr" resume
like "policy=observe: ResumeRuntime is answered OK, so the tools work" \
    "$(cat "$T/tool.out")" '^ok$'
is "... by the router: the runtime gets none, and stays as it is" \
    "$(count_lines "$T/rt2.ev" 'ResumeRuntime')" "$before"
check "... and the audit line says so" has_line "$T/d2.err" \
    'command=ResumeRuntime decision=deny role=observe .*reason="observe resumes nothing: the router answered ResumeRuntime OK and sent it on to no runtime"'
tool --timeout 10 "$addr" collect
like "deny=CollectTracing*: a trace is denied, the tool gets an error" \
    "$(cat "$T/tool.out")" '^error 0x80070005$'
wait_for 5 has_line "$T/d2.err" 'command=CollectTracing2 .*rule="deny=CollectTracing\*"'
check "allow=ProcessEnvironment adds a command to observe" \
    tool --timeout 10 "$addr" env
is "the runtime saw ProcessInfo and ProcessEnvironment only" \
    "$(grep -E '^(command|bad-message)' "$T/rt2.ev" | cut -d' ' -f5 |
    tr '\n' ' ')" "ProcessInfo ProcessEnvironment "
stop_dsroute d2
stop rt2

# --- server-client: tools on uds, the runtime listens on tcp -------------

mkdir "$T/dumps"
start_fakert rt3 --listen tcp:127.0.0.1:0 --pid 5003
start_dsroute d3 "uds:$T/tool3.sock,dump-dir=$T/dumps,max-buffer-mb=64" \
    "tcp:127.0.0.1:$(fakert_port rt3),connect"
tool --timeout 10 "$T/tool3.sock" command 1 3 "$(dump_payload "$T/dumps/core.1")"
like "dump-dir: a dump inside the directory goes through" \
    "$(cat "$T/tool.out")" '^reply set=0xFF id=0x00 '
tool --timeout 10 "$T/tool3.sock" raw "$(msg 01 03 "$(dump_payload /etc/cron.d/x)")"
is "dump-dir: a dump elsewhere is denied" "$(reply)" "$DENIED"
tool --timeout 10 "$T/tool3.sock" raw \
    "$(msg 01 03 "$(dump_payload "$T/dumps/../x")")"
is "dump-dir: a path with .. is denied" "$(reply)" "$DENIED"
tool --timeout 10 "$T/tool3.sock" raw "$(msg 02 03 4100000001000000)"
is "max-buffer-mb=64: a 65 MB buffer is denied" "$(reply)" "$DENIED"
is "server-client: one connection reached the runtime, for the allowed dump" \
    "$(count_lines "$T/rt3.ev" '^accept')" 1
is "server-client: the runtime saw only that command" \
    "$(grep -E '^(command|bad-message)' "$T/rt3.ev")" \
    "command 0x01 0x03 $((20 + 4 + 2 * (${#T} + 14) + 8)) GenerateCoreDump3"
stop_dsroute d3
stop rt3

# --- client-server: a listening tool on uds, the runtime dials tcp -------

bg lt "$FAKETOOL" --timeout 20 "$T/tool4.sock,listen" command 4 2
wait_for 10 test -S "$T/tool4.sock"
start_dsroute d4 "uds:$T/tool4.sock,policy=observe,peer=tool" \
    tcp:127.0.0.1:0,advertise=addr:127.0.0.1
start_fakert rt4 --connect "tcp:127.0.0.1:$(port_of d4 remote)" --pid 5004
wait "$(pid_of lt)"
like "client-server: the command after the forwarded advertise is judged" \
    "$(cat "$T/lt.out")" 'hresult=0x80070005'
wait_for 5 has_line "$T/rt4.ev" '^parked-hup'
is "client-server: the accepted runtime connection was closed, 0 bytes in" \
    "$(grep -E '^(parked-hup|rx-bytes)' "$T/rt4.ev" | head -n 2 |
    tr '\n' ' ')" "parked-hup rx-bytes 0 "
is "client-server: the runtime saw no command" \
    "$(count_lines "$T/rt4.ev" '^(command|bad-message)')" 0
like "client-server: the audit line knows the runtime from its advertise" \
    "$(audit_line d4 ProcessEnvironment)" \
    'runtime_pid=5004 cookie=[0-9a-f]{32} .*role_from="policy=observe"'
stop_dsroute d4
stop rt4

# --- client-client: the runtime's port, a tool listening on tcp ----------

start_fakert rt5 --listen "$T/rt5.sock" --pid 5005
bg lt5 "$FAKETOOL" --timeout 20 tcp:127.0.0.1:0,listen command 1 1 \
    "$(dump_payload /tmp/core)"
wait_for 10 has_line "$T/lt5.out" '^listening '
start_dsroute d5 "uds:$T/rt5.sock" \
    "tcp:127.0.0.1:$(sed -n 's/^listening tcp:.*:\([0-9]*\)$/\1/p' "$T/lt5.out"),connect"
wait "$(pid_of lt5)"
like "client-client: a dump from the tcp tool is denied" \
    "$(cat "$T/lt5.out")" 'hresult=0x80070005'
wait_for 5 has_line "$T/d5.err" 'command=GenerateCoreDump '
# (The router's start-up probe of the socket is an empty connection.)
is "client-client: the runtime saw only the router's ProcessInfo probes" \
    "$(grep -E '^command' "$T/rt5.ev" | sort -u)" \
    "command 0x04 0x00 20 ProcessInfo"
stop_dsroute d5
stop rt5

# --- local peers by uid: the runtime's uid, another uid ------------------

if [ "$(id -u)" -ne 0 ] || ! command -v setpriv >/dev/null; then
	skip "a local peer with the runtime's uid gets full" "needs root and setpriv"
	skip "a local peer with another uid gets nothing" "needs root and setpriv"
else
	# as UID COMMAND...: run as another user, with no groups.
	as() {
		_uid=$1
		shift
		setpriv --reuid="$_uid" --regid="$_uid" --clear-groups "$@"
	}
	chmod 0711 "$T"
	mkdir -m 0777 "$T/pub"
	chmod +t "$T/pub"
	: >"$T/rt6.ev"
	chmod 0666 "$T/rt6.ev"
	bg rt6 setpriv --reuid=65534 --regid=65534 --clear-groups \
	    "$FAKERT" --events "$T/rt6.ev" --listen "$T/pub/rt6.sock" --pid 5006
	wait_for 10 has_line "$T/rt6.ev" '^listen '
	start_dsroute d6 -v debug "uds:$T/pub/rt6.sock" \
	    "uds:$T/pub/tool6.sock,listen,mode=0666"
	if as 65534 "$FAKETOOL" --timeout 10 "$T/pub/tool6.sock" env \
	    >"$T/tool.out" 2>&1; then
		like "a local peer with the runtime's uid gets full" \
		    "$(grep '^dbug: audit: .*command=ProcessEnvironment' \
		    "$T/d6.err")" 'uid=65534 .*role=full role_from="default: the runtime.s uid"'
	else
		fail "a local peer with the runtime's uid gets full" \
		    "$(cat "$T/tool.out")"
	fi
	as 65533 "$FAKETOOL" --timeout 10 "$T/pub/tool6.sock" processinfo \
	    >"$T/tool.out" 2>&1
	like "a local peer with another uid gets nothing" \
	    "$(cat "$T/tool.out") $(audit_line d6 ProcessInfo)" \
	    '^error 0x80070005 .*uid=65533 .*decision=deny role=none role_from="default: another local uid"'
	stop_dsroute d6
	stop rt6
fi

done_testing
