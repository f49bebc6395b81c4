#!/bin/sh
# SPDX-License-Identifier: ISC
#
# For a Mac, not for this machine: what of dsroute a Mac can show that a
# Linux machine cannot (docs/macos.md).  Run it in a native build
# (./autogen.sh && ./configure && make && make check TESTS= builds the
# fakes), as sh tests/macos-smoke.sh.  It prints TAP, each line one thing
# platform/darwin.c does on a real macOS:
#
# - start-up says what macOS lacks (prctl), and proc: is refused for dir:;
# - uds: to tcp: both ways, with the fake runtime and tool (the modes);
# - the socket file gets exactly mode= (the umask at bind), and the
#   socket-file checks refuse a live listener, a regular file, and
#   replace a stale socket;
# - the ACL refuses a tool by its uid (getpeereid), and the audit line
#   names its pid (LOCAL_PEERPID);
# - a runtime's default socket, named with its pid and its start time in
#   seconds since 1970, is dialled, and one planted under another key is
#   refused (sysctl KERN_PROC_PID);
# - dir: finds the runtime by its socket and says it rescans on a timer;
# - TLS between two routers;
# - the mirror's stand-in: a process named after the app in ps
#   (KERN_PROCARGS2 for dsroute ps), run from our own file (F_GETPATH);
# - with a .NET 10 SDK and dotnet-trace on PATH, the real runtime traced
#   by dotnet-trace -p through its stand-in.
#
# The scenarios of tests/*.sh are Linux's: they read /proc and use GNU
# tools.  This one uses what a stock macOS has, and the functions of
# tests/lib/lib.sh that are portable.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

[ "$(uname -s)" = Darwin ] ||
    skip_all "for macOS (docs/macos.md); this is $(uname -s)"

# lib.sh's clock is GNU date's %N, and field() GNU sed's \<: macOS's own.
wait_for() {
	_tries=$(($1 * 50))
	shift
	while ! "$@" 2>/dev/null; do
		_tries=$((_tries - 1))
		[ "$_tries" -gt 0 ] || return 1
		sleep 0.02
	done
	return 0
}
field() {
	sed -n "s/.*[ [:punct:]]$1=\([^ ]*\).*/\1/p; s/^$1=\([^ ]*\).*/\1/p" \
	    "$2" | tail -n 1
}
# The start of process $1 in seconds since 1970, as the runtime keys its
# socket; empty if ps and date will not say.
start_key() {
	LC_ALL=C date -j -f "%a %b %e %T %Y" \
	    "$(LC_ALL=C ps -o lstart= -p "$1" | sed 's/^ *//')" +%s 2>/dev/null
}
# The permissions ls shows, "srw-rw----".
perms() {
	ls -l "$1" | cut -c 1-10
}

UID_NOW=$(id -u)

# 1. What macOS lacks, said; proc: refused with the way to go.
start_dsroute d0 "uds:$T/a.sock" tcp:127.0.0.1:0,listen
like "start-up says macOS has no prctl" "$(grep 'no prctl' "$T/d0.err")" \
    'macOS has no prctl'
stop_dsroute d0
refused "proc: is refused, naming dir:\$TMPDIR" 'dir:\$TMPDIR' \
    proc: tcp:127.0.0.1:0,listen

# 2. The modes: a tool on a socket file, a runtime listening on TCP.
start_fakert rt --listen tcp:127.0.0.1:0
rport=$(fakert_port rt)
start_dsroute d1 "uds:$T/tool.sock,mode=0660" "tcp:127.0.0.1:$rport,connect"
like "uds: listener's file has exactly mode=0660" "$(perms "$T/tool.sock")" \
    '^srw-rw----$'
processinfo_via "uds: to tcp:" tool "$T/tool.sock" "$(pid_of rt)"
stop_dsroute d1
stop rt

# The runtime dials (it advertises), the tool connects to a socket file.
start_dsroute d2 "uds:$T/t2.sock" \
    tcp:127.0.0.1:0,listen,advertise=addr:127.0.0.1
