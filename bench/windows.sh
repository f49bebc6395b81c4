#!/bin/bash
# SPDX-License-Identifier: ISC
#
# dsroute.exe under wine next to a direct pipe<->TCP copy loop under the
# same wine, in one run (bench/README.md, "Windows: dsroute.exe under
# wine"):
#
#	bench/windows.sh		5 rounds, 256 MiB streams (about 2 minutes)
#	QUICK=1 bench/windows.sh	1 round, 64 MiB (about 40 s)
#
# The runtime is tests/helpers/winfakert.c on a named pipe; the tool is
# the Linux faketool (a trace stream, CollectTracing2) or dsbench rr (a
# fresh connection per ProcessInfo) over loopback TCP; between them,
#
#   dsroute.exe:pipe-tcp	dsroute.exe pipe:NAME,connect tcp:127.0.0.1:0,listen
#   relay:pipe-tcp		pipeclient.exe relay 0 NAME (tests/windows/
#				pipeclient.c: a blocking copy loop, two
#				threads per connection): the reference
#
# and two ends without a relay, for scale:
#
#   direct-pipe		winfaketool on the pipe itself (wine at both ends)
#   direct-tcp		the Linux fakert and faketool on loopback TCP (no wine)
#
# Workloads (WORKLOADS, all by default):
#
#   stream	one CollectTracing2 of STREAM_MIB from winfakert, MiB/s; every
#		byte checked: the tool's SHA-256 of what it read must be the one
#		the runtime logged for what it sent
#   rr		fresh connections, one at a time, for RR_SECS: conn/s
#   raw		the same relays from a pipe that pipeclient.exe source fills
#		as fast as wine lets it (a fixed buffer, no protocol, no
#		hashing), read by faketool raw: the relays' own ceilings, where
#		winfakert's byte-by-byte generator and SHA-256 (about 5 CPU-s
#		per GiB) do not share the two cores; bytes counted, not checked
#
# Ratios are paired: dsroute.exe / relay within each round, then the
# median; the order of the configs rotates each round.  CPU is read from
# /proc: the relay's process, the runtime's, and the wineserver's (under
# wine 8 every pipe and socket call is a request to it).
#
# It builds nothing of the Windows side: DSROUTE_EXE (build/win/dsroute.exe)
# with the fakes beside it (tests/winfakert.exe, tests/winfaketool.exe;
# ./dev.sh windows), and pipeclient.exe and the wine prefix of
# tests/windows/setup.sh (its env.sh).  The Linux tools (faketool, fakert,
# dsbench) are built -O2 into build/bench-win/ when missing or older than
# their sources (build/dev's are sanitizer builds).
#
# The wine processes run in a private copy of setup.sh's prefix
# (WINE_PREFIX=private, the default; made once, serialized with flock),
# so that they have a wineserver of their own: the test suite's wine
# processes do not share it with the benchmark, nor the benchmark theirs.
# WINE_PREFIX=shared uses setup.sh's prefix as it is; WINE_PREFIX=PATH a
# copy at PATH.
#
# Knobs (environment): ROUNDS (5), STREAM_MIB (256), RR_SECS (2),
# RR_PIPE_N (2000: exchanges of the direct-pipe rate), WORKLOADS ("stream
# rr raw"), ONLY (a regular expression of config names), DSROUTE_ARGS
# (more options for dsroute.exe), DSROUTE_EXE, DSROUTE_EXE_B (a second
# dsroute.exe measured alongside as dsroute.exe-b:pipe-tcp, for a
# before/after in one run), WINFAKERT, WINFAKETOOL, PIPECLIENT, FAKETOOL,
# FAKERT, DSBENCH, WINE_PREFIX, OUT (results directory, bench/results),
# WAIT_QUIET (wait up to this many seconds for the load average to fall
# below QUIET_LOAD, 1.0), NICE (niceness of everything it starts, 0),
# KEEP (keep the work directory).

set -eu
cd "$(dirname "$0")/.."
top=$(pwd)

if [ -n "${QUICK:-}" ]; then
	: "${ROUNDS:=1}" "${STREAM_MIB:=64}" "${RR_SECS:=1}" "${RR_PIPE_N:=500}"
fi
: "${ROUNDS:=5}" "${STREAM_MIB:=256}" "${RR_SECS:=2}" "${RR_PIPE_N:=2000}"
: "${ONLY:=.}" "${OUT:=$top/bench/results}" "${DSROUTE_ARGS:=}"
: "${WINE_PREFIX:=private}" "${NICE:=0}" "${WORKLOADS:=stream rr raw}"
STREAM_BYTES=$((STREAM_MIB * 1048576))
B=$top/build/bench-win
# ProcessInfo: the first message of a raw stream (the source ignores it).
PROCESSINFO_HEX=444f544e45545f4950435f5631001400040000000000

