#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A router dialling TLS (security.md §4.2, client side): it verifies the
# server's chain and the name or address it dialled, presents its own
# certificate when asked, and refuses TLS 1.1.  A refused dial passes no
# byte of the tool's command anywhere.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

make_base_certs
mkcert server other dns:other.test
mkcert -C ca2 server rogue dns:localhost ip:127.0.0.1
mkcert --not-before 20200101000000Z --not-after 20210101000000Z \
    server stale dns:localhost ip:127.0.0.1

# server NAME CERT: a router with CERT listening for TLS in front of the
# fake runtime NAME-rt.
server() {
	start_fakert "$1-rt" --listen "$T/$1-rt.sock" --pid 6001
	start_dsroute "$1" "uds:$T/$1-rt.sock,connect" \
	    "tls:127.0.0.1:0,$(cert "$2"),ca=$C/ca.pem"
}

# client NAME SERVER OPTIONS: a router next to the tools dialling SERVER.
client() {
	start_dsroute "$1" "uds:$T/$1.sock" \
	    "tls:127.0.0.1:$(port_of "$2" remote),connect,ca=$C/ca.pem,$(cert client1)$3"
}

# dial_refused NAME SERVER DESC EREGEX [OPTIONS]: a tool's command through a
# router dialling SERVER fails for a reason matching EREGEX.
dial_refused() {
	client "$1" "$2" "${5:-}"
	if tool --timeout 30 "$T/$1.sock" processinfo; then
		fail "$3: the tool's command fails"
	else
		pass "$3: the tool's command fails"
	fi
	_seen_sessions=0
	ended "$1" "$3: refused" "end=\"handshake to tls:127\.0\.0\.1:[0-9]+ failed: TLS handshake failed: server certificate verify failed: ($4)"
	untouched "$2-rt" "$3"
	stop_dsroute "$1"
}

server good localhost
server other other
server rogue rogue
server stale stale

client ok good ""
if tool --timeout 30 "$T/ok.sock" processinfo; then
	is "TLS-27 the server asks for a certificate: ours goes, the command too" \
	    "$(field pid "$T/tool.out")" 6001
else
	fail "TLS-27 the server asks for a certificate: ours goes, the command too" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi
_seen_sessions=0
ended ok "the dialled server's verified identity is in the session line" \
    "runtime=tls:127\.0\.0\.1:[0-9]+\(cn:localhost,sha256:$(fp localhost | cut -c1-16)\)"
stop_dsroute ok
: >"$T/good-rt.ev"

dial_refused sni good "TLS-24 host name mismatch (sni=wrong.test)" \
    "hostname mismatch" ",sni=wrong.test"
dial_refused ip other "TLS-24 the IP address dialled is not in the certificate" \
    "IP address mismatch"
dial_refused untrusted rogue "TLS-25 server certificate from an untrusted CA" \
    "unable to get local issuer certificate"
dial_refused expired stale "TLS-26 expired server certificate" \
    "certificate has expired"

: >"$T/other-rt.ev"
client named other ",sni=other.test"
if tool --timeout 30 "$T/named.sock" processinfo; then
	is "sni= names the server: the name in its certificate matches" \
	    "$(field pid "$T/tool.out")" 6001
else
	fail "sni= names the server: the name in its certificate matches" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi
stop_dsroute named

# TLS-28: a server that speaks only TLS 1.1 (the system's OpenSSL
# configuration, which may forbid it, left aside).
OPENSSL_CONF=/dev/null bg old openssl s_server -accept 127.0.0.1:0 \
    -naccept 1 -cert "$C/localhost.pem" -key "$C/localhost.key" -tls1_1 \
    -cipher DEFAULT@SECLEVEL=0 </dev/null
if wait_for 10 has_line "$T/old.out" '^ACCEPT'; then
	oport=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$T/old.out")
	start_dsroute old11 "uds:$T/old11.sock" \
	    "tls:127.0.0.1:$oport,connect,ca=$C/ca.pem"
	if tool --timeout 30 "$T/old11.sock" processinfo; then
		fail "TLS-28 a TLS 1.1 server: the tool's command fails"
	else
		pass "TLS-28 a TLS 1.1 server: the tool's command fails"
	fi
	_seen_sessions=0
	ended old11 "TLS-28 a TLS 1.1 server: the handshake fails" \
	    "end=\"handshake to [^\"]*: TLS handshake failed: "
	check "TLS-28 no TLS 1.1 session was set up" \
	    eval "! grep -q 'CIPHER is' '$T/old.out'"
	stop_dsroute old11
else
	fail "openssl s_server starts"
fi

for s in good other rogue stale; do
	stop_dsroute "$s"
done
done_testing
