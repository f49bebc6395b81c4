#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The real runtime's default diagnostic socket bridged to TCP: the raw
# protocol over TCP (faketool), then the real client library through a
# second router that turns TCP back into a socket (tools on Linux cannot
# dial TCP): ProcessInfo, an EventPipe session whose Nettrace stream is
# parsed, StopTracing on a second connection, and the stream's clean end.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"

interop_setup

start_app app
wait_for 60 app_ready app || fail "the app starts" "$(cat "$T/app.out")"
wait_for 30 has_socket app
S=$(app_socket app)
PID=$(pid_of app)
like "the app has its default socket" "$S" \
    "/dotnet-diagnostic-$PID-[0-9]+-socket\$"

# The runtime's socket is live: the router connects to it per session.
start_dsroute rt "uds:$S" tcp:127.0.0.1:0
check "the router connects to the live default socket" has_line \
    "$T/rt.err" "connecting per session \(a listener is already at the path\)"
P=$(port_of rt remote)

# The start-up probe reached the runtime as an empty connection: the
# runtime answers it with an error frame (to nobody) and serves on.
check "ProcessInfo over TCP right after the start-up probe" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo
is "ProcessInfo over TCP: the pid is the app's" "$(field pid "$T/tool.out")" \
    "$PID"
check "ProcessInfo3 over TCP names the entry point" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo3
like "ProcessInfo3 over TCP: dsapp, 10.0" "$(cat "$T/tool.out")" \
    "entrypoint=dsapp clrversion=10\.[0-9.]+ rid=linux-"

# The real client library, through a router on the tools' side.
start_dsroute tl "uds:$T/tool.sock" "tcp:127.0.0.1:$P,connect"
check "dsclient ProcessInfo through two routers" \
    client ci --timeout 60 --port "$T/tool.sock,connect" processinfo
is "dsclient ProcessInfo: the pid is the app's" \
    "$(sed -n 's/^pid=\([0-9]*\) .*/\1/p' "$T/ci.out")" "$PID"
like "dsclient ProcessInfo: the full command line" "$(cat "$T/ci.out")" \
    "cmdline=.*dsapp .*dsapp\.dll"

check "dsclient trace through two routers" client tr --timeout 60 \
    --port "$T/tool.sock,connect" trace --seconds 3 --out "$T/a.nettrace"
like "the stream is a Nettrace stream" "$(cat "$T/tr.out")" \
    "^trace bytes=[0-9]+ nettrace=yes"
is "the file starts with Nettrace" "$(head -c 8 "$T/a.nettrace")" Nettrace
like "it holds Dsroute-Test and GC events" "$(cat "$T/tr.out")" \
    "events total=[0-9]+ dsroute-test=[1-9][0-9]* gc=[1-9]"
like "the stream ended with EOF after the stop reply" "$(cat "$T/tr.err")" \
    "stop reply at [0-9]+ ms, stream EOF at [0-9]+ ms"

# Both routers saw the session and the stop as two sessions, and the
# runtime ended the stream (the client closes only after its EOF): every
# byte of the file crossed both routers.
BYTES=$(sed -n 's/^trace bytes=\([0-9]*\) .*/\1/p' "$T/tr.out")
for r in rt tl; do
	wait_for 30 logged $r 'command=CollectTracing2 '
	wait_for 30 logged $r 'command=StopTracing '
	like "$r: CollectTracing2 ended by the runtime, all bytes through" \
	    "$(grep 'command=CollectTracing2 ' "$T/$r.err")" \
	    "to_tool=$((BYTES + 28)) .*end=\"runtime closed\""
	like "$r: StopTracing in a session of its own, answered" \
	    "$(grep 'command=StopTracing ' "$T/$r.err")" \
	    "to_runtime=28 to_tool=28 "
done

# The app is still served after the trace.
check "ProcessInfo after the trace" \
    tool --timeout 30 "tcp:127.0.0.1:$P" processinfo
is "ProcessInfo after the trace: same pid" "$(field pid "$T/tool.out")" "$PID"

stop_dsroute tl
stop_dsroute rt
is "the app printed nothing on stderr" "$(cat "$T/app.err")" ""
stop_app app

done_testing
