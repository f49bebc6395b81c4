#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Privileges: core dumps off and no-new-privileges from the start;
# --user/--group drop root once every listener is bound and every key
# read, with no root id, group or capability left (as /proc/PID/status
# shows); the socket's owner=, group= and mode=; and a start that cannot
# drop as asked, or could regain root after, stops with one line.

. "$top_srcdir/tests/lib/lib.sh"

[ "$(id -u)" -eq 0 ] || skip_all "privilege drop needs root"
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
    skip_all "no user nobody or group nogroup"

# ids PID Uid|Gid: the four ids of a process.
ids() {
	awk -v k="$2:" '$1 == k { print $2, $3, $4, $5 }' "/proc/$1/status"
}

# peekable PID: its memory is open to a process of its uid (nobody), as
# /proc/PID/environ shows: not when it is undumpable.
peekable() {
	setpriv --reuid=nobody --regid=nogroup --clear-groups \
	    cat "/proc/$1/environ" >/dev/null 2>&1
}

status_of() {
	awk -v k="$2:" '$1 == k { print $2 }' "/proc/$1/status"
}

# Without --user: no new privileges and no core dump, from the start.
start_dsroute r "uds:$T/r.sock" tcp:127.0.0.1:0
rpid=$(pid_of r)
is "by default: no-new-privileges is set" "$(status_of "$rpid" NoNewPrivs)" 1
like "by default: core dumps are off" \
    "$(grep '^Max core file size' "/proc/$rpid/limits")" \
    '^Max core file size +0 +0 '
stop_dsroute r

# The socket directory belongs to the user the router becomes, so that it
# can remove its socket at exit; the test directory lets it through.
chmod 0755 "$T"
mkdir "$T/run"
chown nobody:nogroup "$T/run"
chmod 0700 "$T/run"

