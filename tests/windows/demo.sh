#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The real win-x64 runtime under wine, reached from Linux, end to end
# (tests/windows/README.md).  Not part of the test suite yet.
#
#   tests/windows/demo.sh
#
# Environment: DSROUTE, a Linux dsroute to turn the relay's TCP port into a
# socket (socat otherwise); DSCLIENT, a built dsclient to parse traces with
# (otherwise tests/interop/build.sh builds one into the setup cache).
#
# 1. runs setup.sh; starts dsapp under wine with launch.exe (start-up time)
# 2. pipeclient info on \\.\pipe\dotnet-diagnostic-<the launcher's pid>,
#    once, then eight at once and once more
# 3. pipeclient relay, a socket on Linux, the real dotnet-trace through it;
#    the trace must hold Dsroute-Test events
# 4. throughput: a 256 MiB pipe stream, alone and through the relay to Linux
# 5. dsapp started with DOTNET_DiagnosticPorts=PIPE,suspend: a pipe server
#    reads its ADVR_V1 advertise, asks ProcessInfo, and resumes it later
# 6. the same suspended start, the Linux dotnet-trace listening: a start-up
#    trace through pipeclient rlisten and socat (first-tick=1)
# Prints "ok - ..." or "not ok - ..." per check, the figures as "# ..."
# lines, and "N passed, N failed" last; exits 1 if any check failed.
set -eu

here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)

cache=$(sh "$here/setup.sh" | tail -n 1)
# shellcheck disable=SC1091
. "$cache/env.sh"
unset DOTNET_DiagnosticPorts DOTNET_DefaultDiagnosticPortSuspend

