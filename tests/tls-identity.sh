#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The same certificates are admitted and refused alike by both TLS
# backends (the suite runs on the OpenSSL build and on the mbed TLS one,
# with the same expectations): a listener's allow-list against client
# certificates whose CN is written in each ASN.1 string type, whose
# SANs are near misses of an allowed name (case, a trailing dot, a
# prefix, a suffix, a wildcard, a DNS name that is an address), and
# whose extended key usage is anyExtendedKeyUsage or a CA's is for
# servers only; and a dialling router's check of the host name against
# servers' certificates: case, trailing dots, wildcards (one label, not
# a partial one, not right under a top-level domain), a CN only without
# a subjectAltName, a CN in a BMPString, addresses, many SANs.

. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

command -v perl >/dev/null || skip_all "perl is not installed"

# leaf NAME ISSUER EKU MASK SUBJECT EXT: a certificate for NAME signed by
# ISSUER, extendedKeyUsage EKU ("" for none), the subject's strings
# encoded as openssl's string_mask MASK allows, SUBJECT lines of the
# [dn] section and EXT lines of extensions (subjectAltName = ...).
leaf() {
	_ln=$1
	_eku=${3:+extendedKeyUsage = $3}
	cat >"$T/$_ln.cnf" <<EOF
[ req ]
distinguished_name = dn
prompt = no
string_mask = $4
utf8 = yes
[ dn ]
$5
[ names ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
subjectKeyIdentifier = hash
$_eku
$6
[ signed ]
authorityKeyIdentifier = keyid
EOF
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
	    -out "$C/$_ln.key" 2>/dev/null &&
	openssl req -new -key "$C/$_ln.key" -config "$T/$_ln.cnf" \
	    -reqexts names -outform DER -out "$T/$_ln.req" &&
	sign "$_ln" "$2" "$T/$_ln.req"
}

# sign NAME ISSUER REQ: sign the DER request REQ with ISSUER, extensions
# copied (req -x509 -CA does not check the request's own signature, so
# a request patched after it was made will do).
sign() {
	openssl req -inform DER -in "$3" -x509 -CA "$C/$2.pem" \
	    -CAkey "$C/$2.key" -days 30 -copy_extensions copyall \
	    -config "$T/$1.cnf" -extensions signed -out "$C/$1.pem" \
	    2>>"$T/mkcerts.err" ||
	    fail "make the certificate $1" "$(cat "$T/mkcerts.err")"
}

# patched NAME ISSUER FROM TO: NAME's request, with the bytes FROM (a perl
# string) replaced by TO, signed again as NAME.
patched() {
	perl -pe "s/$3/$4/g" "$T/$1.req" >"$T/$1-p.req"
	sign "$1" "$2" "$T/$1-p.req"
}

# ca_only NAME EKU: an intermediate CA signed by ca with that EKU.
ca_only() {
	cat >"$T/$1.cnf" <<EOF
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = $1
[ names ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
extendedKeyUsage = $2
[ signed ]
authorityKeyIdentifier = keyid
EOF
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
	    -out "$C/$1.key" 2>/dev/null &&
	openssl req -new -key "$C/$1.key" -config "$T/$1.cnf" \
	    -reqexts names -outform DER -out "$T/$1.req" &&
	sign "$1" ca "$T/$1.req"
}

make_base_certs
CL=clientAuth
SV=serverAuth

# --- client certificates, against a listener's allow-list ---------------

leaf c_utf8 ca $CL utf8only "CN = tool" ""
leaf c_print ca $CL MASK:0x2 "CN = tool" ""
leaf c_ia5 ca $CL MASK:0x2 "CN = tool" ""
patched c_ia5 ca '\x13\x04tool' '\x16\x04tool'
leaf c_t61 ca $CL MASK:0x4 "CN = tool" ""
leaf c_bmp ca $CL MASK:0x800 "CN = tool" ""
leaf c_accent ca $CL utf8only "CN = toolé" ""
leaf c_accbmp ca $CL MASK:0x800 "CN = toolé" ""
leaf c_t61high ca $CL MASK:0x4 "CN = toolZ" ""
patched c_t61high ca 'toolZ' 'tool\xe9'
leaf c_upper ca $CL utf8only "CN = TOOL" ""
leaf c_two ca $CL utf8only "CN = tool
1.CN = other" ""
leaf c_san ca $CL utf8only "CN = x" "subjectAltName = DNS:tool.test"
leaf c_sanup ca $CL utf8only "CN = x" "subjectAltName = DNS:TOOL.test"
leaf c_sandot ca $CL utf8only "CN = x" "subjectAltName = DNS:tool.test."
leaf c_sanpre ca $CL utf8only "CN = x" "subjectAltName = DNS:tool.tes"
leaf c_sansuf ca $CL utf8only "CN = x" "subjectAltName = DNS:tool.test.evil"
leaf c_sanwild ca $CL utf8only "CN = x" "subjectAltName = DNS:*.test"
leaf c_uri ca $CL utf8only "CN = x" \
    "subjectAltName = URI:spiffe://dsroute.test/tool"
leaf c_ip ca $CL utf8only "CN = x" "subjectAltName = IP:10.0.0.1"
leaf c_ip6 ca $CL utf8only "CN = x" "subjectAltName = IP:2001:db8::1"
leaf c_ipdns ca $CL utf8only "CN = x" "subjectAltName = DNS:10.0.0.1"
leaf c_email ca $CL utf8only "CN = x" "subjectAltName = email:tool@dsroute.test"
leaf c_noeku ca "" utf8only "CN = tool" ""
leaf c_fp1 ca $CL utf8only "CN = fp1" ""
leaf c_fp2 ca $CL utf8only "CN = fp2" ""
leaf c_anyeku ca anyExtendedKeyUsage utf8only "CN = tool" ""
leaf c_srveku ca $SV utf8only "CN = tool" ""
ca_only i_srv $SV
ca_only i_any anyExtendedKeyUsage
leaf c_viasrv i_srv $CL utf8only "CN = tool" ""
leaf c_viaany i_any $CL utf8only "CN = tool" ""
cat "$C/c_viasrv.pem" "$C/i_srv.pem" >"$C/c_viasrv-chain.pem"
cat "$C/c_viaany.pem" "$C/i_any.pem" >"$C/c_viaany-chain.pem"

check "c_ia5 has its CN as an IA5String" eval "openssl x509 -in \
    '$C/c_ia5.pem' -noout -subject -nameopt multiline,show_type |
    grep -q 'IA5STRING:tool'"
check "c_bmp has its CN as a BMPString" eval "openssl x509 -in \
    '$C/c_bmp.pem' -noout -subject -nameopt multiline,show_type |
    grep -q 'BMPSTRING:tool'"

# Fingerprints, upper case with colons and lower case without.
fp1=$(openssl x509 -in "$C/c_fp1.pem" -noout -fingerprint -sha256 |
    sed 's/.*=//')
fp2=$(fp c_fp2)

start_fakert rt --listen "$T/rt.sock" --pid 5201
allow="allow-cn=tool,allow-cn=toolé,allow-san=dns:tool.test"
allow="$allow,allow-san=uri:spiffe://dsroute.test/tool"
allow="$allow,allow-san=ip:10.0.0.1,allow-san=ip:2001:db8::1"
allow="$allow,allow-san=email:tool@dsroute.test"
allow="$allow,allow-cn=$(printf 'tool\351')"
allow="$allow,allow-fp=$fp1,allow-fp=$fp2"
start_dsroute b "uds:$T/rt.sock,connect" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem,$allow"
port=$(port_of b remote)

# admits NAME DESC WANT [ARGS...]: s_client with NAME's certificate is
# admitted (the runtime answers), denied by the allow-list (the error
# frame, an audit line) or refused at the handshake (a session line):
# WANT is allowed, denied or refused.
admits() {
	_cn=$1
	_cd=$2
	_cw=$3
	shift 3
	sclient "$_cn" "$port" -cert "$C/$_cn.pem" -key "$C/$_cn.key" "$@"
	case "$(hex "$T/$_cn.out")" in
	"$DENIED_FRAME") _cg=denied ;;
	444f544e45545f4950435f5631*) _cg=allowed ;;
	*) _cg=refused ;;
	esac
	is "$_cd: $_cw" "$_cg" "$_cw"
	case $_cg in
	allowed) ended b "$_cd: logged" 'end="(runtime|tool) closed"' ;;
	denied) audited b "$_cd: audited" \
	    'decision=deny .*reason="identity not on the allow-list"' ;;
	refused) ended b "$_cd: logged" \
	    'end="TLS handshake failed: client certificate verify failed: unsuitable certificate purpose' ;;
	esac
	: >"$T/rt.ev"
}

