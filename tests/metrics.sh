#!/bin/sh
# SPDX-License-Identifier: ISC
#
# --metrics: /metrics as Prometheus's own parser reads it, its values
# moving with the sessions the fakes run through the router; /healthz and
# /readyz; hostile HTTP (long lines, big headers, other methods, garbage,
# a slowloris, a thousand idle connections) that leaves the router
# serving; metrics over TLS with the OpenSSL build, and the mbed TLS
# build's refusal of them.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

CROWD=$top_builddir/tests/crowd
SCRAPE=$top_srcdir/tests/helpers/promscrape.py
PY=/usr/bin/python3
[ -x "$PY" ] || skip_all "Debian's python3 is not installed"
"$PY" -c 'import prometheus_client' 2>/dev/null ||
    skip_all "python3-prometheus-client is not installed (dev.sh installs it)"
command -v curl >/dev/null || skip_all "curl(1) is not installed"

# metrics_port NAME: the port a router said it serves metrics on.
metrics_port() {
	sed -n 's|^info: metrics: https*://[^ ]*:\([0-9][0-9]*\)/metrics.*|\1|p' \
	    "$T/$1.err" | head -n 1
}

# scrape NAME [ARGS]: the router's samples, parsed, in $T/NAME.prom.
scrape() {
	_sn=$1
	shift
	"$PY" "$SCRAPE" "$URL" "$@" >"$T/$_sn.prom" 2>"$T/$_sn.scrape.err"
}

# value FILE SAMPLE: a sample's value, as promscrape printed it.
value() {
	_v=$(grep -F -- "$2 " "$1" | sed 's/.* //')
	echo "${_v:-missing}"
}

# status ARGS...: the HTTP status curl gets.
status() {
	curl -s -o "$T/body" -D "$T/headers" -w '%{http_code}' --max-time 20 \
	    "$@"
}

# The router: tools dial TCP (observe only, so ResumeRuntime is denied),
# the router dials the fake runtime's socket.  At debug level, so that
# every session's end line is logged, a denied one's too.
start_fakert rt --listen "$T/rt.sock" --pid 4242
start_dsroute d -v debug --metrics 127.0.0.1:0 "uds:$T/rt.sock" \
    tcp:127.0.0.1:0,policy=observe
port=$(port_of d remote)
mport=$(metrics_port d)
URL=http://127.0.0.1:$mport/metrics
like "one start-up line says where metrics are served" \
    "$(grep 'metrics:' "$T/d.err")" \
    "^info: metrics: http://127.0.0.1:$mport/metrics, /healthz, /readyz$"

if scrape m0; then
	pass "Prometheus's parser reads /metrics"
else
	fail "Prometheus's parser reads /metrics" "$(cat "$T/m0.scrape.err")"
fi
like "build info names the version and the TLS library" \
    "$(grep '^dsroute_build_info' "$T/m0.prom")" \
    '^dsroute_build_info\{tls="(openssl|mbedtls)",tls_version=".+",version="[0-9.]+"\} 1$'
for f in sessions_open sessions_total bytes_total runtimes_known \
    runtimes_parked acl_decisions_total tls_handshakes_total \
    tls_handshake_failures_total limit_hits_total reloads_total \
    log_lines_dropped_total; do
	check "dsroute_$f is there" grep -q "^dsroute_$f[{ ]" "$T/m0.prom"
done

# Traffic: three ProcessInfo (allowed), one ResumeRuntime (denied).
addr="tcp:127.0.0.1:$port"
for i in 1 2 3; do
	tool --timeout 20 "$addr" processinfo ||
	    fail "ProcessInfo $i" "$(cat "$T/tool.err")"
done
tool --timeout 20 "$addr" env
like "ProcessEnvironment is denied under policy=observe" "$(cat "$T/tool.out")" \
    '0x80070005'

k='dsroute_sessions_total{mode="client-server",outcome='
done_sessions() {
	scrape m1 && [ "$(value "$T/m1.prom" "${k}\"completed\"}")" = 3 ] &&
	    [ "$(value "$T/m1.prom" "${k}\"denied\"}")" = 1 ]
}
check "sessions: 3 completed, 1 denied, by mode and outcome" \
    wait_for 10 done_sessions
a='dsroute_acl_decisions_total{decision='
is "ACL: 3 allowed, 1 denied in the process set" \
    "$(value "$T/m1.prom" "${a}\"allow\",set=\"process\"}"):$(value \
    "$T/m1.prom" "${a}\"deny\",set=\"process\"}")" 3:1
