#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The manual pages are mdoc that mandoc(1) reads without a warning, and
# every long option of dsroute --help appears in dsroute(1), so that the
# two cannot drift apart.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

command -v mandoc >/dev/null 2>&1 || skip_all "mandoc(1) is not installed"
for page in dsroute.1 dsroute.conf.5; do
	if out=$(mandoc -T lint -W warning "$top_srcdir/man/$page" 2>&1); then
		pass "$page: mandoc -T lint, no warning"
	else
		fail "$page: mandoc -T lint, no warning" "$out"
	fi
done
"$DSROUTE" --help >"$T/help" 2>&1
mandoc -T ascii "$top_srcdir/man/dsroute.1" | sed "s/.\\x08//g" >"$T/page"
for opt in $(grep -Eo -- '--[a-z][a-z-]+' "$T/help" | sort -u); do
	check "$opt of --help is in dsroute(1)" grep -q -- "$opt" "$T/page"
done
done_testing