log() {
	echo "windows.sh: $*" >&2
}

die() {
	log "error: $*"
	exit 1
}

# ---- what it runs -------------------------------------------------------

if [ -z "${DSROUTE_EXE:-}" ]; then
	DSROUTE_EXE=$top/build/win/dsroute.exe
	[ -f "$DSROUTE_EXE" ] || [ ! -f "$top/build/windows/dsroute.exe" ] ||
	    DSROUTE_EXE=$top/build/windows/dsroute.exe
fi
[ -f "$DSROUTE_EXE" ] || die "no $DSROUTE_EXE: ./dev.sh windows builds it"
DSROUTE_EXE=$(realpath "$DSROUTE_EXE")
[ -z "${DSROUTE_EXE_B:-}" ] || DSROUTE_EXE_B=$(realpath "$DSROUTE_EXE_B")
: "${WINFAKERT:=$(dirname "$DSROUTE_EXE")/tests/winfakert.exe}"
: "${WINFAKETOOL:=$(dirname "$DSROUTE_EXE")/tests/winfaketool.exe}"
for f in "$WINFAKERT" "$WINFAKETOOL"; do
	[ -f "$f" ] || die "no $f: ./dev.sh windows builds it"
done
command -v wine >/dev/null 2>&1 || die "no wine: tests/windows/setup.sh"
wcache=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/win64
[ -f "$wcache/env.sh" ] ||
    die "no $wcache/env.sh: run tests/windows/setup.sh first"
. "$wcache/env.sh"
: "${PIPECLIENT:=${DSWIN_PIPECLIENT:-}}"
[ -n "$PIPECLIENT" ] && [ -f "$PIPECLIENT" ] ||
    die "no pipeclient.exe: run tests/windows/setup.sh"
command -v python3 >/dev/null 2>&1 || die "no python3"

# The Linux tools, -O2 (the ones under build/dev are ASan builds).
# build_fake NAME: tests/helpers/NAME.c with its core and the shared
# protocol code (as Makefile.am builds it), when missing or out of date.
build_fake() {
	local h=tests/helpers
	if [ ! -x "$B/$1" ] || [ -n "$(find "$h/$1.c" "$h/$1core".[ch] \
	    "$h"/fakeproto.[ch] "$h/le.h" "$h/sha256.h" -newer "$B/$1" \
	    2>/dev/null)" ]; then
		gcc -O2 -g -I "$h" -DTESTS_SHA256_OPENSSL -o "$B/$1" \
		    "$h/$1.c" "$h/$1core.c" "$h/fakeproto.c" -lcrypto -lpthread
	fi
}

build_tools() {
	mkdir -p "$B"
	if [ -z "${FAKETOOL:-}" ]; then
		build_fake faketool
		FAKETOOL=$B/faketool
	fi
	if [ -z "${FAKERT:-}" ]; then
		build_fake fakert
		FAKERT=$B/fakert
	fi
	if [ -z "${DSBENCH:-}" ]; then
		DSBENCH=$B/dsbench
		[ -x "$DSBENCH" ] && [ "$DSBENCH" -nt bench/dsbench.c ] ||
		    gcc -O2 -g -o "$DSBENCH" bench/dsbench.c -lssl -lcrypto \
		    -lpthread
	fi
}

# The wine prefix: a private copy of setup.sh's, made once (about 700 MB;
# a copy takes a second or two), serialized with flock.
setup_prefix() {
	local priv
	case $WINE_PREFIX in
	shared)
		return 0 ;;
	private)
		priv=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/win64-bench/wine-pfx ;;
	*)
		priv=$WINE_PREFIX ;;
	esac
	mkdir -p "$(dirname "$priv")"
	exec 8>"$(dirname "$priv")/lock"
	flock -w 1800 8 || die "another bench/windows.sh holds $priv"
	if [ ! -f "$priv/.dsroute-ready" ]; then
		log "copying the wine prefix $WINEPREFIX to $priv"
		rm -rf "$priv" "$priv.tmp"
		cp -a "$WINEPREFIX" "$priv.tmp"
		mv "$priv.tmp" "$priv"
	fi
	WINEPREFIX=$priv
	export WINEPREFIX
	PRIVATE_PREFIX=1
}

# ---- bookkeeping ----------------------------------------------------------

W=""
PIDS=""
PRIVATE_PREFIX=""

cleanup() {
	local p
	for p in $PIDS; do
		kill "$p" 2>/dev/null || true
	done
	for p in $PIDS; do
		wait "$p" 2>/dev/null || true
	done
	# The private prefix's wineserver and the services it started, and
	# nothing else: that prefix is this run's (flock).
	if [ -n "$PRIVATE_PREFIX" ]; then
		wineserver -k 2>/dev/null || true
	fi
	if [ -n "$W" ] && [ -z "${KEEP:-}" ]; then
		rm -rf "$W"
	fi
	return 0
}

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

