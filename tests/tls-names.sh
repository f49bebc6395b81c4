#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Whom a certificate names, and through which chain (security.md §4.2,
# TLS-10 and TLS-11): a name with a NUL byte inside never matches, not
# even cut at the NUL, on a listener's allow-list or as the host a router
# dials; a CN that equals an allowed DNS name does not stand in for the
# SAN; and a client certificate is refused when its issuer is no CA,
# when the intermediate is missing, or when the path is longer than a CA
# allows.  The fake runtime sees nothing of any of them.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

command -v perl >/dev/null || skip_all "perl is not installed"

# nul_cert NAME KIND CN SAN...: a certificate signed by the CA whose CN
# and SANs hold "ZZ" where a NUL byte goes: openssl(1) cannot write one,
# so the request is patched and then signed without checking its own
# signature (req -x509 -CA does not).
nul_cert() {
	_name=$1
	_eku=$2
	_cn=$3
	shift 3
	_sans=$(echo "$*" | sed 's/dns:/DNS:/g; s/uri:/URI:/g; s/ /,/g')
	cat >"$T/$_name.cnf" <<EOF
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = $_cn
[ names ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = $_eku
subjectKeyIdentifier = hash
subjectAltName = $_sans
[ signed ]
authorityKeyIdentifier = keyid
EOF
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
	    -out "$C/$_name.key" 2>/dev/null &&
	openssl req -new -key "$C/$_name.key" -config "$T/$_name.cnf" \
	    -reqexts names -outform DER -out "$T/$_name.req" &&
	perl -pe 's/ZZ/\x00Z/g' "$T/$_name.req" >"$T/$_name-nul.req" &&
	openssl req -inform DER -in "$T/$_name-nul.req" -x509 \
	    -CA "$C/ca.pem" -CAkey "$C/ca.key" -days 30 \
	    -copy_extensions copyall -config "$T/$_name.cnf" \
	    -extensions signed -out "$C/$_name.pem" 2>>"$T/mkcerts.err" ||
	    fail "make the certificate $_name" "$(cat "$T/mkcerts.err")"
}

make_base_certs
# TLS-10
mkcert client sanonly dns:tool.dsroute.test
mkcert client tool.dsroute.test dns:other.dsroute.test
nul_cert nul clientAuth cnonlyZZ.evil dns:tool.dsroute.testZZ.evil \
    uri:spiffe://dsroute.test/toolZZ.evil
nul_cert nulserver serverAuth localhost dns:localhostZZ.evil
# TLS-11
mkcert intermediate team
mkcert -C team client tool
mkcert --pathlen 0 intermediate strict
mkcert -C strict intermediate below
mkcert -C below client deep
mkcert client leafca
mkcert -C leafca client underleaf

check "the NUL certificate has its NUL" eval "openssl x509 -in '$C/nul.pem' \
    -noout -subject | grep -q 'cnonly.00Z\\.evil'"

start_fakert rt --listen "$T/rt.sock" --pid 5101
allow="allow-cn=cnonly,allow-san=dns:tool.dsroute.test"
allow="$allow,allow-san=uri:spiffe://dsroute.test/tool"
allow="$allow,allow-cn=tool,allow-cn=deep,allow-cn=underleaf"
start_dsroute b -v debug "uds:$T/rt.sock,connect" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,$allow"
port=$(port_of b remote)

# allowed NAME DESC ARGS...: s_client with NAME's certificate gets the
# runtime's answer.
allowed() {
	_aname=$1
	_adesc=$2
	shift 2
	sclient "$_aname" "$port" -cert "$C/$_aname.pem" \
	    -key "$C/$_aname.key" "$@"
	like "$_adesc: the runtime answers" "$(hex "$T/$_aname.out")" \
	    "^444f544e45545f4950435f563100....ff00"
	ended b "$_adesc: the session ends normally" \
	    "end=\"(runtime|tool) closed\""
	: >"$T/rt.ev"
}

# denied NAME DESC LOGGED: the handshake completes, the command is
# denied by the allow-list, and the peer is logged as LOGGED.
denied() {
	sclient "$1" "$port" -cert "$C/$1.pem" -key "$C/$1.key"
	is "$2: the tool gets access denied (0x80070005)" \
	    "$(hex "$T/$1.out")" "$DENIED_FRAME"
	audited b "$2: denied by the allow-list" \
	    "peer=\"tls:[^ ]*\\($3,sha256:[0-9a-f]{16}\\)\" .*decision=deny .*reason=\"identity not on the allow-list\""
	untouched rt "$2"
}

# rejected NAME DESC EREGEX ARGS...: the handshake fails for a reason
# matching EREGEX.
rejected() {
	_rname=$1
	_rdesc=$2
	_rwhy=$3
	shift 3
	if sclient "$_rname" "$port" -cert "$C/$_rname.pem" \
	    -key "$C/$_rname.key" "$@"; then
		fail "$_rdesc: s_client fails"
	else
		pass "$_rdesc: s_client fails"
	fi
	ended b "$_rdesc: refused" \
	    "end=\"TLS handshake failed: client certificate verify failed: ($_rwhy)"
	untouched rt "$_rdesc"
}

# A verbose router logs each accepted connection under its transport.
sclient first "$port" -cert "$C/sanonly.pem" -key "$C/sanonly.key"
ended b "a first session" "end="
check "the accept line names the transport: tls:, not tcp:" has_line \
    "$T/b.err" "^dbug: session 1: accepted tls:127\\.0\\.0\\.1:[0-9]+ on tls:127\\.0\\.0\\.1:$port\$"
: >"$T/rt.ev"

allowed sanonly "TLS-10 a client allowed by its DNS SAN"
denied tool.dsroute.test "TLS-10 a CN equal to an allowed DNS name, with another DNS SAN" \
    "cn:tool\\.dsroute\\.test"
denied nul "TLS-10 a CN, a DNS SAN and a URI SAN that are allowed names, a NUL and more" \
    "anonymous"

# The same NUL trick on a server's certificate, against a dialling router.
start_fakert rt2 --listen "$T/rt2.sock" --pid 5102
start_dsroute s "uds:$T/rt2.sock,connect" \
    "tls:127.0.0.1:0,$(cert nulserver),ca=$C/ca.pem"
start_dsroute a "uds:$T/a.sock" \
    "tls:127.0.0.1:$(port_of s remote),connect,sni=localhost,ca=$C/ca.pem,$(cert client1)"
if tool --timeout 30 "$T/a.sock" processinfo; then
	fail "TLS-10 a server whose DNS SAN is the host dialled, a NUL and more: refused"
else
	_saved=$_seen_sessions
	_seen_sessions=0
	ended a "TLS-10 a server whose DNS SAN is the host dialled, a NUL and more: refused" \
	    'end="handshake to tls:127\.0\.0\.1:[0-9]+ failed: TLS handshake failed: server certificate verify failed: hostname mismatch'
	_seen_sessions=$_saved
fi
untouched rt2 "TLS-10 server with a NUL name"
stop_dsroute a
stop_dsroute s
stop rt2

# OpenSSL names each fault; mbed TLS 2.28 flags all three as untrusted.
if has_line "$T/b.err" 'mbed TLS'; then
	untrusted="unable to get local issuer certificate \\(not signed by a trusted CA\\)"
	not_ca=$untrusted
	too_long=$untrusted
else
	untrusted="unable to get local issuer certificate"
	not_ca="invalid CA certificate"
	too_long="path length constraint exceeded"
fi
allowed tool "TLS-11 a leaf signed by an intermediate, sent with it" \
    -cert_chain "$C/team-chain.pem"
rejected tool "TLS-11 the intermediate missing" "$untrusted"
rejected underleaf "TLS-11 a leaf signed by a certificate with CA:FALSE" \
    "$not_ca" -cert_chain "$C/leafca.pem"
rejected deep "TLS-11 a path longer than an intermediate's pathlen:0" \
    "$too_long" -cert_chain "$C/below-chain.pem"

# A router presents a NAME-chain.pem of mkcerts.sh as its cert=.
start_dsroute a2 "uds:$T/a2.sock" \
    "tls:127.0.0.1:$port,connect,ca=$C/ca.pem,cert=$C/tool-chain.pem,key=$C/tool.key"
if tool --timeout 30 "$T/a2.sock" processinfo; then
	is "TLS-11 a router whose cert= is leaf and intermediate gets through" \
	    "$(field pid "$T/tool.out")" 5101
else
	fail "TLS-11 a router whose cert= is leaf and intermediate gets through" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi
stop_dsroute a2

check "the router stayed up" alive b
stop_dsroute b
stop rt
done_testing
