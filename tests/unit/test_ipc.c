/* SPDX-License-Identifier: ISC */

/* Unit tests of the wire format: header and advertise classification. */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ipc.h"
#include "tap.h"

static const uint8_t	 magic[14] = "DOTNET_IPC_V1";

/* Build a message of size bytes (header included) with a given header. */
static size_t
message(uint8_t *buf, uint16_t size, uint8_t set, uint8_t id,
    uint16_t reserved)
{
	size_t	 i;

	memcpy(buf, magic, 14);
	buf[14] = size & 0xff;
	buf[15] = size >> 8;
	buf[16] = set;
	buf[17] = id;
	buf[18] = reserved & 0xff;
	buf[19] = reserved >> 8;
	for (i = 20; i < size; i++)
		buf[i] = (uint8_t)(i * 7);
	return (size < 20 ? 20 : size);
}

static void
test_greetings(void)
{
	struct greeting	 g;
	struct advertise adv = { .pid = 0x0102030405060708ULL };
	static uint8_t	 buf[65536];
	uint8_t		 advr[ADVR_LEN];
	size_t		 len, i;
	int		 all_more;

	ipc_classify(buf, 0, &g);
	ok(g.kind == GREETING_MORE, "no bytes: need more");

	ipc_classify((const uint8_t *)"D", 1, &g);
	ok(g.kind == GREETING_MORE && g.need == 20, "'D': need a header");
	ipc_classify((const uint8_t *)"A", 1, &g);
	ok(g.kind == GREETING_MORE && g.need == ADVR_LEN,
	    "'A': need an advertise");
	ipc_classify((const uint8_t *)"GET / HTTP/1.1\r\n", 16, &g);
	ok(g.kind == GREETING_INVALID && g.hresult == HRESULT_UNKNOWN_MAGIC,
	    "HTTP request: invalid, UNKNOWN_MAGIC, as the runtime answers");
	ipc_classify((const uint8_t *)"DOTNET_IPC_V2", 13, &g);
	ok(g.kind == GREETING_INVALID && g.hresult == HRESULT_UNKNOWN_MAGIC,
	    "wrong magic version: invalid, UNKNOWN_MAGIC");
	ipc_classify((const uint8_t *)"ADVR_V2", 7, &g);
	ok(g.kind == GREETING_INVALID, "wrong advertise magic: invalid");

	for (i = 0; i < IPC_COOKIE_LEN; i++)
		adv.cookie[i] = (uint8_t)(0xa0 + i);
	ipc_advertise_build(advr, &adv);
	ok(memcmp(advr, "ADVR_V1\0", 8) == 0 && advr[32] == 0 &&
	    advr[33] == 0, "advertise: magic and zero future field");
	ok(advr[24] == 0x08 && advr[31] == 0x01, "advertise: pid little-endian");
	ipc_classify(advr, ADVR_LEN - 1, &g);
	ok(g.kind == GREETING_MORE, "advertise less one byte: need more");
	ipc_classify(advr, ADVR_LEN, &g);
	ok(g.kind == GREETING_ADVERTISE && g.advertise.pid == adv.pid &&
	    memcmp(g.advertise.cookie, adv.cookie, IPC_COOKIE_LEN) == 0,
	    "advertise: cookie and pid round-trip");

	len = message(buf, 19, 4, 0, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID && g.hresult == HRESULT_BAD_ENCODING,
	    "size 19: invalid, BAD_ENCODING");
	len = message(buf, 0, 4, 0, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID, "size 0: invalid");
	len = message(buf, 20, 4, 0, 1);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID && g.hresult != 0,
	    "reserved not zero: invalid");
	len = message(buf, 24, 0xff, 0xff, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID, "client-sent 0xFF set: invalid");

	len = message(buf, 20, 4, 0, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_COMMAND && g.need == 20 && g.header.set == 4 &&
	    g.header.id == 0, "ProcessInfo: a complete command of 20 bytes");
	ipc_classify(buf, 19, &g);
	ok(g.kind == GREETING_MORE, "ProcessInfo less one byte: need more");

	len = message(buf, 65535, 2, 3, 0);
	ipc_classify(buf, 20, &g);
	ok(g.kind == GREETING_MORE && g.need == 65535,
	    "largest message: header tells the size");
	ipc_classify(buf, 65534, &g);
	ok(g.kind == GREETING_MORE, "largest message less one: need more");
	ipc_classify(buf, 65535, &g);
	ok(g.kind == GREETING_COMMAND, "largest message: complete");
	ipc_classify(buf, 65536, &g);
	ok(g.kind == GREETING_COMMAND && g.need == 65535,
	    "trailing bytes: the message is still the first 65535");

	/* Any prefix of a valid message is "more", whatever its length. */
	len = message(buf, 300, 2, 4, 0);
	all_more = 1;
	for (i = 0; i < len; i++) {
		ipc_classify(buf, i, &g);
		if (g.kind != GREETING_MORE)
			all_more = 0;
	}
	ok(all_more, "every proper prefix of a 300-byte command: need more");
	all_more = 1;
	for (i = 0; i < ADVR_LEN; i++) {
		ipc_classify(advr, i, &g);
		if (g.kind != GREETING_MORE)
			all_more = 0;
	}
	ok(all_more, "every proper prefix of an advertise: need more");
}

