#!/bin/sh
# SPDX-License-Identifier: ISC
#
# --log-format json: every line of standard error is one JSON object that
# a strict parser takes (python3's json, the input decoded as strict
# UTF-8), with time, level and event, at info and at debug, while the
# socket paths hold quotes, backslashes, control characters and bytes
# that are not UTF-8.  The session end and audit records carry the
# session's fields as typed values: the bytes each way are those sent,
# the decision and rule those applied.  A route name from a file is
# hostile too, and a reload switches a text log to JSON.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"

command -v python3 >/dev/null 2>&1 ||
    skip_all "python3 is not installed (./dev.sh deps installs it)"

MAGIC=444f544e45545f4950435f563100		# "DOTNET_IPC_V1\0"
PROCESSINFO=${MAGIC}140004000000		# 20 bytes

# dump_msg PATH: GenerateCoreDump3 of an ASCII path, a whole message.
dump_msg() {
	_p=$(dump_payload "$1")
	printf '%s%s01030000%s' "$MAGIC" "$(hex16 $((20 + ${#_p} / 2)))" "$_p"
}

# json_lines FILE: "ok N" when each of the N lines of FILE is strict UTF-8
# holding one JSON object with time, level and event; else the bad line.
json_lines() {
	python3 - "$1" <<'EOF'
import json, re, sys
def refuse(c):
    raise ValueError("not JSON: " + c)
n = 0
for raw in open(sys.argv[1], "rb"):
    n += 1
    try:
        if not raw.endswith(b"\n"):
            raise ValueError("no newline")
        rec = json.loads(raw.decode("utf-8", "strict"),
                         parse_constant=refuse)
        if not isinstance(rec, dict):
            raise ValueError("not an object")
        if not re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z",
                            rec.get("time", "")):
            raise ValueError("time")
        if rec.get("level") not in ("critical", "error", "warning",
                                    "info", "debug", "trace"):
            raise ValueError("level")
        if not isinstance(rec.get("event"), str) or not rec["event"]:
            raise ValueError("event")
    except ValueError as e:
        print("line %d: %s: %r" % (n, e, raw[:300]))
        sys.exit(0)
print("ok %d" % n)
EOF
}

# q FILE EXPR: EXPR in python, over recs (the records of FILE), with H
# the hostile directory as a string (bytes that are not UTF-8 as U+FFFD).
q() {
	python3 -c '
import json, os, sys
recs = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
H = os.environb[b"H"].decode("utf-8", "replace")
def last(event, **kw):
    for r in reversed(recs):
        if r["event"] == event and all(r.get(k) == v for k, v in kw.items()):
            return r
    return {}
def typed(r, *keys):
    return " ".join("%s=%s:%s" % (k, type(r.get(k)).__name__,
        json.dumps(r.get(k))) for k in keys)
print(eval(sys.argv[2]))' "$1" "$2"
}

# lines_ok DESCRIPTION FILE MIN: every line parses, and there are MIN+.
lines_ok() {
	_got=$(json_lines "$2")
	case $_got in
	"ok "*)
		if [ "${_got#ok }" -ge "$3" ]; then
			pass "$1 (${_got#ok } lines)"
		else
			fail "$1" "only ${_got#ok } lines"
		fi
		;;
	*)
		fail "$1" "$_got"
		;;
	esac
}

# A directory with a quote, a backslash, control characters, DEL and
# bytes that are not UTF-8 (0xff; 0xc3, a lead byte, before 'x').
H="$T/q\"b\\s$(printf '\001\t\n\033\177\377\303')x"
export H
mkdir "$H" || skip_all "cannot make a directory with such a name here"

refused "--log-format yaml: one line, what to give" \
    '^crit: --log-format yaml: give text or json$' \
    --log-format yaml "uds:$T/a.sock" "uds:$T/b.sock"
printf 'log-format = xml\n[main]\nlocal = uds:%s/a.sock\n' "$T" >"$T/xml.conf"
printf 'remote = uds:%s/b.sock\n' "$T" >>"$T/xml.conf"
"$DSROUTE" -n -f "$T/xml.conf" >"$T/xml.out" 2>&1
like "log-format = xml in a file: refused with its line" \
    "$(cat "$T/xml.out")" ':1: log-format = xml: give text or json$'

# --- info: a runtime, an allowed and a denied command ----------------------

bg d "$DSROUTE" --log-format json "uds:$H/rt.sock" \
    "uds:$H/tool.sock,policy=observe"
