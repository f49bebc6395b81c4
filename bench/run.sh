#!/bin/bash
# SPDX-License-Identifier: ISC
#
# The dsroute benchmark: dsroute next to direct sockets, socat, haproxy,
# stunnel (and dotnet-dsrouter where it installs), in one run, on
# loopback.  See bench/README.md.
#
#	bench/run.sh		the full run (about 15 minutes on 2 cores)
#	QUICK=1 bench/run.sh	a smoke run (about 2 minutes)
#
# Knobs (environment): ROUNDS, IDLE_ROUNDS, PLAIN_BYTES, TLS_BYTES,
# RR_SECS, RR4_SECS, IDLE_N, STALL_N, STALL_BYTES, PORT_BASE, ONLY (a
# regular expression of config names), WORKLOADS (a subset of "stream rr
# syscalls idle"), DSROUTE (use this binary instead of building one), DSROUTE_B
# (a second dsroute binary measured alongside as dsroute-b, for a
# before/after comparison in one run), DSROUTE_ARGS (options for every
# dsroute, e.g. "-v warning" to drop the one log line per session that
# the peers here do not write), WAIT_QUIET (wait up to this many
# seconds for the load average to fall below QUIET_LOAD, default 1.0),
# KEEP (keep the work directory), OUT (results directory), MANY_N,
# MANY_ROUNDS, MANY_PS_REPS (the many-runtimes part, bench/many.sh).

set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

if [ -n "${QUICK:-}" ]; then
	: "${ROUNDS:=1}" "${IDLE_ROUNDS:=1}" "${PLAIN_BYTES:=268435456}"
	: "${TLS_BYTES:=134217728}" "${RR_SECS:=0.5}" "${RR4_SECS:=0.5}"
	: "${IDLE_N:=200}" "${STALL_N:=20}" "${MANY_ROUNDS:=1}"
	: "${MANY_PS_REPS:=3}"
fi
: "${ROUNDS:=5}" "${IDLE_ROUNDS:=3}"
: "${PLAIN_BYTES:=1073741824}" "${TLS_BYTES:=1073741824}"
: "${RR_SECS:=2}" "${RR4_SECS:=1.5}" "${IDLE_N:=1000}"
: "${STALL_N:=100}" "${STALL_BYTES:=67108864}"
: "${PORT_BASE:=17100}" "${ONLY:=.}" "${OUT:=$top/bench/results}"
: "${WORKLOADS:=stream rr syscalls idle many}" "${DSROUTE_ARGS:=}"
: "${MANY_N:=100}" "${MANY_ROUNDS:=3}" "${MANY_PS_REPS:=5}"
# Every session of the benchmark comes from one peer (this uid, or
# 127.0.0.1), which dsroute's default limits (1024 sessions, 64 per peer)
# would cut off in the idle and stalled workloads: lift them above IDLE_N.
DSR_LIMITS="--max-sessions $((IDLE_N + 100)) --max-sessions-per-peer $((IDLE_N + 100))"
B=$top/bench/build

log() {
	echo "bench: $*" >&2
}

# Install whichever Debian packages are missing (root or sudo).
install_missing() {
	local missing="" p sudo=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	log "installing$missing"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
	    --no-install-recommends $missing >/dev/null
}

