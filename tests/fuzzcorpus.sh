#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Replay every fuzz target's committed corpus (seeds, and inputs that once
# found bugs) through the target's own checks, under this build's
# sanitizers.  One TAP line per input.  FUZZ_NAMES, from make check,
# names the targets this build has.

set -u
# Alone, the build ./dev.sh test made, and every target it has.
: "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}"
: "${top_builddir:=$top_srcdir/build/test}"
if [ -z "${FUZZ_NAMES:-}" ]; then
	for d in "$top_srcdir"/tests/fuzz/corpus/*/; do
		d=$(basename "$d")
		[ -x "$top_builddir/tests/fuzz/replay_$d" ] &&
		    FUZZ_NAMES="${FUZZ_NAMES:-} $d"
	done
fi
n=0
failed=0
for target in ${FUZZ_NAMES:?run by make check}; do
	out=$("$top_builddir/tests/fuzz/replay_$target" \
	    "$top_srcdir/tests/fuzz/corpus/$target" 2>&1)
	rc=$?
	printf '%s\n' "$out" | grep -E '^(not )?ok ' |
	    sed -E "s/^(not )?ok [0-9]+ - /\1ok - $target: /"
	n=$((n + $(printf '%s\n' "$out" | grep -cE '^(not )?ok ')))
	if [ $rc -ne 0 ]; then
		failed=1
		echo "not ok - $target: replay aborted"
		n=$((n + 1))
		printf '%s\n' "$out" | grep -vE '^(not )?ok |^1\.\.' |
		    sed 's/^/# /' | tail -n 20
	fi
done
echo "1..$n"
exit $failed
