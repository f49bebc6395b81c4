#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The two set-up commands of README.md, for a fresh Debian or Ubuntu machine:
#
#	./dev.sh run	build dsroute and start it on sensible defaults
#	./dev.sh test	build it with every check on and run the whole test suite,
#			then build it with mbed TLS and run the TLS tests again
#
# Each installs the Debian packages it needs that are missing (with sudo
# when not root) and builds out of tree, under build/.

set -eu
cd "$(dirname "$0")"
top=$(pwd)

build_packages="gcc make autoconf automake pkg-config libevent-dev libssl-dev
    libinih-dev"
test_packages="$build_packages libmbedtls-dev openssl mandoc socat procps psmisc
    util-linux valgrind iproute2 systemd python3 man-db"

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
	tests/badinput.sh tests/isolation.sh tests/teardown.sh tests/faults.sh"

# Configure (once) and build in build/$1 with the remaining configure flags.
build() {
	dir=build/$1
	shift
	mkdir -p build
	[ -x configure ] && [ configure -nt configure.ac ] &&
	    [ configure -nt Makefile.am ] || ./autogen.sh >/dev/null 2>&1
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ "$dir/config.status" -ot configure ]; then
		(cd "$dir" && "$top/configure" -q "$@")
	fi
	make -s -C "$dir" -j"$(nproc)"
}

# The mbed TLS build must stand without OpenSSL's development files: it is
# configured with a pkg-config directory holding only the .pc files it
# needs, not OpenSSL's.  The directory stays, because config.status runs
# configure again with it when configure.ac or Makefile.am change.
nossl_pc=$top/build/pc-no-openssl
hide_openssl() {
	mkdir -p "$nossl_pc"
	for m in libevent_core inih; do
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

# Print "N passed, N failed[, N skipped]" from the automake results
# under the directories given.
summarize() {
	find "$@" -name '*.trs' -exec cat {} + | awk '
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

case "${1:-}" in
run)
	install_missing $build_packages
	build run
	mkdir -p /tmp/dsroute
	chmod 0700 /tmp/dsroute
	echo "dev.sh: starting build/run/dsroute; stop it with Ctrl-C"
	exec build/run/dsroute uds:/tmp/dsroute/app.sock tcp:127.0.0.1:9000
	;;
test)
	install_missing $test_packages
	build test --enable-werror --enable-sanitizers
	hide_openssl
	build mbedtls --with-tls=mbedtls --enable-werror --enable-sanitizers \
	    PKG_CONFIG_LIBDIR="$nossl_pc" PKG_CONFIG_PATH=
	status=0
	# Count only this run's results.
	find build -name '*.trs' -exec rm -f {} +
	if check_no_openssl; then
		result=PASS
	else
		result=FAIL
		status=1
	fi
	printf ':test-result: %s\n' $result >build/mbedtls/no-openssl.trs
	make -s -C build/test -j"$(nproc)" check >build/test/check.out 2>&1 ||
	    status=1
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/test/check.out || true
	if [ $status -ne 0 ]; then
		echo "dev.sh: failures; logs under build/test/tests"
	fi
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
	summarize build
	exit $status
	;;
*)
	echo "usage: ./dev.sh run | ./dev.sh test" >&2
	exit 2
	;;
esac
