#!/bin/sh
# SPDX-License-Identifier: ISC
#
# --resume-after: a runtime started suspended that dials the router, and
# that no tool resumes in time, is resumed by the router; one a tool
# resumed first is left alone; without the option it stays paused.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

SENT='no tool resumed it within [0-9.]+s \(--resume-after\); the router sends ResumeRuntime$'
OK="answered the router's ResumeRuntime: ok\$"
resumes() {
	count_lines "$T/$1.ev" '^command 0x04 0x01 '
}

# Nobody comes: the router resumes it, once, and tools are served after.
start_dsroute r1 --resume-after 1 "uds:$T/r1-rt.sock,listen" \
    "uds:$T/r1-tool.sock,listen"
start_fakert a --connect "$T/r1-rt.sock" --suspend
check "nobody came: the router resumed the runtime" \
    wait_for 20 has_line "$T/a.ev" '^resumed$'
like "nobody came: the router said so" "$(cat "$T/r1.err")" "$SENT"
check "nobody came: the runtime's answer is logged" \
    wait_for 10 has_line "$T/r1.err" "$OK"
check "a tool is served after the router's resume" \
    tool --timeout 10 "$T/r1-tool.sock" processinfo
is "the runtime got exactly one ResumeRuntime" "$(resumes a)" 1
is "the router sent it once" "$(count_lines "$T/r1.err" "$SENT")" 1
check "the router is alive" alive r1

# A tool resumes it first: the router sends nothing of its own.
start_dsroute r2 --resume-after 2 "uds:$T/r2-rt.sock,listen" \
    "uds:$T/r2-tool.sock,listen"
start_fakert b --connect "$T/r2-rt.sock" --suspend
wait_for 10 has_line "$T/r2.err" 'connected on ' ||
    fail "the runtime parked" "$(cat "$T/r2.err")"
check "a tool resumes it through the router" \
    tool --timeout 10 "$T/r2-tool.sock" resume
is "the tool's ResumeRuntime was answered ok" "$(cat "$T/tool.out")" ok
check "the tool's resume took" wait_for 10 has_line "$T/b.ev" '^resumed$'
# Past the deadline (2 s) with room to spare: the router stayed quiet.
sleep 3
is "after the tool's resume the router sent none" \
    "$(count_lines "$T/r2.err" "$SENT")" 0
is "the runtime got the tool's ResumeRuntime alone" "$(resumes b)" 1

# Without --resume-after it stays paused until a tool comes.
start_dsroute r3 "uds:$T/r3-rt.sock,listen" "uds:$T/r3-tool.sock,listen"
start_fakert c --connect "$T/r3-rt.sock" --suspend
wait_for 10 has_line "$T/r3.err" 'connected on ' ||
    fail "the runtime parked" "$(cat "$T/r3.err")"
sleep 3
is "without --resume-after the runtime is still paused" \
    "$(count_lines "$T/c.ev" '^resumed$')" 0
is "without --resume-after the runtime got no ResumeRuntime" \
    "$(resumes c)" 0

# The JSON log says what the router did, as runtime.resume records.
bg r4 "$DSROUTE" --log-format json --resume-after 1 \
    "uds:$T/r4-rt.sock,listen" "uds:$T/r4-tool.sock,listen"
wait_for 10 has_line "$T/r4.err" '"event":"ready"' ||
    fail "r4 started" "$(cat "$T/r4.err")"
start_fakert d --connect "$T/r4-rt.sock" --suspend
check "JSON log: the router resumed the runtime" \
    wait_for 20 has_line "$T/d.ev" '^resumed$'
resume_records() {
	python3 -c '
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    r = json.loads(line)
    if r["event"] == "runtime.resume":
        print(r["outcome"], r["runtime_pid"] == int(sys.argv[2]),
            len(r["cookie"]))' "$T/r4.err" "$(pid_of d)"
}
check "JSON log: the answer is logged" wait_for 10 has_line "$T/r4.err" \
    '"outcome":"ok"'
is "JSON log: runtime.resume records, sent then ok, naming the runtime" \
    "$(resume_records | tr '\n' ,)" "sent True 32,ok True 32,"

# A bad duration is refused at start-up with one line.
"$DSROUTE" --resume-after 1e3 "uds:$T/x.sock" tcp:127.0.0.1:0 \
    >/dev/null 2>"$T/bad.err"
is "--resume-after 1e3 exits 1" $? 1
like "--resume-after 1e3 is explained" "$(cat "$T/bad.err")" \
    'resume-after.*duration'

done_testing
