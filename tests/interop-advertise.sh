#!/bin/sh
# SPDX-License-Identifier: ISC
#
# An ADVR_V1 advertise must never reach a runtime.  The real runtime reads
# one as a command header, takes two cookie bytes as the message size and
# waits, with no timeout, for a payload that never comes; its diagnostic
# server is one thread, so while the sender holds its connection the
# runtime answers nobody, not even on its own default socket.  A router in
# front of the app's default socket refuses the advertise instead, for
# three shapes:
#
#	(a) client-server, a TCP peer:	tcp -> router -> app's socket
#	(b) client-server, a TLS peer on the allow-list (policy=none)
#	(c) server-client, a local peer: front.sock -> router -> app's socket
#
# In each, while the advertiser holds its connection open, a ProcessInfo
# sent straight to the app's own socket is answered at once, the router
# logs the refusal (rule "peer=runtime") and serves tools as before.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

# The advertise: magic, cookie, pid 12345, two zero bytes.  Cookie bytes 6
# and 7 are where a command header has its size: 0x7766, far more than the
# 34 bytes sent, so a runtime that got it would wait for the rest.
COOKIE=00112233445566778899aabbccddeeff
ADV=414456525f563100${COOKIE}39300000000000000000
printf '\101\104\126\122\137\126\061\000\000\021\042\063\104\125\146\167\210\231\252\273\314\335\356\377\071\060\000\000\000\000\000\000\000\000' \
    >"$T/adv.bin"
is "the advertise is 34 bytes" "$(wc -c <"$T/adv.bin" | tr -d ' ')" 34
is "the file and the hex are the same advertise" \
    "$(od -An -v -tx1 "$T/adv.bin" | tr -d ' \n')" "$ADV"

DENY='command=advertise decision=deny .*rule="peer=runtime"'

start_app app
check "the app starts" wait_for 60 app_ready app
wait_for 30 has_socket app
S=$(app_socket app)
PID=$(pid_of app)
like "the app has its default socket" "$S" \
    "/dotnet-diagnostic-$PID-[0-9]+-socket\$"

# direct DESC: ProcessInfo straight to the app's own socket is answered
# within 5 s, and by the app.
direct() {
	if tool --timeout 5 "$S" processinfo; then
		is "$1" "$(field pid "$T/tool.out")" "$PID"
	else
		fail "$1" "status $?: $(cat "$T/tool.out" "$T/tool.err")"
	fi
}

# handled ROUTER: the router has dealt with the advertise, either refused
# it (the audit line) or passed it on to the runtime (its debug line, as
# dsroute did before the fix): whichever comes, the runtime's state is
# settled when the direct ProcessInfo goes.
handled() {
	has_line "$T/$1.err" "$DENY|has the advertise"
}

# held ROUTER DESC: an advertiser holds its connection (or the router
# closed it) and ROUTER has dealt with its advertise.  The runtime still
# answers on its own socket, the router logged the refusal and is still up.
held() {
	check "$2: the router has dealt with the advertise" \
	    wait_for 15 handled "$1"
	direct "$2: ProcessInfo on the app's own socket is answered"
	check "$2: the router logged the refusal" has_line "$T/$1.err" "$DENY"
	like "$2: the audit line names the advertised pid and cookie" \
	    "$(grep -E "$DENY" "$T/$1.err" | head -n 1)" \
	    "runtime_pid=12345 cookie=$COOKIE "
	check "$2: the router is still up" alive "$1"
}

# release NAME DESC: end the advertiser; the app answers on its socket.
release() {
	stop "$1" 2>/dev/null
	check "$2: the app answers once the advertiser is gone" \
	    wait_for 15 tool --timeout 5 "$S" processinfo
}

direct "before any advertise, ProcessInfo on the app's socket is answered"

# --- (a) client-server, the advertise over TCP --------------------------

start_dsroute ra -v debug "uds:$S" tcp:127.0.0.1:0
check "(a) the router connects to the app's live socket" has_line \
    "$T/ra.err" "connecting per session \(a listener is already at the path\)"
P=$(port_of ra remote)
bg adva "$FAKETOOL" --timeout 60 "tcp:127.0.0.1:$P" raw "$ADV" \
    --hold-ms 60000
