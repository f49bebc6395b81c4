#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The TLS handshake itself (security.md §4.2): a silent or half-sent
# handshake is cut at the TLS handshake deadline, the silence
# deadline starts only once the handshake is done, plaintext is refused,
# renegotiation is refused and sessions are never resumed.  The fake
# runtime sees nothing in any of these.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

make_base_certs

start_fakert rt --listen "$T/rt.sock" --pid 8001
start_dsroute b --tls-handshake-timeout 1 --handshake-timeout 3 \
    --silent-timeout 3 \
    "uds:$T/rt.sock,connect" "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
addr="tcp:127.0.0.1:$(port_of b remote)"
port=$(port_of b remote)

# duration_within LO HI: the last session line's duration, in seconds.
duration_within() {
	awk -v lo="$1" -v hi="$2" '
	    /^info: session [0-9]+: / {
		sub(/.*duration=/, ""); sub(/s .*/, ""); d = $0
	    }
	    END { exit !(d + 0 >= lo && d + 0 <= hi) }' "$T/b.err"
}

tool --timeout 20 "$addr" raw "" --hold-ms 3000
ended b "TLS-21 a silent peer is cut at the TLS handshake deadline" \
    'end="tls handshake not complete within 1\.0s"'
check "TLS-21 ... after 1 s (within 1 s)" duration_within 0.9 2.0
untouched rt "TLS-21 silent"

# A ClientHello's record header and the start of its body, then nothing.
tool --timeout 20 "$addr" raw 16030100c8010000c40303 --hold-ms 3000
ended b "TLS-21 half a ClientHello is cut at the TLS handshake deadline" \
    'end="tls handshake not complete within 1\.0s"'
check "TLS-21 ... after 1 s (within 1 s)" duration_within 0.9 2.0
untouched rt "TLS-21 half a handshake"

# A plaintext tool on the TLS port.
tool --timeout 20 "$addr" processinfo
ended b "plaintext IPC on a TLS port fails the handshake" \
    'end="TLS handshake failed: '
untouched rt "plaintext"

# A client that completes the handshake and then says nothing: the
# silence deadline (3 s) applies, not the TLS one (1 s).
timeout 30 openssl s_client -connect "127.0.0.1:$port" -quiet \
    -CAfile "$C/ca.pem" -cert "$C/client1.pem" -key "$C/client1.key" \
    </dev/null >"$T/quiet.out" 2>"$T/quiet.err"
ended b "the first-message deadline starts after the handshake" \
    'peer=tls:[^ ]*\(cn:client1,[^ ]*\) end="sent nothing within 3\.0s \(--silent-timeout\)"'
check "... and runs its 3 s" duration_within 2.9 5.0
untouched rt "silent after the handshake"

# TLS-15: a client asks to renegotiate (TLS 1.2, "R" to s_client).
mkfifo "$T/in"
exec 3<>"$T/in"
# (Not bg: an asynchronous command's input would be /dev/null.)
openssl s_client -connect "127.0.0.1:$port" -no_tls1_3 -CAfile "$C/ca.pem" \
    -cert "$C/client1.pem" -key "$C/client1.key" <"$T/in" \
    >"$T/reneg.out" 2>"$T/reneg.err" 3>&- &
reneg=$!
_pids="$_pids $reneg"
if wait_for 15 has_line "$T/reneg.out" '^ *Verify return code: 0'; then
	echo R >&3
	check "TLS-15 renegotiation refused (no_renegotiation alert)" \
	    wait_for 15 eval "cat '$T/reneg.out' '$T/reneg.err' |
	    grep -q 'no renegotiation'"
else
	fail "TLS-15 s_client connects over TLS 1.2"
fi
exec 3>&-
wait "$reneg" 2>/dev/null
ended b "TLS-15 the session ends without a command" 'command=- '
untouched rt "TLS-15"

# TLS-17: no resumption, with a session ID or a ticket (TLS 1.2).
resume() {
	timeout 30 openssl s_client -connect "127.0.0.1:$port" -no_tls1_3 \
	    -CAfile "$C/ca.pem" -cert "$C/client1.pem" -key "$C/client1.key" \
	    "$@" </dev/null >"$T/resume.out" 2>&1
}
resume -sess_out "$T/session.pem"
ended b "TLS-17 a first connection" 'end='
if [ -s "$T/session.pem" ]; then
	resume -sess_in "$T/session.pem"
	ended b "TLS-17 a second connection offering the session" 'end='
	check "TLS-17 ... is not resumed" has_line "$T/resume.out" \
	    '^New, TLSv1\.2'
else
	check "TLS-17 nothing to resume: no session ID, no ticket" eval \
	    "has_line '$T/resume.out' '^ *Session-ID: *\$' &&
	    ! has_line '$T/resume.out' 'session ticket'"
fi
untouched rt "TLS-17"

check "the router stayed up" alive b
stop_dsroute b
stop rt
done_testing