is "ACL: nothing in the other sets" \
    "$(grep "^$a" "$T/m1.prom" | grep -v 'set="process"' | sed 's/.* //' |
    sort -u)" 0
is "bytes to the runtime: what the fake runtime received" \
    "$(value "$T/m1.prom" 'dsroute_bytes_total{direction="to_runtime"}')" \
    "$(runtime_rx rt)"
want=$(sed -n 's/.* to_tool=\([0-9]*\) .*/\1/p' "$T/d.err" |
    awk '{ s += $1 } END { print s + 0 }')
is "bytes to the tools: the sum of the sessions' end lines" \
    "$(value "$T/m1.prom" 'dsroute_bytes_total{direction="to_tool"}')" \
    "$want"
check "bytes to the tools: more than nothing" test "$want" -gt 0
is "sessions open: none now" \
    "$(value "$T/m1.prom" 'dsroute_sessions_open{mode="client-server"}')" 0

# A session held open shows as open.
bg hold "$FAKETOOL" --timeout 30 "$addr" raw \
    444f544e45545f4950435f5631 --hold-ms 20000
open_one() {
	scrape m2 && [ "$(value "$T/m2.prom" \
	    'dsroute_sessions_open{mode="client-server"}')" = 1 ]
}
check "sessions open: a tool's half-sent command counts" wait_for 10 open_one
stop hold

# Limits and reloads.
kill -HUP "$(pid_of d)"
wait_for 10 has_line "$T/d.err" 'SIGHUP received'
# Nothing to reload here: no configuration file, no certificates.
scrape m3
is "a reload with nothing to reload counts as none" \
    "$(value "$T/m3.prom" 'dsroute_reloads_total{result="ok"}'):$(value \
    "$T/m3.prom" 'dsroute_reloads_total{result="failed"}')" 0:0

# Reloads of a configuration file, good then bad; metrics = in the file.
cat >"$T/r.conf" <<EOF
metrics = 127.0.0.1:0
[app]
local = uds:$T/r.sock
remote = tcp:127.0.0.1:0
EOF
start_dsroute r -f "$T/r.conf"
URL=http://127.0.0.1:$(metrics_port r)/metrics
kill -HUP "$(pid_of r)"
reloads_are() {
	scrape r1 && [ "$(value "$T/r1.prom" \
	    'dsroute_reloads_total{result="ok"}'):$(value "$T/r1.prom" \
	    'dsroute_reloads_total{result="failed"}')" = "$1" ]
}
check "a good reload counts as ok" wait_for 10 reloads_are 1:0
echo 'nonsense = 1' >>"$T/r.conf"
kill -HUP "$(pid_of r)"
check "a reload of a broken file counts as failed" wait_for 10 reloads_are 1:1
stop_dsroute r
URL=http://127.0.0.1:$mport/metrics

# client-client with no tool listening: the router's offers, made again
# and again, are not sessions to count.
start_fakert rt5 --listen "$T/cc-rt.sock"
start_dsroute c -v debug --connect-timeout 0.3 --metrics 0 \
    "uds:$T/cc-rt.sock" \
    tcp:127.0.0.1:1,connect,peer=tool
wait_for 20 eval "[ \$(count_lines \"$T/c.err\" '^dbug: session [0-9]+: route=') -ge 3 ]"
check "client-client: offers were made and failed" \
    test "$(count_lines "$T/c.err" '^dbug: session [0-9]+: route=')" -ge 3
URL=http://127.0.0.1:$(metrics_port c)/metrics
scrape c1
is "client-client: failed offers count as no session" \
    "$(grep '^dsroute_sessions_total{mode="client-client"' "$T/c1.prom" |
    sed 's/.* //' | sort -u)" 0
stop_dsroute c
stop rt5
URL=http://127.0.0.1:$mport/metrics

# Health.
is "/healthz: 200 ok" "$(status "http://127.0.0.1:$mport/healthz"):$(cat \
    "$T/body")" "200:ok"
is "/readyz: 200 when the listener is up" \
    "$(status "http://127.0.0.1:$mport/readyz")" 200
is "HEAD /healthz: 200, no body" \
    "$(status -I "http://127.0.0.1:$mport/healthz"):$(grep -c '^ok' \
    "$T/body")" "200:0"
is "an unknown path: 404" "$(status "http://127.0.0.1:$mport/nothing")" 404

# server-server: not ready until a runtime has connected.
start_dsroute s --metrics 0 --max-runtimes 1 "uds:$T/ss.sock" \
    tcp:127.0.0.1:0
