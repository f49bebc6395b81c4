#!/bin/sh
# SPDX-License-Identifier: ISC
#
# dir:PATH,connect: runtimes found in a directory by their default socket
# names.  The newest live runtime serves the tools, one that appears later
# is found, a file whose process is gone is passed over, as are junk,
# links, sockets of another user and a socket planted under another
# process's name; with none left the tool hears "file not found".

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

# starttime PID: the KEY of its runtime's socket name (stat field 22).
starttime() {
	sed -n 's/.*) //p' "/proc/$1/stat" | awk '{ print $20 }'
}

# served ROUTER: the pid of the runtime a ProcessInfo through ROUTER reached.
served() {
	tool --timeout 10 "tcp:127.0.0.1:$(port_of "$1" remote)" processinfo &&
	    field pid "$T/tool.out"
}

D=$T/d
mkdir -m 0700 "$D"

refused "a mirror whose other side reaches one runtime is refused, in one line" \
    'a mirror shows the runtimes that dial the router, are found by their sockets' \
    "dir:$D,listen" "uds:$T/one.sock,connect"

# No runtime yet: the tool hears that no runtime's socket is there.
start_dsroute d -v debug "dir:$D" tcp:127.0.0.1:0
check "the endpoint dials (auto role)" has_line "$T/d.err" \
    "local dir:$D: connecting per session"
tool --timeout 10 "tcp:127.0.0.1:$(port_of d remote)" processinfo
like "an empty directory: file not found, as from a missing socket" \
    "$(cat "$T/tool.out")" '^error 0x80070002$'

runtime_in a "$D"
is "a runtime started after the router is found" "$(served d)" "$(pid_of a)"
sleep 0.02	# not a sync: keys are clock ticks, b's must be greater
runtime_in b "$D"
is "a newer runtime does not take the tools from the one serving" \
    "$(served d)" "$(pid_of a)"

# c, the newest, and a die without removing their sockets: a's file is
# tried first and c's next, and both are passed over for b.
sleep 0.02
runtime_in c "$D"
for r in c a; do
	kill -KILL "$(pid_of $r)"
	wait "$(pid_of $r)" 2>/dev/null
done
check "the dead runtimes' socket files stay behind" test -S \
    "$D/dotnet-diagnostic-$(pid_of c)-"*-socket
is "once the runtime serving is gone, the newest live one serves" \
    "$(served d)" "$(pid_of b)"
check "... and a stale file was passed over, said at debug level" \
    has_line "$T/d.err" \
    "dotnet-diagnostic-$(pid_of c)-.*its process is gone\); the next is tried"
check "... and the change said at info level" has_line "$T/d.err" \
    "^info: dir:$D: $D/dotnet-diagnostic-$(pid_of b)-[0-9]+-socket now serves the tools"

# Junk under runtimes' names: passed over, each said once.
ln -s /etc/passwd "$D/dotnet-diagnostic-1-999999999997-socket"
: >"$D/dotnet-diagnostic-1-999999999998-socket"
mkdir "$D/dotnet-diagnostic-1-999999999999-socket"
: >"$D/not-a-runtime"
is "junk with runtimes' names is passed over" "$(served d)" "$(pid_of b)"
is "junk, again" "$(served d)" "$(pid_of b)"
for j in "7 a symbolic link" "8 a regular file" "9 a directory"; do
	is "... said once: ${j#? }" "$(count_lines "$T/d.err" \
	    "^warn: .*-99999999999${j%% *}-socket passed over: ${j#? }")" 1
done
rm -f "$D"/dotnet-diagnostic-1-99999999999[78]-socket
rmdir "$D/dotnet-diagnostic-1-999999999999-socket"
stop_dsroute d

# A fresh router: s streams; then a socket planted under the name of
# another live process, the newest of all, is passed over for s.
sleep 0.02
runtime_in s "$D" root root "--stream-bytes 1000000000"
bg victim sleep 120
wait_for 5 test -e "/proc/$(pid_of victim)/stat"
: >"$T/sq.ev"
sq="$D/dotnet-diagnostic-$(pid_of victim)-$(starttime "$(pid_of victim)")-socket"
bg sq "$FAKERT" --listen "$sq" --events "$T/sq.ev"
wait_for 10 has_line "$T/sq.ev" '^listen '
start_dsroute e -v debug "dir:$D" tcp:127.0.0.1:0
is "a socket planted under another process's name is passed over" \
    "$(served e)" "$(pid_of s)"
check "... with the reason" has_line "$T/e.err" \
    "dotnet-diagnostic-$(pid_of victim)-[0-9]+-socket passed over: the process listening at the socket is not the one its name gives"
is "... and it got no byte" "$(count_lines "$T/sq.ev" '^command ')" 0

# s killed mid-stream: only its session ends, with one line.
bg st "$FAKETOOL" --timeout 30 "tcp:127.0.0.1:$(port_of e remote)" collect \
    --rate 1000000
wait_for 10 has_line "$T/s.ev" '^command 0x02'
kill -KILL "$(pid_of s)"
check "a runtime killed mid-stream: the tool's stream ends" wait_exit st 20
check "... one end line for it" wait_for 10 has_line "$T/e.err" \
    "command=CollectTracing.* runtime=dir:$D.*end="
is "... and the next tool is served by the runtime still there" \
    "$(served e)" "$(pid_of b)"
stop sq
stop victim
check "the router is still up" alive e
stop_dsroute e

# A router that is not root passes over another user's socket.
chmod 0755 "$T"
chmod 0777 "$D"
runtime_in n "$D" nobody nogroup
sleep 0.02	# not a sync: r's key must be greater
runtime_in r "$D" root
bg u setpriv --reuid=nobody --regid=nogroup --clear-groups "$DSROUTE" \
    "dir:$D" tcp:127.0.0.1:0
wait_for 10 has_line "$T/u.err" '^info: ready$'
is "as nobody: root's newer runtime is passed over for nobody's" \
    "$(served u)" "$(pid_of n)"
check "... with one line saying whose it is" has_line "$T/u.err" \
    "dotnet-diagnostic-$(pid_of r)-[0-9]+-socket passed over: the socket is uid 0's"
stop_dsroute u
stop r
stop n
stop b

done_testing
