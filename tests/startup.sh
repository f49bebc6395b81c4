#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Start-up and shutdown: errors are one line and a non-zero exit; socket
# files are created safely and removed; foreign files are left alone;
# SIGTERM drains and exits 0.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# untouched PATH SNAPSHOT: the object at PATH is as it was.
snapshot() {
	stat -c '%i %F %a %s' "$1"
}

refused "an unknown endpoint type" 'starts with uds:, dir:, proc:, tcp:, tls:, ws: or wss:' \
    "$T/x.sock" tcp:127.0.0.1:0
refused "a bad port" 'not a number from 0 to 65535' \
    "uds:$T/x.sock" tcp:127.0.0.1:99999
refused "an unknown option" "unknown option 'bogus'" \
    "uds:$T/x.sock,bogus" tcp:127.0.0.1:0
refused "a path too long for sun_path" 'holds at most 107' \
    "uds:/tmp/$(printf '%0120d' 0).sock" tcp:127.0.0.1:0
refused "a missing directory" 'No such file or directory' \
    "uds:$T/nodir/x.sock,listen" tcp:127.0.0.1:0
refused "connecting to port 0" 'other than 0' \
    "uds:$T/x.sock" tcp:127.0.0.1:0,connect
refused "plaintext TCP beyond loopback" 'refusing to listen for plaintext' \
    "uds:$T/x.sock" tcp:0.0.0.0:0
refused "a bad verbosity" 'give none, critical' -v loud \
    "uds:$T/x.sock" tcp:127.0.0.1:0
refused "a host without a port: says the port is missing" \
    "'127.0.0.1' has no port: write HOST:PORT, such as 127.0.0.1:9000" \
    "uds:$T/x.sock" tcp:127.0.0.1
refused "a name without a port too" "'localhost' has no port" \
    "uds:$T/x.sock" tls:localhost,connect

# A wrong number of endpoints: the reason first, then a short usage that
# points to --help, not the whole of it.
# short_usage DESC EREGEX ARGS...: exit 1, at most 4 lines on stderr, the
# first matching EREGEX, the last naming --help.
short_usage() {
	_desc=$1
	_want=$2
	shift 2
	"$DSROUTE" "$@" >"$T/out" 2>"$T/err"
	_rc=$?
	if [ $_rc -eq 1 ] && [ "$(wc -l <"$T/err")" -le 4 ] &&
	    head -n 1 "$T/err" | grep -Eq -- "$_want" &&
	    tail -n 1 "$T/err" | grep -q -- '--help' && [ ! -s "$T/out" ]; then
		pass "$_desc"
	else
		fail "$_desc" "status $_rc, $(wc -l <"$T/err") lines: $(cat "$T/err")"
	fi
}
short_usage "one endpoint: the reason and a short usage" \
    "^dsroute: uds:$T/x.sock is one endpoint; give two, LOCAL and REMOTE, or REMOTE -- COMMAND$" \
    "uds:$T/x.sock"
short_usage "no endpoint: the reason and a short usage" \
    '^dsroute: give two endpoints, LOCAL and REMOTE, or -f FILE$'
short_usage "three endpoints: the one too many named" \
    'a third, tcp:127.0.0.1:2, is one too many' \
    "uds:$T/x.sock" tcp:127.0.0.1:1 tcp:127.0.0.1:2
short_usage "-f and an endpoint: the extra argument named" \
    "^dsroute: -f $T/none.conf takes the routes from the file: uds:$T/x.sock is one argument too many$" \
    -f "$T/none.conf" "uds:$T/x.sock"
short_usage "an unknown option: getopt's line, then a short usage" \
    "unrecognized option '--bogus'" --bogus "uds:$T/x.sock" tcp:127.0.0.1:0

# --help names every transport and the access control options.
"$DSROUTE" --help >"$T/help" 2>&1
for w in uds: dir: proc: pipe: tcp: tls: ws: wss: ,peer= ,policy= \
    ,allow= ,deny= ,ROLE=PEER ,dump-dir= ,app= ,cmdline= ,found= \
    ,advertise= ,allow-cn= ,allow-san= ,allow-fp= ,origin= ,sni= \
    ,max-buffer-mb=; do
	check "--help names $w" grep -q -- "$w" "$T/help"
done
# Every --help fits a terminal of 80 columns, the cursor's included.
is "--help: no line wider than 79 columns" \
    "$(awk 'length > 79' "$T/help")" ""
# An option that fits its field has its words from column 33.
is "--help: the options' words begin in one column" \
    "$(awk '/^(  -., |      )--/ && substr($0, 7, 26) ~ /  / &&
    (substr($0, 32, 1) != " " || substr($0, 33, 1) == " ")' "$T/help")" ""
for f in android ps; do
	"$DSROUTE" $f -h >"$T/help.$f" 2>&1
	is "$f -h: no line wider than 79 columns" \
	    "$(awk 'length > 79' "$T/help.$f")" ""
done
# Durations: plain decimals only.  A NaN passed every range check once,
# "configuration OK" included, and then cut every session at once.
for d in nan NaN inf -inf infinity 1e309 1e3 -0 -1 0x10 0x1p3 +5 ' 5' \
    '5 ' 5sec 5m 1..2; do
	refused "--handshake-timeout '$d' is refused" 'give a duration' \
	    -n --handshake-timeout "$d" "uds:$T/x.sock" tcp:127.0.0.1:0
done
printf 'connect-timeout = nan\n[r]\nlocal = uds:%s/x.sock\nremote = tcp:127.0.0.1:0\n' \
    "$T" >"$T/nan.conf"
