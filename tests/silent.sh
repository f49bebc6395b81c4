#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A connection that says nothing at first is kept, not cut: dotnet-dsrouter's
# client-client mode opens one and stays silent until a tool comes.  It holds
# no runtime while silent, its first byte starts the first-message deadline,
# and --silent-timeout bounds the silence.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

start_dsroute d -v debug --handshake-timeout 1 "uds:$T/rt.sock" \
    tcp:127.0.0.1:0
start_fakert rt --connect "$T/rt.sock"
addr="tcp:127.0.0.1:$(port_of d remote)"
wait_for 10 has_line "$T/d.err" "runtime pid $(pid_of rt) .* connected"

# A tool that is silent for 30 s, then asks for ProcessInfo.
# ProcessInfo2: the runtime's answer; a ProcessInfo after the first would
# be the router's, from its record.
bg quiet "$FAKETOOL" --timeout 60 --silent-ms 30000 "$addr" processinfo2
wait_for 5 has_line "$T/d.err" "accepted tcp:127\.0\.0\.1:[0-9]+ on tcp:"
sleep 2
is "silent past the 1 s first-message deadline: no session has ended" \
    "$(count_lines "$T/d.err" '^info: session [0-9]+: ')" 0
check "... and the silent tool still waits" alive quiet

# The runtime is not held meanwhile: another tool is served at once.
check "another tool is served while one is silent" \
    tool --timeout 10 "$addr" processinfo
is "... the runtime saw only that command so far" \
    "$(count_lines "$T/rt.ev" '^command ')" 1

check "the silent tool is served once it speaks, 30 s on" wait_exit quiet 45
if wait "$(pid_of quiet)"; then
	pass "... its ProcessInfo succeeded"
else
	fail "... its ProcessInfo succeeded" "$(cat "$T/quiet.err")"
fi
is "... with the runtime's answer" "$(field pid "$T/quiet.out")" "$(pid_of rt)"
is "the runtime saw two commands in all" \
    "$(count_lines "$T/rt.ev" '^command 0x04 0x0[04] 20 ProcessInfo')" 2
stop_dsroute d

# The silence has a bound; once a byte came, the first-message deadline.
start_dsroute s --handshake-timeout 30 --silent-timeout 2 "uds:$T/rt.sock" \
    tcp:127.0.0.1:0
addr="tcp:127.0.0.1:$(port_of s remote)"
wait_for 10 has_line "$T/s.err" "runtime pid $(pid_of rt) .* connected"
tool --timeout 20 --silent-ms 10000 "$addr" processinfo
is "a connection silent past --silent-timeout is closed" "$?" 2
like "... with one line that names the setting" \
    "$(grep -E '^info: session [0-9]+: ' "$T/s.err" | tail -n 1)" \
    'end="sent nothing within 2\.0s \(--silent-timeout\)"'
check "... and the router serves the next tool" \
    tool --timeout 10 "$addr" processinfo
is "the silent connection reached no runtime" \
    "$(count_lines "$T/rt.ev" '^command ')" 3
stop_dsroute s
stop rt

done_testing
