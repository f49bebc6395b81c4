#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute.exe under wine in every mode, a named pipe on one side and TCP
# on the other: the Windows fakes on the pipe, the Linux fakes on TCP.  A
# ProcessInfo reaches the right runtime, and a 16 MiB EventPipe stream
# arrives with the SHA-256 the runtime sent.  (modes.sh is the same with
# socket files.)

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/wine.sh"

STREAM=16777216

stream_ok() {
	stream_same "$1" "$2" "$3" $STREAM
}

# collect DESC TOOL ADDR RUNTIME
collect() {
	"$2" --timeout 60 "$3" collect --expect-bytes $STREAM
	stream_ok "$1" "$4" "$T/tool.out"
}

listening_tool() {
	_name=$1
	shift
	bg "$_name" "$FAKETOOL" --timeout 60 "$@"
	wait_for 10 has_line "$T/$_name.out" '^listening ' ||
	    fail "$_name listens"
}

tool_port() {
	sed -n 's/^listening tcp:.*:\([0-9]*\)$/\1/p' "$T/$1.out"
}

# advertised NAME: the pid of the runtime that dialled router NAME, once
# it did.  A pipe's peer must advertise its own pid: the router checks.
advertised() {
	wait_for 30 has_line "$T/$1.err" 'runtime pid [0-9]+ .*connected' &&
	    sed -n 's/.*runtime pid \([0-9]*\) .*connected.*/\1/p' \
	    "$T/$1.err" | head -n 1
}

mode_is() {
	like "$1: mode" "$(grep '^info: route main:' "$T/$2.err")" \
	    "route main: $3\$"
}

# client-server: a runtime's pipe (its default name) bridged to TCP.
start_winrt rt1 --listen "${P}dotnet-diagnostic-1001" --pid 1001 \
    --stream-bytes $STREAM
start_exe d1 "pipe:${P}dotnet-diagnostic-1001" tcp:127.0.0.1:0 &&
mode_is "runtime's pipe to tcp" d1 client-server
like "an auto pipe: connects where a server is" "$(cat "$T/d1.err")" \
    "pipe:${P}dotnet-diagnostic-1001: connecting per session \\(a server is already at the pipe\\)"
processinfo_via "runtime's pipe to tcp" tool "tcp:127.0.0.1:$(port_of d1 remote)" 1001
collect "runtime's pipe to tcp" tool "tcp:127.0.0.1:$(port_of d1 remote)" rt1
stop_exe d1
stop rt1 INT

# server-server: the runtime dials the pipe, tools come over tcp.
start_exe d3 "pipe:${P}rt3" tcp:127.0.0.1:0 &&
mode_is "runtime dials the pipe, tools on tcp" d3 server-server
start_winrt rt3 --connect "${P}rt3" --stream-bytes $STREAM
pid3=$(advertised d3)
processinfo_via "runtime dials the pipe, tools on tcp" tool \
    "tcp:127.0.0.1:$(port_of d3 remote)" "${pid3:-none}"
collect "runtime dials the pipe, tools on tcp" tool \
    "tcp:127.0.0.1:$(port_of d3 remote)" rt3
stop_exe d3
stop rt3 INT

# server-server: the runtime dials tcp, tools come over the pipe.
start_exe d4 "pipe:${P}tool4" tcp:127.0.0.1:0,advertise=addr:127.0.0.1 &&
mode_is "runtime dials tcp, tools on the pipe" d4 server-server
start_fakert rt4 --connect "tcp:127.0.0.1:$(port_of d4 remote)" --pid 1004 \
    --stream-bytes $STREAM
processinfo_via "runtime dials tcp, tools on the pipe" wtool "${P}tool4" 1004
collect "runtime dials tcp, tools on the pipe" wtool "${P}tool4" rt4
stop_exe d4
stop rt4

# server-client: tools on the pipe, the runtime listens on tcp (iOS).
start_fakert rt5 --listen tcp:127.0.0.1:0 --pid 1005 --stream-bytes $STREAM
start_exe d5 "pipe:${P}tool5" "tcp:127.0.0.1:$(fakert_port rt5),connect" &&
mode_is "tools on the pipe, runtime listens on tcp" d5 server-client
processinfo_via "tools on the pipe, runtime listens on tcp" wtool "${P}tool5" 1005
collect "tools on the pipe, runtime listens on tcp" wtool "${P}tool5" rt5
stop_exe d5
stop rt5

# server-client: the runtime dials the pipe, the tool listens on tcp.
listening_tool lt6 tcp:127.0.0.1:0,listen processinfo
tport=$(tool_port lt6)
start_exe d6 "pipe:${P}rt6" "tcp:127.0.0.1:$tport,connect,peer=tool" &&
mode_is "runtime dials the pipe, tool listens on tcp" d6 server-client
start_winrt rt6 --connect "${P}rt6" --stream-bytes $STREAM
if wait "$(pid_of lt6)"; then
	pid6=$(sed -n 's/^advertise pid=\([0-9]*\) .*/\1/p' "$T/lt6.out")
	like "runtime dials the pipe, tool listens on tcp: ProcessInfo" \
	    "$(cat "$T/lt6.out")" "^pid=${pid6:-none} "
else
	fail "runtime dials the pipe, tool listens on tcp: ProcessInfo" \
	    "$(cat "$T/lt6.err")"
fi
listening_tool lt6b "tcp:127.0.0.1:$tport,listen" collect \
    --expect-bytes $STREAM
wait "$(pid_of lt6b)"
stream_ok "runtime dials the pipe, tool listens on tcp" rt6 "$T/lt6b.out"
stop_exe d6
stop rt6 INT

# client-client: the runtime's pipe, the tool listens on tcp.
start_winrt rt7 --listen "${P}rt7" --pid 1007 --stream-bytes $STREAM
listening_tool lt7 tcp:127.0.0.1:0,listen processinfo
tport=$(tool_port lt7)
start_exe d7 "pipe:${P}rt7,connect" "tcp:127.0.0.1:$tport,connect" &&
mode_is "runtime's pipe to a listening tool on tcp" d7 client-client
if wait "$(pid_of lt7)"; then
	like "client-client: ProcessInfo answered" "$(cat "$T/lt7.out")" \
	    "^pid=1007 "
else
	fail "client-client: ProcessInfo answered" "$(cat "$T/lt7.err")"
fi
listening_tool lt7b "tcp:127.0.0.1:$tport,listen" collect \
    --expect-bytes $STREAM
wait "$(pid_of lt7b)"
stream_ok "runtime's pipe to a listening tool on tcp" rt7 "$T/lt7b.out"
stop_exe d7
stop rt7 INT

done_testing
