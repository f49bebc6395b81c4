#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute ps.  Against a router: a fake lister (tests/helpers/
# fakelister.py, written from docs/extension.md) answers LIST over tcp:,
# uds: and tls:; the table and JSON lines, a refusal, a peer that is not
# a router, a listing cut short, silence and an unreachable endpoint, each
# one line and exit 1.  The local mirror: a directory made by hand, with
# stand-ins that are real processes whose command lines say what they
# stand for, and the sockets a mirror makes, the apps' command lines
# asked of the mirror with a LIST through a dsroute- name (a fake lister
# there); sockets of dead or other processes and files that are no
# sockets are passed over, and a name that does not answer leaves the
# command line empty.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

command -v python3 >/dev/null || skip_all "python3 is not installed"
LISTER=$top_srcdir/tests/helpers/fakelister.py

# lister NAME MODE WHERE: a fake lister; its port or path in $T/NAME.addr.
lister() {
	bg "$1" python3 "$LISTER" "$2" "$T/$1.addr" "$3"
	wait_for 10 test -s "$T/$1.addr" || fail "$1 listens"
}

addr() {
	cat "$T/$1.addr"
}

# ps NAME ARGS...: dsroute ps; stdout in $T/NAME.ps, stderr in
# $T/NAME.pserr, the status in $rc.
ps() {
	_name=$1
	shift
	"$DSROUTE" ps "$@" >"$T/$_name.ps" 2>"$T/$_name.pserr"
	rc=$?
}

# ps_refused DESCRIPTION EREGEX ARGS...: exit 1, one line matching.
ps_refused() {
	_desc=$1
	_want=$2
	shift 2
	ps refused "$@"
	if [ $rc -eq 1 ] && [ "$(wc -l <"$T/refused.pserr")" -eq 1 ] &&
	    grep -Eq -- "$_want" "$T/refused.pserr" &&
	    [ ! -s "$T/refused.ps" ]; then
		pass "$_desc"
	else
		fail "$_desc" "status $rc: $(cat "$T/refused.pserr")"
	fi
}

# The listing: sorted by pid, the command line whole when not a terminal.
cat >"$T/want.table" <<'TABLE'
 PID  NAME    FOUND      VERSION  COMMAND LINE
  77  worker  link+2     9.0.3    /app/worker --name été
4242  webapi  advertise  10.0.1   dotnet /srv/webapi.dll --urls http://*:80
TABLE

lister tcp list tcp
ps tcp "tcp:127.0.0.1:$(addr tcp)"
is "tcp: exit 0" "$rc" 0
check "tcp: the table" cmp -s "$T/want.table" "$T/tcp.ps"
is "tcp: nothing on stderr" "$(cat "$T/tcp.pserr")" ""
is "tcp: the request is LIST v1" "$(head -n 1 "$T/tcp.addr.req")" \
    444f544e45545f4950435f5631001600d50100000100

# On a terminal of 50 columns, the command line is cut to fit.
if command -v script >/dev/null; then
	script -qec "stty cols 50; '$DSROUTE' ps tcp:127.0.0.1:$(addr tcp)" \
	    /dev/null </dev/null | tr -d '\r' >"$T/tty.ps"
	is "a terminal: the command line cut to its width" \
	    "$(sed -n 3p "$T/tty.ps")" \
	    "4242  webapi  advertise  10.0.1   dotnet /srv/weba"
else
	skip "a terminal: the command line cut" "script(1) is not installed"
fi

# --json: one object per runtime per line, every field.
ps json --json "tcp:127.0.0.1:$(addr tcp)"
is "json: exit 0" "$rc" 0
if python3 - "$T/json.ps" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert len(rows) == 2, rows
w, a = rows
assert w["pid"] == 77 and w["name"] == "worker" and w["found"] == "link"
assert w["hops"] == 2 and w["cmdline"] == "/app/worker --name \u00e9t\u00e9"
assert w["where"] == "tls:node-b:6000" and w["arch"] == "arm64"
assert w["cookie"] == "aa" * 16 and w["version"] == "9.0.3"
assert a["pid"] == 4242 and a["found"] == "advertise" and a["hops"] == 0
assert a["cookie"] == bytes(range(16)).hex() and a["os"] == "Linux"
PY
then
	pass "json: the fields of each runtime"
else
	fail "json: the fields of each runtime" "$(cat "$T/json.ps")"
fi

# The same over uds: and tls:, the transports' own operations.
lister uds list "uds:$T/router.sock"
ps uds "uds:$T/router.sock"
is "uds: exit 0" "$rc" 0
check "uds: the table" cmp -s "$T/want.table" "$T/uds.ps"

