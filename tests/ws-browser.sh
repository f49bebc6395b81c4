#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A real browser's WebSocket on ws: and wss: listeners: Debian's headless
# Chromium opens a page (tests/helpers/wspage.html, served from loopback
# by python3 -m http.server under names Chromium maps to 127.0.0.1) whose
# script dials the router as a tool, sends ProcessInfo and reports what
# came back to the page's server.  A page whose Origin origin= allows,
# and one from loopback (the default), reach the fake runtime and read
# its answer; a page of another Origin gets its onerror and onclose
# (1006), the runtime sees nothing and the router logs one line.  Over
# wss: Chromium trusts the router's certificate by its public key; one it
# does not trust fails the handshake.

. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

command -v chromium >/dev/null 2>&1 ||
    skip_all "no chromium (Debian's chromium; dev.sh installs it)"
command -v python3 >/dev/null 2>&1 || skip_all "no python3"

make_base_certs
mkdir "$T/www"
cp "$top_srcdir/tests/helpers/wspage.html" "$T/www/"
bg http python3 -m http.server --bind 127.0.0.1 0 --directory "$T/www"
wait_for 10 has_line "$T/http.out" '^Serving HTTP on 127\.0\.0\.1 port' ||
    fail "the page is served" "$(cat "$T/http.err")"
HP=$(sed -n 's/^Serving HTTP on [^ ]* port \([0-9]*\).*/\1/p' "$T/http.out")
# The page's Origin: a name of its own, mapped to loopback by Chromium.
APP=http://app.test:$HP
EVIL=http://evil.test:$HP
# Chromium's pin of the router's key: base64 of the SHA-256 of its SPKI.
SPKI=$(openssl x509 -in "$C/localhost.pem" -pubkey -noout |
    openssl pkey -pubin -outform der | openssl dgst -sha256 -binary |
    base64)

# browse NAME ORIGIN URL [FLAGS...]: Chromium opens the page from ORIGIN
# with the WebSocket URL until the page reports its WebSocket closed;
# what it reported, sorted, is in $T/NAME.reports.
_browsed=0
browse() {
	_bn=$1
	_bp=$2
	_bu=$3
	shift 3
	mkdir "$T/$_bn.profile"
	# Each page's reports from here on.
	_browsed=$(wc -l <"$T/http.err")
	bg "$_bn" timeout 120 chromium --headless --no-sandbox --disable-gpu \
	    --disable-quic --no-first-run --disable-background-networking \
	    --disable-component-update --disable-sync \
	    --user-data-dir="$T/$_bn.profile" \
	    --host-resolver-rules="MAP app.test 127.0.0.1, MAP evil.test 127.0.0.1" \
	    "$@" "$_bp/wspage.html?url=$_bu"
	wait_for 60 eval "tail -n +$((_browsed + 1)) '$T/http.err' |
	    grep -q 'GET /report?close-'"
	tail -n +$((_browsed + 1)) "$T/http.err" |
	    sed -n 's|.*"GET /report?\([^ ]*\) HTTP/1\.1".*|\1|p' | sort \
	    >"$T/$_bn.reports"
	stop "$_bn"
}

REPLY="reply-444f544e45545f4950435f563100[0-9a-f]{4}ff000000"

# got NAME DESC: the page's WebSocket opened, and read the runtime's
# answer to ProcessInfo (an OK header), then closed normally.
got() {
	like "$2: the page reads the runtime's answer" \
	    "$(tr '\n' ' ' <"$T/$1.reports")" \
	    "^close-1000 open $REPLY \$"
}

# turned NAME DESC: the page's WebSocket never opened: onerror, then
# onclose with 1006.
turned() {
	is "$2: the page's onerror and onclose (1006), never onopen" \
	    "$(tr '\n' ' ' <"$T/$1.reports")" "close-1006 error "
}

start_fakert rt --listen "$T/rt.sock" --pid 5301

# --- ws: ----------------------------------------------------------------

start_dsroute w "uds:$T/rt.sock,connect" "ws:127.0.0.1:0/diag,origin=$APP"
WP=$(sed -n 's/^info: remote ws:[^ ]*:\([0-9]*\)\/diag: listening.*/\1/p' \
    "$T/w.err")

browse b1 "$APP" "ws://127.0.0.1:$WP/diag"
got b1 "ws:, a page of an Origin origin= allows"
check "ws:, ... the runtime got its ProcessInfo" \
    has_line "$T/rt.ev" '^command 0x04 0x00 20 ProcessInfo$'
has_line "$T/w.err" "^info: session [0-9]+: .*tool=ws:127\\.0\\.0\\.1:[0-9]+ .*answer=ok" ||
    fail "ws:, ... the session is logged with the answer"

browse b2 "http://127.0.0.1:$HP" "ws://127.0.0.1:$WP/diag"
got b2 "ws:, a page of loopback, which the default allows"

: >"$T/rt.ev"
browse b3 "$EVIL" "ws://127.0.0.1:$WP/diag"
turned b3 "ws:, a page of another Origin"
is "ws:, ... the router logs one line" \
    "$(count_lines "$T/w.err" 'Origin not allowed')" 1
like "ws:, ... a 403 for its Origin" \
    "$(grep 'Origin not allowed' "$T/w.err")" \
    'end="WebSocket upgrade refused: 403 Origin not allowed \(see origin=\)"'
untouched rt "ws:, ... another Origin"
check "ws:, the router stayed up" alive w
stop_dsroute w

# --- wss: ---------------------------------------------------------------

start_dsroute s "uds:$T/rt.sock,connect" \
    "wss:127.0.0.1:0/diag,$(cert localhost),verify=none,origin=$APP"
SP=$(sed -n 's/^info: remote wss:[^ ]*:\([0-9]*\)\/diag: listening.*/\1/p' \
    "$T/s.err")

browse b4 "$APP" "wss://127.0.0.1:$SP/diag" \
    --ignore-certificate-errors-spki-list="$SPKI"
got b4 "wss:, a page of an Origin origin= allows, the key pinned"

: >"$T/rt.ev"
browse b5 "$EVIL" "wss://127.0.0.1:$SP/diag" \
    --ignore-certificate-errors-spki-list="$SPKI"
turned b5 "wss:, a page of another Origin"
is "wss:, ... the router logs one line" \
    "$(count_lines "$T/s.err" 'Origin not allowed')" 1
untouched rt "wss:, ... another Origin"

browse b6 "$APP" "wss://127.0.0.1:$SP/diag"
turned b6 "wss:, a certificate Chromium does not trust"
untouched rt "wss:, ... an untrusted certificate"
check "wss:, the router stayed up" alive s
stop_dsroute s
stop rt
stop http

done_testing
