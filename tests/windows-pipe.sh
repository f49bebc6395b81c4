#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute.exe's named pipes under wine: the two spellings of a name, the
# endpoints Windows does not have, a squatter on the name, the peer's
# process id in the log, and bad input from a tool on the pipe, which
# closes only its own session with one log line while the router stays
# up and no byte reaches the runtime (badinput.sh is the same on socket
# files).  A squatter on another process's default pipe,
# dotnet-diagnostic-PID, gets no byte from a router that dials it, and a
# pipe served by the process its name gives is served (squat.sh is the
# same on socket files).

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/wine.sh"

MAGIC=444f544e45545f4950435f563100		# "DOTNET_IPC_V1\0"
BAD_ENCODING=${MAGIC}1800ffff000084131380
UNKNOWN_MAGIC=${MAGIC}1800ffff000086131380

# exe_refused DESCRIPTION EREGEX ARGS...: dsroute.exe exits 1 saying so.
exe_refused() {
	_desc=$1
	_want=$2
	shift 2
	timeout 60 wine "$DSROUTE_EXE" "$@" >"$T/out" 2>"$T/err"
	_rc=$?
	if [ $_rc -eq 1 ] && grep -Eq -- "$_want" "$T/err"; then
		pass "$_desc"
	else
		fail "$_desc" "status $_rc: $(cat "$T/err")"
	fi
}

wine "$DSROUTE_EXE" --version >"$T/version" 2>&1
like "dsroute.exe --version" "$(cat "$T/version")" '^dsroute [0-9]'
exe_refused "uds: is refused, pointing to pipe:" 'use pipe:NAME' \
    uds:/tmp/x.sock tcp:127.0.0.1:0
exe_refused "dir: is refused" 'no socket files' dir:/tmp tcp:127.0.0.1:0
exe_refused "proc: is refused" 'no /proc on Windows' proc: tcp:127.0.0.1:0
exe_refused "an empty pipe name is refused" 'pipe name is empty' \
    pipe: tcp:127.0.0.1:0
exe_refused "a name Windows would open as another (a trailing dot)" \
    'Windows would open another pipe than this name says' \
    pipe:dotnet-diagnostic-12. tcp:127.0.0.1:0
exe_refused "... or a .. part" \
    'Windows would open another pipe than this name says' \
    'pipe:x\..\dotnet-diagnostic-12' tcp:127.0.0.1:0

# The full \\.\pipe\ path and the bare name are one pipe.
start_fakert rt --listen tcp:127.0.0.1:0 --pid 2001
start_exe d "pipe:\\\\.\\pipe\\${P}tools" \
    "tcp:127.0.0.1:$(fakert_port rt),connect" --handshake-timeout 1 \
    --silent-timeout 1
like "the name is logged without its \\\\.\\pipe\\ prefix" \
    "$(cat "$T/d.err")" "pipe:${P}tools: listen"
if wtool --timeout 20 "${P}tools" processinfo; then
	is "a tool on the bare name reaches the runtime" \
	    "$(field pid "$T/tool.out")" 2001
else
	fail "a tool on the bare name reaches the runtime" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi
like "the audit line names the tool's Windows process id" \
    "$(grep -E 'session [0-9]+: .*pipe:'"${P}"'tools\(pid [1-9][0-9]* ' \
    "$T/d.err" | head -n 1)" 'pid [1-9]'

sessions=$(count_lines "$T/d.err" '^info: session [0-9]+: ')
# bad DESCRIPTION REASON-EREGEX RAW-ARGS...: send it, expect one end line.
bad() {
	_desc=$1
	_why=$2
	shift 2
	wtool --timeout 10 "${P}tools" raw "$@"
	sessions=$((sessions + 1))
	session_says "$_desc" "$_why" d "$sessions" 10
}

rx=$(count_lines "$T/rt.ev" '^(command|bad-message)')
bad "garbage first bytes" 'not a diagnostic IPC message' \
    474554202f20485454502f312e300d0a0d0a
is "garbage: the runtime's UNKNOWN_MAGIC frame, as it would answer" \
    "$(sed -n 's/^reply //p' "$T/tool.out")" "$UNKNOWN_MAGIC"
bad "size below 20" 'header size below 20' "${MAGIC}130004000000"
is "size below 20: the runtime's BAD_ENCODING frame" \
    "$(sed -n 's/^reply //p' "$T/tool.out")" "$BAD_ENCODING"
