#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dump-dir= names a directory of this host, which the router checks at
# start-up and at each reload: whoever else may write it, or a directory
# above it, could put a link where the next dump goes.  Refused with one
# line: a directory writable by others and not sticky, one of another
# uid, a link of another uid, a safe directory under an open one, a
# sticky one only its group may write, and a sticky one that all may
# write on a kernel that follows links planted there.  Taken: the
# router's own 0700 directory, a sticky one where the kernel refuses
# planted links, and, with one warning, a directory this host does not
# have.  A reload to an unsafe directory keeps the whole running
# configuration with one error line.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# refused_dir DESC EREGEX DIR: a router with dump-dir=DIR exits 1 at
# start-up with one line, which matches EREGEX.  The timeout stops a
# router that takes the directory and serves.
refused_dir() {
	timeout 10 "$DSROUTE" "uds:$T/s.sock" "tcp:127.0.0.1:0,dump-dir=$3" \
	    >"$T/out" 2>"$T/err"
	_rc=$?
	if [ $_rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] &&
	    grep -Eq -- "$2" "$T/err"; then
		pass "$1"
	else
		fail "$1" "status $_rc: $(cat "$T/err")"
	fi
}

# taken_dir DESC NAME DIR: a router with dump-dir=DIR starts, says
# nothing of it, and stops cleanly.
taken_dir() {
	if start_dsroute "$2" "uds:$T/$2.sock" "tcp:127.0.0.1:0,dump-dir=$3"; then
		is "$1" "$(grep -c 'dump-dir' "$T/$2.err")" 0
		stop_dsroute "$2"
	fi
}

# protected VALUE COMMAND...: COMMAND, as this process, in a mount
# namespace of its own where fs.protected_symlinks and
# fs.protected_regular read VALUE; the kernel's settings stay as they are
# for every other process.
protected() {
	_f=$T/protected.$1
	shift
	printf '%s\n' "${_f##*.}" >"$_f"
	exec unshare -m sh -c 'mount --bind "$0" /proc/sys/fs/protected_symlinks &&
	    mount --bind "$0" /proc/sys/fs/protected_regular && exec "$@"' \
	    "$_f" "$@"
}

# --- at start-up ---------------------------------------------------------

mkdir -m 0777 "$T/open" "$T/open/in" && chmod 0700 "$T/open/in"
mkdir -m 0700 "$T/own"
mkdir -m 1777 "$T/sticky"
mkdir -m 1770 "$T/group"
refused_dir "0777, not sticky: refused" \
    "^crit: tcp:127.0.0.1:0: dump-dir=$T/open: directory $T/open is writable by others and not sticky" \
    "$T/open"
refused_dir "a private directory under a 0777 one: refused, naming that one" \
    "dump-dir=$T/open/in: directory $T/open \\(above $T/open/in\\) is writable by others and not sticky" \
    "$T/open/in"
refused_dir "1770: sticky, but its group may plant links: refused" \
    "dump-dir=$T/group: directory $T/group is writable by its group" \
    "$T/group"
if [ "$(id -u)" -eq 0 ]; then
	mkdir -m 0700 "$T/nobody"
	chown 65534 "$T/nobody"
	refused_dir "a directory of uid 65534: refused" \
	    "dump-dir=$T/nobody: directory $T/nobody belongs to uid 65534" \
	    "$T/nobody"
	ln -s "$T/own" "$T/link"
	chown -h 65534 "$T/link"
	refused_dir "a link of uid 65534 to a safe directory: refused" \
	    "dump-dir=$T/link: $T/link is a link of uid 65534" "$T/link"
else
	skip "a directory of uid 65534: refused" "not root: cannot chown"
	skip "a link of uid 65534 to a safe directory: refused" \
	    "not root: cannot chown"
fi
taken_dir "the router's own 0700 directory: taken" own "$T/own"
ln -s "$T/own" "$T/mylink"
taken_dir "a link of the router's own to it: taken" mylink "$T/mylink"

