#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Lay the ground for the Windows tests under wine (tests/windows/README.md):
#
#   tests/windows/setup.sh
#
# 1. installs wine (64-bit only) and mingw-w64 from Debian's packages if they
#    are missing (root only; otherwise it says what to install and fails);
# 2. makes a private wine prefix, CACHE/wine-pfx (win64, no Mono or Gecko);
# 3. publishes dsapp (tests/interop/app) self-contained for win-x64 into
#    CACHE/dsapp-KEY, KEY a hash of its sources and of the SDK's version;
# 4. builds launch.exe and pipeclient.exe (static, mingw-w64) into
#    CACHE/bin-KEY, KEY a hash of their sources and of the compiler;
# 5. writes CACHE/env.sh, for `. CACHE/env.sh`: the wine variables and the
#    paths of the three programs, in Linux and in Windows (Z:\...) form.
#
# CACHE is ${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/win64.  Each step is
# skipped when its result is there, so a second run takes seconds.  Progress
# goes to stderr; the last line of stdout is CACHE.  Runs are serialized
# with flock.  DSINTEROP_NUGET_PACKAGES names a NuGet cache to reuse (the
# default is CACHE/nuget, private).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/win64

say() {
	echo "setup.sh: $*" >&2
}

die() {
	say "error: $*"
	exit 1
}

# keyof FILE...: one short hash of the files' names and contents, and of
# the text on stdin.
keyof() {
	{
		cat
		for f in "$@"; do
			echo "== ${f#"$top"/}"
			cat "$f"
		done
	} | sha256sum | cut -c1-16
}

# winpath PATH: the Windows form of an absolute Linux path (wine's Z: drive).
winpath() {
	printf 'Z:%s\n' "$1" | tr / '\\'
}

have_tools() {
	command -v wine >/dev/null 2>&1 &&
	    command -v wineboot >/dev/null 2>&1 &&
	    command -v wineserver >/dev/null 2>&1 &&
	    [ -x /usr/lib/wine/wine64 ] &&
	    command -v x86_64-w64-mingw32-gcc >/dev/null 2>&1
}

# 1. Packages.  wine64 alone runs 64-bit programs: no i386 architecture.
pkgs="wine64 wine gcc-mingw-w64-x86-64"
if ! have_tools; then
	[ "$(id -u)" -eq 0 ] ||
	    die "need root to install: apt-get install -y --no-install-recommends $pkgs"
	say "installing $pkgs"
	export DEBIAN_FRONTEND=noninteractive
	if ! apt-get install -y --no-install-recommends $pkgs >&2; then
		apt-get update >&2
		apt-get install -y --no-install-recommends $pkgs >&2
	fi
	have_tools || die "wine or mingw-w64 still missing after apt-get install"
fi
# Without the SDK there is no app to publish: the fakes' scenarios run,
# the real runtime's skips (it checks for dotnet itself).
have_dotnet=1
if ! command -v dotnet >/dev/null 2>&1; then
	say "no dotnet on PATH (the .NET 10 SDK): no win-x64 app published"
	have_dotnet=0
fi
command -v flock >/dev/null 2>&1 || die "no flock(1)"

mkdir -p "$cache"
exec 9>"$cache/lock"
flock 9

# Debian's wine script hints at wine32 on stderr unless WINEDEBUG is -all.
WINEPREFIX=$cache/wine-pfx
WINEARCH=win64
WINEDEBUG=-all
export WINEPREFIX WINEARCH WINEDEBUG

# 2. The prefix.  mscoree and mshtml are disabled for wineboot only, so it
# does not try to install Mono and Gecko; the .NET app must run without
# that override.
if [ ! -f "$WINEPREFIX/.dsroute-ready" ]; then
	say "making the wine prefix $WINEPREFIX"
	rm -rf "$WINEPREFIX"
	# "failed to open ...syswow64\rundll32.exe" is expected: no wine32.
	WINEDLLOVERRIDES=mscoree,mshtml= wineboot -i >&2 2>&1 ||
	    die "wineboot -i failed"
	wineserver -w
	[ -f "$WINEPREFIX/system.reg" ] || die "wineboot made no prefix"
	: >"$WINEPREFIX/.dsroute-ready"
