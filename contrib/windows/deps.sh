#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Cross-build dsroute's libraries for Windows (x86_64-w64-mingw32), static,
# from Debian's own source packages: libevent (with its IOCP back end),
# mbed TLS 2.28 and inih.  They are installed under
#
#	${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/win64/LIBEVENT+MBEDTLS+INIH/
#
# (include/, lib/, lib/pkgconfig/), keyed by the source versions, so a
# later run with the same versions builds nothing.  The prefix is the last
# line printed.  Quiet unless it fails; then the build log's tail goes to
# standard error and it exits non-zero.
#
# It installs the Debian packages it needs that are missing (with sudo when
# not root), and adds deb-src entries for the Debian archive already
# configured when there are none, for apt-get source.

set -eu

host=x86_64-w64-mingw32
# Bump when the build recipe below changes: a prefix built by an older
# recipe is built again.
recipe=3

sudo=""
[ "$(id -u)" -eq 0 ] || sudo=sudo

# Install whichever of the named packages are missing.
install_missing() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	echo "deps.sh: installing$missing" >&2
	_out=$(mktemp)
	if ! { $sudo apt-get update -qq &&
	    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
	    --no-install-recommends $missing; } >"$_out" 2>&1; then
		cat "$_out" >&2
		rm -f "$_out"
		return 1
	fi
	rm -f "$_out"
}

# The version of the source package that the candidate of binary package
# $1 is built from: the version Linux builds link against.
source_version() {
	v=$(apt-cache policy "$1" | sed -n 's/^ *Candidate: *//p')
	case $v in
	""|"(none)")
		echo "deps.sh: apt knows no $1; run apt-get update" >&2
		return 1
		;;
	esac
	s=$(apt-cache show "$1=$v" | sed -n 's/^Source: [^ ]* (\(.*\))$/\1/p' |
	    head -n 1)
	echo "${s:-$v}"
}

# Add deb-src entries mirroring the Debian archive's deb entries, unless
# some deb-src entry is there already.
add_deb_src() {
	d=/etc/apt/sources.list.d
	if grep -qsE '^[[:space:]]*deb-src[[:space:]]|^Types:.*deb-src' \
	    /etc/apt/sources.list "$d"/*.list "$d"/*.sources; then
		return 0
	fi
	if [ -f "$d/debian.sources" ]; then
		sed 's/^Types:.*/Types: deb-src/' "$d/debian.sources" |
		    $sudo tee "$d/dsroute-deb-src.sources" >/dev/null
	elif grep -qs '^deb[[:space:]].*debian' /etc/apt/sources.list; then
		sed -n 's/^deb\([[:space:]].*debian.*\)/deb-src\1/p' \
		    /etc/apt/sources.list |
		    $sudo tee "$d/dsroute-deb-src.list" >/dev/null
	else
		echo "deps.sh: no Debian archive in apt's sources to add" \
		    "deb-src entries for" >&2
		return 1
	fi
	$sudo apt-get update -qq
}

# A CMake toolchain file for the cross compiler: libraries and headers
# are looked for under the prefix and mingw's root, never the build
# machine's.
toolchain() {
	cat <<EOF
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER $host-gcc)
set(CMAKE_CXX_COMPILER $host-g++)
set(CMAKE_RC_COMPILER $host-windres)
set(CMAKE_FIND_ROOT_PATH /usr/$host $prefix)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
EOF
}

# cmake_build SRC BUILD [FLAGS...]: configure, build and install into the
# prefix being made.
cmake_build() {
	src=$1
	bld=$2
	shift 2
	cmake -S "$src" -B "$bld" -DCMAKE_TOOLCHAIN_FILE="$work/toolchain.cmake" \
	    -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
	    -DCMAKE_INSTALL_LIBDIR=lib "$@" &&
	    cmake --build "$bld" -j "$(nproc)" &&
	    cmake --install "$bld"
}

