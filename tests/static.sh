#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The static dsroute (./dev.sh static, the container image's binary) in an
# empty root: a directory holding only the binary and this test's
# certificates, entered with chroot; no /etc, no libraries, no /proc, no
# /dev.  The fakes run outside and reach it through the socket paths under
# that directory and TCP on loopback.  In each mode, and through two static
# routers chained over mutual TLS, a ProcessInfo reply arrives byte for
# byte as the runtime sends it to a tool that asks it directly, and a
# 4 MiB stream crosses the TLS pair with the runtime's SHA-256.  What an
# empty root cannot answer, user and host names, is refused clearly.
#
# The binary is DSROUTE_STATIC (./dev.sh test builds it), or DSROUTE when
# that one is static (make check in a build configured
# --enable-static-binary); otherwise the test is skipped.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/tls.sh"

S=${DSROUTE_STATIC:-}
if [ -z "$S" ] && file -L "$DSROUTE" 2>/dev/null |
    grep -q 'statically linked'; then
	S=$DSROUTE
fi
[ -n "$S" ] ||
    skip_all "no static dsroute: DSROUTE_STATIC is unset (./dev.sh test sets it)"
[ -x "$S" ] || skip_all "DSROUTE_STATIC=$S is not an executable"
command -v file >/dev/null || skip_all "file(1) is not installed"

# chroot needs root; without it, a user namespace that maps us to root.
if [ "$(id -u)" -eq 0 ]; then
	enter=""
elif unshare -r true 2>/dev/null; then
	enter="unshare -r"
else
	skip_all "chroot needs root or unprivileged user namespaces"
fi

# The empty root.
R=$T/root
mkdir "$R"
cp "$S" "$R/dsroute"

like "file(1): statically linked and stripped" "$(file -L "$S")" \
    'statically linked.*, stripped$'
like "ldd: not a dynamic executable" "$(ldd "$S" 2>&1)" \
    'not a dynamic executable'
size=$(wc -c <"$S")
# 1.8 MiB before the many-runtime code (mirror, link, dsroute ps): a
# budget that says when the binary grows by a library, not by a feature.
check "under 2.5 MiB ($size bytes)" [ "$size" -lt 2621440 ]

# The root is really empty: a dynamically linked program (the fake tool)
# cannot even start in it, for want of its loader and libraries.
cp "$FAKETOOL" "$R/dynamic"
if $enter chroot "$R" /dynamic >"$T/dyn.out" 2>&1 ||
    ! grep -q 'No such file' "$T/dyn.out"; then
	fail "a dynamically linked program cannot run in the empty root" \
	    "$(cat "$T/dyn.out")"
else
	pass "a dynamically linked program cannot run in the empty root"
fi
rm -f "$R/dynamic"

# The certificates, in the root under /c.
make_base_certs
mkdir "$R/c"
for f in ca.pem localhost.pem localhost.key client1.pem client1.key; do
	cp -p "$C/$f" "$R/c/$f"
done
is "the root holds only the binary and the certificates" \
    "$(cd "$R" && find . | sort | tr '\n' ' ')" \
    ". ./c ./c/ca.pem ./c/client1.key ./c/client1.pem ./c/localhost.key ./c/localhost.pem ./dsroute "

# start_static NAME ARGS...: a static router in the empty root, ready.
start_static() {
	_name=$1
	shift
	bg "$_name" $enter chroot "$R" /dsroute "$@"
	if ! wait_for 10 has_line "$T/$_name.err" '^info: ready$'; then
		fail "$_name started" "$(cat "$T/$_name.err")"
		return 1
	fi
	return 0
}

mode_is() {
	like "$1: mode" "$(grep '^info: route main:' "$T/$2.err")" \
	    "route main: $3\$"
}

# A ProcessInfo command (dotnet-trace ps), and the reply to it.
PI=444f544e45545f4950435f56310014000400000000
# reply ADDR: the bytes a tool asking at ADDR got back, as hex.
reply() {
	"$FAKETOOL" --timeout 15 "$1" raw "$PI" 2>>"$T/raw.err" |
	    sed -n 's/^reply //p'
}

# same DESC DIRECT ROUTED: the reply through the router is the runtime's.
same() {
	case "$2" in
	444f544e45545f4950435f5631*)
		is "$1: ProcessInfo reply byte for byte" "$3" "$2"
		;;
	*)
		fail "$1: ProcessInfo reply byte for byte" \
		    "no reply from the runtime directly: '$2'"
		;;
	esac
}

# client-server: the runtime's own socket, tools over TCP.
start_fakert rt1 --listen "$R/rt1.sock" --pid 1001
start_static d1 uds:/rt1.sock tcp:127.0.0.1:0 &&
mode_is "runtime's port to tcp" d1 client-server
same "runtime's port to tcp" "$(reply "$R/rt1.sock")" \
    "$(reply "tcp:127.0.0.1:$(port_of d1 remote)")"
stop_dsroute d1
stop rt1

