#!/bin/sh
# SPDX-License-Identifier: ISC
#
# Sourced by the scenarios of -- COMMAND (tests/launch.sh and
# tests/interop-launch.sh), after lib.sh.

# launched NAME ARGS...: dsroute ARGS in the background, with TMPDIR
# $T/NAME.d, where its own socket goes (and the app's).
launched() {
	_name=$1
	shift
	mkdir -p -m 0700 "$T/$_name.d"
	bg "$_name" env TMPDIR="$T/$_name.d" "$DSROUTE" "$@"
}

# reaped NAME: wait for a background router; its exit status in $rc.
reaped() {
	if wait "$(pid_of "$1")"; then
		rc=0
	else
		rc=$?
	fi
}

# app_pid NAME: the application's pid, from the router's line.
app_pid() {
	sed -n 's/.*started the application (.*, pid \([0-9]*\)).*/\1/p' \
	    "$T/$1.err"
}
