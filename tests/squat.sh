#!/bin/sh
#
# Copyright (c) 2026 The dsroute authors
#
# Permission to use, copy, modify, and distribute this software for any
# purpose with or without fee is hereby granted, provided that the above
# copyright notice and this permission notice appear in all copies.
#
# THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
# WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
# MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
# ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
# WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
# ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
# OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
#
# LS-7 (security.md §4.5, rule R7): anyone who may write to /tmp can plant
# a socket under a runtime's default name, dotnet-diagnostic-PID-KEY-socket,
# and wait for a router to bring it the commands meant for PID.  A router
# that dials such a name checks that the process listening there is PID:
# a planted socket is refused before a byte reaches it, with one line
# saying why, and the router serves on; the real runtime's socket is served.

. "$top_srcdir/tests/lib.sh"

# refused_at ROUTER DESC: ProcessInfo through ROUTER finds no runtime.
refused_at() {
	_port=$(port_of "$1" remote)
	if tool --timeout 30 "tcp:127.0.0.1:$_port" processinfo; then
		fail "$2: the tool gets no answer" "$(cat "$T/tool.out")"
	else
		pass "$2: the tool gets no answer"
	fi
	check "$2: the router says why" wait_for 10 has_line "$T/$1.err" \
	    "end=\"connect to [^ ]* failed: the process listening at the socket is not the one its name gives"
}

# The squatter listens under the name of another live process: this shell.
planted="$T/dotnet-diagnostic-$$-1234-socket"
start_fakert sq --listen "$planted" --pid $$
start_dsroute d "uds:$planted,connect" tcp:127.0.0.1:0
refused_at d "a socket planted under another process's pid"
refused_at d "again"
is "the planted socket received no byte" "$(runtime_rx sq)" 0
check "the router is still up" alive d

# The form dotnet-dsrouter's sockets have, dotnet-diagnostic-dsrouter-PID-...
ln "$planted" "$T/dotnet-diagnostic-dsrouter-$$-1234-socket"
start_dsroute d2 "uds:$T/dotnet-diagnostic-dsrouter-$$-1234-socket,connect" \
    tcp:127.0.0.1:0
refused_at d2 "a planted dotnet-diagnostic-dsrouter- socket"
is "the planted socket still received no byte" "$(runtime_rx sq)" 0

# The same listener under its own pid is the runtime its name gives.
own="$T/dotnet-diagnostic-$(pid_of sq)-1234-socket"
mv "$planted" "$own"
start_dsroute d3 "uds:$own,connect" tcp:127.0.0.1:0
check "a socket under its own process's pid is served" \
    tool --timeout 30 "tcp:127.0.0.1:$(port_of d3 remote)" processinfo
is "the answer is the runtime's" "$(field pid "$T/tool.out")" $$

# A name of another form is not checked: nothing to compare.
mv "$own" "$T/app.sock"
start_dsroute d4 "uds:$T/app.sock,connect" tcp:127.0.0.1:0
check "a socket with a name of another form is served" \
    tool --timeout 30 "tcp:127.0.0.1:$(port_of d4 remote)" processinfo

for r in d d2 d3 d4; do
	stop_dsroute $r
done
done_testing