# Build dsroute as users run it (-O2, no sanitizers) and the load tool.
build() {
	mkdir -p "$B/dsroute"
	DSROUTE_FROM="given: ${DSROUTE:-}"
	if [ -z "${DSROUTE:-}" ]; then
		DSROUTE_FROM="built from $(git describe --always --dirty \
		    2>/dev/null || echo "an unknown commit")"
		[ -x configure ] && [ configure -nt configure.ac ] &&
		    [ configure -nt Makefile.am ] ||
		    ./autogen.sh >/dev/null 2>&1
		if [ ! -f "$B/dsroute/Makefile" ] ||
		    [ "$B/dsroute/config.status" -ot configure ]; then
			(cd "$B/dsroute" && CFLAGS="-O2 -g" \
			    "$top/configure" -q)
		fi
		make -s -C "$B/dsroute" -j"$(nproc)" dsroute
		DSROUTE=$B/dsroute/dsroute
	fi
	if [ ! -x "$B/dsbench" ] || [ "$B/dsbench" -ot bench/dsbench.c ]; then
		gcc -O2 -g -Wall -Wextra -Wno-unused-parameter \
		    -o "$B/dsbench" bench/dsbench.c -lssl -lcrypto -lpthread
	fi
	# The tests' fake runtime, for the many-runtimes part.
	if [ ! -x "$B/fakert" ] ||
	    [ -n "$(find tests/helpers/fakert.c tests/helpers/fakertcore.[ch] \
	    tests/helpers/fakeproto.[ch] tests/helpers/le.h \
	    tests/helpers/sha256.h -newer "$B/fakert")" ]
	then
		gcc -O2 -g -Wall -Wextra -I tests/helpers \
		    -DTESTS_SHA256_OPENSSL -o "$B/fakert" \
		    tests/helpers/fakert.c tests/helpers/fakertcore.c \
		    tests/helpers/fakeproto.c -lcrypto -lpthread
	fi
}

# Try to install dotnet-dsrouter from the configured NuGet feed, once.
dsrouter_install() {
	DSROUTER=""
	DSROUTER_NOTE="dotnet not installed"
	command -v dotnet >/dev/null 2>&1 || return 0
	if [ ! -x "$B/dotnet-tools/dotnet-dsrouter" ]; then
		timeout 300 dotnet tool install dotnet-dsrouter \
		    --tool-path "$B/dotnet-tools" >"$B/dsrouter-install.log" \
		    2>&1 || true
	fi
	if [ -x "$B/dotnet-tools/dotnet-dsrouter" ]; then
		DSROUTER=$B/dotnet-tools/dotnet-dsrouter
		DSROUTER_NOTE="installed"
	else
		DSROUTER_NOTE="does not install here: $(grep -m1 -iE \
		    'error|unable|not found|fail' "$B/dsrouter-install.log" |
		    tr -d '\r' | cut -c1-160)"
	fi
}

# With WAIT_QUIET=S, wait up to S seconds for the one-minute load
# average to fall below QUIET_LOAD (default 1.0) before measuring.
wait_quiet() {
	local deadline
	[ -n "${WAIT_QUIET:-}" ] || return 0
	deadline=$(($(date +%s) + WAIT_QUIET))
	while [ "$(date +%s)" -lt "$deadline" ]; do
		awk -v max="${QUIET_LOAD:-1.0}" '{ exit !($1 < max) }' \
		    /proc/loadavg && return 0
		sleep 5
	done
	log "load still $(cut -d' ' -f1 /proc/loadavg) after ${WAIT_QUIET}s;" \
	    "measuring anyway"
}

W=""
PIDS=""

cleanup() {
	local p
	for p in $PIDS; do
		kill "$p" 2>/dev/null || true
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null || true
	done
	[ -n "$W" ] && [ -z "${KEEP:-}" ] && rm -rf "$W"
}

# Wait until something accepts connections at ADDR.
wait_ready() {
	local i
	for i in $(seq 1 100); do
		"$B/dsbench" probe "$1" 2>/dev/null && return 0
		sleep 0.05
	done
	log "nothing answers at $1"
	return 1
}

# ---- the configurations -------------------------------------------------
#
# Each config has a client address (ADDR_x), a relay to start
# (start_x, which sets RELAY_PID) or none (direct), and a group: plain
# configs are compared with direct-tcp, TLS ones with direct-tls.

port() {
	echo $((PORT_BASE + $1))
}

