#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute.exe under wine with a named pipe on one side and mutual TLS on
# the other, in both directions and with both TLS roles: mbed TLS in
# dsroute.exe talks to OpenSSL in a Linux dsroute at the other end of the
# link, the Linux fakes beyond it, the Windows fakes on the pipe.  A
# ProcessInfo reaches the right runtime and a 16 MiB EventPipe stream
# arrives with the SHA-256 the runtime sent (windows-modes.sh is the same
# over plain TCP, tls.sh the same between two Linux routers).  A client
# certificate from a CA dsroute.exe does not trust is refused with one log
# line while the router stays up, and a server certificate from such a CA
# is refused by the side that dials, whichever it is.
#
#   runtime on the pipe, tools over TLS:
#     1. winfakert --listen <- dsroute.exe (TLS listens) <- dsroute <- tool
#     2. winfakert --connect -> dsroute.exe (TLS dials, peer=tool)
#                             -> dsroute (parks it) <- tool
#   tools on the pipe, the runtime over TLS:
#     3. winfaketool -> dsroute.exe (TLS listens) <- dsroute <- fakert
#     4. winfaketool -> dsroute.exe (TLS dials) -> dsroute -> fakert
#
# A tool on the pipe must see the end of a stream when the runtime ends
# it: a pipe has no half-close, so dsroute.exe closes the tool's pipe.
# Cases 3 and 4 give dsroute.exe --close-timeout 6, so that a regression
# fails in seconds, not in the default 60.
#
# A tool that half-closes after its command (a TLS close_notify from the
# tools' router) still gets the runtime's whole answer: the runtime's pipe
# stays open, since closing is a pipe's only shutdown.  Socket errors are
# logged in words (compat_strerror), not msvcrt's "Unknown error".

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/wine.sh"
. "$top_srcdir/tests/lib/tls.sh"

STREAM=16777216
CLOSE_TIMEOUT=6

make_base_certs
mkcert -C ca2 client stranger
mkcert -C ca2 server rogue dns:localhost ip:127.0.0.1

ms() {
	echo $(($(date +%s%N) / 1000000))
}

# collect DESC TOOL ADDR RUNTIME: a 16 MiB stream, the same SHA-256 at
# both ends; the time it took in $elapsed (ms).
collect() {
	_t0=$(ms)
	"$2" --timeout 60 "$3" collect --expect-bytes $STREAM
	elapsed=$(($(ms) - _t0))
	stream_same "$1" "$4" "$T/tool.out" $STREAM
}

# pipe_end_seen DESC: after collect, the tool on the pipe saw the end of
# the stream before dsroute.exe's --close-timeout cut it.
pipe_end_seen() {
	if [ "$elapsed" -lt $(((CLOSE_TIMEOUT - 1) * 1000)) ]; then
		pass "$1: the tool on the pipe sees the stream end with the runtime's"
	else
		fail "$1: the tool on the pipe sees the stream end with the runtime's" \
		    "took ${elapsed}ms, --close-timeout ${CLOSE_TIMEOUT}s"
	fi
}

mode_is() {
	like "$1: mode" "$(grep '^info: route main:' "$T/$2.err")" \
	    "route main: $3\$"
}

commands() {
	count_lines "$T/$1.ev" '^command '
}

oks() {
	count_lines "$T/$1.err" "^info: session [0-9]+: .*command=$2 .*answer=ok"
}

# advertised NAME: the pid of the runtime whose advertise router NAME
# took, once it did.
advertised() {
	wait_for 30 has_line "$T/$1.err" 'runtime pid [0-9]+ .*connected' &&
	    sed -n 's/.*runtime pid \([0-9]*\) .*connected.*/\1/p' \
	    "$T/$1.err" | head -n 1
}

# ----------------------------------------------------------------------
# 1. The runtime's pipe, dsroute.exe listening for TLS, the tools' router
# (Linux) dialling it with client1's certificate.
start_winrt rt1 --listen "${P}rt1" --pid 1101 --stream-bytes $STREAM
start_exe x1 "pipe:${P}rt1" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,allow-cn=client1" &&
mode_is "1 runtime's pipe, dsroute.exe listens for TLS" x1 client-server
like "1 dsroute.exe's TLS is mbed TLS, verify required" \
    "$(grep '^info: remote tls:' "$T/x1.err")" \
    'listening .*mbed TLS 2\.[0-9.]+, verify required'
port1=$(port_of x1 remote)
start_dsroute l1 "uds:$T/l1.sock" \
    "tls:127.0.0.1:$port1,connect,ca=$C/ca.pem,$(cert client1)"
processinfo_via "1 runtime's pipe, dsroute.exe listens for TLS" tool \
    "$T/l1.sock" 1101
