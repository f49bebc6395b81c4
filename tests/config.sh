#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The configuration file: checking good and bad files with -n (every
# error, with its line), several routes in one process with their own
# policies, and SIGHUP with a good file, a broken one and one that changes
# endpoints, while a trace keeps streaming.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

STREAM=8388608

# routes FILE POLICY-A: write a file with routes a and b.
routes() {
	cat >"$1" <<EOF
# two routes in one process
verbose = debug
handshake-timeout = 5s

[a]
local = uds:$T/a.sock
remote = tcp:127.0.0.1:0
	remote.policy = $2	; indented, with a comment

[b]
local = uds:$T/b.sock
remote = tcp:127.0.0.1:0
remote.deny = ProcessEnvironment
EOF
}

# --- checking ------------------------------------------------------------

routes "$T/good.conf" observe
"$DSROUTE" -n -f "$T/good.conf" >"$T/n.out" 2>&1
is "-n on a good file: exit 0" $? 0
is "-n on a good file: configuration OK" "$(cat "$T/n.out")" \
    "configuration OK (not checked: that ports are free, and that peers and runtimes answer)"

long=$(printf 'x%.0s' $(seq 1 200))
cat >"$T/bad.conf" <<EOF
verbose = loud
bogus = 1
unsafe-listen = maybe

[a]
local = uds:$T/a.sock
remote = tcp:127.0.0.1:port
remote.policy = admin
remote.deny = Frobnicate
remote.colour = blue
this line is junk
local = uds:$T/again.sock
[a]
[no spaces please]
[c]
local = uds:$T/c.sock
remote.allow = $long
[d]
local = uds:$T/d.sock
remote = tcp:127.0.0.1:0
remote.observe = addr:10.0.0.0/33
remote.deny = CollectTracing*,GenerateCoreDump
EOF
"$DSROUTE" -n -f "$T/bad.conf" >"$T/n.out" 2>&1
is "-n on a bad file: exit 1" $? 1
f="$T/bad.conf"
is "-n on a bad file: every error, in line order, as file:line: message" \
    "$(cat "$T/n.out")" \
"$f:1: verbose = loud: give none, critical, error, warning, info, debug or trace
$f:2: unknown setting 'bogus'
$f:3: unsafe-listen = maybe: give yes or no
$f:7: remote: port 'port' is not a number from 0 to 65535
$f:8: remote: policy=admin: give none, observe, operate, dump or full
$f:9: remote: deny=Frobnicate: no command has that name (see dsroute.conf(5) for the names)
$f:10: remote: unknown option 'colour'
$f:11: not a setting, a [route] or a comment: write key = value
$f:12: local is given twice in route [a] (first at line 6)
$f:13: route [a] is defined twice (first at line 5)
$f:14: [no spaces please]: a route name has 1 to 40 letters, digits, '-', '_' or '.'
$f:15: route [c] has no remote endpoint: add remote = ...
$f:17: the line is longer than 198 characters; split an endpoint with local.OPTION = VALUE lines
$f:21: remote: observe=addr:10.0.0.0/33: give an address or a network such as 10.0.0.0/8 or fd00::/8
$f:22: remote.deny: a value holds one item; repeat the key for more"

"$DSROUTE" -f "$T/bad.conf" >"$T/start.out" 2>&1
rc=$?
is "starting with a bad file: exit 1" $rc 1
is "starting with a bad file: every error is logged" \
    "$(count_lines "$T/start.out" "^fail: $f:[0-9]+: ")" 15
is "starting with a bad file: and counted" "$(tail -n 1 "$T/start.out")" \
    "crit: $f: 15 errors"
printf '' >"$T/empty.conf"
is "an empty file has no route" "$("$DSROUTE" -n -f "$T/empty.conf" 2>&1)" \
    "$T/empty.conf:1: no route: add a [name] section with local = and remote ="
is "a missing file" "$("$DSROUTE" -n -f "$T/none.conf" 2>&1)" \
    "$T/none.conf: cannot read it: No such file or directory"
is "a directory" "$("$DSROUTE" -n -f "$T" 2>&1)" \
    "$T: cannot read it: Is a directory"
"$DSROUTE" -n uds:/tmp/x tcp:127.0.0.1:0,policy=dump,full=uid:0 >"$T/n.out"
is "-n checks command-line endpoints too" "$(cat "$T/n.out")" \
    "configuration OK (not checked: that ports are free, and that peers and runtimes answer)"