wait_for 10 has_line "$T/d.err" '"event":"ready"' ||
    fail "the router starts with --log-format json" "$(cat "$T/d.err")"
start_fakert rt --connect "$H/rt.sock"
wait_for 10 has_line "$T/d.err" '"event":"runtime.advertise"' ||
    fail "the runtime advertises" "$(cat "$T/d.err")"

tool --timeout 10 "$H/tool.sock" raw "$PROCESSINFO"
reply=$(sed -n 's/^reply //p' "$T/tool.out")
replied=$(( ${#reply} / 2 ))
check "ProcessInfo is answered" [ "$replied" -gt 20 ]
tool --timeout 10 "$H/tool.sock" env
like "policy=observe: ProcessEnvironment is denied" "$(cat "$T/tool.out")" \
    '^error 0x80070005$'
tool --timeout 10 "$H/tool.sock" raw "$(dump_msg /tmp/SECRETMARKER)"
wait_for 5 has_line "$T/d.err" '"command":"GenerateCoreDump3"'
wait_for 5 has_line "$T/d.err" '"event":"session.end".*"ProcessInfo"'

lines_ok "info: every line is a JSON object with time, level, event" \
    "$T/d.err" 10
is "listen records: the hostile paths, escaped and valid UTF-8" \
    "$(q "$T/d.err" '[r["endpoint"] == "uds:" + H + s for r, s in
        zip([r for r in recs if r["event"] == "listen"],
        ["/rt.sock", "/tool.sock"])]')" "[True, True]"
is "start: the version and the pid" \
    "$(q "$T/d.err" 'typed(last("start"), "pid")')" \
    "pid=int:$(pid_of d)"
is "runtime.advertise: its pid, a number, and its endpoint" \
    "$(q "$T/d.err" '(typed(last("runtime.advertise"), "runtime_pid") +
        " " + str(last("runtime.advertise")["endpoint"] == "uds:" + H +
        "/rt.sock"))')" "runtime_pid=int:$(pid_of rt) True"

r='last("session.end", command="ProcessInfo")'
is "session.end: bytes each way as numbers, those sent and received" \
    "$(q "$T/d.err" "typed($r, 'to_runtime', 'to_tool')")" \
    "to_runtime=int:20 to_tool=int:$replied"
is "session.end: the decision and the rule" \
    "$(q "$T/d.err" "typed($r, 'decision', 'rule', 'answer')")" \
    'decision=str:"allow" rule=str:"role observe" answer=str:"ok"'
is "session.end: session, runtime pid and duration are numbers" \
    "$(q "$T/d.err" "' '.join(type($r.get(k)).__name__ for k in
        ('session', 'runtime_pid', 'duration'))")" "int int float"
is "session.end: the runtime's pid, its cookie, the route" \
    "$(q "$T/d.err" "typed($r, 'runtime_pid', 'route')")" \
    "runtime_pid=int:$(pid_of rt) route=str:\"main\""
like "session.end: the cookie is 32 hex digits" \
    "$(q "$T/d.err" "$r['cookie']")" '^[0-9a-f]{32}$'
is "session.end: the endpoints, hostile paths and all" \
    "$(q "$T/d.err" "($r['tool_endpoint'] == 'uds:' + H + '/tool.sock',
        $r['runtime_endpoint'] == 'uds:' + H + '/rt.sock',
        $r['tool'].startswith('uds:' + H + '/tool.sock(pid '))")" \
    "(True, True, True)"
is "session.end: why it ended" "$(q "$T/d.err" "$r['end']")" \
    "runtime closed"

a='last("audit", command="ProcessEnvironment")'
is "audit: a refusal at info, deny, with its rule" \
    "$(q "$T/d.err" "typed($a, 'level', 'decision', 'rule', 'role')")" \
    'level=str:"info" decision=str:"deny" rule=str:"role observe"'\
' role=str:"observe"'
is "audit: session, uid, gid, pid are numbers" \
    "$(q "$T/d.err" "' '.join(type($a.get(k)).__name__ for k in
        ('session', 'uid', 'gid', 'pid'))")" "int int int int"
is "audit: our uid; no runtime was taken for a refusal" \
    "$(q "$T/d.err" "typed($a, 'uid', 'runtime_pid', 'cookie')")" \
    "uid=int:$(id -u) runtime_pid=NoneType:null cookie=NoneType:null"
is "audit: the session ended at debug, not at info" \
    "$(q "$T/d.err" "len([r for r in recs if r['event'] == 'session.end'
        and r.get('session') == $a['session']])")" 0
is "audit: the dump to a path is refused too" \
    "$(q "$T/d.err" 'last("audit", command="GenerateCoreDump3")["decision"]')" \
    "deny"
is "no payload byte is logged" "$(grep -c SECRETMARKER "$T/d.err")" 0
is "no line is text" "$(grep -Ec '^(info|dbug|warn|fail|crit|trce): ' \
    "$T/d.err")" 0
stop_dsroute d
stop rt

# --- debug: every line, the audit of allowed commands ---------------------

bg d2 "$DSROUTE" --log-format json -v debug "uds:$H/rt2.sock" \
    "uds:$H/tool2.sock,policy=observe"
wait_for 10 has_line "$T/d2.err" '"event":"ready"' ||
    fail "the router starts at debug" "$(cat "$T/d2.err")"
start_fakert rt2 --connect "$H/rt2.sock"
wait_for 10 has_line "$T/d2.err" '"event":"runtime.advertise"'
tool --timeout 10 "$H/tool2.sock" raw "$PROCESSINFO"
tool --timeout 10 "$H/tool2.sock" env
tool --timeout 10 "$H/tool2.sock" raw 00112233	# not our protocol
frame=$(sed -n 's/^reply //p' "$T/tool.out")
wait_for 5 eval "[ \$(count_lines '$T/d2.err' '\"event\":\"session.end\"') \
    -ge 3 ]"
lines_ok "debug: every line is a JSON object with time, level, event" \
    "$T/d2.err" 20
is "debug: the allowed command's audit record" \
    "$(q "$T/d2.err" 'typed(last("audit", command="ProcessInfo"), "level",
        "decision")')" 'level=str:"debug" decision=str:"allow"'
