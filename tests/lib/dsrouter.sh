#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced after lib.sh by the scenarios of dsroute's dotnet-dsrouter
# command line (tests/dsrouter*.sh).

# dsr NAME STDIN ARGS...: start `dsroute ARGS...` reading STDIN, with its
# TMPDIR in $T so that its default sockets are the scenario's own, and
# wait until it is ready.  Descriptors 7 to 9 are the scenario's, for
# writing to FIFOs: the router does not get them.  $DSR_ENV holds more
# NAME=VALUE for its environment only.
dsr() {
	_name=$1
	_in=$2
	shift 2
	# shellcheck disable=SC2086
	env TMPDIR="$T" ${DSR_ENV:-} "$DSROUTE" "$@" <"$_in" \
	    >"$T/$_name.out" 2>"$T/$_name.err" 7>&- 8>&- 9>&- &
	echo $! >"$T/$_name.pid"
	_pids="$_pids $!"
	if ! wait_for 10 has_line "$T/$_name.err" '^info: ready$'; then
		fail "$_name started" "$(cat "$T/$_name.err")"
		return 1
	fi
	return 0
}

# tcp_port NAME: the TCP port the command's route listens on.
tcp_port() {
	sed -n 's/^info: remote tcp:.*:\([0-9][0-9]*\): listening.*/\1/p' \
	    "$T/$1.err" | head -n 1
}

# default_socket NAME [dsrouter-]: a router's default socket (or sibling).
default_socket() {
	echo "$T/dotnet-diagnostic-${2-dsrouter-}$(pid_of "$1")-"*-socket
}

# exits_ok NAME DESC: a router stopped by itself with status 0, and no
# sanitizer report.
exits_ok() {
	if wait "$(pid_of "$1")"; then
		_rc=0
	else
		_rc=$?
	fi
	if [ $_rc -ne 0 ] || grep -Eq 'Sanitizer|runtime error:' \
	    "$T/$1.err"; then
		fail "$2" "status $_rc: $(tail -n 5 "$T/$1.err")"
	else
		pass "$2"
	fi
}

# no_sockets NAME: none of a router's default sockets is left.
no_sockets() {
	! ls "$T" | grep -q "^dotnet-diagnostic-.*$(pid_of "$1")-"
}

# processinfo DESC ADDR PID: a ProcessInfo through a router reaches PID.
processinfo() {
	if "$FAKETOOL" --timeout 30 "$2" processinfo >"$T/tool.out" \
	    2>"$T/tool.err"; then
		is "$1" "$(field pid "$T/tool.out")" "$3"
	else
		fail "$1" "faketool: $(cat "$T/tool.out" "$T/tool.err")"
	fi
}

# refused() is lib.sh's.

. "$top_srcdir/tests/lib/dotnet-tools.sh"

# dotnet_trace: install dotnet-trace into this build tree (the scenarios
# put dsroute next to it as dotnet-dsrouter) and set DOTNET_TRACE and
# DOTNET_TOOLS; return 1 with the reason in $why where it cannot be.
dotnet_trace() {
	DOTNET_TOOLS=${top_builddir:-$PWD}/dotnet-tools
	dotnet_tool dotnet-trace "$DOTNET_TOOLS" || return 1
	DOTNET_TRACE=$tool_path
}

# dsapp: build the interop target application (a real .NET runtime; no
# packages needed) once under the build tree and set DSAPP to it; return 1
# with the reason in $why where it cannot be.
dsapp() {
	if ! dotnet_trace; then
		return 1
	fi
	_out=$DOTNET_TOOLS/dsapp
	DSAPP=$_out/app/dsapp
	if ! MSBUILDDISABLENODEREUSE=1 flock "$DOTNET_TOOLS/.lock" sh -c \
	    '[ -x "$0/app/dsapp" ] || dotnet build "$1" -c Release \
	    -o "$0/app" --disable-build-servers -nodeReuse:false -nologo \
	    -v:quiet -clp:NoSummary "-p:BaseIntermediateOutputPath=$0/obj/" \
	    "-p:MSBuildProjectExtensionsPath=$0/obj/"' "$_out" \
	    "$top_srcdir/tests/interop/app/dsapp.csproj" \
	    >"$DOTNET_TOOLS/dsapp-build.log" 2>&1; then
		why="the interop application did not build: $(tail -n 1 \
		    "$DOTNET_TOOLS/dsapp-build.log")"
		return 1
	fi
	return 0
}

# resolve_pid DIR PID: the socket the .NET client library picks for -p
# PID (PidIpcEndpoint.TryResolveAddress): the newest
# dotnet-diagnostic-PID-*-socket, unless a
# dotnet-diagnostic-dsrouter-PID-*-socket exists that is no older.
resolve_pid() {
	_plain=$(ls -t "$1"/dotnet-diagnostic-"$2"-*-socket 2>/dev/null |
	    head -n 1)
	_router=$(ls -t "$1"/dotnet-diagnostic-dsrouter-"$2"-*-socket \
	    2>/dev/null | head -n 1)
	if [ -n "$_plain" ] && [ -n "$_router" ] &&
	    no_older "$_router" "$_plain"; then
		echo "$_router"
	else
		echo "$_plain"
	fi
}

# no_older A B: file A was modified no earlier than file B (to the ns).
no_older() {
	_a=$(stat -c %.9Y "$1")
	_b=$(stat -c %.9Y "$2")
	[ "$(printf '%s\n%s\n' "$_a" "$_b" | sort | tail -n 1)" = "$_a" ]
}
