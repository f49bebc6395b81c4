#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute.exe's dotnet-dsrouter command line under wine, where the IPC
# side is a named pipe: each of the four TCP commands carries a
# ProcessInfo between a Windows fake on the pipe and a Linux fake on TCP,
# who listens chosen per command as in dsrouter.sh; -ipcs \\.\pipe\NAME
# and -ipcs NAME are one pipe; and without -ipcs the router serves
# dotnet-diagnostic-dsrouter-PID, PID its Windows process id, with the
# runtime-style dotnet-diagnostic-PID next to it.
#
# The tool that listens on a pipe (-ipcc) is tests/windows/pipeclient.exe
# "listen", which setup.sh builds: winfaketool has no listen role.  -- COMMAND
# is refused with one line, on both command lines.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/wine.sh"

# tcp_port NAME: the port of the command's TCP server.
tcp_port() {
	sed -n 's/^info: remote tcp:.*:\([0-9][0-9]*\): listening.*/\1/p' \
	    "$T/$1.err" | head -n 1
}

# mode_is DESC NAME COMMAND MODE
mode_is() {
	like "$1: route mode" "$(grep "^info: route $3:" "$T/$2.err")" \
	    "route $3: $4\$"
}

# served DESC NAME PIPE: the command's IPC server is the pipe PIPE.
served() {
	check "$1" has_line "$T/$2.err" \
	    "^info: local pipe:$3: listening \\(,listen given\\)\$"
}

# wprocessinfo DESC PIPE PID: winfaketool's ProcessInfo on PIPE reaches PID.
wprocessinfo() {
	if wtool --timeout 30 "$2" processinfo; then
		is "$1" "$(field pid "$T/tool.out")" "$3"
	else
		fail "$1" "$(cat "$T/tool.out" "$T/tool.err")"
	fi
}

# listening_tool NAME PIPE: pipeclient.exe listens on PIPE for one runtime
# offered to it, and sends it a ProcessInfo.
listening_tool() {
	bg "$1" wine "$DSWIN_PIPECLIENT" listen "$2" processinfo
	wait_for 30 has_line "$T/$1.out" '^listening pipe=' ||
	    fail "$1 listens" "$(cat "$T/$1.err")"
}

# offered DESC NAME PID: the listening tool NAME got the advertise of the
# runtime PID and its ProcessInfo answer.
offered() {
	if wait_for 30 has_line "$T/$2.out" '^processinfo: '; then
		like "$1: the tool on the pipe gets the runtime's advertise" \
		    "$(grep '^advertise ' "$T/$2.out")" "^advertise pid=$3 "
		like "$1: ...and its ProcessInfo answer" \
		    "$(grep '^processinfo: ' "$T/$2.out")" \
		    "^processinfo: processinfo pid=$3 cookie=[0-9a-f]{32} "
	else
		fail "$1: the tool on the pipe gets the runtime's advertise" \
		    "$(cat "$T/$2.out" "$T/$2.err")"
	fi
}

# server-server: tools on the pipe, the runtime dials TCP.
start_exe ss server-server -ipcs "${P}ss" -tcps 127.0.0.1:0 &&
mode_is "server-server" ss server-server server-server
served "server-server: -ipcs NAME is the pipe NAME" ss "${P}ss"
start_fakert rtss --connect "tcp:127.0.0.1:$(tcp_port ss)" --pid 3001
wprocessinfo "server-server: ProcessInfo from the pipe reaches the runtime" \
    "${P}ss" 3001
wprocessinfo "server-server: ...and from \\\\.\\pipe\\NAME" \
    "\\\\.\\pipe\\${P}ss" 3001
stop_exe ss
stop rtss

# -ipcs \\.\pipe\NAME: the same pipe as NAME.
start_exe ss2 server-server -ipcs "\\\\.\\pipe\\${P}ss2" -tcps 127.0.0.1:0
served "-ipcs \\\\.\\pipe\\NAME is the pipe NAME" ss2 "${P}ss2"
start_fakert rtss2 --connect "tcp:127.0.0.1:$(tcp_port ss2)" --pid 3002
wprocessinfo "-ipcs \\\\.\\pipe\\NAME: ProcessInfo on NAME reaches the runtime" \
    "${P}ss2" 3002
wine "$DSROUTE_EXE" server-server -ipcs "${P}ss2" -tcps 127.0.0.1:0 \
    </dev/null >"$T/dup.out" 2>"$T/dup.err"
is "-ipcs NAME where \\\\.\\pipe\\NAME is served: exit status 1" "$?" 1
like "...the name is taken: it is the same pipe" "$(cat "$T/dup.err")" \
    'another process serves this pipe already'
stop_exe ss2
stop rtss2

