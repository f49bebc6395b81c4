#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The commands of README.md, run as printed, so that they cannot drift from
# what dsroute does.  README.md marks them with HTML comments, which it
# renders as nothing, each on the line before a fenced block:
#
#	<!-- test: NAME -->		the ```sh block below is part of test
#					NAME; a test's blocks run in order
#	<!-- test: NAME wait ERE -->	the same, once a line that what runs
#					has printed matches ERE, as the reader
#					is told to wait for it
#	<!-- test: NAME output -->	the ```text block below is what you
#					should see: each of its lines must be a
#					line of what NAME printed, "…" standing
#					for anything
#	<!-- test: setup -->		the set-up block: exactly ./dev.sh run
#					and ./dev.sh test
#
# Each command of a block (a line with its backslash continuations; lines
# of comments aside) runs with sh -c, its text untouched.  One that ends
# with & runs in the background, its output kept: a dsroute must log
# "ready", an app must run its Main (the test app's "ready" line), a
# kubectl port-forward must say "Forwarding from", before the next command
# runs.  The others run in the foreground, without standard input, and must
# exit 0.  At a test's end its background processes get SIGTERM, and each
# dsroute must exit 0 without a sanitizer report.
#
# What the commands find is set up around them, never by changing them:
#
# - They run in a network, mount and pid namespace of their own, where
#   /tmp is a new tmpfs: the README's fixed paths (/tmp/dsroute/...) and
#   ports (9000, 9443) are this test's alone.
# - From a scratch directory holding what the README assumes: its
#   Orders.Api.dll, which is the test app (tests/interop/app, built under
#   that name by tests/lib/interop.sh), and certs/mkcerts.sh.
# - With a PATH that begins with: dsroute, the binary under test; the real
#   dotnet-trace and dotnet-dump (tests/lib/dotnet-tools.sh); and
#   stand-ins for ssh and kubectl, which carry a loopback port between
#   hosts, here one: "ssh -N -L/-R" does nothing, and "kubectl
#   port-forward deploy/app" runs the pod of deploy/sidecar.yaml on this
#   host (its init container's command, its dsroute's arguments, its app's
#   DOTNET_DiagnosticPorts, with /diag moved into the test's directory).
#
# Without dotnet (and .NET 10) the tests of the recipes say skipped.

if [ -z "${DSR_README_NS:-}" ]; then
	DSR_README_NS=1
	export DSR_README_NS
	ns="unshare -m -n -p -f --mount-proc --propagation private"
	if command -v ip >/dev/null 2>&1 && $ns true 2>/dev/null; then
		exec $ns sh -c 'ip link set lo up &&
		    mount -t tmpfs -o mode=1777 tmpfs /tmp && exec sh "$0"' "$0"
	fi
	echo "1..0 # SKIP no private network, mount and pid namespace" \
	    "(unshare, ip; root)"
	exit 0
fi

. "$top_srcdir/tests/lib/lib.sh"

README=$top_srcdir/README.md

# --- The markers: each test's blocks into $T/plan/NAME/.
mkdir "$T/plan"
if ! awk -v plan="$T/plan" '
	function out(f) { return plan "/" name "/" f }
	inblock && /^```/ { inblock = 0; close(file); next }
	inblock { print > file; next }
	marker != "" {
		if ($0 !~ /^```/) {
			print "README.md:" NR - 1 ": a marker not followed by a block"
			bad = 1
		} else {
			inblock = 1
			system("mkdir -p \"" plan "/" name "\"")
			if (kind == "output")
				file = out("expect")
			else {
				n[name]++
				file = out(sprintf("%03d.sh", n[name]))
				if (kind == "wait")
					print ere > out(sprintf("%03d.wait", n[name]))
				if (!(name in seen))
					print name > (plan "/order")
				seen[name] = 1
			}
		}
		marker = ""
		next
	}
	/^<!-- test: .* -->$/ {
		m = $0
		sub(/^<!-- test: /, "", m)
		sub(/ -->$/, "", m)
		name = m; sub(/ .*/, "", name)
		rest = m; sub(/^[^ ]*/, "", rest); sub(/^ /, "", rest)
		kind = rest; sub(/ .*/, "", kind)
		ere = rest; sub(/^[^ ]* ?/, "", ere)
		if (kind != "" && kind != "output" && kind != "wait") {
			print "README.md:" NR ": unknown marker " m
			bad = 1
		}
		marker = m
		next
	}
	END { exit bad }' "$README" >"$T/markers.err"; then
	fail "README.md's test markers are well formed" "$(cat "$T/markers.err")"
