#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute installed as dotnet-dsrouter next to the real dotnet-trace:
# `dotnet-trace collect --dsrouter android` starts it (with --block-signals
# and --parentprocess), finds it by its pid, traces the fake runtime that
# dials 127.0.0.1:9001 through it, and stops it with Q; the fake adb in
# PATH sees the reverse rule added and removed.  Then the same with a real
# .NET runtime (the interop application), whose diagnostic port reaches
# 127.0.0.1:9001 through a second dsroute.  Then the scenarios that
# would compare it with dotnet-dsrouter itself, which does not install
# here.  dotnet-trace is installed first, while the network is there; the
# rest runs in a network namespace of its own (the ports are fixed).

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/dsrouter.sh"
[ -n "${DSR_NETNS:-}" ] || dsapp >/dev/null 2>&1 || true
. "$top_srcdir/tests/lib/netns.sh"
. "$top_srcdir/tests/lib/lib.sh"

STREAM=4194304

if ! dotnet_trace; then
	skip "dotnet-trace collect --dsrouter android runs dsroute" "$why"
else
	ln -sf "$DSROUTE" "$DOTNET_TOOLS/dotnet-dsrouter"
	mkdir "$T/bin"
	cat >"$T/bin/adb" <<'ADB'
#!/bin/sh
echo "$*" >>"${ADB_LOG:?}"
exit 0
ADB
	chmod +x "$T/bin/adb"
	ADB_LOG=$T/adb.log
	export ADB_LOG
	: >"$ADB_LOG"

	start_fakert rt1 --connect tcp:127.0.0.1:9001 --pid 6001 \
	    --stream-bytes $STREAM
	PATH=$T/bin:$PATH TMPDIR=$T timeout 120 "$DOTNET_TRACE" collect \
	    --dsrouter android --duration 00:00:01:00 -o "$T/trace.nettrace" \
	    </dev/null >"$T/dotnet-trace.out" 2>&1
	is "dotnet-trace --dsrouter android: exit status 0" "$?" 0
	id=$(sed -n 's/^stream-start //p' "$T/rt1.ev" | tail -n 1)
	is "the runtime's whole stream is in the trace" \
	    "$(sha256sum <"$T/trace.nettrace" | cut -d' ' -f1)" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/rt1.ev")"
	like "dotnet-trace ran dsroute" "$(cat "$T/dotnet-trace.out")" \
	    "dsroute [0-9.]+ started"
	check "dsroute was launched as by a tool: no -p line in --info" eval \
	    "! grep -q '^dotnet-trace collect -p' '$T/dotnet-trace.out'"
	check "dotnet-trace stopped it with Q" has_line "$T/dotnet-trace.out" \
	    'q read on standard input: stopping'
	check "... cleanly" eval "has_line '$T/dotnet-trace.out' \
	    '^info: stopped$' && ! has_line '$T/dotnet-trace.out' \
	    'Sanitizer|runtime error:'"
	is "adb: the rule was checked, added and removed" \
	    "$(sort -u "$ADB_LOG" | tr '\n' ';')" \
	    "reverse --list;reverse --remove tcp:9000;reverse tcp:9000 tcp:9001;"
	is "no socket is left" "$(ls "$T" | grep -c '^dotnet-diagnostic-')" 0
	stop rt1
fi

# A real runtime: the application dials a socket, a second dsroute carries
# that to 127.0.0.1:9001 as a phone's adb reverse would.
if ! dsapp; then
	skip "a real runtime traced with dotnet-trace --dsrouter android" "$why"
else
	start_dsroute mid "uds:$T/app.sock,listen" \
	    tcp:127.0.0.1:9001,connect,peer=tool
	bg app env DOTNET_DiagnosticPorts="$T/app.sock,nosuspend" TMPDIR="$T" \
	    "$DSAPP" --quiet
	PATH=$T/bin:$PATH TMPDIR=$T timeout 120 "$DOTNET_TRACE" collect \
	    --dsrouter android --duration 00:00:00:03 -o "$T/real.nettrace" \
	    </dev/null >"$T/dotnet-trace-real.out" 2>&1
	is "a real runtime: dotnet-trace exits 0" "$?" 0
	is "a real runtime: the trace is a nettrace" \
	    "$(head -c 8 "$T/real.nettrace")" "Nettrace"
	check "a real runtime: of some size" test \
	    "$(stat -c %s "$T/real.nettrace")" -gt 10000
	like "a real runtime: traced through the android preset" \
	    "$(grep 'route=android command=CollectTracing' \
	    "$T/dotnet-trace-real.out")" "runtime_pid=$(pid_of app) "
	stop app
	stop_dsroute mid
fi

# The same scenarios against dotnet-dsrouter, where it is installed.
REAL=${DOTNET_DSROUTER:-}
if [ -z "$REAL" ] && [ -x "$HOME/.dotnet/tools/dotnet-dsrouter" ] &&
    ! [ "$HOME/.dotnet/tools/dotnet-dsrouter" -ef "$DSROUTE" ]; then
	REAL=$HOME/.dotnet/tools/dotnet-dsrouter
fi

# scenario ROUTER NAME: server-server on a fixed port; the fake tool's
# ProcessInfo through the -ipcs socket, and through -p, into NAME.out.
scenario() {
	_sock=$T/$2.sock
	"$1" server-server -ipcs "$_sock" -tcps 127.0.0.1:9100 </dev/null \
	    >"$T/$2.log" 2>&1 &
	_router=$!
	_pids="$_pids $_router"
	wait_for 30 test -S "$_sock"
	start_fakert "$2-rt" --connect tcp:127.0.0.1:9100 --pid 6101
	"$FAKETOOL" --timeout 30 "$_sock,connect" processinfo 2>&1 |
	    sed 's/ cookie=[0-9a-f]*//' >"$T/$2.out"
	kill "$_router"
	wait "$_router"
	stop "$2-rt"
}

scenario "$DSROUTE" ours
like "server-server: ProcessInfo through dsroute" "$(cat "$T/ours.out")" \
    "^pid=6101 "
if [ -n "$REAL" ]; then
	scenario "$REAL" theirs
	is "server-server: the same as through dotnet-dsrouter" \
	    "$(cat "$T/theirs.out")" "$(cat "$T/ours.out")"
else
	skip "server-server: the same as through dotnet-dsrouter" \
	    "dotnet-dsrouter is not installable here (it is not on the NuGet feed; set DOTNET_DSROUTER to one)"
fi

done_testing