static void
test_frames(void)
{
	static const uint8_t want[24] = {
		'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V',
		'1', 0, 24, 0, 0xff, 0xff, 0, 0, 0x05, 0x00, 0x07, 0x80
	};
	uint8_t		 frame[24], req[20], reply[128];
	struct advertise adv;
	uint32_t	 hresult = 0;
	size_t		 i;

	ipc_error_frame(frame, HRESULT_ACCESS_DENIED);
	ok(memcmp(frame, want, 24) == 0, "access-denied frame, byte for byte");

	ipc_request(req, IPC_SET_PROCESS, 0);
	ok(memcmp(req, magic, 14) == 0 && req[14] == 20 && req[15] == 0 &&
	    req[16] == 4 && req[17] == 0, "ProcessInfo request");

	memset(reply, 0, sizeof(reply));
	memcpy(reply, magic, 14);
	reply[14] = 64;
	reply[16] = 0xff;
	reply[17] = 0x00;
	reply[20] = 0x39;		/* pid 12345 */
	reply[21] = 0x30;
	for (i = 0; i < 16; i++)
		reply[28 + i] = (uint8_t)i;
	ok(ipc_processinfo_parse(reply, 64, &adv, &hresult) == 0 &&
	    adv.pid == 12345 && adv.cookie[15] == 15,
	    "ProcessInfo reply: pid and cookie");
	ok(ipc_processinfo_parse(reply, 40, &adv, &hresult) == -1,
	    "truncated ProcessInfo reply: rejected");
	ok(ipc_processinfo_parse(frame, 24, &adv, &hresult) == 1 &&
	    hresult == HRESULT_ACCESS_DENIED, "error frame: its HRESULT");
}

