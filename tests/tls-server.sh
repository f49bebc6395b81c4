#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A TLS listener with mutual TLS and an allow-list (security.md §4.2,
# server side): who gets through, who is refused and why, and that the
# fake runtime behind it sees no connection at all for a refused peer.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

make_base_certs
mkcert client client2
mkcert client fponly
mkcert client spiffe uri:spiffe://dsroute.test/tool
mkcert client wrongtype uri:tool.dsroute.test
mkcert -C ca2 client stranger
mkcert --not-before 20200101000000Z --not-after 20210101000000Z \
    client expired
mkcert --not-before 20990101000000Z --not-after 21000101000000Z \
    client future
mkcert --eku serverAuth client serveronly

# The router next to the runtime: TLS in, the runtime's socket out.
start_fakert rt --listen "$T/rt.sock" --pid 5001
start_dsroute b --tls-handshake-timeout 2 "uds:$T/rt.sock,connect" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,allow-cn=client1,allow-san=uri:spiffe://dsroute.test/tool,allow-san=dns:tool.dsroute.test,allow-fp=$(fp fponly)"
port=$(port_of b remote)

# A good client: the router next to the tools, with client1's certificate.
start_dsroute a "uds:$T/tool.sock" \
    "tls:127.0.0.1:$port,connect,ca=$C/ca.pem,$(cert client1)"
if tool --timeout 30 "$T/tool.sock" processinfo; then
	is "TLS-1 mTLS client on the allow-list: ProcessInfo goes through" \
	    "$(field pid "$T/tool.out")" 5001
else
	fail "TLS-1 mTLS client on the allow-list: ProcessInfo goes through" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi
ended b "TLS-1: the session line names the verified client" \
    "tool=tls:127\.0\.0\.1:[0-9]+\(cn:client1,sha256:$(fp client1 | cut -c1-16)\) .*end=\"(runtime|tool) closed\""
stop_dsroute a
is "TLS-1: the runtime served exactly one command" \
    "$(count_lines "$T/rt.ev" '^command ')" 1
: >"$T/rt.ev"

# rejected NAME DESC EREGEX ARGS...: s_client with ARGS is refused by the
# router for a reason matching EREGEX; the runtime sees nothing.
rejected() {
	_rname=$1
	_rdesc=$2
	_rwhy=$3
	shift 3
	if sclient "$_rname" "$port" "$@"; then
		fail "$_rdesc: s_client fails"
	else
		pass "$_rdesc: s_client fails"
	fi
	ended b "$_rdesc: refused" "end=\"[^\"]*($_rwhy)"
	untouched rt "$_rdesc"
}

rejected none "TLS-2 no client certificate" \
    "peer did not return a certificate|certificate required"
rejected stranger "TLS-3 client certificate from an unknown CA" \
    "unable to get local issuer certificate" -cert "$C/stranger.pem" -key "$C/stranger.key"
rejected expired "TLS-4 expired client certificate" \
    "certificate has expired" -cert "$C/expired.pem" -key "$C/expired.key"
rejected future "TLS-5 client certificate not yet valid" \
    "certificate is not yet valid" -cert "$C/future.pem" \
    -key "$C/future.key"
rejected serveronly "TLS-7 client certificate with serverAuth only" \
    "unsuitable certificate purpose" -cert "$C/serveronly.pem" \
    -key "$C/serveronly.key"
rejected tls11 "TLS-12 TLS 1.1 offered" \
    "unsupported protocol|version" -tls1_1 -cipher DEFAULT@SECLEVEL=0 \
    -cert "$C/client1.pem" -key "$C/client1.key"
rejected tls10 "TLS-12 TLS 1.0 offered" \
    "unsupported protocol|version" -tls1 -cipher DEFAULT@SECLEVEL=0 \
    -cert "$C/client1.pem" -key "$C/client1.key"

# denied NAME DESC: a verified client not on the allow-list finishes the
# handshake, gets the access-denied frame, and nothing reaches the runtime.
denied() {
	sclient "$1" "$port" -cert "$C/$1.pem" -key "$C/$1.key"
	is "$2: the tool gets access denied (0x80070005)" \
	    "$(hex "$T/$1.out")" "$DENIED_FRAME"
	audited b "$2: the identity is logged, the command denied" \
	    "peer=\"tls:[^ ]*\(cn:$1,sha256:[0-9a-f]{16}\)\" .*command=ProcessInfo decision=deny .*rule=\"allow-list\" reason=\"identity not on the allow-list\""
	untouched rt "$2"
}

# allowed NAME DESC: a client on the allow-list gets the runtime's answer.
allowed() {
	sclient "$1" "$port" -cert "$C/$1.pem" -key "$C/$1.key"
	like "$2: the runtime answers" "$(hex "$T/$1.out")" \
	    "^444f544e45545f4950435f563100....ff00"
	ended b "$2: the session ends normally" "end=\"(runtime|tool) closed\""
	: >"$T/rt.ev"
}

denied client2 "TLS-8 verified client not on the allow-list"
denied wrongtype "TLS-9 the allowed DNS name as a URI SAN"
allowed spiffe "TLS-9 the allowed URI SAN"
allowed fponly "allow-fp: a certificate allowed by its fingerprint"

# The same denial through a real tool path: faketool -> dsroute -> TLS.
start_dsroute a2 "uds:$T/tool2.sock" \
    "tls:127.0.0.1:$port,connect,ca=$C/ca.pem,$(cert client2)"
tool --timeout 30 "$T/tool2.sock" processinfo
is "TLS-8 a tool behind a router with an unlisted certificate: denied" \
    "$(cat "$T/tool.out")" "error 0x80070005"
audited b "TLS-8: the router logs the denial" \
    "reason=\"identity not on the allow-list\""
untouched rt "TLS-8 through a router"
stop_dsroute a2

check "the router stayed up" alive b
stop_dsroute b
done_testing