fi

# 3. dsapp, self-contained for win-x64.  There is no apphost pack for
# win-x64 on the feed, hence _RuntimeIdentifierUsesAppHost=false: no
# dsapp.exe, only dsapp.dll, which launch.exe starts through hostfxr.
publish_args="-c Release -r win-x64 --self-contained -p:_RuntimeIdentifierUsesAppHost=false"
appdir=
if [ "$have_dotnet" -eq 1 ]; then
	sdk=$(dotnet --version)
	appkey=$(echo "sdk $sdk; $publish_args" |
	    keyof "$top/tests/interop/app/dsapp.csproj" "$top/tests/interop/app/Program.cs")
	appdir=$cache/dsapp-$appkey
	if [ ! -f "$appdir/.ok" ]; then
		say "publishing dsapp for win-x64 into $appdir"
		for d in "$cache"/dsapp-* "$cache"/obj-*; do	# older sources
			[ -e "$d" ] && rm -rf "$d"
		done
		obj=$cache/obj-$appkey
		# shellcheck disable=SC2086
		DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1 \
		    DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1 MSBUILDDISABLENODEREUSE=1 \
		    NUGET_PACKAGES="${DSINTEROP_NUGET_PACKAGES:-$cache/nuget}" \
		    dotnet publish "$top/tests/interop/app/dsapp.csproj" $publish_args \
		    -o "$appdir" --disable-build-servers -nodeReuse:false -nologo \
		    -v:quiet -clp:NoSummary \
		    "-p:BaseIntermediateOutputPath=$obj/" \
		    "-p:MSBuildProjectExtensionsPath=$obj/" >&2 ||
		    die "dotnet publish failed"
		for f in dsapp.dll hostfxr.dll coreclr.dll dsapp.runtimeconfig.json; do
			[ -f "$appdir/$f" ] || die "publish made no $appdir/$f"
		done
		rm -rf "$obj"
		: >"$appdir/.ok"
	fi
fi

# 4. The two mingw programs.
cc=x86_64-w64-mingw32-gcc
cflags="-O2 -Wall -Wextra -static"
binkey=$({ $cc --version | head -n 1; echo "$cflags"; } |
    keyof "$here/launch.c" "$here/pipeclient.c")
bindir=$cache/bin-$binkey
if [ ! -f "$bindir/.ok" ]; then
	say "building launch.exe and pipeclient.exe into $bindir"
	for d in "$cache"/bin-*; do
		[ -e "$d" ] && rm -rf "$d"
	done
	mkdir -p "$bindir"
	# shellcheck disable=SC2086
	$cc $cflags -municode -o "$bindir/launch.exe" "$here/launch.c" ||
	    die "cannot build launch.exe"
	# shellcheck disable=SC2086
	$cc $cflags -o "$bindir/pipeclient.exe" "$here/pipeclient.c" -lws2_32 ||
	    die "cannot build pipeclient.exe"
	: >"$bindir/.ok"
fi

# 5. The environment for the scripts and for a person.
cat >"$cache/env.sh.new" <<EOF
# Written by tests/windows/setup.sh; source it.
WINEPREFIX='$WINEPREFIX'
WINEARCH=win64
WINEDEBUG=-all
# W^X double mapping breaks the runtime under wine 8 (an "Internal CLR
# error" from a finalizer within a second or so): turn it off.
DOTNET_EnableWriteXorExecute=0
export WINEPREFIX WINEARCH WINEDEBUG DOTNET_EnableWriteXorExecute
DSWIN_CACHE='$cache'
DSWIN_APPDIR='$appdir'
DSWIN_DSAPP='$([ -n "$appdir" ] && winpath "$appdir/dsapp.dll")'
DSWIN_LAUNCH='$bindir/launch.exe'
DSWIN_PIPECLIENT='$bindir/pipeclient.exe'
EOF
mv "$cache/env.sh.new" "$cache/env.sh"
say "ready: . $cache/env.sh; wine \"\$DSWIN_LAUNCH\" \"\$DSWIN_DSAPP\""
echo "$cache"
