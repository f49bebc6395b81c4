#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The presets, with a fake adb and a fake iproxy in PATH that record how
# they are called: android sets up `adb reverse tcp:9000 tcp:9001`, keeps
# it there and removes it at exit only if it added it; android-emu and
# ios-sim need no helper; ios reaches the device through iproxy.  Each
# routes the fake runtime on its fixed port to a tool that finds the
# router by its pid.  --host-port and --device-port set the two ports
# apart.  Run in a network namespace of its own: the ports are fixed.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/netns.sh"
. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/dsrouter.sh"

mkdir "$T/bin" "$T/sdk" "$T/sdk/platform-tools" "$T/nobin"
# The fake adb: the rules are lines "SERIAL tcp:DEVICE tcp:HOST" in a file.
cat >"$T/bin/adb" <<'ADB'
#!/bin/sh
echo "$*" >>"${ADB_LOG:?}"
# What it was given open, beyond its standard streams and this script.
[ -n "${ADB_FDS:-}" ] && ls -l /proc/$$/fd/ >>"$ADB_FDS"
[ "$1" = -s ] && shift 2
if [ -n "${ADB_FAIL:-}" ]; then
	echo "error: no devices/emulators found" >&2
	exit 1
fi
case "$1 $2" in
"reverse --list"|"forward --list")
	cat "$ADB_RULES" 2>/dev/null || true ;;
"reverse --remove"|"forward --remove")
	grep -v " $3 " "$ADB_RULES" >"$ADB_RULES.new"
	mv "$ADB_RULES.new" "$ADB_RULES" ;;
reverse\ tcp:*|forward\ tcp:*)
	echo "fakedev $2 $3" >>"$ADB_RULES" ;;
*)
	echo "fake adb: $*" >&2
	exit 1 ;;
esac
ADB
# The fake iproxy: [-u UDID] LOCAL DEVICE, forwarding LOCAL to the port
# of a fake runtime that stands for the device.
cat >"$T/bin/iproxy" <<'IPROXY'
#!/bin/sh
echo "$*" >>"${IPROXY_LOG:?}"
[ "$1" = -u ] && shift 2
echo $$ >"$IPROXY_LOG.pid"
exec socat "TCP-LISTEN:$1,bind=127.0.0.1,reuseaddr,fork" \
    "TCP:127.0.0.1:${DEVICE_PORT:?}"
IPROXY
chmod +x "$T/bin/adb" "$T/bin/iproxy"
cp "$T/bin/adb" "$T/sdk/platform-tools/adb"
ln -s "$(command -v socat)" "$T/nobin/socat"

ADB_LOG=$T/adb.log
ADB_RULES=$T/adb.rules
IPROXY_LOG=$T/iproxy.log
export ADB_LOG ADB_RULES IPROXY_LOG
unset ANDROID_HOME ANDROID_SDK_ROOT ANDROID_SERIAL
PATH_SAVED=$PATH
PATH=$T/bin:$PATH

# through NAME DESC PID: ProcessInfo through a router's -p socket.
through() {
	processinfo "$2" "$(resolve_pid "$T" "$(pid_of "$1")"),connect" "$3"
}

# --- android: adb reverse, owned.
: >"$ADB_LOG"
dsr a1 /dev/null android
check "android: listens on 127.0.0.1:9001" has_line "$T/a1.err" \
    '^info: remote tcp:127\.0\.0\.1:9001: listening'
check "android: adb reverse tcp:9000 tcp:9001 after checking the list" \
    wait_for 15 has_line "$T/a1.err" 'added by dsroute'
is "android: the adb calls" "$(cat "$ADB_LOG" | tr '\n' ';')" \
    "reverse --list;reverse tcp:9000 tcp:9001;"
check "android: --info, the application dials 127.0.0.1:9000" has_line \
    "$T/a1.out" '^DOTNET_DiagnosticPorts=127\.0\.0\.1:9000,nosuspend,connect$'
check "android: --info, the tool uses -p" has_line "$T/a1.out" \
    "^dotnet-trace collect -p $(pid_of a1)\$"
start_fakert rta --connect tcp:127.0.0.1:9001 --pid 5001
through a1 "android: a runtime dialling 9001 is traced by pid" 5001
# The device restarts: the rule is gone, and put back.
rm -f "$ADB_RULES"
check "android: a rule that went away is added again within 5 s" \
    wait_for 15 eval "[ \$(grep -c '^reverse tcp:9000 tcp:9001' \
    '$ADB_LOG') -eq 2 ]"
stop rta
stop_dsroute a1
is "android: at exit, the rule it added is removed" \
    "$(tail -n 1 "$ADB_LOG")" "reverse --remove tcp:9000"
