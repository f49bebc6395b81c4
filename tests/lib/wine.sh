#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced after lib.sh by the Windows scenarios (tests/windows-*.sh):
# dsroute.exe and the Windows fakes run under wine, their Linux peers
# natively, joined by TCP on loopback.  Without dsroute.exe (./dev.sh
# windows) or wine, a scenario says so and skips; tests/windows/setup.sh
# makes the wine prefix (and the win-x64 app the real-runtime scenario
# runs).

if [ -z "${DSROUTE_EXE:-}" ] || [ ! -f "$DSROUTE_EXE" ]; then
	skip_all "no dsroute.exe: ./dev.sh windows builds it, ./dev.sh test sets DSROUTE_EXE"
fi
command -v wine >/dev/null 2>&1 || skip_all "wine is not installed"
WINFAKERT=$(dirname "$DSROUTE_EXE")/tests/winfakert.exe
WINFAKETOOL=$(dirname "$DSROUTE_EXE")/tests/winfaketool.exe
if ! _wcache=$("$top_srcdir/tests/windows/setup.sh" 2>"$T/setup.err" |
    tail -n 1) || [ ! -f "$_wcache/env.sh" ]; then
	echo "Bail out! tests/windows/setup.sh failed: $(tail -n 3 "$T/setup.err")"
	exit 1
fi
. "$_wcache/env.sh"

# Pipe names of this scenario's own, so parallel runs never meet.
P=dsr-$$-

# start_exe NAME ARGS...: dsroute.exe under wine, until it is ready.
start_exe() {
	_name=$1
	shift
	bg "$_name" wine "$DSROUTE_EXE" "$@"
	if ! wait_for 30 has_line "$T/$_name.err" '^info: ready'; then
		fail "$_name started" "$(cat "$T/$_name.err")"
		return 1
	fi
	return 0
}

# stop_exe NAME: Ctrl-C (wine turns SIGINT into one); it must exit 0.
stop_exe() {
	if stop "$1" INT; then
		pass "$1 exits cleanly on Ctrl-C"
	else
		fail "$1 exits cleanly on Ctrl-C" "status $?"
	fi
}

# start_winrt NAME ARGS...: winfakert with an events file; with --listen
# it waits until the pipe is served.
start_winrt() {
	_name=$1
	shift
	: >"$T/$_name.ev"
	bg "$_name" wine "$WINFAKERT" --events "$T/$_name.ev" "$@"
	case " $* " in
	*" --listen "*)
		wait_for 30 has_line "$T/$_name.ev" '^listen ' ||
		    fail "$_name listens"
		;;
	esac
}

# wtool [--timeout S] ARGS...: winfaketool; output in $T/tool.out.
wtool() {
	wine "$WINFAKETOOL" "$@" >"$T/tool.out" 2>"$T/tool.err"
}