# A TLS listener's certificate options on side.option lines: the options
# that only make sense together are checked on the whole endpoint, and an
# error there points at the endpoint's own line.
cat >"$T/tls.conf" <<EOF
[tunnel]
local = uds:$T/t.sock,connect
remote = tls:127.0.0.1:0,listen
remote.cert = $T/server.pem
remote.key = $T/server.key
remote.ca = $T/ca.pem
EOF
# -n loads them: real ones.
sh "$top_srcdir/certs/mkcerts.sh" -d "$T" ca ca >/dev/null 2>&1
sh "$top_srcdir/certs/mkcerts.sh" -d "$T" server server >/dev/null 2>&1
is "-n: a TLS listener's cert=, key= and ca= as remote.OPTION lines" \
    "$("$DSROUTE" -n -f "$T/tls.conf" 2>&1)" "configuration OK (not checked: that ports are free, and that peers and runtimes answer)"
sed '/remote.key/d' "$T/tls.conf" >"$T/tls-nokey.conf"
is "-n: cert= without key= is blamed on the endpoint's line" \
    "$("$DSROUTE" -n -f "$T/tls-nokey.conf" 2>&1)" \
    "$T/tls-nokey.conf:3: remote: give cert= and key= together"
is "-n on a bad command-line endpoint" \
    "$("$DSROUTE" -n uds:/tmp/x tcp:127.0.0.1:0,allow=4:99 2>&1)" \
    "tcp:127.0.0.1:0,allow=4:99: allow=4:99: 0x0463 is not a command dsroute knows, and unknown commands are always refused"

# --- two routes in one process -------------------------------------------

start_dsroute d -v info -f "$T/good.conf"
is "a command-line option wins over the file's setting" \
    "$(count_lines "$T/d.err" '^dbug:')" 0
start_fakert rta --connect "$T/a.sock" --stream-bytes $STREAM
start_fakert rtb --connect "$T/b.sock"
ra=$(pid_of rta)
rb=$(pid_of rtb)
pa="tcp:127.0.0.1:$(sed -n 's/^info: remote tcp:.*:\([0-9]*\): listening.*/\1/p' "$T/d.err" | head -n 1)"
pb="tcp:127.0.0.1:$(sed -n 's/^info: remote tcp:.*:\([0-9]*\): listening.*/\1/p' "$T/d.err" | tail -n 1)"
wait_for 10 has_line "$T/d.err" "runtime pid $rb .* connected"
check "route a reaches its runtime" tool --timeout 10 "$pa" processinfo
is "route a: the right runtime" "$(field pid "$T/tool.out")" "$ra"
check "route b reaches its runtime" tool --timeout 10 "$pb" processinfo
is "route b: the right runtime" "$(field pid "$T/tool.out")" "$rb"
tool --timeout 10 "$pa" resume
is "route a has policy=observe: ResumeRuntime is answered by the router" \
    "$(cat "$T/tool.out")" "ok"
is "... and its runtime never got it" \
    "$(count_lines "$T/rta.ev" 'ResumeRuntime')" 0
check "route b has the default, operate: ResumeRuntime goes through" \
    tool --timeout 10 "$pb" resume
tool --timeout 10 "$pb" env
like "route b denies ProcessEnvironment" "$(cat "$T/tool.out")" \
    '^error 0x80070005$'
is "session lines name their route, each with its own runtime" \
    "$(grep -Ec "^info: session .* route=a .*runtime_pid=$ra " "$T/d.err") $(grep -Ec "^info: session .* route=b .*runtime_pid=$rb " "$T/d.err") $(grep -Ec "route=a .*runtime_pid=$rb |route=b .*runtime_pid=$ra " "$T/d.err")" \
    "1 2 0"

# --- reload --------------------------------------------------------------

# A trace on route a streams, slowly, across the reloads.
bg trace "$FAKETOOL" --timeout 60 "$pa" collect --expect-bytes $STREAM \
    --rate 1048576
wait_for 10 has_line "$T/rta.ev" '^stream-start '

routes "$T/good.conf" operate
printf 'remote.deny = ProcessInfo*\n' >>"$T/good.conf"
kill -HUP "$(pid_of d)"
wait_for 10 has_line "$T/d.err" '^info: reloaded '
check "the trace still streams after the reload" alive trace
check "reload: route a now has operate: ResumeRuntime goes through" \
    tool --timeout 10 "$pa" resume