is "android: no rule left" "$(cat "$ADB_RULES")" ""

# --- android: a descriptor the router was given without close-on-exec
# (a file of whoever started it) does not reach adb.
: >"$ADB_LOG"
echo "not for adb" >"$T/inherited"
exec 6<"$T/inherited"
DSR_ENV="ADB_FDS=$T/adb.fds" dsr a0 /dev/null android
exec 6<&-
check "android: adb ran" wait_for 15 has_line "$ADB_LOG" \
    '^reverse tcp:9000 tcp:9001$'
stop_dsroute a0
check "android: adb listed its descriptors" has_line "$T/adb.fds" ' 0 -> '
check "android: adb was not given the router's inherited descriptor" \
    eval "! grep -q '$T/inherited' '$T/adb.fds'"
rm -f "$ADB_RULES"

# --- android: a rule already there is used and left alone.
: >"$ADB_LOG"
echo "fakedev tcp:9000 tcp:9001" >"$ADB_RULES"
dsr a2 /dev/null android -s emulator-5554
check "android: an existing rule is used" wait_for 15 has_line "$T/a2.err" \
    'already there; left in place'
stop_dsroute a2
is "android -s: every adb call names the device, none adds or removes" \
    "$(cat "$ADB_LOG" | sort -u)" "-s emulator-5554 reverse --list"
is "android: the existing rule is left" "$(cat "$ADB_RULES")" \
    "fakedev tcp:9000 tcp:9001"

# --- android: someone else's rule for the device's port 9000.
: >"$ADB_LOG"
echo "fakedev tcp:9000 tcp:5555" >"$ADB_RULES"
dsr a3 /dev/null android
check "android: a rule to another port is reported" wait_for 15 has_line \
    "$T/a3.err" '^warn: adb reverse: tcp:9000 already goes to tcp:5555'
stop_dsroute a3
is "android: ... and left alone" "$(cat "$ADB_RULES")" \
    "fakedev tcp:9000 tcp:5555"
rm -f "$ADB_RULES"

# --- android: adb in the SDK named by ANDROID_HOME comes first.
: >"$ADB_LOG"
DSR_ENV="ANDROID_HOME=$T/sdk ADB_LOG=$T/sdk-adb.log" dsr a4 /dev/null android
check "android: ANDROID_HOME's platform-tools/adb is used" wait_for 15 \
    has_line "$T/sdk-adb.log" '^reverse tcp:9000 tcp:9001$'
stop_dsroute a4
is "android: ... and not the one in PATH" "$(cat "$ADB_LOG")" ""
rm -f "$ADB_RULES"

# --- android: adb fails, or is nowhere; the router still routes.
DSR_ENV=ADB_FAIL=1 dsr a5 /dev/null android
check "android: adb's error output is logged at error level" wait_for 15 \
    has_line "$T/a5.err" '^fail: adb reverse --list: error: no devices'
check "android: the failure is explained" has_line "$T/a5.err" \
    '^fail: adb --list failed .*is a device attached'
start_fakert rta5 --connect tcp:127.0.0.1:9001 --pid 5005
through a5 "android: adb failing, the router still routes" 5005
stop rta5
stop_dsroute a5
DSR_ENV="PATH=$T/nobin" dsr a6 /dev/null android
check "android: no adb: says how to get one" has_line "$T/a6.err" \
    '^fail: adb not found: set ANDROID_HOME'
stop_dsroute a6
DSR_ENV="PATH=$T/nobin" dsr a7 /dev/null android --host-port 9101 \
    --device-port 9100
check "android, no adb, both ports: the reverse to run by hand" has_line \
    "$T/a7.err" 'until then run adb reverse tcp:9100 tcp:9101 yourself$'
check "... and the app still dials the device's 9100" has_line "$T/a7.out" \
    '^DOTNET_DiagnosticPorts=127\.0\.0\.1:9100,nosuspend,connect$'
stop_dsroute a7

# --- android-emu: the emulator dials 10.0.2.2:9000, which is our 9000.
: >"$ADB_LOG"
dsr e1 /dev/null android-emu
check "android-emu: listens on 127.0.0.1:9000" has_line "$T/e1.err" \
    '^info: remote tcp:127\.0\.0\.1:9000: listening'
check "android-emu: --info, the application dials 10.0.2.2:9000" has_line \
    "$T/e1.out" '^DOTNET_DiagnosticPorts=10\.0\.2\.2:9000,suspend,connect$'
start_fakert rte --connect tcp:127.0.0.1:9000 --pid 5101
through e1 "android-emu: a runtime dialling 9000 is traced by pid" 5101
stop rte
stop_dsroute e1
is "android-emu: adb is never called" "$(cat "$ADB_LOG")" ""