static void
test_names(void)
{
	char			 label[40];
	struct default_name	 dn;

	ok(strcmp(ipc_command_name(4, 0), "ProcessInfo") == 0, "0x0400");
	ok(strcmp(ipc_command_name(2, 7), "CollectTracing6") == 0, "0x0207");
	ok(strcmp(ipc_command_name(1, 3), "GenerateCoreDump3") == 0, "0x0103");
	ok(strcmp(ipc_command_name(4, 7), "ApplyStartupHook") == 0, "0x0407");
	ok(ipc_command_name(4, 9) == NULL, "0x0409 is unknown");
	ok(ipc_command_name(0, 0) == NULL, "0x0000 is unknown");
	ipc_command_label(9, 0xfe, label, sizeof(label));
	ok(strcmp(label, "unknown(0x09,0xfe)") == 0, "label of an unknown");

	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-4242-99887766-socket",
	    0, &dn) == 1 && dn.pid == 4242 && dn.key == 99887766 &&
	    !dn.router, "default port name: pid and key");
	ok(ipc_default_socket_parse("dotnet-diagnostic-dsrouter-1-2-socket",
	    0, &dn) == 0, "dsrouter socket name is not a runtime's");
	ok(ipc_default_socket_parse("dotnet-diagnostic-dsrouter-17-2-socket",
	    1, &dn) == 1 && dn.pid == 17 && dn.key == 2 && dn.router,
	    "... but a router's, when asked");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-12-socket", 1,
	    &dn) == 0, "name without a key is not a runtime's");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-dsrouter--1-2-socket",
	    1, &dn) == 0, "nor a name without a pid");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-0-2-socket",
	    1, &dn) == 0, "nor one with pid 0");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-4294967297-2-socket",
	    1, &dn) == 0, "nor one with a pid beyond 32 bits");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-5--2-socket",
	    1, &dn) == 0, "nor one with a signed key");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-5-"
	    "99999999999999999999-socket", 1, &dn) == 0,
	    "nor one with a key beyond 64 bits");
	ok(ipc_default_socket_parse("/tmp/app.sock", 1, &dn) == 0,
	    "other names");

	ok(ipc_default_pipe_parse("dotnet-diagnostic-4242", 0, &dn) == 1 &&
	    dn.pid == 4242 && dn.key == 0 && !dn.router,
	    "default pipe name: its pid");
	ok(ipc_default_pipe_parse("\\\\.\\pipe\\dotnet-diagnostic-7", 0,
	    &dn) == 1 && dn.pid == 7, "... with the \\\\.\\pipe\\ prefix");
	ok(ipc_default_pipe_parse("\\\\.\\PIPE\\DOTNET-Diagnostic-9", 0,
	    &dn) == 1 && dn.pid == 9, "... in any case, as Windows takes it");
	ok(ipc_default_pipe_parse("dotnet-diagnostic-dsrouter-17", 0, &dn) ==
	    0, "a router's pipe is not a runtime's");
	ok(ipc_default_pipe_parse("dotnet-diagnostic-dsrouter-17", 1, &dn) ==
	    1 && dn.pid == 17 && dn.router, "... but a router's, when asked");
	ok(ipc_default_pipe_parse("dotnet-diagnostic-0", 1, &dn) == 0 &&
	    ipc_default_pipe_parse("dotnet-diagnostic-012", 1, &dn) == 0 &&
	    ipc_default_pipe_parse("dotnet-diagnostic--1", 1, &dn) == 0 &&
	    ipc_default_pipe_parse("dotnet-diagnostic-", 1, &dn) == 0,
	    "no pid 0, no leading zero, no sign, no empty pid");
	ok(ipc_default_pipe_parse("dotnet-diagnostic-4294967297", 1, &dn) ==
	    0, "no pid beyond 32 bits");
	ok(ipc_default_pipe_parse("dotnet-diagnostic-12-34-socket", 1, &dn) ==
	    0 && ipc_default_pipe_parse("dotnet-diagnostic-12x", 1, &dn) == 0,
	    "nothing after the pid: a socket's name is not a pipe's");
	ok(ipc_default_pipe_parse("dsroute", 1, &dn) == 0 &&
	    ipc_default_pipe_parse("x\\dotnet-diagnostic-12", 1, &dn) == 0,
	    "other names");

	ok(ipc_pipe_name_plain("dotnet-diagnostic-12") &&
	    ipc_pipe_name_plain("MSSQL$X\\sql\\query") &&
	    ipc_pipe_name_plain("a.b c"), "plain pipe names");
	ok(!ipc_pipe_name_plain("dotnet-diagnostic-12.") &&
	    !ipc_pipe_name_plain("dotnet-diagnostic-12 ") &&
	    !ipc_pipe_name_plain("dotnet-diagnostic-12.. ."),
	    "not plain: a trailing dot or space, which Windows drops");
	ok(!ipc_pipe_name_plain("x\\..\\dotnet-diagnostic-12") &&
	    !ipc_pipe_name_plain(".\\dotnet-diagnostic-12") &&
	    !ipc_pipe_name_plain("dotnet-diagnostic-12\\.") &&
	    !ipc_pipe_name_plain("a\\\\b") &&
	    !ipc_pipe_name_plain("a\\") && !ipc_pipe_name_plain(""),
	    "not plain: a . or .. part, an empty one");
}

