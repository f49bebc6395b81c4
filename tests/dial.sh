#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Dialling a runtime that is not there.  By default the tool gets an
# error frame at once, as a direct connection would fail at once: on a
# TCP port nobody listens on (0x8007274D, connection refused), at a
# socket path with no file (0x80070002, file not found) or with a stale
# socket file nobody serves (connection refused).  The end line says what
# happened.  In a chain, the tool's router says the far side answered so.
# --wait-for-runtime waits for the runtime instead, within
# --connect-timeout.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# A TCP port on loopback that nobody listens on: one a router had.
start_dsroute gone "uds:$T/gone0.sock" tcp:127.0.0.1:0
P=$(port_of gone remote)
stop_dsroute gone
start_dsroute r "uds:$T/r.sock" "tcp:127.0.0.1:$P,connect"
if tool --timeout 10 "$T/r.sock,connect" processinfo; then
	fail "nobody on the TCP port: the tool gets an error" "$(cat "$T/tool.out")"
else
	pass "nobody on the TCP port: the tool gets an error"
fi
check "... the error frame of a refused connection, 0x8007274D" \
    has_line "$T/tool.out" '^error 0x8007274D$'
check "... and the end line says so" wait_for 10 has_line "$T/r.err" \
    "end=\"connect to tcp:127\.0\.0\.1:$P failed: Connection refused; the tool got error 0x8007274d\"\$"
check "... with no retry: one session, no other dial" \
    eval "[ \$(count_lines '$T/r.err' 'session [0-9]+: route=') -eq 1 ]"
check "the route still serves the next" eval \
    "! tool --timeout 10 '$T/r.sock,connect' processinfo &&
    has_line '$T/tool.out' '^error 0x8007274D\$'"
stop_dsroute r

start_dsroute u "uds:$T/u.sock" "uds:$T/missing.sock,connect"
tool --timeout 10 "$T/u.sock,connect" processinfo
check "no socket at the runtime's path: 0x80070002" \
    has_line "$T/tool.out" '^error 0x80070002$'
check "... and the end line says so" wait_for 10 has_line "$T/u.err" \
    "end=\"connect to uds:$T/missing\.sock failed: No such file or directory; the tool got error 0x80070002\"\$"
# A socket file left by a runtime that is gone (killed: nothing unlinks).
bg stale socat -u "UNIX-LISTEN:$T/missing.sock,unlink-close=0" /dev/null
wait_for 10 test -S "$T/missing.sock"
stop stale KILL
check "a stale socket file is there" test -S "$T/missing.sock"
tool --timeout 10 "$T/u.sock,connect" processinfo
check "a stale socket at the runtime's path: 0x8007274D" \
    has_line "$T/tool.out" '^error 0x8007274D$'
stop_dsroute u
rm -f "$T/missing.sock"

# In a chain the refusal comes from the far router; the near one says so.
start_dsroute far "uds:$T/gone.sock,connect" tcp:127.0.0.1:0
start_dsroute near "uds:$T/near.sock" \
    "tcp:127.0.0.1:$(port_of far remote),connect"
tool --timeout 10 "$T/near.sock,connect" processinfo
check "a chain: the tool gets the far router's 0x80070002" \
    has_line "$T/tool.out" '^error 0x80070002$'
check "... and the near router says where it came from" wait_for 10 \
    has_line "$T/near.err" \
    'the runtime side answered ProcessInfo with error 0x80070002 \(file not found: no runtime.s socket there\)$'
stop_dsroute near
stop_dsroute far

# --wait-for-runtime: the command waits for the runtime to come.
start_dsroute w -v debug --wait-for-runtime --connect-timeout 30 \
    "uds:$T/w.sock" "uds:$T/late.sock,connect"
bg t "$FAKETOOL" --timeout 30 "$T/w.sock,connect" processinfo
check "--wait-for-runtime: the router dials again and again" wait_for 10 \
    eval "[ \$(count_lines '$T/w.err' 'session 1: connect to uds:.*/late\.sock: No such file or directory; again in') -ge 3 ]"
check "... while the tool waits" alive t
start_fakert late --listen "$T/late.sock" --pid 4711
if wait_exit t 20 && wait "$(pid_of t)"; then
	pass "... and gets the runtime's answer once it listens"
else
	fail "... and gets the runtime's answer once it listens" \
	    "$(cat "$T/t.out" "$T/t.err")"
fi
is "... from that runtime" "$(field pid "$T/t.out")" 4711
stop_dsroute w
stop late

done_testing
