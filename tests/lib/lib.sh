#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced by every scenario.  Each scenario prints TAP, works in its own
# short directory under /tmp (socket paths must fit in 108 bytes), stops
# every process it started by its pid, and never sleeps to synchronise:
# wait_for polls a condition with a deadline.

set -u

# Run alone (sh tests/acl.sh, from anywhere), a scenario takes the build
# that ./dev.sh test made, else one in the source tree; make check says
# which with DSROUTE, FAKERT, FAKETOOL and top_builddir.
if [ -z "${DSROUTE:-}" ]; then
	for _b in "$top_srcdir/build/test" "$top_srcdir"; do
		[ -x "$_b/dsroute" ] && [ -x "$_b/tests/fakert" ] || continue
		top_builddir=$_b
		DSROUTE=$_b/dsroute
		FAKERT=$_b/tests/fakert
		FAKETOOL=$_b/tests/faketool
		export top_srcdir top_builddir DSROUTE FAKERT FAKETOOL
		break
	done
fi
: "${DSROUTE:?no dsroute built: run ./dev.sh test once, or make check}"
: "${FAKERT:?no tests/fakert built: run ./dev.sh test once, or make check}"
: "${FAKETOOL:?no tests/faketool built: run ./dev.sh test once}"

# The valgrind pass of the suite runs every router under memcheck.
if [ -n "${DSROUTE_VALGRIND:-}" ]; then
	DSROUTE_BIN=$DSROUTE
	DSROUTE=$top_srcdir/tests/valgrind-dsroute
	export DSROUTE_BIN
fi

T=$(mktemp -d /tmp/dsr.XXXXXX) || exit 99
_pids=""
_n=0
_failed=0

