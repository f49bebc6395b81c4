#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Self-test of the test fakes: fakert against faketool directly, with no
# router in between.  Prints TAP; exits 0 only if every test passed.
# FAKERT and FAKETOOL may point at the binaries (default: next to this
# script).  Synchronisation is by polling files with a bounded loop.

set -u

here=$(cd "$(dirname "$0")" && pwd)
FAKERT=${FAKERT:-$here/fakert}
FAKETOOL=${FAKETOOL:-$here/faketool}

for b in "$FAKERT" "$FAKETOOL"; do
	if [ ! -x "$b" ]; then
		echo "Bail out! $b not built (make -f tests/fakes.mk)"
		exit 99
	fi
done

T=$(mktemp -d /tmp/fk.XXXXXX) || exit 99
pids=""

cleanup()
{
	for p in $pids; do
		kill "$p" 2>/dev/null
	done
	for p in $pids; do
		wait "$p" 2>/dev/null
	done
	if [ "${failed:-0}" -ne 0 ]; then
		for f in "$T"/*.ev "$T"/*.err "$T"/*.out; do
			[ -s "$f" ] || continue
			echo "# --- $f"
			sed 's/^/#   /' "$f"
		done
	fi
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

PLAN=48
echo "1..$PLAN"
n=0
failed=0

ok()
{
	n=$((n + 1))
	echo "ok $n - $1"
}

not_ok()
{
	n=$((n + 1))
	failed=$((failed + 1))
	echo "not ok $n - $1"
}

# check DESCRIPTION COMMAND...: one TAP line from the command's status.
check()
{
	desc=$1
	shift
	if "$@"; then
		ok "$desc"
	else
		not_ok "$desc"
	fi
}

# Remove pid $1 from the cleanup list once it has been reaped.
forget()
{
	np=""
	for p in $pids; do
		[ "$p" = "$1" ] || np="$np $p"
	done
	pids=$np
}

# wait_for FILE REGEX: poll (at most ~15 s) until a line matches.
wait_for()
{
	i=0
	while [ $i -lt 300 ]; do
		grep -q -- "$2" "$1" 2>/dev/null && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_count FILE REGEX N: poll until at least N lines match.
wait_count()
{
	i=0
	while [ $i -lt 300 ]; do
		c=$(grep -c -- "$2" "$1" 2>/dev/null)
		[ "${c:-0}" -ge "$3" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# wait_sock PATH: poll until a socket exists there.
wait_sock()
{
	i=0
	while [ $i -lt 300 ]; do
		[ -S "$1" ] && return 0
		sleep 0.05
		i=$((i + 1))
	done
	return 1
}

# running PID: true while the process has not exited.
running()
{
	kill -0 "$1" 2>/dev/null
}

# line_of FILE REGEX: number of the first matching line (or 0).
line_of()
{
	l=$(grep -n -- "$2" "$1" 2>/dev/null | head -n 1 | cut -d: -f1)
	echo "${l:-0}"
}

# start_rt NAME ARGS...: start fakert with events in $T/NAME.ev.
start_rt()
{
	name=$1
	shift
	"$FAKERT" --events "$T/$name.ev" "$@" 2>"$T/$name.err" &
	eval "rt_$name=$!"
	pids="$pids $!"
}

# stop_rt NAME: SIGTERM it and check it exits 0 (no leak under ASan).
stop_rt()
{
	eval "p=\$rt_$1"
	kill -TERM "$p" 2>/dev/null
	wait "$p"
	st=$?
	forget "$p"
	return $st
}

# Equal A B, for check.
eq()
{
	[ "$1" = "$2" ]
}

ERR_BAD_ENCODING=444f544e45545f4950435f5631001800ffff000084131380
ERR_UNKNOWN_MAGIC=444f544e45545f4950435f5631001800ffff000086131380
HDR_PROCESSINFO=444f544e45545f4950435f5631001400040000
COOKIE=00112233445566778899aabbccddeeff

# --- listen port: ProcessInfo family, environment -------------------------

start_rt a --listen "$T/a.sock" --pid 4242 --cookie $COOKIE
wait_for "$T/a.ev" "^listen $T/a.sock\$"
check "listen: socket is created with mode 0600" \
    eq "$(ls -l "$T/a.sock" | cut -c1-10)" "srw-------"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" processinfo)
check "listen: ProcessInfo reports --pid, --cookie, command line, OS, arch" \
    eq "$out" "pid=4242 cookie=$COOKIE cmdline=fakert --events $T/a.ev \
--listen $T/a.sock --pid 4242 --cookie $COOKIE os=Linux arch=x64"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" processinfo3)
check "listen: ProcessInfo3 carries entrypoint, version and RID" \
    eq "${out#* arch=x64 }" \
    "entrypoint=fakert clrversion=0.0.0-fake rid=linux-x64"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" env)
check "listen: ProcessEnvironment continuation read to EOF, length checked" \
    eq "$out" "env count=4"

# --- a silent client on the listen port blocks the whole server -----------

"$FAKETOOL" --timeout 30 "$T/a.sock" raw 444f54 --hold-ms 30000 \
    >"$T/silent.out" 2>&1 &
silent=$!
pids="$pids $silent"
wait_count "$T/a.ev" '^accept$' 4
"$FAKETOOL" --timeout 30 "$T/a.sock" processinfo >"$T/second.out" 2>&1 &
second=$!
pids="$pids $second"
# Give the second client a fair window to be (wrongly) served.
i=0
while [ $i -lt 20 ] && running $second; do
	sleep 0.05
	i=$((i + 1))
done
check "silent: second client gets no reply while the first holds 3 bytes" \
    eval "running $second && [ ! -s '$T/second.out' ]"
kill $silent
{ wait $silent; } 2>/dev/null
forget $silent
wait $second
st=$?
forget $second
check "silent: second client is answered once the first closes" \
    eval "[ $st -eq 0 ] && grep -q '^pid=4242 ' '$T/second.out'"
check "silent: runtime saw the partial header end before the next command" \
    eval "[ $(line_of "$T/a.ev" '^bad-message short-header 3$') -gt 0 ] &&
    [ $(line_of "$T/a.ev" '^bad-message short-header 3$') -lt \
    $(grep -n '^command 0x04 0x00 ' "$T/a.ev" | sed -n 2p | cut -d: -f1) ]"

# --- bad input: error frames, then close ---------------------------------

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" raw \
    5858585858585858585858585858140004000000)
check "bad: wrong magic gets UNKNOWN_MAGIC and close" \
    eq "$out" "reply $ERR_UNKNOWN_MAGIC
eof"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" raw \
    444f544e45545f4950435f563100100004000000)
check "bad: size < 20 gets BAD_ENCODING and close" \
    eq "$out" "reply $ERR_BAD_ENCODING
eof"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" command 0x04 0x7f)
st=$?
check "bad: unknown command gets UNKNOWN_COMMAND (exit 1)" \
    eval "[ $st -eq 1 ] && [ '$out' = 'reply set=0xFF id=0xFF size=24 \
hresult=0x80131385
error 0x80131385' ]"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" command 0x09 0x00)
check "bad: unknown command set gets UNKNOWN_COMMAND" \
    eq "$(echo "$out" | tail -n 1)" "error 0x80131385"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" raw 444f544e45 --chunk 2 \
    --delay-ms 20 --shut-wr)
check "bad: short header then EOF gets BAD_ENCODING" \
    eq "$out" "reply $ERR_BAD_ENCODING
eof"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" raw \
    444f544e45545f4950435f56310020000400000001020304 --shut-wr)
check "bad: short payload then EOF gets BAD_ENCODING" \
    eq "$out" "reply $ERR_BAD_ENCODING
eof"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" command 0x02 0x03 000000)
check "bad: CollectTracing payload < 4 bytes gets BAD_ENCODING" \
    eq "$(echo "$out" | tail -n 1)" "error 0x80131384"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" stop 12345)
st=$?
check "bad: StopTracing of an unknown session gets INVALIDARG" \
    eval "[ $st -eq 1 ] && [ '$out' = 'error 0x80070057' ]"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" command 0x03 0x02 \
    00000000000000000000000000000000)
check "bad: StartupProfiler outside a suspended startup gets INVALIDARG" \
    eq "$(echo "$out" | tail -n 1)" "error 0x80070057"

out=$("$FAKETOOL" --timeout 1 "$T/a.sock" raw 444f544e45)
st=$?
check "bad: a partial header without EOF gets no reply (timeout, exit 3)" \
    eval "[ $st -eq 3 ] && [ '$out' = 'reply none
timeout' ]"

out=$("$FAKETOOL" --timeout 10 "$T/a.sock" processinfo)
check "bad: the server still works after all of that" \
    eval "echo '$out' | grep -q '^pid=4242 '"

check "events: bad-message lines carry reason and byte count" \
    eval "[ \"\$(grep '^bad-message' '$T/a.ev' | tr '\n' ,)\" = \
'bad-message short-header 3,bad-message magic 20,bad-message size 20,\
bad-message unknown-command 20,bad-message unknown-command 20,\
bad-message short-header 5,bad-message short-payload 24,\
bad-message short-header 5,' ]"

check "listen: SIGTERM exits 0" stop_rt a
check "events: first line is listen, last is exit" \
    eval "[ \"\$(head -n 1 '$T/a.ev')\" = 'listen $T/a.sock' ] &&
    [ \"\$(tail -n 1 '$T/a.ev')\" = exit ]"
check "events: each connection is accept ... rx-bytes, cumulative" \
    eval "[ $(grep -c '^accept$' "$T/a.ev") -eq \
    $(grep -c '^rx-bytes ' "$T/a.ev") ] &&
    [ \"\$(grep '^rx-bytes' '$T/a.ev' | tail -n 1)\" = 'rx-bytes 304' ]"
check "listen: socket is unlinked at exit" eval "[ ! -e '$T/a.sock' ]"

# --- connect mode against a listening tool --------------------------------

"$FAKETOOL" --timeout 20 "$T/tool.sock,listen" repeat 20 processinfo \
    >"$T/c1.out" 2>"$T/c1.err" &
tool=$!
pids="$pids $tool"
wait_sock "$T/tool.sock"
start_rt c --connect "$T/tool.sock" --pid 5151 --cookie $COOKIE
wait $tool
st=$?
forget $tool
check "connect: 20 commands in a row, each on a new parked connection" \
    eval "[ $st -eq 0 ] && [ \"\$(tail -n 1 '$T/c1.out')\" = 'ok 20' ] &&
    [ $(grep -c '^command 0x04 0x00 20 ProcessInfo$' "$T/c.ev") -eq 20 ]"
check "connect: tool printed the advertise once for the cookie" \
    eq "$(grep '^advertise' "$T/c1.out")" "advertise pid=5151 cookie=$COOKIE"
check "connect: a fresh advertise precedes every command" \
    eval "[ \"\$(grep -B1 '^command' '$T/c.ev' | grep -c '^advertise$')\" \
    -eq 20 ]"

out=$("$FAKETOOL" --timeout 10 "$T/tool.sock,listen" processinfo2)
check "connect: ProcessInfo2 over the reverse connection" \
    eval "echo '$out' | grep -q '^pid=5151 cookie=$COOKIE .* \
entrypoint=fakert clrversion=0.0.0-fake\$'"

check "connect: SIGTERM exits 0" stop_rt c

# A tool that takes the parked connection and resets it: the runtime
# drops it (parked-hup) and has received nothing.
"$FAKETOOL" --timeout 10 "$T/tool3.sock,listen" raw "" --reset \
    >"$T/h.out" 2>&1 &
tool=$!
pids="$pids $tool"
wait_sock "$T/tool3.sock"
start_rt h --connect "$T/tool3.sock"
wait $tool
forget $tool
check "connect: a parked connection reset by the tool is dropped" \
    eval "[ \"\$(grep -v '^advertise ' '$T/h.out' | tr '\n' ,)\" = \
    'reply none,reset,' ] &&
    wait_for '$T/h.ev' '^parked-hup\$'"
check "connect: runtime received zero bytes on it" \
    eval "! grep -q -e '^command' -e '^bad-message' '$T/h.ev' &&
    [ \"\$(grep '^rx-bytes' '$T/h.ev' | sort -u)\" = 'rx-bytes 0' ]"
check "connect: SIGTERM exits 0 while reconnecting" stop_rt h

# --- suspend: paused until ResumeRuntime on the connect port --------------

start_rt s --listen "$T/s-rt.sock" --connect "$T/s.sock" --suspend
wait_sock "$T/s-rt.sock"
out=$("$FAKETOOL" --timeout 10 "$T/s-rt.sock" resume)
check "suspend: ResumeRuntime on the listen port is answered ok" eq "$out" ok
out=$("$FAKETOOL" --timeout 10 "$T/s.sock,listen" command 0x03 0x02 \
    00000000000000000000000000000000 | grep -v '^advertise ')
check "suspend: server runs while paused (StartupProfiler accepted)" \
    eq "$out" "reply set=0xFF id=0x00 size=24 payload=4"
check "suspend: still paused (listen-port resume does not count)" \
    eval "! grep -q '^resumed' '$T/s.ev' && ! grep -q resumed '$T/s.err'"
out=$("$FAKETOOL" --timeout 10 "$T/s.sock,listen" resume |
    grep -v '^advertise ')
check "suspend: ResumeRuntime on the connect port resumes startup" \
    eval "[ '$out' = ok ] && wait_for '$T/s.ev' '^resumed\$' &&
    wait_for '$T/s.err' '^fakert: resumed\$'"
check "suspend: resumed exactly once, after the second ResumeRuntime" \
    eval "[ $(grep -c '^resumed$' "$T/s.ev") -eq 1 ] &&
    [ $(line_of "$T/s.ev" '^resumed$') -gt \
    $(grep -n 'ResumeRuntime$' "$T/s.ev" | tail -n 1 | cut -d: -f1) ]"
check "suspend: SIGTERM exits 0" stop_rt s

# --- EventPipe streaming ---------------------------------------------------

start_rt st --listen "$T/st.sock" --stream-bytes 67108864
wait_sock "$T/st.sock"
out=$("$FAKETOOL" --timeout 60 "$T/st.sock" collect --expect-bytes 67108864)
st=$?
id=$(echo "$out" | sed -n 's/^session=\([0-9]*\) .*/\1/p')
sha=$(echo "$out" | sed -n 's/.* sha256=\([0-9a-f]*\)$/\1/p')
check "collect: 64 MiB stream ends by itself, tool got exactly 64 MiB" \
    eval "[ $st -eq 0 ] && [ -n '$id' ] && [ \${#sha} -eq 64 ]"
check "collect: tool sha256 equals fakert's stream-end line" \
    eval "wait_for '$T/st.ev' '^stream-end $id ' &&
    [ \"\$(grep '^stream-end $id ' '$T/st.ev')\" = \
    'stream-end $id 67108864 $sha' ]"

out=$("$FAKETOOL" --timeout 10 "$T/st.sock" collect --hangup-after-bytes 1000)
id=$(echo "$out" | sed -n 's/^session=\([0-9]*\) .*/\1/p')
check "collect: a tool dying mid-stream makes the stream break" \
    eval "[ -n '$id' ] && wait_for '$T/st.ev' '^stream-broken $id '"
check "collect: SIGTERM exits 0" stop_rt st

start_rt sp --listen "$T/sp.sock"
wait_sock "$T/sp.sock"
out=$("$FAKETOOL" --timeout 30 "$T/sp.sock" collect --stop-after-bytes 1048576)
st=$?
id=$(echo "$out" | sed -n 's/^session=\([0-9]*\) .*/\1/p')
bytes=$(echo "$out" | sed -n 's/.* bytes=\([0-9]*\) .*/\1/p')
sha=$(echo "$out" | sed -n 's/.* sha256=\([0-9a-f]*\)$/\1/p')
check "stop: StopTracing on a second connection ends the stream" \
    eval "[ $st -eq 0 ] && [ ${bytes:-0} -ge 1048576 ] &&
    [ $(grep -c '^accept$' "$T/sp.ev") -eq 2 ] &&
    grep -q '^command 0x02 0x01 28 StopTracing$' '$T/sp.ev' &&
    [ \"\$(grep '^stream-end' '$T/sp.ev')\" = \
    'stream-end $id $bytes $sha' ]"
check "stop: stream ends before the StopTracing connection is closed" \
    eval "[ $(line_of "$T/sp.ev" StopTracing) -lt \
    $(line_of "$T/sp.ev" '^stream-end') ] &&
    [ $(line_of "$T/sp.ev" '^stream-end') -lt \
    $(grep -n '^rx-bytes' "$T/sp.ev" | tail -n 1 | cut -d: -f1) ]"
check "stop: SIGTERM exits 0" stop_rt sp

"$FAKETOOL" --timeout 30 "$T/tool2.sock,listen" collect \
    --stop-after-bytes 100000 >"$T/c2.out" 2>"$T/c2.err" &
tool=$!
pids="$pids $tool"
wait_sock "$T/tool2.sock"
start_rt sr --connect "$T/tool2.sock" --exit-after 2
wait $tool
st=$?
forget $tool
eval "p=\$rt_sr"
wait "$p"
rst=$?
forget "$p"
check "stop: reverse mode sends StopTracing on the next parked connection" \
    eval "[ $st -eq 0 ] && grep -q '^session=' '$T/c2.out' &&
    grep -q '^stream-end ' '$T/sr.ev'"
check "exit-after: fakert exits 0 by itself after 2 commands" \
    eval "[ $rst -eq 0 ] && [ \"\$(tail -n 1 '$T/sr.ev')\" = exit ]"

# --- TCP listen port -------------------------------------------------------

start_rt tcp --listen tcp:127.0.0.1:0 --pid 6161
wait_for "$T/tcp.ev" '^listen tcp:127.0.0.1:[1-9]'
addr=$(sed -n 's/^listen //p' "$T/tcp.ev")
out=$("$FAKETOOL" --timeout 10 "$addr" processinfo)
check "tcp: ProcessInfo over a TCP listen port" \
    eval "echo '$out' | grep -q '^pid=6161 '"
check "tcp: SIGTERM exits 0" stop_rt tcp

if [ $n -ne $PLAN ]; then
	not_ok "plan: ran $n tests, planned $PLAN"
fi
[ $failed -eq 0 ]
