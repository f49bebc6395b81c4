#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dsroute under systemd, with systemd's own tools where they run without
# a service manager: systemd-socket-activate passes listening sockets as
# a socket unit does (LISTEN_FDS, LISTEN_FDNAMES, and it waits for the
# first connection before it runs the router, as systemd does).

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
fi

done_testing