if command -v openssl >/dev/null; then
	. "$top_srcdir/tests/lib/tls.sh"
	make_base_certs
	lister tls list "tls:$C/localhost.pem:$C/localhost.key"
	ps tls "tls:localhost:$(addr tls),ca=$C/ca.pem"
	is "tls: exit 0" "$rc" 0
	check "tls: the table" cmp -s "$T/want.table" "$T/tls.ps"
	ps_refused "tls: a router the CA does not vouch for" \
	    "^dsroute ps: tls:localhost:[0-9]+,ca=.*: handshake: " \
	    "tls:localhost:$(addr tls),ca=$C/ca2.pem"
else
	skip "tls: the table" "openssl(1) is not installed"
fi

# A peer's strings reach the terminal without control bytes.
lister hostile hostile tcp
ps hostile "tcp:127.0.0.1:$(addr hostile)"
is "hostile: exit 0" "$rc" 0
is "hostile: control bytes and bad UTF-8 shown as '?'" \
    "$(sed -n 2p "$T/hostile.ps")" \
    "  9  evil?[2J  proc   8.0.0    run?? ??( ? end"

lister empty empty tcp
ps empty "tcp:127.0.0.1:$(addr empty)"
is "empty: exit 0, no bare header" "$rc:$(cat "$T/empty.ps")" "0:"
is "empty: one line says the router knows no runtime" \
    "$(cat "$T/empty.pserr")" \
    "dsroute ps: tcp:127.0.0.1:$(addr empty) knows no runtime: none has dialled it, and it finds none with dir: or proc:"
ps emptyjson --json "tcp:127.0.0.1:$(addr empty)"
is "empty --json: no line at all" \
    "$rc:$(cat "$T/emptyjson.ps" "$T/emptyjson.pserr")" "0:"

# Refusals and failures: one line, exit 1, nothing on stdout.
lister denied denied tcp
ps_refused "denied: the listing needs the observe role" \
    '^dsroute ps: the router refused the listing \(0x80070005 access denied\): the listing needs the observe role$' \
    "tcp:127.0.0.1:$(addr denied)"
lister unknown unknown tcp
ps_refused "a runtime or an old router: not a dsroute router" \
    "is not a dsroute router, or one too old .*\(0x80131385 unknown command\)" \
    "tcp:127.0.0.1:$(addr unknown)"
lister short short tcp
ps_refused "a listing whose END counts more" \
    "the listing ended after 2 of its 3 runtimes" \
    "tcp:127.0.0.1:$(addr short)"
lister close close tcp
ps_refused "a connection closed mid-listing" \
    "closed before the end of the listing" "tcp:127.0.0.1:$(addr close)"
lister other other tcp
ps_refused "a peer of another protocol" \
    "does not speak the diagnostic protocol" "tcp:127.0.0.1:$(addr other)"
lister silent silent tcp
ps_refused "silence: --timeout" \
    "no answer within 300 ms while waiting for the listing" \
    --timeout 300ms "tcp:127.0.0.1:$(addr silent)"

