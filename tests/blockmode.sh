#!/bin/sh
# SPDX-License-Identifier: ISC
#
# CollectTracing6's Block mode (sessionBufferMode 1, .NET 11): the app's
# threads wait while the reader is slow, so a reader beyond a network
# hop can stall the app.  From a network peer it is refused, as an
# unknown command so that a tool falls back to Drop, with the reason in
# the audit line, unless the endpoint says may-stall-app; from a local
# peer it goes on; Drop goes on from anyone.  A refused command never
# reaches the runtime.  The payloads are laid out as dotnet/diagnostics'
# client writes them (one provider, Dsroute-Test, no event filter).

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

HEAD=00000000400000000100000039010280000000000101000000ffffffff00000000050000000d0000004400730072006f007500740065002d005400650073007400000000000000000000000000
BLOCK=${HEAD}01000000
DROP=${HEAD}00000000
NOMODE=$HEAD

# collect6 ADDR HEX: a CollectTracing6 with that payload; the reply in
# $T/tool.out.
collect6() {
	tool --timeout 10 "$1" command 2 7 "$2"
}

# commands RT: how many commands the fake runtime RT was sent.
commands() {
	count_lines "$T/$1.ev" '^command '
}

start_fakert rt --listen "$T/rt.sock" --pid 4242
start_dsroute r -v debug "uds:$T/rt.sock" tcp:127.0.0.1:0
P=$(port_of r remote)

collect6 "tcp:127.0.0.1:$P" "$BLOCK"
like "Block from a network peer: refused as an unknown command" \
    "$(cat "$T/tool.out")" '^reply set=0xFF id=0xFF size=24 hresult=0x80131385$'
is "... and the runtime saw no command" "$(commands rt)" 0
check "... the audit line says why" wait_for 10 has_line "$T/r.err" \
    '^info: audit: .* command=CollectTracing6 decision=deny role=operate .*rule="block-mode" reason="a Block \(non-lossy\) session from a network peer: the app.s threads would wait for this reader; the endpoint has no may-stall-app'

collect6 "tcp:127.0.0.1:$P" "$DROP"
like "Drop from a network peer: the runtime starts the session" \
    "$(cat "$T/tool.out")" '^reply set=0xFF id=0x00 size=28 payload=8$'
check "... it saw the command" wait_for 10 has_line "$T/rt.ev" \
    '^command 0x02 0x07 [0-9]+ CollectTracing6'

collect6 "tcp:127.0.0.1:$P" "$NOMODE"
like "a network peer's payload that ends before its mode: BAD_ENCODING" \
    "$(cat "$T/tool.out")" 'hresult=0x80131384$'
is "... which never reaches the runtime" "$(commands rt)" 1
stop_dsroute r

# A local peer: the tool on the runtime's host, the hop it reads through
# is its own.
start_dsroute l "uds:$T/rt.sock" "uds:$T/tools.sock,listen"
collect6 "$T/tools.sock" "$BLOCK"
like "Block from a local peer: the runtime starts the session" \
    "$(cat "$T/tool.out")" '^reply set=0xFF id=0x00 size=28 payload=8$'
is "... it saw the command" "$(commands rt)" 2
stop_dsroute l

# may-stall-app: the endpoint lets its network peers ask for it.
start_dsroute m "uds:$T/rt.sock" "tcp:127.0.0.1:0,may-stall-app"
collect6 "tcp:127.0.0.1:$(port_of m remote)" "$BLOCK"
like "Block from a network peer where may-stall-app: started" \
    "$(cat "$T/tool.out")" '^reply set=0xFF id=0x00 size=28 payload=8$'
is "... the runtime saw it" "$(commands rt)" 3
check "... allowed, the rule the role's" wait_for 10 has_line "$T/m.err" \
    '^info: session [0-9]+: .*command=CollectTracing6 .*decision=allow rule="role operate"'
stop_dsroute m

refused "may-stall-app takes no value" "may-stall-app takes no value|takes no value" \
    -n "uds:$T/rt.sock" "tcp:127.0.0.1:0,may-stall-app=yes"
stop rt

done_testing