T=$(mktemp -d /tmp/dswin.XXXXXX)
pids=""
cleanup() {
	for p in $pids; do
		kill "$p" 2>/dev/null || :
	done
	wait 2>/dev/null || :
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

npass=0
nfail=0
ok() {
	npass=$((npass + 1))
	printf 'ok - %s\n' "$1"
}
notok() {
	nfail=$((nfail + 1))
	printf 'not ok - %s\n' "$1"
	[ $# -lt 2 ] || printf '%s\n' "$2" | sed 's/^/#   /'
}
now() {
	date +%s.%N
}
since() {
	awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'
}
# wait_line FILE EREGEX [SECONDS]: FILE (CRs dropped) has a matching line.
wait_line() {
	_n=$(( ${3:-30} * 20 ))
	while [ "$_n" -gt 0 ]; do
		tr -d '\r' <"$1" 2>/dev/null | grep -Eq "$2" && return 0
		sleep 0.05
		_n=$((_n - 1))
	done
	return 1
}
# bg NAME CMD...: run CMD in the background, output in $T/NAME.out/.err.
bg() {
	_name=$1
	shift
	: >"$T/$_name.out"
	: >"$T/$_name.err"
	"$@" >>"$T/$_name.out" 2>>"$T/$_name.err" &
	pids="$pids $!"
	eval "pid_$_name=$!"
}
# relay_port NAME: the port a "relay"/"source" pipeclient printed.
relay_port() {
	sed -n 's/^relay port=\([0-9]*\).*/\1/p' "$T/$1.out"
}

. "$top/tests/lib/dotnet-tools.sh"
dotnet_tool dotnet-trace || { echo "Bail out! $why"; exit 1; }
trace_tool=$tool_path
PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5

if [ -z "${DSCLIENT:-}" ]; then
	DSCLIENT=$cache/interop/client/dsclient
	[ -x "$DSCLIENT" ] || sh "$top/tests/interop/build.sh" "$cache/interop" \
	    >"$T/build.log" 2>&1 || { tail "$T/build.log"; exit 1; }
fi
parse() {
	DOTNET_EnableDiagnostics=0 "$DSCLIENT" parse "$1"
}

# 1. dsapp under wine.
t0=$(now)
bg app wine "$DSWIN_LAUNCH" "$DSWIN_DSAPP" --seconds 300
if wait_line "$T/app.out" '^dsapp pid=[0-9]+ ready$' 60; then
	ok "dsapp starts under wine"
	echo "# wine start to dsapp's ready line: $(since "$t0") s"
else
	notok "dsapp starts under wine" "$(cat "$T/app.out" "$T/app.err")"
	exit 1
fi
wpid=$(sed -n 's/^launch pid=\([0-9]*\) .*/\1/p' "$T/app.out")
grep -q "^dsapp pid=$wpid ready" "$T/app.out" &&
    ok "the launcher's pid is the runtime's ($wpid)" ||
    notok "the launcher's pid is the runtime's" "$(cat "$T/app.out")"
pipe=dotnet-diagnostic-$wpid

# 2. ProcessInfo on the default pipe.
t0=$(now)
if wine "$DSWIN_PIPECLIENT" info "$pipe" >"$T/info.out" 2>&1 &&
    grep -q "^processinfo pid=$wpid .*dsapp.dll.* os=Windows arch=x64$" \
    "$T/info.out"; then
	ok "ProcessInfo over \\\\.\\pipe\\$pipe"
	echo "# $(grep '^timing' "$T/info.out"); whole wine command $(since "$t0") s"
else
	notok "ProcessInfo over the pipe" "$(cat "$T/info.out")"
fi

# 2b. Eight clients at once, then one more: the runtime must still answer.
# (With WaitNamedPipe on ERROR_PIPE_BUSY this wedges it under wine 8.)
for i in 1 2 3 4 5 6 7 8; do
	bg burst$i wine "$DSWIN_PIPECLIENT" info "$pipe"
done
for i in 1 2 3 4 5 6 7 8; do
	eval "wait \$pid_burst$i" || :
done
nb=$(cat "$T"/burst?.out | grep -c '^processinfo pid=' || :)
if wine "$DSWIN_PIPECLIENT" info "$pipe" >"$T/after.out" 2>&1 && [ "$nb" -eq 8 ]; then
	ok "8 concurrent ProcessInfo, then one more"
	echo "# busy retries in the burst: $(cat "$T"/burst?.out | sed -n 's/.*busy-waits=\([0-9]*\).*/\1/p' | tr '\n' ' ')"
else
	notok "8 concurrent ProcessInfo, then one more" \
	    "$nb of 8; after: $(cat "$T/after.out")"
fi

# 3. The relay, a socket on Linux, the real dotnet-trace.
bg relay wine "$DSWIN_PIPECLIENT" relay 0 "$pipe"
wait_line "$T/relay.out" '^relay port=' 30 || notok "relay listens" "$(cat "$T/relay.err")"
port=$(relay_port relay)
if [ -n "${DSROUTE:-}" ]; then
	bg bridge "$DSROUTE" "uds:$T/x.sock" "tcp:127.0.0.1:$port,connect"
	bridge="dsroute"
else
	bg bridge socat "UNIX-LISTEN:$T/x.sock,fork" "TCP:127.0.0.1:$port"
	bridge="socat"
fi
n=100
while [ ! -S "$T/x.sock" ] && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
t0=$(now)
if DOTNET_EnableDiagnostics=0 timeout 120 "$trace_tool" collect \
    --providers "$PROVIDERS" --diagnostic-port "$T/x.sock,connect" \
    --duration 00:00:00:03 -o "$T/t.nettrace" </dev/null >"$T/dt.out" 2>&1 &&
    parse "$T/t.nettrace" >"$T/tp.out" 2>&1 &&
    grep -Eq 'dsroute-test=[1-9][0-9]* gc=[1-9]' "$T/tp.out"; then
	ok "dotnet-trace through relay and $bridge: $(cat "$T/tp.out")"
	echo "# trace $(wc -c <"$T/t.nettrace") bytes, dotnet-trace ran $(since "$t0") s"
else
	notok "dotnet-trace through relay and $bridge" \
	    "$(tail -n 5 "$T/dt.out"; cat "$T/tp.out" "$T/relay.out" "$T/bridge.err" 2>/dev/null)"
fi
kill "$pid_bridge" "$pid_relay" "$pid_app" 2>/dev/null || :

# 4. Bulk throughput: the pipe alone, then pipe -> relay -> TCP -> Linux.
bg src1 wine "$DSWIN_PIPECLIENT" source dswin-bulk-1 256
wait_line "$T/src1.out" '^source pipe=' 30
wine "$DSWIN_PIPECLIENT" sink dswin-bulk-1 >"$T/sink.out" 2>&1 || :
echo "# pipe alone, 256 MiB: $(cat "$T/sink.out")"
bg src2 wine "$DSWIN_PIPECLIENT" source dswin-bulk-2 256
wait_line "$T/src2.out" '^source pipe=' 30
bg relay2 wine "$DSWIN_PIPECLIENT" relay 0 dswin-bulk-2
wait_line "$T/relay2.out" '^relay port=' 30
t0=$(now)
got=$(socat -u "TCP:127.0.0.1:$(relay_port relay2)" - | wc -c)
secs=$(since "$t0")
if [ "$got" -eq $((256 * 1048576)) ]; then
	ok "256 MiB through the relay to Linux"
	echo "# relay to Linux, 256 MiB: $secs s, $(awk -v s="$secs" 'BEGIN { printf "%.1f", 256 / s }') MiB/s"
else
	notok "256 MiB through the relay to Linux" "got $got bytes"
fi
kill "$pid_relay2" 2>/dev/null || :

# 5. A suspended start: the runtime dials our pipe server.
adv=dswin-adv-$$
bg lis1 wine "$DSWIN_PIPECLIENT" listen "$adv" processinfo
wait_line "$T/lis1.out" '^listening pipe=' 30
bg sapp env DOTNET_DiagnosticPorts="$adv,suspend" \
    wine "$DSWIN_LAUNCH" "$DSWIN_DSAPP" --seconds 2
if wait_line "$T/lis1.out" '^processinfo: processinfo pid=' 30; then
	ok "wine delivers the ADVR_V1 advertise on a pipe: $(grep '^advertise' "$T/lis1.out")"
else
	notok "the advertise on a pipe" "$(cat "$T/lis1.out" "$T/lis1.err" "$T/sapp.out")"
fi
sleep 3
if tr -d '\r' <"$T/sapp.out" | grep -q ready; then
	notok "the suspended runtime waits for ResumeRuntime" "$(cat "$T/sapp.out")"
else
	ok "the suspended runtime waits for ResumeRuntime (3 s, no ready line)"
fi
wine "$DSWIN_PIPECLIENT" listen "$adv" resume >"$T/lis2.out" 2>&1 || :
if grep -q '^resume: ok' "$T/lis2.out" &&
    wait_line "$T/sapp.out" '^dsapp pid=[0-9]+ ready$' 30; then
	ok "ResumeRuntime over a second advertised connection starts Main"
else
	notok "ResumeRuntime over the pipe" "$(cat "$T/lis2.out" "$T/sapp.out")"
fi

# 6. A start-up trace: dotnet-trace on Linux listens, the runtime dials.
bg dts env DOTNET_EnableDiagnostics=0 timeout 120 "$trace_tool" collect \
    --providers "$PROVIDERS" --diagnostic-port "$T/l.sock" \
    --duration 00:00:00:03 -o "$T/st.nettrace"
n=200
while [ ! -S "$T/l.sock" ] && [ $n -gt 0 ]; do sleep 0.05; n=$((n - 1)); done
bg sock socat TCP-LISTEN:0,bind=127.0.0.1,fork "UNIX-CONNECT:$T/l.sock"
n=100
sport=""
while [ -z "$sport" ] && [ $n -gt 0 ]; do
	sleep 0.05
	sport=$(ss -Hltnp 2>/dev/null | grep "pid=$pid_sock," |
	    sed -n 's/.*127\.0\.0\.1:\([0-9]*\) .*/\1/p' | head -n 1)
	n=$((n - 1))
done
radv=dswin-start-$$
bg rl wine "$DSWIN_PIPECLIENT" rlisten "$radv" "$sport"
wait_line "$T/rl.out" '^rlisten pipe=' 30
DOTNET_DiagnosticPorts="$radv,suspend" \
    wine "$DSWIN_LAUNCH" "$DSWIN_DSAPP" --seconds 6 >"$T/stapp.out" 2>&1 || :
wait "$pid_dts" || :
if parse "$T/st.nettrace" >"$T/stp.out" 2>&1 &&
    grep -q 'first-tick=1$' "$T/stp.out"; then
	ok "a start-up trace from Linux through rlisten: $(cat "$T/stp.out")"
else
	notok "a start-up trace from Linux" \
	    "$(cat "$T/dts.out" "$T/stp.out" "$T/rl.out" "$T/stapp.out" 2>/dev/null)"
fi

echo "$npass passed, $nfail failed"
[ "$nfail" -eq 0 ]
