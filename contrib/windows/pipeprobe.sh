#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Build contrib/windows/pipeprobe.c with mingw-w64 (static, no libraries
# beyond Windows' own) and run it under wine: what wine really does with
# the named-pipe calls the Windows port plans to use (overlapped I/O on a
# completion port, FIRST_PIPE_INSTANCE, an SDDL DACL, peer pids, cancel,
# throughput and latency).  Prints the probe's lines (wine's CRLF made LF);
# the last line is "pipeprobe: ok", or says what failed, and the exit
# status follows it.  Not part of the test suite.
#
# The wine prefix: $WINEPREFIX if set; else the one tests/windows/setup.sh
# made (its env.sh in ${XDG_CACHE_HOME:-~/.cache}/dsroute/win64); else a
# throwaway prefix, made here and removed afterwards, as smoke.sh does.

set -eu
cd "$(dirname "$0")"

cache=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/win64
tmp=$(mktemp -d)
own_prefix=""
cleanup()
{
	if [ -n "$own_prefix" ]; then
		wineserver -k 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

for t in x86_64-w64-mingw32-gcc wine; do
	if ! command -v "$t" >/dev/null 2>&1; then
		echo "pipeprobe: $t is missing (tests/windows/setup.sh installs" \
		    "it)"
		exit 1
	fi
done

x86_64-w64-mingw32-gcc -static -O2 -Wall -Wextra -Werror \
    -D_WIN32_WINNT=0x0A00 -D__USE_MINGW_ANSI_STDIO=1 \
    -o "$tmp/pipeprobe.exe" pipeprobe.c -lws2_32 -ladvapi32

if [ -n "${WINEPREFIX:-}" ]; then
	:
elif [ -f "$cache/env.sh" ]; then
	. "$cache/env.sh"
else
	own_prefix=$tmp/pfx
	WINEPREFIX=$own_prefix WINEARCH=win64
	export WINEPREFIX WINEARCH
	WINEDLLOVERRIDES=mscoree,mshtml= WINEDEBUG=-all wineboot -i \
	    >"$tmp/wineboot.log" 2>&1
fi
WINEDEBUG=${WINEDEBUG:--all}
export WINEPREFIX WINEDEBUG

status=0
timeout 300 wine "$tmp/pipeprobe.exe" >"$tmp/out" 2>&1 || status=$?
tr -d '\r' <"$tmp/out"
if [ "$status" -ne 0 ]; then
	echo "pipeprobe: failed (status $status)"
	exit 1
fi