port=$(port_of d2 remote)
start_fakert rt2 --connect "tcp:127.0.0.1:$port"
wait_for 10 has_line "$T/d2.err" "runtime pid $(pid_of rt2) .* connected" ||
    fail "rt2 advertised" "$(cat "$T/d2.err")"
processinfo_via "tcp: runtime dials, uds: tool" tool "$T/t2.sock" \
    "$(pid_of rt2)"
stop_dsroute d2
stop rt2

# 3. The socket file's checks.
start_fakert live --listen "$T/live.sock"
refused "a live listener at the path is left alone" 'live listener' \
    "uds:$T/live.sock,listen" tcp:127.0.0.1:0,listen
# Killed, it leaves its socket file behind: a stale socket.
stop live KILL
: >"$T/file.sock"
refused "a regular file at the path is left alone" 'regular file' \
    "uds:$T/file.sock,listen" tcp:127.0.0.1:0,listen
start_dsroute d3 "uds:$T/live.sock,listen" tcp:127.0.0.1:0,listen
check "a stale socket is replaced" has_line "$T/d3.err" \
    'removed a stale socket'
stop_dsroute d3

# 4. The ACL by uid, and the peer's pid in the audit line.
start_fakert rt4 --listen tcp:127.0.0.1:0
start_dsroute d4 "uds:$T/acl.sock,none=uid:$UID_NOW" \
    "tcp:127.0.0.1:$(fakert_port rt4),connect"
tool --timeout 10 "$T/acl.sock" processinfo
like "the ACL refuses the tool by its uid (getpeereid)" \
    "$(grep '^info: audit: ' "$T/d4.err" | head -n 1)" \
    "uid=$UID_NOW .*role=none"
like "the audit line names the tool's pid (LOCAL_PEERPID)" \
    "$(grep '^info: audit: ' "$T/d4.err" | head -n 1)" ' pid=[1-9][0-9]* '
stop_dsroute d4
stop rt4

# 5. A runtime's default socket, keyed by its start in seconds since 1970.
mkdir -m 0700 "$T/rt"
bg named sh -c 'k=$(LC_ALL=C date -j -f "%a %b %e %T %Y" \
    "$(LC_ALL=C ps -o lstart= -p $$ | sed "s/^ *//")" +%s) &&
    exec "$0" --events "$1" --listen "$2/dotnet-diagnostic-$$-$k-socket"' \
    "$FAKERT" "$T/named.ev" "$T/rt"
: >"$T/named.ev"
if wait_for 10 has_line "$T/named.ev" '^listen '; then
	s=$(ls "$T/rt" | head -n 1)
	key=$(start_key "$(pid_of named)")
	like "the socket's key is the start in seconds since 1970 ($key)" \
	    "$s" "^dotnet-diagnostic-$(pid_of named)-$key-socket\$"
	start_dsroute d5 "uds:$T/rt/$s" "uds:$T/t5.sock,listen"
	processinfo_via "the runtime's own socket is dialled" tool \
	    "$T/t5.sock" "$(pid_of named)"
	stop_dsroute d5
	# The same runtime under a name with another key: planted.
	ln "$T/rt/$s" "$T/rt/dotnet-diagnostic-$(pid_of named)-1-socket" ||
	    fail "a second name for the socket"
	start_dsroute d6 "uds:$T/rt/dotnet-diagnostic-$(pid_of named)-1-socket" \
	    "uds:$T/t6.sock,listen"
	tool --timeout 10 "$T/t6.sock" processinfo
	check "a socket under another key is refused (not the one its name gives)" \
	    has_line "$T/d6.err" 'not the one its name gives'
	stop_dsroute d6
	rm -f "$T/rt/dotnet-diagnostic-$(pid_of named)-1-socket"

	# 6. dir: finds it, and says it rescans for want of inotify.
	start_dsroute d7 "dir:$T/rt" "uds:$T/t7.sock,listen"
	processinfo_via "dir: finds the runtime by its socket" tool \
	    "$T/t7.sock" "$(pid_of named)"
	check "dir: says macOS has no inotify" has_line "$T/d7.err" \
	    'no inotify'
	stop_dsroute d7
else
	fail "a fake runtime listens at its default socket name" \
	    "$(cat "$T/named.err")"
fi
stop named