/* A reply under construction, written field by field as a runtime would. */
struct wire {
	uint8_t		 b[4096];
	size_t		 n;
};

static void
w_u8(struct wire *w, uint8_t v)
{
	w->b[w->n++] = v;
}

static void
w_u32(struct wire *w, uint32_t v)
{
	int	 i;

	for (i = 0; i < 4; i++)
		w_u8(w, (uint8_t)(v >> (8 * i)));
}

/* A protocol string of n UTF-16 units, given as they are (no NUL added). */
static void
w_units(struct wire *w, const uint16_t *u, size_t n)
{
	size_t	 i;

	w_u32(w, (uint32_t)n);
	for (i = 0; i < n; i++) {
		w_u8(w, u[i] & 0xff);
		w_u8(w, u[i] >> 8);
	}
}

/* A protocol string of ASCII text and its NUL; "" is written as count 0. */
static void
w_str(struct wire *w, const char *s)
{
	size_t	 i, n = strlen(s);

	if (n == 0) {
		w_u32(w, 0);
		return;
	}
	w_u32(w, (uint32_t)n + 1);
	for (i = 0; i <= n; i++) {
		w_u8(w, (uint8_t)s[i]);
		w_u8(w, 0);
	}
}

/* The OK header, pid 4242 and a cookie of 0xc0, 0xc1, ... */
static void
w_start(struct wire *w, uint8_t set, uint8_t id)
{
	int	 i;

	w->n = 0;
	for (i = 0; i < 14; i++)
		w_u8(w, magic[i]);
	w_u8(w, 0);			/* size, set by w_end */
	w_u8(w, 0);
	w_u8(w, set);
	w_u8(w, id);
	w_u8(w, 0);
	w_u8(w, 0);
	if (set == IPC_SET_SERVER && id == IPC_ID_OK) {
		w_u32(w, 4242);
		w_u32(w, 0);
		for (i = 0; i < IPC_COOKIE_LEN; i++)
			w_u8(w, (uint8_t)(0xc0 + i));
	}
}

static void
w_end(struct wire *w)
{
	w->b[14] = w->n & 0xff;
	w->b[15] = w->n >> 8;
}

/* A ProcessInfo2 reply whose command line is the given units. */
static void
w_info2_units(struct wire *w, const uint16_t *u, size_t n)
{
	w_start(w, IPC_SET_SERVER, IPC_ID_OK);
	w_units(w, u, n);
	w_str(w, "Linux");
	w_str(w, "x64");
	w_str(w, "");
	w_str(w, "10.0.0");
	w_end(w);
}

/* Parse the first len bytes of a reply from a copy of exactly that size. */
static int
parse_exact(const uint8_t *b, size_t len, int v2, struct process_info *pi,
    uint32_t *hresult)
{
	uint8_t	*copy;
	int	 rv;

	if ((copy = malloc(len == 0 ? 1 : len)) == NULL)
		abort();
	memcpy(copy, b, len);
	rv = ipc_process_info_parse(copy, len, v2, pi, hresult);
	free(copy);
	return (rv);
}

