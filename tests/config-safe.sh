#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A configuration file says who may do what to every runtime behind the
# router, which may read it as root: one that another user could change,
# or that could say one thing to a reader and another to the router, is
# refused with one line, at start-up and at a reload, and the router
# keeps running on what it had.  What is not a file (a FIFO, a device)
# and what is too big are refused at once, without blocking or growing.

. "$top_srcdir/tests/lib/lib.sh"

# good FILE: a file with one route to the fake runtime.
good() {
	cat >"$1" <<EOF
verbose = info
[a]
local = uds:$T/rt.sock,connect
remote = tcp:127.0.0.1:0
EOF
	chmod 0644 "$1"
}

# checked DESC FILE EREGEX: dsroute -n -f FILE says one line matching
# EREGEX (after "FILE: " or "FILE:LINE: ") and exits 1, within 10 s.
checked() {
	timeout 10 "$DSROUTE" -n -f "$2" >"$T/n.out" 2>&1
	like "$1" "$? $(wc -l <"$T/n.out") $(cat "$T/n.out")" "^1 1 $3\$"
}

chmod 0755 "$T"
good "$T/good.conf"
is "a file only its owner may write: OK" \
    "$("$DSROUTE" -n -f "$T/good.conf" 2>&1)" "configuration OK (not checked: that ports are free, and that peers and runtimes answer)"

# --- what is not a file -------------------------------------------------

mkfifo "$T/fifo.conf"
checked "a FIFO: refused at once, not waited on" "$T/fifo.conf" \
    "$T/fifo.conf: cannot read it: it is a FIFO, not a file"
checked "/dev/zero: refused at once, not read without end" /dev/zero \
    "/dev/zero: cannot read it: it is a character device, not a file"
good "$T/big.conf"
awk 'BEGIN { for (i = 0; i < 20000; i++)
    printf "; %05d: a comment line of about sixty bytes, to fill it\n", i }' \
    >>"$T/big.conf"
checked "a file over 1 MiB: refused unread" "$T/big.conf" \
    "$T/big.conf: cannot read it: it is larger than 1048576 bytes"

# --- what says one thing to a reader and another to the router ----------

good "$T/nul.conf"
printf 'remote.policy = observe\000 (a NUL byte)\n' >>"$T/nul.conf"
printf '\000local.policy = observe\n' >>"$T/nul.conf"
"$DSROUTE" -n -f "$T/nul.conf" >"$T/n.out" 2>&1
is "NUL bytes: an error at each of their lines, exit 1" "$? $(cat "$T/n.out")" \
    "1 $T/nul.conf:5: a NUL byte: what follows it on the line would be ignored
$T/nul.conf:6: a NUL byte: what follows it on the line would be ignored"

good "$T/twice.conf"
sed -i '1a max-sessions = 8' "$T/twice.conf"
sed -i '1a max-sessions = 100000' "$T/twice.conf"
checked "a setting given twice: an error, as a route or an endpoint is" \
    "$T/twice.conf" "$T/twice.conf:3: max-sessions is given twice \\(first at line 2\\)"

# --- who could change it ------------------------------------------------

good "$T/gw.conf"
chmod 0664 "$T/gw.conf"
checked "a file its group may write: refused" "$T/gw.conf" \
    "$T/gw.conf: it is writable by its group \\(mode 664\\): whoever can write it could change what dsroute does; chmod go-w it"
chmod 0646 "$T/gw.conf"
checked "a file others may write: refused" "$T/gw.conf" \
    "$T/gw.conf: it is writable by others \\(mode 646\\).*"

mkdir -m 0777 "$T/open"
good "$T/open/x.conf"
chmod 0777 "$T/open"
checked "in a directory others may write, not sticky: refused" \
    "$T/open/x.conf" \
    "$T/open/x.conf: directory $T/open is writable by others \\(mode 777\\): whoever can write it could replace the file; chmod go-w it"
chmod 1777 "$T/open"
is "in a sticky directory others may write: OK" \
    "$("$DSROUTE" -n -f "$T/open/x.conf" 2>&1)" "configuration OK (not checked: that ports are free, and that peers and runtimes answer)"
ln -s "$T/open/x.conf" "$T/via-open.conf"
chmod 0777 "$T/open"
checked "a symbolic link into such a directory: refused" "$T/via-open.conf" \
    "$T/via-open.conf: directory $T/open is writable by others.*"
chmod 1777 "$T/open"

if [ "$(id -u)" -eq 0 ] && getent passwd nobody >/dev/null; then
	good "$T/theirs.conf"
	chown nobody "$T/theirs.conf"
	checked "root, a file of another user: refused" "$T/theirs.conf" \
	    "$T/theirs.conf: it belongs to uid 65534, who could change what dsroute does; it must be root's"
	mkdir -m 0755 "$T/theirs"
	chown nobody "$T/theirs"
	ln -s "$T/good.conf" "$T/theirs/link.conf"
	ln -s theirs/link.conf "$T/chain.conf"
	checked "root, a link through another user's directory to a good file: refused" \
	    "$T/chain.conf" \
	    "$T/chain.conf: directory $T/theirs belongs to uid 65534, who could replace the file; it must be root's"
	if unshare -m true 2>/dev/null; then
		mkdir "$T/ro"
		good "$T/ro/x.conf"
		chmod 0666 "$T/ro/x.conf"
		chmod 0777 "$T/ro"
		unshare -m sh -c "mount --bind '$T/ro' '$T/ro' &&
		    mount -o remount,bind,ro '$T/ro' &&
		    '$DSROUTE' -n -f '$T/ro/x.conf'" >"$T/n.out" 2>&1
		is "a read-only mount, as a Kubernetes ConfigMap is: nobody changes it, OK" \
		    "$(cat "$T/n.out")" "configuration OK (not checked: that ports are free, and that peers and runtimes answer)"
	else
		skip "a read-only mount" "no mount namespace"
	fi
else
	skip "a file of another user" "not root"
	skip "a link through another user's directory" "not root"
	skip "a read-only mount" "not root"
fi

# --- at a reload --------------------------------------------------------

start_fakert rt --listen "$T/rt.sock" --pid 4711
good "$T/run.conf"
start_dsroute d -f "$T/run.conf"
port=$(port_of d remote)

# reload DESC EREGEX: SIGHUP logs the refusal, and the router still routes.
reload() {
	kill -HUP "$(pid_of d)"
	check "$1: refused with its reason" wait_for 10 has_line "$T/d.err" \
	    "^fail: $T/run.conf: $2\$"
	if tool --timeout 10 "tcp:127.0.0.1:$port" processinfo; then
		is "$1: the router still routes, as it did" \
		    "$(field pid "$T/tool.out")" 4711
	else
		fail "$1: the router still routes, as it did" \
		    "$(cat "$T/tool.err")"
	fi
}

chmod 0666 "$T/run.conf"
reload "reload of a file made writable by others" \
    "it is writable by others \\(mode 666\\).*"
rm "$T/run.conf"
mkfifo "$T/run.conf"
reload "reload of a file replaced by a FIFO, with no writer" \
    "cannot read it: it is a FIFO, not a file"
check "the router stayed up" alive d
stop_dsroute d
stop rt

done_testing