# Stop what is still running; on failure, show the logs as TAP comments.
_cleanup() {
	for p in $_pids; do
		kill "$p" 2>/dev/null
	done
	for p in $_pids; do
		wait "$p" 2>/dev/null
	done
	if [ "$_failed" -ne 0 ] || [ -n "${KEEP_LOGS:-}" ]; then
		for f in "$T"/*.err "$T"/*.out "$T"/*.ev; do
			[ -s "$f" ] || continue
			echo "# --- $(basename "$f")"
			tail -n 40 "$f" | sed 's/^/#   /'
		done
	fi
	rm -rf "$T"
}
trap _cleanup EXIT
trap 'exit 1' INT TERM HUP

# TAP: one line per assertion.
pass() {
	_n=$((_n + 1))
	echo "ok $_n - $1"
}

fail() {
	_n=$((_n + 1))
	_failed=$((_failed + 1))
	echo "not ok $_n - $1"
	[ $# -gt 1 ] && echo "# $2"
	return 0
}

skip() {
	_n=$((_n + 1))
	echo "ok $_n - $1 # SKIP $2"
}

skip_all() {
	echo "1..0 # SKIP $1"
	exit 0
}

# check DESCRIPTION COMMAND...: pass if the command succeeds.
check() {
	_desc=$1
	shift
	if "$@"; then
		pass "$_desc"
	else
		fail "$_desc" "command failed: $*"
	fi
}

# is DESCRIPTION GOT WANT
is() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "got '$2', want '$3'"
	fi
}

# like DESCRIPTION STRING EREGEX
like() {
	if printf '%s\n' "$2" | grep -Eq -- "$3"; then
		pass "$1"
	else
		fail "$1" "'$2' does not match /$3/"
	fi
}

done_testing() {
	echo "1..$_n"
	[ "$_failed" -eq 0 ]
}

# wait_for SECONDS COMMAND...: poll until the command succeeds.
wait_for() {
	_deadline=$(( $(date +%s%N) / 1000000 + $1 * 1000 ))
	shift
	while ! "$@" 2>/dev/null; do
		if [ $(( $(date +%s%N) / 1000000 )) -gt "$_deadline" ]; then
			return 1
		fi
		sleep 0.02
	done
	return 0
}

# has_line FILE EREGEX
has_line() {
	[ -f "$1" ] && grep -Eq -- "$2" "$1"
}

# count_lines FILE EREGEX
count_lines() {
	if [ -f "$1" ]; then
		grep -Ec -- "$2" "$1"
	else
		echo 0
	fi
}

# bg NAME COMMAND...: run in the background, output in $T/NAME.out and
# $T/NAME.err; the pid is in $T/NAME.pid.
bg() {
	_name=$1
	shift
	"$@" >"$T/$_name.out" 2>"$T/$_name.err" &
	echo $! >"$T/$_name.pid"
	_pids="$_pids $!"
}

pid_of() {
	cat "$T/$1.pid"
}

alive() {
	kill -0 "$(pid_of "$1")" 2>/dev/null
}

# stop NAME [SIGNAL]: signal a background process and wait for it; the
# exit status is its status.
stop() {
	_p=$(pid_of "$1")
	kill -"${2:-TERM}" "$_p" 2>/dev/null
	wait "$_p"
}

# wait_exit NAME SECONDS: wait for a background process to exit by itself.
wait_exit() {
	wait_for "$2" eval "! kill -0 $(pid_of "$1")"
}

# refused DESCRIPTION EREGEX ARGS...: dsroute with ARGS, its standard
# input empty and TMPDIR the test's (and the variables in DSR_ENV), exits
# 1 with one line on stderr, which matches EREGEX.
refused() {
	_desc=$1
	_want=$2
	shift 2
	# shellcheck disable=SC2086
	env TMPDIR="$T" ${DSR_ENV:-} "$DSROUTE" "$@" </dev/null >"$T/out" \
	    2>"$T/err"
	_rc=$?
	if [ $_rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	    grep -Eq -- "$_want" "$T/err"; then
		pass "$_desc"
	else
		fail "$_desc" "status $_rc: $(cat "$T/err")"
	fi
}

# start_dsroute NAME ARGS...: start a router and wait until it is ready.
start_dsroute() {
	_name=$1
	shift
	bg "$_name" "$DSROUTE" "$@"
	if ! wait_for 10 has_line "$T/$_name.err" '^info: ready$'; then
		fail "$_name started" "$(cat "$T/$_name.err")"
		return 1
	fi
	return 0
}

# port_of NAME local|remote: the TCP or TLS port a router reported
# listening on.
port_of() {
	sed -n "s/^info: $2 t[cl][ps]:[^ ]*:\([0-9][0-9]*\): listening.*/\1/p" \
	    "$T/$1.err" | head -n 1
}

# stop_dsroute NAME: SIGTERM; it must exit 0 without a sanitizer report.
stop_dsroute() {
	if stop "$1"; then
		_rc=0
	else
		_rc=$?
	fi
	if [ $_rc -ne 0 ] || grep -Eq 'Sanitizer|runtime error:|^==[0-9]+==' \
	    "$T/$1.err"; then
		fail "$1 exits cleanly on SIGTERM" "status $_rc"
	else
		pass "$1 exits cleanly on SIGTERM"
	fi
}

# start_fakert NAME ARGS...: start a fake runtime with an events file.
# With --listen it waits until the runtime listens.
start_fakert() {
	_name=$1
	shift
	: >"$T/$_name.ev"
	bg "$_name" "$FAKERT" --events "$T/$_name.ev" "$@"
	case " $* " in
	*" --listen "*)
		wait_for 10 has_line "$T/$_name.ev" '^listen ' ||
		    fail "$_name listens"
		;;
	esac
}

# fakert_port NAME: the port of a fake runtime listening on tcp:...:0.
fakert_port() {
	sed -n 's/^listen tcp:.*:\([0-9][0-9]*\)$/\1/p' "$T/$1.ev" | head -n 1
}

# runtime_rx NAME: bytes a fake runtime received from clients so far.
runtime_rx() {
	_rx=$(sed -n 's/^rx-bytes //p' "$T/$1.ev" | tail -n 1)
	echo "${_rx:-0}"
}

# tool [--timeout S] ARGS...: run the fake tool; output in $T/tool.out.
tool() {
	"$FAKETOOL" "$@" >"$T/tool.out" 2>"$T/tool.err"
}