held ra "(a) TCP"
like "(a) the refusal names the TCP peer" \
    "$(grep -E "$DENY" "$T/ra.err" | head -n 1)" 'peer="tcp:127\.0\.0\.1:'
if tool --timeout 10 "tcp:127.0.0.1:$P" processinfo; then
	is "(a) a tool's ProcessInfo over TCP still goes through" \
	    "$(field pid "$T/tool.out")" "$PID"
else
	fail "(a) a tool's ProcessInfo over TCP still goes through" \
	    "status $?: $(cat "$T/tool.out" "$T/tool.err")"
fi
release adva "(a)"
stop_dsroute ra

# --- (b) client-server, the advertise over TLS from an allowed peer ------

if command -v openssl >/dev/null 2>&1; then
	C=$T/certs
	for c in "ca ca" "server localhost dns:localhost ip:127.0.0.1" \
	    "client laptop"; do
		# shellcheck disable=SC2086
		sh "$top_srcdir/certs/mkcerts.sh" -d "$C" $c >/dev/null \
		    2>>"$T/mkcerts.err" ||
		    fail "mkcerts.sh $c" "$(cat "$T/mkcerts.err")"
	done
	start_dsroute rb -v debug "uds:$S" \
	    "tls:127.0.0.1:0,cert=$C/localhost.pem,key=$C/localhost.key,ca=$C/ca.pem,allow-cn=laptop,policy=none"
	P=$(port_of rb remote)
	# s_client sends the advertise and, with -quiet (-ign_eof), keeps
	# the connection after its input ends, until the router closes it.
	# (The redirection is inside: an asynchronous command's own stdin is
	# /dev/null.)
	tls_advertise() {
		exec timeout 60 openssl s_client -connect "127.0.0.1:$P" \
		    -quiet -verify_return_error -CAfile "$C/ca.pem" \
		    -cert "$C/laptop.pem" -key "$C/laptop.key" <"$T/adv.bin"
	}
	bg advb tls_advertise
	held rb "(b) TLS"
	like "(b) the refusal names the verified peer" \
	    "$(grep -E "$DENY" "$T/rb.err" | head -n 1)" \
	    'peer="tls:127\.0\.0\.1:[0-9]+\(cn:laptop,'
	# A tool with the same certificate, through a router on its side:
	# the router judges its command as before (policy=none: refused
	# with the runtime's access-denied frame, not left hanging).
	start_dsroute tb "uds:$T/tb.sock" \
	    "tls:127.0.0.1:$P,connect,ca=$C/ca.pem,cert=$C/laptop.pem,key=$C/laptop.key"
	tool --timeout 10 "$T/tb.sock" processinfo
	is "(b) a tool's ProcessInfo over TLS is judged: access denied" \
	    "$(cat "$T/tool.out")" "error 0x80070005"
	check "(b) the router logged that refusal" wait_for 15 has_line \
	    "$T/rb.err" 'command=ProcessInfo decision=deny .*role_from="policy=none"'
	stop_dsroute tb
	release advb "(b)"
	stop_dsroute rb
else
	skip "(b) TLS" "openssl(1) is not installed"
fi

# --- (c) server-client, a local peer advertises on the front socket ------

start_dsroute rc -v debug "uds:$T/front.sock,listen" "uds:$S,connect"
bg advc "$FAKETOOL" --timeout 60 "$T/front.sock" raw "$ADV" --hold-ms 60000
held rc "(c) local"
like "(c) the refusal names the local peer" \
    "$(grep -E "$DENY" "$T/rc.err" | head -n 1)" \
    "peer=\"uds:$T/front\.sock"
if tool --timeout 10 "$T/front.sock" processinfo; then
	is "(c) a tool's ProcessInfo on the front socket still goes through" \
	    "$(field pid "$T/tool.out")" "$PID"
else
	fail "(c) a tool's ProcessInfo on the front socket still goes through" \
	    "status $?: $(cat "$T/tool.out" "$T/tool.err")"
fi
release advc "(c)"
stop_dsroute rc

is "the app printed nothing on stderr" "$(cat "$T/app.err")" ""
stop_app app

done_testing