sport=$(metrics_port s)
is "/readyz: 503 while no runtime has connected" \
    "$(status "http://127.0.0.1:$sport/readyz")" 503
like "... with the reason" "$(cat "$T/body")" 'no runtime has connected'
start_fakert rt2 --connect "$T/ss.sock"
ready_now() {
	[ "$(status "http://127.0.0.1:$sport/readyz")" = 200 ]
}
check "/readyz: 200 once a runtime is parked" wait_for 10 ready_now
URL=http://127.0.0.1:$sport/metrics
parked() {
	scrape s1 && [ "$(value "$T/s1.prom" dsroute_runtimes_parked{})" = 1 ]
}
check "runtimes: one known, one parked" wait_for 10 parked
is "... and known" "$(value "$T/s1.prom" dsroute_runtimes_known{})" 1
# A second runtime is over --max-runtimes 1.
start_fakert rt3 --connect "$T/ss.sock"
over_limit() {
	scrape s2 && [ "$(value "$T/s2.prom" \
	    'dsroute_limit_hits_total{limit="max-runtimes"}')" -ge 1 ]
}
check "limit hits: a runtime over --max-runtimes" wait_for 10 over_limit
stop rt3
stop rt2
stop_dsroute s
URL=http://127.0.0.1:$mport/metrics

# Hostile HTTP.
long=$(head -c 20000 /dev/zero | tr '\0' a)
like "an over-long request line: 4xx" \
    "$(status "http://127.0.0.1:$mport/$long")" '^4[0-9][0-9]$'
like "over-large headers: 4xx" \
    "$(status -H "X-Big: $long" "http://127.0.0.1:$mport/metrics")" \
    '^4[0-9][0-9]$'
for m in POST PUT DELETE; do
	is "$m: 405" "$(status -X "$m" "http://127.0.0.1:$mport/metrics")" 405
done
like "405 says Allow: GET, HEAD" "$(cat "$T/headers")" 'Allow: GET, HEAD'
like "a body: refused" \
    "$(status -d x "http://127.0.0.1:$mport/metrics")" '^4[0-9][0-9]$'

# Garbage: random bytes, then control characters, then a bare LF line.
garbage=$("$PY" - "$mport" <<'EOF'
import os, socket, sys
out = []
for payload in (os.urandom(4096), b"\x00\x01\x02\r\n\r\n",
                b"GET /metrics\x00HTTP/1.1\r\n\r\n", b"\xff" * 9000 + b"\r\n"):
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
    try:
        s.sendall(payload)
        s.shutdown(socket.SHUT_WR)
        data = s.recv(64)
        out.append(data[:12].decode("latin-1") or "closed")
    except OSError:
        out.append("closed")
    s.close()
print(sum(1 for x in out if x == "closed" or x.startswith("HTTP/1.1 4")))
EOF
)
is "garbage: each of 4 connections answered 4xx or closed, never served" \
    "$garbage" 4

# Hostile strings in otherwise well-formed requests: control characters,
# invalid UTF-8 and quotes in the path and headers, NULs, HTTP/0.9, an
# absolute URI, a header with no colon, folded headers, pipelining, a
# thousand tiny headers.  Each gets an HTTP answer or a close, and the
# router stays up; nothing is echoed back unescaped.
hostile=$("$PY" - "$mport" <<'EOF'
import socket, sys
reqs = [
    b"GET /metrics\x01\x02 HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /\xc3\x28\xff\"'<script> HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nHost: \"\xff\xfe\x00\r\n\r\n",
    b"GET /metrics\r\n\r\n",
    b"GET http://evil/metrics HTTP/1.1\r\nHost: x\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nno colon here\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\nX-A: a\r\n folded\r\n\r\n",
    b"GET /healthz HTTP/1.1\r\nHost: x\r\n\r\nGET /healthz HTTP/1.1\r\n"
    b"Host: x\r\n\r\n",
    b"GET /metrics HTTP/1.1\r\n" + b"X: y\r\n" * 1000 + b"\r\n",
    b"GET /metrics HTTP/9.9\r\n\r\n",
    b"GET /%00%0d%0aSet-Cookie:x HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\r\n\r\n\r\n",
]
good = 0
for r in reqs:
    s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=20)
    try:
        s.sendall(r)
        s.shutdown(socket.SHUT_WR)
        data = b""
        while True:
            x = s.recv(65536)
            if not x:
                break
            data += x
    except OSError:
        data = b""
    s.close()
    if (data == b"" or data.startswith(b"HTTP/1.")) and \
            b"Set-Cookie" not in data and b"<script>" not in data:
        good += 1
    else:
        print("unexpected: %r -> %r" % (r[:40], data[:80]), file=sys.stderr)
print(good, len(reqs))
EOF
)
is "hostile strings: each answered or closed, nothing echoed" "$hostile" \
    "12 12"