tool --timeout 10 "$pb" processinfo
like "reload: route b now denies ProcessInfo" "$(cat "$T/tool.out")" \
    '^error 0x80070005$'

printf 'what is this\n' >>"$T/good.conf"
kill -HUP "$(pid_of d)"
wait_for 10 has_line "$T/d.err" 'the running configuration stays'
like "reload of a broken file: the error with its line" \
    "$(grep "^fail: $T/good.conf:" "$T/d.err")" \
    "^fail: $T/good.conf:15: not a setting"
tool --timeout 10 "$pb" processinfo
like "reload of a broken file: the old policy stays" "$(cat "$T/tool.out")" \
    '^error 0x80070005$'
check "reload of a broken file: the router stays up" alive d

routes "$T/good.conf" observe
sed -i "s|^local = uds:$T/b.sock|local = uds:$T/b2.sock|" "$T/good.conf"
printf '[c]\nlocal = uds:%s/c.sock\nremote = tcp:127.0.0.1:0\n' "$T" \
    >>"$T/good.conf"
kill -HUP "$(pid_of d)"
wait_for 10 eval "[ \$(count_lines '$T/d.err' '^info: reloaded ') -ge 2 ]"
like "reload: a changed endpoint waits for a restart" \
    "$(grep '^warn: reload: route \[b\]' "$T/d.err")" \
    "local changed from uds:$T/b.sock to uds:$T/b2.sock; that takes a restart"
like "reload: a new route waits for a restart" \
    "$(grep '^warn: reload: route \[c\]' "$T/d.err")" 'is new in'
check "reload: the old endpoint still serves" \
    tool --timeout 10 "$pb" processinfo
resumed=$(count_lines "$T/rta.ev" 'ResumeRuntime')
tool --timeout 10 "$pa" resume
is "reload: the policies were applied all the same (observe: none sent)" \
    "$(count_lines "$T/rta.ev" 'ResumeRuntime')" "$resumed"

if wait "$(pid_of trace)"; then
	_id=$(field session "$T/trace.out")
	wait_for 10 has_line "$T/rta.ev" "^stream-end $_id "
	is "the trace that started before the reloads ended whole" \
	    "$(field sha256 "$T/trace.out")" \
	    "$(sed -n "s/^stream-end $_id $STREAM //p" "$T/rta.ev")"
else
	fail "the trace that started before the reloads ended whole" \
	    "$(cat "$T/trace.out" "$T/trace.err")"
fi
stop_dsroute d
stop rta
stop rtb

# -n is the pre-flight check: what cannot start is refused, in one line,
# without listening or dialling for good (issue 37.8).
mkdir -m 0777 "$T/open"
pre() {
	_d=$1
	_want=$2
	shift 2
	"$DSROUTE" -n "$@" >"$T/pre.out" 2>&1
	_rc=$?
	if [ $_rc -eq 1 ] && [ "$(wc -l <"$T/pre.out")" -eq 1 ] &&
	    grep -Eq -- "$_want" "$T/pre.out"; then
		pass "$_d"
	else
		fail "$_d" "status $_rc: $(cat "$T/pre.out")"
	fi
}
pre "-n: a socket directory that is not there" \
    "^uds:$T/nodir/x\.sock: directory $T/nodir: No such file or directory$" \
    "uds:$T/nodir/x.sock" tcp:127.0.0.1:0
pre "-n: a socket directory others may write" \
    "directory $T/open is writable by others and not sticky" \
    "uds:$T/open/x.sock" tcp:127.0.0.1:0
pre "-n: a certificate file that is not there, in errno's words" \
    "^tls:127\.0\.0\.1:0: cert=$T/none\.pem: No such file or directory$" \
    "uds:$T/c.sock" "tls:127.0.0.1:0,cert=$T/none.pem,key=$T/none.key,verify=none"
pre "-n: plaintext beyond loopback" "refusing to listen for plaintext" \
    "uds:$T/c.sock" tcp:0.0.0.0:0
"$DSROUTE" -n "uds:$T/c.sock" tcp:127.0.0.1:0 >"$T/pre.out" 2>&1
like "-n says what it did not check" "$(cat "$T/pre.out")" \
    "^configuration OK \(not checked: that ports are free, and that peers and runtimes answer\)$"
check "-n made no socket file" test ! -e "$T/c.sock"

done_testing