static void
test_process_info(void)
{
	static const uint8_t	 cookie[IPC_COOKIE_LEN] = {
		0xc0, 0xc1, 0xc2, 0xc3, 0xc4, 0xc5, 0xc6, 0xc7,
		0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xcd, 0xce, 0xcf
	};
	/* "a", U+1F600 as a surrogate pair, "b", NUL */
	static const uint16_t	 pair[] = { 'a', 0xd83d, 0xde00, 'b', 0 };
	/* a lone high, a lone low, a high before the NUL */
	static const uint16_t	 lone[] = { 0xd800, 'x', 0xdc00, 0xdbff, 0 };
	static const uint16_t	 ctl[] = { 'a', '\n', 0x1b, '[', 0x7f, 0x9b,
	    0xe9, 0 };
	static const uint16_t	 nul[] = { 'a', 'b', 0, 'c', 0 };
	static const uint16_t	 nonul[] = { 'a', 'b' };
	static uint16_t		 big[1100];
	struct process_info	 pi;
	struct wire		 w, w1;
	uint32_t		 hresult = 0;
	uint8_t			 frame[24];
	size_t			 i, len;
	int			 all;

	w_start(&w, IPC_SET_SERVER, IPC_ID_OK);
	w_str(&w, "/usr/bin/dotnet /app/MyApp.dll --port 5");
	w_str(&w, "Linux");
	w_str(&w, "x64");
	w_str(&w, "MyApp");
	w_str(&w, "10.0.0");
	w_end(&w);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 && pi.pid == 4242 &&
	    memcmp(pi.cookie, cookie, IPC_COOKIE_LEN) == 0,
	    "ProcessInfo2: pid and cookie");
	ok(strcmp(pi.cmdline, "/usr/bin/dotnet /app/MyApp.dll --port 5") ==
	    0 && strcmp(pi.os, "Linux") == 0 && strcmp(pi.arch, "x64") == 0 &&
	    strcmp(pi.assembly, "MyApp") == 0 &&
	    strcmp(pi.version, "10.0.0") == 0,
	    "ProcessInfo2: its five strings");
	ok(parse_exact(w.b, w.n, 0, &pi, &hresult) == -1 &&
	    pi.cmdline[0] == '\0' && pi.pid == 0,
	    "ProcessInfo2 read as ProcessInfo: rejected, nothing kept");
	memcpy(w.b + w.n, "trailing", 8);
	ok(parse_exact(w.b, w.n + 8, 1, &pi, &hresult) == 0 &&
	    strcmp(pi.version, "10.0.0") == 0,
	    "bytes after the header's size are not read");

	all = 1;
	for (len = 0; len < w.n; len++)
		all &= parse_exact(w.b, len, 1, &pi, &hresult) == -1;
	ok(all, "ProcessInfo2 cut at every length: rejected");
	all = 1;
	memcpy(&w1, &w, sizeof(w));
	for (len = IPC_HEADER_LEN; len < w.n; len++) {
		w1.b[14] = len & 0xff;
		w1.b[15] = len >> 8;
		all &= parse_exact(w1.b, len, 1, &pi, &hresult) == -1 &&
		    pi.cmdline[0] == '\0';
	}
	ok(all, "... and when its size says it is that short");

	w_start(&w1, IPC_SET_SERVER, IPC_ID_OK);
	w_str(&w1, "/app/MyApp");
	w_str(&w1, "Linux");
	w_str(&w1, "arm64");
	w_end(&w1);
	ok(parse_exact(w1.b, w1.n, 0, &pi, &hresult) == 0 &&
	    pi.pid == 4242 && strcmp(pi.cmdline, "/app/MyApp") == 0 &&
	    strcmp(pi.arch, "arm64") == 0 && pi.assembly[0] == '\0' &&
	    pi.version[0] == '\0', "ProcessInfo: three strings");
	ok(parse_exact(w1.b, w1.n, 1, &pi, &hresult) == -1,
	    "ProcessInfo read as ProcessInfo2: rejected");
	w_start(&w1, IPC_SET_SERVER, IPC_ID_OK);
	w_str(&w1, "");
	w_str(&w1, "");
	w_str(&w1, "");
	w_end(&w1);
	ok(parse_exact(w1.b, w1.n, 0, &pi, &hresult) == 0 &&
	    pi.cmdline[0] == '\0' && pi.os[0] == '\0',
	    "count 0: an empty string");

	ipc_error_frame(frame, HRESULT_UNKNOWN_COMMAND);
	hresult = 0;
	ok(parse_exact(frame, 24, 1, &pi, &hresult) == 1 &&
	    hresult == HRESULT_UNKNOWN_COMMAND,
	    "error frame: 1 and its HRESULT (ProcessInfo2 unknown)");
	w_start(&w1, IPC_SET_PROCESS, IPC_ID_PROCESS_INFO2);
	w_end(&w1);
	ok(parse_exact(w1.b, w1.n, 1, &pi, &hresult) == -1,
	    "a request, not a reply: rejected");

	/* The count of the command line, made larger than what follows. */
	memcpy(&w1, &w, sizeof(w));
	w1.b[44] = 0xff;
	w1.b[45] = 0xff;
	w1.b[46] = 0xff;
	w1.b[47] = 0xff;
	ok(parse_exact(w1.b, w1.n, 1, &pi, &hresult) == -1,
	    "string count 0xffffffff: rejected");
	w1.b[44] = 0x00;
	w1.b[45] = 0x00;
	w1.b[46] = 0x00;
	w1.b[47] = 0x80;
	ok(parse_exact(w1.b, w1.n, 1, &pi, &hresult) == -1,
	    "string count 2^31, twice that 2^32: rejected");
	w1.b[44] = 0x5d;		/* 93 units where 40 are */
	w1.b[47] = 0x00;
	ok(parse_exact(w1.b, w1.n, 1, &pi, &hresult) == -1,
	    "string count into the next strings and beyond: rejected");

	w_info2_units(&w, nonul, 2);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == -1,
	    "a string without its NUL: rejected");
	w_info2_units(&w, nul, 5);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 &&
	    strcmp(pi.cmdline, "ab") == 0 && strcmp(pi.os, "Linux") == 0,
	    "an embedded NUL ends the text; the next string is still found");
	w_info2_units(&w, pair, 5);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 &&
	    strcmp(pi.cmdline, "a\xf0\x9f\x98\x80" "b") == 0,
	    "a surrogate pair: one 4-byte UTF-8 character");
	w_info2_units(&w, lone, 5);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 &&
	    strcmp(pi.cmdline, "?x??") == 0, "unpaired surrogates: '?'");
	w_info2_units(&w, ctl, 8);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 &&
	    strcmp(pi.cmdline, "a??[??\xc3\xa9") == 0,
	    "LF, ESC, DEL and C1 CSI: '?'; U+00E9 kept");

	/* 1021 ASCII, then U+20AC (3 bytes): 1024 with the NUL. */
	for (i = 0; i < 1021; i++)
		big[i] = 'a';
	big[1021] = 0x20ac;
	big[1022] = 0;
	w_info2_units(&w, big, 1023);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 &&
	    strlen(pi.cmdline) == 1021 && pi.cmdline[1020] == 'a',
	    "too long by one byte: cut before the character, not inside");
	big[1020] = 0x20ac;
	big[1021] = 0;
	w_info2_units(&w, big, 1022);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 &&
	    strlen(pi.cmdline) == 1023 &&
	    strcmp(pi.cmdline + 1020, "\xe2\x82\xac") == 0,
	    "a character that just fits is kept");
	for (i = 0; i < 1099; i++)
		big[i] = 0xd83d + (i % 2) * (0xde00 - 0xd83d);
	big[1099] = 0;
	w_info2_units(&w, big, 1100);
	ok(parse_exact(w.b, w.n, 1, &pi, &hresult) == 0 &&
	    strlen(pi.cmdline) == 1020 && strcmp(pi.os, "Linux") == 0,
	    "549 4-byte characters: 255 kept, the rest skipped");
}

