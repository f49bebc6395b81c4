#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced by the interop scenarios (tests/interop-*.sh) after tests/lib/lib.sh.
# They run dsroute against the real .NET runtime (tests/interop/app,
# dsapp) and the real client library (tests/interop/client, dsclient).
#
# interop_setup skips the whole scenario, visibly, on a machine without
# dotnet, and builds dsapp and dsclient once per build tree, under
# $top_builddir/interop-out; concurrent scenarios wait for one build.
# Every app runs with its own short TMPDIR under $T, so that its default
# socket path fits in sun_path and belongs to this test alone.

: "${top_builddir:?run the tests with make check}"

IOUT=$top_builddir/interop-out
DSAPP=$IOUT/app/dsapp
ORDERS=$IOUT/orders/Orders.Api	# dsapp, under the assembly name Orders.Api
DSCLIENT=$IOUT/client/dsclient

DOTNET_CLI_TELEMETRY_OPTOUT=1
DOTNET_NOLOGO=1
DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1
export DOTNET_CLI_TELEMETRY_OPTOUT DOTNET_NOLOGO \
    DOTNET_SKIP_FIRST_TIME_EXPERIENCE DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE
# Nothing here may dial a port of its own choosing.
unset DOTNET_DiagnosticPorts DOTNET_DefaultDiagnosticPortSuspend

# True when the sources of the helpers are older than the last build.
_interop_fresh() {
	[ -x "$DSAPP" ] && [ -x "$ORDERS" ] && [ -x "$DSCLIENT" ] &&
	    [ -f "$IOUT/stamp" ] &&
	    [ -z "$(find "$top_srcdir/tests/interop/build.sh" \
	    "$top_srcdir/tests/interop/app" "$top_srcdir/tests/interop/client" \
	    -type f -newer "$IOUT/stamp" ! -path '*/bin/*' ! -path '*/obj/*' \
	    2>/dev/null)" ]
}

# Skip without dotnet; build the helpers if they are missing or stale.
interop_setup() {
	command -v dotnet >/dev/null 2>&1 || skip_all "no dotnet on PATH"
	dotnet --list-runtimes 2>/dev/null |
	    grep -q '^Microsoft\.NETCore\.App 10\.' ||
	    skip_all "dotnet has no .NET 10 runtime (dotnet --list-runtimes)"
	command -v flock >/dev/null 2>&1 || skip_all "no flock(1)"
	mkdir -p "$IOUT"
	if ! (
		flock 9
		_interop_fresh && exit 0
		echo "# building dsapp and dsclient in $IOUT" >&2
		rm -f "$IOUT/stamp"
		: >"$IOUT/stamp.new"
		sh "$top_srcdir/tests/interop/build.sh" "$IOUT" \
		    >"$IOUT/build.log" 2>&1 || exit 1
		mv "$IOUT/stamp.new" "$IOUT/stamp"
	) 9>"$IOUT/lock"; then
		tail -n 30 "$IOUT/build.log" | sed 's/^/# /'
		echo "Bail out! cannot build the .NET helpers; see $IOUT/build.log"
		exit 1
	fi
}