# CPU seconds (user + system) of a process, its threads included; 0
# when there is none.
cpu_of() {
	if [ -n "$1" ] && [ -r "/proc/$1/stat" ]; then
		awk -v hz="$CLK_TCK" '{ printf "%.3f\n", ($14 + $15) / hz }' \
		    "/proc/$1/stat" 2>/dev/null || echo 0
	else
		echo 0
	fi
}

# CPU seconds the whole host has been busy (all CPUs, anybody's).
host_cpu() {
	awk -v hz="$CLK_TCK" '/^cpu / {
	    printf "%.3f\n", ($2 + $3 + $4 + $7 + $8 + $9) / hz }' /proc/stat
}

now() {
	echo "$EPOCHREALTIME"
}

# calc EXPR VAR=VALUE...: an awk expression, printed with 4 decimals.
calc() {
	local e=$1 args=() v
	shift
	for v in "$@"; do
		args+=(-v "$v")
	done
	awk "${args[@]}" "BEGIN { printf \"%.4f\\n\", ($e) }"
}

# The wineserver of WINEPREFIX: its working directory is named after the
# prefix's device and inode.
find_wineserver() {
	local tag p
	tag=$(printf 'server-%x-%x' $(stat -c '%d %i' "$WINEPREFIX"))
	for p in $(pgrep -x wineserver64 || pgrep -x wineserver || true); do
		case $(readlink "/proc/$p/cwd" 2>/dev/null) in
		*/"$tag") echo "$p"; return 0 ;;
		esac
	done
	return 1
}

has_line() {
	grep -Eq -- "$2" "$1" 2>/dev/null
}

# wait_for SECS CMD...: every 50 ms until CMD succeeds.
wait_for() {
	local deadline
	deadline=$(($(date +%s) + $1))
	shift
	until "$@"; do
		[ "$(date +%s)" -lt "$deadline" ] || return 1
		sleep 0.05
	done
}

# bg NAME CMD...: CMD in the background, output in $W/NAME.out and .err,
# its pid in PID_NAME.
bg() {
	local name=$1
	shift
	nice -n "$NICE" "$@" >"$W/$name.out" 2>"$W/$name.err" </dev/null &
	eval "PID_$name=$!"
	PIDS="$PIDS $!"
}

# stop_bg NAME: end one background process (and forget it).
stop_bg() {
	local pid
	eval "pid=\${PID_$1:-}"
	[ -n "$pid" ] || return 0
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	PIDS=$(echo "$PIDS" | tr ' ' '\n' | grep -vx "$pid" | tr '\n' ' ')
	eval "PID_$1="
}

# start_dsroute NAME EXE PIPE: dsroute.exe from PIPE to a free TCP port of
# loopback, until it is ready; its port in PORT_NAME.
start_dsroute() {
	local port
	bg "$1" wine "$2" $DSROUTE_ARGS "pipe:$3,connect" tcp:127.0.0.1:0,listen
	wait_for 60 has_line "$W/$1.err" '^info: ready' ||
	    die "$2 did not start: $(cat "$W/$1.err")"
	port=$(sed -n 's/^info: remote tcp:127\.0\.0\.1:\([0-9]*\): listening.*/\1/p' \
	    "$W/$1.err" | head -n 1)
	[ -n "$port" ] || die "no port in $W/$1.err"
	eval "PORT_$1=$port"
}

# start_relay NAME PIPE: pipeclient.exe relay from a free TCP port to PIPE.
start_relay() {
	local port
	bg "$1" wine "$PIPECLIENT" relay 0 "$2"
	wait_for 60 has_line "$W/$1.out" '^relay port=' ||
	    die "pipeclient.exe relay did not start: $(cat "$W/$1.err")"
	port=$(sed -n 's/^relay port=\([0-9]*\).*/\1/p' "$W/$1.out")
	eval "PORT_$1=$port"
}

# ---- configurations -----------------------------------------------------

ALL_CONFIGS="direct-pipe direct-tcp dsroute.exe:pipe-tcp relay:pipe-tcp"
[ -z "${DSROUTE_EXE_B:-}" ] || ALL_CONFIGS="$ALL_CONFIGS dsroute.exe-b:pipe-tcp"

# The name of a config's relay process (none for the direct ones); with
# RAW set, the one on the raw source's pipe.
relay_name() {
	case $1 in
	dsroute.exe:*) echo "dsr${RAW:-}" ;;
	dsroute.exe-b:*) echo "dsrb${RAW:-}" ;;
	relay:*) echo "relay${RAW:-}" ;;
	esac
}

relay_pid() {
	local n
	n=$(relay_name "$1")
	[ -n "$n" ] && eval "echo \${PID_$n:-}"
	return 0
}