check "... and the router is alive" alive d

# A slowloris: a request dripped a byte every 0.3 s, for up to a minute,
# beats evhttp's own timeout (reset by every read); the deadline
# (--handshake-timeout, 5 s here) cuts it, while another client is served.
cat >"$T/loris.py" <<'EOF'
import socket, sys, time
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=70)
req = b"GET /metrics HTTP/1.1\r\n" + b"X-Drip: " + b"a" * 1000
sent = 0
try:
    for b in req:
        s.send(bytes([b]))
        sent += 1
        time.sleep(0.3)
    print("never cut: sent %d bytes" % sent)
    sys.exit(1)
except OSError:
    print("cut after %d bytes" % sent)
EOF
bg loris "$PY" "$T/loris.py" "$mport"
sleep 1		# let it start dripping; not a sync
if scrape mid && alive loris; then
	pass "while the slowloris drips, /metrics is served"
else
	fail "while the slowloris drips, /metrics is served" \
	    "$(cat "$T/mid.scrape.err")"
fi
if wait "$(pid_of loris)"; then
	pass "the slowloris is cut by the deadline"
else
	fail "the slowloris is cut by the deadline" "$(cat "$T/loris.out")"
fi
like "... before it finished its request" "$(cat "$T/loris.out")" \
    '^cut after [0-9]+ bytes$'

# A thousand idle connections, held open, while sessions and /metrics go
# on.
mkfifo "$T/crowd.fifo"
bg crowd sh -c "exec \"$CROWD\" hold 1000 120 tcp:127.0.0.1:$mport \
    <>\"$T/crowd.fifo\""
wait_for 60 has_line "$T/crowd.out" '^hold: opened=' || true
like "a thousand connections opened" "$(cat "$T/crowd.out")" \
    '^hold: opened=1000 of 1000'
if scrape crowded; then
	pass "with a thousand idle connections, /metrics is served"
else
	fail "with a thousand idle connections, /metrics is served" \
	    "$(cat "$T/crowded.scrape.err")"
fi
check "with a thousand idle connections, a session works" \
    tool --timeout 20 "$addr" processinfo
open_http=$(value "$T/crowded.prom" 'dsroute_metrics_connections_open{}')
check "metrics connections stay under the cap ($open_http)" \
    test "$open_http" -le 64
stop crowd

# After all of it: alive, and a session still works.
check "the router is alive" alive d
check "a session still works" tool --timeout 20 "$addr" processinfo
check "/healthz still answers" \
    test "$(status "http://127.0.0.1:$mport/healthz")" = 200
stop_dsroute d

# Exposure: plaintext metrics beyond loopback, given in full, are served
# with a warning (a pod's probes need them); the routes' rule stays.
start_dsroute wide --metrics tcp:0.0.0.0:0 "uds:$T/w.sock" tcp:127.0.0.1:0
like "plaintext metrics beyond loopback: a warning" "$(cat "$T/wide.err")" \
    'warn: --metrics tcp:0\.0\.0\.0:0: plaintext beyond loopback: anyone who reaches it reads the counts'
wport=$(metrics_port wide)
check "plaintext metrics beyond loopback: served" \
    test "$(status "http://127.0.0.1:$wport/healthz")" = 200
stop_dsroute wide
refused "a plaintext route beyond loopback is still refused" \
    'refusing' --metrics tcp:0.0.0.0:0 "uds:$T/x.sock" tcp:0.0.0.0:0
refused "a bad metrics address is one clear line" '^.*--metrics udp:1' \
    --metrics udp:1 "uds:$T/x.sock" tcp:127.0.0.1:0
refused "route options are not metrics options" \
    'access control options are for routes' \
    --metrics tcp:127.0.0.1:0,policy=full "uds:$T/x.sock" tcp:127.0.0.1:0
refused "-n checks the metrics address too" '^--metrics uds:/m: give tcp' \
    -n --metrics uds:/m "uds:$T/x.sock" tcp:127.0.0.1:0
is "-n: a good metrics address is OK" "$("$DSROUTE" -n --metrics 9090 \
    "uds:$T/x.sock" tcp:127.0.0.1:0 2>&1)" "configuration OK (not checked: that ports are free, and that peers and runtimes answer)"