# 7. TLS between two routers.
. "$top_srcdir/tests/lib/tls.sh"
make_base_certs
start_fakert rt8 --listen tcp:127.0.0.1:0
start_dsroute s8 \
    "tls:127.0.0.1:0,listen,$(cert localhost),ca=$C/ca.pem,allow-cn=client1" \
    "tcp:127.0.0.1:$(fakert_port rt8),connect"
start_dsroute c8 "uds:$T/t8.sock" \
    "tls:127.0.0.1:$(port_of s8 local),connect,ca=$C/ca.pem,$(cert client1)"
processinfo_via "uds: to mutual TLS to tcp:" tool "$T/t8.sock" \
    "$(pid_of rt8)"
stop_dsroute c8
stop_dsroute s8
stop rt8

# 8. The mirror's stand-in for a runtime that dials in.
mkdir -m 0700 "$T/m"
start_dsroute m9 "dir:$T/m,listen" \
    tcp:127.0.0.1:0,listen,advertise=addr:127.0.0.1
start_fakert rt9 --connect "tcp:127.0.0.1:$(port_of m9 remote)"
if wait_for 15 eval "ls '$T/m' | grep -q '^dotnet-diagnostic-[0-9]*-[0-9]*-socket\$'"; then
	sock=$(ls "$T/m" | grep '^dotnet-diagnostic-[0-9]*-[0-9]*-socket$' |
	    head -n 1)
	spid=$(echo "$sock" | sed 's/^dotnet-diagnostic-\([0-9]*\)-.*/\1/')
	like "the stand-in runs, named after the app in ps" \
	    "$(ps -o args= -p "$spid")" '\[dsroute stand-in for pid'
	processinfo_via "a tool at the stand-in's socket reaches the runtime" \
	    tool "$T/m/$sock" "$(pid_of rt9)"
	"$DSROUTE" ps "dir:$T/m" >"$T/ps.out" 2>&1
	check "dsroute ps reads the stand-in's arguments (KERN_PROCARGS2)" \
	    grep -q "$spid" "$T/ps.out"
else
	fail "the mirror made a stand-in's socket" "$(cat "$T/m9.err")"
fi

# 9. The real runtime, and dotnet-trace through the stand-in.
if command -v dotnet >/dev/null 2>&1 && command -v dotnet-trace \
    >/dev/null 2>&1 && dotnet --list-runtimes 2>/dev/null |
    grep -q '^Microsoft\.NETCore\.App 10\.'; then
	dotnet build "$top_srcdir/tests/interop/app/dsapp.csproj" -c Release \
	    -o "$T/app" -nologo -v:quiet \
	    "-p:BaseIntermediateOutputPath=$T/obj/" \
	    "-p:MSBuildProjectExtensionsPath=$T/obj/" >"$T/build.out" 2>&1 ||
	    fail "dsapp builds" "$(tail -n 20 "$T/build.out")"
	bg app env DOTNET_DiagnosticPorts="127.0.0.1:$(port_of m9 remote)" \
	    "$T/app/dsapp"
	if wait_for 30 eval "[ \$(ls '$T/m' | grep -c socket) -ge 2 ]"; then
		TMPDIR=$T/m dotnet-trace ps >"$T/trace-ps.out" 2>&1
		check "dotnet-trace ps lists the stand-ins" \
		    grep -q 'dsroute' "$T/trace-ps.out"
		apid=$(ls "$T/m" | grep -v "^$sock\$" | sed -n \
		    's/^dotnet-diagnostic-\([0-9]*\)-[0-9]*-socket$/\1/p' |
		    head -n 1)
		TMPDIR=$T/m dotnet-trace collect -p "$apid" \
		    --duration 00:00:00:03 -o "$T/app.nettrace" \
		    >"$T/collect.out" 2>&1
		check "dotnet-trace collect -p STANDIN traces the app" \
		    [ -s "$T/app.nettrace" ]
	else
		fail "the app's stand-in appears" "$(cat "$T/m9.err")"
	fi
	stop app
else
	skip "the real runtime through a stand-in" \
	    "needs dotnet with .NET 10 and dotnet-trace on PATH"
fi
stop rt9
stop_dsroute m9

done_testing