collect "1 runtime's pipe, dsroute.exe listens for TLS" tool "$T/l1.sock" rt1
like "1 dsroute.exe's session line has the verified client" \
    "$(grep 'command=CollectTracing' "$T/x1.err" | tail -n 1)" \
    "tool=tls:127\.0\.0\.1:[0-9]+\(cn:client1,sha256:$(fp client1 | cut -c1-16)\) runtime=pipe:${P}rt1\(pid [1-9]"
like "1 OpenSSL verified dsroute.exe's server certificate" \
    "$(grep 'command=CollectTracing' "$T/l1.err" | tail -n 1)" \
    "runtime=tls:127\.0\.0\.1:$port1\(cn:localhost,sha256:$(fp localhost | cut -c1-16)\)"

# A tool that half-closes after its command: the tools' router passes
# that on as a TLS close_notify, and the runtime on the pipe must still
# be able to answer (tls.sh checks the same between two Linux routers).
# The runtime serves one connection at a time and reads a header with no
# deadline: a tool holding half a header for 3 s keeps it from answering
# until dsroute.exe has taken the close_notify, whatever the load.
MAGIC=444f544e45545f4950435f563100
accepts=$(count_lines "$T/rt1.ev" '^accept$')
bg blocker wine "$WINFAKETOOL" --timeout 3 "${P}rt1" raw "$MAGIC" \
    --hold-ms 3000
wait_for 20 eval "[ \$(count_lines '$T/rt1.ev' '^accept\$') -gt $accepts ]"
tool --timeout 30 --shut-wr "$T/l1.sock" collect --expect-bytes $STREAM
_id=$(field session "$T/tool.out")
[ -n "$_id" ] &&
    wait_for 10 has_line "$T/rt1.ev" "^stream-(end|broken) $_id "
wait "$(pid_of blocker)"
half_closed_ok() {
	_want=$(sed -n "s/^stream-end ${_id:-none} $STREAM //p" "$T/rt1.ev")
	[ -n "$_want" ] && [ "$(field bytes "$T/tool.out")" = $STREAM ] &&
	    [ "$(field sha256 "$T/tool.out")" = "$_want" ]
}
check "1 a tool's half-close (close_notify): the whole stream still arrives" \
    half_closed_ok

# A tools' router whose client certificate another CA signed: dsroute.exe
# refuses it with one line, the runtime sees nothing, and the router
# still serves the good one.
wait_for 15 eval "[ \$(count_lines '$T/x1.err' 'command=CollectTracing') -ge 2 ]"
lines=$(wc -l <"$T/x1.err")
cmds=$(commands rt1)
pis=$(oks x1 ProcessInfo)
start_dsroute l1s "uds:$T/l1s.sock" \
    "tls:127.0.0.1:$port1,connect,ca=$C/ca.pem,$(cert stranger)"
if tool --timeout 20 "$T/l1s.sock" processinfo; then
	fail "1 a client certificate from another CA: the command fails" \
	    "$(cat "$T/tool.out")"
else
	pass "1 a client certificate from another CA: the command fails"
fi
wait_for 15 has_line "$T/x1.err" 'client certificate verify failed'
check "1 ... dsroute.exe is still up" alive x1
processinfo_via "1 ... and still serves client1" tool "$T/l1.sock" 1101
wait_for 15 eval "[ \$(oks x1 ProcessInfo) -gt $pis ]"
tail -n +"$((lines + 1))" "$T/x1.err" |
    grep -Ev "command=ProcessInfo .*cn:client1.*answer=ok" >"$T/x1.new"
is "1 ... refused with one log line" "$(wc -l <"$T/x1.new")" 1
like "1 ... which says why" "$(cat "$T/x1.new")" \
    '^info: session [0-9]+: .*peer=tls:127\.0\.0\.1:[0-9]+ end="TLS handshake failed: client certificate verify failed: unable to get local issuer certificate'
like "1 ... the dialling router (OpenSSL) hears the alert" \
    "$(grep '^info: session' "$T/l1s.err" | tail -n 1)" \
    'end="handshake to tls:127\.0\.0\.1:[0-9]+ failed: TLS handshake failed: .*unknown ca'
is "1 ... no byte of it reached the runtime" "$(commands rt1)" "$((cmds + 1))"
stop_dsroute l1s

# No client certificate at all (openssl s_client).
sclient nocert "$port1"
check "1 no client certificate: refused" wait_for 15 has_line "$T/x1.err" \
    'end="TLS handshake failed: peer did not return a certificate'
is "1 ... no byte of it reached the runtime" "$(commands rt1)" "$((cmds + 1))"