# processinfo_via DESC TOOL ADDR PID: a ProcessInfo through TOOL (tool,
# or wtool on a pipe) reaches the runtime PID.
processinfo_via() {
	if "$2" --timeout 30 "$3" processinfo; then
		is "$1: ProcessInfo reaches the runtime" \
		    "$(field pid "$T/tool.out")" "$4"
	else
		fail "$1: ProcessInfo reaches the runtime" \
		    "$(cat "$T/tool.out" "$T/tool.err")"
	fi
}

# stream_same DESC RUNTIME FILE BYTES: the stream of BYTES a tool wrote
# out in FILE is the one the fake RUNTIME sent: the same SHA-256.
stream_same() {
	_what="$1: $(($4 / 1048576)) MiB stream, same SHA-256 at both ends"
	_id=$(field session "$3")
	if [ -z "$_id" ]; then
		fail "$_what" "$(cat "$3")"
		return
	fi
	wait_for 20 has_line "$T/$2.ev" "^stream-end $_id "
	is "$_what" "$(field sha256 "$3")" \
	    "$(sed -n "s/^stream-end $_id $4 //p" "$T/$2.ev")"
}

# session_says DESC EREGEX ROUTER N SECONDS: within SECONDS router NAME
# has logged N session lines, the last one matching EREGEX (the one line
# that says why a session of bad input ended).
session_says() {
	if wait_for "$5" eval "[ \$(count_lines '$T/$3.err' \
	    '^info: session [0-9]+: ') -ge $4 ]"; then
		like "$1: one log line says why" \
		    "$(grep -E '^info: session [0-9]+: ' "$T/$3.err" |
		    tail -n 1)" "$2"
	else
		fail "$1: one log line says why" "no session line"
	fi
}

# hex16 N: N as a little-endian u16 in hex.
hex16() {
	printf '%02x%02x' $(($1 & 255)) $(($1 >> 8))
}

# dump_payload PATH: a GenerateCoreDump3 payload for an ASCII path, in hex.
dump_payload() {
	hex16 $((${#1} + 1))
	printf '0000'
	printf '%s' "$1" | od -An -tx1 -v | tr -d ' \n' | sed 's/\(..\)/\100/g'
	printf '0000''04000000''00000000'
}

# field NAME FILE: the value of NAME=... on the last line that has it.
field() {
	sed -n "s/.*\<$1=\([^ ]*\).*/\1/p" "$2" | tail -n 1
}

rss_kb() {
	awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"
}

fd_count() {
	ls "/proc/$1/fd" | wc -l
}

# runtime_in NAME DIR [USER GROUP [FAKERT-ARGS]]: a fake runtime listening
# at its own default socket name in DIR (its pid and start time in it).
runtime_in() {
	: >"$T/$1.ev"
	chmod 0666 "$T/$1.ev"
	bg "$1" setpriv --reuid="${3:-root}" --regid="${4:-root}" \
	    --clear-groups sh -c 'k=$(sed -n "s/.*) //p" /proc/$$/stat |
	    awk "{ print \$20 }"); exec "$0" --listen \
	    "$1/dotnet-diagnostic-$$-$k-socket" --events "$2" $3' \
	    "$FAKERT" "$2" "$T/$1.ev" "${5:-}"
	wait_for 10 has_line "$T/$1.ev" '^listen ' || fail "$1 listens"
}

# standin_of LOG RUNTIME_PID: the stand-in mirroring it, from the log.
standin_of() {
	sed -n "s/^info: runtime pid $2 (cookie [0-9a-f]*) ([^)]*) is mirrored as pid \([0-9]*\) .*/\1/p" \
	    "$T/$1.err" | tail -n 1
}

# state PID: the one-letter state of a process, empty when it is gone (a
# zombie, Z, still answers kill -0).
state() {
	sed -n 's/.*) \(.\).*/\1/p' "/proc/$1/stat" 2>/dev/null
}

# plain DIR STANDIN: the stand-in's plain default-socket name.
plain() {
	ls "$1" | grep -E "^dotnet-diagnostic-$2-[0-9]+-socket$" | sed "s|^|$1/|"
}