write_configs() {
	local srv_tcp=127.0.0.1:$(port 0) srv_tls=127.0.0.1:$(port 1)

	cat "$W/cert.pem" "$W/key.pem" >"$W/combined.pem"
	cat >"$W/haproxy-rt-uds.cfg" <<-EOF
	global
		nbthread 1
		maxconn 8000
	defaults
		mode tcp
		timeout connect 10s
		timeout client 600s
		timeout server 600s
	listen l
		bind 127.0.0.1:$(port 12)
		server s unix@$W/rt.sock
	EOF
	sed "s|bind .*|bind unix@$W/hap-rt-tcp.sock|; s|server s .*|server s $srv_tcp|" \
	    "$W/haproxy-rt-uds.cfg" >"$W/haproxy-rt-tcp.cfg"
	sed "s|bind .*|bind 127.0.0.1:$(port 22) ssl crt $W/combined.pem|" \
	    "$W/haproxy-rt-uds.cfg" >"$W/haproxy-tls-rt-uds.cfg"
	sed "s|bind .*|bind unix@$W/hap-tls-rt-tls.sock|; s|server s .*|server s $srv_tls ssl verify none|" \
	    "$W/haproxy-rt-uds.cfg" >"$W/haproxy-tls-rt-tls.cfg"
	sed "s|bind .*|bind 127.0.0.1:$(port 25) ssl crt $W/combined.pem|; s|server s .*|server s $srv_tls ssl verify none|" \
	    "$W/haproxy-rt-uds.cfg" >"$W/haproxy-tls-tls.cfg"
	cat >"$W/stunnel-tls-rt-uds.cfg" <<-EOF
	foreground = yes
	pid =
	[s]
	accept = 127.0.0.1:$(port 23)
	connect = $W/rt.sock
	cert = $W/cert.pem
	key = $W/key.pem
	socket = a:SO_REUSEADDR=1
	socket = l:TCP_NODELAY=1
	EOF
	cat >"$W/stunnel-tls-rt-tls.cfg" <<-EOF
	foreground = yes
	pid =
	[s]
	client = yes
	accept = $W/stun-rt-tls.sock
	connect = $srv_tls
	verifyPeer = no
	socket = r:TCP_NODELAY=1
	EOF
}

# config name, client address, group
CONFIGS="
direct-uds unix:@W@/rt.sock plain
direct-tcp tcp:127.0.0.1:@P0@ plain
dsroute:rt-uds tcp:127.0.0.1:@P10@ plain
socat:rt-uds tcp:127.0.0.1:@P11@ plain
haproxy:rt-uds tcp:127.0.0.1:@P12@ plain
dsroute:rt-tcp unix:@W@/dsr-rt-tcp.sock plain
dsroute-b:rt-uds tcp:127.0.0.1:@P14@ plain
dsroute-b:rt-tcp unix:@W@/dsrb-rt-tcp.sock plain
socat:rt-tcp unix:@W@/socat-rt-tcp.sock plain
haproxy:rt-tcp unix:@W@/hap-rt-tcp.sock plain
dsrouter:rt-tcp unix:@W@/dsrouter-rt-tcp.sock plain
dsroute:ws-rt unix:@W@/dsr-ws-rt.sock plain
dsroute:ws-tiny unix:@W@/dsr-ws-tiny.sock plain
direct-tls tls:127.0.0.1:@P1@ tls
dsroute:tls-rt-uds tls:127.0.0.1:@P20@ tls
haproxy:tls-rt-uds tls:127.0.0.1:@P22@ tls
stunnel:tls-rt-uds tls:127.0.0.1:@P23@ tls
dsroute:tls-rt-tls unix:@W@/dsr-tls-rt-tls.sock tls
haproxy:tls-rt-tls unix:@W@/hap-tls-rt-tls.sock tls
stunnel:tls-rt-tls unix:@W@/stun-rt-tls.sock tls
dsroute:tls-tls tls:127.0.0.1:@P24@ tls
haproxy:tls-tls tls:127.0.0.1:@P25@ tls
"

config_addr() {
	echo "$CONFIGS" | awk -v c="$1" '$1 == c { print $2 }' |
	    sed "s|@W@|$W|g; s|@P\([0-9]*\)@|\$(port \1)|g" |
	    while read -r a; do eval "echo $a"; done
}

config_group() {
	echo "$CONFIGS" | awk -v c="$1" '$1 == c { print $3 }'
}