bad "reserved field not zero" 'reserved header field' "${MAGIC}140004000100"
bad "client sends the server command set" 'server response' \
    "${MAGIC}1800ffff000000000000"
bad "truncated header, then the pipe closes" \
    'closed before a complete first message|reset' "${MAGIC}1400" --reset
bad "truncated header, then silence" 'no complete first message within' \
    "${MAGIC}14" --hold-ms 2000
bad "connect and send nothing" 'sent nothing within 1\.0s' "" --hold-ms 2000
bad "a header dribbled a byte at a time, then silence" \
    'no complete first message within' "${MAGIC}1400" --chunk 1 \
    --delay-ms 100 --hold-ms 2000
is "no bad input reached the runtime" \
    "$(count_lines "$T/rt.ev" '^(command|bad-message)')" "$rx"
check "the router is still up" alive d
check "a good command still goes through" wtool --timeout 20 "${P}tools" \
    processinfo

# A tool that goes away in the middle of a stream: only its session ends.
stop_exe d
stop rt
# (The runtime streams until stopped, so no buffer can hold it all.)
start_fakert rth --listen tcp:127.0.0.1:0 --pid 2003 --stream-bytes 0
start_exe dh "pipe:${P}toolsh" "tcp:127.0.0.1:$(fakert_port rth),connect"
wtool --timeout 30 "${P}toolsh" collect --hangup-after-bytes 1048576
check "a tool hanging up mid-stream: the runtime sees the stream break" \
    wait_for 20 has_line "$T/rth.ev" '^stream-broken'
check "the router is still up" alive dh
check "and serves the next tool" wtool --timeout 20 "${P}toolsh" processinfo
stop_exe dh
stop rth

start_fakert rt2 --listen tcp:127.0.0.1:0 --pid 2002 --stream-bytes 8388608
start_exe d2 "pipe:${P}tools2" "tcp:127.0.0.1:$(fakert_port rt2),connect"

# A slow reader on the pipe: the stream waits for it, whole and in order.
if wtool --timeout 60 "${P}tools2" collect --rate 2097152 \
    --expect-bytes 8388608; then
	sid=$(field session "$T/tool.out")
	wait_for 20 has_line "$T/rt2.ev" "^stream-end $sid "
	is "a slow reader on the pipe gets the stream byte-exact" \
	    "$(field sha256 "$T/tool.out")" \
	    "$(sed -n "s/^stream-end $sid 8388608 //p" "$T/rt2.ev")"
else
	fail "a slow reader on the pipe gets the stream byte-exact" \
	    "$(cat "$T/tool.out" "$T/tool.err")"
fi

# A burst of tools at once: every one finds an instance of the pipe.
i=0
burst=""
while [ $i -lt 16 ]; do
	wine "$WINFAKETOOL" --timeout 30 "${P}tools2" processinfo \
	    >"$T/burst.$i" 2>&1 &
	burst="$burst $!"
	i=$((i + 1))
done
for p in $burst; do
	wait "$p"
done
is "a burst of 16 tools: each one answered" \
    "$(cat "$T"/burst.* | grep -c '^pid=2002 ')" 16
stop_exe d2
stop rt2

# A runtime dialling the pipe: the router knows its process id from the
# pipe (GetNamedPipeClientProcessId), and holds its advertise to that.
start_exe d3 "pipe:${P}rt3" tcp:127.0.0.1:0
start_winrt rt3 --connect "${P}rt3"
wait_for 30 has_line "$T/d3.err" 'runtime pid [0-9]+ .*connected'
advpid=$(sed -n 's/.*runtime pid \([0-9]*\) .*connected.*/\1/p' "$T/d3.err" |
    head -n 1)
if tool --timeout 20 "tcp:127.0.0.1:$(port_of d3 remote)" processinfo; then
	is "an honest advertise on the pipe: the runtime's own pid" \
	    "$(field pid "$T/tool.out")" "${advpid:-none}"
else
	fail "an honest advertise on the pipe: the runtime's own pid" \
	    "$(cat "$T/tool.err")"
fi
stop rt3 INT
start_winrt liar --connect "${P}rt3" --pid 1003
check "an advertise of another pid is refused" wait_for 30 has_line \
    "$T/d3.err" 'audit: .*peer="pipe:'"${P}"'rt3\(pid [1-9][0-9]* uid 1\)".*runtime_pid=1003 .*rule="pid-mismatch"'
stop_exe d3
stop liar INT