# TLS.
. "$top_srcdir/tests/lib/tls.sh"
make_base_certs
tlsm="tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
# TLS handshakes of sessions, in either build: one with a client
# certificate, one without, which the listener requires.
start_fakert rt4 --listen "$T/h-rt.sock"
start_dsroute h --metrics 0 "uds:$T/h-rt.sock" \
    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
URL=http://127.0.0.1:$(metrics_port h)/metrics
hport=$(port_of h remote)
sclient good "$hport" -cert "$C/client1.pem" -key "$C/client1.key"
like "a TLS client with a certificate gets its ProcessInfo" \
    "$(od -c "$T/good.out" | head -n 1)" 'D   O   T   N   E   T'
sclient bad "$hport"
handshakes_are() {
	scrape h1 && [ "$(value "$T/h1.prom" dsroute_tls_handshakes_total{}):$(value \
	    "$T/h1.prom" dsroute_tls_handshake_failures_total{})" = "$1" ]
}
check "TLS handshakes: one completed, one failed" wait_for 10 handshakes_are 1:1
stop_dsroute h
stop rt4

if grep -q '^dsroute_build_info{tls="mbedtls"' "$T/m0.prom"; then
	refused "mbed TLS build: --metrics tls: refused in one line" \
	    'mbed TLS.*libevent 2.1 serves HTTPS only with OpenSSL' \
	    --metrics "$tlsm" "uds:$T/t.sock" tcp:127.0.0.1:0
	skip "metrics over TLS" "mbed TLS build: no libevent bufferevent"
else
	start_dsroute t --metrics "$tlsm" "uds:$T/t.sock" tcp:127.0.0.1:0
	tport=$(metrics_port t)
	like "TLS: the start-up line says https" "$(cat "$T/t.err")" \
	    "info: metrics: https://127.0.0.1:$tport/metrics"
	URL=https://localhost:$tport/metrics
	if scrape tl "$C/ca.pem" "$C/client1.pem" "$C/client1.key"; then
		pass "TLS: a client with a certificate scrapes /metrics"
	else
		fail "TLS: a client with a certificate scrapes /metrics" \
		    "$(cat "$T/tl.scrape.err")"
	fi
	# curl's 7 would be a refused connection: the handshake must fail.
	code=$(status --cacert "$C/ca.pem" "https://localhost:$tport/healthz")
	rc=$?
	is "TLS: without a client certificate, the handshake fails" \
	    "$code:$([ $rc -ne 0 ] && [ $rc -ne 7 ] && echo failed)" 000:failed
	code=$(status "http://127.0.0.1:$tport/metrics")
	rc=$?
	is "TLS: plaintext HTTP to it gets no metrics" \
	    "$([ "$code" != 200 ] && [ $rc -ne 7 ] && echo none)" none
	# SIGHUP: a new certificate for the connections that follow; a
	# broken one keeps the current.
	served_fp() {
		openssl s_client -connect "127.0.0.1:$tport" \
		    -cert "$C/client1.pem" -key "$C/client1.key" </dev/null \
		    2>/dev/null | openssl x509 -noout -fingerprint -sha256
	}
	fp1=$(served_fp)
	mkcert server localhost dns:localhost ip:127.0.0.1
	kill -HUP "$(pid_of t)"
	check "TLS: SIGHUP reloads the metrics certificate" wait_for 10 \
	    has_line "$T/t.err" '^info: reload: new certificates for --metrics'
	fp2=$(served_fp)
	check "TLS: the new certificate is served ($fp2)" \
	    test -n "$fp2" -a "$fp1" != "$fp2"
	echo broken >"$C/localhost.pem"
	kill -HUP "$(pid_of t)"
	check "TLS: a broken certificate is refused in one line" wait_for 10 \
	    has_line "$T/t.err" '^fail: reload: --metrics .*keeping its current'
	is "TLS: ... and the current one is still served" "$(served_fp)" "$fp2"
	if scrape tl2 "$C/ca.pem" "$C/client1.pem" "$C/client1.key"; then
		is "TLS: reloads counted, one ok and one failed" \
		    "$(value "$T/tl2.prom" 'dsroute_reloads_total{result="ok"}'):$(value \
		    "$T/tl2.prom" 'dsroute_reloads_total{result="failed"}')" 1:1
	else
		fail "TLS: reloads counted, one ok and one failed" \
		    "$(cat "$T/tl2.scrape.err")"
	fi
	check "TLS: the router is alive" alive t
	stop_dsroute t
fi

done_testing
