#!/bin/sh
# SPDX-License-Identifier: ISC
#
# proc: with the real runtime: an app that is pid 1 of its own pid and
# mount namespace, with a /tmp of its own, as in a container that shares
# nothing with the router; the router finds its socket through /proc and
# the real dotnet-trace records the app's events through it.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup
command -v unshare >/dev/null || skip_all "no unshare(1)"
[ -d /mnt ] || skip_all "no /mnt to show the app in a container"
unshare --pid --fork --mount-proc --mount true 2>/dev/null ||
    skip_all "cannot make pid and mount namespaces here"

# unshare ignores SIGTERM while it waits: kill the app, its pid 1, first.
trap '[ -f "$T/c.pid" ] && pkill -KILL -P "$(cat "$T/c.pid")"; _cleanup' EXIT

PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5

# The build may be under /tmp: the app's directory is shown at /mnt first.
bg c unshare --pid --fork --kill-child --mount-proc --mount sh -c \
    'mount --bind "${0%/*}" /mnt && mount -t tmpfs none /tmp &&
    TMPDIR=/tmp exec "/mnt/${0##*/}"' "$DSAPP"
wait_for 60 has_line "$T/c.out" '^dsapp pid=1 ready$' ||
    fail "the app starts as pid 1" "$(cat "$T/c.out" "$T/c.err")"
host_pid=$(pgrep -P "$(pid_of c)")
wait_for 30 eval "ls /proc/$host_pid/root/tmp/dotnet-diagnostic-1-*-socket"

start_dsroute rt -v debug proc: tcp:127.0.0.1:0
P=$(port_of rt remote)
check "ProcessInfo through proc: reaches the app in its namespace" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo
is "... which says it is pid 1" "$(field pid "$T/tool.out")" 1
check "the router names the process it dialled" has_line "$T/rt.err" \
    "runtime=proc:/proc\(pid $host_pid uid 0\)"

start_dsroute tl "uds:$T/tool.sock" "tcp:127.0.0.1:$P,connect"
if dotnet_tool dotnet-trace; then
	check "dotnet-trace collect through proc: and a second router" \
	    collect_trace "$T/tool.sock,connect" "$T/c.nettrace"
	check "dsclient parses the trace" client dp parse "$T/c.nettrace"
	like "it holds the app's Dsroute-Test events" "$(cat "$T/dp.out")" \
	    "dsroute-test=[1-9][0-9]*"
else
	skip "dotnet-trace collect through proc:" "$why"
fi

stop_dsroute tl
stop_dsroute rt
pkill -KILL -P "$(pid_of c)"
wait "$(pid_of c)" 2>/dev/null

done_testing
