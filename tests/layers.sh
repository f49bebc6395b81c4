#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The layers of docs/architecture.md hold: each file includes only the
# headers of its own layer and of those below it, nothing names Linux
# outside platform/linux.c, no operating system is told apart by an #if
# outside platform/ (the build picks each system's files), and the map
# names every source file, unit test, test library and test helper there
# is.
#
#	front ends	router/{main,cli,dsrouter,preset,ps,launch}.c frontend.h
#	daemon		router/{daemon,conffile,metrics_http}.c and headers
#	engine		the rest of router/
#	transports	transports/
#	platform	platform/
#	common		common/

set -u
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
cd "$top_srcdir" || exit 99

n=0
failed=0
ok() {
	n=$((n + 1))
	echo "ok $n - $1"
}
not_ok() {
	n=$((n + 1))
	failed=1
	echo "not ok $n - $1"
	printf '%s\n' "$2" | sed 's/^/# /'
}

# The layer of a project header or source file, lowest 0.
layer() {
	case $1 in
	common/*) echo 0 ;;
	platform/*) echo 1 ;;
	transports/*) echo 2 ;;
	router/main.c | router/cli.c | router/dsrouter.c | router/preset.c | \
	    router/ps.c | router/launch.c | router/frontend.h) echo 5 ;;
	router/daemon.[ch] | router/conffile.[ch] | router/metrics_http.c)
		echo 4 ;;
	router/*) echo 3 ;;
	*) echo -1 ;;
	esac
}

sources=$(ls common/*.[ch] platform/*.[ch] transports/*.[ch] router/*.[ch])

# 1. Includes go down, or stay in the layer.
up=""
for f in $sources; do
	lf=$(layer "$f")
	for h in $(sed -n 's/^#include "\([a-z]*\/[a-z0-9_]*\.h\)".*/\1/p' "$f"); do
		lh=$(layer "$h")
		[ "$lh" -ge 0 ] && [ "$lh" -gt "$lf" ] && up="$up
$f includes $h"
	done
done
if [ -z "$up" ]; then
	ok "every include goes to the file's layer or one below it"
else
	not_ok "every include goes to the file's layer or one below it" "$up"
fi

# 2. Linux's headers and names are platform/linux.c's.
linux=$(grep -ln '#include <linux/\|#include <sys/prctl.h>\|#include <sys/inotify.h>' \
    $sources | grep -v '^platform/linux\.c$')
if [ -z "$linux" ]; then
	ok "no Linux header outside platform/linux.c"
else
	not_ok "no Linux header outside platform/linux.c" "$linux"
fi

# 3. The systems are told apart only by the files built for each (the
# platform's, compat/, transports/local_SYSTEM.c), never by an #if.
osdef=$(grep -ln '#if.*\(_WIN32\|__linux__\|__APPLE__\|DSROUTE_WINDOWS\|DSROUTE_DARWIN\|__MACH__\)' \
    $sources | grep -v '^platform/')
if [ -z "$osdef" ]; then
	ok "no system is told apart by an #if above the platform"
else
	not_ok "no system is told apart by an #if above the platform" "$osdef"
fi

# 4. The map names every file it should.
map=docs/architecture.md
missing=""
for f in $sources tests/unit/*.c tests/unit/*.h tests/lib/* tests/helpers/* \
    tests/fuzz/*.c; do
	b=$(basename "$f")
	grep -q -- "$b" "$map" || missing="$missing $f"
done
if [ -z "$missing" ]; then
	ok "docs/architecture.md names every source, unit test, test library and helper"
else
	not_ok "docs/architecture.md names every source, unit test, test library and helper" \
	    "not named:$missing"
fi

# 5. ... and no file that is not there.
stale=""
for w in $(grep -o '`[a-z][a-z0-9_./-]*\.\(c\|h\|sh\|py\|cjs\)`' "$map" |
    tr -d '`' | sort -u); do
	case $w in
	*/*) [ -e "$w" ] || [ -e "tests/$w" ] || stale="$stale $w" ;;
	*)
		for d in common platform transports router tests tests/unit \
		    tests/lib tests/helpers tests/fuzz bench compat/win32 \
		    contrib/windows; do
			[ -e "$d/$w" ] && continue 2
		done
		stale="$stale $w" ;;
	esac
done
if [ -z "$stale" ]; then
	ok "docs/architecture.md names no file that is gone"
else
	not_ok "docs/architecture.md names no file that is gone" "gone:$stale"
fi

echo "1..$n"
exit $failed
