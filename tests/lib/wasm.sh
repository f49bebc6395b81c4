#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced by tests/interop-wasm.sh after lib.sh: dswasm, the .NET
# browser-wasm app with the diagnostic server linked in (tests/wasm), run
# headless under Node.  tests/wasm/build.sh builds it once per machine
# into ~/.cache/dsroute/wasm; concurrent scenarios wait for that one build.
#
# wasm_setup skips the scenario, visibly, where dswasm cannot be built or
# run here, and bails out where it should build and did not.

WASM_CACHE=${DSWASM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/wasm}

# wasm_setup: set $WWWROOT (the published app) and $NODE_FLAGS.
wasm_setup() {
	case $(dotnet --version 2>/dev/null) in
	10.*) ;;
	*) skip_all "no .NET 10 SDK to build the browser app (dotnet --version)" ;;
	esac
	command -v node >/dev/null 2>&1 ||
	    skip_all "no node to run the browser app headless"
	# Node 22 has WebSocket; 20 behind a flag; 18 not at all.
	NODE_FLAGS=""
	if ! node -e 'process.exit(typeof WebSocket == "function" ? 0 : 1)' \
	    2>/dev/null; then
		NODE_FLAGS=--experimental-websocket
		node $NODE_FLAGS -e \
		    'process.exit(typeof WebSocket == "function" ? 0 : 1)' \
		    2>/dev/null || skip_all "node $(node --version) has no \
WebSocket (Node 20 with --experimental-websocket, or 22)"
	fi
	if ! _key=$(sh "$top_srcdir/tests/wasm/build.sh" --key); then
		echo "Bail out! tests/wasm/build.sh --key failed"
		exit 1
	fi
	_log=$WASM_CACHE/$_key.log
	if [ ! -f "$WASM_CACHE/$_key/stamp" ]; then
		# What building it takes: root, for debootstrap, chroot and
		# mounts, in a mount namespace of its own; apt for the rest.
		_not="the browser app is not built ($WASM_CACHE/$_key)"
		[ "$(id -u)" -eq 0 ] ||
		    skip_all "$_not and building it needs root"
		unshare --mount true 2>/dev/null || skip_all "$_not and \
building it needs a mount namespace (unshare --mount)"
		command -v debootstrap >/dev/null 2>&1 ||
		    command -v apt-get >/dev/null 2>&1 ||
		    skip_all "$_not: no debootstrap, and no apt-get to install it"
		echo "# building the browser app into $WASM_CACHE/$_key" \
		    "(once per machine); log: $_log"
	fi
	mkdir -p "$WASM_CACHE"
	if ! WWWROOT=$(sh "$top_srcdir/tests/wasm/build.sh" --log "$_log"); then
		tail -n 30 "$_log" 2>/dev/null | sed 's/^/# /'
		echo "Bail out! cannot build the browser app; see $_log"
		exit 1
	fi
}

# start_wasm NAME URL [VAR=VALUE ...]: dswasm under Node, dialling URL
# (ws:// or wss://), for ten minutes unless stopped; its events carry the
# name dswasm-NAME.
start_wasm() {
	_name=$1
	_url=$2
	shift 2
	# shellcheck disable=SC2086
	bg "$_name" env -C "$WWWROOT" DOTNET_DiagnosticPorts="$_url" \
	    DSWASM_NAME="dswasm-$_name" DSWASM_SECONDS=600 "$@" \
	    node $NODE_FLAGS main.mjs
}

# wasm_ready NAME: Main of dswasm NAME has run.
wasm_ready() {
	has_line "$T/$1.out" "^dswasm-$1 ready"
}

# serve_wasm: serve the app over HTTP on a port of loopback, in $HTTP_PORT.
serve_wasm() {
	bg http python3 -u -m http.server 0 --bind 127.0.0.1 \
	    --directory "$WWWROOT"
	wait_for 10 has_line "$T/http.out" '^Serving HTTP on 127\.0\.0\.1 port' ||
	    return 1
	HTTP_PORT=$(sed -n 's/^Serving HTTP on [^ ]* port \([0-9]*\).*/\1/p' \
	    "$T/http.out")
}

# start_chromium NAME URL: dswasm in Debian's headless Chromium, the page
# served by serve_wasm, dialling URL; the page's console is in
# $T/NAME.err.  Headless, the page runs in real time until it is killed.
start_chromium() {
	mkdir -p "$T/$1.profile"
	bg "$1" timeout 600 chromium --headless --no-sandbox --disable-gpu \
	    --no-first-run --user-data-dir="$T/$1.profile" \
	    --enable-logging=stderr --v=0 \
	    "http://127.0.0.1:$HTTP_PORT/index.html?DOTNET_DiagnosticPorts=$2&DSWASM_NAME=dswasm-$1&DSWASM_SECONDS=600"
}

# chromium_ready NAME: Main of dswasm NAME has run in Chromium.
chromium_ready() {
	has_line "$T/$1.err" "\"dswasm-$1 ready"
}
