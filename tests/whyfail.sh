#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Every failure says why at the tool (issue 37.1-2): a tool whose runtime
# cannot be had gets the IPC error frame with the HRESULT that fits, not
# an EOF, and the router in front of it says so in one line, where the
# tool's user looks:
# - server-server, the runtime parked on the tool's own listener (the
#   hints of ./dev.sh run, followed): timeout, and where the runtime is;
# - two routers, nothing parked on the far one: the near one logs it;
# - two routers, the far one's TLS dial to the runtime fails its
#   verification: the far one's reason, and the near one's line;
# - the start-up hints of server-server say which endpoint a tool and a
#   runtime take.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

make_base_certs

# --- ./dev.sh run's route, the tool and the runtime on the same socket.
start_dsroute d --backend-wait 1s "uds:$T/app.sock" tcp:127.0.0.1:0
like "the socket's hints: its runtimes' tools come through TCP" \
    "$(cat "$T/d.err")" \
    "runtime on this host: DOTNET_DiagnosticPorts=$T/app.sock,nosuspend .*; its tools come through tcp:127\.0\.0\.1:[0-9]+"
like "... and the exact second command for a tool on this host" \
    "$(cat "$T/d.err")" \
    "tools on this host: dsroute uds:/tmp/dsroute.sock tcp:127\.0\.0\.1:[0-9]+,connect,peer=router, then dotnet-trace collect --diagnostic-port /tmp/dsroute.sock,connect"
start_fakert rt --connect "$T/app.sock"
wait_for 10 has_line "$T/d.err" "runtime pid $(pid_of rt) .* connected"
tool --timeout 30 "$T/app.sock" processinfo
is "a tool beside the runtime gets a timeout frame, not an EOF" \
    "$(cat "$T/tool.out")" "error 0x800705B4"
check "the log says which runtime is parked where" wait_for 10 has_line \
    "$T/d.err" \
    "end=\"no runtime connection on tcp:127\.0\.0\.1:[0-9]+ within 1\.0s; runtime pid $(pid_of rt) is parked on uds:$T/app.sock, the tool's own side: a tool meets the runtimes of the other endpoint; the tool got error 0x800705b4\""
start_dsroute t "uds:$T/tool.sock" "tcp:127.0.0.1:$(port_of d remote),connect"
check "the hint's second command reaches it" \
    tool --timeout 30 "$T/tool.sock" processinfo
is "... that runtime" "$(field pid "$T/tool.out")" "$(pid_of rt)"
stop_dsroute t
stop_dsroute d
stop rt

# --- Two routers, nothing parked on the far one.
start_dsroute far --backend-wait 1s "uds:$T/far.sock" tcp:127.0.0.1:0
start_dsroute near "uds:$T/near.sock" \
    "tcp:127.0.0.1:$(port_of far remote),connect"
tool --timeout 30 "$T/near.sock" processinfo
is "through two routers, no runtime there: the tool gets the far timeout" \
    "$(cat "$T/tool.out")" "error 0x800705B4"
check "the near router says what the far one answered, in words" \
    wait_for 10 has_line "$T/near.err" \
    'the runtime side answered ProcessInfo with error 0x800705b4 \(timeout: no runtime came to a router within its wait\)'
check "... and its end line carries the answer" has_line "$T/near.err" \
    'command=ProcessInfo .*answer=error:0x800705b4'
stop_dsroute near
stop_dsroute far

# --- The far router's TLS dial to the runtime fails its verification.
start_fakert trt --listen "$T/trt.sock"
start_dsroute front "uds:$T/trt.sock,connect" \
    "tls:127.0.0.1:0,$(cert localhost),verify=none"
start_dsroute far "tcp:127.0.0.1:0" \
    "tls:127.0.0.1:$(port_of front remote),connect,ca=$C/ca2.pem"
start_dsroute near "uds:$T/near2.sock" \
    "tcp:127.0.0.1:$(port_of far local),connect"
tool --timeout 30 "$T/near2.sock" processinfo
is "a TLS dial that fails on the way: the tool gets an error frame" \
    "$(cat "$T/tool.out")" "error 0x80090326"
check "the far router says why" wait_for 10 has_line "$T/far.err" \
    'end="handshake to tls:127\.0\.0\.1:[0-9]+ failed: TLS handshake failed: .*; the tool got error 0x80090326"'
check "the near router names it" wait_for 10 has_line "$T/near.err" \
    'answered ProcessInfo with error 0x80090326 \(TLS handshake failed between two routers; the one that dialled logs why\)'
stop_dsroute near
stop_dsroute far
stop_dsroute front
stop trt

done_testing
