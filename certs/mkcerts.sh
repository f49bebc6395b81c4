#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Make a private CA and the certificates dsroute's TLS endpoints use.
# See certs/README for the why; in short:
#
#	mkcerts.sh ca					# out/ca.pem, out/ca.key
#	mkcerts.sh server pod1 dns:pod1.example ip:10.0.0.7
#	mkcerts.sh client laptop
#	mkcerts.sh intermediate team			# a CA signed by ca
#	mkcerts.sh -C team client tool		# tool-chain.pem: tool, team
#
# Options, before the command:
#	-d DIR		write into DIR (default: certs/out next to this script)
#	-C NAME		sign with DIR/NAME.pem and NAME.key (default: ca)
#	--pathlen N	an intermediate's path length constraint
#	-k ec|rsa	key type: ECDSA P-256 (default) or RSA 2048
#	--days N	valid from now for N days (default: 825; a CA 3650)
#	--not-before T, --not-after T
#			explicit validity, T as YYYYMMDDHHMMSSZ (tests use
#			these for expired and not yet valid certificates)
#	--eku LIST	extended key usage instead of the default
#			(serverAuth for server, clientAuth for client)
#
# SANs are dns:NAME, ip:ADDRESS, uri:URI or email:ADDRESS.  A server with
# none gets dns:NAME (ip:NAME for an address).  Each certificate is
# NAME.pem with its key NAME.key (mode 0600); the script prints the
# certificate's SHA-256 fingerprint, the value allow-fp= takes.  An
# intermediate, and a certificate it signs, also get NAME-chain.pem: the
# certificate and the intermediates above it, the file cert= takes.

set -eu

usage() {
	sed -n '/^# Make a private/,/^# certificate and the inter/p' "$0" |
	    sed 's/^# \{0,1\}//' >&2
	exit 2
}

dir="$(cd "$(dirname "$0")" && pwd)/out"
ca=ca
keytype=ec
days=""
not_before=""
not_after=""
eku=""
pathlen=""

while [ $# -gt 0 ]; do
	case "$1" in
	-d) dir=$2; shift 2 ;;
	-C) ca=$2; shift 2 ;;
	-k) keytype=$2; shift 2 ;;
	--days) days=$2; shift 2 ;;
	--not-before) not_before=$2; shift 2 ;;
	--not-after) not_after=$2; shift 2 ;;
	--eku) eku=$2; shift 2 ;;
	--pathlen) pathlen=$2; shift 2 ;;
	-h|--help) usage ;;
	-*) echo "mkcerts.sh: unknown option $1" >&2; usage ;;
	*) break ;;
	esac