fi

# commands FILE: each command of a block on one line, its continuation
# lines joined with \n escapes undone later: one record per line of output,
# with "\\\n" between the lines of one command.
commands() {
	awk '
	/^[[:space:]]*#/ && cmd == "" { next }
	/^[[:space:]]*$/ && cmd == "" { next }
	{
		cmd = cmd == "" ? $0 : cmd "\034" $0
		if ($0 ~ /\\$/)
			next
		print cmd
		cmd = ""
	}' "$1"
}

# --- The set-up: two commands, and dev.sh takes what the README says.
commands "$T/plan/setup/001.sh" | sed 's/[[:space:]]*#.*//' >"$T/setup.cmds"
is "README.md's set-up is two commands, ./dev.sh run and ./dev.sh test" \
    "$(cat "$T/setup.cmds" | tr '\n' ';')" "./dev.sh run;./dev.sh test;"
dry() {
	DEV_DRY_RUN=1 sh "$top_srcdir/dev.sh" run "$@"
}
want=$(sed -n 's/^\.\/dev\.sh run .*start dsroute on \([^ ]*\) and \([^ ]*\)$/build\/run\/dsroute uds:\1 tcp:\2/p' \
    "$T/plan/setup/001.sh")
is "./dev.sh run starts dsroute where the set-up's comment says" "$(dry)" \
    "$want"
check "the README names build/run/dsroute, where ./dev.sh run builds it" \
    grep -q '`build/run/dsroute`' "$README"
is "./dev.sh run -v debug: the options, then the default endpoints" \
    "$(dry -v debug)" "build/run/dsroute -v debug ${want#build/run/dsroute }"
is "./dev.sh run --help: passed on as it is" "$(dry --help)" \
    "build/run/dsroute --help"
is "./dev.sh run LOCAL REMOTE: passed on as they are" \
    "$(dry uds:/tmp/x.sock tcp:127.0.0.1:9100)" \
    "build/run/dsroute uds:/tmp/x.sock tcp:127.0.0.1:9100"
is "./dev.sh run -f FILE: passed on as it is" "$(dry -f a.conf)" \
    "build/run/dsroute -f a.conf"
check "dev.sh has the test command" grep -q '^test)$' "$top_srcdir/dev.sh"

# --- What the recipes need.
tests=$(grep -vx setup "$T/plan/order")
# README_TESTS="NAME ...": only those, when looking into one.
tests=${README_TESTS:-$tests}
why=""
if ! command -v dotnet >/dev/null 2>&1; then
	why="no dotnet on PATH"
elif ! dotnet --list-runtimes 2>/dev/null |
    grep -q '^Microsoft\.NETCore\.App 10\.'; then
	why="dotnet has no .NET 10 runtime (dotnet --list-runtimes)"
fi
if [ -n "$why" ]; then
	for t in $tests; do
		skip "README.md: $t" "$why"
	done
	done_testing
	exit
fi
. "$top_srcdir/tests/lib/interop.sh"
interop_setup
tools=""
for t in dotnet-trace dotnet-dump; do
	if dotnet_tool "$t"; then
		tools=$(dirname "$tool_path")
	else
		for t in $tests; do
			skip "README.md: $t" "$why"
		done
		done_testing
		exit
	fi
done

