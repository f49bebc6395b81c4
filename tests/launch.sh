#!/bin/sh
# SPDX-License-Identifier: ISC
#
# -- COMMAND: dsroute runs the application as its child, on both command
# lines.  The child starts once the endpoints listen, with
# DOTNET_DiagnosticPorts naming the router's socket for runtimes (added
# to a value it has; ,suspend when asked, else ,nosuspend), our standard
# streams and no other descriptor; SIGINT and SIGTERM are passed on to
# it; the router exits when it does, with its status (128+N for a signal
# N), and says so in one line.  A program that cannot start is one line
# and a shell's status.  The fake runtime stands for the application's
# runtime here; tests/interop-launch.sh has the real one.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/launch.sh"

# clean NAME: no sanitizer report in a router's log.
clean() {
	! grep -Eq 'Sanitizer|runtime error:' "$T/$1.err"
}

# The child's view: its environment, whether the socket listened, its
# descriptors, its process group and its signals; then its own status.
cat >"$T/child.sh" <<'EOF'
#!/bin/sh
out=$1
shift
printf '%s\n' "${DOTNET_DiagnosticPorts-unset}" >"$out.env"
sock=${DOTNET_DiagnosticPorts##*;}
sock=${sock%%,*}
[ -S "$sock" ] && echo listening >"$out.sock"
stat -c '%a' "${sock%/*}" >"$out.dirmode"
# The shell keeps its script open at 10 and above: not ours.
ls /proc/$$/fd | awk '$1 < 10' >"$out.fds"
ps -o pgid= -p $$ | tr -d ' ' >"$out.pgid"
case "$1" in
exit)	exit "$2" ;;
kill)	kill -"$2" $$ ;;
trap)	trap 'echo TERM >"$out.sig"; exit 7' TERM
	trap 'echo INT >"$out.sig"; exit 5' INT
	echo ready >"$out.ready"
	while :; do sleep 0.05; done ;;
esac
EOF
chmod +x "$T/child.sh"

# --- the one-endpoint form: a socket of the router's own.
launched l1 tcp:127.0.0.1:0 -- "$T/child.sh" "$T/c1" exit 3
reaped l1
is "the router exits with the application's status" "$rc" 3
like "the child has DOTNET_DiagnosticPorts naming the router's socket" \
    "$(cat "$T/c1.env")" "^$T/l1\.d/dsroute-[0-9]+-[A-Za-z0-9]{6}/app\.sock,nosuspend\$"
is "... which listened when the child started" "$(cat "$T/c1.sock")" \
    listening
is "... in a directory of its own, mode 0700" "$(cat "$T/c1.dirmode")" 700
check "the log says it started the application" has_line "$T/l1.err" \
    "^info: started the application \($T/child\.sh, pid [0-9]+\) with DOTNET_DiagnosticPorts=$T/l1\.d/dsroute-"
check "... after every endpoint listened" eval "grep -n '' '$T/l1.err' |
    grep -A99 'remote tcp:127.0.0.1:[0-9]*: listening' |
    grep -q 'started the application'"
is "one line says how it ended" "$(count_lines "$T/l1.err" \
    '^info: the application \(.*\) exited with status 3; dsroute stops with it$')" 1
check "the router's socket and its directory are gone" eval \
    "[ -z \"\$(ls -A '$T/l1.d')\" ]"
is "the child had its standard streams and nothing else" \
    "$(tr '\n' ' ' <"$T/c1.fds")" "0 1 2 "
check "no sanitizer report" clean l1

# --- a TMPDIR anyone may write, not sticky: a Kubernetes emptyDir at /tmp.
mkdir -m 0777 "$T/l0.d"
chmod 0777 "$T/l0.d"
launched l0 tcp:127.0.0.1:0 -- "$T/child.sh" "$T/c0" exit 0
reaped l0
is "a TMPDIR of mode 0777 (an emptyDir): the application runs, status 0" \
    "$rc" 0
is "... its socket listened, in a private directory" \
    "$(cat "$T/c0.sock" "$T/c0.dirmode" 2>&1 | tr '\n' ' ')" "listening 700 "

