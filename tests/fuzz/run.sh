#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Run each named libFuzzer target for FUZZ_SECONDS (default 60), starting
# from its committed corpus, from the build directory.  New inputs go to
# fuzz-work/TARGET, crashes to fuzz-artifacts/; each target's result is
# written as an automake .trs so that the CI summary counts it.

set -u
seconds=${FUZZ_SECONDS:-60}
srcdir=$(cd "$(dirname "$0")" && pwd)
status=0

for target in "$@"; do
	bin=tests/fuzz/fuzz_$target
	work=fuzz-work/$target
	mkdir -p "$work" fuzz-artifacts
	log=fuzz-$target.log
	echo "fuzz: $target for ${seconds}s"
	if "$bin" -max_total_time="$seconds" -timeout=5 -rss_limit_mb=1024 \
	    -max_len=66000 -dict="$srcdir/$target.dict" \
	    -artifact_prefix=fuzz-artifacts/"$target"- -print_final_stats=1 \
	    "$work" "$srcdir/corpus/$target" >"$log" 2>&1; then
		result=PASS
	else
		result=FAIL
		status=1
		tail -n 30 "$log"
	fi
	grep -E '^stat::number_of_executed_units' "$log" | sed "s/^/fuzz: $target: /"
	echo "fuzz: $target: $result"
	printf ':test-result: %s\n:global-test-result: %s\n' "$result" \
	    "$result" >"fuzz-$target.trs"
done
exit $status
