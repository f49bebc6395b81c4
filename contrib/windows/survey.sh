#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The compile survey behind docs/windows-port.md: every C file of
# libdsroute (Makefile.am's libdsroute_a_SOURCES, with tls_mbedtls.c) and
# of the front ends, put through x86_64-w64-mingw32-gcc -fsyntax-only with
# the project's warnings, twice:
#
#	raw	as the tree is, with a hand-written mingw config.h: the first
#		header mingw lacks stops each file;
#	shim	with the mechanical part of a port stood in: Winsock for the
#		BSD socket headers, <afunix.h> for <sys/un.h>, the BSD
#		<sys/queue.h>, uid_t and gid_t typedefs, and empty headers for
#		the rest (pwd.h, grp.h, sys/wait.h, ...), so what is left is
#		what needs real work.
#
# The config.h and the shims live in a scratch directory, never in the
# tree.  Logs go to the directory given (default: a new one under /tmp);
# the last line printed is that directory.  Needs deps.sh's prefix for
# libevent's and mbed TLS's headers.  Not part of the test suite.

set -eu
cd "$(dirname "$0")/../.."
top=$(pwd)
out=${1:-$(mktemp -d /tmp/dsroute-survey.XXXXXX)}
mkdir -p "$out"
prefix=$(sh contrib/windows/deps.sh | tail -n 1)
s=$(mktemp -d)
trap 'rm -rf "$s"' EXIT INT TERM

mkdir -p "$s/inc" "$s/shim/sys" "$s/shim/netinet" "$s/shim/arpa" \
    "$s/shim/linux"
version=$(sed -n 's/^AC_INIT(\[dsroute\], \[\([^]]*\)\].*/\1/p' configure.ac)
cat >"$s/inc/config.h" <<EOF
/* config.h for x86_64-w64-mingw32, by hand, for a -fsyntax-only survey. */
#define PACKAGE "dsroute"
#define PACKAGE_NAME "dsroute"
#define PACKAGE_STRING "dsroute $version"
#define PACKAGE_TARNAME "dsroute"
#define PACKAGE_BUGREPORT ""
#define PACKAGE_URL ""
#define PACKAGE_VERSION "$version"
#define VERSION "$version"
#define TLS_BACKEND "mbedtls"
#define HAVE_INTTYPES_H 1
#define HAVE_STDINT_H 1
#define HAVE_STDIO_H 1
#define HAVE_STDLIB_H 1
#define HAVE_STRINGS_H 1
#define HAVE_STRING_H 1
#define HAVE_SYS_STAT_H 1
#define HAVE_SYS_TYPES_H 1
#define HAVE_UNISTD_H 1
#define HAVE_WCHAR_H 1
#define STDC_HEADERS 1
/* AC_USE_SYSTEM_EXTENSIONS defines these on every host. */
#define _ALL_SOURCE 1
#define _GNU_SOURCE 1
#define _POSIX_PTHREAD_SEMANTICS 1
#define __EXTENSIONS__ 1
/* Not here: HAVE_SYS_PRCTL_H, HAVE_SYS_INOTIFY_H, HAVE_CLOSE_RANGE. */
EOF
for h in sys/socket.h netinet/in.h netinet/tcp.h arpa/inet.h netdb.h \
    poll.h; do
	printf '#include <winsock2.h>\n#include <ws2tcpip.h>\n' >"$s/shim/$h"
done
printf '#include <winsock2.h>\n#include <afunix.h>\n' >"$s/shim/sys/un.h"
cp /usr/include/x86_64-linux-gnu/sys/queue.h "$s/shim/sys/queue.h"
for h in pwd.h grp.h sys/wait.h sys/prctl.h sys/resource.h fnmatch.h \
    sys/random.h linux/sockios.h sys/ioctl.h; do
	: >"$s/shim/$h"
done
printf 'typedef unsigned int uid_t;\ntypedef unsigned int gid_t;\n' \
    >"$s/inc/ids.h"

files=$(sed -n '/^libdsroute_a_SOURCES = /,/^[^	]/p' Makefile.am |
    tr ' \\' '\n\n' | grep '\.c$')
files="$files transports/tls_mbedtls.c router/main.c router/cli.c
    router/dsrouter.c router/preset.c router/ps.c"
cc="x86_64-w64-mingw32-gcc -fsyntax-only -I$s/inc -I$top -I$prefix/include
    -Wall -Wextra -Wformat=2 -Wmissing-prototypes -Wstrict-prototypes
    -Wshadow -Wpointer-arith -Wno-unused-parameter"
: >"$out/summary"
for f in $files; do
	b=$(echo "$f" | tr / _)
	r=0
	$cc "$f" >"$out/$b.raw" 2>&1 || r=$?
	q=0
	$cc -I"$s/shim" -include "$s/inc/ids.h" "$f" >"$out/$b.shim" 2>&1 ||
	    q=$?
	first=$(sed -n 's/.*fatal error: \(.*\): No such file.*/\1/p' \
	    "$out/$b.raw" | head -n 1)
	errs=$(grep -c 'error:' "$out/$b.shim" || true)
	impl=$(grep -c 'implicit declaration' "$out/$b.shim" || true)
	printf '%-26s raw=%s %-18s shim=%s errors=%s implicit=%s\n' "$f" \
	    "$r" "${first:--}" "$q" "$errs" "$impl" >>"$out/summary"
done
cat "$out/summary"
echo "$out"