# TLS: a key only root can read, read before the drop.
if command -v openssl >/dev/null; then
	. "$top_srcdir/tests/lib/tls.sh"
	make_base_certs
	chmod 0600 "$C"/*.key
	tls="tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
else
	tls=""
fi

start_dsroute d --user nobody --group nogroup \
    "uds:$T/run/rt.sock,owner=nobody,group=nogroup,mode=0660" \
    "${tls:-tcp:127.0.0.1:0}"
dpid=$(pid_of d)
is "--user: no root uid is left (real, effective, saved, fs)" \
    "$(ids "$dpid" Uid)" "65534 65534 65534 65534"
is "--user: no root gid is left" "$(ids "$dpid" Gid)" \
    "65534 65534 65534 65534"
is "--user: the supplementary groups are nobody's" \
    "$(status_of "$dpid" Groups)" 65534
is "--user: no capability is left" "$(status_of "$dpid" CapEff)" \
    0000000000000000
is "--user: no capability is permitted either" \
    "$(status_of "$dpid" CapPrm)" 0000000000000000
is "--user: nor ambient, for a program it runs" \
    "$(status_of "$dpid" CapAmb)" 0000000000000000
is "--user: no-new-privileges is set" "$(status_of "$dpid" NoNewPrivs)" 1
if peekable "$dpid"; then
	fail "--user: undumpable: its own uid cannot read its memory"
else
	pass "--user: undumpable: its own uid cannot read its memory"
fi
check "--user: the drop is logged" has_line "$T/d.err" \
    '^info: running as uid 65534, gid 65534 \(--user nobody\)$'
is "owner=, group=, mode=: the socket file is as asked" \
    "$(stat -c '%U %G %a %F' "$T/run/rt.sock")" "nobody nogroup 660 socket"

start_fakert rt --connect "$T/run/rt.sock"
wait_for 10 has_line "$T/d.err" "runtime pid $(pid_of rt) .* connected"
if [ -n "$tls" ]; then
	port=$(port_of d remote)
	sclient s1 "$port" -cert "$C/client1.pem" -key "$C/client1.key"
	check "--user: a command still routes, over TLS with a key only root \
could read" test "$(wc -c <"$T/s1.out")" -gt 20
	like "--user: and reaches the runtime" "$(cat "$T/d.err")" \
	    "command=ProcessInfo .*runtime_pid=$(pid_of rt) .*end=\"(runtime|tool) closed\""
	kill -HUP "$dpid"
	check "--user: a reload that cannot read the key keeps the old one" \
	    wait_for 10 has_line "$T/d.err" \
	    'reload: .*keeping the current certificates'
	sclient s2 "$port" -cert "$C/client1.pem" -key "$C/client1.key"
	check "--user: and the router still serves" \
	    test "$(wc -c <"$T/s2.out")" -gt 20
else
	check "--user: a command still routes" \
	    tool --timeout 10 "tcp:127.0.0.1:$(port_of d remote)" processinfo
	skip "--user: TLS keys are read before the drop" "no openssl(1)"
	skip "--user: a reload that cannot read the key" "no openssl(1)"
fi
stop_dsroute d
check "--user: the socket is removed at exit" test ! -e "$T/run/rt.sock"
stop rt

# A directory the dropped user cannot write: the socket stays at exit,
# and the next start replaces it as a stale socket.
mkdir -m 0755 "$T/ro"
start_dsroute k --user nobody "uds:$T/ro/k.sock" tcp:127.0.0.1:0
stop_dsroute k
check "--user: a socket it cannot remove is left, with a warning" \
    has_line "$T/k.err" "^warn: uds:$T/ro/k.sock: cannot remove the socket: Permission denied; the next start replaces it as a stale socket$"
check "--user: the socket is still there" test -S "$T/ro/k.sock"
start_dsroute k2 "uds:$T/ro/k.sock" tcp:127.0.0.1:0
check "--user: the next start replaces it" has_line "$T/k2.err" \
    'removed a stale socket'
stop_dsroute k2

# Started by a root with supplementary groups of its own (adm, sudo):
# none of them is left, only the user's.
bg g setpriv --groups 4,27 "$DSROUTE" --user nobody tcp:127.0.0.1:0 \
    tcp:127.0.0.1:0
if wait_for 10 has_line "$T/g.err" '^info: ready$'; then
	is "--user: the groups of the root that started it are gone" \
	    "$(status_of "$(pid_of g)" Groups)" 65534
else
	fail "--user: the groups of the root that started it are gone" \
	    "$(cat "$T/g.err")"
fi
stop_dsroute g

# --allow-core-dumps: the dropped process is dumpable again.
start_dsroute c --user nobody --allow-core-dumps \
    "uds:$T/run/c.sock,owner=nobody" tcp:127.0.0.1:0
check "--allow-core-dumps: dumpable after the drop" peekable "$(pid_of c)"
stop_dsroute c

# A drop that cannot happen, or leaves root, stops the start.
refused "--user root: root is left, so it stops" \
    'the ids are uid 0/0/0 gid 0/0/0, not 0 and 0 without root; stopping' \
    --user root "uds:$T/x.sock" tcp:127.0.0.1:0
check "--user root: no socket is left behind" test ! -e "$T/x.sock"
# A parent that keeps capabilities across setuid(2) (securebits
# no_setuid_fixup): the ids change, root's powers stay; the router sees
# that root can be regained and stops.
setpriv --securebits +no_setuid_fixup "$DSROUTE" --user nobody \
    "uds:$T/x.sock" tcp:127.0.0.1:0 >"$T/out" 2>"$T/err"
rc=$?
like "--user, capabilities kept across setuid: exit 1 with one line" \
    "$rc $(wc -l <"$T/err") $(cat "$T/err")" \
    '^1 1 crit: after dropping privileges root could be regained; stopping$'
refused "--user: an unknown user" "--user no-such-user-x: no such user" \
    --user no-such-user-x "uds:$T/x.sock" tcp:127.0.0.1:0
refused "--group without --user" "--group needs --user" \
    --group nogroup "uds:$T/x.sock" tcp:127.0.0.1:0
setpriv --reuid=nobody --regid=nogroup --clear-groups "$DSROUTE" \
    --user daemon tcp:127.0.0.1:0 tcp:127.0.0.1:0 >"$T/out" 2>"$T/err"
rc=$?
like "--user when not root: exit 1 with one line" \
    "$rc $(wc -l <"$T/err") $(cat "$T/err")" \
    '^1 1 crit: cannot drop privileges to user daemon: Operation not permitted \(--user needs dsroute to start as root\)$'

done_testing
