#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The image and the recipes of deploy/ in real containers: Debian's
# docker.io, a private dockerd (contrib/docker/engine.sh) with no bridge
# and no registry, the real .NET runtime (dsapp published self-contained:
# the app's container has no .NET, no shell, its own /tmp and pid
# namespace) and the real tools on the host, each judged on what it made.
#
#  - the image: ./dev.sh image's, or DSROUTE_IMAGE (the docker save file
#    ./dev.sh test passes); FROM scratch, the binary alone, no shell, uid
#    65532 by default;
#  - sidecar.yaml and mtls.yaml as a pod: an emptyDir (tmpfs, 0777 with
#    the fsGroup), the init container's own command, run a second time on
#    the same volume as a restarted pod runs it, dsroute with the
#    manifest's arguments and securityContext, the app in the pod's
#    network namespace (a pause container's, as --network container:NAME)
#    sharing only the volume; the startupProbe's /healthz; the
#    workstation router and the tools reach the sidecar's port as kubectl
#    port-forward does, by entering the pod's network namespace;
#  - node-agent.yaml as written: the root init container with CHOWN and
#    FOWNER, the agent with -f and its ConfigMap, its readiness before and
#    after the app dials its socket in the node's directory;
#  - a node agent with proc: (README.md, recipe 1): --pid host, root
#    with CAP_SYS_PTRACE and CAP_DAC_OVERRIDE only, finding two apps that
#    are pid 1 of containers sharing nothing with it; dsroute ps lists
#    them and the tools trace them by their stand-ins in the host's
#    workstation mirror;
#  - wrapper.yaml as written, dsroute the app's entrypoint (dsroute ...
#    -- /app/dsapp for its `dotnet app.dll`): one container, its TLS
#    files and an emptyDir at /tmp, traced over mutual TLS from the
#    workstation; skipped, saying so, where this dsroute has no --.
#
# Traffic stays on this machine: loopback, in the host's network
# namespace or a pod's.  proc: sees every process of the host: this runs
# alone (make check-host).  Without root, dockerd, .NET 10 or the tools
# it is skipped, saying why.  It stops its containers and the dockerd it
# started, and removes its volumes.

. "$top_srcdir/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/interop.sh"
. "$top_srcdir/tests/lib/tls.sh"
. "$top_srcdir/tests/lib/npm.sh"

[ "$(id -u)" -eq 0 ] || skip_all "dockerd needs root"
command -v dockerd >/dev/null || [ -x /usr/sbin/dockerd ] ||
    skip_all "no dockerd (./dev.sh test installs docker.io)"
[ -x /bin/busybox ] ||
    skip_all "no /bin/busybox (./dev.sh test installs busybox-static)"
for c in socat nsenter curl flock; do
	command -v $c >/dev/null || skip_all "no $c(1)"
done
npm_packages js-yaml@4.1.0
interop_setup
dotnet_tool dotnet-trace || skip_all "dotnet-trace: $why"
path_trace=$tool_path
tools_or_why counters gcdump

POD=$top_srcdir/tests/lib/pod-run.cjs
version=$(sed -n 's/^AC_INIT(\[dsroute\], \[\([^]]*\)\].*/\1/p' \
    "$top_srcdir/configure.ac")
IMAGE=dsroute:$version
PROVIDERS=Microsoft-Windows-DotNETRuntime:0x1:4,Dsroute-Test:0xffffffff:5

# The image: the file ./dev.sh test saved, or built here as ./dev.sh image
# builds it, into this build tree.
if [ -z "${DSROUTE_IMAGE:-}" ]; then
	echo "# building $IMAGE: DSROUTE_BUILD_DIR=$top_builddir dev.sh image" >&2
	if ! DSROUTE_BUILD_DIR=$top_builddir sh "$top_srcdir/dev.sh" image \
	    >"$T/image.out" 2>&1; then
		if grep -q '^dev.sh: no container engine: ' "$T/image.out"; then
			skip_all "$(sed -n 's/^dev.sh: //p' "$T/image.out" |
			    head -n 1)"
		fi
		tail -n 30 "$T/image.out" | sed 's/^/# /'
		echo "Bail out! ./dev.sh image failed"
		exit 1
	fi
	DSROUTE_IMAGE=$(tail -n 1 "$T/image.out")
fi
[ -f "$DSROUTE_IMAGE" ] || skip_all "DSROUTE_IMAGE=$DSROUTE_IMAGE is no file"

# dsapp and Orders.Api, self-contained for linux-x64, with the C and C++
# libraries they load from this host: a root file system with no shell,
# cached by the SDK and the app's sources.
sdk=$(dotnet --version)
app_hash=$( (cd "$top_srcdir/tests/interop" && find build.sh app -type f \
    ! -path '*/bin/*' ! -path '*/obj/*' | LC_ALL=C sort | xargs sha256sum) |
    sha256sum | cut -c1-12)