"$DSROUTE" -n -f "$T/nan.conf" >"$T/out" 2>"$T/err"
is "connect-timeout = nan in a file: refused with its line" \
    "$?:$(cat "$T/err")" "1:$T/nan.conf:1: connect-timeout = nan: give a \
duration such as 5, 0.5 or 500ms"

start_dsroute busy "uds:$T/busy.sock" tcp:127.0.0.1:0
refused "a port in use" 'Address already in use' \
    "uds:$T/other.sock" "tcp:127.0.0.1:$(port_of busy remote)"
refused "a live socket at a listen path" 'a live listener is already' \
    "uds:$T/busy.sock,listen" tcp:127.0.0.1:0
stop_dsroute busy
check "the socket file is removed at exit" test ! -e "$T/busy.sock"

# Foreign objects at a listen path are refused and left untouched.
echo precious >"$T/file.sock"
before=$(snapshot "$T/file.sock")
refused "a regular file at the path" 'is a regular file; refusing' \
    "uds:$T/file.sock,listen" tcp:127.0.0.1:0
is "the regular file is untouched" "$(snapshot "$T/file.sock"):$(cat "$T/file.sock")" \
    "$before:precious"
mkdir "$T/dir.sock"
before=$(snapshot "$T/dir.sock")
refused "a directory at the path" 'is a directory; refusing' \
    "uds:$T/dir.sock,listen" tcp:127.0.0.1:0
is "the directory is untouched" "$(snapshot "$T/dir.sock")" "$before"
echo target >"$T/target"
ln -s "$T/target" "$T/link.sock"
before=$(snapshot "$T/target")
refused "a symbolic link at the path" 'is a symbolic link; refusing' \
    "uds:$T/link.sock,listen" tcp:127.0.0.1:0
check "the link is untouched" test -L "$T/link.sock"
is "its target is untouched" "$(snapshot "$T/target")" "$before"

mkdir -m 0777 "$T/open"
refused "a directory others can write, not sticky" 'writable by others' \
    "uds:$T/open/x.sock,listen" tcp:127.0.0.1:0

# A stale socket (its listener died) is replaced.
bg stale "$FAKERT" --listen "$T/stale.sock"
wait_for 5 test -S "$T/stale.sock"
stop stale KILL
check "a stale socket is left behind by a killed listener" \
    test -S "$T/stale.sock"
start_dsroute s "uds:$T/stale.sock,listen" tcp:127.0.0.1:0 &&
    pass "a stale socket is replaced"
check "the replacement is logged" has_line "$T/s.err" 'removed a stale socket'
is "the socket is created mode 0600" "$(stat -c %a "$T/stale.sock")" 600
like "the start-up log gives the runtime's setting" "$(cat "$T/s.err")" \
    "DOTNET_DiagnosticPorts=$T/stale.sock"
like "the start-up log gives the tool's command line" "$(cat "$T/s.err")" \
    "dotnet-trace collect --diagnostic-port $T/stale.sock,connect"
like "the start-up log says why it listens" "$(cat "$T/s.err")" \
    "local uds:$T/stale.sock: listening \(,listen given\)"
# A port suspends the runtime unless told nosuspend: the mobile lines say
# it, or the app would hang at start-up waiting for a tool.
like "a mobile runtime's setting says nosuspend" "$(cat "$T/s.err")" \
    'a mobile runtime: DOTNET_DiagnosticPorts=127\.0\.0\.1:[0-9]+,connect,nosuspend '
like "... and so do its MSBuild properties" "$(cat "$T/s.err")" \
    '-p:DiagnosticSuspend=false -p:DiagnosticListenMode=connect'
stop_dsroute s

umask 000
start_dsroute m "uds:$T/mode.sock,mode=0660" tcp:127.0.0.1:0
is "mode= widens the socket, whatever the umask" \
    "$(stat -c %a "$T/mode.sock")" 660
stop_dsroute m
umask 022

# -v none prints nothing; the ports are 0.
"$DSROUTE" -v none "uds:$T/quiet.sock" tcp:127.0.0.1:0 >"$T/q.out" \
    2>"$T/q.err" &
qpid=$!
wait_for 5 test -S "$T/quiet.sock"
kill "$qpid"
wait "$qpid"
is "-v none: exit 0 and nothing printed" "$?:$(cat "$T/q.out" "$T/q.err")" "0:"

# SIGTERM while a trace streams: the stream may finish within the
# shutdown timeout, then the router exits 0 and removes its socket.
start_dsroute dr --shutdown-timeout 1 "uds:$T/drain.sock" tcp:127.0.0.1:0
start_fakert rt --connect "$T/drain.sock"
bg tr "$FAKETOOL" --timeout 20 "tcp:127.0.0.1:$(port_of dr remote)" collect
wait_for 10 has_line "$T/rt.ev" '^stream-start '
kill "$(pid_of dr)"
check "SIGTERM: new connections are refused at once" \
    wait_for 5 test ! -e "$T/drain.sock"
check "SIGTERM: the in-flight trace is drained, not cut" \
    wait_for 5 has_line "$T/dr.err" 'draining 1 session'
check "SIGTERM: it ends at the drain deadline" wait_for 5 has_line \
    "$T/dr.err" 'command=CollectTracing2 .* end="router shutting down"'
stop_dsroute dr
check "SIGTERM: the tool's stream ends" wait_exit tr 5
stop rt

# Signals that keep coming while the router cleans up must not kill it:
# its supervisor would see status 143 instead of 0.
start_dsroute sg "uds:$T/sig.sock" tcp:127.0.0.1:0
_sgp=$(pid_of sg)
_sgn=0
while kill "$_sgp" 2>/dev/null && [ "$_sgn" -lt 100000 ]; do
	_sgn=$((_sgn + 1))
done
wait "$_sgp"
is "SIGTERM after SIGTERM, during the clean-up: exit 0" "$?" 0

done_testing