# Set CMD to the relay command of a config (empty for direct configs).
# Return 1 when the config cannot run here.
relay_cmd() {
	local c=$1 srv_tcp=127.0.0.1:$(port 0) srv_tls=127.0.0.1:$(port 1)
	local tlsopt="cert=$W/cert.pem,key=$W/key.pem,verify=none"
	CMD=()
	case $c in
	direct-*)
		;;
	dsroute:rt-uds)
		CMD=("$DSROUTE" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/rt.sock",connect
		    tcp:127.0.0.1:$(port 10),listen) ;;
	dsroute:rt-tcp)
		CMD=("$DSROUTE" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/dsr-rt-tcp.sock",listen
		    tcp:"$srv_tcp",connect) ;;
	dsroute:tls-rt-uds)
		[ "$DSROUTE_TLS" = available ] || return 1
		CMD=("$DSROUTE" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/rt.sock",connect
		    tls:127.0.0.1:$(port 20),listen,$tlsopt) ;;
	dsroute:tls-rt-tls)
		[ "$DSROUTE_TLS" = available ] || return 1
		CMD=("$DSROUTE" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/dsr-tls-rt-tls.sock",listen
		    tls:"$srv_tls",connect,ca=$W/cert.pem,sni=localhost) ;;
	dsroute:tls-tls)
		[ "$DSROUTE_TLS" = available ] || return 1
		CMD=("$DSROUTE" $DSR_LIMITS $DSROUTE_ARGS
		    tls:"$srv_tls",connect,ca=$W/cert.pem,sni=localhost
		    tls:127.0.0.1:$(port 24),listen,$tlsopt) ;;
	dsroute:ws-rt)
		CMD=("$DSROUTE" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/dsr-ws-rt.sock",listen
		    ws:127.0.0.1:$(port 30)/diag,listen,advertise=any) ;;
	dsroute:ws-tiny)
		CMD=("$DSROUTE" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/dsr-ws-tiny.sock",listen
		    ws:127.0.0.1:$(port 31)/diag,listen,advertise=any) ;;
	dsroute-b:rt-uds)
		CMD=("$DSROUTE_B" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/rt.sock",connect
		    tcp:127.0.0.1:$(port 14),listen) ;;
	dsroute-b:rt-tcp)
		CMD=("$DSROUTE_B" $DSR_LIMITS $DSROUTE_ARGS uds:"$W/dsrb-rt-tcp.sock",listen
		    tcp:"$srv_tcp",connect) ;;
	socat:rt-uds)
		CMD=(socat TCP-LISTEN:$(port 11),bind=127.0.0.1,fork,reuseaddr,nodelay,backlog=4096
		    UNIX-CONNECT:"$W/rt.sock") ;;
	socat:rt-tcp)
		CMD=(socat UNIX-LISTEN:"$W/socat-rt-tcp.sock",fork,backlog=4096
		    TCP:"$srv_tcp",nodelay) ;;
	haproxy:*)
		CMD=(haproxy -db -f "$W/haproxy-${c#haproxy:}.cfg") ;;
	stunnel:*)
		CMD=(stunnel4 "$W/stunnel-${c#stunnel:}.cfg") ;;
	dsrouter:rt-tcp)
		[ -n "$DSROUTER" ] || return 1
		CMD=(env DOTNET_ROLL_FORWARD=Major "$DSROUTER" server-client
		    -ipcs "$W/dsrouter-rt-tcp.sock" -tcpc "$srv_tcp" -v none) ;;
	*)
		return 1 ;;
	esac
	return 0
}

# Start the relay of a config in the background; set RELAY_PID (empty
# for direct configs).  Return 1 when the config cannot run here.
start_relay() {
	RELAY_PID=""
	relay_cmd "$1" || return 1
	[ ${#CMD[@]} -eq 0 ] && return 0
	"${CMD[@]}" >>"$W/relay-${1/:/-}.log" 2>&1 </dev/null &
	RELAY_PID=$!
	PIDS="$PIDS $RELAY_PID"
	wait_ready "$(config_addr "$1")" || return 1
	ws_runtime "$1"
}

# The ws configs' runtime: dsbench playing a browser runtime that dials
# the router (as the real one does, once per command), its traces in
# messages of up to 64 KiB (ws-rt) or of 1 to 4 bytes (ws-tiny), as the
# real one writes them.
declare -A WSRT
ws_runtime() {
	local port chunk
	case $1 in
	dsroute:ws-rt) port=$(port 30) chunk=65535 ;;
	dsroute:ws-tiny) port=$(port 31) chunk=4 ;;
	*) return 0 ;;
	esac
	"$B/dsbench" wsruntime tcp:127.0.0.1:"$port" --path /diag \
	    --chunk-max "$chunk" 2>>"$W/wsruntime.err" &
	WSRT[$1]=$!
	PIDS="$PIDS ${WSRT[$1]}"
}

