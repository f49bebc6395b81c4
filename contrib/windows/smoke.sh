#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Build contrib/windows/smoke.c with mingw-w64, statically, against the
# libraries deps.sh makes, and run it under wine in a private prefix that
# is thrown away afterwards.  Prints what smoke.exe printed (wine's CRLF
# made LF) and exits with its status.  Installs wine when it is missing.
# Not part of the test suite.

set -eu
cd "$(dirname "$0")"
here=$(pwd)

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo
for p in wine64 wine; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
	    grep -q "install ok installed" && continue
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
	    --no-install-recommends wine64 wine >/dev/null 2>&1
	break
done

prefix=$(sh ./deps.sh | tail -n 1)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM

x86_64-w64-mingw32-gcc -static -O2 -Wall -o "$tmp/smoke.exe" smoke.c \
    -I"$prefix/include" -L"$prefix/lib" \
    -levent_core -levent_extra -lmbedtls -lmbedx509 -lmbedcrypto \
    -lws2_32 -liphlpapi -lbcrypt -ladvapi32 -lshell32
echo "smoke.exe: $(wc -c <"$tmp/smoke.exe") bytes," \
    "imports $(x86_64-w64-mingw32-objdump -p "$tmp/smoke.exe" |
    sed -n 's/^[[:space:]]*DLL Name: //p' | tr '\n' ' ')"

WINEPREFIX=$tmp/pfx WINEARCH=win64 WINEDEBUG=-all
export WINEPREFIX WINEARCH WINEDEBUG
WINEDLLOVERRIDES=mscoree,mshtml= wineboot -i >"$tmp/wineboot.log" 2>&1
status=0
wine "$tmp/smoke.exe" >"$tmp/out" 2>&1 || status=$?
wineserver -k 2>/dev/null || true
tr -d '\r' <"$tmp/out"
exit "$status"
