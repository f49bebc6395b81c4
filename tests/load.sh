#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Hostile and heavy load on loopback: a slowloris crowd, long command
# churn and rejected connections with no descriptor left behind, a
# descriptor limit under a flood, and a drain with traces in flight.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

CROWD=$top_builddir/tests/crowd
# RSS comparisons want live memory, not ASan's quarantine of freed blocks.
ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=0
export ASAN_OPTIONS

# crowd NAME ARGS...: run the crowd tool; its report goes to $T/NAME.out.
crowd() {
	_name=$1
	shift
	"$CROWD" "$@" >"$T/$_name.out"
}

cpu_ticks() {
	awk '{ print $14 + $15 }' "/proc/$1/stat"
}

# Slowloris: 1,000 sockets dribble a header; each is cut at the deadline
# while a real client is served at once.  They all come from 127.0.0.1,
# so the per-peer limit is lifted: the deadline alone must cut them.
start_fakert rt --listen "$T/rt.sock" --pid 8001
start_dsroute d --handshake-timeout 2 --max-sessions-per-peer 2000 \
    "uds:$T/rt.sock" tcp:127.0.0.1:0
addr="tcp:127.0.0.1:$(port_of d remote)"
bg loris "$CROWD" dribble 1000 500 15 "$addr"
wait_for 10 eval "[ \$(fd_count $(pid_of d)) -gt 900 ]"
check "slowloris: a real client is served while 1,000 dribble" \
    tool --timeout 2 "$addr" processinfo
if wait "$(pid_of loris)"; then
	pass "slowloris: all 1,000 were closed"
else
	fail "slowloris: all 1,000 were closed" "$(cat "$T/loris.out")"
fi
like "slowloris: each at the 2 s deadline, within a second" \
    "$(cat "$T/loris.out")" 'dribble: closed=1000 of 1000 min=(1\.[5-9]|2\.[0-9]|3\.0) max=(2\.[0-9]|3\.[0-2])$'
is "slowloris: none of it reached the runtime" \
    "$(grep -c '^command' "$T/rt.ev")" 1

# Churn: 100,000 commands and 10,000 rejected connections leave the
# descriptors exactly as they were and memory close to it.
tool --timeout 10 "$addr" processinfo
fds=$(fd_count "$(pid_of d)")
rss=$(rss_kb "$(pid_of d)")
check "churn: 100,000 ProcessInfo cycles all answered" \
    crowd cycles cycles 100000 "$addr"
check "churn: 10,000 garbage connections answered UNKNOWN_MAGIC, closed" \
    crowd rejects rejects 10000 "$addr"
wait_for 10 eval "[ \$(fd_count $(pid_of d)) -eq $fds ]"
is "churn: descriptors back to exactly the baseline" \
    "$(fd_count "$(pid_of d)")" "$fds"
now=$(rss_kb "$(pid_of d)")
echo "# rss KiB before $rss, after $now"
check "churn: memory back near the baseline (+1 MiB)" \
    test "$now" -lt $((rss + 1024))
stop_dsroute d
stop rt

# A 40-descriptor limit: by default the session limit is lowered to fit,
# and a flood of 100 is refused by it before accept() runs out.
start_fakert rt2 --listen "$T/rt2.sock"
bg lim0 prlimit --nofile=40 "$DSROUTE" "uds:$T/rt2.sock" tcp:127.0.0.1:0
wait_for 10 has_line "$T/lim0.err" '^info: ready$'
check "fd limit: the default session limit is lowered to fit in 40" \
    has_line "$T/lim0.err" \
    '^warn: descriptors: limit 40, [0-9]+ open: room for [0-9]+ sessions; --max-sessions lowered from 1024 to [0-9]+$'
addr="tcp:127.0.0.1:$(port_of lim0 remote)"
mkfifo "$T/flood0.fifo"
bg flood0 sh -c "exec \"$CROWD\" hold 100 1 \"$addr\" <>\"$T/flood0.fifo\""
wait "$(pid_of flood0)"
check "fd limit: the flood is refused by the session limit" \
    has_line "$T/lim0.err" 'refused a connection from loopback: [0-9]+ sessions are open \(--max-sessions\)'
is "fd limit: so accept() never ran out of descriptors" \
    "$(count_lines "$T/lim0.err" 'cannot accept')" 0
check "fd limit: served once the flood is gone" \
    tool --timeout 5 "$addr" processinfo
stop_dsroute lim0

# With limits that do not fit, a flood of 100: accepting pauses instead
# of spinning, nothing crashes, and it recovers once descriptors free.
bg lim prlimit --nofile=40 "$DSROUTE" --max-sessions 1000 \
    --max-sessions-per-peer 1000 "uds:$T/rt2.sock" tcp:127.0.0.1:0
wait_for 10 has_line "$T/lim.err" '^info: ready$'
check "fd limit: a --max-sessions that does not fit is kept, with a warning" \
    has_line "$T/lim.err" \
    '^warn: descriptors: limit 40, [0-9]+ open: room for [0-9]+ sessions, not the 1000 of --max-sessions'
addr="tcp:127.0.0.1:$(port_of lim remote)"
mkfifo "$T/hold"
bg flood sh -c "exec \"$CROWD\" hold 100 30 \"$addr\" <\"$T/hold\""
exec 9>"$T/hold"
wait_for 10 has_line "$T/flood.out" '^hold: opened='
check "fd limit: out of descriptors is logged" \
    wait_for 5 has_line "$T/lim.err" 'cannot accept .*pausing'
t0=$(cpu_ticks "$(pid_of lim)")
sleep 2		# measure CPU over two seconds at the limit, not a sync
t1=$(cpu_ticks "$(pid_of lim)")
echo "# CPU ticks at the limit over 2 s: $((t1 - t0))"
check "fd limit: no spinning at the limit (under 0.2 s of CPU in 2 s)" \
    test $((t1 - t0)) -lt 20
exec 9>&-
wait "$(pid_of flood)"
start=$(date +%s%N)
check "fd limit: accepting again once the flood is gone" \
    tool --timeout 5 "$addr" processinfo
echo "# recovered in $(( ($(date +%s%N) - start) / 1000000 )) ms"
check "fd limit: the router is still up" alive lim
stop_dsroute lim
stop rt2

# SIGTERM with five 8 MiB traces in flight: all finish, then exit 0.
start_dsroute dr --shutdown-timeout 30 "uds:$T/rt3.sock" tcp:127.0.0.1:0
start_fakert rt3 --connect "$T/rt3.sock" --stream-bytes 8388608
addr="tcp:127.0.0.1:$(port_of dr remote)"
for i in 1 2 3 4 5; do
	bg "tr$i" "$FAKETOOL" --timeout 30 "$addr" collect \
	    --expect-bytes 8388608 --rate 4000000
done
wait_for 10 eval "[ \$(grep -c '^stream-start' '$T/rt3.ev') -eq 5 ]"
kill "$(pid_of dr)"
ok_all=0
for i in 1 2 3 4 5; do
	wait "$(pid_of "tr$i")" || ok_all=1
done
is "SIGTERM: all five in-flight traces completed in full" "$ok_all" 0
same=0
for i in 1 2 3 4 5; do
	id=$(field session "$T/tr$i.out")
	[ "$(field sha256 "$T/tr$i.out")" = \
	    "$(sed -n "s/^stream-end $id 8388608 //p" "$T/rt3.ev")" ] &&
	    same=$((same + 1))
done
is "SIGTERM: each with the SHA-256 its runtime session sent" "$same" 5
stop_dsroute dr
stop rt3

done_testing
