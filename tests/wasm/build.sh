#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Build dswasm (tests/wasm/app), the .NET browser-wasm app with the
# diagnostic server linked in, and print the directory it was published to.
#
#   tests/wasm/build.sh            build unless cached; print WWWROOT
#   tests/wasm/build.sh --key      print the cache key and do nothing
#   tests/wasm/build.sh --log FILE build unless cached, the build's output
#                                  in FILE (the one who builds writes it)
#
# EnableDiagnostics=true needs a native relink with emscripten, which the
# NuGet feed does not carry (the Microsoft.NET.Runtime.Emscripten.* packs),
# and bookworm's emscripten (3.1.6) is too old for.  So the relink runs in a
# Debian trixie chroot with its emscripten, a copy of this machine's .NET
# SDK, and the wasm-tools workload installed over three placeholder packs
# that point the SDK at Debian's emscripten; the app bridges 3.1.56 and the
# pinned emscripten with compat.pre.js.  Nothing of trixie reaches the host.
#
# Everything lands outside the clone, in $DSWASM_CACHE
# (~/.cache/dsroute/wasm by default):
#   trixie-sdk$SDK-em$EM/      the chroot (about 3.3 GB), made once
#   dswasm-sdk$SDK-em$EM-$HASH/wwwroot   the published app (about 6 MB)
#   lock                       held while building: one build at a time
# $HASH covers the app's sources and this script.  Each step leaves a stamp,
# so an interrupted build resumes where it stopped.  Run as root (debootstrap,
# chroot, mount); debootstrap and python3 are installed with apt if missing.
# Mounts are made in a private mount namespace and vanish with it.
set -eu

EMSCRIPTEN_VERSION=3.1.69
SUITE=trixie

here=$(cd "$(dirname "$0")" && pwd)
cache=${DSWASM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/wasm}

die() {
	echo "build.sh: $*" >&2
	exit 1
}

command -v dotnet >/dev/null 2>&1 || die "dotnet not found on PATH"
sdk=$(dotnet --version)
dotnet_root=$(dirname "$(readlink -f "$(command -v dotnet)")")

# The app's sources (not its build output) and this script, in order.
app_hash=$( (cd "$here" && find build.sh app -type f ! -path '*/bin/*' \
    ! -path '*/obj/*' | LC_ALL=C sort | xargs sha256sum) | sha256sum |
    cut -c1-12)
root=$cache/$SUITE-sdk$sdk-em$EMSCRIPTEN_VERSION
out=$cache/dswasm-sdk$sdk-em$EMSCRIPTEN_VERSION-$app_hash

log=""
case ${1:-} in
--key)
	echo "${out##*/}"
	exit 0
	;;
--log)
	log=${2:?--log FILE}
	;;
esac
if [ -f "$out/stamp" ]; then
	echo "$out/wwwroot"
	exit 0
fi
[ "$(id -u)" -eq 0 ] || die "the chroot needs root; dswasm is not built"
command -v flock >/dev/null 2>&1 || die "no flock(1)"
mkdir -p "$cache"
# One build at a time; whoever waited may find it done.
exec 9>"$cache/lock"
flock 9
if [ -f "$out/stamp" ]; then
	echo "$out/wwwroot"
	exit 0
fi
# What follows talks on stderr, or into the log; stdout gets the one path
# at the end.
exec 3>&1 1>&2
[ -z "$log" ] || exec >"$log" 2>&1

export DEBIAN_FRONTEND=noninteractive
export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
export DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1 MSBUILDDISABLENODEREUSE=1

for p in debootstrap python3; do
	command -v $p >/dev/null 2>&1 && continue
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends $p >/dev/null
done

# step NAME: true when step NAME of the chroot is still to do.
step() {
	if [ -f "$root/.dswasm-$1" ]; then
		return 1
	fi
	echo "build.sh: $(date +%T) $1"
}

done_step() {
	: >"$root/.dswasm-$1"
}

# in_root COMMAND: run a shell command in the chroot, /proc and /dev
# mounted for it alone, with the host's name resolution of the moment.
in_root() {
	cp /etc/resolv.conf "$root/etc/resolv.conf"
	unshare --mount --propagation private sh -c '
	    mount -t proc proc "$0/proc" && mount --rbind /dev "$0/dev" &&
	    exec chroot "$0" env HOME=/root PATH=/usr/sbin:/usr/bin:/sbin:/bin \
	    sh -ec "$1"' "$root" "$1"
}