SC=${XDG_CACHE_HOME:-$HOME/.cache}/dsroute/containers/dsapp-linux-x64-sdk$sdk-$app_hash
mkdir -p "${SC%/*}"
if ! (
	flock 9
	[ -f "$SC/stamp" ] && exit 0
	echo "# publishing dsapp self-contained into $SC" >&2
	rm -rf "$SC"
	mkdir -p "$SC"
	sh "$top_srcdir/tests/interop/build.sh" --self-contained "$SC/out" \
	    >"$SC/build.log" 2>&1 || exit 1
	r=$SC/root
	mkdir -p "$r/tmp" "$r/run/diag"
	chmod 1777 "$r/tmp"
	chown 1000:1000 "$r/run/diag"
	chmod 0700 "$r/run/diag"
	mv "$SC/out/app" "$r/app"
	mv "$SC/out/orders" "$r/orders"
	for f in "$r/app/dsapp" "$r/app"/*.so; do
		ldd "$f" 2>/dev/null
	done | awk '$2 == "=>" && $3 ~ /^\// { print $3 }
	    $1 ~ /^\/.*ld-linux/ { print $1 }' | sort -u |
	while read -r lib; do
		mkdir -p "$r${lib%/*}"
		cp -L "$lib" "$r$lib"
	done
	[ -x "$r/app/dsapp" ] && [ -f "$r/lib64/ld-linux-x86-64.so.2" ] ||
	    exit 1
	rm -rf "$SC/out"
	: >"$SC/stamp"
) 9>"${SC%/*}/lock"; then
	tail -n 20 "$SC/build.log" | sed 's/^/# /'
	echo "Bail out! cannot publish dsapp self-contained; see $SC/build.log"
	exit 1
fi

# The engine: a dockerd of this test's own, state in $T/e.
. "$top_srcdir/contrib/docker/engine.sh"
engine_up "$T/e" private || skip_all "no container engine: $why"
RUN=ctr-${T##*.}
engine_pid=$ENGINE_PID

# Whatever is left at the end: this test's containers and volumes, then
# the engine.
ctr_cleanup() {
	_ids=$($DOCKER ps -aq --filter "label=dsroute.test=$RUN" 2>/dev/null)
	[ -z "$_ids" ] || $DOCKER rm -f $_ids >/dev/null 2>&1
	_vs=$($DOCKER volume ls -q --filter "label=dsroute.test=$RUN" 2>/dev/null)
	[ -z "$_vs" ] || $DOCKER volume rm $_vs >/dev/null 2>&1
	engine_down
}
trap 'ctr_cleanup; _cleanup' EXIT

# ctr NAME DOCKER-RUN-ARGS...: a container, attached, as a background job
# of this test: its output in $T/NAME.out and $T/NAME.err, the status of
# `docker run` the container's.
ctr() {
	_name=$1
	shift
	bg "$_name" $DOCKER run --rm --name "$RUN-$_name" \
	    --label "dsroute.test=$RUN" "$@"
}

# ctr_pid NAME: the host's pid of the container's pid 1.
ctr_pid() {
	$DOCKER inspect -f '{{.State.Pid}}' "$RUN-$1" 2>/dev/null
}

# ctr_up NAME: the container runs.
ctr_up() {
	_p=$(ctr_pid "$1") && [ -n "$_p" ] && [ "$_p" -gt 0 ]
}

# ctr_ready NAME: dsroute in the container said ready.
ctr_ready() {
	wait_for 30 has_line "$T/$1.err" '^info: ready$' ||
	    fail "$1 started" "$(cat "$T/$1.err")"
}

# ctr_stop NAME: docker stop (SIGTERM to pid 1); the status is the
# container's.
ctr_stop() {
	$DOCKER stop -t 15 "$RUN-$1" >/dev/null 2>&1
	wait "$(pid_of "$1")"
}

# ctr_stopped DESC NAME: docker stop, and the container exits 0.
ctr_stopped() {
	if ctr_stop "$2"; then
		pass "$1"
	else
		fail "$1" "status $?: $(tail -n 5 "$T/$2.err")"
	fi
}

# pod_ctr NAME IMAGE NETWORK FILE WORKLOAD CONTAINER VOLUME=SOURCE...: the
# container of the manifest FILE as its pod spec says (pod-run.cjs), with
# IMAGE for the one it names, in the network namespace NETWORK.  With
# POD_APP set, the manifest's `dotnet app.dll`, which stands for the
# user's app, is POD_APP.
pod_ctr() {
	_pn=$1
	_pi=$2
	_pnet=$3
	shift 3
	if ! node "$POD" "$NPM_DIR" run "$@" >"$T/$_pn.args" \
	    2>"$T/$_pn.podrun"; then
		fail "$_pn: the pod spec carries over" "$(cat "$T/$_pn.podrun")"
		return 1
	fi
	if [ -n "${POD_APP:-}" ]; then
		sed -i "/^app\\.dll\$/d; s|^dotnet\$|$POD_APP|" "$T/$_pn.args"
	fi
	set --
	_seen=""
	while IFS= read -r _a; do
		if [ "$_a" = -- ] && [ -z "$_seen" ]; then
			_seen=1
			set -- "$@" "$_pi"
		else
			set -- "$@" "$_a"
		fi
	done <"$T/$_pn.args"
	ctr "$_pn" --network "$_pnet" "$@"
}

# init_ctr DESC NAME IMAGE FILE WORKLOAD CONTAINER VOLUME=SOURCE...: an init
# container of the manifest, to its end; it must exit 0.
init_ctr() {
	_id=$1
	_in=$2
	shift 2
	pod_ctr "$_in" "$@" || return
	if wait "$(pid_of "$_in")"; then
		pass "$_id"
	else
		fail "$_id" "status $?: $(cat "$T/$_in.out" "$T/$_in.err")"
	fi
}

# emptydir NAME: a Kubernetes emptyDir {medium: Memory, sizeLimit: 16Mi}
# of a pod with fsGroup 1000: tmpfs, mode 0777 and setgid, group 1000.
emptydir() {
	$DOCKER volume create --label "dsroute.test=$RUN" --driver local \
	    --opt type=tmpfs --opt device=tmpfs \
	    --opt o=size=16m,mode=2777,gid=1000 "$RUN-$1" >/dev/null
}

# vstat VOLUME PATH: mode, uid and gid of PATH in the volume (at /diag),
# as busybox's stat sees them in a container.
vstat() {
	$DOCKER run --rm --network none --label "dsroute.test=$RUN" \
	    -v "$RUN-$1:/diag" "$BB" stat -c '%a %u %g' "$2" 2>&1
}

# ws_tool NAME TOOL ARGS...: run_tool with TMPDIR=$W, the workstation's
# mirror, where the tools look for processes.
ws_tool() {
	_name=$1
	_tool=$2
	shift 2
	env TMPDIR="$W" DOTNET_EnableDiagnostics=0 timeout 120 \
	    "$(eval echo \$path_$_tool)" "$@" </dev/null >"$T/$_name.out" 2>&1
}

# host_pidns CONTAINER: the container is in the host's pid namespace.
host_pidns() {
	[ "$(readlink "/proc/$(ctr_pid "$1")/ns/pid")" = \
	    "$(readlink "/proc/$$/ns/pid")" ]
}

# port_forward NAME CONTAINER PORT: what kubectl port-forward does for a
# pod: a loopback port of the host whose connections are carried to PORT
# on the loopback of CONTAINER's network namespace, entered with nsenter;
# pf_port NAME is the host's port.
port_forward() {
	printf '#!/bin/sh\nexec nsenter -t %s -n socat STDIO TCP:127.0.0.1:%s\n' \
	    "$(ctr_pid "$2")" "$3" >"$T/$1.sh"
	chmod 0755 "$T/$1.sh"
	bg "$1" socat -d -d TCP-LISTEN:0,bind=127.0.0.1,reuseaddr,fork \
	    "EXEC:$T/$1.sh"
	wait_for 10 has_line "$T/$1.err" ' listening on ' ||
	    fail "$1: the port-forward listens" "$(cat "$T/$1.err")"
}

pf_port() {
	sed -n 's/.* listening on AF=2 127\.0\.0\.1:\([0-9]*\).*/\1/p' \
	    "$T/$1.err" | head -n 1
}

