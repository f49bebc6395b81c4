#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The Debian package (debian/): dpkg-buildpackage builds it from a copy of
# the git tree in the test's directory (it writes next to the source, so
# never next to the repository), lintian finds no error in it, and dpkg
# installs it into a root of its own with an empty database, where the
# program runs and the man pages render.  Installed there, not into /,
# so that the machine running the suite keeps no package, unit or user,
# even when the test stops half-way; the dependencies are resolved
# against this machine by apt-get --simulate.
#
# Not in TESTS: ./dev.sh test runs it once, after the suite (make check
# TESTS=tests/deb.sh).  It builds the package from the git tree, which a
# release tarball is not, and builds dsroute once more.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

for t in dpkg-buildpackage dh lintian fakeroot mandoc apt-get git; do
	command -v "$t" >/dev/null ||
	    skip_all "$t is not installed (./dev.sh test installs it)"
done
git -C "$top_srcdir" rev-parse --git-dir >/dev/null 2>&1 ||
    skip_all "$top_srcdir is not a git checkout; the package is built from one"

# What the package must hold, besides /usr/bin/dsroute.
man_pages="/usr/share/man/man1/dsroute.1.gz /usr/share/man/man5/dsroute.conf.5.gz"
units="dsroute@.service dsroute@.socket"
example=/usr/share/doc/dsroute/examples/example.conf
# dh_compress compresses the larger documents.
docs="/usr/share/doc/dsroute/README.md /usr/share/doc/dsroute/README.systemd.md"

# What dev.sh installs to build dsroute, the package builds with: each of
# build_packages (but the compiler and make, which build-essential brings)
# is in Build-Depends.
build_deps=$(awk '/^Build-Depends:/ { f = 1; sub(/^[^:]*:/, ""); print; next }
    f && /^ / { print; next } { f = 0 }' "$top_srcdir/debian/control" |
    tr ',' '\n' | sed 's/^ *//; s/[ (<].*//')
for p in $(sed -n '/^build_packages="/,/"/p' "$top_srcdir/dev.sh" |
    sed 's/^build_packages=//' | tr -d '"'); do
	case $p in gcc|make) continue ;; esac
	check "Build-Depends has $p, which dev.sh builds with" \
	    sh -c 'printf "%s\n" "$1" | grep -qx "$0"' "$p" "$build_deps"
done

# The tree as it is, tracked files and new ones that git does not ignore.
status_before=$(git -C "$top_srcdir" status --porcelain)
# What a package build writes beside its source: dsroute_*.deb, .changes,
# .buildinfo, dsroute-dbgsym_*.  Only those: the parent may be a busy
# directory such as /tmp, where other programs come and go.
package_files() {
	ls -a "$top_srcdir/.." | grep -E '^dsroute(-dbgsym)?_' || true
}
parent_before=$(package_files)
mkdir "$T/dsroute"
(cd "$top_srcdir" && git ls-files -z -co --exclude-standard) |
    (cd "$top_srcdir" && tar -cf - --null -T -) | tar -xf - -C "$T/dsroute"

# debian/rules runs its quick tests in the package's own build.
if (cd "$T/dsroute" && DEB_BUILD_OPTIONS="parallel=$(nproc)" \
    dpkg-buildpackage -us -uc -b) >"$T/build.out" 2>&1; then
	pass "dpkg-buildpackage -us -uc -b builds the package"
else
	fail "dpkg-buildpackage -us -uc -b builds the package" \
	    "$(tail -n 30 "$T/build.out")"
	done_testing
	exit
fi
set -- "$T"/dsroute_*.deb
deb=$1
set -- "$T"/dsroute_*.changes
changes=$1
version=$(dpkg-deb -f "$deb" Version)

# lintian, on every package of the build: no error; its warnings are
# shown, and are for review.  It fails only when it cannot check.
if lintian --fail-on none "$changes" >"$T/lintian.out" 2>"$T/lintian.err"
then
	is "lintian reports no error" "$(grep -c '^E:' "$T/lintian.out")" 0
	grep -E '^(E|W):' "$T/lintian.out" | sed 's/^/# lintian: /'
