#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The real diagnostic tools (dotnet-trace, -counters, -gcdump, -dump,
# -stack), at one pinned version, installed from the NuGet feed once per
# machine into ~/.cache/dsroute/dotnet-tools/VERSION and shared by every
# build tree and CI run from then on.  A scenario that cannot have one
# reports its tests as skipped, with $why.  Needs nothing of lib.sh.

DOTNET_TOOLS_VERSION=10.0.750501

DOTNET_CLI_TELEMETRY_OPTOUT=1
DOTNET_NOLOGO=1
DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_TELEMETRY_OPTOUT DOTNET_NOLOGO DOTNET_SKIP_FIRST_TIME_EXPERIENCE

# dotnet_tool NAME [DIR]: install NAME into DIR (the cache by default)
# unless it is there, and set $tool_path to it; return 1 with the reason
# in $why where it cannot be.
dotnet_tool() {
	if ! command -v dotnet >/dev/null 2>&1; then
		why="no dotnet on this machine"
		return 1
	fi
	_dir=${2:-${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/dotnet-tools/$DOTNET_TOOLS_VERSION}
	if ! mkdir -p "$_dir" 2>/dev/null; then
		_dir=${top_builddir:-$PWD}/dotnet-tools
		mkdir -p "$_dir"
	fi
	tool_path=$_dir/$1
	[ -x "$tool_path" ] && return 0
	if ! flock "$_dir/.lock" sh -c '[ -x "$0/$1" ] ||
	    NUGET_PACKAGES="$0/.nuget" timeout 300 dotnet tool install \
	    --tool-path "$0" --version "$2" "$1"' \
	    "$_dir" "$1" "$DOTNET_TOOLS_VERSION" >"$_dir/$1.log.$$" 2>&1; then
		why="$1 $DOTNET_TOOLS_VERSION did not install: $(grep -v \
		    '^[[:space:]]*$' "$_dir/$1.log.$$" | tail -n 1 | cut -c1-160)"
		rm -f "$_dir/$1.log.$$"
		return 1
	fi
	rm -f "$_dir/$1.log.$$"
	return 0
}