if step debootstrap; then
	# the mirror this host's apt uses
	mirror=$(sed -n 's|^URIs: *\(.*/debian\)/*$|\1|p' \
	    /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n 1)
	[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" { print $2; exit }' \
	    /etc/apt/sources.list 2>/dev/null)
	rm -rf "$root"
	debootstrap --variant=minbase --include=ca-certificates "$SUITE" \
	    "$root" "${mirror:-http://deb.debian.org/debian}"
	done_step debootstrap
fi

if step emscripten; then
	# This host's extra CAs (an egress proxy's), so that apt and NuGet
	# in the chroot trust what the host trusts.
	for c in /usr/local/share/ca-certificates/*.crt; do
		[ -f "$c" ] && cp "$c" "$root/usr/local/share/ca-certificates/"
	done
	in_root 'update-ca-certificates >/dev/null
	    apt-get update -qq
	    apt-get install -y -qq --no-install-recommends emscripten nodejs \
	        python3 libicu76 libssl3t64 zlib1g >/dev/null
	    apt-get clean'
	v=$(in_root "dpkg-query -W -f '\${Version}' emscripten")
	case $v in
	$EMSCRIPTEN_VERSION+* | $EMSCRIPTEN_VERSION-*) ;;
	*) die "$SUITE has emscripten $v; compat.pre.js is for $EMSCRIPTEN_VERSION" ;;
	esac
	# The layout the workload expects of an emsdk: bin/ the LLVM tools,
	# emscripten/ emcc, node/bin/node; and a writable emscripten cache,
	# where the first link builds the wasm-EH libraries the runtime uses:
	# Debian's own (frozen) one, moved, which nothing else here reads.
	llvm=$(in_root 'ls -d /usr/lib/llvm-* | sort -V | tail -n 1')
	mkdir -p "$root/opt/emsdk/bin" "$root/opt/emsdk/node/bin"
	for t in clang clang++ wasm-ld llvm-ar llvm-nm llvm-objcopy \
	    llvm-dwarfdump llvm-ranlib llvm-strip; do
		ln -sfn "$llvm/bin/$t" "$root/opt/emsdk/bin/$t"
	done
	ln -sfn /usr/bin/wasm-opt "$root/opt/emsdk/bin/wasm-opt"
	ln -sfn /usr/share/emscripten "$root/opt/emsdk/emscripten"
	ln -sfn /usr/bin/node "$root/opt/emsdk/node/bin/node"
	if [ ! -d "$root/opt/emcache" ]; then
		mv "$root/usr/share/emscripten/cache" "$root/opt/emcache"
		ln -s /opt/emcache "$root/usr/share/emscripten/cache"
	fi
	done_step emscripten
fi

if step workload; then
	# The host's SDK, copied: the workload install writes into it.
	rm -rf "$root/usr/share/dotnet"
	cp -a "$dotnet_root" "$root/usr/share/dotnet"
	ln -sfn /usr/share/dotnet/dotnet "$root/usr/bin/dotnet"
	# Placeholders for the emscripten packs the SDK's manifest names,
	# at its version, pointing at /opt/emsdk.
	rm -rf "$root/opt/feed"
	python3 "$here/stub-packs.py" "$root/usr/share/dotnet" \
	    /opt/emsdk /opt/emcache "$root/opt/feed"
	feeds=$(dotnet nuget list source --format short 2>/dev/null |
	    awk '$1 == "E" { printf " --source %s", $2 }')
	in_root "export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
	    dotnet workload install wasm-tools --skip-manifest-update \
	        --skip-sign-check --source /opt/feed$feeds
	    dotnet workload list"
	done_step workload
fi

# The app: published in the chroot from a copy of its sources.
echo "build.sh: $(date +%T) publish dswasm ($app_hash)"
rm -rf "$root/build" "$out"
mkdir -p "$root/build"
cp -a "$here/app" "$root/build/app"
rm -rf "$root/build/app/bin" "$root/build/app/obj"
in_root 'export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
    export MSBUILDDISABLENODEREUSE=1
    cd /build/app && dotnet publish -c Release -nodeReuse:false \
        --disable-build-servers -nologo'
mkdir -p "$out"
cp -a "$root/build/app/bin/Release/net10.0/publish/wwwroot" "$out/wwwroot"
rm -rf "$root/build"
# A relink that quietly fell back to the prebuilt runtime has no EventPipe.
grep -q 'enableEventPipe: *true' "$out"/wwwroot/_framework/dotnet.native.*.js ||
    die "the published runtime has EventPipe off: EnableDiagnostics did not take"
: >"$out/stamp"
echo "build.sh: $(date +%T) ok: $out/wwwroot"
echo "$out/wwwroot" >&3