stop_relay() {
	if [ -n "${WSRT[$1]:-}" ]; then
		kill "${WSRT[$1]}" 2>/dev/null || true
		wait "${WSRT[$1]}" 2>/dev/null || true
		WSRT[$1]=""
	fi
	[ -n "${RPID[$1]:-}" ] || return 0
	kill "${RPID[$1]}" 2>/dev/null || true
	wait "${RPID[$1]}" 2>/dev/null || true
	RPID[$1]=""
	# A fresh listener may need the socket path again.
	case $1 in
	socat:rt-tcp) rm -f "$W/socat-rt-tcp.sock" ;;
	haproxy:rt-tcp) rm -f "$W/hap-rt-tcp.sock" ;;
	haproxy:tls-rt-tls) rm -f "$W/hap-tls-rt-tls.sock" ;;
	stunnel:tls-rt-tls) rm -f "$W/stun-rt-tls.sock" ;;
	esac
}

declare -A RPID
declare -A SKIP

# Start a config's relay (if any), remembering why it cannot run.
up() {
	local c=$1
	if start_relay "$c"; then
		RPID[$c]=$RELAY_PID
	else
		SKIP[$c]=1
		if [ -n "$RELAY_PID" ]; then
			kill "$RELAY_PID" 2>/dev/null || true
			wait "$RELAY_PID" 2>/dev/null || true
		fi
		RPID[$c]=""
	fi
}

