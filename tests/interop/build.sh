#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Build the dsroute interop helpers: the target app (dsapp) and the client (dsclient).
#
#   tests/interop/build.sh OUTDIR
#   tests/interop/build.sh --self-contained OUTDIR
#
# The second form publishes only dsapp and Orders.Api, self-contained for
# linux-x64 (the runtime pack comes from the NuGet feed), into OUTDIR/app
# and OUTDIR/orders: an app for a container that has no .NET installed
# (tests/containers.sh).
#
# Produces OUTDIR/app/dsapp and OUTDIR/client/dsclient (framework-dependent, net10.0),
# and OUTDIR/orders/Orders.Api: dsapp again under another assembly name, so that a
# scenario can tell two apps apart by the name the runtime gives (tests/interop-mirror.sh).
# Intermediate files go to OUTDIR/obj (the source tree stays clean) and NuGet
# packages to OUTDIR/nuget-packages unless DSINTEROP_NUGET_PACKAGES names another
# cache (e.g. ~/.nuget/packages to reuse the user cache). dsapp needs no packages and
# builds offline; dsclient restores the exact versions pinned in its packages.lock.json.
# No build servers are left running. Safe to run repeatedly.
set -eu

selfcontained=0
if [ "${1:-}" = --self-contained ]; then
	selfcontained=1
	shift
fi
if [ $# -ne 1 ] || [ -z "$1" ]; then
	echo "usage: $0 [--self-contained] OUTDIR" >&2
	exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$1"
out=$(cd "$1" && pwd)

command -v dotnet >/dev/null 2>&1 || { echo "$0: dotnet not found on PATH" >&2; exit 1; }

export DOTNET_CLI_TELEMETRY_OPTOUT=1
export DOTNET_NOLOGO=1
export DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
export DOTNET_CLI_WORKLOAD_UPDATE_NOTIFY_DISABLE=1
export MSBUILDDISABLENODEREUSE=1
export NUGET_PACKAGES="${DSINTEROP_NUGET_PACKAGES:-$out/nuget-packages}"

build() { # build NAME PROJECT [extra msbuild args...]
	name=$1 proj=$2
	shift 2
	echo "build.sh: building $name -> $out/$name"
	dotnet build "$proj" -c Release -o "$out/$name" \
		--disable-build-servers -nodeReuse:false -nologo -v:quiet -clp:NoSummary \
		"-p:BaseIntermediateOutputPath=$out/obj/$name/" \
		"-p:MSBuildProjectExtensionsPath=$out/obj/$name/" \
		"$@"
}

# publish NAME PROJECT [extra msbuild args...]: self-contained, linux-x64.
publish() {
	name=$1 proj=$2
	shift 2
	echo "build.sh: publishing $name (self-contained, linux-x64) -> $out/$name"
	dotnet publish "$proj" -c Release -r linux-x64 --self-contained \
		-o "$out/$name" \
		--disable-build-servers -nodeReuse:false -nologo -v:quiet -clp:NoSummary \
		"-p:BaseIntermediateOutputPath=$out/obj/$name/" \
		"-p:MSBuildProjectExtensionsPath=$out/obj/$name/" \
		"$@"
}

if [ $selfcontained -eq 1 ]; then
	publish app "$here/app/dsapp.csproj"
	publish orders "$here/app/dsapp.csproj" -p:AssemblyName=Orders.Api
	for f in "$out/app/dsapp" "$out/orders/Orders.Api" \
	    "$out/app/libcoreclr.so"; do
		[ -x "$f" ] || [ -f "$f" ] ||
		    { echo "$0: $f was not produced" >&2; exit 1; }
	done
	echo "build.sh: ok: $out/app/dsapp $out/orders/Orders.Api (self-contained)"
	exit 0
fi

build app "$here/app/dsapp.csproj"
build orders "$here/app/dsapp.csproj" -p:AssemblyName=Orders.Api
build client "$here/client/dsclient.csproj" -p:RestoreLockedMode=true

for f in "$out/app/dsapp" "$out/orders/Orders.Api" "$out/client/dsclient"; do
	[ -x "$f" ] || { echo "$0: $f was not produced" >&2; exit 1; }
done
echo "build.sh: ok: $out/app/dsapp $out/orders/Orders.Api $out/client/dsclient"
