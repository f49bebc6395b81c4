#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced by the tests that check files with JavaScript packages from the
# npm registry (tests/dockerfile.sh, tests/deploy.sh).  Each set of
# packages, at pinned versions, is installed once into a directory of the
# cache named after them, outside the repository, which later runs reuse;
# without node, npm or the registry the test is skipped, saying why.

command -v node >/dev/null || skip_all "node is not installed (./dev.sh test installs nodejs)"
command -v npm >/dev/null || skip_all "npm is not installed (./dev.sh test installs it)"

NPM_CACHE=${DSROUTE_NPM_CACHE:-${XDG_CACHE_HOME:-${HOME:-/tmp}/.cache}/dsroute/npm}

# npm_packages PKG@VERSION...: install them (once) and set NPM_DIR to the
# directory whose node_modules holds them.
npm_packages() {
	NPM_DIR=$NPM_CACHE/$(echo "$*" | tr ' /' '+_')
	[ -f "$NPM_DIR/.installed" ] && return 0
	mkdir -p "$NPM_DIR" || skip_all "cannot make $NPM_DIR"
	echo '{"private": true}' >"$NPM_DIR/package.json"
	if ! (cd "$NPM_DIR" && npm install --no-audit --no-fund \
	    --fetch-retries=1 --loglevel=error "$@") >"$T/npm.out" 2>&1; then
		skip_all "npm could not install $*: $(grep -m 1 'npm error' \
		    "$T/npm.out" || tail -n 1 "$T/npm.out")"
	fi
	: >"$NPM_DIR/.installed"
}