# client-server: a tool listens on the pipe, the runtime dials TCP.
listening_tool ltcs "${P}cs"
start_exe cs client-server -ipcc "${P}cs" -tcps 127.0.0.1:0 &&
mode_is "client-server" cs client-server client-server
start_fakert rtcs --connect "tcp:127.0.0.1:$(tcp_port cs)" --pid 3101
offered "client-server" ltcs 3101
stop_exe cs
stop rtcs

# The same with -ipcc \\.\pipe\NAME: dsroute.exe dials NAME.
listening_tool ltcs2 "${P}cs2"
start_exe cs2 client-server -ipcc "\\\\.\\pipe\\${P}cs2" -tcps 127.0.0.1:0
check "-ipcc \\\\.\\pipe\\NAME: the pipe NAME is dialled" has_line \
    "$T/cs2.err" "^info: local pipe:${P}cs2: connecting per session"
start_fakert rtcs2 --connect "tcp:127.0.0.1:$(tcp_port cs2)" --pid 3102
offered "client-server -ipcc \\\\.\\pipe\\NAME" ltcs2 3102
stop_exe cs2
stop rtcs2

# server-client: tools on the pipe, the runtime listens on TCP.
start_fakert rtsc --listen tcp:127.0.0.1:0 --pid 3201
start_exe sc server-client -ipcs "${P}sc" \
    -tcpc "127.0.0.1:$(fakert_port rtsc)" &&
mode_is "server-client" sc server-client server-client
served "server-client: -ipcs NAME is the pipe NAME" sc "${P}sc"
wprocessinfo "server-client: ProcessInfo from the pipe reaches the runtime" \
    "${P}sc" 3201
stop_exe sc
stop rtsc

# client-client: a tool listens on the pipe, the runtime on TCP.
start_fakert rtcc --listen tcp:127.0.0.1:0 --pid 3301
listening_tool ltcc "${P}cc"
start_exe cc client-client -ipcc "${P}cc" \
    -tcpc "127.0.0.1:$(fakert_port rtcc)" &&
mode_is "client-client" cc client-client client-client
offered "client-client" ltcc 3301
stop_exe cc
stop rtcc

# No -ipcs: dotnet-diagnostic-dsrouter-PID, PID dsroute.exe's Windows
# process id, which it logs at start-up; dotnet-diagnostic-PID next to it.
start_exe dd server-server -tcps 127.0.0.1:0
wpid=$(sed -n 's/^info: dsroute .* started, pid \([0-9][0-9]*\)$/\1/p' \
    "$T/dd.err")
like "no -ipcs: the log gives dsroute.exe's Windows pid" "${wpid:-none}" \
    '^[1-9][0-9]*$'
served "no -ipcs: the pipe is dotnet-diagnostic-dsrouter-PID" dd \
    "dotnet-diagnostic-dsrouter-${wpid:-none}"
check "no -ipcs: tools are told -p PID" has_line "$T/dd.err" \
    "^info: tools find this router with -p ${wpid:-none}: "
check "no -ipcs: dotnet-diagnostic-PID forwards to it" has_line \
    "$T/dd.err" "^info: route pid-socket: pipe:dotnet-diagnostic-${wpid:-none} to pipe:dotnet-diagnostic-dsrouter-${wpid:-none} "
start_fakert rtdd --connect "tcp:127.0.0.1:$(tcp_port dd)" --pid 3401
wprocessinfo "no -ipcs: ProcessInfo on dotnet-diagnostic-dsrouter-PID" \
    "dotnet-diagnostic-dsrouter-${wpid:-none}" 3401
wprocessinfo "no -ipcs: ProcessInfo on dotnet-diagnostic-PID (ps, -p)" \
    "dotnet-diagnostic-${wpid:-none}" 3401
# Both of its sessions end with the ProcessInfo, not at --close-timeout
# (60 s): a pipe has no half-close, so the router closes the inner one's.
check "no -ipcs: ...whose sessions end with the ProcessInfo" \
    wait_for 10 has_line "$T/dd.err" \
    '^info: session [0-9]+: route=pid-socket command=ProcessInfo .*answer=ok'
stop_exe dd
stop rtdd

# -- COMMAND is not done on Windows: one line, before anything starts.
for cmdline in "server-server -- app.exe" "tcp:127.0.0.1:0 -- app.exe"; do
	# shellcheck disable=SC2086
	wine "$DSROUTE_EXE" $cmdline </dev/null >"$T/l.out" 2>"$T/l.err"
	rc=$?
	is "$cmdline: refused with status 1" "$rc" 1
	is "$cmdline: one line says so" "$(grep -c \
	    '^crit: .*-- app.exe: starting an application is not supported on this system' \
	    "$T/l.err")" 1
	check "$cmdline: nothing listened" eval "! grep -q listening '$T/l.err'"
done

done_testing
