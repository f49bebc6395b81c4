#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The router under an LD_PRELOAD shim that makes every socket read and
# write move a random 1..n bytes and fail with EAGAIN one time in ten:
# streams stay byte-identical and commands complete.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

STREAM=67108864
SHIM=$top_builddir/tests/shortio.so
# The shim comes before ASan's runtime in the library list.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}verify_asan_link_order=0
export ASAN_OPTIONS


# stream_through DESC ADDR RUNTIME
stream_through() {
	tool --timeout 120 "$2" collect --expect-bytes $STREAM
	id=$(field session "$T/tool.out")
	wait_for 10 has_line "$T/$3.ev" "^stream-end $id "
	is "$1: 64 MiB, same SHA-256 at both ends" \
	    "$(field sha256 "$T/tool.out")" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/$3.ev")"
	check "$1: 20 commands in a row" \
	    tool --timeout 60 "$2" repeat 20 processinfo
}

bg d env LD_PRELOAD="$SHIM" "$DSROUTE" "uds:$T/rt.sock" tcp:127.0.0.1:0
wait_for 10 has_line "$T/d.err" '^info: ready$'
start_fakert rt --connect "$T/rt.sock" --stream-bytes $STREAM
stream_through "runtime on uds, tool on tcp" \
    "tcp:127.0.0.1:$(port_of d remote)" rt
stop_dsroute d
stop rt

bg d2 env LD_PRELOAD="$SHIM" "$DSROUTE" "uds:$T/tool.sock" \
    tcp:127.0.0.1:0,advertise=any
wait_for 10 has_line "$T/d2.err" '^info: ready$'
start_fakert rt2 --connect "tcp:127.0.0.1:$(port_of d2 remote)" \
    --stream-bytes $STREAM
stream_through "runtime on tcp, tool on uds" "$T/tool.sock,connect" rt2
stop_dsroute d2
stop rt2

done_testing