is "debug: the denied session's end record, deny and its rule" \
    "$(q "$T/d2.err" 'typed(last("session.end", command="ProcessEnvironment"),
        "level", "decision", "rule", "to_runtime")')" \
    'level=str:"debug" decision=str:"deny" rule=str:"role observe"'\
' to_runtime=int:0'
is "debug: a stranger's bytes: no command, the error frame counted" \
    "$(q "$T/d2.err" 'typed(last("session.end", command=None), "command",
        "to_runtime", "to_tool")')" \
    "command=NoneType:null to_runtime=int:0 to_tool=int:$(( ${#frame} / 2 ))"
is "debug: other lines are messages with the words, escaped" \
    "$(q "$T/d2.err" 'any(r["event"] == "message" and
        ("accepted uds:" + H + "/tool2.sock") in r["msg"] for r in recs)')" \
    "True"
stop_dsroute d2
stop rt2

# --- a TLS peer whose certificate names it with hostile bytes ------------

# A client certificate, signed by the CA, whose CN holds a quote, a
# backslash, and where "QQ" was, 0x01 and DEL: openssl(1) cannot write
# those, so the request is patched and then signed without checking its
# own signature (req -x509 -CA does not).  (Bytes that are not UTF-8
# cannot be had: OpenSSL refuses them in a UTF8String.)
hostile_cert() {
	cat >"$T/h.cnf" <<EOF
[ req ]
distinguished_name = dn
prompt = no
[ dn ]
CN = tQQl\\"b\\\\s
[ names ]
basicConstraints = critical,CA:FALSE
keyUsage = critical,digitalSignature,keyEncipherment
extendedKeyUsage = clientAuth
[ signed ]
authorityKeyIdentifier = keyid
EOF
	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 \
	    -out "$C/h.key" 2>/dev/null &&
	openssl req -new -key "$C/h.key" -config "$T/h.cnf" -reqexts names \
	    -outform DER -out "$T/h.req" &&
	perl -pe 's/QQ/\x01\x7f/g' "$T/h.req" >"$T/h-patched.req" &&
	openssl req -inform DER -in "$T/h-patched.req" -x509 \
	    -CA "$C/ca.pem" -CAkey "$C/ca.key" -days 30 \
	    -copy_extensions copyall -config "$T/h.cnf" \
	    -extensions signed -out "$C/h.pem" 2>>"$T/mkcerts.err"
}