/* The name of the app a ProcessInfo describes. */
static void
test_process_info_name(void)
{
	static const struct {
		const char	*assembly;
		const char	*cmdline;
		const char	*name;
	} cases[] = {
		{ "MyApp", "/usr/bin/dotnet /app/MyApp.dll", "MyApp" },
		{ "", "/usr/bin/dotnet /app/MyApp.dll --port 5", "MyApp" },
		{ "", "dotnet app.dll", "app" },
		{ "", "dotnet exec --runtimeconfig a.json /srv/Web.Api.dll",
		    "Web.Api" },
		{ "", "dotnet", "dotnet" },
		{ "", "/usr/share/dotnet/dotnet --info", "dotnet" },
		{ "", "/app/dsapp", "dsapp" },
		{ "", "  /app/dsapp   /app/dsapp.dll", "dsapp" },
		{ "", "\"C:\\Program Files\\dotnet\\dotnet.exe\" "
		    "\"C:\\My Apps\\Hello World.dll\" x", "Hello_World" },
		{ "", "\"/opt/my app/My App\" --x", "My_App" },
		{ "", "C:\\apps\\Tool.EXE", "Tool" },
		{ "", "\"/unterminated/qu ote", "qu_ote" },
		{ "", "", "dotnet" },
		{ "", "   ", "dotnet" },
		{ "", "/", "dotnet" },
		{ "", "/x/.dll", "dotnet" },
		{ "", "-rf", "_rf" },
		{ "", "/tmp/.hidden", "_hidden" },
		{ "Caf\xc3\xa9 \xf0\x9f\x98\x80!", "", "Caf____" },
		{ "x$(id)`;|&*?", "", "x__id_______" },
		{ "..", "", "_." },
		{ "\xc3\xa9", "", "_" },
		{ "\x80\x80", "", "dotnet" },
	};
	struct process_info	 pi;
	char			 name[64];
	size_t			 i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&pi, 0, sizeof(pi));
		snprintf(pi.assembly, sizeof(pi.assembly), "%s",
		    cases[i].assembly);
		snprintf(pi.cmdline, sizeof(pi.cmdline), "%s",
		    cases[i].cmdline);
		ipc_process_info_name(&pi, name, sizeof(name));
		ok(strcmp(name, cases[i].name) == 0, "name of [%s] [%s]: %s "
		    "(got %s)", cases[i].assembly, cases[i].cmdline,
		    cases[i].name, name);
	}
	memset(&pi, 0, sizeof(pi));
	ipc_process_info_name(&pi, name, 4);
	ok(strcmp(name, "dot") == 0, "cut to the buffer");
	memset(name, 'x', sizeof(name));
	ipc_process_info_name(&pi, name, 0);
	ok(name[0] == 'x', "a buffer of 0 bytes is not written");
}