mkdir "$T/bin" "$T/pod"
ln -s "$DSROUTE" "$T/bin/dsroute"
cat >"$T/bin/ssh" <<'EOF'
#!/bin/sh
# ssh -N -L or -R between two hosts that are this one: nothing to carry.
echo "ssh stand-in: $*: both hosts are this one"
exec sleep 100000
EOF
# kubectl port-forward deploy/app: the pod of deploy/sidecar.yaml, here.
cat >"$T/bin/kubectl" <<'EOF'
#!/bin/sh
set -eu
[ "$1 $2" = "port-forward deploy/app" ] || { echo "kubectl stand-in: $*?"; exit 1; }
exec >>"$POD_LOG" 2>&1
y=$SIDECAR_YAML
pod=$POD_DIR
moved() { sed "s|/diag/|$pod/diag/|g"; }
# The init container's command, then the dsroute sidecar's arguments.
init=$(sed -n 's/^ *command: \[\(mkdir, .*\)\]$/\1/p' "$y" | tr -d '",' | moved)
args=$(awk '/^ *- name: dsroute$/ { d = 1 } d && /^ *args:$/ { a = 1; next }
    a && /^ *- / { sub(/^ *- /, ""); sub(/ *#.*/, ""); print; next } a { exit }' \
    "$y" | moved)
port=$(sed -n 's/^ *value: \(\/diag\/.*\)$/\1/p' "$y" | moved)
echo "kubectl stand-in: init: $init; dsroute $args; app: DOTNET_DiagnosticPorts=$port"
$init
# shellcheck disable=SC2086
dsroute $args 2>&1 &
pids=$!
trap 'kill $pids 2>/dev/null; wait; exit 0' TERM INT
i=0
until grep -q '^info: ready$' "$POD_LOG" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 500 ] || exit 1; sleep 0.02
done
DOTNET_DiagnosticPorts=$port dotnet Orders.Api.dll &
pids="$pids $!"
i=0
until grep -q 'connected on uds:' "$POD_LOG" 2>/dev/null; do
	i=$((i + 1)); [ $i -lt 3000 ] || exit 1; sleep 0.02
done
echo "Forwarding from 127.0.0.1:9000 -> 9000"
wait
EOF
chmod +x "$T/bin/ssh" "$T/bin/kubectl"
PATH=$T/bin:$tools:$PATH
SIDECAR_YAML=$top_srcdir/deploy/sidecar.yaml
POD_DIR=$T/pod
export PATH SIDECAR_YAML POD_DIR

# pattern LINE: the expected line as an anchored ERE, "…" for anything.
pattern() {
	printf '%s\n' "$1" | sed -e 's/[][\.*^$+?(){}|]/\\&/g' -e 's/…/.*/g' \
	    -e 's/^/^/' -e 's/$/$/'
}

# kill_tree PID: SIGTERM to PID's descendants, the deepest first, then
# to PID.  Every process here is this test's: the pid namespace is its own.
kill_tree() {
	for _c in $(pgrep -P "$1" || true); do
		kill_tree "$_c"
	done
	kill -TERM "$1" 2>/dev/null
}

# stop_all NAME: SIGTERM to what NAME runs in the background (the command
# that sh -c runs, and what that runs), and the exit status of each dsroute.
stop_all() {
	while read -r _pid _k _what; do
		_kids=$(pgrep -P "$_pid" || true)
		for _c in ${_kids:-$_pid}; do
			kill_tree "$_c"
		done
		if wait "$_pid"; then _rc=0; else _rc=$?; fi
		[ "$_what" = dsroute ] || continue
		if [ $_rc -ne 0 ] || grep -Eq 'Sanitizer|runtime error:|^==[0-9]+==' \
		    "$T/$1.$_k.out"; then
			fail "$1: dsroute ($_k) exits cleanly on SIGTERM" \
			    "status $_rc: $(tail -n 5 "$T/$1.$_k.out")"
		else
			pass "$1: dsroute ($_k) exits cleanly on SIGTERM"
		fi
	done <"$T/$1.bg"
}

# run_test NAME: its blocks in order, then what it should show.
run_test() {
	_t=$1
	find /tmp -mindepth 1 -maxdepth 1 ! -path "$T" -exec rm -rf {} +
	rm -rf "$T/w" "$POD_DIR"
	mkdir -p "$T/w/certs" "$POD_DIR"
	cp "$top_srcdir/certs/mkcerts.sh" "$T/w/certs/"
	for f in Orders.Api.dll Orders.Api.deps.json Orders.Api.runtimeconfig.json; do
		ln -s "$(dirname "$ORDERS")/$f" "$T/w/$f"
	done
	POD_LOG=$T/$_t.pod.out
	export POD_LOG
	: >"$T/$_t.bg"
	_was=$_failed
	_k=0
	_ok=1
	for _b in "$T/plan/$_t"/[0-9]*.sh; do
		if [ -f "${_b%.sh}.wait" ]; then
			_ere=$(cat "${_b%.sh}.wait")
			if ! wait_for 60 eval "cat '$T/$_t'.*.out | grep -Eq -- \"\$_ere\""; then
				fail "$_t: waits for /$_ere/" "nothing printed it"
				_ok=0
				break
			fi
		fi
		commands "$_b" >"$T/$_t.cmds"
		while IFS= read -r _c; do
			_c=$(printf '%s' "$_c" | tr '\034' '\n')
			_k=$((_k + 1))
			_o=$T/$_t.$_k.out
			_one=$(printf '%s' "$_c" | tr '\n' ' ' | sed 's/\\ *//g; s/  */ /g')
			case $_c in
			*'&')
				(cd "$T/w" && exec sh -c "${_c%&}") </dev/null >"$_o" 2>&1 &
				_pid=$!
				_first=$(printf '%s' "$_c" | sed 's/^\([A-Za-z_][A-Za-z0-9_]*=[^ ]* \)*//; s/ .*//')
				echo "$_pid $_k $_first" >>"$T/$_t.bg"
				case $_first:$_c in
				dsroute:*)	_ready='^info: ready$' ;;
				kubectl:*)	_ready='^Forwarding from ' ;;
				dotnet:*.dll*)	_ready=' ready$' ;;
				*)		_ready="" ;;
				esac
				[ "$_first" = kubectl ] && _o=$POD_LOG
				if [ -n "$_ready" ] && ! wait_for 60 has_line "$_o" "$_ready"; then
					fail "$_t: $_one starts" "$(tail -n 20 "$_o")"
					_ok=0
					break 2
				fi
				[ -n "$_ready" ] && pass "$_t: $_one starts"
				;;
			*)
				if (cd "$T/w" && exec timeout 180 sh -c "$_c") </dev/null \
				    >"$_o" 2>&1; then
					pass "$_t: $_one exits 0"
				else
					fail "$_t: $_one exits 0" "$(tail -n 20 "$_o")"
					_ok=0
					break 2
				fi
				;;
			esac
		done <"$T/$_t.cmds"
	done
	# The routers' lines of a session come once both its ends closed.
	if [ $_ok -eq 1 ] && [ -f "$T/plan/$_t/expect" ]; then
		while IFS= read -r _l; do
			[ -n "$_l" ] || continue
			_p=$(pattern "$_l")
			if wait_for 20 eval "cat '$T/$_t'.*.out | grep -Eq -- \"\$_p\""; then
				pass "$_t: shows $_l"
			else
				fail "$_t: shows $_l" "no line matches /$_p/"
			fi
		done <"$T/plan/$_t/expect"
	fi
	stop_all "$_t"
	if [ $_ok -ne 1 ] || [ "$_failed" -ne "$_was" ]; then
		for _f in "$T/$_t".*.out; do
			echo "# --- $(basename "$_f")"
			tail -n 30 "$_f" | sed 's/^/#   /'
		done
	fi
}

for t in $tests; do
	run_test "$t"
	case $t in
	default-socket)
		# The runtime that served is the app's, not the tool's own.
		is "default-socket: the socket that served is the app's" \
		    "$(sed -n 's|^info: dir:/tmp: /tmp/dotnet-diagnostic-\([0-9]*\)-.*now serves the tools$|\1|p' \
		    "$T"/default-socket.*.out | head -n 1)" \
		    "$(sed -n 's/^dsapp pid=\([0-9]*\) ready$/\1/p' \
		    "$T"/default-socket.*.out | head -n 1)"
		;;
	esac
done

done_testing