admits c_utf8 "a CN as a UTF8String" allowed
admits c_print "a CN as a PrintableString" allowed
admits c_ia5 "a CN as an IA5String" allowed
admits c_t61 "a CN as a T61String of ASCII" allowed
admits c_bmp "a CN as a BMPString" allowed
admits c_accent "a CN with an accent, UTF8String" allowed
admits c_accbmp "a CN with an accent, BMPString" allowed
admits c_t61high "a T61String CN beyond ASCII, its bytes allowed" denied
admits c_upper "a CN in upper case" denied
admits c_two "two CNs, one allowed" denied
admits c_san "a DNS SAN" allowed
admits c_sanup "a DNS SAN in upper case" denied
admits c_sandot "a DNS SAN with a trailing dot" denied
admits c_sanpre "a DNS SAN, a prefix of the allowed one" denied
admits c_sansuf "a DNS SAN, the allowed one and more" denied
admits c_sanwild "a wildcard DNS SAN that covers the allowed name" denied
admits c_uri "a URI SAN" allowed
admits c_ip "an IPv4 SAN" allowed
admits c_ip6 "an IPv6 SAN" allowed
admits c_ipdns "a DNS SAN that is the allowed address" denied
admits c_email "an e-mail SAN" allowed
admits c_noeku "no extended key usage" allowed
admits c_fp1 "allow-fp= in upper case with colons" allowed
admits c_fp2 "allow-fp= in lower case without" allowed
admits c_anyeku "anyExtendedKeyUsage alone" refused
admits c_srveku "serverAuth alone" refused
admits c_viasrv "through an intermediate for serverAuth only" refused \
    -cert_chain "$C/c_viasrv-chain.pem"