# in_net CONTAINER COMMAND...: run COMMAND in CONTAINER's network
# namespace, as the kubelet's probes reach a pod.
in_net() {
	_c=$1
	shift
	nsenter -t "$(ctr_pid "$_c")" -n "$@"
}

# http_status CONTAINER PATH: the status of GET http://127.0.0.1:9090PATH
# in the container's network namespace.
http_status() {
	in_net "$1" curl -s -o /dev/null -w '%{http_code}' \
	    "http://127.0.0.1:9090$2"
}

# ws_router NAME REMOTE: the workstation's router on the host, its socket
# $T/NAME.sock, dialling REMOTE.
ws_router() {
	start_dsroute "$1" "uds:$T/$1.sock" "$2"
}

# other_cn_refused MANIFEST PORT_FORWARD: a workstation router with CN
# client1's certificate reaches the pod over mutual TLS, and the pod lets
# no ProcessInfo of it through.
other_cn_refused() {
	ws_router wx "tls:127.0.0.1:$(pf_port "$2"),connect,peer=router,ca=$C/ca.pem,$(cert client1)"
	if client wxc --timeout 30 --port "$T/wx.sock,connect" processinfo; then
		fail "$1: another CN is refused" "$(cat "$T/wxc.out")"
	else
		pass "$1: another CN is refused"
	fi
	stop_dsroute wx
}