want() {
	case " $WORKLOADS " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

pidopt() {
	[ -n "${RPID[$1]:-}" ] && echo "--pid ${RPID[$1]}"
}

# Run one measurement; keep its RESULT line with the round.
measure() {
	local round=$1 c=$2 kind=$3 line
	shift 3
	if line=$("$B/dsbench" "$kind" "$(config_addr "$c")" --name "$c" \
	    $(pidopt "$c") "$@" --timeout 120 2>>"$W/client.err"); then
		:
	else
		log "$c $kind failed: ${line:-no result}"
	fi
	[ -n "$line" ] && echo "$line round=$round" >>"$RAW"
	return 0
}

# Count the relay's system calls (strace -c -f) over one client run:
# per connection for rr (1000 of them), per MB for a stream.
syscalls() {
	local c=$1 kind=$2 st out=$W/strace.out per
	shift 2
	local pid=${RPID[$c]} i
	strace -c -S calls -f -p "$pid" -o "$out" 2>/dev/null &
	st=$!
	for i in $(seq 1 200); do
		awk '/^TracerPid:/ { exit $2 == 0 }' "/proc/$pid/status" &&
		    break
		sleep 0.01
	done
	"$B/dsbench" "$kind" "$(config_addr "$c")" --timeout 120 "$@" \
	    >/dev/null 2>>"$W/client.err" || true
	# A forked relay's child is still closing: wait until it is gone.
	for i in $(seq 1 200); do
		[ -s "/proc/$pid/task/$pid/children" ] || break
		sleep 0.01
	done
	kill -INT "$st" 2>/dev/null || true
	wait "$st" 2>/dev/null || true
	per=1000
	[ "$kind" = stream ] && per=256
	awk -v c="$c" -v k="$kind" -v per="$per" '
	    $NF == "total" { total = $4 }
	    NF >= 5 && $NF != "total" && $4 ~ /^[0-9]+$/ &&
	    $4 / per >= 0.05 && n++ < 6 {
		top = top sprintf("%s%s:%.1f", top == "" ? "" : ",", $NF,
		    $4 / per)
	    }
	    END {
		if (total > 0)
			printf "RESULT kind=syscalls config=%s workload=%s " \
			    "per_unit=%.1f top=%s round=1\n", c, k,
			    total / per, top
	    }' "$out" >>"$RAW"
}

. "$top/bench/many.sh"

# ---- the run -------------------------------------------------------------

main() {
	local r i c n order idle_configs stream_bytes

	install_missing gcc make autoconf automake pkg-config libevent-dev \
	    libssl-dev socat haproxy stunnel4 openssl python3 procps strace
	build
	dsrouter_install
	# Since a554f72 one runtime serves at most 64 tools at once
	# (--max-sessions-per-runtime), and every idle and stalled session
	# here goes to the one server: lift it too, where the builds know it.
	if "$DSROUTE" --help 2>&1 | grep -q max-sessions-per-runtime &&
	    { [ -z "${DSROUTE_B:-}" ] || "$DSROUTE_B" --help 2>&1 |
	    grep -q max-sessions-per-runtime; }; then
		DSR_LIMITS="$DSR_LIMITS --max-sessions-per-runtime $((IDLE_N + 100))"
	fi

	W=$(mktemp -d /tmp/dsb.XXXXXX)
	trap cleanup EXIT
	trap 'exit 1' INT TERM HUP
	ulimit -n 65536 2>/dev/null || ulimit -n "$(ulimit -Hn)"
	openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 \
	    -nodes -keyout "$W/key.pem" -out "$W/cert.pem" -days 7 \
	    -subj /CN=localhost \
	    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" 2>/dev/null
	write_configs

	# Is dsroute's TLS transport in this build?
	"$DSROUTE" uds:"$W/tlsprobe.sock",listen \
	    tls:127.0.0.1:$(port 29),listen,cert=$W/cert.pem,key=$W/key.pem,verify=none \
	    >"$W/tlsprobe.log" 2>&1 &
	n=$!
	for i in $(seq 1 30); do
		grep -q "ready" "$W/tlsprobe.log" && break
		kill -0 "$n" 2>/dev/null || break
		sleep 0.1
	done
	if grep -q "ready" "$W/tlsprobe.log"; then
		DSROUTE_TLS=available
	else
		DSROUTE_TLS="pending: dsroute says '$(grep -m1 . \
		    "$W/tlsprobe.log" | sed 's/^[a-z]*: [^ ]*: //' |
		    tr -d "\"'" | cut -c1-120)'"
	fi
	kill "$n" 2>/dev/null || true
	wait "$n" 2>/dev/null || true

	wait_quiet
	mkdir -p "$OUT"
	RAW=$OUT/raw-$(date -u +%Y%m%dT%H%M%SZ).txt
	{
		echo "# dsroute benchmark $(date -u +%FT%TZ)"
		echo "# host: $(uname -srm), $(nproc) CPUs," \
		    "$(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo)," \
		    "load $(cut -d' ' -f1-3 /proc/loadavg)"
		echo "# dsroute: $("$DSROUTE" --version) ($DSROUTE_FROM)," \
		    "tls $DSROUTE_TLS"
		echo "# socat: $(socat -V | awk '/socat version/ { print $3 }')," \
		    "haproxy: $(haproxy -v | awk 'NR == 1 { print $3 }')," \
		    "stunnel: $(stunnel4 -version 2>&1 |
		    awk '/^stunnel/ { print $2; exit }')," \
		    "openssl: $(openssl version | awk '{ print $2 }')"
		echo "# dotnet-dsrouter: $DSROUTER_NOTE"
		echo "# settings: ROUNDS=$ROUNDS IDLE_ROUNDS=$IDLE_ROUNDS" \
		    "PLAIN_BYTES=$PLAIN_BYTES TLS_BYTES=$TLS_BYTES" \
		    "RR_SECS=$RR_SECS RR4_SECS=$RR4_SECS IDLE_N=$IDLE_N" \
		    "STALL_N=$STALL_N STALL_BYTES=$STALL_BYTES" \
		    "DSR_LIMITS='$DSR_LIMITS'" \
		    "DSROUTE_ARGS='$DSROUTE_ARGS'" "WORKLOADS='$WORKLOADS'" \
		    "MANY_N=$MANY_N MANY_ROUNDS=$MANY_ROUNDS" \
		    "MANY_PS_REPS=$MANY_PS_REPS"
	} >"$RAW"
	log "raw results: $RAW"

	"$B/dsbench" server --unix "$W/rt.sock" --tcp 127.0.0.1:$(port 0) \
	    --tls 127.0.0.1:$(port 1) --cert "$W/cert.pem" \
	    --key "$W/key.pem" >"$W/server.log" 2>&1 &
	SERVER_PID=$!
	PIDS="$PIDS $SERVER_PID"
	wait_ready unix:"$W/rt.sock"

	ALL=$(echo "$CONFIGS" | awk 'NF { print $1 }' | grep -E "$ONLY" |
	    { [ -n "${DSROUTE_B:-}" ] && cat || grep -v '^dsroute-b:'; } ||
	    true)
	for c in $ALL; do
		up "$c"
	done
	for c in $ALL; do
		if [ -n "${SKIP[$c]:-}" ]; then
			case $c in
			dsroute:tls*) echo "SKIP config=$c why=\"$DSROUTE_TLS\"" ;;
			dsrouter:*) echo "SKIP config=$c why=\"dotnet-dsrouter $DSROUTER_NOTE\"" ;;
			*) echo "SKIP config=$c why=\"did not start: $(grep -m1 . \
			    "$W/relay-${c/:/-}.log" | tr -d '"' | cut -c1-150)\"" ;;
			esac
		fi
	done >>"$RAW"
	RUN=""
	for c in $ALL; do
		[ -z "${SKIP[$c]:-}" ] && RUN="$RUN $c"
	done

	# Correctness gate: every config forwards 64 MiB unchanged.
	for c in $RUN; do
		measure gate "$c" stream --bytes 67108864
	done

	# Stream and fresh-connection rounds, the order rotating each round.
	n=$(echo $RUN | wc -w)
	[ "$n" -gt 0 ] || ROUNDS=0
	for r in $(seq 1 "$ROUNDS"); do
		log "round $r of $ROUNDS"
		order=$(echo $RUN | tr ' ' '\n' |
		    awk -v k=$(( (r - 1) % n )) -v n=$n \
		    '{ a[NR - 1] = $0 } END { for (i = 0; i < n; i++)
		    print a[(i + k) % n] }')
		for c in $order; do
			stream_bytes=$PLAIN_BYTES
			[ "$(config_group "$c")" = tls ] &&
			    stream_bytes=$TLS_BYTES
			if want stream; then
				measure "$r" "$c" stream --bytes "$stream_bytes" \
				    --runtime-pid "${WSRT[$c]:-$SERVER_PID}"
			fi
			if want rr; then
				measure "$r" "$c" rr --conc 1 --duration "$RR_SECS"
				measure "$r" "$c" rr --conc 4 \
				    --duration "$RR4_SECS"
			fi
		done
	done

	# System calls per fresh connection and per MB: exact counts, immune
	# to the machine's load.
	if want syscalls; then
		log "system calls"
		for c in $RUN; do
			[ -n "${RPID[$c]:-}" ] || continue
			syscalls "$c" rr --conc 1 --max 1000 --duration 60
			syscalls "$c" stream --bytes 268435456
		done
	fi

	# Idle sessions and stalled readers, each on a freshly started relay.
	# Not the ws configs: a browser runtime has one connection at a time.
	idle_configs=$(echo $RUN | tr ' ' '\n' | grep -v -e '^direct-' \
	    -e ':ws-' || true)
	want idle || idle_configs=""
	[ -n "$idle_configs" ] || IDLE_ROUNDS=0
	for r in $(seq 1 "$IDLE_ROUNDS"); do
		log "idle round $r of $IDLE_ROUNDS"
		for c in $idle_configs; do
			stop_relay "$c"
			up "$c"
			measure "$r" "$c" idle --n "$IDLE_N" --hold 1
			stop_relay "$c"
			up "$c"
			measure "$r" "$c" stall --n "$STALL_N" \
			    --bytes "$STALL_BYTES" --hold 1.5
		done
	done

	# Many runtimes behind one router, mirrored (bench/many.sh).
	if want many; then
		echo "# many runtimes: start $(date -u +%TZ), load" \
		    "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW"
		many_runtimes
		echo "# many runtimes: end $(date -u +%TZ), load" \
		    "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW"
	fi

	echo "# load at the end: $(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW"
	cp "$RAW" "$OUT/latest-raw.txt"
	python3 bench/summarize.py "$RAW" >"$OUT/latest.md"
	log "summary: $OUT/latest.md"
	cat "$OUT/latest.md"
}

main "$@"
