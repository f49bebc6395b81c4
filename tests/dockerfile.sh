#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The Dockerfile, read by a real parser (dockerfile-ast, from the npm
# registry), has the shape README.md promises: a Debian build stage that
# runs exactly ./dev.sh static, a final stage FROM scratch with no RUN,
# the binary alone, a numeric non-root USER, exec-form ENTRYPOINT and CMD,
# EXPOSE and the OCI labels.  No image is built here (tests/containers.sh
# builds and runs it).  A broken Dockerfile must fail the same checks.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/npm.sh"

npm_packages dockerfile-ast@0.7.1
CHECK=$top_srcdir/tests/lib/dockerfile-check.cjs

# checks FILE: the checker's lines for FILE.
checks() {
	node "$CHECK" "$NPM_DIR" "$1" 2>"$T/node.err" ||
	    echo "not ok: the checker ran: $(cat "$T/node.err")"
}

checks "$top_srcdir/Dockerfile" >"$T/real.out"
[ -s "$T/real.out" ] || fail "the checker reports" "$(cat "$T/node.err")"
while IFS= read -r line; do
	case "$line" in
	"ok: "*)	pass "Dockerfile: ${line#ok: }" ;;
	*)		line=${line#not ok: }
			fail "Dockerfile: ${line%%: *}" "${line#*: }" ;;
	esac
done <"$T/real.out"

# The image's version is the package's.
version=$(sed -n 's/^AC_INIT(\[dsroute\], \[\([^]]*\)\].*/\1/p' \
    "$top_srcdir/configure.ac")
like "the version label is configure.ac's $version" \
    "$(grep 'org.opencontainers.image.version=' "$top_srcdir/Dockerfile")" \
    "version=\"$version\""
like "README.md builds the image as dsroute:$version" \
    "$(grep 'docker build -t' "$top_srcdir/README.md")" \
    "docker build -t dsroute:$version \\."

# Build trees and keys stay out of the build context.
for p in .git build certs/out; do
	check ".dockerignore leaves out $p" grep -qx "$p" \
	    "$top_srcdir/.dockerignore"
done

# A Dockerfile that breaks each rule: the checker must say so.
cat >"$T/Dockerfile" <<'EOF'
FROM debian:bookworm AS build
RUN apt-get update && ./dev.sh static
FROM debian:bookworm
RUN useradd dsroute
COPY build/static/dsroute /usr/bin/dsroute
USER root
ENTRYPOINT /usr/bin/dsroute
CMD --help
EOF
checks "$T/Dockerfile" >"$T/bad.out"
for what in "the build stage runs exactly ./dev.sh static" \
    "the final stage is FROM scratch or distroless static" \
    "no RUN in the final stage" \
    "the final stage copies the static binary from the build stage" \
    "an exec-form ENTRYPOINT" "an exec-form CMD" \
    "USER is a numeric non-root uid:gid" "EXPOSE names a port" \
    "the OCI labels"; do
	check "a broken Dockerfile fails: $what" \
	    grep -q "^not ok: $what: " "$T/bad.out"
done

done_testing