runtime_pid() {
	if [ -n "${RAW:-}" ]; then
		echo "${PID_src:-}"
	elif [ "$1" = direct-tcp ]; then
		echo "$PID_lrt"
	else
		echo "$PID_wrt"
	fi
}

tcp_port() {
	local n
	[ "$1" = direct-tcp ] && { echo "$PORT_lrt"; return 0; }
	n=$(relay_name "$1")
	eval "echo \${PORT_$n:-}"
}

wtool() {
	nice -n "$NICE" wine "$WINFAKETOOL" --timeout 300 "$PIPE" "$@"
}

# snap CONFIG: the CPU counters before a measurement; delta CONFIG: what
# was used since, in D_relay, D_rt, D_ws, D_host.
snap() {
	S_relay=$(cpu_of "$(relay_pid "$1")")
	S_rt=$(cpu_of "$(runtime_pid "$1")")
	S_ws=$(cpu_of "$WS_PID")
	S_host=$(host_cpu)
}

delta() {
	D_relay=$(calc "b - a" a="$S_relay" b="$(cpu_of "$(relay_pid "$1")")")
	D_rt=$(calc "b - a" a="$S_rt" b="$(cpu_of "$(runtime_pid "$1")")")
	D_ws=$(calc "b - a" a="$S_ws" b="$(cpu_of "$WS_PID")")
	D_host=$(calc "b - a" a="$S_host" b="$(host_cpu)")
	[ "$1" != direct-tcp ] || D_ws=0
	return 0
}

# stream_result KIND CONFIG ROUND BYTES SECS VERIFY: the RESULT line.
stream_result() {
	echo "RESULT kind=$1 config=$2 bytes=$4 secs=$5" \
	    "mib_per_s=$(calc "s > 0 ? b / 1048576 / s : 0" b="$4" s="$5")" \
	    "gbps=$(calc "s > 0 ? b / 1e9 / s : 0" b="$4" s="$5")" \
	    "relay_cpu_s=$D_relay runtime_cpu_s=$D_rt wineserver_cpu_s=$D_ws" \
	    "host_cpu_s=$D_host verify=$6 round=$3" >>"$RAW_FILE"
}

# measure_stream ROUND CONFIG: one CollectTracing2 of STREAM_BYTES, timed
# from connect to the end of the stream, checked against the SHA-256 the
# runtime logged.
measure_stream() {
	local r=$1 c=$2 t0 t1 t2 secs out rc=0 id bytes sha verify=FAIL ev
	ev=$W/wrt.ev
	[ "$c" != direct-tcp ] || ev=$W/lrt.ev
	snap "$c"
	t0=$(now)
	if [ "$c" = direct-pipe ]; then
		# Take off winfaketool's start under wine (and one exchange):
		# the time of a ProcessInfo just before.
		wtool processinfo >"$W/pre.out" 2>"$W/pre.err" || rc=$?
		t1=$(now)
		wtool collect --expect-bytes "$STREAM_BYTES" >"$W/tool.out" \
		    2>"$W/tool.err" || rc=$?
	else
		t1=$t0
		nice -n "$NICE" "$FAKETOOL" --timeout 300 \
		    "tcp:127.0.0.1:$(tcp_port "$c")" collect --expect-bytes \
		    "$STREAM_BYTES" >"$W/tool.out" 2>"$W/tool.err" || rc=$?
	fi
	t2=$(now)
	secs=$(calc "(t2 - t1) - (t1 - t0)" t0="$t0" t1="$t1" t2="$t2")
	out=$(tr -d '\r' <"$W/tool.out" | grep -m1 '^session=' || true)
	id=$(echo "$out" | sed -n 's/.*session=\([0-9]*\).*/\1/p')
	bytes=$(echo "$out" | sed -n 's/.*bytes=\([0-9]*\).*/\1/p')
	sha=$(echo "$out" | sed -n 's/.*sha256=\([0-9a-f]*\).*/\1/p')
	# The runtime logs the end of its stream a moment after the tool saw it.
	if [ -n "$id" ]; then
		wait_for 10 has_line "$ev" "^stream-(end|broken) $id " || true
	fi
	delta "$c"
	if [ "$rc" -eq 0 ] && [ "${bytes:-0}" = "$STREAM_BYTES" ] &&
	    grep -qx "stream-end $id $STREAM_BYTES $sha" "$ev"; then
		verify=ok
	else
		log "$c stream: status $rc, '$out': $(head -c 300 "$W/tool.err")"
	fi
	stream_result stream "$c" "$r" "${bytes:-0}" "$secs" "$verify"
}