# server-server: the runtime dials the router's socket, tools over TCP;
# the runtime also listens outside the root, for the direct answer.
start_static d2 uds:/rt2.sock tcp:127.0.0.1:0 &&
mode_is "runtime dials uds, tools on tcp" d2 server-server
start_fakert rt2 --connect "$R/rt2.sock" --listen "$T/rt2.sock"
wait_for 10 has_line "$T/rt2.ev" '^advertise' ||
    fail "rt2 reaches the router" "$(cat "$T/rt2.err")"
same "runtime dials uds, tools on tcp" "$(reply "$T/rt2.sock")" \
    "$(reply "tcp:127.0.0.1:$(port_of d2 remote)")"
stop_dsroute d2
stop rt2

# server-client: tools on the router's socket, the runtime listens on TCP
# (iOS); as root, the router drops to numeric ids, which need no user
# database.
drop=""
[ -z "$enter" ] && drop="--user 65534 --group 65534"
start_fakert rt3 --listen tcp:127.0.0.1:0 --pid 1003
start_static d3 $drop uds:/tool3.sock \
    "tcp:127.0.0.1:$(fakert_port rt3),connect" &&
mode_is "tools on uds, runtime listens on tcp" d3 server-client
if [ -n "$drop" ]; then
	like "numeric --user and --group drop privileges in the empty root" \
	    "$(cat "$T/d3.err")" 'running as uid 65534, gid 65534'
else
	skip "numeric --user and --group in the empty root" "not root"
fi
same "tools on uds, runtime listens on tcp" \
    "$(reply "tcp:127.0.0.1:$(fakert_port rt3)")" "$(reply "$R/tool3.sock")"
stop_dsroute d3
stop rt3

# client-client: the runtime's own socket, and a tool listening on TCP.
start_fakert rt4 --listen "$R/rt4.sock" --pid 1004
bg lt4 "$FAKETOOL" --timeout 30 tcp:127.0.0.1:0,listen raw "$PI"
wait_for 10 has_line "$T/lt4.out" '^listening ' || fail "lt4 listens"
tport=$(sed -n 's/^listening tcp:.*:\([0-9]*\)$/\1/p' "$T/lt4.out")
start_static d4 uds:/rt4.sock "tcp:127.0.0.1:$tport,connect" &&
mode_is "runtime's port to a listening tool on tcp" d4 client-client
wait "$(pid_of lt4)"
same "runtime's port to a listening tool on tcp" "$(reply "$R/rt4.sock")" \
    "$(sed -n 's/^reply //p' "$T/lt4.out")"
stop_dsroute d4
stop rt4

# Mutual TLS between two static routers in the root: one listens for TLS
# in front of the runtime, the other dials it for the tools, each checking
# the other's certificate against /c/ca.pem.
start_fakert rt5 --listen "$R/rt5.sock" --pid 1005 --stream-bytes 4194304
start_static s5 uds:/rt5.sock \
    "tls:127.0.0.1:0,cert=/c/localhost.pem,key=/c/localhost.key,ca=/c/ca.pem" &&
mode_is "TLS listener in front of the runtime" s5 client-server
start_static c5 uds:/tool5.sock \
    "tls:127.0.0.1:$(port_of s5 remote),connect,ca=/c/ca.pem,cert=/c/client1.pem,key=/c/client1.key" &&
mode_is "TLS dialler for the tools" c5 server-client
same "two static routers over mutual TLS" "$(reply "$R/rt5.sock")" \
    "$(reply "$R/tool5.sock")"
# A 4 MiB EventPipe stream through both, the SHA-256 the runtime sent.
"$FAKETOOL" --timeout 30 "$R/tool5.sock" collect --expect-bytes 4194304 \
    >"$T/collect.out" 2>"$T/collect.err"
id=$(sed -n 's/.*session=\([^ ]*\).*/\1/p' "$T/collect.out" | tail -n 1)
wait_for 10 has_line "$T/rt5.ev" "^stream-end $id " ||
    fail "rt5 ends the stream" "$(cat "$T/collect.err")"
sum=$(sed -n 's/.*sha256=\([^ ]*\).*/\1/p' "$T/collect.out" | tail -n 1)
is "two static routers over mutual TLS: 4 MiB stream, same SHA-256" \
    "${sum:-none}" "$(sed -n "s/^stream-end $id 4194304 //p" "$T/rt5.ev")"
wait_for 10 has_line "$T/s5.err" '^info: session [0-9]+: ' ||
    fail "s5 logs the session"
like "the TLS listener verified the client's certificate" \
    "$(grep '^info: session [0-9]*: ' "$T/s5.err")" 'cn:client1'
stop_dsroute c5
stop_dsroute s5
stop rt5

# What has no answer in an empty root: names.  A user name needs
# /etc/passwd; a host name needs /etc/hosts or /etc/resolv.conf (which
# container runtimes mount, README.md says).
$enter chroot "$R" /dsroute --user nobody --group 65534 uds:/x.sock \
    tcp:127.0.0.1:0 >"$T/out" 2>"$T/err"
like "--user NAME in the empty root: a clear refusal" \
    "$(cat "$T/err")" '^crit: --user nobody: no such user$'
$enter chroot "$R" /dsroute uds:/x.sock tcp:localhost:0 \
    >"$T/out" 2>"$T/err"
like "a host name in the empty root: a clear refusal" \
    "$(cat "$T/err")" "cannot resolve 'localhost'"

done_testing
