#!/bin/sh
#
# Copyright (c) 2026 The dsroute authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
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
