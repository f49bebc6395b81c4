#!/bin/sh
# SPDX-License-Identifier: ISC
#
# LS-7 (security.md §4.5, rule R7): anyone who may write to /tmp can plant
# a socket under a runtime's default name, dotnet-diagnostic-PID-KEY-socket,
# and wait for a router to bring it the commands meant for PID.  A router
# that dials such a name checks that the process listening there is PID
# and started at KEY (field 22 of /proc/PID/stat, as the runtime derives
# it): a planted socket is refused before a byte reaches it, with one line
# saying why, and the router serves on; the real runtime's socket is
# served.  A socket planted by another user from a pid namespace of its
# own, where it chose to have pid PID, is refused as well: that the
# listener has pid PID only in its own namespace counts only if it runs
# as the router's uid or root.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# starttime PID: when the process started, in clock ticks after boot,
# the KEY of its runtime's socket name.  The command in /proc/PID/stat may
# hold ") ", so the fields are counted after the last one.
starttime() {
	sed -n 's/.*) //p' "/proc/$1/stat" | awk '{ print $20 }'
}

# refused_at ROUTER DESC [EREGEX]: ProcessInfo through ROUTER finds no
# runtime, and the router says why, with EREGEX in the reason.
refused_at() {
	_port=$(port_of "$1" remote)
	if tool --timeout 30 "tcp:127.0.0.1:$_port" processinfo; then
		fail "$2: the tool gets no answer" "$(cat "$T/tool.out")"
	else
		pass "$2: the tool gets no answer"
	fi
	check "$2: the router says why" wait_for 10 has_line "$T/$1.err" \
	    "end=\"connect to [^ ]* failed: $not_its.*${3:-}"
}
not_its="the process listening at the socket is not the one its name gives"

# The squatter listens under the name of another live process, this
# shell, with that process's own key.
planted="$T/dotnet-diagnostic-$$-$(starttime $$)-socket"
start_fakert sq --listen "$planted" --pid $$
start_dsroute d "uds:$planted,connect" tcp:127.0.0.1:0
refused_at d "a socket planted under another process's pid"
refused_at d "again"
is "the planted socket received no byte" "$(runtime_rx sq)" 0
check "the router is still up" alive d

# The form dotnet-dsrouter's sockets have, dotnet-diagnostic-dsrouter-PID-
# KEY-socket, KEY the seconds since 1970 at which PID started.
epoch=$(( $(sed -n 's/^btime //p' /proc/stat) + $(starttime $$) / \
    $(getconf CLK_TCK) ))
ln "$planted" "$T/dotnet-diagnostic-dsrouter-$$-$epoch-socket"
start_dsroute d2 "uds:$T/dotnet-diagnostic-dsrouter-$$-$epoch-socket,connect" \
    tcp:127.0.0.1:0
refused_at d2 "a planted dotnet-diagnostic-dsrouter- socket"
is "the planted socket still received no byte" "$(runtime_rx sq)" 0

# The listener under its own pid, but a key it did not start at: a
# socket left by an earlier process that had the pid.
sqpid=$(pid_of sq)
sqkey=$(starttime "$sqpid")
stale="$T/dotnet-diagnostic-$sqpid-$((sqkey + 1))-socket"
mv "$planted" "$stale"
start_dsroute d3 "uds:$stale,connect" tcp:127.0.0.1:0
refused_at d3 "a socket under its own process's pid with another key" key
is "it received no byte" "$(runtime_rx sq)" 0

# Under its own pid and start time it is the runtime its name gives.
own="$T/dotnet-diagnostic-$sqpid-$sqkey-socket"
mv "$stale" "$own"
start_dsroute d4 "uds:$own,connect" tcp:127.0.0.1:0
check "a socket under its own process's pid and start time is served" \
    tool --timeout 30 "tcp:127.0.0.1:$(port_of d4 remote)" processinfo
is "the answer is the runtime's" "$(field pid "$T/tool.out")" $$

# A name of another form is not checked: nothing to compare.
mv "$own" "$T/app.sock"
start_dsroute d5 "uds:$T/app.sock,connect" tcp:127.0.0.1:0
check "a socket with a name of another form is served" \
    tool --timeout 30 "tcp:127.0.0.1:$(port_of d5 remote)" processinfo

for r in d d2 d3 d4 d5; do
	stop_dsroute $r
done

# Another user, nobody, plants a socket in a shared sticky directory from
# a pid namespace of its own (unshare -Urp), where it writes ns_last_pid
# so that its listener has the pid of a process of ours, TARGET.  Its
# socket is named with its own start time as the key, and with TARGET's.
ns_setup="the planter has pid TARGET in a pid namespace of its own"
ns_own="a pid namespace planter, its start time as key"
ns_target="a pid namespace planter, TARGET's start time as key"
ns_tests="$ns_own: the tool gets no answer
$ns_own: the router says why
$ns_target: the tool gets no answer
$ns_target: the router says why
the planter received no byte
nor a command
d6 exits cleanly on SIGTERM
d7 exits cleanly on SIGTERM"