done
[ $# -ge 1 ] || usage
kind=$1
shift
case "$kind" in
ca) name=${1:-ca}; [ $# -gt 0 ] && shift ;;
server|client|intermediate) [ $# -ge 1 ] || usage; name=$1; shift ;;
*) usage ;;
esac
case "$name" in
*/*|"") echo "mkcerts.sh: give a plain NAME, not a path" >&2; exit 2 ;;
esac

mkdir -p "$dir"
umask 077

# Write a new private key to $1.
new_key() {
	case "$keytype" in
	ec) openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
	    -out "$1" 2>/dev/null ;;
	rsa) openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 \
	    -out "$1" 2>/dev/null ;;
	*) echo "mkcerts.sh: -k $keytype: give ec or rsa" >&2; exit 2 ;;
	esac
}

# Turn "dns:a ip:b uri:c email:d" into an OpenSSL subjectAltName value.
san_list() {
	_out=""
	for _s in "$@"; do
		case "$_s" in
		dns:*) _v="DNS:${_s#dns:}" ;;
		ip:*) _v="IP:${_s#ip:}" ;;
		uri:*) _v="URI:${_s#uri:}" ;;
		email:*) _v="email:${_s#email:}" ;;
		*) echo "mkcerts.sh: SAN '$_s': write dns:, ip:, uri: or" \
		    "email: before the name" >&2; exit 2 ;;
		esac
		_out="${_out:+$_out,}$_v"
	done
	echo "$_out"
}

fingerprint() {
	openssl x509 -in "$1" -noout -fingerprint -sha256 | sed 's/.*=//'
}

if [ "$kind" = ca ]; then
	new_key "$dir/$name.key"
	openssl req -x509 -new -key "$dir/$name.key" -sha256 \
	    -subj "/CN=$name" -days "${days:-3650}" \
	    -addext "basicConstraints=critical,CA:TRUE" \
	    -addext "keyUsage=critical,keyCertSign,cRLSign" \
	    -addext "subjectKeyIdentifier=hash" \
	    -out "$dir/$name.pem"
	chmod 0644 "$dir/$name.pem"
	echo "$dir/$name.pem $(fingerprint "$dir/$name.pem")"
	exit 0
fi

[ -f "$dir/$ca.pem" ] && [ -f "$dir/$ca.key" ] || {
	echo "mkcerts.sh: no CA $dir/$ca.pem; make one with: $0 -d $dir" \
	    "ca $ca" >&2
	exit 1
}

if [ $# -eq 0 ] && [ "$kind" = server ]; then
	if printf '%s\n' "$name" | grep -Eq '^([0-9.]+|.*:.*)$'; then
		set -- "ip:$name"
	else
		set -- "dns:$name"
	fi
fi
sans=$(san_list "$@")
case "$kind" in
server) : "${eku:=serverAuth}" ;;
client) : "${eku:=clientAuth}" ;;
esac
case "$pathlen" in
""|[0-9]|[0-9][0-9]) ;;
*) echo "mkcerts.sh: --pathlen $pathlen: give a number" >&2; exit 2 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/mkcerts.XXXXXX")
trap 'rm -rf "$work"' EXIT
: >"$work/index"
echo 01 >"$work/serial"
cat >"$work/ca.cnf" <<EOF
[ ca ]
default_ca = signer
[ signer ]
database = $work/index
new_certs_dir = $work
serial = $work/serial
default_md = sha256
policy = any
unique_subject = no
copy_extensions = none
email_in_dn = no
default_days = ${days:-825}
[ any ]
commonName = supplied
[ intermediate ]
basicConstraints = critical,CA:TRUE${pathlen:+,pathlen:$pathlen}
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
[ leaf ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = $eku
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
EOF
[ -n "$sans" ] && echo "subjectAltName = $sans" >>"$work/ca.cnf"
extensions=leaf
[ "$kind" = intermediate ] && extensions=intermediate

new_key "$dir/$name.key"
openssl req -new -key "$dir/$name.key" -subj "/CN=$name" \
    -out "$work/req.pem"
set -- -batch -config "$work/ca.cnf" -extensions $extensions -notext \
    -rand_serial -cert "$dir/$ca.pem" -keyfile "$dir/$ca.key" \
    -in "$work/req.pem" -out "$dir/$name.pem"
[ -n "$not_before" ] && set -- "$@" -startdate "$not_before"
[ -n "$not_after" ] && set -- "$@" -enddate "$not_after"
[ -n "$days" ] && set -- "$@" -days "$days"
openssl ca "$@" 2>"$work/ca.err" || { cat "$work/ca.err" >&2; exit 1; }
chmod 0644 "$dir/$name.pem"
# What a peer must send: this certificate and the intermediates above it.
if [ "$kind" = intermediate ] || [ -f "$dir/$ca-chain.pem" ]; then
	cat "$dir/$name.pem" >"$dir/$name-chain.pem"
	if [ -f "$dir/$ca-chain.pem" ]; then
		cat "$dir/$ca-chain.pem" >>"$dir/$name-chain.pem"
	fi
	chmod 0644 "$dir/$name-chain.pem"
fi
echo "$dir/$name.pem $(fingerprint "$dir/$name.pem")"
