#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A slow reader of an endless trace: the router's memory stays flat, and
# the back-pressure reaches the runtime instead of piling up in between.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# ASan keeps freed memory in quarantine; that would look like growth.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
export ASAN_OPTIONS

start_dsroute d "uds:$T/rt.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/rt.sock"
addr="tcp:127.0.0.1:$(port_of d remote)"
tool --timeout 10 "$addr" processinfo		# warm up
base=$(rss_kb "$(pid_of d)")

# 2 MB/s for 4 s: the runtime could write gigabytes meanwhile.
bg reader "$FAKETOOL" --timeout 4 "$addr" collect --rate 2000000
wait_for 10 has_line "$T/rt.ev" '^stream-start '
sleep 1		# measure one second into the stream, not a sync
early=$(rss_kb "$(pid_of d)")
wait_exit reader 10
late=$(rss_kb "$(pid_of d)")

read_bytes=$(field bytes "$T/reader.out")
wait_for 10 has_line "$T/rt.ev" '^stream-broken '
written=$(sed -n 's/^stream-broken [0-9]* //p' "$T/rt.ev")
echo "# rss KiB: before $base, after 1 s $early, at the end $late;" \
    "read $read_bytes, runtime wrote $written"

check "the reader got a few MB" test "${read_bytes:-0}" -gt 4000000
check "the router's memory stays flat while the reader crawls" \
    test $((late - early)) -lt 1024
check "the router holds at most a few MB for the slow reader" \
    test $((late - base)) -lt 4096
check "back-pressure reached the runtime (wrote < read + 16 MiB)" \
    test "$written" -lt $((read_bytes + 16777216))
stop_dsroute d
stop rt

done_testing