admits c_viaany "through an intermediate for anyExtendedKeyUsage" refused \
    -cert_chain "$C/c_viaany-chain.pem"
check "the listener stayed up" alive b
stop_dsroute b

# --- server certificates, against the host name a router dials ----------

leaf s_plain ca $SV utf8only "CN = srv" "subjectAltName = DNS:node.test"
leaf s_upper ca $SV utf8only "CN = srv" "subjectAltName = DNS:NODE.Test"
leaf s_dot ca $SV utf8only "CN = srv" "subjectAltName = DNS:node.test."
leaf s_tld ca $SV utf8only "CN = srv" "subjectAltName = DNS:*.test"
leaf s_wild ca $SV utf8only "CN = srv" "subjectAltName = DNS:*.node.test"
leaf s_partial ca $SV utf8only "CN = srv" "subjectAltName = DNS:x*.node.test"
leaf s_star ca $SV utf8only "CN = srv" "subjectAltName = DNS:*"
leaf s_cnonly ca $SV utf8only "CN = node.test" ""
leaf s_cnwild ca $SV utf8only "CN = *.node.test" ""
leaf s_cnbmp ca $SV MASK:0x800 "CN = node.test" ""
leaf s_cnuri ca $SV utf8only "CN = node.test" \
    "subjectAltName = URI:spiffe://node.test/x"
leaf s_cnip ca $SV utf8only "CN = node.test" "subjectAltName = IP:127.0.0.1"
leaf s_prefix ca $SV utf8only "CN = srv" "subjectAltName = DNS:node.test.evil"
leaf s_suffix ca $SV utf8only "CN = srv" "subjectAltName = DNS:evilnode.test"
leaf s_ipdns ca $SV utf8only "CN = srv" "subjectAltName = DNS:127.0.0.1"
leaf s_ip ca $SV utf8only "CN = srv" "subjectAltName = IP:127.0.0.1"
many="DNS:a0.test"
i=1
while [ $i -lt 24 ]; do
	many="$many,DNS:a$i.test"
	i=$((i + 1))
