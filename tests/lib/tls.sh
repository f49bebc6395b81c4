#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced by the tls*.sh scenarios after lib.sh: certificates made with
# certs/mkcerts.sh in the test's directory, and openssl s_client as the
# misbehaving peer.  The fake runtime and tool speak plaintext, so a
# dsroute stands in front of each where a good TLS peer is needed.

command -v openssl >/dev/null || skip_all "openssl(1) is not installed"

C=$T/certs
MKCERTS="$top_srcdir/certs/mkcerts.sh"

# mkcert ARGS...: make a certificate with certs/mkcerts.sh.
mkcert() {
	sh "$MKCERTS" -d "$C" "$@" >/dev/null 2>>"$T/mkcerts.err" ||
	    fail "mkcerts.sh $*" "$(cat "$T/mkcerts.err")"
}

# The CA, a second CA nobody trusts, and the router's own certificates.
make_base_certs() {
	mkcert ca ca
	mkcert ca ca2
	mkcert server localhost dns:localhost ip:127.0.0.1
	mkcert client client1
}

# cert NAME: the cert= and key= options for a certificate made here.
cert() {
	echo "cert=$C/$1.pem,key=$C/$1.key"
}

# fp NAME: the SHA-256 fingerprint of a certificate, lower-case hex.
fp() {
	openssl x509 -in "$C/$1.pem" -noout -fingerprint -sha256 |
	    sed 's/.*=//; s/://g' | tr 'A-F' 'a-f'
}

# The first message of dotnet-trace ps: ProcessInfo.
printf 'DOTNET_IPC_V1\000\024\000\004\000\000\000' >"$T/processinfo.bin"

# sclient NAME PORT ARGS...: openssl s_client sends a ProcessInfo and
# keeps reading until the router closes; what it read is in $T/NAME.out.
sclient() {
	_name=$1
	_port=$2
	shift 2
	timeout 30 openssl s_client -connect "127.0.0.1:$_port" -quiet \
	    -verify_return_error -CAfile "$C/ca.pem" "$@" \
	    <"$T/processinfo.bin" >"$T/$_name.out" 2>"$T/$_name.err"
}

# hex FILE: a file as one line of hex.
hex() {
	od -An -v -tx1 "$1" | tr -d ' \n'
}

# The error frame a denied tool receives: access denied, 0x80070005.
DENIED_FRAME=444f544e45545f4950435f5631001800ffff000005000780

# session_lines NAME: how many session lines a router logged.
session_lines() {
	count_lines "$T/$1.err" '^info: session [0-9]+: '
}

_seen_sessions=0

# ended NAME DESC EREGEX: the router's next session line (after those
# already checked) ends for a reason that matches EREGEX.
ended() {
	_want=$((_seen_sessions + 1))
	if ! wait_for 15 eval "[ \$(session_lines $1) -ge $_want ]"; then
		fail "$2" "no session line in $1's log"
		return
	fi
	_seen_sessions=$_want
	_line=$(grep -E '^info: session [0-9]+: ' "$T/$1.err" |
	    sed -n "${_want}p")
	like "$2" "$_line" "$3"
}

# audited ROUTER DESC EREGEX: the router's next audit line for a denied
# command (a denial's one info line) matches.
_seen_denials=0
denial_lines() {
	count_lines "$T/$1.err" '^info: audit: .* decision=deny '
}
audited() {
	_want=$((_seen_denials + 1))
	if ! wait_for 15 eval "[ \$(denial_lines $1) -ge $_want ]"; then
		fail "$2" "no audit line in $1's log"
		return
	fi
	_seen_denials=$_want
	_line=$(grep -E '^info: audit: .* decision=deny ' "$T/$1.err" |
	    sed -n "${_want}p")
	like "$2" "$_line" "$3"
}

# untouched RUNTIME DESC: the fake runtime saw no connection and no byte.
untouched() {
	is "$2: the runtime saw no connection" \
	    "$(count_lines "$T/$1.ev" '^(accept|command)')" 0
}