# measure_raw ROUND CONFIG: STREAM_MIB from pipeclient.exe source (one
# client, then it exits), through the config's relay on the raw pipe.
measure_raw() {
	local r=$1 c=$2 t0 t1 secs rc=0 bytes i
	[ "$c" != direct-tcp ] || return 0
	RAW=raw
	bg src wine "$PIPECLIENT" source "$RAWPIPE" "$STREAM_MIB"
	if ! wait_for 60 has_line "$W/src.out" '^source pipe='; then
		log "raw source did not start: $(cat "$W/src.err")"
		stop_bg src
		RAW=""
		D_relay=0 D_rt=na D_ws=0 D_host=0
		stream_result raw "$c" "$r" 0 0 FAIL
		return 0
	fi
	snap "$c"
	if [ "$c" = direct-pipe ]; then
		# pipeclient sink times itself, from its connect to the end.
		nice -n "$NICE" wine "$PIPECLIENT" sink "$RAWPIPE" \
		    >"$W/tool.out" 2>"$W/tool.err" || rc=$?
		secs=$(sed -n 's/.*seconds=\([0-9.]*\).*/\1/p' "$W/tool.out")
		bytes=$(sed -n 's/^sink bytes=\([0-9]*\).*/\1/p' "$W/tool.out")
	else
		t0=$(now)
		nice -n "$NICE" "$FAKETOOL" --timeout 300 \
		    "tcp:127.0.0.1:$(tcp_port "$c")" raw "$PROCESSINFO_HEX" \
		    >"$W/tool.out" 2>"$W/tool.err" || rc=$?
		t1=$(now)
		secs=$(calc "t1 - t0" t0="$t0" t1="$t1")
		bytes=$(sed -n 's/.*reply is \([0-9]*\) bytes.*/\1/p' \
		    "$W/tool.err")
	fi
	# The source ends once its client has read everything.
	for i in $(seq 1 200); do
		kill -0 "$PID_src" 2>/dev/null || break
		sleep 0.05
	done
	delta "$c"
	D_rt=na		# the source has exited: its CPU is not there to read
	stop_bg src
	RAW=""
	[ "$rc" -eq 0 ] && [ "${bytes:-0}" = "$STREAM_BYTES" ] ||
	    log "$c raw: status $rc, ${bytes:-no} bytes: $(head -c 300 "$W/tool.err")"
	stream_result raw "$c" "$r" "${bytes:-0}" "${secs:-0}" \
	    "$([ "${bytes:-0}" = "$STREAM_BYTES" ] && echo counted || echo FAIL)"
}

# measure_rr ROUND CONFIG: fresh connections, one at a time: dsbench rr
# over TCP, or (direct-pipe) winfaketool's repeat, less its start (a
# repeat of 1 just before).
measure_rr() {
	local r=$1 c=$2 line t0 t1 t2 secs rc=0 n
	snap "$c"
	if [ "$c" = direct-pipe ]; then
		t0=$(now)
		wtool repeat 1 processinfo >"$W/pre.out" 2>"$W/pre.err" ||
		    rc=$?
		t1=$(now)
		wtool repeat "$RR_PIPE_N" processinfo >"$W/tool.out" \
		    2>"$W/tool.err" || rc=$?
		t2=$(now)
		delta "$c"
		secs=$(calc "(t2 - t1) - (t1 - t0)" t0="$t0" t1="$t1" t2="$t2")
		n=$((RR_PIPE_N - 1))
		[ "$rc" -eq 0 ] || n=0
		line="RESULT kind=rr config=$c conc=1 n=$n errors=$((rc != 0))"
		line="$line secs=$secs conn_per_s=$(calc "s > 0 ? n / s : 0" \
		    n="$n" s="$secs")"
	else
		line=$(nice -n "$NICE" "$DSBENCH" rr \
		    "tcp:127.0.0.1:$(tcp_port "$c")" --any-reply --conc 1 \
		    --duration "$RR_SECS" --max 1000000 --timeout 60 \
		    --name "$c" 2>"$W/tool.err") || rc=$?
		delta "$c"
		n=$(echo "$line" | sed -n 's/.* n=\([0-9]*\).*/\1/p')
		# dsbench's own relay CPU (--pid) is left out: it is read
		# here, for every config alike.
		line=$(echo "$line" | sed 's/ relay_cpu_us_per_conn=[^ ]*//')
	fi
	if [ -z "$line" ]; then
		log "$c rr: status $rc: $(head -c 300 "$W/tool.err")"
		return 0
	fi
	[ "$rc" -eq 0 ] || log "$c rr: status $rc: $(head -c 300 "$W/tool.err")"
	echo "$line" \
	    "relay_cpu_us_per_conn=$(calc "n > 0 ? d / n * 1e6 : 0" \
	    d="$D_relay" n="${n:-0}")" \
	    "runtime_cpu_us_per_conn=$(calc "n > 0 ? d / n * 1e6 : 0" \
	    d="$D_rt" n="${n:-0}")" \
	    "wineserver_us_per_conn=$(calc "n > 0 ? d / n * 1e6 : 0" \
	    d="$D_ws" n="${n:-0}")" \
	    "host_cpu_s=$D_host round=$r" >>"$RAW_FILE"
}