# A port nobody listens on: a listener's port, after it closed.
free_port=$(python3 -c 'import socket; s = socket.socket();
s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
ps_refused "unreachable: connection refused" \
    "^dsroute ps: tcp:127.0.0.1:$free_port: connect: Connection refused$" \
    "tcp:127.0.0.1:$free_port"
ps_refused "no such socket" "uds:$T/none.sock: connect: No such file" \
    "uds:$T/none.sock"
ps_refused "a bad endpoint" "^dsroute ps: " "nonsense:1"
ps_refused "a listener is not for ps" "leave out listen" \
    "tcp:127.0.0.1:$free_port,listen"
ps_refused "a bad timeout" "--timeout soon" --timeout soon dir:

# The local mirror, made by hand.  A stand-in: a shell running the file
# "[dsroute" as its script, so that its command line is the app's name
# and "[dsroute stand-in for pid N on ENDPOINT]".
M=$T/mirror
mkdir "$M" "$T/standin"
cat >"$T/standin/[dsroute" <<'SH'
trap 'kill $! 2>/dev/null; exit 0' TERM
sleep 600 &
wait
SH
# standin NAME PID ENDPOINT: start one; its pid in $T/NAME.pid.
standin() {
	_sn=$1
	shift
	bg "$_sn" python3 -c 'import os, sys
os.chdir(sys.argv[1])
os.execv("/bin/sh", [sys.argv[2], "[dsroute", "stand-in", "for", "pid",
    sys.argv[3], "on", sys.argv[4] + "]"])' \
	    "$T/standin" "$_sn" "$@"
	wait_for 10 grep -q stand-in "/proc/$(pid_of "$_sn")/cmdline" ||
	    fail "stand-in $_sn runs"
}
# sock PATH: a socket file (it stays after its maker exits).
sock() {
	python3 -c 'import socket, sys
socket.socket(socket.AF_UNIX).bind(sys.argv[1])' "$1"
}
standin webapi 4242 tls:node-b:6000
standin worker 77 tcp:0.0.0.0:6000
standin lone 5150 tcp:0.0.0.0:6000
sw=$(pid_of webapi)
sk=$(pid_of worker)
sl=$(pid_of lone)
sock "$M/dotnet-diagnostic-$sw-1234-socket"
sock "$M/dotnet-diagnostic-dsrouter-$sw-1234-socket"
# webapi's mirror lists webapi (cookie 000102...) and worker.
lister mirror list "uds:$M/dsroute-webapi-4242-00010203-socket"
sock "$M/dotnet-diagnostic-dsrouter-$sk-99-socket"
# lone's dsroute- name does not answer.
sock "$M/dotnet-diagnostic-dsrouter-$sl-7-socket"
sock "$M/dsroute-lone-5150-0badc0de-socket"
# Passed over: a dead process's, one that is no stand-in (this shell, and
# so a dotnet-dsrouter's default socket), a file that is no socket, and a
# --diagnostic-port name for another pid.
sh -c 'exit 0' &
dead=$!
wait $dead
sock "$M/dotnet-diagnostic-dsrouter-$dead-5-socket"
sock "$M/dotnet-diagnostic-dsrouter-$$-5-socket"
: >"$M/dotnet-diagnostic-dsrouter-$sw-77-socket"
sock "$M/dsroute-worker-78-0123abcd-socket"

ps dir "dir:$M"
is "dir: exit 0" "$rc" 0
is "dir: three stand-ins" "$(wc -l <"$T/dir.ps")" 4
is "dir: nothing on stderr" "$(cat "$T/dir.pserr")" ""
like "dir: the worker first, its port the router's socket, no command line" \
    "$(sed -n 2p "$T/dir.ps")" \
    "^ *$sk    77  worker  tcp:0.0.0.0:6000 +$M/dotnet-diagnostic-dsrouter-$sk-99-socket,connect *$"
like "dir: webapi, its port the dsroute- name, its command line the mirror's" \
    "$(sed -n 3p "$T/dir.ps")" \
    "^ *$sw  4242  webapi  tls:node-b:6000 +$M/dsroute-webapi-4242-00010203-socket,connect +dotnet /srv/webapi.dll --urls http://\*:80$"
like "dir: lone, whose dsroute- name does not answer: no command line" \
    "$(sed -n 4p "$T/dir.ps")" \
    "^ *$sl  5150  lone +tcp:0.0.0.0:6000 +$M/dsroute-lone-5150-0badc0de-socket,connect *$"
like "dir: the header" "$(sed -n 1p "$T/dir.ps")" \
    "^ *STAND-IN   PID  NAME    WHERE  +DIAGNOSTIC-PORT  +COMMAND LINE$"
like "dir: the mirror was asked with a LIST" "$(cat "$T/mirror.addr.req")" \
    "^444f544e45545f4950435f5631001600d50100000100$"

ps dirjson --json "dir:$M"
if python3 - "$T/dirjson.ps" "$sw" "$M" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
assert len(rows) == 3, rows
r = rows[1]
assert r["standin_pid"] == int(sys.argv[2]) and r["pid"] == 4242
assert r["name"] == "webapi" and r["where"] == "tls:node-b:6000"
assert r["diagnostic_port"] == sys.argv[3] + \
    "/dsroute-webapi-4242-00010203-socket,connect"
assert r["cmdline"] == "dotnet /srv/webapi.dll --urls http://*:80"
assert rows[0]["cmdline"] == "" and rows[2]["cmdline"] == ""
PY
then
	pass "dir --json: the fields"
else
	fail "dir --json: the fields" "$(cat "$T/dirjson.ps")"
fi

TMPDIR=$M ps tmpdir
check "no argument: the mirror in \$TMPDIR" cmp -s "$T/dir.ps" "$T/tmpdir.ps"
TMPDIR=$M ps tmpdir2 dir:
check "dir: alone: the same" cmp -s "$T/dir.ps" "$T/tmpdir2.ps"

stop worker
ps gone "dir:$M"
is "dir: a stand-in that ended is left out" "$(wc -l <"$T/gone.ps")" 3

# No mirror: not a bare header, but what is missing and how to get it.
mkdir "$T/nomirror"
TMPDIR=$T/nomirror ps nomirror
is "no mirror: exit 0, nothing on stdout" "$rc:$(cat "$T/nomirror.ps")" "0:"
like "no mirror: one line says so, and how to make one or ask a router" \
    "$(cat "$T/nomirror.pserr")" \
    "^dsroute ps: no runtime is mirrored in $T/nomirror: no mirror runs there, or it has none yet\\.  A mirror is a router with a dir:,listen endpoint, .* or ask a router itself: dsroute ps tcp:HOST:PORT$"
is "no mirror: that is one line" "$(wc -l <"$T/nomirror.pserr")" 1

ps_refused "dir: no such directory" "^dsroute ps: $T/nodir: No such file" \
    "dir:$T/nodir"

done_testing