if command -v openssl >/dev/null 2>&1 && command -v perl >/dev/null 2>&1
then
	. "$top_srcdir/tests/lib/tls.sh"
	make_base_certs
	hostile_cert || fail "make the hostile certificate" \
	    "$(cat "$T/mkcerts.err")"
	start_fakert rt5 --listen "$T/rt5.sock"
	bg d5 "$DSROUTE" --log-format json -v debug "uds:$T/rt5.sock,connect" \
	    "tls:127.0.0.1:0,$(cert localhost),ca=$C/ca.pem"
	wait_for 10 has_line "$T/d5.err" '"event":"ready"' ||
	    fail "the TLS router starts" "$(cat "$T/d5.err")"
	port=$(q "$T/d5.err" 'last("listen")["endpoint"].rsplit(":", 1)[1]')
	sclient h "$port" -cert "$C/h.pem" -key "$C/h.key"
	wait_for 10 has_line "$T/d5.err" '"event":"session.end"'
	lines_ok "TLS: every line is a JSON object" "$T/d5.err" 10
	is "TLS: the audit record names the CN, every byte accounted for" \
	    "$(q "$T/d5.err" 'last("audit")["cn"] == "t\x01\x7fl\"b\\s"')" \
	    "True"
	like "TLS: and its fingerprint" \
	    "$(q "$T/d5.err" 'last("audit")["sha256"]')" "^$(fp h)\$"
	stop_dsroute d5
	stop rt5
else
	skip "TLS: a hostile certificate name" "openssl(1) or perl missing"
fi

# --- a standard error nobody reads: whole objects, then a count ----------

mkfifo "$T/err.fifo"
bg holder sh -c 'exec sleep 600 <"$1"' sh "$T/err.fifo"
start_fakert rt4 --listen "$H/rt4.sock"
"$DSROUTE" --log-format json -v debug "uds:$H/rt4.sock,connect" \
    "uds:$H/tool4.sock,listen" 2>"$T/err.fifo" &
echo $! >"$T/d4.pid"
_pids="$_pids $!"
wait_for 10 test -S "$H/tool4.sock" || fail "the router listens"
# About 2 KiB of JSON a session at debug: 600 are far more than the pipe
# and the queue hold.
check "stuck standard error: 600 sessions served" \
    tool --timeout 60 "$H/tool4.sock" repeat 600 processinfo
bg reader cat "$T/err.fifo"
wait_for 20 has_line "$T/reader.out" '"event":"log.dropped"' ||
    fail "the dropped lines are counted" "$(tail -n 2 "$T/reader.out")"
lines_ok "after the drops: every line that came is a whole object" \
    "$T/reader.out" 100
like "log.dropped: how many, a number, and the words" \
    "$(q "$T/reader.out" '(typed(last("log.dropped"), "level", "dropped")
        + " " + last("log.dropped")["msg"])')" \
    '^level=str:"warning" dropped=int:[1-9][0-9]* [0-9]+ log lines dropped: '
stop d4
kill "$(pid_of holder)" "$(pid_of reader)" 2>/dev/null

# --- a configuration file: a hostile route name, a reload -----------------

printf '[a"b\\\001\377]\nlocal = uds:%s/x.sock\nremote = uds:%s/y.sock\n' \
    "$T" "$T" >"$T/bad.conf"
"$DSROUTE" --log-format json -f "$T/bad.conf" 2>"$T/bad.err"
is "a bad route name: exit 1" "$?" 1
lines_ok "a bad route name: every line is JSON" "$T/bad.err" 1
is "a bad route name: named, escaped, as an error" \
    "$(q "$T/bad.err" 'any(r["level"] in ("error", "critical") and
        "[a\"b\\\x01\ufffd]" in r["msg"] for r in recs)')" "True"

conf() {
	printf 'log-format = %s\n[main]\nlocal = uds:%s/rt3.sock\n' "$1" "$T"
	printf 'remote = uds:%s/tool3.sock\n' "$T"
}
conf text >"$T/d3.conf"
start_dsroute d3 -f "$T/d3.conf"
conf json >"$T/d3.conf"
kill -HUP "$(pid_of d3)"
wait_for 10 has_line "$T/d3.err" '"event":"reload"'
sed -n '/^{/,$p' "$T/d3.err" >"$T/d3.json"
is "reload: the text lines before it" \
    "$(grep -c '^info: dsroute .* started' "$T/d3.err")" 1
lines_ok "reload: JSON from then on" "$T/d3.json" 1
is "reload: its record says what and how" \
    "$(q "$T/d3.json" 'typed(last("reload"), "what", "result")')" \
    'what=str:"config" result=str:"ok"'
stop_dsroute d3

done_testing