want() {
	case " $WORKLOADS " in
	*" $1 "*) return 0 ;;
	esac
	return 1
}

# Busy CPUs on the host over 3 s while nothing of ours works: what the
# rest of the machine is doing.
others_busy() {
	local a b
	a=$(host_cpu)
	sleep 3
	b=$(host_cpu)
	calc "(b - a) / 3" a="$a" b="$b"
}

# ---- the summary ----------------------------------------------------------

summarize() {
	python3 - "$1" <<-'EOF'
	import re, statistics, sys
	from collections import defaultdict

	def good(kv):
	    if kv["kind"] == "stream":
	        return kv.get("verify") == "ok"
	    if kv["kind"] == "raw":
	        return kv.get("verify") == "counted"
	    return kv.get("errors") == "0" and int(kv.get("n", 0)) > 0

	res = defaultdict(dict)		# (kind, config) -> {round: record}
	bad = []			# failed measurements, left out
	for line in open(sys.argv[1]):
	    if line.startswith("RESULT "):
	        kv = dict(re.findall(r'(\w+)=(\S+)', line[7:]))
	        if good(kv):
	            res[(kv["kind"], kv["config"])][kv["round"]] = kv
	        else:
	            bad.append(kv)

	def vals(kind, c, f):
	    return [float(r[f]) for r in res[(kind, c)].values() if f in r]

	def med(xs):
	    return statistics.median(xs) if xs else None

	def paired(kind, c, ref, f):
	    a, b = res[(kind, c)], res[(kind, ref)]
	    xs = [float(a[k][f]) / float(b[k][f]) for k in a
	          if k in b and f in a[k] and f in b[k] and float(b[k][f]) > 0]
	    return med(xs)

	def per_gib(kind, c, f):
	    return med([float(r[f]) / (float(r["bytes"]) / 2**30)
	                for r in res[(kind, c)].values()
	                if float(r.get("bytes", 0)) > 0])

	def fmt(x, d=1):
	    return "–" if x is None else f"{x:,.{d}f}"

	def rng(xs, d=1):
	    if not xs:
	        return "–"
	    return f"{fmt(med(xs), d)} [{fmt(min(xs), d)}–{fmt(max(xs), d)}]"

	REF = "relay:pipe-tcp"
	configs = ["direct-tcp", "direct-pipe", "dsroute.exe:pipe-tcp", REF,
	           "dsroute.exe-b:pipe-tcp"]
	relayed = lambda c: c.endswith(":pipe-tcp")
	ratio = lambda kind, c, ref, f: ("–" if c == ref
	                                  else fmt(paired(kind, c, ref, f), 2))
	out = []
	w = out.append
	count = lambda kind: sum(len(rs) for (k, _), rs in res.items()
	                         if k == kind)
	w("Medians over the rounds, [min–max]; ratios paired within each "
	  "round, then the median.  CPU: the relay's own process, and the "
	  "wineserver's (every pipe and socket call under wine is a request "
	  "to it), per GiB streamed or per connection.")
	w("")
	w(f"Checks: streams verified byte for byte: {count('stream')}; raw "
	  f"streams of the full length: {count('raw')}; fresh-connection runs "
	  f"without an error: {count('rr')}.  Failed, and left out of the "
	  f"tables: {len(bad)}" + (": " + ", ".join(
	      f"{b['kind']} {b['config']} round {b['round']}" +
	      (f" ({b['errors']} errors in {b['n']} exchanges, {b['secs']} s)"
	       if b["kind"] == "rr" else "") for b in bad) if bad else "") + ".")
	w("")
	if count("stream") or count("rr"):
	    w("| config | stream MiB/s | × relay | relay CPU s/GiB "
	      "| wineserver CPU s/GiB | conn/s c=1 | × relay | p50 µs | p99 µs "
	      "| relay CPU µs/conn | wineserver µs/conn |")
	    w("|---|---|---|---|---|---|---|---|---|---|---|")
	    for c in configs:
	        if not res[("stream", c)] and not res[("rr", c)]:
	            continue
	        w("| " + " | ".join([
	            c, rng(vals("stream", c, "mib_per_s")),
	            ratio("stream", c, REF, "mib_per_s"),
	            fmt(per_gib("stream", c, "relay_cpu_s"), 2)
	            if relayed(c) else "–",
	            fmt(per_gib("stream", c, "wineserver_cpu_s"), 2)
	            if c != "direct-tcp" else "–",
	            rng(vals("rr", c, "conn_per_s"), 0),
	            ratio("rr", c, REF, "conn_per_s"),
	            fmt(med(vals("rr", c, "p50_us")), 0),
	            fmt(med(vals("rr", c, "p99_us")), 0),
	            fmt(med(vals("rr", c, "relay_cpu_us_per_conn")), 0)
	            if relayed(c) else "–",
	            fmt(med(vals("rr", c, "wineserver_us_per_conn")), 0)
	            if c != "direct-tcp" else "–"]) + " |")
	    w("")
	if count("raw"):
	    w("Raw source (pipeclient.exe source: no protocol, no hashing; "
	      "direct-pipe is pipeclient.exe sink on the pipe):")
	    w("")
	    w("| config | raw MiB/s | × relay | relay CPU s/GiB "
	      "| wineserver CPU s/GiB |")
	    w("|---|---|---|---|---|")
	    for c in configs:
	        if not res[("raw", c)]:
	            continue
	        w("| " + " | ".join([
	            c, rng(vals("raw", c, "mib_per_s")),
	            ratio("raw", c, REF, "mib_per_s"),
	            fmt(per_gib("raw", c, "relay_cpu_s"), 2)
	            if relayed(c) else "–",
	            fmt(per_gib("raw", c, "wineserver_cpu_s"), 2)]) + " |")
	    w("")
	d = "dsroute.exe:pipe-tcp"
	w(f"dsroute.exe / relay: stream "
	  f"{fmt(paired('stream', d, REF, 'mib_per_s'), 2)}, raw stream "
	  f"{fmt(paired('raw', d, REF, 'mib_per_s'), 2)}, fresh connections "
	  f"{fmt(paired('rr', d, REF, 'conn_per_s'), 2)}")
	b = "dsroute.exe-b:pipe-tcp"
	if res[("stream", b)] or res[("rr", b)] or res[("raw", b)]:
	    w(f"dsroute.exe / dsroute.exe-b: stream "
	      f"{fmt(paired('stream', d, b, 'mib_per_s'), 2)}, raw stream "
	      f"{fmt(paired('raw', d, b, 'mib_per_s'), 2)}, fresh connections "
	      f"{fmt(paired('rr', d, b, 'conn_per_s'), 2)}")
	print("\n".join(out))
	EOF
}

