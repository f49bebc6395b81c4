#!/bin/sh
# SPDX-License-Identifier: ISC
#
# A real tool refused by a policy: dotnet-trace, told by dsroute that its
# CollectTracing is denied, exits with an error within 2 s of the denial
# instead of waiting for a trace.  Skipped when the .NET SDK is missing or
# dotnet-trace cannot be installed.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

command -v dotnet >/dev/null 2>&1 || skip_all "dotnet is not installed"

export DOTNET_CLI_TELEMETRY_OPTOUT=1 DOTNET_NOLOGO=1
export DOTNET_SKIP_FIRST_TIME_EXPERIENCE=1
tools="${top_builddir:-.}/dotnet-tools"
if [ ! -x "$tools/dotnet-trace" ] &&
    ! dotnet tool install --tool-path "$tools" dotnet-trace \
    >"$T/install.out" 2>&1; then
	skip_all "cannot install dotnet-trace: $(tail -n 1 "$T/install.out")"
fi

start_fakert rt --listen tcp:127.0.0.1:0 --pid 7001
start_dsroute d "uds:$T/dt.sock,listen,deny=CollectTracing*" \
    "tcp:127.0.0.1:$(fakert_port rt),connect"

# timeout(1) only guards the suite against a hang; it is not the check.
timeout 60 "$tools/dotnet-trace" collect \
    --diagnostic-port "$T/dt.sock,connect" -o "$T/trace.nettrace" \
    >"$T/trace.out" 2>&1
rc=$?
exited=$(date -u +%s%3N)

if [ $rc -ne 0 ] && [ $rc -ne 124 ]; then
	pass "dotnet-trace exits with an error (status $rc)"
else
	fail "dotnet-trace exits with an error" "status $rc"
fi
like "dotnet-trace reports the access-denied HRESULT" \
    "$(cat "$T/trace.out")" '0x80070005'
audit=$(grep '^info: audit: .*decision=deny' "$T/d.err" | head -n 1)
like "dsroute audited the denial" "$audit" \
    'command=CollectTracing[0-9]* decision=deny .*rule="deny=CollectTracing\*"'
when=$(printf '%s\n' "$audit" | sed -n 's/.* time=\([^ ]*\) .*/\1/p')
if [ -n "$when" ]; then
	denied=$(date -u -d "$when" +%s%3N)
	ms=$((exited - denied))
	if [ $ms -lt 2000 ]; then
		pass "dotnet-trace exited ${ms} ms after the denial"
	else
		fail "dotnet-trace exits within 2 s of the denial" "${ms} ms"
	fi
else
	fail "dotnet-trace exits within 2 s of the denial" "no audit time"
fi
is "the runtime received no trace command" \
    "$(count_lines "$T/rt.ev" '^command 0x02 ')" 0
is "no file was written" "$(ls "$T"/*.nettrace 2>/dev/null | wc -l)" 0
stop_dsroute d
stop rt

done_testing
