#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The socket-file race (security.md LS-4): another user keeps swapping the
# listen path in a shared sticky directory between a stale socket, a
# symbolic link to a file we watch and a regular file, while a root
# router starts there again and again.  The router must never follow the
# link, never remove or change what is not its own, and either start on
# its own socket or refuse with one line.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

RACESWAP=$top_builddir/tests/raceswap
ROUNDS=${SOCKRACE_ROUNDS:-150}

[ "$(id -u)" -eq 0 ] || skip_all "the race needs root and a second uid"
getent passwd nobody >/dev/null && getent group nogroup >/dev/null ||
    skip_all "no user nobody or group nogroup"

chmod 0755 "$T"
mkdir -m 1777 "$T/shared"
echo precious >"$T/precious"
chmod 0640 "$T/precious"
snap() {
	stat -c '%i %a %u %g %h %s %Y %Z' "$T/precious"
	cat "$T/precious"
}
before=$(snap)

start_fakert rt --listen "$T/rt.sock" --pid 4242
bg swap setpriv --reuid=nobody --regid=nogroup --clear-groups \
    "$RACESWAP" "$T/shared" x.sock "$T/precious"
wait_for 10 has_line "$T/swap.out" '^raceswap: ready$' ||
    fail "the attacker runs" "$(cat "$T/swap.err")"

starts=0
refusals=0
bad=""
i=0
while [ $i -lt "$ROUNDS" ]; do
	i=$((i + 1))
	: >"$T/r.err"
	"$DSROUTE" "uds:$T/shared/x.sock,listen" "uds:$T/rt.sock" \
	    >/dev/null 2>>"$T/r.err" &
	p=$!
	# Ready, or refused: a start that fails always ends with crit:.
	wait_for 10 has_line "$T/r.err" '^(info: ready|crit: )'
	if has_line "$T/r.err" '^info: ready$'; then
		# It started: on a socket of its own, which serves.
		got=$(stat -c '%u %a %F' "$T/shared/x.sock" 2>&1)
		[ "$got" = "0 600 socket" ] ||
		    bad="$bad round $i: started, but x.sock is '$got';"
		"$FAKETOOL" --timeout 10 "$T/shared/x.sock" processinfo \
		    >"$T/tool.out" 2>&1 ||
		    bad="$bad round $i: started, but does not serve;"
		kill "$p"
		wait "$p" || bad="$bad round $i: exit $? after SIGTERM;"
		starts=$((starts + 1))
	else
		wait "$p"
		rc=$?
		if [ $rc -ne 1 ] || [ "$(wc -l <"$T/r.err")" -ne 1 ]; then
			bad="$bad round $i: exit $rc, $(cat "$T/r.err");"
		fi
		sed 's/.*: //' "$T/r.err" >>"$T/reasons"
		refusals=$((refusals + 1))
	fi
	if grep -Eq 'Sanitizer|runtime error:' "$T/r.err"; then
		bad="$bad round $i: $(cat "$T/r.err");"
	fi
done
echo "# $ROUNDS starts: $starts started, $refusals refused"
[ -f "$T/reasons" ] && sort "$T/reasons" | uniq -c | sed 's/^/#   /'

stop swap
report=$(tail -n 1 "$T/swap.out")
echo "# $report"
like "no link or regular file of the attacker was ever removed" \
    "$report" 'vanished=[0-9]+,0,0 '
like "nor a stale socket of the attacker's" "$report" 'vanished=0,'
like "nor was any changed" "$report" 'changed=0$'
is "the link's target is untouched: inode, mode, owner, links, content" \
    "$(snap)" "$before"
is "each start served on its own socket, or refused with one line" \
    "$bad" ""
check "some starts won the race" test "$starts" -gt 0
check "some were refused" test "$refusals" -gt 0

# Without the race: who owns what decides what is replaced.
setpriv --reuid=nobody --regid=nogroup --clear-groups "$FAKERT" \
    --listen "$T/shared/theirs.sock" >/dev/null 2>&1 &
fpid=$!
wait_for 10 test -S "$T/shared/theirs.sock"
kill -9 "$fpid"
wait "$fpid"
snapshot=$(stat -c '%i %U %a' "$T/shared/theirs.sock")
refused "a stale socket of another uid in a shared directory is refused" \
    'theirs\.sock is a socket of uid 65534 in a directory others can write; refusing to replace it$' \
    "uds:$T/shared/theirs.sock,listen" tcp:127.0.0.1:0
is "and it is left as it was" \
    "$(stat -c '%i %U %a' "$T/shared/theirs.sock")" "$snapshot"
start_dsroute own "uds:$T/shared/ours.sock" tcp:127.0.0.1:0
stop own KILL
check "a stale socket of our own there is replaced" \
    start_dsroute own2 "uds:$T/shared/ours.sock" tcp:127.0.0.1:0
stop_dsroute own2

mkdir -m 0755 "$T/theirs"
chown nobody:nogroup "$T/theirs"
refused "a directory of another user is refused" \
    'directory .*/theirs belongs to uid 65534, who could replace the socket' \
    "uds:$T/theirs/x.sock,listen" tcp:127.0.0.1:0
check "unless that user is the socket's owner=" \
    start_dsroute given "uds:$T/theirs/x.sock,owner=nobody" tcp:127.0.0.1:0
stop_dsroute given
stop rt

done_testing
