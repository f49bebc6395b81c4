#!/bin/sh
# SPDX-License-Identifier: ISC
#
# What a client may ask for in its hello, and what it gets (security.md
# §4.2): a TLS 1.2 offer of CBC or static RSA suites only fails (TLS-13);
# a 1.2 hello with TLS_FALLBACK_SCSV to a 1.3-capable listener is a
# downgrade (TLS-14); compression offered is not taken (TLS-19); an
# oversized certificate chain or ClientHello is refused and memory stays
# bounded (TLS-20); a session from elsewhere is never resumed, not even
# after a reload that revoked the client, and early data is rejected
# (TLS-16, TLS-17, TLS-18); a KeyUpdate keeps a session going.  On every
# refusal the fake runtime sees nothing.  What mbed TLS 2.28 cannot do
# (TLS 1.3) is reported as a skip, with the reason.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

# RSS comparisons want live memory, not ASan's quarantine of freed blocks.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
export ASAN_OPTIONS
TLSCROWD=$top_builddir/tests/tlscrowd

make_base_certs
# An RSA server: static RSA suites fail by policy, not for want of a key.
mkcert -k rsa server rsaserver dns:localhost ip:127.0.0.1
cp "$C/ca.pem" "$T/clients-ca.pem"

start_fakert rt --listen "$T/rt.sock" --pid 5201
start_dsroute b --tls-handshake-timeout 5 "uds:$T/rt.sock,connect" \
    "tls:127.0.0.1:0,$(cert rsaserver),ca=$T/clients-ca.pem"
port=$(port_of b remote)
addr=tcp:127.0.0.1:$port
mbed=""
has_line "$T/b.err" 'mbed TLS' && mbed="mbed TLS 2.28 has no TLS 1.3"
# How each library words a refusal, and how the client learns of it.
if [ -z "$mbed" ]; then
	nocipher="no shared cipher"
	toolong="excessive message size"
else
	nocipher="SSL - The server has no ciphersuites in common with the client"
	# 2.28 takes no handshake message longer than a record, and says so.
	toolong="SSL - The requested feature is not available"
fi
# A client still sending, its long list or its command after a TLS 1.3
# handshake it thinks done, may read the alert, or only find the
# connection cut under it (EPIPE, or a reset).
cut_told="alert|errno=(32|104)"

ME="-cert $C/client1.pem -key $C/client1.key"

# answered NAME DESC ARGS...: s_client with ARGS gets the runtime's answer.
answered() {
	_aname=$1
	_adesc=$2
	shift 2
	sclient "$_aname" "$port" $ME "$@"
	like "$_adesc: the runtime answers" "$(hex "$T/$_aname.out")" \
	    "^444f544e45545f4950435f563100....ff00"
	ended b "$_adesc: the session ends normally" \
	    "end=\"(runtime|tool) closed\""
	: >"$T/rt.ev"
}

# handshake_refused NAME DESC EREGEX ALERT ARGS...: s_client with ARGS fails, the
# router logs a handshake failure matching EREGEX, s_client reports an
# alert matching ALERT, and the runtime sees nothing.
handshake_refused() {
	_rname=$1
	_rdesc=$2
	_rwhy=$3
	_ralert=$4
	shift 4
	if sclient "$_rname" "$port" $ME "$@"; then
		fail "$_rdesc: s_client fails"
	else
		pass "$_rdesc: s_client fails"
	fi
	ended b "$_rdesc: refused" "end=\"TLS handshake failed: ($_rwhy)"
	like "$_rdesc: the client is told" "$(cat "$T/$_rname.err")" \
	    "$_ralert"
	untouched rt "$_rdesc"
}

answered first "an RSA listener serves a modern client"

# TLS-13: only CBC, or only static RSA key exchange, on TLS 1.2.
handshake_refused cbc "TLS-13 TLS 1.2 with CBC suites only" "$nocipher" \
    "alert handshake failure" -tls1_2 \
    -cipher "ECDHE-RSA-AES128-SHA:ECDHE-RSA-AES256-SHA:ECDHE-RSA-AES128-SHA256:AES128-SHA:AES256-SHA:AES128-SHA256@SECLEVEL=0"
handshake_refused rsakx "TLS-13 TLS 1.2 with static RSA key exchange only" \
    "$nocipher" "alert handshake failure" -tls1_2 \
    -cipher "AES128-GCM-SHA256:AES256-GCM-SHA384:AES128-SHA256:AES128-SHA@SECLEVEL=0"

