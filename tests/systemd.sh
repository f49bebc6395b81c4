#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute under systemd, with systemd's own tools where they run without
# a service manager: systemd-socket-activate passes listening sockets as
# a socket unit does (LISTEN_FDS, LISTEN_FDNAMES, and it waits for the
# first connection before it runs the router, as systemd does), a
# datagram socket read by python3 stands in for NOTIFY_SOCKET, and
# systemd-analyze verify checks the units of contrib/systemd.  Run in a
# network namespace of its own: the android preset's port is fixed.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/netns.sh"
. "$top_srcdir/tests/lib/lib.sh"

have() {
	command -v "$1" >/dev/null 2>&1
}

# free_port: a TCP port nothing listens on now, for the sockets
# systemd-socket-activate binds (it cannot report one it chose).
free_port() {
	python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# activate NAME ARGS...: systemd-socket-activate ARGS in the background;
# it runs the router in its own process once a connection comes.
activate() {
	_name=$1
	shift
	bg "$_name" systemd-socket-activate "$@"
	wait_for 10 has_line "$T/$_name.err" '^Listening on ' ||
	    fail "$_name: systemd-socket-activate listens"
}

# refused_fd DESC NAME EREGEX: the router NAME exits 1, with one line of
# its own on standard error, which matches EREGEX.  Return 1 if not.
refused_fd() {
	if ! wait_exit "$2" 10; then
		kill "$(pid_of "$2")" 2>/dev/null
		fail "$1" "still running: $(cat "$T/$2.err")"
		return 1
	fi
	if wait "$(pid_of "$2")"; then
		_rc=0
	else
		_rc=$?
	fi
	_lines=$(grep -Evc '^(Listening on|Communication attempt|Execing|Accepted connection) ' \
	    "$T/$2.err")
	if [ "$_rc" -eq 1 ] && [ "$_lines" -eq 1 ] &&
	    has_line "$T/$2.err" "$3"; then
		pass "$1"
		return 0
	fi
	fail "$1" "status $_rc, $_lines lines: $(cat "$T/$2.err")"
	return 1
}

if ! have systemd-socket-activate || ! have python3; then
	skip "socket activation" "systemd-socket-activate (Debian: systemd) and python3 are needed"
else
	# --- A uds and a tcp listener, both passed, named with --fdname; the
	# endpoints on the command line, the uds one without ,listen.  The
	# runtime's connection on tcp is what starts the router.
	P=$(free_port)
	activate sa1 -l "$T/tools.sock" -l "127.0.0.1:$P" --fdname=tools:net \
	    "$DSROUTE" "uds:$T/tools.sock" \
	    "tcp:127.0.0.1:$P,advertise=addr:127.0.0.1"
	start_fakert rt1 --connect "tcp:127.0.0.1:$P" --pid 1001
	if wait_for 10 has_line "$T/sa1.err" '^info: ready$'; then
		pass "activated: the router starts on the first connection"
	else
		fail "activated: the router starts on the first connection"
	fi
	check "activated: the uds endpoint takes fd 3, named tools" has_line \
	    "$T/sa1.err" "^info: uds:$T/tools.sock: using fd 3 \(\"tools\"\) from the service manager instead of binding$"
	check "activated: the tcp endpoint takes fd 4, named net" has_line \
	    "$T/sa1.err" "^info: tcp:127.0.0.1:$P: using fd 4 \(\"net\"\) from the service manager instead of binding$"
	check "activated: a passed socket at the path makes the uds endpoint listen" \
	    has_line "$T/sa1.err" "^info: local uds:$T/tools.sock: listening \(the service manager passed"
	served=no
	if tool --timeout 20 "$T/tools.sock" processinfo; then
		is "activated: a tool on the passed uds reaches the runtime that dialled the passed tcp" \
		    "$(field pid "$T/tool.out")" 1001
		served=yes
	else
		fail "activated: a tool on the passed uds reaches the runtime that dialled the passed tcp" \
		    "$(cat "$T/tool.out" "$T/tool.err")"
	fi
	stop_dsroute sa1
	check "activated: the socket file systemd made is left at exit" \
	    test "$served" = yes -a -S "$T/tools.sock"
	stop rt1

	# --- The shipped trio: the socket unit's ListenStream= lines and the
	# example configuration, for instance "app", moved into $T and onto
	# a free port.  The runtime's connection on uds starts the router,
	# which binds the tools' port itself: the template has none.
	P=$(free_port)
	unit=$top_srcdir/contrib/systemd/dsroute@.socket
	moved() {
		sed -e "s|/run/dsroute/|$T/|g" -e "s|:9000|:$P|g" \
		    -e 's|%i|app|g' "$@"
	}
	listens=$(sed -n 's/^ListenStream=//p' "$unit" | moved)
	moved "$top_srcdir/contrib/systemd/example.conf" |
	    sed "s|uid:app|uid:$(id -u)|" >"$T/app.conf"
	mkdir -m 0755 "$T/app"
	set --
	for l in $listens; do
		set -- "$@" -l "$l"
	done
	is "the socket unit has one ListenStream=, the runtime's socket" \
	    "$listens" "$T/app/rt.sock"
	activate sa2 "$@" --fdname=app "$DSROUTE" -f "$T/app.conf"
	start_fakert rt2 --connect "$T/app/rt.sock"
	if wait_for 10 has_line "$T/sa2.err" '^info: ready$'; then
		pass "example: the router starts with the socket unit's socket"
	else
		fail "example: the router starts with the socket unit's socket"
	fi
	is "example: the uds socket taken, the tcp port bound" \
	    "$(count_lines "$T/sa2.err" 'from the service manager instead of binding$'):$(count_lines "$T/sa2.err" "^info: remote tcp:127.0.0.1:$P: listening")" \
	    1:1
	if tool --timeout 20 "tcp:127.0.0.1:$P" processinfo; then
		is "example: a tool on tcp reaches the runtime that dialled the uds" \
		    "$(field pid "$T/tool.out")" "$(pid_of rt2)"
	else
		fail "example: a tool on tcp reaches the runtime that dialled the uds" \
		    "$(cat "$T/tool.out" "$T/tool.err")"
	fi
	stop_dsroute sa2
	stop rt2

	# --- Mixed: the uds listener passed, the tcp one bound by the router.
	# A tool's connection starts it and waits for a runtime.
	activate sa3 -l "$T/mixed.sock" --fdname=tools "$DSROUTE" \
	    "uds:$T/mixed.sock,listen" "tcp:127.0.0.1:0,advertise=addr:127.0.0.1"
	bg waiting "$FAKETOOL" --timeout 30 "$T/mixed.sock" processinfo
	if wait_for 10 has_line "$T/sa3.err" '^info: ready$'; then
		start_fakert rt3 --connect "tcp:127.0.0.1:$(port_of sa3 remote)" \
		    --pid 1003
		wait "$(pid_of waiting)"
		is "mixed: a passed uds and a bound tcp listener serve a session" \
		    "$(field pid "$T/waiting.out")" 1003
	else
		fail "mixed: a passed uds and a bound tcp listener serve a session"
	fi
	stop_dsroute sa3
	stop rt3

	# --- A passed socket no endpoint has: refused, named, exit 1; the
	# socket file the router made itself is removed.
	activate sa4 -l "$T/other.sock" --fdname=odd "$DSROUTE" \
	    "uds:$T/mine.sock,listen" tcp:127.0.0.1:0
	tool --timeout 5 "$T/other.sock" processinfo
	if refused_fd "a passed socket no endpoint has is refused, named" sa4 \
	    "^crit: fd 3 \(\"odd\"\) from the service manager listens on $T/other.sock, which no listen endpoint has"
	then
		check "refused: the router's own socket file is removed" \
		    test ! -e "$T/mine.sock"
	else
		fail "refused: the router's own socket file is removed" \
		    "it was not refused"
	fi

	# --- A datagram socket, and a connection (Accept=yes): refused.
	activate sa5 --datagram -l "$T/dgram.sock" --fdname=dg "$DSROUTE" \
	    "uds:$T/dgram.sock,listen" tcp:127.0.0.1:0
	python3 -c 'import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.sendto(b"x", sys.argv[1])' "$T/dgram.sock"
	refused_fd "a passed datagram socket is refused, named" sa5 \
	    '^crit: fd 3 \("dg"\) from the service manager is a datagram socket'
	activate sa6 --accept -l "$T/accept.sock" --fdname=acc "$DSROUTE" \
	    "uds:$T/accept.sock,listen" tcp:127.0.0.1:0
	tool --timeout 5 "$T/accept.sock" processinfo
	wait_for 10 has_line "$T/sa6.err" '^crit: ' || true
	if has_line "$T/sa6.err" '^crit: fd 3 \("acc"\) from the service manager is not listening \(Accept=yes'; then
		pass "a passed connection (Accept=yes) is refused, named"
	else
		fail "a passed connection (Accept=yes) is refused, named" \
		    "$(cat "$T/sa6.err")"
	fi
	kill "$(pid_of sa6)" 2>/dev/null

	# --- What the programs the router runs inherit: the android preset's
	# adb, a fake that records its environment and its sockets, under a
	# passed 127.0.0.1:9001 and a NOTIFY_SOCKET.
	mkdir "$T/bin"
	cat >"$T/bin/adb" <<'ADB'
#!/bin/sh
{
	env | grep -E '^(LISTEN_[A-Z]*|NOTIFY_SOCKET)='
	for f in /proc/$$/fd/*; do
		readlink "$f"
	done | grep '^socket:'
	echo "ran $*"
} >>"${CHILD_LOG:?}" 2>&1
exit 0
ADB
	chmod +x "$T/bin/adb"
	systemd-socket-activate -l 127.0.0.1:9001 --fdname=phone \
	    -E "PATH=$T/bin:$PATH" -E "TMPDIR=$T" -E "CHILD_LOG=$T/child.log" \
	    -E "NOTIFY_SOCKET=$T/nobody.sock" "$DSROUTE" android \
	    </dev/null >"$T/sa7.out" 2>"$T/sa7.err" &
	echo $! >"$T/sa7.pid"
	_pids="$_pids $!"
	wait_for 10 has_line "$T/sa7.err" '^Listening on ' || true
	start_fakert rt7 --connect tcp:127.0.0.1:9001
	if wait_for 15 has_line "$T/child.log" '^ran reverse tcp:9000 tcp:9001$'
	then
		is "children: adb sees no LISTEN_* nor NOTIFY_SOCKET" \
		    "$(grep -E '^(LISTEN_|NOTIFY_SOCKET)' "$T/child.log")" ""
		is "children: adb holds none of the router's sockets" \
		    "$(grep -c '^socket:' "$T/child.log")" 0
	else
		fail "children: adb sees no LISTEN_* nor NOTIFY_SOCKET" \
		    "adb did not run: $(cat "$T/sa7.err")"
		fail "children: adb holds none of the router's sockets"
	fi
	stop_dsroute sa7
	stop rt7
fi

# --- Two instances of the template: their socket units hold no address
# in common, or the second would fail to start.
unit=$top_srcdir/contrib/systemd/dsroute@.socket
a=$(sed -n 's/^ListenStream=//p' "$unit" | sed 's|%i|app|g' | sort)
b=$(sed -n 's/^ListenStream=//p' "$unit" | sed 's|%i|web|g' | sort)
is "two instances of dsroute@.socket share no ListenStream=" \
    "$(printf '%s\n%s\n' "$a" "$b" | sort | uniq -d)" ""

# --- The example configuration as dsroute@app.service runs it without
# the socket unit: every path read-only (ProtectSystem=strict) but the
# service's RuntimeDirectory=, here a private mount namespace in which
# /run is a read-only tmpfs and /run/dsroute/app a writable one.  Each
# socket the file listens on must be in that directory.
rtdir=$(sed -n 's|^RuntimeDirectory=|/run/|p' \
    "$top_srcdir/contrib/systemd/dsroute@.service" | sed 's|%i|app|')
is "the service's RuntimeDirectory= for instance app" "$rtdir" /run/dsroute/app
P=$(free_port)
sed -e "s|:9000|:$P|g" -e "s|uid:app|uid:$(id -u)|" \
    "$top_srcdir/contrib/systemd/example.conf" >"$T/ro.conf"
if unshare -m true 2>/dev/null; then
	bg ro unshare -m --propagation private sh -c '
	    mount -t tmpfs -o mode=0755 tmpfs /run &&
	    mkdir -p -m 0755 "$1" &&
	    mount -t tmpfs -o mode=0755 tmpfs "$1" &&
	    mount -o remount,ro,bind /run &&
	    ! touch /run/dsroute/probe 2>/dev/null &&
	    exec "$2" -f "$3"' sh "$rtdir" "$DSROUTE" "$T/ro.conf"
	if wait_for 10 has_line "$T/ro.err" '^info: ready$'; then
		pass "example, no socket unit: dsroute binds its sockets on a read-only /run"
	else
		fail "example, no socket unit: dsroute binds its sockets on a read-only /run" \
		    "$(cat "$T/ro.err")"
	fi
	check "example, no socket unit: the runtime's socket is in $rtdir" \
	    has_line "$T/ro.err" "^info: local uds:$rtdir/rt\.sock: listening"
	stop_dsroute ro
else
	skip "example, no socket unit, on a read-only /run" \
	    "no private mount namespace (unshare -m)"
fi

# --- sd_notify.  notified NAME ADDRESS [PATH]: a datagram socket at
# ADDRESS (@NAME: abstract) writes each datagram it gets as one line of
# $T/NAME.out, its lines joined by spaces; with PATH, "listening" or
# "not-listening" follows each READY=1, as a connect to PATH found it.
notified() {
	bg "$1" python3 -c 'import socket, sys
addr = sys.argv[1]
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind("\0" + addr[1:] if addr.startswith("@") else addr)
print("bound", flush=True)
while True:
    d = s.recv(4096).decode()
    print(" ".join(d.split("\n")), flush=True)
    if len(sys.argv) > 2 and d.startswith("READY=1"):
        c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            c.connect(sys.argv[2])
            print("listening", flush=True)
        except OSError:
            print("not-listening", flush=True)
        c.close()' "$2" ${3:+"$3"}
	wait_for 10 has_line "$T/$1.out" '^bound$' || fail "$1: bound"
}

# states NAME: the first word of each datagram, and the probes.
states() {
	sed -n 's/^\([A-Z]*=1\|listening\|not-listening\).*/\1/p' \
	    "$T/$1.out" | tr '\n' ' '
}

if ! have python3; then
	skip "sd_notify" "python3 is needed to read the notify socket"
else
	cat >"$T/n.conf" <<EOF
[main]
local = uds:$T/n.sock,listen
remote = tcp:127.0.0.1:0
EOF
	notified ns "$T/notify.sock" "$T/n.sock"
	NOTIFY_SOCKET=$T/notify.sock start_dsroute n1 -f "$T/n.conf"
	wait_for 10 has_line "$T/ns.out" '^(not-)?listening$' || true
	is "notify: READY=1 once the listeners listen" "$(states ns)" \
	    "READY=1 listening "
	like "notify: READY=1 says what it serves" \
	    "$(grep '^READY=1' "$T/ns.out" | head -n 1)" \
	    '^READY=1 STATUS=ready; serving 1 route$'
	kill -HUP "$(pid_of n1)"
	wait_for 10 test "$(count_lines "$T/ns.out" '^READY=1')" -ge 2 || true
	is "notify: SIGHUP: RELOADING=1, then READY=1" "$(states ns)" \
	    "READY=1 listening RELOADING=1 READY=1 listening "
	like "notify: RELOADING=1 carries MONOTONIC_USEC" \
	    "$(grep '^RELOADING=1' "$T/ns.out")" \
	    '^RELOADING=1 STATUS=reloading MONOTONIC_USEC=[0-9]+$'
	like "notify: the reload's READY=1 says it reloaded" \
	    "$(grep '^READY=1' "$T/ns.out" | tail -n 1)" \
	    '^READY=1 STATUS=reloaded; serving 1 route$'
	echo "this line is not a setting" >>"$T/n.conf"
	kill -HUP "$(pid_of n1)"
	wait_for 10 test "$(count_lines "$T/ns.out" '^READY=1')" -ge 3 || true
	like "notify: a failed reload is READY=1 again, and says so" \
	    "$(grep '^READY=1' "$T/ns.out" | tail -n 1)" \
	    '^READY=1 STATUS=reload failed, the running configuration stays'
	stop n1
	wait_for 10 has_line "$T/ns.out" '^STOPPING=1' || true
	is "notify: the whole sequence, STOPPING=1 on SIGTERM last" \
	    "$(states ns)" \
	    "READY=1 listening RELOADING=1 READY=1 listening RELOADING=1 READY=1 listening STOPPING=1 "
	kill "$(pid_of ns)"

	# An abstract socket name.
	abstract="@dsroute-test-$(basename "$T")"
	notified na "$abstract"
	NOTIFY_SOCKET=$abstract start_dsroute n2 "uds:$T/n2.sock,listen" \
	    tcp:127.0.0.1:0
	wait_for 10 has_line "$T/na.out" '^READY=1' || true
	kill -TERM "$(pid_of n2)"
	wait_for 10 has_line "$T/na.out" '^STOPPING=1' || true
	is "notify: an abstract NOTIFY_SOCKET gets READY=1, then STOPPING=1" \
	    "$(states na)" "READY=1 STOPPING=1 "
	stop n2
	kill "$(pid_of na)"

	# Nobody at NOTIFY_SOCKET: said once, and the router serves.
	NOTIFY_SOCKET=$T/nobody.sock start_dsroute n3 \
	    "uds:$T/n3.sock,listen" tcp:127.0.0.1:0
	kill -HUP "$(pid_of n3)"
	wait_for 10 has_line "$T/n3.err" 'nothing to reload' || true
	# Three datagrams failed: READY=1, RELOADING=1, READY=1.
	if [ "$(count_lines "$T/n3.err" '^warn: cannot notify the service manager at ')" -eq 1 ] &&
	    alive n3; then
		pass "notify: a socket nobody reads is logged once, the router goes on"
	else
		fail "notify: a socket nobody reads is logged once, the router goes on" \
		    "$(cat "$T/n3.err")"
	fi
	stop n3
fi

# --- The units: systemd-analyze verify, on copies whose ExecStart= is the
# binary just built (it checks that the program exists) and with the man
# pages of Documentation= in a MANPATH (it runs man(1) for them).
if ! have systemd-analyze; then
	skip "systemd-analyze verify" "systemd-analyze (Debian: systemd) is needed"
elif ! have man; then
	skip "systemd-analyze verify" "man (Debian: man-db) is needed"
else
	mkdir -p "$T/units" "$T/man/man1" "$T/man/man5"
	cp "$top_srcdir/man/dsroute.1" "$T/man/man1/"
	cp "$top_srcdir/man/dsroute.conf.5" "$T/man/man5/"
	sed "s|/usr/bin/dsroute|$DSROUTE|" \
	    "$top_srcdir/contrib/systemd/dsroute@.service" \
	    >"$T/units/dsroute@.service"
	cp "$top_srcdir/contrib/systemd/dsroute@.socket" "$T/units/"
	if MANPATH=$T/man systemd-analyze verify \
	    "$T/units/dsroute@app.service" "$T/units/dsroute@app.socket" \
	    "$T/units/dsroute@web.service" "$T/units/dsroute@web.socket" \
	    >"$T/verify.out" 2>&1 && [ ! -s "$T/verify.out" ]; then
		pass "systemd-analyze verify passes on both units, two instances, silently"
	else
		fail "systemd-analyze verify passes on both units, two instances, silently" \
		    "$(cat "$T/verify.out")"
	fi
	# The rating contrib/systemd/README.md gives, offline (systemd 250+).
	want=$(sed -n 's/.*`systemd-analyze security` rates it \([0-9.]*\), "\([A-Z]*\)".*/\1 \2/p' \
	    "$top_srcdir/contrib/systemd/README.md")
	if systemd-analyze security --offline=true \
	    "$T/units/dsroute@app.service" >"$T/security.out" 2>&1; then
		is "systemd-analyze security --offline rates the service as the README says" \
		    "$(sed -n 's/.*Overall exposure level for dsroute@app.service: \([0-9.]*\) \([A-Z]*\).*/\1 \2/p' \
		    "$T/security.out")" "$want"
		check "README.md gives the same rating" grep -q \
		    "(${want% *}, \"${want#* }\")" "$top_srcdir/README.md"
	else
		skip "systemd-analyze security --offline" \
		    "$(tail -n 1 "$T/security.out")"
	fi
fi

done_testing