# ns_none skip|fail WHY: what cannot be tried, and the end.
ns_none() {
	while read -r _t; do
		case $1 in
		skip)	skip "$_t" "$2" ;;
		*)	fail "$_t" "$2" ;;
		esac
	done <<EOF
$ns_tests
EOF
	done_testing
	exit
}

# $as_nobody COMMAND...: as uid 65534, in a user and pid namespace of its
# own where it is root.
as_nobody="setpriv --reuid=65534 --regid=65534 --clear-groups
    unshare -Urp --fork --mount-proc --kill-child"

why=""
if [ "$(id -u)" -ne 0 ]; then
	why="the planter needs root to run as uid 65534"
elif ! command -v setpriv >/dev/null || ! command -v unshare >/dev/null
then
	why="no setpriv or unshare"
elif ! $as_nobody sh -c 'echo 300 >/proc/sys/kernel/ns_last_pid' \
    >"$T/probe.out" 2>&1; then
	why="uid 65534 cannot set ns_last_pid in a pid namespace of its own"
	[ -s "$T/probe.out" ] && why="$why: $(tr '\n' ' ' <"$T/probe.out")"
fi
if [ -n "$why" ]; then
	skip "$ns_setup" "$why"
	ns_none skip "$why"
fi

chmod 0755 "$T"
mkdir -m 1777 "$T/shared"
: >"$T/pl.ev"
chown 65534 "$T/pl.ev"
bg target sleep 600
target=$(pid_of target)
tkey=$(starttime "$target")

# plant.sh TARGET TARGETKEY DIR FAKERT EVENTS, as pid 1 of the namespace.
cat >"$T/plant.sh" <<'EOF'
target=$1 tkey=$2 dir=$3 fakert=$4 ev=$5
echo $((target - 1)) >/proc/sys/kernel/ns_last_pid || exit 1
"$fakert" --listen "$dir/x" --events "$ev" &
p=$!
i=0
until grep -q '^listen ' "$ev" || [ $i -ge 500 ]; do
	sleep 0.02
	i=$((i + 1))
done
read -r st </proc/$p/stat
set -- ${st##*") "}
shift 19
key=$1
chmod 0666 "$dir/x"
ln "$dir/x" "$dir/dotnet-diagnostic-$target-$key-socket"
[ "$key" = "$tkey" ] ||
    ln "$dir/x" "$dir/dotnet-diagnostic-$target-$tkey-socket"
echo "planted $p $key"
wait $p
EOF
# unshare --fork ignores SIGTERM and its child is pid 1 of the namespace:
# the planter is stopped by SIGKILL to unshare, which kills its child.
bg pl sh -c 'trap "kill -KILL \$p" TERM; "$@" & p=$!; wait $p' planter \
    $as_nobody sh "$T/plant.sh" "$target" "$tkey" "$T/shared" "$FAKERT" \
    "$T/pl.ev"
wait_for 10 has_line "$T/pl.out" '^planted '

# As we see it: a process of uid 65534, pid TARGET in its namespace, that
# started at the key it gave its socket.
pkey=$(sed -n "s/^planted $target \\([0-9][0-9]*\\)\$/\\1/p" "$T/pl.out")
host=""
for f in $(grep -El "^NSpid:[[:space:]]+[0-9]+[[:space:]]+$target\$" \
    /proc/[0-9]*/status 2>/dev/null); do
	h=${f#/proc/}
	h=${h%/status}
	if [ -n "$pkey" ] && [ "$(starttime "$h" 2>/dev/null)" = "$pkey" ] &&
	    [ "$(stat -c %u "/proc/$h" 2>/dev/null)" = 65534 ]; then
		host=$h
	fi
done
if [ -n "$host" ]; then
	pass "$ns_setup"
else
	fail "$ns_setup" "target $target; the planter says: $(cat \
	    "$T/pl.out" "$T/pl.err")"
	ns_none fail "no planter"
fi
echo "# target $target started at $tkey; planter $host, $target in its" \
    "namespace, started at $pkey"

start_dsroute d6 \
    "uds:$T/shared/dotnet-diagnostic-$target-$pkey-socket,connect" \
    tcp:127.0.0.1:0
refused_at d6 "$ns_own" namespace
start_dsroute d7 \
    "uds:$T/shared/dotnet-diagnostic-$target-$tkey-socket,connect" \
    tcp:127.0.0.1:0
refused_at d7 "$ns_target" namespace
is "the planter received no byte" "$(runtime_rx pl)" 0
is "nor a command" "$(count_lines "$T/pl.ev" '^command ')" 0

for r in d6 d7; do
	stop_dsroute $r
done
stop pl
done_testing