# TLS-14: a 1.2 hello that says it is a fallback.
if [ -z "$mbed" ]; then
	handshake_refused fallback "TLS-14 TLS 1.2 with TLS_FALLBACK_SCSV to a 1.3 listener" \
	    "inappropriate fallback" "alert inappropriate fallback" \
	    -tls1_2 -fallback_scsv
	# A plain 1.2 hello: the ServerHello carries the TLS 1.3 downgrade
	# sentinel, which a 1.3-capable client checks.
	sclient plain12 "$port" $ME -tls1_2 -msg
	ended b "TLS-14 a plain TLS 1.2 hello is served" "end="
	check "TLS-14 ... and its ServerHello.random ends DOWNGRD\\\\x01" eval \
	    "sed -n '/<<< .*ServerHello/,/^[<>]/p' '$T/plain12.out' |
	    tr -d ' \\n' | grep -q 444f574e47524401"
	: >"$T/rt.ev"
else
	# 2.28 is no 1.3 listener: SCSV at 1.2 is no downgrade there.
	answered fallback "TLS-14 ($mbed: a 1.2 hello with SCSV is no fallback)" \
	    -tls1_2 -fallback_scsv
	skip "TLS-14 the TLS 1.3 downgrade sentinel" "$mbed"
fi

# TLS-19: a TLS 1.2 ClientHello offering DEFLATE before null compression.
# OpenSSL's hello is taken as it is, with the compression list changed.
hexnum='function num(s,  i, n) {
	n = 0
	for (i = 1; i <= length(s); i++)
		n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return n
}'
sclient hello12 "$port" $ME -tls1_2 -msg
ended b "TLS-19 (a TLS 1.2 hello to start from)" "end="
: >"$T/rt.ev"
hello=$(sed -n '/>>> .*ClientHello/,/^[<>]/p' "$T/hello12.out" |
    sed '1d; /^[<>]/d' | tr -d ' \n')