else
	fail "lintian reports no error" "lintian failed: $(cat "$T/lintian.err")"
fi

if apt-get -s install "$deb" >"$T/apt.out" 2>&1; then
	pass "apt-get resolves the dependencies on this machine"
else
	fail "apt-get resolves the dependencies on this machine" \
	    "$(tail -n 10 "$T/apt.out")"
fi

R=$T/root
mkdir -p "$R/var/lib/dpkg/info" "$R/var/lib/dpkg/updates"
: >"$R/var/lib/dpkg/status"
# The maintainer scripts run here, not chrooted into the empty root, with
# DPKG_ROOT naming it, which debhelper's snippets honour.  Not as root,
# fakeroot lets dpkg give the files their owners.
asroot=""
[ "$(id -u)" -eq 0 ] || asroot=fakeroot
if $asroot dpkg --root="$R" --force-not-root --force-depends \
    --force-script-chrootless -i "$deb" >"$T/dpkg.out" 2>&1; then
	pass "dpkg installs it"
else
	fail "dpkg installs it" "$(cat "$T/dpkg.out")"
fi
dpkg --root="$R" -L dsroute >"$T/files" 2>&1

for f in /usr/bin/dsroute $man_pages $example /etc/dsroute; do
	check "dpkg -L lists $f" grep -qx "$f" "$T/files"
done
for f in $docs; do
	check "dpkg -L lists $f" grep -Eqx "$f(\.gz)?" "$T/files"
done
for u in $units; do
	check "dpkg -L lists the unit $u" \
	    grep -Eqx "(/usr)?/lib/systemd/system/$u" "$T/files"
done
# Where the package put them is where its README.systemd.md says.
unitdir=$(grep -E '^(/usr)?/lib/systemd/system/dsroute@\.service$' "$T/files" |
    sed 's|/dsroute@\.service$||')
readme=$R/usr/share/doc/dsroute/README.systemd.md
[ -f "$readme" ] || { [ -f "$readme.gz" ] && gzip -dc "$readme.gz" >"$T/rs.md" &&
    readme=$T/rs.md; }
check "README.systemd.md names $unitdir/, where the units are" \
    grep -q "\`$unitdir/\`" "$readme"
check "the package makes the user the unit runs as" \
    grep -q '^dsroute:x:[0-9]*:[0-9]*:.*:/usr/sbin/nologin$' "$R/etc/passwd"
# Why not: debian/rules.
check "no /usr/bin/dotnet-dsrouter" \
    sh -c '! grep -q dotnet-dsrouter "$0"' "$T/files"

is "the installed dsroute --version is the package's" \
    "$("$R/usr/bin/dsroute" --version 2>&1)" "dsroute $version"

for m in $man_pages; do
	if mandoc -T ascii "$R$m" >"$T/page" 2>"$T/page.err"; then
		like "mandoc renders $m" \
		    "$(sed 's/.\x08//g' "$T/page" | grep -A1 '^NAME$' | tail -n 1)" \
		    '^ +dsroute'
	else
		fail "mandoc renders $m" "$(cat "$T/page.err")"
	fi
done

# Purged, it leaves only what dpkg does not own: the user, the lock of
# the user database, and dpkg's own files.
if $asroot dpkg --root="$R" --force-not-root --force-script-chrootless \
    -P dsroute >"$T/purge.out" 2>&1; then
	is "dpkg purges it, and no file of it is left" \
	    "$(cd "$R" && find . ! -type d ! -path './var/lib/dpkg/*' \
	    ! -path './etc/passwd*' ! -path './etc/group*' \
	    ! -path './etc/shadow*' ! -path './etc/gshadow*' \
	    ! -path './etc/.pwd.lock' | sort)" ""
else
	fail "dpkg purges it, and no file of it is left" "$(cat "$T/purge.out")"
fi

is "the repository is as it was" \
    "$(git -C "$top_srcdir" status --porcelain)" "$status_before"
is "no package file was written next to the repository" \
    "$(package_files)" "$parent_before"

done_testing
