#!/bin/sh
# SPDX-License-Identifier: ISC
#
# -- COMMAND with the real runtime and the real dotnet-trace: dsroute
# as the entrypoint of the app (the recipe of docs/recipes-launch.md).
# The app, started suspended, waits until --resume-after resumes it, and
# its exit code is the router's; the app behind a router listening for
# mutual TLS, with no socket of the user's, is traced from a second
# router as a workstation would; SIGTERM reaches the app, which exits
# 0; a program that is not there, and an app the host cannot find, are
# one line and a status that is not 0.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"
. "$top_srcdir/tests/lib/tls.sh"
. "$top_srcdir/tests/lib/launch.sh"

interop_setup

PAUSED='awaiting a Diagnostics IPC ResumeStartup command'
PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5

# --- suspended at start-up, resumed by --resume-after; its exit code.
launched s --suspend --resume-after 6 tcp:127.0.0.1:0 -- "$DSAPP" \
    --seconds 2 --exit-code 3
check "the app starts suspended with the router's socket" wait_for 30 \
    has_line "$T/s.err" \
    "^info: started the application \($DSAPP, pid [0-9]+\) with DOTNET_DiagnosticPorts=$T/s\.d/dsroute-[0-9]+-[A-Za-z0-9]{6}/app\.sock,suspend: its runtime waits"
check "its runtime dials the router" wait_for 60 has_line "$T/s.err" \
    "^info: runtime pid $(app_pid s) \(cookie [0-9a-f]+\) connected on uds:$T/s\.d/"
check "the runtime says it is paused" wait_for 60 has_line "$T/s.out" \
    "$PAUSED"
check "the router resumes it after --resume-after" wait_for 30 has_line \
    "$T/s.err" 'the router sends ResumeRuntime$'
check "then Main runs" wait_for 60 has_line "$T/s.out" \
    "^dsapp pid=$(app_pid s) ready\$"
check "... after the pause" eval "grep -n '' '$T/s.out' |
    grep -A9 '$PAUSED' | grep -q 'ready\$'"
reaped s
is "the app's exit code is the router's" "$rc" 3
check "one line says so" has_line "$T/s.err" \
    "^info: the application \($DSAPP, pid $(app_pid s)\) exited with status 3; dsroute stops with it\$"

# --- the wrapper entrypoint: mutual TLS, traced from a workstation.
make_base_certs
mkcert client oncall
launched w "tls:127.0.0.1:0,listen,$(cert localhost),ca=$C/ca.pem,allow-cn=oncall" \
    -- "$DSAPP"
wait_for 30 has_line "$T/w.err" '^info: ready$'
P=$(port_of w remote)
check "the app runs" wait_for 60 has_line "$T/w.out" \
    "^dsapp pid=$(app_pid w) ready\$"
check "its runtime is parked on the router's own socket" wait_for 60 \
    has_line "$T/w.err" "^info: runtime pid $(app_pid w) .* connected on uds:"
start_dsroute ws "uds:$T/tool.sock" \
    "tls:127.0.0.1:$P,connect,ca=$C/ca.pem,$(cert oncall)"
check "dsclient ProcessInfo from the workstation" \
    client ci --timeout 60 --port "$T/tool.sock,connect" processinfo
like "... names the app" "$(cat "$T/ci.out")" "^pid=$(app_pid w) .*dsapp"
if dotnet_tool dotnet-trace; then
	check "the real dotnet-trace collects through both routers" \
	    collect_trace "$T/tool.sock,connect" "$T/w.nettrace"
	check "dsclient parses the trace" client wp parse "$T/w.nettrace"
	like "it holds the app's Dsroute-Test events" "$(cat "$T/wp.out")" \
	    "dsroute-test=[1-9][0-9]*"
else
	skip "the real dotnet-trace collects through both routers" "$why"
	skip "dsclient parses the trace" "$why"
	skip "it holds the app's Dsroute-Test events" "$why"
fi
kill -TERM "$(pid_of w)"
reaped w
is "SIGTERM to the router: the app exits 0, and the router with 0" "$rc" 0
check "the app got it and said so" has_line "$T/w.out" \
    "^dsapp pid=$(app_pid w) exiting"
check "the router passed it on" has_line "$T/w.err" \
    '^info: passing SIGTERM on to the application'
check "no sanitizer report" eval "! grep -Eq 'Sanitizer|runtime error:' '$T/w.err'"
stop_dsroute ws

# --- dotnet-dsrouter's command line: server-server, suspended or not.
launched d server-server -ipcs "$T/ipc.sock" -- "$DSAPP"
check "server-server -- : the app runs" wait_for 60 has_line "$T/d.out" \
    'ready$'
check "ProcessInfo on -ipcs reaches it" wait_for 60 eval \
    "client di --timeout 30 --port '$T/ipc.sock,connect' processinfo"
like "... its pid" "$(cat "$T/di.out")" "^pid=$(app_pid d) "
kill -INT "$(pid_of d)"
reaped d
is "SIGINT: the app exits 0, the router too" "$rc" 0

# --- what will not start.
launched n tcp:127.0.0.1:0 -- "$T/bin/dsapp"
reaped n
is "a program that is not there: status 127" "$rc" 127
check "... one line" has_line "$T/n.err" \
    "^crit: cannot run $T/bin/dsapp: No such file or directory\$"
launched h tcp:127.0.0.1:0 -- dotnet "$T/missing.dll"
reaped h
check "an app the host cannot find: a status that is not 0" [ "$rc" -ne 0 ]
check "... and the line says which" has_line "$T/h.err" \
    "^info: the application \(dotnet, pid [0-9]+\) exited with status $rc; dsroute stops with it\$"

done_testing