# same_ns KIND A B: containers A and B share the namespace KIND.
same_ns() {
	[ "$(readlink "/proc/$(ctr_pid "$2")/ns/$1")" = \
	    "$(readlink "/proc/$(ctr_pid "$3")/ns/$1")" ]
}

# ---- The image.

if $DOCKER load -i "$DSROUTE_IMAGE" >"$T/load.out" 2>&1; then
	pass "docker load $DSROUTE_IMAGE"
else
	fail "docker load $DSROUTE_IMAGE" "$(cat "$T/load.out")"
fi
is "docker run --rm $IMAGE --version" \
    "$($DOCKER run --rm --network none "$IMAGE" --version 2>&1)" \
    "dsroute $version"
is "the image's user, entrypoint and command" \
    "$($DOCKER image inspect -f '{{.Config.User}} {{json .Config.Entrypoint}} {{json .Config.Cmd}}' "$IMAGE")" \
    '65532:65532 ["/usr/bin/dsroute"] ["--help"]'
layers=$(tar -xOf "$DSROUTE_IMAGE" manifest.json |
    sed -n 's/.*"Layers":\[\([^]]*\)\].*/\1/p' | tr -d '"' | tr ',' ' ')
is "one layer: FROM scratch" "$(echo $layers | wc -w)" 1
is "... holding the binary alone" \
    "$(tar -xOf "$DSROUTE_IMAGE" $layers | tar -tf - | sort | tr '\n' ' ')" \
    "usr/ usr/bin/ usr/bin/dsroute "
if $DOCKER run --rm --network none --entrypoint /bin/sh "$IMAGE" -c true \
    >"$T/sh.out" 2>&1; then
	fail "the image has no shell" "/bin/sh ran"
else
	like "the image has no shell" "$(cat "$T/sh.out")" \
	    'no such file or directory'
fi
ctr plain --network none "$IMAGE" -v debug proc: tcp:127.0.0.1:0
ctr_ready plain
is "run as it is, dsroute is uid and gid 65532" \
    "$(awk '/^[UG]id:/ { print $2 }' "/proc/$(ctr_pid plain)/status" |
    tr '\n' ' ')" "65532 65532 "
ctr_stopped "... and exits 0 on docker stop" plain

# The other images: busybox for the init containers (the manifests name
# busybox:1.36; this is Debian's) and the pause container; the apps.
BB=dsroute-test/busybox
mkdir -p "$T/bb/bin"
cp /bin/busybox "$T/bb/bin/busybox"
for a in sh mkdir chown chmod sleep stat ls cat id true; do
	ln -s busybox "$T/bb/bin/$a"
done
check "a busybox image from Debian's busybox-static" engine_import "$BB" \
    "$T/bb"
APP=dsroute-test/dsapp
check "an image of dsapp and Orders.Api, self-contained, with no shell" \
    engine_import "$APP" "$SC/root" 'ENTRYPOINT ["/app/dsapp"]' \
    'USER 1000:1000'

# ---- A pod: the init container, the sidecar, the app.

