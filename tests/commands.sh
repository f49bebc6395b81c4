#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Conversations of several connections: commands in a row on parked
# runtime connections, StopTracing on a second connection while a trace
# streams, and ProcessEnvironment's continuation.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# server-server: the runtime parks one connection at a time; each command
# takes it and the runtime dials again.  ProcessEnvironment takes the full
# role, more than network peers get by default.
start_dsroute d "uds:$T/rt.sock" tcp:127.0.0.1:0,policy=full
start_fakert rt --connect "$T/rt.sock"
addr="tcp:127.0.0.1:$(port_of d remote)"
check "server-server: 20 ProcessInfo in a row" \
    tool --timeout 60 "$addr" repeat 20 processinfo
is "server-server: the runtime served the first, the router the rest from its record" \
    "$(count_lines "$T/rt.ev" '^command 0x04 0x00 20 ProcessInfo$'):$(count_lines \
    "$T/d.err" "end=\"answered from the router's record of runtime pid")" 1:19
check "server-server: 20 ResumeRuntime in a row" \
    tool --timeout 60 "$addr" repeat 20 resume

# StopTracing: the trace runs on one connection, the stop goes on another.
tool --timeout 30 "$addr" collect --stop-after-bytes 1048576
id=$(field session "$T/tool.out")
wait_for 10 has_line "$T/rt.ev" "^stream-end $id "
like "StopTracing on a second connection ends the trace" \
    "$(grep "^stream-end $id " "$T/rt.ev")" "^stream-end $id [0-9]+ "
is "the tool got every byte the runtime sent after the stop" \
    "$(field sha256 "$T/tool.out")" \
    "$(sed -n "s/^stream-end $id [0-9]* //p" "$T/rt.ev")"
check "ProcessEnvironment: the continuation arrives to EOF" \
    tool --timeout 30 "$addr" env
like "ProcessEnvironment: its length checks" "$(cat "$T/tool.out")" \
    '^env count=[1-9]'
stop_dsroute d
stop rt

# client-server: the tool listens and uses each advertised connection;
# runtimes dial the TCP side from this host.
bg lt "$FAKETOOL" --timeout 60 "$T/tool.sock,listen" repeat 20 processinfo
wait_for 10 test -S "$T/tool.sock"
start_dsroute d2 "uds:$T/tool.sock,peer=tool" \
    tcp:127.0.0.1:0,advertise=addr:127.0.0.1
start_fakert rt2 --connect "tcp:127.0.0.1:$(port_of d2 remote)" --pid 2002
if wait "$(pid_of lt)"; then
	pass "client-server: a listening tool runs 20 commands in a row"
else
	fail "client-server: a listening tool runs 20 commands in a row" \
	    "$(cat "$T/lt.err")"
fi
is "client-server: one advertise reached the tool per runtime" \
    "$(count_lines "$T/lt.out" '^advertise pid=2002 ')" 1
stop_dsroute d2
stop rt2

# client-server before any tool listens: the runtime's connection waits,
# beyond the connect timeout, with one log line, for a tool to appear.
start_dsroute d3 --connect-timeout 1 "uds:$T/late.sock,connect,peer=tool" \
    tcp:127.0.0.1:0,advertise=any
start_fakert rt3 --connect "tcp:127.0.0.1:$(port_of d3 remote)" --pid 2003
check "no tool yet: the router says so once" \
    wait_for 10 has_line "$T/d3.err" 'no tool is listening'
sleep 3		# past the connect timeout three times over, not a sync
bg late "$FAKETOOL" --timeout 30 "$T/late.sock,listen" processinfo
if wait "$(pid_of late)"; then
	like "a tool that listens later gets the waiting runtime" \
	    "$(cat "$T/late.out")" "^pid=2003 "
else
	fail "a tool that listens later gets the waiting runtime" \
	    "$(cat "$T/late.err")"
fi
# Count up to the tool's arrival (it leaves after its one command).
sed '/a tool is listening again/q' "$T/d3.err" >"$T/d3.before"
is "one line while waiting, one when the tool came, no session ended" \
    "$(count_lines "$T/d3.before" 'no tool is listening'):$(count_lines \
    "$T/d3.before" 'a tool is listening again'):$(count_lines \
    "$T/d3.before" 'end="(connect|runtime closed while)')" "1:1:0"
stop_dsroute d3
stop rt3

done_testing