# A squatter already serving the name: dsroute.exe will not share it,
# and the squatter's clients are left alone.
start_winrt sq --listen "${P}sq" --pid 2004
wine "$DSROUTE_EXE" "pipe:${P}sq,listen" tcp:127.0.0.1:0 >"$T/sq.out" \
    2>"$T/sqd.err"
rc=$?
is "a squatted name: dsroute.exe exits 1" "$rc" 1
like "a squatted name: it says why" "$(cat "$T/sqd.err")" \
    'another process serves this pipe already'
if wtool --timeout 20 "${P}sq" processinfo; then
	is "the squatter's clients are left alone" \
	    "$(field pid "$T/tool.out")" 2004
else
	fail "the squatter's clients are left alone" "$(cat "$T/tool.err")"
fi
stop sq INT

# A squatter on another process's default pipe: the victim is a wine
# process serving a name of its own; the squatter serves the victim's
# default name, dotnet-diagnostic-VICTIM (and the router form,
# dotnet-diagnostic-dsrouter-VICTIM), before the victim's runtime would.
start_winrt victim --listen "${P}victim"
wtool --timeout 20 "${P}victim" processinfo
vpid=$(field pid "$T/tool.out")
start_winrt sq2 --listen "dotnet-diagnostic-$vpid"
start_winrt sq3 --listen "dotnet-diagnostic-dsrouter-$vpid"
wtool --timeout 20 "dotnet-diagnostic-$vpid" processinfo
sqpid=$(field pid "$T/tool.out")
wtool --timeout 20 "dotnet-diagnostic-dsrouter-$vpid" processinfo
sq3pid=$(field pid "$T/tool.out")
seen2=$(wc -l <"$T/sq2.ev")
seen3=$(wc -l <"$T/sq3.ev")
rx2=$(runtime_rx sq2)
rx3=$(runtime_rx sq3)
if [ -n "$vpid" ] && [ -n "$sqpid" ] && [ "$vpid" != "$sqpid" ]; then
	pass "the squatter ($sqpid) serves the victim's ($vpid) default name"
else
	fail "the squatter serves the victim's default name" \
	    "victim '$vpid', squatter '$sqpid'"
fi
not_its="the process serving the pipe is not the one its name gives"

# squatted NAME SQUATTER SQUATTER-PID LINES RX: a router dialling
# pipe:NAME for a tool on TCP sends the squatter nothing and says why.
# The squatter's events after its first LINES: at most a connection that
# brought no byte (accept, a header of 0 bytes, its count of bytes still
# RX).
squatted() {
	start_exe dq "pipe:$1" tcp:127.0.0.1:0 || return
	if tool --timeout 30 "tcp:127.0.0.1:$(port_of dq remote)" processinfo
	then
		fail "$1: the tool gets no answer" "$(cat "$T/tool.out")"
	else
		pass "$1: the tool gets no answer"
	fi
	wait_for 20 has_line "$T/dq.err" '^info: session [0-9]+: '
	is "$1: one line says why, naming the server's pid" \
	    "$(grep -c "$not_its: it names pid $vpid, the server is pid $3 " \
	    "$T/dq.err") $(grep -c "$not_its" "$T/dq.err")" "1 1"
	wait_for 10 eval "[ \$(wc -l <'$T/$2.ev') -gt $4 ]"
	is "$1: the squatter received no byte" "$(tail -n "+$(($4 + 1))" \
	    "$T/$2.ev" | grep -Ev "^(accept|bad-message short-header 0|rx-bytes $5)\$")" ""
	check "$1: the router is still up" alive dq
	stop_exe dq
}
squatted "dotnet-diagnostic-$vpid" sq2 "$sqpid" "$seen2" "$rx2"
squatted "dotnet-diagnostic-dsrouter-$vpid" sq3 "$sq3pid" "$seen3" "$rx3"
stop sq2 INT
stop sq3 INT
stop victim INT

# The process its name gives serves the pipe: served, through the router.
start_winrt own --listen default
opid=$(sed -n 's/^listen .*dotnet-diagnostic-\([0-9]*\)$/\1/p' "$T/own.ev")
start_exe do "pipe:dotnet-diagnostic-$opid" tcp:127.0.0.1:0
processinfo_via "a pipe served by the process its name gives" tool \
    "tcp:127.0.0.1:$(port_of do remote)" "${opid:-none}"
is "... and nothing was refused" "$(grep -c "$not_its" "$T/do.err")" 0
stop_exe do
stop own INT

done_testing
