#!/bin/sh
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

build_packages="gcc make autoconf automake pkg-config libevent-dev libssl-dev"
test_packages="$build_packages libmbedtls-dev openssl mandoc socat procps psmisc"

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

# Configure (once) and build in build/$1 with the remaining configure flags.
build() {
	dir=build/$1
	shift
	[ -x configure ] && [ configure -nt configure.ac ] &&
	    [ configure -nt Makefile.am ] || ./autogen.sh >/dev/null 2>&1
	mkdir -p "$dir"
	if [ ! -f "$dir/Makefile" ] || [ "$dir/config.status" -ot configure ]; then
		(cd "$dir" && "$top/configure" -q "$@")
	fi
	make -s -C "$dir" -j"$(nproc)"
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
	build mbedtls --with-tls=mbedtls --enable-werror --enable-sanitizers
	status=0
	make -s -C build/test -j"$(nproc)" check >build/test/check.out 2>&1 ||
	    status=1
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/test/check.out || true
	if [ $status -ne 0 ]; then
		echo "dev.sh: failures; logs under build/test/tests"
	fi
	# The TLS tests again, against the mbed TLS backend.
	find build/mbedtls -name '*.trs' -exec rm -f {} +
	make -s -C build/mbedtls -j"$(nproc)" check-tls \
	    >build/mbedtls/check.out 2>&1 || status=1
	grep -E '^(FAIL|ERROR|XPASS|SKIP):' build/mbedtls/check.out |
	    sed 's/^/mbedtls /' || true
	if grep -qE '^(FAIL|ERROR|XPASS):' build/mbedtls/check.out; then
		echo "dev.sh: mbed TLS failures; logs under build/mbedtls/tests"
	fi
	summarize build/test build/mbedtls
	exit $status
	;;
*)
	echo "usage: ./dev.sh run | ./dev.sh test" >&2
	exit 2
	;;
esac
