#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Every mode, with the runtime on the uds side and on the tcp side: a
# ProcessInfo round trip reaches the right runtime, and a 64 MiB EventPipe
# stream arrives with the SHA-256 the runtime sent.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

STREAM=67108864

# processinfo DESC ADDR PID: a ProcessInfo through the router.
processinfo() {
	processinfo_via "$1" tool "$2" "$3"
}

# stream_ok DESC RUNTIME FILE: the stream in FILE is the one RUNTIME sent.
stream_ok() {
	stream_same "$1" "$2" "$3" $STREAM
}

# collect DESC ADDR RUNTIME: a whole stream through the router.
collect() {
	tool --timeout 60 "$2" collect --expect-bytes $STREAM
	stream_ok "$1" "$3" "$T/tool.out"
}

# listening_tool NAME ADDR COMMAND...: a tool that listens, in the
# background, once it listens.
listening_tool() {
	_name=$1
	shift
	bg "$_name" "$FAKETOOL" --timeout 60 "$@"
	case "$1" in
	tcp:*)
		wait_for 10 has_line "$T/$_name.out" '^listening ' ||
		    fail "$_name listens"
		;;
	*)
		wait_for 10 test -S "${1%%,*}" || fail "$_name listens"
		;;
	esac
}

# tool_port NAME: the port a listening tool reported.
tool_port() {
	sed -n 's/^listening tcp:.*:\([0-9]*\)$/\1/p' "$T/$1.out"
}

# finished NAME: wait for a background tool and say whether it succeeded.
finished() {
	wait "$(pid_of "$1")"
}

mode_is() {
	like "$1: mode" "$(grep '^info: route main:' "$T/$2.err")" \
	    "route main: $3\$"
}

# client-server: a runtime's default port bridged to TCP.
start_fakert rt1 --listen "$T/rt1.sock" --pid 1001 --stream-bytes $STREAM
start_dsroute d1 "uds:$T/rt1.sock" tcp:127.0.0.1:0 &&
mode_is "runtime's port to tcp" d1 client-server
processinfo "runtime's port to tcp" "tcp:127.0.0.1:$(port_of d1 remote)" 1001
collect "runtime's port to tcp" "tcp:127.0.0.1:$(port_of d1 remote)" rt1
stop_dsroute d1
stop rt1

# client-server: a listening tool on uds, the runtime dials tcp.
listening_tool lt2 "$T/tool2.sock,listen" processinfo
start_dsroute d2 "uds:$T/tool2.sock,peer=tool" \
    tcp:127.0.0.1:0,advertise=any &&
mode_is "listening tool, runtime dials tcp" d2 client-server
start_fakert rt2 --connect "tcp:127.0.0.1:$(port_of d2 remote)" --pid 1002 \
    --stream-bytes $STREAM
if finished lt2; then
	is "listening tool gets the runtime's advertise" \
	    "$(field pid "$T/lt2.out" | head -n 1)" 1002
	like "listening tool: ProcessInfo answered" "$(cat "$T/lt2.out")" \
	    "^pid=1002 "
else
	fail "listening tool gets the runtime's advertise" "$(cat "$T/lt2.err")"
	fail "listening tool: ProcessInfo answered"
fi
listening_tool lt2b "$T/tool2.sock,listen" collect --expect-bytes $STREAM
finished lt2b
stream_ok "listening tool, runtime dials tcp" rt2 "$T/lt2b.out"
stop_dsroute d2
stop rt2

# server-server: the runtime dials uds, tools come over tcp.
start_dsroute d3 "uds:$T/rt3.sock" tcp:127.0.0.1:0 &&
mode_is "runtime dials uds, tools on tcp" d3 server-server
start_fakert rt3 --connect "$T/rt3.sock" --stream-bytes $STREAM
processinfo "runtime dials uds, tools on tcp" \
    "tcp:127.0.0.1:$(port_of d3 remote)" "$(pid_of rt3)"
collect "runtime dials uds, tools on tcp" \
    "tcp:127.0.0.1:$(port_of d3 remote)" rt3
stop_dsroute d3
stop rt3

# server-server: the runtime dials tcp, tools come over uds.
start_dsroute d4 "uds:$T/tool4.sock" \
    tcp:127.0.0.1:0,advertise=addr:127.0.0.1 &&