done
leaf s_many ca $SV utf8only "CN = srv" "subjectAltName = $many,DNS:node.test"
leaf s_anyeku ca anyExtendedKeyUsage utf8only "CN = srv" \
    "subjectAltName = DNS:node.test"
leaf s_noeku ca "" utf8only "CN = srv" "subjectAltName = DNS:node.test"

# One server router, a listener per certificate; one dialling router, a
# route per case: CASE CERT NAME WANT, NAME - for the address itself.
cat >"$T/cases" <<EOF
plain s_plain node.test ok
plaincase s_plain NODE.TEST ok
upper s_upper node.test ok
plaindot s_plain node.test. hostname mismatch
other s_plain other.test hostname mismatch
dot s_dot node.test hostname mismatch
dotdot s_dot node.test. ok
tld s_tld node.test hostname mismatch
wild s_wild a.node.test ok
wildidn s_wild xn--bcher-kva.node.test ok
wildbare s_wild node.test hostname mismatch
wildtwo s_wild a.b.node.test hostname mismatch
partial s_partial xa.node.test hostname mismatch
star s_star node hostname mismatch
cnonly s_cnonly node.test ok
cnwild s_cnwild a.node.test ok
cnbmp s_cnbmp node.test ok
cnuri s_cnuri node.test hostname mismatch
cnip s_cnip node.test hostname mismatch
prefix s_prefix node.test hostname mismatch
suffix s_suffix node.test hostname mismatch
ipdns s_ipdns - IP address mismatch
ip s_ip - ok
ipname s_ip localhost hostname mismatch
many s_many node.test ok
anyeku s_anyeku node.test unsuitable certificate purpose
noeku s_noeku node.test ok
EOF
: >"$T/servers.conf"
for s in $(awk '{ print $2 }' "$T/cases" | sort -u); do
	printf '[%s]\nlocal = uds:%s/rt.sock,connect\n' "$s" "$T"
	printf 'remote = tls:127.0.0.1:0,%s,verify=none\n' "$(cert "$s")"
done >>"$T/servers.conf"
start_dsroute srv -f "$T/servers.conf"

# server_port CERT: the port of the server router's listener for CERT.
server_port() {
	awk -v r="$1" '
	    $0 ~ "^info: route " r ":" { on = 1; next }
	    /^info: route / { on = 0 }
	    on && match($0, /:[0-9]+: listening/) {
		print substr($0, RSTART + 1, RLENGTH - 12); exit
	    }' "$T/srv.err"
}

: >"$T/dial.conf"
while read -r name crt host want; do
	printf '[%s]\nlocal = uds:%s/%s.sock,listen\n' "$name" "$T" "$name"
	printf 'remote = tls:127.0.0.1:%s,connect,ca=%s/ca.pem' \
	    "$(server_port "$crt")" "$C"
	[ "$host" = - ] || printf ',sni=%s' "$host"
	printf '\n'
done <"$T/cases" >>"$T/dial.conf"
start_dsroute dial -f "$T/dial.conf"

while read -r name crt host want; do
	if tool --timeout 20 "$T/$name.sock" processinfo &&
	    [ "$(field pid "$T/tool.out")" = 5201 ]; then
		got=ok
	else
		wait_for 10 has_line "$T/dial.err" \
		    "^info: session [0-9]+: route=$name "
		got=$(grep -E "^info: session [0-9]+: route=$name " \
		    "$T/dial.err" | tail -n 1 |
		    sed -n 's/.*certificate verify failed: \([^";]*\).*/\1/p')
	fi
	is "dial $host, $crt: $want" "${got:-other: $(grep -E \
	    "^info: session [0-9]+: route=$name " "$T/dial.err" | tail -n 1)}" \
	    "$want"
done <"$T/cases"
check "the servers stayed up" alive srv
check "the dialler stayed up" alive dial
stop_dsroute dial
stop_dsroute srv
stop rt
done_testing