# libevent: static, no OpenSSL (the Windows build's TLS is mbed TLS), no
# tests or samples.  Its Windows build always has the win32 select back
# end and IOCP (event_iocp.c, bufferevent_async.c, listener.c's IOCP
# listener); IOCP needs the thread support, left on.
build_libevent() {
	(cd "$work" && apt-get source -qq --download-only "libevent=$lev" &&
	    dpkg-source -x libevent_*.dsc libevent) || return 1
	cmake_build "$work/libevent" "$work/libevent-build" \
	    -DEVENT__LIBRARY_TYPE=STATIC -DEVENT__DISABLE_OPENSSL=ON \
	    -DEVENT__DISABLE_MBEDTLS=ON \
	    -DEVENT__DISABLE_TESTS=ON -DEVENT__DISABLE_REGRESS=ON \
	    -DEVENT__DISABLE_SAMPLES=ON -DEVENT__DISABLE_BENCHMARK=ON \
	    -DEVENT__DISABLE_DEBUG_MODE=ON
}

# mbed TLS 2.28: static, no programs or tests.  Debian's patch turns on
# MBEDTLS_THREADING_PTHREAD; dsroute has one thread and mingw's default
# compiler has no pthreads, so threading is turned off again here.
build_mbedtls() {
	(cd "$work" && apt-get source -qq --download-only "mbedtls=$mtv" &&
	    dpkg-source -x mbedtls_*.dsc mbedtls) || return 1
	cfg=$work/mbedtls/include/mbedtls/config.h
	sed -i -e 's|^#define MBEDTLS_THREADING_C|//&|' \
	    -e 's|^#define MBEDTLS_THREADING_PTHREAD|//&|' "$cfg" || return 1
	cmake_build "$work/mbedtls" "$work/mbedtls-build" \
	    -DENABLE_TESTING=OFF -DENABLE_PROGRAMS=OFF \
	    -DUSE_STATIC_MBEDTLS_LIBRARY=ON -DUSE_SHARED_MBEDTLS_LIBRARY=OFF \
	    -DMBEDTLS_FATAL_WARNINGS=OFF -DLINK_WITH_PTHREAD=OFF
}

# inih: ini.c and ini.h are the whole library, so they are compiled
# directly rather than through its meson build, with a .pc file for
# configure's PKG_CHECK_MODULES.  Where the archive serves no source for
# it (this project's mirror has the .dsc but not the tarballs), dsroute.exe
# is built without configuration files, and says so when given -f.
build_inih() {
	if ! (cd "$work" &&
	    apt-get source -qq --download-only "libinih=$inv" &&
	    dpkg-source -x libinih_*.dsc libinih); then
		echo "deps.sh: no source of libinih $inv in the archive:" \
		    "dsroute.exe will take no -f FILE" >&2
		return 0
	fi
	mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" &&
	    $host-gcc -O2 -c "$work/libinih/ini.c" -o "$work/ini.o" &&
	    $host-ar rcs "$prefix/lib/libinih.a" "$work/ini.o" &&
	    cp "$work/libinih/ini.h" "$prefix/include/" || return 1
	cat >"$prefix/lib/pkgconfig/inih.pc" <<EOF
prefix=$prefix
Name: inih
Description: simple .INI file parser
Version: ${inv%%-*}
Libs: -L\${prefix}/lib -linih
Cflags: -I\${prefix}/include
EOF
}

install_missing gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64 cmake make \
    dpkg-dev
lev=$(source_version libevent-dev)
mtv=$(source_version libmbedtls-dev)
inv=$(source_version libinih-dev)
cache=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/win64
prefix=$cache/$lev+$mtv+$inv

if [ "$(cat "$prefix/.recipe" 2>/dev/null)" = "$recipe" ]; then
	echo "$prefix"
	exit 0
fi

add_deb_src
mkdir -p "$cache"
work=$(mktemp -d "$cache/build.XXXXXX")
log=$work/build.log
# The stamp is written last: a prefix without it is incomplete.
rm -rf "$prefix"
toolchain >"$work/toolchain.cmake"
if ! { build_libevent && build_mbedtls && build_inih; } >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "deps.sh: the Windows libraries failed to build; the log is" \
	    "$log, beside the sources" >&2
	exit 1
fi
rm -rf "$work"
echo "$recipe" >"$prefix/.recipe"
echo "$prefix"