# start_app NAME [VAR=VALUE ...] [-- DSAPP-ARGS]: run dsapp in the
# background with TMPDIR=$T/NAME.d and the variables given.
start_app() {
	_name=$1
	shift
	_env=""
	while [ $# -gt 0 ] && [ "$1" != "--" ]; do
		_env="$_env $1"
		shift
	done
	[ $# -gt 0 ] && shift
	rm -rf "$T/$_name.d"
	mkdir -m 0700 "$T/$_name.d"
	# shellcheck disable=SC2086
	bg "$_name" env TMPDIR="$T/$_name.d" $_env "$DSAPP" "$@"
}

# app_ready NAME: Main of the app has run.
app_ready() {
	has_line "$T/$1.out" "^dsapp pid=$(pid_of "$1") ready\$"
}

# app_socket NAME: print the default diagnostic socket of the app, if any.
app_socket() {
	for _s in "$T/$1.d/dotnet-diagnostic-$(pid_of "$1")"-*-socket; do
		[ -S "$_s" ] || return 1
		echo "$_s"
		return 0
	done
}

# has_socket NAME: the app has its default diagnostic socket.
has_socket() {
	app_socket "$1" >/dev/null
}

# stop_app NAME: SIGTERM; the app must say so and exit 0.
stop_app() {
	if stop "$1" && has_line "$T/$1.out" '^dsapp pid=[0-9]+ exiting'; then
		pass "$1 exits 0 on SIGTERM"
	else
		fail "$1 exits 0 on SIGTERM" "$(cat "$T/$1.out" "$T/$1.err")"
	fi
}

# client NAME ARGS...: run dsclient; output in $T/NAME.out and $T/NAME.err.
# Its own runtime opens no diagnostic port.
client() {
	_name=$1
	shift
	DOTNET_EnableDiagnostics=0 "$DSCLIENT" "$@" >"$T/$_name.out" \
	    2>"$T/$_name.err"
}

# parked NAME ROUTER: the router parked a connection of the app.
parked() {
	has_line "$T/$2.err" \
	    "^info: runtime pid $(pid_of "$1") \(cookie [0-9a-f]+\) connected on "
}

. "$top_srcdir/tests/lib/dotnet-tools.sh"

# collect_trace PORT FILE: the real dotnet-trace ($tool_path, set by
# dotnet_tool) records $PROVIDERS for 3 s through the diagnostic port PORT
# into FILE; its output in $T/dt.out.  Its own runtime opens no port.
collect_trace() {
	DOTNET_EnableDiagnostics=0 timeout 120 "$tool_path" collect \
	    --providers "$PROVIDERS" --diagnostic-port "$1" \
	    --duration 00:00:00:03 -o "$2" </dev/null >"$T/dt.out" 2>&1
}

# tools_or_why TOOL...: install each dotnet-TOOL (dotnet_tool), its path
# in $path_TOOL, or why it is not there in $why_TOOL.
tools_or_why() {
	for _t; do
		if dotnet_tool "dotnet-$_t"; then
			eval "path_$_t=\$tool_path"
		else
			eval "why_$_t=\$why"
		fi
	done
}

# have_tool TOOL: dotnet-TOOL is installed; else say why its checks are
# skipped.
have_tool() {
	[ -n "$(eval echo \${path_$1:-})" ] && return 0
	skip "dotnet-$1" "$(eval echo \$why_$1)"
	return 1
}

# run_tool NAME TOOL ARGS...: run the real dotnet-TOOL ($path_TOOL, set
# from dotnet_tool's $tool_path); output in $T/NAME.out.  Its own
# runtime opens no diagnostic port.
run_tool() {
	_name=$1
	_tool=$2
	shift 2
	DOTNET_EnableDiagnostics=0 timeout 120 "$(eval echo \$path_$_tool)" \
	    "$@" </dev/null >"$T/$_name.out" 2>&1
}

# The tools judged on what they made (tests/interop-tools.sh and
# tests/containers.sh):
#
# judge_trace DESC FILE: dsclient parses dotnet-trace's FILE, which holds
# the app's Dsroute-Test events and GCs ($PROVIDERS has both).
judge_trace() {
	if client jt parse "$2"; then
		like "$1: the trace holds Dsroute-Test and GC events" \
		    "$(cat "$T/jt.out")" "dsroute-test=[1-9][0-9]* gc=[1-9]"
	else
		fail "$1: dsclient parses the trace" "$(cat "$T/jt.err")"
	fi
}

# judge_counters DESC CSV: dotnet-counters' CSV (--counters
# System.Runtime,Dsroute.Test) names System.Runtime's counters and the
# app's Meter with its ticks.
judge_counters() {
	like "$1: System.Runtime's counters are in its file" \
	    "$(cut -d, -f2,3 "$2" 2>&1)" \
	    "^System\.Runtime,dotnet\.gc\.heap\.total_allocated "
	like "$1: and the app's Meter, Dsroute.Test, with its ticks" \
	    "$(cut -d, -f2,3,5 "$2" 2>&1)" "^Dsroute\.Test,dsapp\.ticks [^,]*,[1-9]"
}

# judge_gcdump DESC FILE ASSEMBLY: dotnet-gcdump report reads FILE and
# names the app's 64 DsApp.Retained, of ASSEMBLY (dsapp.dll).
judge_gcdump() {
	_asm=$(echo "${3:-dsapp.dll}" | sed 's/\./\\./g')
	if run_tool jg gcdump report "$2"; then
		like "$1: the report names the app's 64 DsApp.Retained" \
		    "$(cat "$T/jg.out")" \
		    "[0-9] +64 +DsApp\.Retained +\[$_asm\]"
	else
		fail "$1: dotnet-gcdump report reads it" "$(cat "$T/jg.out")"
	fi
}

# trace_pid FILE: the pid a nettrace file's header names, the process its
# events come from (the Trace object: after "Nettrace", the serializer's
# header, SYSTEMTIME, two 8-byte clocks and the pointer size).
trace_pid() {
	[ "$(head -c 8 "$1")" = Nettrace ] &&
	    od -An -tu4 -j89 -N4 "$1" | tr -d ' '
}

# modules FILE: the app's assemblies a trace's rundown names (UTF-16).
modules() {
	tr -d '\0' <"$1" | grep -ao '/[A-Za-z.]*\.dll' |
	    grep -E '/(dsapp|Orders\.Api)\.dll' | sort -u | tr '\n' ' '
}

# logged NAME EREGEX [N]: router NAME logged N (1) lines that match.  A
# session's line comes once both its ends have closed, a moment after the
# tool has exited: wait for it with wait_for.
logged() {
	[ "$(count_lines "$T/$1.err" "$2")" -ge "${3:-1}" ]
}