# --- a value the application had is kept; --suspend; LOCAL given.
mkdir -p -m 0700 "$T/l2.d"
bg l2 env TMPDIR="$T/l2.d" DOTNET_DiagnosticPorts=/elsewhere/a.sock,nosuspend \
    "$DSROUTE" --suspend "uds:$T/rt.sock,listen" tcp:127.0.0.1:0 -- \
    "$T/child.sh" "$T/c2" exit 0
reaped l2
is "--suspend, LOCAL given: exit status 0" "$rc" 0
is "DOTNET_DiagnosticPorts: its own value, then LOCAL with ,suspend" \
    "$(cat "$T/c2.env")" "/elsewhere/a.sock,nosuspend;$T/rt.sock,suspend"

# --- the status of a child ended by a signal: 128+N.
launched l3 tcp:127.0.0.1:0 -- "$T/child.sh" "$T/c3" kill KILL
reaped l3
is "a child killed by SIGKILL: exit status 137" "$rc" 137
check "... and the line says which signal" has_line "$T/l3.err" \
    '^info: the application \(.*\) was ended by signal 9; dsroute stops, exit status 137$'

# --- SIGTERM and SIGINT go to the application, which decides.
for sig in TERM INT; do
	launched s$sig tcp:127.0.0.1:0 -- "$T/child.sh" "$T/s$sig" trap
	wait_for 10 test -f "$T/s$sig.ready"
	kill -$sig "$(pid_of s$sig)"
	want=7
	[ $sig = INT ] && want=5
	reaped s$sig
	is "SIG$sig: passed on; the router exits with the child's status" \
	    "$rc" $want
	is "SIG$sig: the child got it" "$(cat "$T/s$sig.sig")" $sig
	check "SIG$sig: the log says it was passed on" has_line \
	    "$T/s$sig.err" "^info: passing SIG$sig on to the application"
	check "SIG$sig: the child had a process group of its own" eval \
	    "[ \"\$(cat '$T/s$sig.pgid')\" != \"\$(ps -o pgid= -p $$ | tr -d ' ')\" ]"
done

# --- the fake runtime as the application: a tool reaches it over TCP.
launched rt tcp:127.0.0.1:0 -- sh -c \
    'exec "$0" --connect "${DOTNET_DiagnosticPorts%%,*}" --events "$1"' \
    "$FAKERT" "$T/app.ev"
wait_for 10 has_line "$T/rt.err" '^info: ready$'
P=$(port_of rt remote)
check "the application's runtime dials the router" wait_for 10 has_line \
    "$T/rt.err" '^info: runtime pid [0-9]+ \(cookie [0-9a-f]+\) connected on uds:'
APP=$(sed -n 's/.*started the application (.*, pid \([0-9]*\)).*/\1/p' \
    "$T/rt.err")
processinfo_via "a tool on the router's TCP port" tool "tcp:127.0.0.1:$P" \
    "$APP"
kill -TERM "$(pid_of rt)"
reaped rt
is "SIGTERM: the fake runtime ends, and the router with it, status 0" "$rc" 0
check "no sanitizer report" clean rt

# --- a program that cannot start: one line, a shell's status.
launched nf tcp:127.0.0.1:0 -- "$T/no/such/app"
reaped nf
is "a missing program: exit status 127" "$rc" 127
is "... with one line that says why" "$(count_lines "$T/nf.err" \
    "^crit: cannot run $T/no/such/app: No such file or directory\$")" 1
check "... and no 'ready'" eval "! has_line '$T/nf.err' '^info: ready$'"
check "... and no socket left" eval "! ls '$T/nf.d' | grep -q sock"
: >"$T/notexec"
launched ne tcp:127.0.0.1:0 -- "$T/notexec"
reaped ne
is "a file that is not executable: exit status 126" "$rc" 126
check "... with one line that says why" has_line "$T/ne.err" \
    "^crit: cannot run $T/notexec: Permission denied\$"

# --- no endpoint the runtime can dial.
launched nl "uds:$T/tool.sock,connect" tcp:127.0.0.1:0 -- "$T/child.sh" \
    "$T/c4" exit 0
reaped nl
is "no socket for the runtime: exit status 1" "$rc" 1
check "... one line says so" has_line "$T/nl.err" \
    '^crit: -- .*: neither endpoint is a socket of this host that a runtime dials'
check "... and the application did not run" eval "[ ! -f '$T/c4.env' ]"

# --- refused before anything starts.
refused "-- with nothing after it" '^crit: --: give the application' \
    tcp:127.0.0.1:0 --