# pod_up P FILE WORKLOAD [VOLUME=SOURCE...]: the pod of the workload in
# FILE, as P-*: the pause container, which holds the pod's network
# namespace and its emptyDir diag (a tmpfs volume lives while a container
# has it mounted), diag-dir run twice on the volume, dsroute once its
# startupProbe passes, then the app, which dials the sidecar.
pod_up() {
	_up=$1
	_upf=$2
	_upw=$3
	shift 3
	_upm=${_upf##*/}
	emptydir "$_up-diag"
	ctr "$_up-pause" --network none -v "$RUN-$_up-diag:/diag" "$BB" \
	    sleep 3600
	wait_for 10 ctr_up "$_up-pause"
	is "$_upm: the emptyDir is 0777 (and setgid, group fsGroup)" \
	    "$(vstat "$_up-diag" /diag)" "2777 0 1000"
	init_ctr "$_upm: diag-dir, mkdir as written, runs" "$_up-dir" "$BB" \
	    none "$_upf" "$_upw" diag-dir "diag=$RUN-$_up-diag"
	like "$_upm: ... and makes a private directory in the emptyDir" \
	    "$(vstat "$_up-diag" /diag/run)" "^2?700 1000 1000\$"
	init_ctr "$_upm: diag-dir runs again on the same volume (a restarted pod)" \
	    "$_up-dir2" "$BB" none "$_upf" "$_upw" diag-dir \
	    "diag=$RUN-$_up-diag"
	pod_ctr "$_up-dsr" "$IMAGE" "container:$RUN-$_up-pause" "$_upf" \
	    "$_upw" dsroute "diag=$RUN-$_up-diag" "$@"
	ctr_ready "$_up-dsr"
	check "$_upm: the startupProbe: /healthz answers 200 in the pod" \
	    wait_for 10 eval '[ "$(http_status $_up-pause /healthz)" = 200 ]'
	pod_ctr "$_up-app" "$APP" "container:$RUN-$_up-pause" "$_upf" "$_upw" \
	    app "diag=$RUN-$_up-diag"
	check "$_upm: the app starts, pid 1 of its container" wait_for 60 \
	    has_line "$T/$_up-app.out" '^dsapp pid=1 ready$'
	check "$_upm: ... and dials the sidecar's socket" wait_for 30 has_line \
	    "$T/$_up-dsr.err" '^info: runtime pid 1 \(cookie [0-9a-f]+\) connected on '
}

# pod_down P FILE: the app, then the sidecar, each exits 0; the pause
# container and the volume go.
pod_down() {
	_m=${2##*/}
	ctr_stopped "$_m: the app exits 0 on docker stop" "$1-app"
	check "... saying so" has_line "$T/$1-app.out" '^dsapp pid=1 exiting'
	ctr_stopped "$_m: the sidecar exits 0 on docker stop" "$1-dsr"
	$DOCKER rm -f "$RUN-$1-pause" >/dev/null 2>&1
	wait "$(pid_of "$1-pause")" 2>/dev/null
	$DOCKER volume rm "$RUN-$1-diag" >/dev/null
}

# ---- deploy/sidecar.yaml, traced from the workstation.

S=$top_srcdir/deploy/sidecar.yaml
pod_up s "$S" Deployment/app
check "the two containers share the pod's network namespace" \
    same_ns net s-app s-dsr
check "... and not their pid namespaces" eval '! same_ns pid s-app s-dsr'
check "... nor their mounts: the app's default socket is in its own /tmp" \
    eval 'ls /proc/$(ctr_pid s-app)/root/tmp/dotnet-diagnostic-1-*-socket'
check "... and the sidecar has no /tmp at all" \
    test ! -e "/proc/$(ctr_pid s-dsr)/root/tmp"
if $DOCKER exec "$RUN-s-app" /bin/sh -c true >"$T/exec.out" 2>&1; then
	fail "the app's container has no shell" "/bin/sh ran"
else
	pass "the app's container has no shell"
fi

port_forward s-pf s-pause 9000
ws_router ws "tcp:127.0.0.1:$(pf_port s-pf),connect,peer=router"
PORT=$T/ws.sock,connect
check "ProcessInfo from the workstation reaches the app" \
    client pi --timeout 60 --port "$PORT" processinfo
like "... pid 1 of its container" "$(cat "$T/pi.out")" "^pid=1 "
check "dotnet-trace collect through the sidecar" run_tool st trace \
    collect --providers "$PROVIDERS" --diagnostic-port "$PORT" \
    --duration 00:00:00:03 -o "$T/st.nettrace"
judge_trace "sidecar: dotnet-trace" "$T/st.nettrace"
if have_tool counters; then
	check "dotnet-counters collect through the sidecar" run_tool sc \
	    counters collect --diagnostic-port "$PORT" \
	    --counters System.Runtime,Dsroute.Test --format csv \
	    --duration 00:00:00:03 -o "$T/sc.csv"
	judge_counters "sidecar: dotnet-counters" "$T/sc.csv"
fi
if have_tool gcdump; then
	check "dotnet-gcdump collect through the sidecar" run_tool sg gcdump \
	    collect --diagnostic-port "$PORT" -o "$T/sg.gcdump"
	judge_gcdump "sidecar: dotnet-gcdump" "$T/sg.gcdump" dsapp.dll
fi
check "the sidecar logged the trace's session" wait_for 10 logged s-dsr \
    'command=CollectTracing[0-9]* .*runtime_pid=1 '
stop_dsroute ws
stop s-pf
pod_down s "$S"

# ---- deploy/mtls.yaml: the same over mutual TLS, its Secret as files.

mkcert ca ca
mkcert server localhost dns:localhost ip:127.0.0.1
mkcert client oncall
mkcert client client1
mkdir "$T/secret"
cp "$C/localhost.pem" "$T/secret/tls.crt"
cp "$C/localhost.key" "$T/secret/tls.key"
cp "$C/ca.pem" "$T/secret/ca.crt"
chown 0:1000 "$T/secret"/*
chmod 0440 "$T/secret"/*
M=$top_srcdir/deploy/mtls.yaml
pod_up m "$M" Deployment/app-mtls "tls=$T/secret"
port_forward m-pf m-pause 9443
ws_router wm "tls:127.0.0.1:$(pf_port m-pf),connect,peer=router,ca=$C/ca.pem,$(cert oncall)"
# The file's comment: the tool's default command line, ResumeRuntime
# included, which the observe role answers itself.
check "mtls.yaml: its comment gives dotnet-trace's default command line" \
    grep -q '^#	dotnet-trace collect --diagnostic-port /tmp/app.sock,connect$' \
    "$M"
check "mtls.yaml: dotnet-trace collect as its comment says" run_tool mt \
    trace collect --providers "$PROVIDERS" --diagnostic-port "$T/wm.sock,connect" \
    --duration 00:00:00:03 -o "$T/mt.nettrace"
judge_trace "mtls.yaml: dotnet-trace" "$T/mt.nettrace"
check "... the sidecar let CN oncall in with the observe role" \
    wait_for 10 logged m-dsr \
    'command=CollectTracing[0-9]* tool=tls:[^ ]*\(cn:oncall,.* rule="role observe"'
# That answer is logged at debug (it is no alarm), and the manifest sets
# no -v: its count in /metrics is what shows it at the default level.
like "... and answered the tool's ResumeRuntime itself, sending it on to no runtime" \
    "$(in_net m-pause curl -s http://127.0.0.1:9090/metrics 2>&1 |
    grep '^dsroute_acl_decisions_total{set="process",decision="deny"}')" \
    ' [1-9][0-9]*$'
check "... which the workstation's router passed on as answered OK" eval \
    '! logged wm "answered ResumeRuntime with error"'
stop_dsroute wm
other_cn_refused mtls.yaml m-pf
stop m-pf
pod_down m "$M"

# ---- deploy/node-agent.yaml as written: a node directory, the agent with
# its ConfigMap, an app dialling its socket there.

N=$top_srcdir/deploy/node-agent.yaml
mkdir -m 0755 "$T/node-run" "$T/node-conf"
node "$POD" "$NPM_DIR" configmap "$N" dsroute-node "$T/node-conf"
init_ctr "node-agent.yaml: apps-dir (root, CHOWN and FOWNER only) runs" \
    n-dir "$BB" none "$N" DaemonSet/dsroute-node apps-dir \
    "node-run=$T/node-run"
is "... and makes the node's directory for the apps, 0700, uid 1000" \
    "$(stat -c '%a %u %g' "$T/node-run/apps" 2>&1)" "700 1000 1000"
init_ctr "node-agent.yaml: apps-dir runs again on the node's directory" \
    n-dir2 "$BB" none "$N" DaemonSet/dsroute-node apps-dir \
    "node-run=$T/node-run"
ctr n-pause --network none "$BB" sleep 3600
wait_for 10 ctr_up n-pause
pod_ctr n-dsr "$IMAGE" "container:$RUN-n-pause" "$N" DaemonSet/dsroute-node \
    dsroute "node-run=$T/node-run" "config=$T/node-conf" "tls=$T/secret"
ctr_ready n-dsr
check "node-agent.yaml: the agent is hostPID" host_pidns n-dsr
is "... not ready (/readyz) before its app dials" \
    "$(http_status n-pause /readyz)" 503
pod_ctr n-app "$APP" none "$N" Deployment/node-app app \
    "node-apps=$T/node-run/apps"
check "node-agent.yaml: the app starts" wait_for 60 \
    has_line "$T/n-app.out" '^dsapp pid=1 ready$'
check "... and the agent is ready once it dialled" \
    wait_for 30 eval '[ "$(http_status n-pause /readyz)" = 200 ]'
port_forward n-pf n-pause 9443
ws_router wn "tls:127.0.0.1:$(pf_port n-pf),connect,peer=router,ca=$C/ca.pem,$(cert oncall)"
check "node-agent.yaml: dotnet-trace collect through the agent" run_tool nt \
    trace collect --providers "$PROVIDERS" --diagnostic-port "$T/wn.sock,connect" \
    --duration 00:00:00:03 -o "$T/nt.nettrace"
judge_trace "node-agent.yaml: dotnet-trace" "$T/nt.nettrace"
stop_dsroute wn
stop n-pf
ctr_stopped "node-agent.yaml: the app exits 0 on docker stop" n-app
ctr_stopped "node-agent.yaml: the agent exits 0 on docker stop" n-dsr
$DOCKER rm -f "$RUN-n-pause" >/dev/null 2>&1
wait "$(pid_of n-pause)" 2>/dev/null

# ---- A node agent with proc:, and the workstation's mirror.

ctr pa --network none "$APP"
ctr pb --network none --entrypoint /orders/Orders.Api "$APP"
check "two apps, each pid 1 of a container of its own" wait_for 60 eval \
    "has_line '$T/pa.out' '^dsapp pid=1 ready\$' &&
    has_line '$T/pb.out' '^dsapp pid=1 ready\$'"
ctr agent --network host --pid host --user 0:0 --cap-drop ALL \
    --cap-add SYS_PTRACE --cap-add DAC_OVERRIDE --read-only \
    --security-opt no-new-privileges -v "$C:/tls:ro" "$IMAGE" -v debug proc: \
    "tls:127.0.0.1:0,cert=/tls/localhost.pem,key=/tls/localhost.key,ca=/tls/ca.pem,allow-cn=client1,operate=cn:client1"
ctr_ready agent
check "the agent is in the host's pid namespace (--pid host)" host_pidns agent
check "... each app in one of its own" eval \
    '! host_pidns pa && ! host_pidns pb && ! same_ns pid pa pb'
check "... and none shares its mounts, its /tmp, with another" eval \
    '! same_ns mnt agent pa && ! same_ns mnt agent pb && ! same_ns mnt pa pb'
AP=$(port_of agent remote)
LIST="tls:127.0.0.1:$AP,ca=$C/ca.pem,$(cert client1)"
# listed PS NAME CMD: dsroute ps output PS has pid 1, NAME, proc, and a
# command line that starts with CMD.
listed() {
	grep -Eq "^ *1 +$2 +proc +[^ ]+ +$3( |\$)" "$1"
}
check "dsroute ps on the agent lists dsapp, pid 1, found by proc:" \
    wait_for 10 eval '"$DSROUTE" ps "$LIST" >"$T/aps.out" &&
    listed "$T/aps.out" dsapp /app/dsapp'
check "... and Orders.Api, pid 1 too" listed "$T/aps.out" Orders.Api \
    /orders/Orders.Api
W=$T/w
mkdir -m 0700 "$W"
start_dsroute mw -v debug --link-poll 0.5 "dir:$W,listen" \
    "tls:127.0.0.1:$AP,connect,peer=router,ca=$C/ca.pem,$(cert client1)"
# standin NAME CMD: the stand-in's pid of the runtime pid 1 named NAME
# with command line CMD, from dsroute ps on the mirror.
standin() {
	"$DSROUTE" ps --json "dir:$W" 2>/dev/null | grep -F "\"pid\":1," |
	    grep -F "\"name\":\"$1\"" | grep -F "\"cmdline\":\"$2 " |
	    sed -n 's/^{"standin_pid":\([0-9]*\),.*/\1/p' | head -n 1
}
check "the workstation mirrors dsapp" \
    wait_for 20 eval '[ -n "$(standin dsapp /app/dsapp)" ]'
check "... and Orders.Api" \
    wait_for 20 eval '[ -n "$(standin Orders.Api /orders/Orders.Api)" ]'
SA=$(standin dsapp /app/dsapp)
SB=$(standin Orders.Api /orders/Orders.Api)
"$DSROUTE" ps "dir:$W" >"$T/mps.out"
like "dsroute ps (the mirror) shows dsapp as its stand-in's pid" \
    "$(cat "$T/mps.out")" "^ *$SA +1 +dsapp "
ws_tool tps trace ps
like "dotnet-trace ps lists dsapp as its stand-in's pid ($SA)" \
    "$(cat "$T/tps.out")" "^ *$SA +dsapp "
like "... and Orders.Api as its stand-in's ($SB)" "$(cat "$T/tps.out")" \
    "^ *$SB +Orders\.Api "
check "dotnet-trace collect -p $SB (Orders.Api's stand-in)" ws_tool pt \
    trace collect -p "$SB" --providers "$PROVIDERS" \
    --duration 00:00:00:03 -o "$T/pt.nettrace"
is "... its trace comes from pid 1 of Orders.Api's container" \
    "$(trace_pid "$T/pt.nettrace")" 1
is "... whose rundown names Orders.Api.dll and not dsapp.dll" \
    "$(modules "$T/pt.nettrace")" "/Orders.Api.dll "
judge_trace "proc: dotnet-trace -p" "$T/pt.nettrace"
check "... the agent dialled the app's socket in its container" \
    wait_for 10 logged agent \
    "command=CollectTracing[0-9]* .*runtime=proc:/proc\\(pid $(ctr_pid pb) uid 1000\\)"
if have_tool gcdump; then
	check "dotnet-gcdump collect -p $SA (dsapp's stand-in)" ws_tool pg \
	    gcdump collect -p "$SA" -o "$T/pg.gcdump"
	judge_gcdump "proc: dotnet-gcdump -p" "$T/pg.gcdump" dsapp.dll
fi
stop_dsroute mw
ctr_stopped "the node agent exits 0 on docker stop" agent
ctr_stopped "dsapp exits 0 on docker stop" pa
ctr_stopped "Orders.Api exits 0 on docker stop" pb

# ---- deploy/wrapper.yaml: dsroute launches the app (dsroute ... -- APP),
# one container, its TLS files and an emptyDir at /tmp as the manifest
# says; the test's app is /app/dsapp where the manifest says dotnet
# app.dll.

W=$top_srcdir/deploy/wrapper.yaml
mkdir -m 0700 "$T/wrap.d"
if "$DSROUTE" -n "uds:$T/wrap.d/app.sock" tcp:127.0.0.1:0 -- /bin/true \
    >"$T/wrapn.out" 2>&1 || "$DSROUTE" --help 2>&1 |
    grep -Eq '^ *dsroute .*LOCAL REMOTE -- '; then
	mkdir "$T/wrap"
	cat >"$T/wrap/Dockerfile" <<EOF
FROM $IMAGE AS dsroute
FROM $APP
COPY --from=dsroute /usr/bin/dsroute /usr/bin/dsroute
WORKDIR /app
EOF
	check "a wrapper image: the app's, with dsroute copied in" sh -c \
	    "DOCKER_BUILDKIT=0 $DOCKER build --network none -t dsroute-test/wrap \
	    '$T/wrap' >'$T/wrapb.out' 2>&1"
	emptydir w-tmp
	ctr w-pause --network none "$BB" sleep 3600
	wait_for 10 ctr_up w-pause
	POD_APP=/app/dsapp
	pod_ctr w dsroute-test/wrap "container:$RUN-w-pause" "$W" \
	    Deployment/app-wrapped app "tmp=$RUN-w-tmp" "tls=$T/secret"
	POD_APP=
	ctr_ready w
	check "wrapper.yaml: dsroute launches the app, its child" wait_for 60 \
	    has_line "$T/w.out" '^dsapp pid=[0-9]+ ready$'
	like "... giving it a socket of its own in the emptyDir" \
	    "$(cat "$T/w.err")" \
	    'started the application \(/app/dsapp, pid [0-9]+\) with DOTNET_DiagnosticPorts=/tmp/dsroute-[0-9]+-[A-Za-z0-9]{6}/app\.sock,nosuspend'
	port_forward w-pf w-pause 9443
	ws_router ww "tls:127.0.0.1:$(pf_port w-pf),connect,peer=router,ca=$C/ca.pem,$(cert oncall)"
	check "wrapper.yaml: dotnet-trace collect as its comment says" run_tool wt \
	    trace collect --providers "$PROVIDERS" \
	    --diagnostic-port "$T/ww.sock,connect" --duration 00:00:00:03 \
	    -o "$T/wt.nettrace"
	judge_trace "wrapper.yaml: dotnet-trace" "$T/wt.nettrace"
	stop_dsroute ww
	other_cn_refused wrapper.yaml w-pf
	stop w-pf
	ctr_stopped "wrapper.yaml: dsroute exits with the app's 0 on docker stop" w
	check "... after passing SIGTERM on to the app" \
	    has_line "$T/w.out" '^dsapp pid=[0-9]+ exiting'
	$DOCKER rm -f "$RUN-w-pause" >/dev/null 2>&1
	wait "$(pid_of w-pause)" 2>/dev/null
	$DOCKER volume rm "$RUN-w-tmp" >/dev/null 2>&1
else
	skip "the wrapper entrypoint (dsroute ... -- /app/dsapp)" \
	    "this dsroute has no -- launch form: -n LOCAL REMOTE -- /bin/true gives its usage, and --help shows none"
fi

# ---- Nothing left behind.

is "no container of this test is left" \
    "$($DOCKER ps -aq --filter "label=dsroute.test=$RUN")" ""
is "no volume of this test is left" \
    "$($DOCKER volume ls -q --filter "label=dsroute.test=$RUN")" ""
if [ -n "$engine_pid" ]; then
	engine_down
	check "the dockerd this test started has stopped" \
	    eval '! kill -0 $engine_pid 2>/dev/null'
fi

done_testing