# --- ios-sim: the simulator's application listens on 127.0.0.1:9000.
start_fakert rts --listen tcp:127.0.0.1:9000 --pid 5201
dsr s1 /dev/null ios-sim --parentprocess "$$:test"
check "ios-sim: --info, the application listens on 127.0.0.1:9000" \
    has_line "$T/s1.out" \
    '^DOTNET_DiagnosticPorts=127\.0\.0\.1:9000,nosuspend,listen$'
check "ios-sim: --parentprocess leaves the tool line out" eval \
    "! has_line '$T/s1.out' '^dotnet-trace collect'"
through s1 "ios-sim: a runtime listening on 9000 is traced by pid" 5201
stop_dsroute s1
stop rts

# --- ios: through iproxy to the device's port 9000.
start_fakert rti --listen tcp:127.0.0.1:0 --pid 5301
DSR_ENV="DEVICE_PORT=$(fakert_port rti)"
dsr i1 /dev/null ios -s 00008030-ABC
wait_for 10 test -s "$IPROXY_LOG.pid"
iproxy_args=$(cat "$IPROXY_LOG")
like "ios: iproxy forwards a local port to the device's 9000" \
    "$iproxy_args" '^-u 00008030-ABC [0-9]+ 9000$'
through i1 "ios: a runtime on the device is traced by pid" 5301
iproxy_pid=$(cat "$IPROXY_LOG.pid")
stop_dsroute i1
check "ios: iproxy is stopped at exit" eval \
    "! kill -0 $iproxy_pid 2>/dev/null"
: >"$IPROXY_LOG"
rm -f "$IPROXY_LOG.pid"
dsr i2 /dev/null ios
DSR_ENV=
wait_for 10 test -s "$IPROXY_LOG.pid"
kill "$(cat "$IPROXY_LOG.pid")"
wait_for 10 eval "! kill -0 $(pid_of i2)"
if wait "$(pid_of i2)"; then rc=0; else rc=$?; fi
is "ios: iproxy ending stops the router with status 1" "$rc" 1
check "ios: ... saying why" has_line "$T/i2.err" '^fail: iproxy ended'
stop rti
DSR_ENV="PATH=$T/nobin" refused "ios without iproxy: a clear error" \
    'iproxy not found in PATH.*libusbmuxd-tools' ios

# --- --forward-port Android on a TCP client: adb forward.
: >"$ADB_LOG"
start_fakert rtf --listen tcp:127.0.0.1:7001 --pid 5401
dsr f1 /dev/null server-client -ipcs "$T/f1.sock" -tcpc 127.0.0.1:7001 \
    --forward-port android
check "-fp Android, TCP client: adb forward tcp:7001 tcp:7000" wait_for 15 \
    has_line "$ADB_LOG" '^forward tcp:7001 tcp:7000$'
processinfo "-fp Android, TCP client: routes" "$T/f1.sock,connect" 5401
stop_dsroute f1
is "-fp Android, TCP client: the rule is removed at exit" \
    "$(tail -n 1 "$ADB_LOG")" "forward --remove tcp:7001"
stop rtf

# --- --forward-port Android on a TCP server: adb reverse to port - 1.
: >"$ADB_LOG"
dsr f2 /dev/null server-server -ipcs "$T/f2.sock" -tcps 127.0.0.1:9050 \
    -fp:Android -s dev1 -i
check "-fp Android, TCP server: adb reverse tcp:9049 tcp:9050" wait_for 15 \
    has_line "$ADB_LOG" '^-s dev1 reverse tcp:9049 tcp:9050$'
check "-fp Android, TCP server: --info, the device's port 9049" has_line \
    "$T/f2.out" '^DOTNET_DiagnosticPorts=127\.0\.0\.1:9049,nosuspend,connect$'
stop_dsroute f2
is "-fp Android, TCP server: the rule is removed at exit" \
    "$(tail -n 1 "$ADB_LOG")" "-s dev1 reverse --remove tcp:9049"

# --- --forward-port iOS on a TCP client: iproxy to that device port.
: >"$IPROXY_LOG"
rm -f "$IPROXY_LOG.pid"
start_fakert rtf3 --listen tcp:127.0.0.1:0 --pid 5501
DSR_ENV="DEVICE_PORT=$(fakert_port rtf3)"
dsr f3 /dev/null server-client -ipcs "$T/f3.sock" -tcpc 127.0.0.1:7100 \
    --forward-port=iOS