mode_is "runtime dials tcp, tools on uds" d4 server-server
start_fakert rt4 --connect "tcp:127.0.0.1:$(port_of d4 remote)" --pid 1004 \
    --stream-bytes $STREAM
processinfo "runtime dials tcp, tools on uds" "$T/tool4.sock,connect" 1004
collect "runtime dials tcp, tools on uds" "$T/tool4.sock,connect" rt4
stop_dsroute d4
stop rt4

# server-client: tools on uds, the runtime listens on tcp (iOS).
start_fakert rt5 --listen tcp:127.0.0.1:0 --pid 1005 --stream-bytes $STREAM
start_dsroute d5 "uds:$T/tool5.sock" "tcp:127.0.0.1:$(fakert_port rt5),connect" \
    && mode_is "tools on uds, runtime listens on tcp" d5 server-client
processinfo "tools on uds, runtime listens on tcp" "$T/tool5.sock" 1005
collect "tools on uds, runtime listens on tcp" "$T/tool5.sock" rt5
stop_dsroute d5
stop rt5

# server-client: the runtime dials uds, the tool listens on tcp.
listening_tool lt6 tcp:127.0.0.1:0,listen processinfo
tport=$(tool_port lt6)
start_dsroute d6 "uds:$T/rt6.sock" \
    "tcp:127.0.0.1:$tport,connect,peer=tool" &&
mode_is "runtime dials uds, tool listens on tcp" d6 server-client
start_fakert rt6 --connect "$T/rt6.sock" --stream-bytes $STREAM
if finished lt6; then
	like "runtime dials uds, tool listens on tcp: ProcessInfo" \
	    "$(cat "$T/lt6.out")" "^pid=$(pid_of rt6) "
else
	fail "runtime dials uds, tool listens on tcp: ProcessInfo" \
	    "$(cat "$T/lt6.err")"
fi
listening_tool lt6b "tcp:127.0.0.1:$tport,listen" collect \
    --expect-bytes $STREAM
finished lt6b
stream_ok "runtime dials uds, tool listens on tcp" rt6 "$T/lt6b.out"
stop_dsroute d6
stop rt6

# client-client: the runtime's port on uds, the tool listens on tcp.
start_fakert rt7 --listen "$T/rt7.sock" --pid 1007 --stream-bytes $STREAM
listening_tool lt7 tcp:127.0.0.1:0,listen processinfo
tport=$(tool_port lt7)
start_dsroute d7 "uds:$T/rt7.sock" "tcp:127.0.0.1:$tport,connect" &&
mode_is "runtime's port to a listening tool on tcp" d7 client-client
if finished lt7; then
	is "client-client: the tool gets an advertise with the runtime's pid" \
	    "$(field pid "$T/lt7.out" | head -n 1)" 1007
	like "client-client: ProcessInfo answered" "$(cat "$T/lt7.out")" \
	    "^pid=1007 "
else
	fail "client-client: the tool gets an advertise with the runtime's pid"
	fail "client-client: ProcessInfo answered" "$(cat "$T/lt7.err")"
fi
listening_tool lt7b "tcp:127.0.0.1:$tport,listen" collect \
    --expect-bytes $STREAM
finished lt7b
stream_ok "runtime's port to a listening tool on tcp" rt7 "$T/lt7b.out"
stop_dsroute d7
stop rt7

# client-client with the runtime remote: it listens on tcp, the tool on uds.
start_fakert rt8 --listen tcp:127.0.0.1:0 --pid 1008 --stream-bytes $STREAM
listening_tool lt8 "$T/tool8.sock,listen" processinfo
start_dsroute d8 "uds:$T/tool8.sock" "tcp:127.0.0.1:$(fakert_port rt8),connect" \
    --runtime remote && mode_is "remote runtime, listening tool on uds" d8 \
    client-client
if finished lt8; then
	like "client-client, runtime remote: ProcessInfo answered" \
	    "$(cat "$T/lt8.out")" "^pid=1008 "
else
	fail "client-client, runtime remote: ProcessInfo answered" \
	    "$(cat "$T/lt8.err")"
fi
listening_tool lt8b "$T/tool8.sock,listen" collect --expect-bytes $STREAM
finished lt8b
stream_ok "remote runtime, listening tool on uds" rt8 "$T/lt8b.out"
stop_dsroute d8
stop rt8

done_testing