/* The first bytes of a reply, as a router reads the runtime's answer. */
static void
test_replies(void)
{
	uint8_t		 frame[24], ok_reply[28];
	uint32_t	 hresult = 0;
	size_t		 i;
	int		 more = 1;

	ipc_error_frame(frame, HRESULT_ACCESS_DENIED);
	ok(ipc_reply_classify(frame, 24, &hresult) == REPLY_ERROR &&
	    hresult == HRESULT_ACCESS_DENIED, "an error frame and its HRESULT");
	for (i = 0; i < 24; i++)
		more &= ipc_reply_classify(frame, i, &hresult) == REPLY_MORE;
	ok(more, "fewer than 24 bytes of an error frame: more needed");

	memcpy(ok_reply, frame, 20);
	ok_reply[14] = 28;
	ok_reply[17] = IPC_ID_OK;
	ok(ipc_reply_classify(ok_reply, 20, &hresult) == REPLY_OK,
	    "an OK is known from its header");
	ok(ipc_reply_classify((const uint8_t *)"Nettrace", 8, &hresult) ==
	    REPLY_OTHER, "bytes of no header of ours: other, at once");
	ok_reply[16] = IPC_SET_PROCESS;
	ok(ipc_reply_classify(ok_reply, 20, &hresult) == REPLY_OTHER,
	    "a header of another command set: other");
	frame[14] = 20;
	ok(ipc_reply_classify(frame, 24, &hresult) == REPLY_OTHER,
	    "an error frame too short for its HRESULT: other");
	ok(strcmp(ipc_hresult_name(HRESULT_ACCESS_DENIED), "access denied")
	    == 0 && ipc_hresult_name(0x80004005) == NULL,
	    "the protocol's HRESULTs have names");
}

int
main(void)
{
	test_greetings();
	test_frames();
	test_replies();
	test_names();
	test_process_info();
	test_process_info_name();
	return (tap_done());
}