# 1777 is as safe as the kernel makes it: seen through a mount namespace
# where the two settings read 1, then 0.
if [ "$( (protected 1 cat /proc/sys/fs/protected_symlinks) 2>/dev/null)" = 1 ]
then
	bg sticky1 protected 1 "$DSROUTE" "uds:$T/st.sock" \
	    "tcp:127.0.0.1:0,dump-dir=$T/sticky"
	if wait_for 10 has_line "$T/sticky1.err" '^info: ready$'; then
		is "1777 where the kernel refuses planted links: taken" \
		    "$(grep -c 'dump-dir' "$T/sticky1.err")" 0
		stop_dsroute sticky1
	else
		fail "1777 where the kernel refuses planted links: taken" \
		    "$(cat "$T/sticky1.err")"
	fi
	(protected 0 timeout 10 "$DSROUTE" "uds:$T/st.sock" \
	    "tcp:127.0.0.1:0,dump-dir=$T/sticky") >"$T/out" 2>"$T/err"
	_rc=$?
	if [ $_rc -eq 1 ] && [ "$(wc -l <"$T/err")" -eq 1 ] && grep -q \
	    "dump-dir=$T/sticky: .*(fs.protected_symlinks=0, fs.protected_regular=0)" \
	    "$T/err"; then
		pass "1777 where the kernel follows planted links: refused"
	else
		fail "1777 where the kernel follows planted links: refused" \
		    "status $_rc: $(cat "$T/err")"
	fi
else
	skip "1777 where the kernel refuses planted links: taken" \
	    "no private mount namespace (unshare -m, as root)"
	skip "1777 where the kernel follows planted links: refused" \
	    "no private mount namespace (unshare -m, as root)"
fi

if start_dsroute far "uds:$T/far.sock" \
    "tcp:127.0.0.1:0,dump-dir=$T/elsewhere/dumps"; then
	is "a directory this host does not have: taken, with one warning" \
	    "$(grep -c 'dump-dir' "$T/far.err") $(grep -c "^warn: tcp:127.0.0.1:0: dump-dir=$T/elsewhere/dumps: there is no directory $T/elsewhere on this host, so it cannot be checked here" "$T/far.err")" \
	    "1 1"
	stop_dsroute far
fi

# --- at a reload ---------------------------------------------------------

mkdir -m 0700 "$T/own2"
start_fakert rt --listen tcp:127.0.0.1:0 --pid 5003
conf() {
	cat >"$T/d.conf" <<EOF
[a]
local = uds:$T/tool.sock
local.dump-dir = $1
remote = tcp:127.0.0.1:$(fakert_port rt),connect
EOF
}
dump_to() {
	tool --timeout 10 "$T/tool.sock" command 1 3 "$(dump_payload "$1")"
	grep -q '^reply set=0xFF id=0x00 ' "$T/tool.out"
}

conf "$T/own"
start_dsroute d -f "$T/d.conf"
check "dump-dir=$T/own: a dump there goes through" dump_to "$T/own/core.1"

conf "$T/open"
printf 'local.deny = ProcessInfo*\n' >>"$T/d.conf"
kill -HUP "$(pid_of d)"
wait_for 10 has_line "$T/d.err" 'the running configuration stays'
is "reload to a 0777 dump-dir: one error line says why" \
    "$(grep -c '^fail:' "$T/d.err") $(grep -c "^fail: reload: $T/d.conf: route \[a\]: uds:$T/tool.sock: dump-dir=$T/open: directory $T/open is writable by others and not sticky.*; the running configuration stays$" "$T/d.err")" \
    "1 1"
check "... the old dump-dir stays: a dump there goes through" \
    dump_to "$T/own/core.2"
if dump_to "$T/open/core.3"; then
	fail "... a dump to the refused directory is denied"
else
	like "... a dump to the refused directory is denied" \
	    "$(cat "$T/tool.out")" '^error 0x80070005$'
fi
check "... nothing of the file was applied: ProcessInfo goes through" \
    tool --timeout 10 "$T/tool.sock" processinfo
check "... the router stays up" alive d

conf "$T/own2"
kill -HUP "$(pid_of d)"
wait_for 10 has_line "$T/d.err" "^info: reloaded $T/d.conf"
check "reload to a safe dump-dir: a dump there goes through" \
    dump_to "$T/own2/core.4"
if dump_to "$T/own/core.5"; then
	fail "... and one to the old directory is denied"
else
	pass "... and one to the old directory is denied"
fi

conf "$T/elsewhere"
kill -HUP "$(pid_of d)"
wait_for 10 eval "[ \$(count_lines '$T/d.err' '^info: reloaded ') -ge 2 ]"
kill -HUP "$(pid_of d)"
wait_for 10 eval "[ \$(count_lines '$T/d.err' '^info: reloaded ') -ge 3 ]"
is "reload to a directory this host lacks: one warning, not one a reload" \
    "$(count_lines "$T/d.err" "^warn: uds:$T/tool.sock: dump-dir=$T/elsewhere: there is no directory")" \
    1
stop_dsroute d
stop rt

done_testing