# dsroute.exe with a server certificate from another CA: OpenSSL, dialling,
# refuses it.
cmds=$(commands rt1)
start_exe x1r "pipe:${P}rt1" \
    "tls:127.0.0.1:0,$(cert rogue),ca=$C/ca.pem,allow-cn=client1"
start_dsroute l1r "uds:$T/l1r.sock" \
    "tls:127.0.0.1:$(port_of x1r remote),connect,ca=$C/ca.pem,$(cert client1)"
if tool --timeout 20 "$T/l1r.sock" processinfo; then
	fail "1 dsroute.exe's server certificate from another CA: the command fails"
else
	pass "1 dsroute.exe's server certificate from another CA: the command fails"
fi
check "1 ... OpenSSL refuses it" wait_for 15 has_line "$T/l1r.err" \
    'end="handshake to tls:127\.0\.0\.1:[0-9]+ failed: TLS handshake failed: server certificate verify failed: unable to get local issuer certificate'
check "1 ... dsroute.exe logs the failed handshake" wait_for 15 has_line \
    "$T/x1r.err" 'peer=tls:127\.0\.0\.1:[0-9]+ end="TLS handshake failed: '
is "1 ... no byte of it reached the runtime" "$(commands rt1)" "$cmds"
stop_dsroute l1r
stop_exe x1r
stop_dsroute l1
stop_exe x1
stop rt1 INT

# ----------------------------------------------------------------------
# 2. The runtime dials dsroute.exe's pipe; dsroute.exe dials the tools'
# router over TLS (peer=tool), which parks the runtime for its tools.
start_dsroute l2 "uds:$T/l2.sock" "tls:127.0.0.1:0,$(cert localhost),\
ca=$C/ca.pem,allow-cn=client1,advertise=cn:client1"
start_exe x2 "pipe:${P}rt2" "tls:127.0.0.1:$(port_of l2 remote),connect,\
peer=tool,ca=$C/ca.pem,$(cert client1)" &&
mode_is "2 runtime dials the pipe, dsroute.exe dials TLS" x2 server-client
like "2 dsroute.exe dials with mbed TLS, verify required" \
    "$(grep '^info: remote tls:' "$T/x2.err")" \
    'connecting .*mbed TLS 2\.[0-9.]+, verify required'
start_winrt rt2 --connect "${P}rt2" --stream-bytes $STREAM
pid2=$(advertised l2)
like "2 the tools' router parks the runtime, from dsroute.exe's certificate" \
    "$(grep 'runtime pid .*connected' "$T/l2.err" | head -n 1)" \
    "runtime pid ${pid2:-none} \(cookie [0-9a-f]{32}\) connected on tls:127\.0\.0\.1:[0-9]+"
processinfo_via "2 runtime dials the pipe, dsroute.exe dials TLS" tool \
    "$T/l2.sock" "${pid2:-none}"
collect "2 runtime dials the pipe, dsroute.exe dials TLS" tool \
    "$T/l2.sock" rt2
like "2 the tools' router's session line has dsroute.exe's identity" \
    "$(grep 'command=CollectTracing' "$T/l2.err" | tail -n 1)" \
    "runtime=tls:127\.0\.0\.1:[0-9]+\(cn:client1,sha256:$(fp client1 | cut -c1-16)\) runtime_pid=${pid2:-none} "
stop_exe x2
stop_dsroute l2
stop rt2 INT

# ----------------------------------------------------------------------
# 3. Tools on dsroute.exe's pipe; dsroute.exe listens for TLS, where the
# runtime's router (Linux) dials it and advertises its runtime.
start_exe x3 "pipe:${P}tool3" "tls:127.0.0.1:0,$(cert localhost),\
ca=$C/ca.pem,allow-cn=client1,advertise=cn:client1" \
    --close-timeout $CLOSE_TIMEOUT &&
mode_is "3 tools on the pipe, dsroute.exe listens for TLS" x3 server-server
port3=$(port_of x3 remote)
start_dsroute l3 "uds:$T/l3.sock" "tls:127.0.0.1:$port3,connect,peer=tool,\
ca=$C/ca.pem,$(cert client1)"
start_fakert rt3 --connect "$T/l3.sock" --stream-bytes $STREAM
check "3 dsroute.exe takes the runtime's advertise over TLS" \
    wait_for 30 has_line "$T/x3.err" \
    "runtime pid $(pid_of rt3) \\(cookie [0-9a-f]+\\) connected on tls:"
processinfo_via "3 tools on the pipe, dsroute.exe listens for TLS" wtool \
    "${P}tool3" "$(pid_of rt3)"
collect "3 tools on the pipe, dsroute.exe listens for TLS" wtool \
    "${P}tool3" rt3
pipe_end_seen "3 tools on the pipe, dsroute.exe listens for TLS"

