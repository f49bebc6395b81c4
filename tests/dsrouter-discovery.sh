#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Finding the router by its pid, as the tools do: without -ipcs it listens
# on $TMPDIR/dotnet-diagnostic-dsrouter-PID-KEY-socket, next to a socket
# named like a runtime's, created first, that `dotnet-trace ps` lists and
# that forwards to it; `-p PID` resolves to the router's.  With dotnet
# here, the real dotnet-trace finds it and traces through it.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/dsrouter.sh"

STREAM=1048576

# starttime PID: field 22 of its stat, counted after the command's ')'.
starttime() {
	sed 's/.*) //' "/proc/$1/stat" | cut -d' ' -f20
}

dsr d1 /dev/null server-server -tcps 127.0.0.1:0
pid=$(pid_of d1)
router=$(default_socket d1)
plain=$(default_socket d1 "")
check "the router's socket: dotnet-diagnostic-dsrouter-PID-KEY-socket" \
    test -S "$router"
check "its sibling: dotnet-diagnostic-PID-KEY-socket" test -S "$plain"
is "both have the same key" "${router##*-dsrouter-}" "${plain##*diagnostic-}"
key=${plain##*diagnostic-$pid-}
key=${key%-socket}
is "the key is the start time by the runtime's rule (/proc/PID/stat)" \
    "$key" "$(starttime "$pid")"
is "both are the router user's only" "$(stat -c %a "$router" "$plain" |
    tr '\n' ' ')" "600 600 "
check "the router's socket is no older than its sibling" no_older \
    "$router" "$plain"
is "dotnet-trace ps's pattern finds the router's pid" \
    "$(ls "$T" | sed -En 's/^dotnet-diagnostic-([0-9]+)-([0-9]+)-socket$/\1/p')" \
    "$pid"
is "-p PID resolves to the router's socket" "$(resolve_pid "$T" "$pid")" \
    "$router"

start_fakert rt1 --connect "tcp:127.0.0.1:$(tcp_port d1)" --pid 4001 \
    --stream-bytes $STREAM
processinfo "ProcessInfo through the socket -p resolves to" \
    "$(resolve_pid "$T" "$pid"),connect" 4001
processinfo "ProcessInfo through the sibling" "$plain,connect" 4001
check "... which forwards to the router's socket" has_line "$T/d1.err" \
    'route=pid-socket command=ProcessInfo .*runtime=uds:.*-dsrouter-'
if tool --timeout 30 "$(resolve_pid "$T" "$pid"),connect" collect \
    --expect-bytes $STREAM; then
	id=$(field session "$T/tool.out")
	wait_for 10 has_line "$T/rt1.ev" "^stream-end $id "
	is "a stream through the -p socket arrives whole" \
	    "$(field sha256 "$T/tool.out")" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/rt1.ev")"
else
	fail "a stream through the -p socket arrives whole" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi

# The real client library, when dotnet is here.
if dotnet_trace; then
	"$DOTNET_TRACE" ps >"$T/ps.out" 2>&1
	like "dotnet-trace ps lists the router" "$(cat "$T/ps.out")" \
	    "^ *$pid +dsroute "
	TMPDIR=$T "$DOTNET_TRACE" collect -p "$pid" --duration 00:00:00:30 \
	    -o "$T/trace.nettrace" >"$T/dotnet-trace.out" 2>&1
	is "dotnet-trace collect -p PID: exit status 0" "$?" 0
	id=$(sed -n 's/^stream-start //p' "$T/rt1.ev" | tail -n 1)
	is "dotnet-trace collect -p PID: the runtime's whole stream" \
	    "$(sha256sum <"$T/trace.nettrace" | cut -d' ' -f1)" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/rt1.ev")"
	like "dotnet-trace -p went through the router's socket" \
	    "$(grep 'command=CollectTracing' "$T/d1.err" | tail -n 1)" \
	    "tool=uds:$router"
else
	skip "dotnet-trace ps lists the router" "$why"
	skip "dotnet-trace collect -p PID traces through the router" "$why"
fi
stop rt1
stop_dsroute d1
check "both sockets are removed at exit" eval "[ ! -e '$router' ] &&
    [ ! -e '$plain' ]"

# A squatter who guessed the name (the start time is no secret) does not
# stop the router: it takes a random key, and -p finds it all the same.
# The wrapper plants the name for its own pid, which dsroute keeps.
bg sq sh -c 'k=$(sed "s/.*) //" /proc/$$/stat | cut -d" " -f20)
: >"$0/dotnet-diagnostic-dsrouter-$$-$k-socket"
exec env TMPDIR="$0" "$@"' "$T" "$DSROUTE" server-server -tcps 127.0.0.1:0
if wait_for 10 has_line "$T/sq.err" '^info: ready$'; then
	pass "a planted default name does not stop the router"
else
	fail "a planted default name does not stop the router" \
	    "$(cat "$T/sq.err")"
fi
check "it says so" has_line "$T/sq.err" \
    "^warn: .*dotnet-diagnostic-dsrouter-$(pid_of sq)-.* is taken already"
planted="$T/dotnet-diagnostic-dsrouter-$(pid_of sq)-$(starttime \
    "$(pid_of sq)")-socket"
check "the planted file is left alone" test -f "$planted" -a ! -s "$planted"
is "-p PID resolves to the router's own socket, another key" \
    "$(resolve_pid "$T" "$(pid_of sq)")" "$(ls -t \
    "$T"/dotnet-diagnostic-dsrouter-"$(pid_of sq)"-*-socket | head -n 1)"
check "which is a socket" test -S "$(resolve_pid "$T" "$(pid_of sq)")"
stop_dsroute sq
rm -f "$planted"

# An explicit -ipcs has no sibling: -p means nothing for it.
dsr d2 /dev/null server-server -ipcs "$T/d2.sock" -tcps 127.0.0.1:0
is "with -ipcs, no default socket" "$(ls "$T" | grep -c '^dotnet-diag')" 0
stop_dsroute d2

# TMPDIR with a trailing slash, and none at all (then /tmp).
TMPDIR=$T/ "$DSROUTE" server-client -tcpc 127.0.0.1:1 </dev/null \
    >"$T/d3.out" 2>"$T/d3.err" &
echo $! >"$T/d3.pid"
_pids="$_pids $!"
wait_for 10 has_line "$T/d3.err" '^info: ready$'
check "TMPDIR ending in /: one slash in the path" test -S \
    "$(default_socket d3)"
stop_dsroute d3
env -u TMPDIR "$DSROUTE" server-client -tcpc 127.0.0.1:1 </dev/null \
    >"$T/d4.out" 2>"$T/d4.err" &
echo $! >"$T/d4.pid"
_pids="$_pids $!"
wait_for 10 has_line "$T/d4.err" '^info: ready$'
check "no TMPDIR: the sockets are in /tmp" test -S \
    "$(echo /tmp/dotnet-diagnostic-dsrouter-"$(pid_of d4)"-*-socket)"
stop_dsroute d4
check "no TMPDIR: removed at exit" eval "! ls /tmp | grep -q \
    'dotnet-diagnostic-.*$(pid_of d4)-'"

done_testing