refused "--suspend without --" '^crit: --suspend is for the application' \
    --suspend uds:a.sock tcp:127.0.0.1:0
: >"$T/r.conf"
refused "-f with --" '^crit: -- COMMAND takes its endpoints on the command line' \
    -f "$T/r.conf" -- true
check "dsroute -n accepts -- COMMAND" eval "'$DSROUTE' -n tcp:127.0.0.1:0 -- \
    dotnet app.dll >'$T/n.out' 2>&1 && grep -q 'configuration OK' '$T/n.out'"

# --- dotnet-dsrouter's command line.
launched d1 server-server -ipcs "$T/ipc.sock" -- "$T/child.sh" "$T/d1" exit 4
reaped d1
is "server-server -- : the application's status" "$rc" 4
like "server-server: the application dials a socket of the router's own" \
    "$(cat "$T/d1.env")" "^$T/d1\.d/dsroute-[0-9]+-[A-Za-z0-9]{6}/app\.sock,nosuspend\$"
launched d2 client-server -ipcc "$T/listening-tool.sock" -- "$T/child.sh" \
    "$T/d2" exit 0
reaped d2
is "client-server -- : status 0" "$rc" 0
like "client-server: suspended, as dotnet-dsrouter has it" \
    "$(cat "$T/d2.env")" ',suspend$'
launched d3 server-server -ipcs "$T/ipc3.sock" -- sh -c \
    'exec "$0" --connect "${DOTNET_DiagnosticPorts%%,*}" --events "$1"' \
    "$FAKERT" "$T/d3.ev"
wait_for 10 has_line "$T/d3.err" 'connected on uds:'
APP=$(sed -n 's/.*started the application (.*, pid \([0-9]*\)).*/\1/p' \
    "$T/d3.err")
processinfo_via "server-server: a tool on -ipcs" tool "$T/ipc3.sock" "$APP"
kill -INT "$(pid_of d3)"
reaped d3
is "server-server: SIGINT ends the application, and the router" "$rc" 0
refused "server-client takes no --" \
    'server-client: -- app: the application.s runtime dials the router, which only client-server and server-server take' \
    server-client -tcpc 127.0.0.1:9 -- app
refused "nor a preset" 'android: -- app: the application.s runtime dials' \
    android -- app
refused "-tcps with --" \
    'server-server: -- app: the application dials a socket of this host that the router makes; --tcp-server is for a runtime elsewhere' \
    server-server -tcps 127.0.0.1:9000 -- app

# --- with a terminal, the application has its foreground, as a job.
mkdir -p -m 0700 "$T/tty.d"
if script -qec "env TMPDIR=$T/tty.d $DSROUTE tcp:127.0.0.1:0 -- sh -c \
    'ps -o pgid=,tpgid= -p \$\$ >$T/tty.pg'" /dev/null >/dev/null 2>&1; then
	read -r pgid tpgid <"$T/tty.pg"
	is "with a terminal, the application's group is its foreground" \
	    "$pgid" "$tpgid"
else
	skip "with a terminal, the application's group is its foreground" \
	    "script(1) could not run it"
fi

# --- as process 1 of a container, its orphans are reaped.
if unshare -fp --mount-proc true 2>/dev/null; then
	cat >"$T/orphans.sh" <<'EOF'
#!/bin/sh
sh -c 'sleep 0.2 & echo $! >"$1"' sh "$1.pid"
sleep 1.5
sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$(cat "$1.pid")/status \
    >"$1.state" 2>/dev/null
echo "$PPID" >"$1.ppid"
EOF
	chmod +x "$T/orphans.sh"
	mkdir -p -m 0700 "$T/o.d"
	env TMPDIR="$T/o.d" unshare -fp --mount-proc "$DSROUTE" \
	    tcp:127.0.0.1:0 -- "$T/orphans.sh" "$T/orph" 2>"$T/o.err"
	is "in a pid namespace, dsroute is process 1" "$(cat "$T/orph.ppid")" 1
	is "an orphan that ended was reaped: no zombie" \
	    "$(cat "$T/orph.state" 2>/dev/null)" ""
else
	skip "in a pid namespace, dsroute is process 1" "unshare -p not allowed"
	skip "an orphan that ended was reaped" "unshare -p not allowed"
fi

done_testing
