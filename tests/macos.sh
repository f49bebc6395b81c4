#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The two dsroute binaries for macOS (./dev.sh macos, cross-built with
# Zig), read, since nothing here can run them: each is a Mach-O executable
# for its CPU, built for macOS 11 and later, loading libSystem and no
# other library (libevent and mbed TLS are in it), and for arm64 signed
# (an Apple Silicon Mac runs no unsigned arm64 code; Zig signs it ad
# hoc; an Intel Mac runs unsigned code, and Zig leaves x86_64 so).  It
# imports what platform/darwin.c and libevent's kqueue back end call on
# macOS (kqueue, the peer's credentials, the process facts of sysctl and
# libproc) and nothing Linux alone has.  The test fakes for macOS were
# built beside them.  Every fact comes from tests/helpers/macho.py, which
# reads the load commands and the symbol table itself.
#
# The binaries are DSROUTE_MACOS_ARM64 and DSROUTE_MACOS_X86_64 (./dev.sh
# test sets them), or build/macos-ARCH/dsroute in the source tree;
# otherwise, or where the compiler cannot be had (DSROUTE_MACOS_SKIP, set
# by ./dev.sh test), the test is skipped, saying why.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

[ -z "${DSROUTE_MACOS_SKIP:-}" ] ||
    skip_all "the macOS build was skipped: $DSROUTE_MACOS_SKIP"
A=${DSROUTE_MACOS_ARM64:-$top_srcdir/build/macos-arm64/dsroute}
X=${DSROUTE_MACOS_X86_64:-$top_srcdir/build/macos-x86_64/dsroute}
[ -f "$A" ] && [ -f "$X" ] ||
    skip_all "no dsroute for macOS: DSROUTE_MACOS_ARM64 and DSROUTE_MACOS_X86_64 are unset and build/macos-*/dsroute are not there (./dev.sh macos builds them)"
command -v python3 >/dev/null || skip_all "python3 is not installed"

MACHO="python3 $top_srcdir/tests/helpers/macho.py"

# What macOS has not, and a dsroute for it must not ask for.
linux_only='epoll_create|epoll_create1|epoll_ctl|epoll_wait|epoll_pwait|inotify_init|inotify_init1|inotify_add_watch|accept4|prctl|splice|tee|vmsplice|pipe2|signalfd|eventfd|getrandom|fexecve|clearenv|close_range|getresuid|getresgid|reallocarray|memfd_create|sendmmsg|recvmmsg'
# What it needs: the kqueue back end, the peer's credentials, a process's
# start time, arguments and program, randomness.
needed="_kqueue _kevent _getpeereid _getsockopt _sysctl _proc_pidinfo
	_proc_pidpath _arc4random_buf"

# check_binary ARCH FILE: the facts of one binary.
check_binary() {
	arch=$1
	f=$2
	if ! $MACHO "$f" >"$T/$arch.facts" 2>"$T/$arch.err"; then
		fail "$arch: $f is a 64-bit Mach-O file" "$(cat "$T/$arch.err")"
		return
	fi
	like "$arch: the CPU is $arch" "$(grep '^cpu ' "$T/$arch.facts")" \
	    "^cpu $arch\$"
	like "$arch: an executable" "$(grep '^filetype ' "$T/$arch.facts")" \
	    '^filetype execute$'
	like "$arch: for macOS 11.0 and later" \
	    "$(grep '^minos ' "$T/$arch.facts")" '^minos 11\.0$'
	dylibs=$(sed -n 's/^dylib //p' "$T/$arch.facts")
	check "$arch: loads libSystem and no other library ($dylibs)" \
	    [ "$dylibs" = /usr/lib/libSystem.B.dylib ]
	if [ "$arch" = arm64 ]; then
		like "$arch: carries a code signature" \
		    "$(grep '^signed ' "$T/$arch.facts")" '^signed yes$'
	else
		skip "$arch: code signature ($(grep '^signed ' \
		    "$T/$arch.facts"))" "an Intel Mac runs unsigned code"
	fi
	sed -n 's/^import //p' "$T/$arch.facts" >"$T/$arch.imports"
	missing=""
	for s in $needed; do
		grep -qx -- "$s" "$T/$arch.imports" || missing="$missing $s"
	done
	check "$arch: imports kqueue, the peer's credentials and the process facts (missing:${missing:- none})" \
	    [ -z "$missing" ]
	bad=$(grep -E "^_($linux_only)(\\\$.*)?\$" "$T/$arch.imports" |
	    tr '\n' ' ')
	check "$arch: imports nothing Linux alone has (${bad:-none})" \
	    [ -z "$bad" ]
	bad=$(grep -E '^_(SSL_|EVP_|event_|evbuffer_|mbedtls_)' \
	    "$T/$arch.imports" | head -n 3 | tr '\n' ' ')
	check "$arch: libevent and mbed TLS are in it, not imported (${bad:-none})" \
	    [ -z "$bad" ]
	# What darwin.c says and the registry refuses are in the binary:
	# it is this tree's macOS build, not a Linux one.
	check "$arch: holds platform/darwin.c (its line about prctl)" \
	    grep -q 'macOS has no prctl' "$f"
	check "$arch: refuses proc: (transport.c's reason for macOS)" \
	    grep -q 'macOS has no /proc and no mount namespaces' "$f"
	check "$arch: holds libevent's kqueue back end (kqueue.c)" \
	    grep -q 'detected broken kqueue' "$f"
	fakes=$(dirname "$f")/tests
	for p in fakert faketool; do
		if [ ! -f "$fakes/$p" ]; then
			fail "$arch: the test fake $p for macOS was built" \
			    "no $fakes/$p"
			continue
		fi
		$MACHO "$fakes/$p" >"$T/$arch.$p" 2>&1
		like "$arch: the test fake $p is a Mach-O executable for $arch" \
		    "$(grep '^cpu \|^filetype ' "$T/$arch.$p" | tr '\n' ' ')" \
		    "^cpu $arch filetype execute \$"
	done
}

check_binary arm64 "$A"
check_binary x86_64 "$X"

# The reader itself refuses what is not a Mach-O file: its facts above
# were read, not assumed.
check "macho.py refuses an ELF file (the Linux dsroute)" \
    sh -c "! $MACHO '$DSROUTE' >/dev/null 2>&1"

done_testing