# A runtime's router with a certificate from another CA: refused, never
# parked, and dsroute.exe stays up.
start_dsroute l3s "uds:$T/l3s.sock" "tls:127.0.0.1:$port3,connect,\
peer=tool,ca=$C/ca.pem,$(cert stranger)"
start_fakert rt3s --connect "$T/l3s.sock"
check "3 a runtime's router with another CA's certificate: refused" \
    wait_for 15 has_line "$T/x3.err" \
    'end="TLS handshake failed: client certificate verify failed: unable to get local issuer certificate'
check "3 ... and never parked" eval \
    "! has_line '$T/x3.err' 'runtime pid $(pid_of rt3s) '"
stop rt3s
stop_dsroute l3s
check "3 ... dsroute.exe is still up" alive x3
processinfo_via "3 ... and still serves the good runtime" wtool "${P}tool3" \
    "$(pid_of rt3)"
stop_exe x3
stop_dsroute l3
stop rt3

# ----------------------------------------------------------------------
# 4. Tools on dsroute.exe's pipe; dsroute.exe dials the runtime's router
# over TLS, in front of a runtime listening on its socket.
start_fakert rt4 --listen "$T/rt4.sock" --pid 1104 --stream-bytes $STREAM
start_dsroute l4 "uds:$T/rt4.sock,connect" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,allow-cn=client1"
start_exe x4 "pipe:${P}tool4" "tls:127.0.0.1:$(port_of l4 remote),connect,\
ca=$C/ca.pem,$(cert client1)" --close-timeout $CLOSE_TIMEOUT &&
mode_is "4 tools on the pipe, dsroute.exe dials TLS" x4 server-client
processinfo_via "4 tools on the pipe, dsroute.exe dials TLS" wtool "${P}tool4" 1104
collect "4 tools on the pipe, dsroute.exe dials TLS" wtool "${P}tool4" rt4
pipe_end_seen "4 tools on the pipe, dsroute.exe dials TLS"
like "4 dsroute.exe verified the server: its session line" \
    "$(grep 'command=CollectTracing' "$T/x4.err" | tail -n 1)" \
    "runtime=tls:127\.0\.0\.1:[0-9]+\(cn:localhost,sha256:$(fp localhost | cut -c1-16)\)"
like "4 the runtime's router verified dsroute.exe's client certificate" \
    "$(grep 'command=CollectTracing' "$T/l4.err" | tail -n 1)" \
    "tool=tls:127\.0\.0\.1:[0-9]+\(cn:client1,sha256:$(fp client1 | cut -c1-16)\)"

# A runtime's router with a server certificate from another CA:
# dsroute.exe (mbed TLS), dialling, refuses it.
cmds=$(commands rt4)
start_dsroute l4r "uds:$T/rt4.sock,connect" \
    "tls:127.0.0.1:0,$(cert rogue),ca=$C/ca.pem,allow-cn=client1"
start_exe x4r "pipe:${P}tool4r" "tls:127.0.0.1:$(port_of l4r remote),\
connect,ca=$C/ca.pem,$(cert client1)"
if wtool --timeout 20 "${P}tool4r" processinfo; then
	fail "4 a server certificate from another CA: the command fails" \
	    "$(cat "$T/tool.out")"
else
	pass "4 a server certificate from another CA: the command fails"
fi
check "4 ... dsroute.exe (mbed TLS) refuses it" wait_for 15 has_line \
    "$T/x4r.err" 'end="handshake to tls:127\.0\.0\.1:[0-9]+ failed: TLS handshake failed: server certificate verify failed: unable to get local issuer certificate'
check "4 ... the runtime's router hears the alert" wait_for 15 has_line \
    "$T/l4r.err" 'end="TLS handshake failed: .*unknown ca'
is "4 ... no byte of it reached the runtime" "$(commands rt4)" "$cmds"
check "4 ... dsroute.exe is still up" alive x4r

# Nothing listens there any more: the tool gets the error frame a
# runtime would send (connection refused), and the log says so.
stop_dsroute l4r
wtool --timeout 20 "${P}tool4r" processinfo
like "4 nothing listens: the tool gets connection refused (0x8007274D)" \
    "$(cat "$T/tool.out" "$T/tool.err")" 'error 0x8007274[dD]'
check "4 ... the session line says the dial failed" wait_for 15 has_line \
    "$T/x4r.err" 'end="connect to tls:127\.0\.0\.1:[0-9]+ failed: .*; the tool got error 0x8007274d"'
check "4 ... in words: Connection refused" \
    has_line "$T/x4r.err" 'failed: Connection refused; the tool got error'
stop_exe x4r
stop_exe x4
stop_dsroute l4
stop rt4

done_testing
