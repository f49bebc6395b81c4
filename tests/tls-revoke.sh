#!/bin/sh
# SPDX-License-Identifier: ISC
#
# TLS-32 (security.md §4.2): a reload of the configuration file that takes
# an identity off a TLS listener's allow-list, or takes its grant away,
# refuses that identity from its next connection on, without a restart,
# while a trace it started before the reload runs to its end (sessions in
# flight keep the decision they were given; dsroute.conf(5), RELOADING).

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

STREAM=16777216

make_base_certs
mkcert client client2

# conf ALLOW GRANT: a route whose listener allows the CNs in ALLOW and
# gives operate to those in GRANT, nothing to anyone else.
conf() {
	{
		echo "[main]"
		echo "local = uds:$T/rt.sock,connect"
		# The certificate options as lines of their own, as a
		# user would write them (dsroute.conf(5), ROUTES).
		echo "remote = tls:127.0.0.1:0"
		echo "remote.cert = $C/localhost.pem"
		echo "remote.key = $C/localhost.key"
		echo "remote.ca = $C/ca.pem"
		echo "remote.policy = none"
		for _cn in $1; do
			echo "remote.allow-cn = $_cn"
		done
		for _cn in $2; do
			echo "remote.operate = cn:$_cn"
		done
	} >"$T/dsroute.conf"
}

# reload: SIGHUP, and wait until the file is applied.
reload() {
	_before=$(count_lines "$T/b.err" '^info: reloaded ')
	kill -HUP "$(pid_of b)"
	wait_for 15 eval "[ \$(count_lines '$T/b.err' '^info: reloaded ') -gt $_before ]"
}

commands() {
	count_lines "$T/rt.ev" '^command '
}

# served NAME DESC: the tool behind router NAME gets ProcessInfo answered.
served() {
	if tool --timeout 30 "$T/$1.sock" processinfo; then
		is "$2" "$(field pid "$T/tool.out")" 5301
	else
		fail "$2" "$(cat "$T/tool.out" "$T/tool.err")"
	fi
}

# denied NAME DESC EREGEX: the tool behind router NAME is denied, the
# audit line matches EREGEX, and the runtime gets no command.
denied() {
	_cmds=$(commands)
	tool --timeout 30 "$T/$1.sock" processinfo
	is "$2: access denied" "$(cat "$T/tool.out")" "error 0x80070005"
	audited b "$2: audited" "$3"
	is "$2: the runtime got no command" "$(commands)" "$_cmds"
}

start_fakert rt --listen "$T/rt.sock" --pid 5301 --stream-bytes $STREAM
conf "client1 client2" "client1 client2"
start_dsroute b -f "$T/dsroute.conf"
port=$(port_of b remote)
for who in client1 client2; do
	start_dsroute "$who" "uds:$T/$who.sock" \
	    "tls:127.0.0.1:$port,connect,ca=$C/ca.pem,$(cert "$who")"
done
served client1 "client1, on the list and granted, is served"
served client2 "client2, on the list and granted, is served"

# client2 starts a trace that outlives both reloads (16 MiB at 2 MB/s).
bg trace "$FAKETOOL" --timeout 60 "$T/client2.sock" collect \
    --rate 2000000 --expect-bytes $STREAM
wait_for 15 has_line "$T/rt.ev" '^stream-start' || fail "the trace starts"

conf "client1" "client1 client2"
check "TLS-32 a reload takes client2 off the allow-list" reload
check "TLS-32 ... in place: no restart needed" eval \
    "! has_line '$T/b.err' 'takes a restart'"
denied client2 "TLS-32 client2's next connection, off the allow-list" \
    'peer="tls:[^ ]*\(cn:client2,[^ ]*\)" .*decision=deny .*rule="allow-list" reason="identity not on the allow-list"'
served client1 "TLS-32 client1, still on the list, is served"

conf "client1 client2" "client2"
check "TLS-32 a reload takes client1's grant away, client2 back on" reload
denied client1 "TLS-32 client1's next connection, without a grant" \
    'peer="tls:[^ ]*\(cn:client1,[^ ]*\)" .*decision=deny role=none '
served client2 "TLS-32 client2, back on the list, is served"
check "TLS-32 client2's trace is still running after both reloads" alive trace

if wait "$(pid_of trace)"; then
	id=$(field session "$T/trace.out")
	wait_for 10 has_line "$T/rt.ev" "^stream-end $id "
	is "TLS-32 client2's trace from before the reloads ran whole" \
	    "$(field sha256 "$T/trace.out")" \
	    "$(sed -n "s/^stream-end $id $STREAM //p" "$T/rt.ev")"
else
	fail "TLS-32 client2's trace from before the reloads ran whole" \
	    "$(cat "$T/trace.out" "$T/trace.err")"
fi

stop_dsroute client1
stop_dsroute client2
stop_dsroute b
stop rt
done_testing