record=$(awk -v h="$hello" "$hexnum"'
    BEGIN {
	o = 77				# after type, length, version, random
	o += 2 + 2 * num(substr(h, o, 2))	# session id
	o += 4 + 2 * num(substr(h, o, 4))	# cipher suites
	body = substr(h, 9, o - 9) sprintf("%02x", num(substr(h, o, 2)) + 1) \
	    "01" substr(h, o + 2)
	printf("160301%04x01%06x%s\n", length(body) / 2 + 4,
	    length(body) / 2, body)
    }')
tool --timeout 10 "$addr" raw "$record" --shut-wr
reply=$(sed -n 's/^reply //p' "$T/tool.out")
method=$(awk -v h="$reply" "$hexnum"'
    BEGIN {
	if (substr(h, 1, 2) != "16" || substr(h, 11, 2) != "02") {
		print "no ServerHello"
		exit
	}
	o = 87				# after headers, version, random
	o += 2 + 2 * num(substr(h, o, 2)) + 4	# session id, cipher suite
	print substr(h, o, 2)
    }')
is "TLS-19 DEFLATE offered: the ServerHello picks null compression" \
    "$method" 00
ended b "TLS-19 ... and that handshake then ends" "end=\"TLS handshake failed"
untouched rt "TLS-19"

# TLS-20: a certificate list of 100 certificates (about 50 KiB) and a
# ClientHello that claims 16 MiB: refused at once.  The router's memory
# after 20 rounds of each is where it was after the first.
i=0
while [ $i -lt 100 ]; do
	cat "$C/ca2.pem"
	i=$((i + 1))
done >"$T/bigchain.pem"
claim=160301000401ffffff
big_rounds() {
	_i=0
	while [ $_i -lt "$1" ]; do
		sclient bigchain "$port" $ME -cert_chain "$T/bigchain.pem"
		tool --timeout 10 "$addr" raw $claim
		_i=$((_i + 1))
	done
	_seen_sessions=$((_seen_sessions + 2 * $1))
	wait_for 30 eval "[ \$(session_lines b) -ge $_seen_sessions ]"
}
big_rounds 1
handshake_refused bigchain "TLS-20 a certificate list of 100 certificates" \
    "$toolong" "$cut_told" -cert_chain "$T/bigchain.pem"
tool --timeout 10 "$addr" raw $claim
like "TLS-20 a ClientHello that claims 16 MiB: no ServerHello" \
    "$(sed -n 's/^reply //p' "$T/tool.out")" '^(15|none)'
ended b "TLS-20 ... refused" "end=\"TLS handshake failed: "
untouched rt "TLS-20"
rss=$(rss_kb "$(pid_of b)")
big_rounds 20
now=$(rss_kb "$(pid_of b)")
echo "# rss KiB after one round $rss, after 20 more $now"
check "TLS-20 memory stays bounded: 20 more rounds, under +2 MiB" \
    test "$now" -lt $((rss + 2048))
untouched rt "TLS-20 rounds"

# A session that another server would resume: a TLS 1.3 ticket allowing
# early data, and a TLS 1.2 session ID, from openssl s_server.
mkfifo "$T/ss.in"
exec 4<>"$T/ss.in"
openssl s_server -accept 127.0.0.1:0 -naccept 2 -early_data \
    -cert "$C/localhost.pem" -key "$C/localhost.key" <"$T/ss.in" \
    >"$T/ss.out" 2>&1 &
ss=$!
_pids="$_pids $ss"
wait_for 10 has_line "$T/ss.out" '^ACCEPT ' || fail "s_server starts"
ssport=$(sed -n 's/^ACCEPT .*:\([0-9]*\)$/\1/p' "$T/ss.out")
# ticket NAME ARGS...: a session from s_server in $T/NAME.pem.
ticket() {
	_tname=$1
	shift
	_before=$(count_lines "$T/ss.out" '^Shared ciphers')
	timeout 30 openssl s_client -connect "127.0.0.1:$ssport" -ign_eof \
	    -CAfile "$C/ca.pem" -sess_out "$T/$_tname.pem" "$@" </dev/null \
	    >"$T/$_tname.out" 2>&1 &
	_tpid=$!
	# Once s_server has logged the handshake, its ticket is sent.
	wait_for 15 eval "[ \$(count_lines '$T/ss.out' '^Shared ciphers') -gt $_before ]"
	echo q >&4
	wait "$_tpid"
}
ticket ticket13
ticket session12 -no_tls1_3
check "s_server gave a TLS 1.3 ticket that allows early data" \
    has_line "$T/ticket13.out" 'Max Early Data: [1-9]'
check "s_server gave a TLS 1.2 session with an ID" \
    has_line "$T/session12.out" '^ *Session-ID: [0-9A-F]{8}'
wait "$ss" 2>/dev/null
printf 'DOTNET_IPC_V1\000\024\000\004\000\000\000' >"$T/early.bin"

# TLS-18: early data on that ticket is rejected; the command in it never
# runs, and the connection goes on as a full handshake that sends none.
timeout 30 openssl s_client -connect "127.0.0.1:$port" -CAfile "$C/ca.pem" \
    $ME -sess_in "$T/ticket13.pem" -early_data "$T/early.bin" </dev/null \
    >"$T/early.out" 2>&1
if [ -z "$mbed" ]; then
	check "TLS-18 early data with an IPC command is rejected" \
	    has_line "$T/early.out" '^Early data was rejected'
	check "TLS-18 ... and the handshake is a new, full one" \
	    has_line "$T/early.out" '^New, TLSv1\.3'
	ended b "TLS-18 the session ends without a command" \
	    'command=- .*end="closed without sending anything"'
else
	# 2.28 answers at 1.2, then meets the early data mid-handshake.
	ended b "TLS-18 ($mbed) the early data fails the handshake" \
	    'command=- .*end="TLS handshake failed: SSL - An unexpected message was received from our peer"'
fi
untouched rt "TLS-18 early data"

# TLS-16: revoke the client (its CA leaves the CA file, SIGHUP); neither
# session resumes, each makes a full handshake, and both are refused.
cp "$C/ca2.pem" "$T/clients-ca.pem"
kill -HUP "$(pid_of b)"
check "TLS-16 the reload that revokes the client" \
    wait_for 15 has_line "$T/b.err" '^info: reload: new certificates'
if [ -z "$mbed" ]; then
	untrusted="unable to get local issuer certificate|self-signed"
else
	untrusted="unable to get local issuer certificate"
fi
handshake_refused resume13 "TLS-16 a TLS 1.3 ticket offered after the revocation" \
    "client certificate verify failed: ($untrusted)" "$cut_told" \
    -sess_in "$T/ticket13.pem"
check "TLS-16 ... no resumption" eval "! has_line '$T/resume13.out' '^Reused'"
handshake_refused resume12 "TLS-16 a TLS 1.2 session ID offered after the revocation" \
    "client certificate verify failed: ($untrusted)" "$cut_told" \
    -no_tls1_3 -sess_in "$T/session12.pem"
check "TLS-16 ... no resumption" eval "! has_line '$T/resume12.out' '^Reused'"

# A KeyUpdate asking for the router's keys too, then the answer: through
# a router in front of a sink that answers once and stays silent.
if [ -z "$mbed" ]; then
	bg sink "$TLSCROWD" sink "$T/sink.sock"
	wait_for 10 test -S "$T/sink.sock"
	start_dsroute k "uds:$T/sink.sock,connect" \
	    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
	"$TLSCROWD" hold -k 3 0 "tcp:127.0.0.1:$(port_of k remote)" \
	    "$C/ca.pem" "$C/client1.pem" "$C/client1.key" >"$T/keyupd.out"
	is "TLS 1.3 KeyUpdate mid-session: 3 sessions answered after it" \
	    "$(cat "$T/keyupd.out")" "hold: opened=3 of 3"
	stop_dsroute k
	stop sink
else
	skip "TLS 1.3 KeyUpdate mid-session" "$mbed"
fi

check "the router stayed up" alive b
stop_dsroute b
stop rt
done_testing