# ---- the run --------------------------------------------------------------

main() {
	local r c v f n order sel stamp others
	CLK_TCK=$(getconf CLK_TCK)
	build_tools
	setup_prefix
	mkdir -p "$OUT"
	OUT=$(cd "$OUT" && pwd)
	for v in FAKETOOL FAKERT DSBENCH WINFAKERT WINFAKETOOL PIPECLIENT; do
		eval "$v=\$(realpath \"\$$v\")"
	done
	DSROUTE_EXE_ORIG=$DSROUTE_EXE
	PIPECLIENT_ORIG=$PIPECLIENT
	DSROUTE_EXE_B_ORIG=${DSROUTE_EXE_B:-}
	W=$(mktemp -d /tmp/dsbwin.XXXXXX)
	trap cleanup EXIT
	trap 'exit 1' INT TERM HUP
	# Copies of the Windows programs: others may rebuild build/win
	# during the run (wine fails to open an .exe being relinked).
	BIN_NOTE=""
	mkdir -p "$W/bin"
	for v in DSROUTE_EXE DSROUTE_EXE_B WINFAKERT WINFAKETOOL PIPECLIENT; do
		eval "f=\${$v:-}"
		[ -n "$f" ] || continue
		BIN_NOTE="$BIN_NOTE $(basename "$f")@$(stat -c %y "$f" |
		    cut -d. -f1 | tr ' ' T)"
		cp "$f" "$W/bin/$v.exe"
		eval "$v=\$W/bin/$v.exe"
	done
	# Nothing lands in the tree: work in W, with absolute paths.
	cd "$W"
	PIPE=dsbwin-$$-rt
	RAWPIPE=dsbwin-$$-raw

	# The wineserver first, persistent for the run, so that its CPU is
	# one process's to read (a shared prefix's lingers only 10 s after).
	if [ -n "$PRIVATE_PREFIX" ]; then
		wineserver -p 2>/dev/null || true
	else
		wineserver -p10 2>/dev/null || true
	fi
	wine cmd /c exit >/dev/null 2>&1 || true
	WS_PID=$(find_wineserver) || die "no wineserver for $WINEPREFIX"

	sel=$(echo $ALL_CONFIGS | tr ' ' '\n' | grep -E "$ONLY" || true)
	[ -n "$sel" ] || die "ONLY='$ONLY' selects none of: $ALL_CONFIGS"

	# The runtimes: winfakert on a pipe, fakert on TCP for direct-tcp.
	: >"$W/wrt.ev"
	bg wrt wine "$WINFAKERT" --listen "$PIPE" \
	    --stream-bytes "$STREAM_BYTES" --events "$W/wrt.ev"
	: >"$W/lrt.ev"
	bg lrt "$FAKERT" --listen tcp:127.0.0.1:0 --stream-bytes "$STREAM_BYTES" \
	    --events "$W/lrt.ev"
	wait_for 60 has_line "$W/wrt.ev" '^listen ' ||
	    die "winfakert did not start: $(cat "$W/wrt.err")"
	wait_for 20 has_line "$W/lrt.ev" '^listen tcp:' ||
	    die "fakert did not start: $(cat "$W/lrt.err")"
	PORT_lrt=$(sed -n 's/^listen tcp:.*:\([0-9]*\)$/\1/p' "$W/lrt.ev")

	# The relays, each on a free port of loopback: one set for the
	# runtime's pipe, one for the raw source's.
	start_dsroute dsr "$DSROUTE_EXE" "$PIPE"
	start_relay relay "$PIPE"
	[ -z "${DSROUTE_EXE_B:-}" ] || start_dsroute dsrb "$DSROUTE_EXE_B" "$PIPE"
	if want raw; then
		start_dsroute dsrraw "$DSROUTE_EXE" "$RAWPIPE"
		start_relay relayraw "$RAWPIPE"
		[ -z "${DSROUTE_EXE_B:-}" ] ||
		    start_dsroute dsrbraw "$DSROUTE_EXE_B" "$RAWPIPE"
	fi

	wait_quiet
	others=$(others_busy)
	stamp=$(date -u +%Y%m%dT%H%M%SZ)
	RAW_FILE=$W/raw.txt
	{
		echo "# dsroute benchmark, Windows under wine $(date -u +%FT%TZ)"
		echo "# host: $(uname -srm), $(nproc) CPUs," \
		    "$(awk '/MemTotal/ { print $2 " kB" }' /proc/meminfo)," \
		    "load $(cut -d' ' -f1-3 /proc/loadavg), others busy" \
		    "$others CPUs (3 s before the rounds, the relays idle)"
		echo "# dsroute.exe: $(wine "$DSROUTE_EXE" --version 2>&1 |
		    tr -d '\r' | head -n 1) ($DSROUTE_EXE_ORIG, the tree at" \
		    "$(git -C "$top" describe --always --dirty 2>/dev/null ||
		    echo unknown))"
		[ -z "${DSROUTE_EXE_B:-}" ] ||
		    echo "# dsroute.exe-b: $(wine "$DSROUTE_EXE_B" --version \
		    2>&1 | tr -d '\r' | head -n 1) ($DSROUTE_EXE_B_ORIG)"
		echo "# programs, copied at the start (modified):$BIN_NOTE"
		echo "# wine: $(wine --version 2>/dev/null | head -n 1)," \
		    "prefix $WINEPREFIX ($WINE_PREFIX), wineserver pid $WS_PID"
		echo "# relay: $PIPECLIENT_ORIG relay (tests/windows/pipeclient.c)"
		echo "# settings: ROUNDS=$ROUNDS STREAM_MIB=$STREAM_MIB" \
		    "RR_SECS=$RR_SECS RR_PIPE_N=$RR_PIPE_N NICE=$NICE" \
		    "WORKLOADS='$WORKLOADS' DSROUTE_ARGS='$DSROUTE_ARGS'" \
		    "ONLY='$ONLY'"
	} >"$RAW_FILE"

	n=$(echo $sel | wc -w)
	for r in $(seq 1 "$ROUNDS"); do
		log "round $r of $ROUNDS (load $(cut -d' ' -f1 /proc/loadavg))"
		echo "# round $r: $(date -u +%TZ), load" \
		    "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$RAW_FILE"
		order=$(echo $sel | tr ' ' '\n' |
		    awk -v k=$(( (r - 1) % n )) -v n="$n" \
		    '{ a[NR - 1] = $0 } END { for (i = 0; i < n; i++)
		    print a[(i + k) % n] }')
		for c in $order; do
			if want stream; then
				measure_stream "$r" "$c"
			fi
			if want rr; then
				measure_rr "$r" "$c"
			fi
			if want raw; then
				measure_raw "$r" "$c"
			fi
		done
	done
	echo "# end: $(date -u +%TZ), load $(cut -d' ' -f1-3 /proc/loadavg)," \
	    "others busy $(others_busy) CPUs (3 s after the rounds)" \
	    >>"$RAW_FILE"

	summarize "$RAW_FILE" >"$W/summary.md"
	sed 's/^/# /' "$W/summary.md" >>"$RAW_FILE"
	cp "$RAW_FILE" "$OUT/windows-$stamp.txt"
	cat "$W/summary.md"
	log "results: $OUT/windows-$stamp.txt"
}

main "$@"
