#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Runtimes found by their sockets (dir:) kept by what they say of
# themselves: a mirror shows each, ListRuntimes lists each, a tool's
# command for one dials its socket.  New ones appear, gone ones go, and a
# socket that never answers delays nobody.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

D=$T/d
W=$T/w
mkdir -m 700 "$D" "$W"
runtime_in a "$D" root root "--name Orders.Api"
runtime_in b "$D" root root "--name Billing"
A=$(pid_of a)
B=$(pid_of b)

# A mirror of the runtimes in a directory.
start_dsroute m -v debug --link-poll 0.5 --handshake-timeout 1 \
    "dir:$W,listen" "dir:$D,connect"
check "a runtime found in the directory is mirrored" \
    wait_for 10 eval '[ -n "$(standin_of m $A)" ]'
check "... and the other" wait_for 10 eval '[ -n "$(standin_of m $B)" ]'
check "... each said found there" has_line "$T/m.err" \
    "runtime pid $A .*\(Orders\.Api\) is found on dir:$D at $D/dotnet-diagnostic-$A-"
check "a tool on a's name is served" \
    tool --timeout 10 "$(plain "$W" "$(standin_of m "$A")")" processinfo
is "... by a" "$(field pid "$T/tool.out")" "$A"
check "a tool on b's name is served" \
    tool --timeout 10 "$(plain "$W" "$(standin_of m "$B")")" repeat 3 processinfo
is "... by b alone, once: the rest from b's record" \
    "$(count_lines "$T/b.ev" '^command 0x04 0x00 ')" 1
is "... a saw only the router's ProcessInfo2 and its own tool's" \
    "$(count_lines "$T/a.ev" '^command ')" 2

# A socket that accepts and never answers delays nobody.
bg mute python3 -c '
import socket, os, time
k = open("/proc/self/stat").read().rsplit(")", 1)[1].split()[19]
s = socket.socket(socket.AF_UNIX)
s.bind("%s/dotnet-diagnostic-%d-%s-socket" % ("'"$D"'", os.getpid(), k))
s.listen(8)
c = []
while True:
    c.append(s.accept()[0])
'
runtime_in c "$D" root root "--name Shipping"
C=$(pid_of c)
check "a runtime that starts later appears, a mute socket beside it" \
    wait_for 10 eval '[ -n "$(standin_of m $C)" ]'
is "the mute socket is not mirrored" \
    "$(ls "$W" | grep -c "^dotnet-diagnostic-$(pid_of mute)-")" 0
check "... and its silence is said at debug, not as a warning" \
    wait_for 10 has_line "$T/m.err" "^dbug: dir:$D: $D/dotnet-diagnostic-$(pid_of mute)-.*: no ProcessInfo"
stop mute

stop a KILL
check "a runtime that goes leaves the mirror" \
    wait_for 10 has_line "$T/m.err" "runtime pid $A .* is no longer found on dir:$D"
check "... with its names" wait_for 10 eval '[ -z "$(ls "$W" | grep -- "-$A-")" ]'
stop_dsroute m
is "the mirror is empty after SIGTERM" "$(ls "$W" | wc -l)" 0

# The directory is watched: a runtime that starts appears at once, not at
# the next rescan.
W3=$T/w3
mkdir -m 700 "$W3"
start_dsroute mi --link-poll 60 "dir:$W3,listen" "dir:$D,connect"
check "with a rescan a minute away, the runtimes there now are mirrored" \
    wait_for 10 eval '[ -n "$(standin_of mi $B)" ]'
runtime_in e "$D" root root "--name Late.Api"
check "... and one that starts later appears within seconds" \
    wait_for 5 eval '[ -n "$(standin_of mi $(pid_of e))" ]'
stop e
stop_dsroute mi
W4=$T/w4
mkdir -m 700 "$W4"
start_dsroute mf --link-poll 0.3 "dir:$W4,listen,found=advertise" \
    "dir:$D,connect"
check "found=: the runtimes found otherwise are asked" \
    wait_for 10 eval '[ "$(count_lines "$T/b.ev" "^command 0x04 0x04 ")" -ge 3 ]'
is "... but not mirrored" "$(ls "$W4" | wc -l)" 0
stop_dsroute mf
refused "a mirror of the directory it makes its names in is refused" \
    "a mirror cannot show the runtimes of the directory it makes its names in" \
    "dir:$D,listen" "dir:$D,connect"

# A node that lists the runtimes of its directory, and a workstation.
start_dsroute node -v debug tcp:127.0.0.1:0 "dir:$D,connect"
NP=$(port_of node local)
check "dsroute ps lists the runtimes found in the node's directory" \
    wait_for 10 eval '"$DSROUTE" ps tcp:127.0.0.1:$NP | grep -q Shipping'
"$DSROUTE" ps "tcp:127.0.0.1:$NP" >"$T/ps.out"
like "... each with how it was found" "$(grep "^ *$B " "$T/ps.out")" \
    "^ *$B +Billing +dir "
check "a tool that names no runtime is served as before" \
    tool --timeout 10 "tcp:127.0.0.1:$NP" processinfo
W2=$T/w2
mkdir -m 700 "$W2"
start_dsroute ws --link-poll 0.5 "dir:$W2,listen" \
    "tcp:127.0.0.1:$NP,connect,peer=router"
check "the workstation mirrors the node's found runtimes" \
    wait_for 10 eval '[ -n "$(standin_of ws $B)" ]'
check "a tool on the workstation reaches b through the node" \
    tool --timeout 10 "$(plain "$W2" "$(standin_of ws "$B")")" processinfo2
is "... b itself" "$(field pid "$T/tool.out")" "$B"
check "... the node dialled b's socket for it" wait_for 10 has_line \
    "$T/node.err" "command=ProcessInfo2 tool=tcp:.* runtime=dir:$D.* runtime_pid=$B .*answer=ok"
stop_dsroute ws
stop_dsroute node
stop b
stop c

done_testing