DSR_ENV=
wait_for 10 test -s "$IPROXY_LOG.pid"
like "-fp iOS, TCP client: iproxy to the device's port 7100" \
    "$(cat "$IPROXY_LOG")" '^[0-9]+ 7100$'
processinfo "-fp iOS, TCP client: routes" "$T/f3.sock,connect" 5501
stop_dsroute f3
stop rtf3

# --- the two ports apart (dotnet/maui-labs#386, #422): the host's port
# moves off 9001, the app's on the device stays or moves too.
: >"$ADB_LOG"
dsr p1 /dev/null android --host-port 9101 --device-port 9100
check "android --host-port 9101: listens on 127.0.0.1:9101" has_line \
    "$T/p1.err" '^info: remote tcp:127\.0\.0\.1:9101: listening'
check "android --device-port 9100: adb reverse tcp:9100 tcp:9101" \
    wait_for 15 has_line "$ADB_LOG" '^reverse tcp:9100 tcp:9101$'
check "android --device-port 9100: --info, the app dials 127.0.0.1:9100" \
    has_line "$T/p1.out" \
    '^DOTNET_DiagnosticPorts=127\.0\.0\.1:9100,nosuspend,connect$'
check "... and no line of the log names the host's 9101 for the app" eval \
    "! grep -q 'DiagnosticPorts=127\\.0\\.0\\.1:9101\\|DiagnosticPort=9101' '$T/p1.err' '$T/p1.out'"
start_fakert rtp1 --connect tcp:127.0.0.1:9101 --pid 5601
through p1 "android --host-port 9101: a runtime dialling it is traced" 5601
stop rtp1
stop_dsroute p1
is "android --device-port: the rule removed at exit is the device's" \
    "$(tail -n 1 "$ADB_LOG")" "reverse --remove tcp:9100"
: >"$ADB_LOG"
dsr p2 /dev/null android --host-port:9101
check "android --host-port alone: the app's port stays 9000" wait_for 15 \
    has_line "$ADB_LOG" '^reverse tcp:9000 tcp:9101$'
stop_dsroute p2
: >"$ADB_LOG"
dsr p3 /dev/null android --device-port=9100
check "android --device-port alone: the host's port stays 9001" \
    wait_for 15 has_line "$ADB_LOG" '^reverse tcp:9100 tcp:9001$'
stop_dsroute p3
rm -f "$ADB_RULES"
: >"$ADB_LOG"
dsr p4 /dev/null server-server -ipcs "$T/p4.sock" -tcps 127.0.0.1:9201 \
    -fp Android --device-port 9000
check "-fp Android --device-port: adb reverse tcp:9000 tcp:9201" wait_for 15 \
    has_line "$ADB_LOG" '^reverse tcp:9000 tcp:9201$'
stop_dsroute p4
rm -f "$ADB_RULES"
: >"$ADB_LOG"
start_fakert rtp5 --listen tcp:127.0.0.1:7301 --pid 5605
dsr p5 /dev/null server-client -ipcs "$T/p5.sock" -tcpc 127.0.0.1:7301 \
    -fp Android --device-port 9000
check "-fp Android on a TCP client --device-port: adb forward tcp:7301 tcp:9000" \
    wait_for 15 has_line "$ADB_LOG" '^forward tcp:7301 tcp:9000$'
processinfo "-fp Android --device-port, TCP client: routes" \
    "$T/p5.sock,connect" 5605
stop_dsroute p5
stop rtp5
: >"$IPROXY_LOG"
rm -f "$IPROXY_LOG.pid"
start_fakert rtp6 --listen tcp:127.0.0.1:0 --pid 5606
DSR_ENV="DEVICE_PORT=$(fakert_port rtp6)"
dsr p6 /dev/null ios --device-port 9100
DSR_ENV=
wait_for 10 test -s "$IPROXY_LOG.pid"
like "ios --device-port 9100: iproxy to the device's 9100" \
    "$(cat "$IPROXY_LOG")" '^[0-9]+ 9100$'
through p6 "ios --device-port: a runtime on the device is traced by pid" 5606
stop_dsroute p6
stop rtp6
refused "--device-port without a device" \
    '^crit: --device-port is the port on the device that adb or iproxy forwards: give it with --forward-port' \
    server-server -tcps 127.0.0.1:9300 --device-port 9000
refused "android-emu takes no --device-port" \
    'android-emu does not take --device-port' android-emu --device-port 9000
refused "ios takes no --host-port" 'ios does not take --host-port' \
    ios --host-port 9101
refused "a port that is none" 'give a port from 1 to 65535' \
    android --host-port 65536
refused "a port that is none" 'give a port from 1 to 65535' \
    android --device-port 0

PATH=$PATH_SAVED
done_testing
