#!/bin/sh
# SPDX-License-Identifier: ISC
#
# SIGHUP reloads certificates, keys and CA files (security.md TLS-29 to
# TLS-31): new connections get the new ones, a trace in flight is not
# disturbed, and a broken, mismatched or missing file keeps the old
# credentials with one line saying why.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

STREAM=16777216

make_base_certs
mkcert server second dns:localhost ip:127.0.0.1
mkcert server third dns:localhost ip:127.0.0.1
mkcert -C ca2 client stranger

# The files the router reads; the test swaps what is in them.
cp "$C/localhost.pem" "$T/live.pem"
cp "$C/localhost.key" "$T/live.key"
cp "$C/ca.pem" "$T/clients-ca.pem"

start_fakert rt --listen "$T/rt.sock" --pid 9001 --stream-bytes $STREAM
start_dsroute b "uds:$T/rt.sock,connect" \
    "tls:127.0.0.1:0,cert=$T/live.pem,key=$T/live.key,ca=$T/clients-ca.pem"
port=$(port_of b remote)
start_dsroute a "uds:$T/tool.sock" \
    "tls:127.0.0.1:$port,connect,ca=$C/ca.pem,$(cert client1)"

# served: the fingerprint of the certificate the router presents now.
served() {
	timeout 30 openssl s_client -connect "127.0.0.1:$port" \
	    -CAfile "$C/ca.pem" -cert "$C/client1.pem" -key "$C/client1.key" \
	    </dev/null 2>/dev/null |
	    openssl x509 -noout -fingerprint -sha256 2>/dev/null |
	    sed 's/.*=//; s/://g' | tr 'A-F' 'a-f'
}

# reload_logged PATTERN: SIGHUP, then wait for one more line matching it.
reload_logged() {
	_before=$(count_lines "$T/b.err" "$1")
	kill -HUP "$(pid_of b)"
	wait_for 15 eval "[ \$(count_lines '$T/b.err' '$1') -gt $_before ]"
}

is "the router presents its certificate" "$(served)" "$(fp localhost)"

# A trace in flight across the reload (read at 8 MB/s: about 2 s).
bg trace "$FAKETOOL" --timeout 60 "$T/tool.sock" collect --rate 8000000 \
    --expect-bytes $STREAM
wait_for 15 has_line "$T/rt.ev" '^stream-start' || fail "the trace starts"

cp "$C/second.pem" "$T/live.pem"
cp "$C/second.key" "$T/live.key"
check "TLS-29 SIGHUP loads the new certificate and key" \
    reload_logged '^info: reload: new certificates'
is "TLS-29 new connections get the new certificate" "$(served)" \
    "$(fp second)"

if wait "$(pid_of trace)"; then
	id=$(field session "$T/trace.out")
	wait_for 10 has_line "$T/rt.ev" "^stream-end $id "
	is "TLS-29 the trace in flight is not disturbed (same SHA-256)" \
	    "$(field sha256 "$T/trace.out")" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/rt.ev")"
else
	fail "TLS-29 the trace in flight is not disturbed" \
	    "$(cat "$T/trace.out" "$T/trace.err")"
fi

# broken DESC EREGEX: a reload that must fail and change nothing.
broken() {
	check "TLS-30 $1: the reload fails, in one line" \
	    reload_logged "^fail: reload: tls:127\\.0\\.0\\.1:$port: $2; keeping the current certificates"
	is "TLS-30 $1: the old certificate is still served" "$(served)" \
	    "$(fp second)"
	check "TLS-30 $1: tools still get through" \
	    tool --timeout 30 "$T/tool.sock" processinfo
}

echo "not a key" >"$T/live.key"
broken "a broken key" "cannot load the key $T/live.key: .*"
cp "$C/third.pem" "$T/live.pem"
cp "$C/second.key" "$T/live.key"
broken "a key that does not match" ".*(does not match|mismatch).*"
rm "$T/live.pem"
broken "a missing certificate, in errno's words" \
    "cert=$T/live.pem: No such file or directory"
cp "$C/second.pem" "$T/live.pem"
echo "garbage" >"$T/clients-ca.pem"
broken "a broken CA file" "cannot load the CA file $T/clients-ca.pem: .*"
check "TLS-30 the router stayed up through failed reloads" alive b

# TLS-31: a CA file that no longer holds the clients' CA.
cp "$C/ca2.pem" "$T/clients-ca.pem"
check "TLS-31 SIGHUP loads the new CA file" \
    reload_logged '^info: reload: new certificates'
: >"$T/rt.ev"
if tool --timeout 30 "$T/tool.sock" processinfo; then
	fail "TLS-31 a client of the removed CA is refused"
else
	like "TLS-31 a client of the removed CA is refused" \
	    "$(grep '^info: session' "$T/b.err" | tail -n 1)" \
	    'end="TLS handshake failed: client certificate verify failed: (unable to get local issuer certificate|self-signed certificate in certificate chain)'
fi
untouched rt "TLS-31 refused client"
sclient stranger "$port" -cert "$C/stranger.pem" -key "$C/stranger.key"
like "TLS-31 a client of the new CA gets through" "$(hex "$T/stranger.out")" \
    "^444f544e45545f4950435f563100....ff00"

stop_dsroute a
stop_dsroute b
stop rt
done_testing
