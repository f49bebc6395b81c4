#!/bin/sh
# SPDX-License-Identifier: ISC
#
# proc: runtimes in containers that share no /tmp with the router: each
# fake runtime here is pid 1 of its own pid and mount namespace, with a
# tmpfs of its own on /tmp (or its TMPDIR below it).  The router finds
# them through /proc, the newest serves, one killed is passed over, a
# process that binds pid 1's socket name in its container is refused,
# and a router without privileges says in one line what it cannot see.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

command -v unshare >/dev/null || skip_all "no unshare(1)"
[ -d /mnt ] || skip_all "no /mnt to show the helpers in a container"
unshare --pid --fork --mount-proc --mount true 2>/dev/null ||
    skip_all "cannot make pid and mount namespaces here"

# unshare ignores SIGTERM while it waits: the cleanup kills each
# container's pid 1 first, so that a failed run cannot hang.
trap 'for c in a b sq; do [ -f "$T/$c.pid" ] &&
    pkill -KILL -P "$(cat "$T/$c.pid")"; done; _cleanup' EXIT

# container NAME PID [TMPDIR]: a fake runtime that says it is PID, pid 1 of
# a pid and mount namespace with /tmp of its own; its events in $T/NAME.ev.
# The build may be under /tmp: the helpers are shown at /mnt first.
container() {
	: >"$T/$1.ev"
	bg "$1" unshare --pid --fork --kill-child --mount-proc --mount sh -c '
	    exec 3>>"$1"
	    mount --bind "${2%/*}" /mnt && mount -t tmpfs none /tmp || exit 1
	    d=${4:-/tmp}
	    mkdir -p "$d"
	    k=$(sed -n "s/.*) //p" /proc/1/stat | awk "{ print \$20 }")
	    TMPDIR=$4 exec "/mnt/${2##*/}" \
		--listen "$d/dotnet-diagnostic-1-$k-socket" \
		--pid "$3" --events /dev/fd/3' sh "$T/$1.ev" "$FAKERT" "$2" \
	    "${3:-}"
	wait_for 10 has_line "$T/$1.ev" '^listen ' || fail "$1 listens"
}

# end_container NAME: SIGKILL its pid 1 (unshare itself ignores SIGTERM
# while it waits), and with it the namespace and its /tmp.
end_container() {
	pkill -KILL -P "$(pid_of "$1")"
	wait "$(pid_of "$1")" 2>/dev/null
}

# served ROUTER: the pid a ProcessInfo through ROUTER was answered with.
served() {
	tool --timeout 10 "tcp:127.0.0.1:$(port_of "$1" remote)" processinfo &&
	    field pid "$T/tool.out"
}

refused "proc: cannot listen" 'proc: finds runtimes to dial; it cannot listen' \
    proc:,listen tcp:127.0.0.1:0

container a 7101
start_dsroute p -v debug proc: tcp:127.0.0.1:0
check "the endpoint dials (auto role)" has_line "$T/p.err" \
    "local proc:/proc: connecting per session"
is "a runtime in a container of its own is found" "$(served p)" 7101
sleep 0.02	# not a sync: b's start time must be greater
container b 7102 /tmp/private/dir
is "a newer runtime does not take the tools from the one serving" \
    "$(served p)" 7101

# Both listed, each by the pid it knows itself by, found through /proc;
# a mirror of the node shows both.
check "ListRuntimes lists the runtimes of both containers" \
    wait_for 10 eval '[ "$("$DSROUTE" ps "tcp:127.0.0.1:$(port_of p remote)" |
	grep -Ec "^ *710[12] +fakert +proc ")" -eq 2 ]'
M=$T/mirror
mkdir -m 700 "$M"
start_dsroute pm --link-poll 0.5 "dir:$M,listen" proc:
check "a mirror of proc: shows both" \
    wait_for 10 eval '[ "$(ls "$M" | grep -c "^dsroute-fakert-710[12]-")" -eq 2 ]'
check "... and a tool on b's mirror name reaches b" \
    tool --timeout 10 "$(ls "$M"/dsroute-fakert-7102-*)" processinfo
is "... b itself" "$(field pid "$T/tool.out")" 7102
stop_dsroute pm

# a is killed: its tmpfs goes with its namespace, and b, found in its
# TMPDIR, serves.
end_container a
is "once the runtime serving is gone, the newest serves" "$(served p)" 7102
is "... and a saw nothing of b's tools (the routers' ProcessInfo2 aside)" \
    "$(count_lines "$T/a.ev" '^command 0x04 0x00 ')" 2
stop_dsroute p

# In a third container, pid 1 is a shell and not a runtime; pid 2 binds
# the name pid 1's socket would have.  Newer than b, a fresh router tries
# it first.
: >"$T/sq.ev"
bg sq unshare --pid --fork --kill-child --mount-proc --mount sh -c '
    exec 3>>"$1"
    mount --bind "${2%/*}" /mnt && mount -t tmpfs none /tmp || exit 1
    k=$(sed -n "s/.*) //p" /proc/1/stat | awk "{ print \$20 }")
    "/mnt/${2##*/}" --listen "/tmp/dotnet-diagnostic-1-$k-socket" --pid 7666 \
	--events /dev/fd/3 &
    wait' sh "$T/sq.ev" "$FAKERT"
wait_for 10 has_line "$T/sq.ev" '^listen '
start_dsroute q -v debug proc: tcp:127.0.0.1:0
is "a socket bound under pid 1's name by another process is passed over" \
    "$(served q)" 7102
check "... with the reason" has_line "$T/q.err" \
    'passed over: the listener is process [0-9]+, not the one whose socket it is'
is "... and it got no byte" "$(count_lines "$T/sq.ev" '^command ')" 0
end_container sq
check "the router is still up" alive q
stop_dsroute q

# Without privileges: root's runtimes are not found, and one line says so.
bg u setpriv --reuid=nobody --regid=nogroup --clear-groups "$DSROUTE" \
    proc: tcp:127.0.0.1:0
wait_for 10 has_line "$T/u.err" '^info: ready$'
tool --timeout 10 "tcp:127.0.0.1:$(port_of u remote)" processinfo
like "as nobody: root's runtime is not found (file not found)" \
    "$(cat "$T/tool.out")" '^error 0x80070002$'
tool --timeout 10 "tcp:127.0.0.1:$(port_of u remote)" processinfo
is "... one line says why, however many tools ask" \
    "$(count_lines "$T/u.err" 'processes cannot be looked at, so their runtimes are not found')" 1
stop_dsroute u
end_container b

done_testing
