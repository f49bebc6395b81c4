/* SPDX-License-Identifier: ISC */

/* Unit tests of the extension command set between routers (ext.c). */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ipc.h"
#include "router/ext.h"
#include "tap.h"

static const uint8_t	 magic[14] = "DOTNET_IPC_V1";
static const uint8_t	 cookie[IPC_COOKIE_LEN] = {
	0x10, 0x21, 0x32, 0x43, 0x54, 0x65, 0x76, 0x87,
	0x98, 0xa9, 0xba, 0xcb, 0xdc, 0xed, 0xfe, 0x0f
};

static uint16_t
get16(const uint8_t *p)
{
	return ((uint16_t)(p[0] | p[1] << 8));
}

static void
set16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

/* A runtime with every field set. */
static void
sample(struct ext_runtime *er)
{
	memset(er, 0, sizeof(*er));
	memcpy(er->cookie, cookie, sizeof(cookie));
	er->pid = 0x0102030405060708ULL;
	er->found = EXT_FOUND_LINK;
	er->hops = 2;
	snprintf(er->app, sizeof(er->app), "webapi");
	snprintf(er->cmdline, sizeof(er->cmdline),
	    "/usr/bin/dotnet /srv/webapi.dll --urls http://*:80 \xc3\xa9t\xc3\xa9");
	snprintf(er->os, sizeof(er->os), "Linux");
	snprintf(er->arch, sizeof(er->arch), "x64");
	snprintf(er->version, sizeof(er->version), "10.0.1");
	snprintf(er->where, sizeof(er->where), "tls:0.0.0.0:6000");
}

static int
same(const struct ext_runtime *a, const struct ext_runtime *b)
{
	return (memcmp(a->cookie, b->cookie, IPC_COOKIE_LEN) == 0 &&
	    a->pid == b->pid && a->found == b->found && a->hops == b->hops &&
	    strcmp(a->app, b->app) == 0 && strcmp(a->cmdline, b->cmdline) == 0 &&
	    strcmp(a->os, b->os) == 0 && strcmp(a->arch, b->arch) == 0 &&
	    strcmp(a->version, b->version) == 0 &&
	    strcmp(a->where, b->where) == 0);
}

static void
test_requests(void)
{
	struct ext_request	 req;
	uint8_t			 list[EXT_LIST_LEN], sel[EXT_SELECT_LEN];
	uint8_t			 big[64];

	ext_list_request(list);
	ok(memcmp(list, magic, 14) == 0 && get16(list + 14) == EXT_LIST_LEN &&
	    list[16] == 0xd5 && list[17] == 0x01 && get16(list + 18) == 0 &&
	    get16(list + 20) == 1, "LIST on the wire");
	ok(ext_request_parse(list, sizeof(list), &req) == 0 &&
	    req.id == EXT_ID_LIST && req.version == EXT_VERSION,
	    "LIST parsed back");
	ok(ext_request_parse(list, sizeof(list) - 1, &req) == -1,
	    "LIST shorter than its size refused");

	ext_select_request(sel, cookie);
	ok(get16(sel + 14) == EXT_SELECT_LEN && sel[17] == 0x02 &&
	    memcmp(sel + 22, cookie, 16) == 0, "SELECT on the wire");
	ok(ext_request_parse(sel, sizeof(sel), &req) == 0 &&
	    req.id == EXT_ID_SELECT && req.version == 1 &&
	    memcmp(req.cookie, cookie, 16) == 0, "SELECT parsed back");

	/* A later version's SELECT with more fields: the first ones count. */
	memset(big, 0xee, sizeof(big));
	memcpy(big, sel, sizeof(sel));
	set16(big + 14, sizeof(big));
	set16(big + 20, 7);
	ok(ext_request_parse(big, sizeof(big), &req) == 0 && req.version == 7 &&
	    memcmp(req.cookie, cookie, 16) == 0, "v7 SELECT with more read");

	/* A SELECT whose size leaves out part of the cookie. */
	memcpy(big, sel, sizeof(sel));
	set16(big + 14, EXT_SELECT_LEN - 1);
	ok(ext_request_parse(big, sizeof(sel), &req) == -1,
	    "SELECT without its whole cookie refused");

	memcpy(big, list, sizeof(list));
	big[17] = 0x03;
	ok(ext_request_parse(big, sizeof(list), &req) == -1,
	    "ENTRY as a request refused");
	big[17] = 0x7f;
	ok(ext_request_parse(big, sizeof(list), &req) == -1,
	    "unknown request id refused");

	memcpy(big, list, sizeof(list));
	set16(big + 20, 0);
	ok(ext_request_parse(big, sizeof(list), &req) == -1,
	    "request of version 0 refused");

	memcpy(big, list, sizeof(list));
	big[16] = IPC_SET_PROCESS;
	ok(ext_request_parse(big, sizeof(list), &req) == -1,
	    "another command set refused");
	memcpy(big, list, sizeof(list));
	big[18] = 1;
	ok(ext_request_parse(big, sizeof(list), &req) == -1,
	    "reserved not zero refused");
	memcpy(big, list, sizeof(list));
	big[3] = 'x';
	ok(ext_request_parse(big, sizeof(list), &req) == -1,
	    "wrong magic refused");
	ok(ext_request_parse(list, 19, &req) == -1, "a part header refused");
}

static void
test_round_trip(void)
{
	struct ext_runtime	 er, back;
	enum ext_reply_kind	 kind;
	static uint8_t		 buf[IPC_MESSAGE_MAX];
	uint8_t			 end[EXT_END_LEN], err[24];
	size_t			 n, used;
	uint32_t		 count = 0, hr = 0;

	sample(&er);
	n = ext_entry_build(buf, sizeof(buf), &er);
	ok(n == get16(buf + 14) && buf[16] == 0xd5 && buf[17] == 0x03 &&
	    get16(buf + 20) == 1, "ENTRY header");
	kind = ext_reply_parse(buf, n, &used, &back, &count, &hr);
	ok(kind == EXT_REPLY_ENTRY && used == n && same(&er, &back),
	    "ENTRY round trip");

	/* Two messages in a row: only the first is read. */
	ext_end_build(buf + n, 3);
	kind = ext_reply_parse(buf, n + EXT_END_LEN, &used, &back, &count, &hr);
	ok(kind == EXT_REPLY_ENTRY && used == n, "ENTRY then END: ENTRY");
	kind = ext_reply_parse(buf + n, EXT_END_LEN, &used, &back, &count,
	    &hr);
	ok(kind == EXT_REPLY_END && used == EXT_END_LEN && count == 3,
	    "END round trip");

	ext_end_build(end, 0x01020304);
	ok(get16(end + 14) == 26 && end[16] == 0xff && end[17] == 0 &&
	    get16(end + 20) == 1 && end[22] == 4 && end[25] == 1,
	    "END on the wire");
	set16(end + 20, 0);
	ok(ext_reply_parse(end, sizeof(end), &used, &back, &count, &hr) ==
	    EXT_REPLY_INVALID, "END of version 0 invalid");

	ipc_error_frame(err, HRESULT_UNKNOWN_COMMAND);
	kind = ext_reply_parse(err, sizeof(err), &used, &back, &count, &hr);
	ok(kind == EXT_REPLY_ERROR && used == 24 &&
	    hr == HRESULT_UNKNOWN_COMMAND, "an error frame is a refusal");
	ok(ext_reply_parse(err, 23, &used, &back, &count, &hr) ==
	    EXT_REPLY_MORE, "a part error frame wants more");

	/* A bare OK: what a runtime answers to some commands, not an END. */
	ipc_request(err, IPC_SET_SERVER, IPC_ID_OK);
	ok(ext_reply_parse(err, 20, &used, &back, &count, &hr) ==
	    EXT_REPLY_INVALID, "an OK without a payload is no END");

	memset(&er, 0, sizeof(er));
	n = ext_entry_build(buf, sizeof(buf), &er);
	ok(n == EXT_ENTRY_MIN, "an empty entry is %d bytes", EXT_ENTRY_MIN);
	ok(ext_reply_parse(buf, n, &used, &back, &count, &hr) ==
	    EXT_REPLY_ENTRY && same(&er, &back), "an empty entry round trip");
	ok(ext_entry_build(buf, EXT_ENTRY_MIN - 1, &er) == 0,
	    "a buffer too small for the entry");
}

/* Every prefix of an entry wants more; a size that lies is invalid. */
static void
test_truncation(void)
{
	struct ext_runtime	 er, back;
	static uint8_t		 buf[2048], lie[2048];
	size_t			 n, i, used, bad = 0;
	uint32_t		 count, hr;

	sample(&er);
	n = ext_entry_build(buf, sizeof(buf), &er);
	for (i = 0; i < n; i++) {
		if (ext_reply_parse(buf, i, &used, &back, &count, &hr) !=
		    EXT_REPLY_MORE)
			bad++;
	}
	ok(bad == 0, "each of the %zu prefixes wants more", n);

	/* The size cut anywhere inside the fields: the strings overrun it. */
	bad = 0;
	for (i = EXT_ENTRY_MIN; i < n; i++) {
		memcpy(lie, buf, n);
		set16(lie + 14, (uint16_t)i);
		if (ext_reply_parse(lie, n, &used, &back, &count, &hr) !=
		    EXT_REPLY_INVALID)
			bad++;
	}
	ok(bad == 0, "each size shorter than the fields is invalid");

	/* A size below v1's fixed fields: invalid once the header is in. */
	bad = 0;
	for (i = IPC_HEADER_LEN; i < EXT_ENTRY_MIN; i++) {
		memcpy(lie, buf, n);
		set16(lie + 14, (uint16_t)i);
		if (ext_reply_parse(lie, IPC_HEADER_LEN, &used, &back, &count,
		    &hr) != EXT_REPLY_INVALID)
			bad++;
	}
	ok(bad == 0, "a frame shorter than v1's fields is invalid");

	memcpy(lie, buf, n);
	set16(lie + 14, 19);
	ok(ext_reply_parse(lie, n, &used, &back, &count, &hr) ==
	    EXT_REPLY_INVALID, "a size below the header is invalid");
	memcpy(lie, buf, n);
	set16(lie + 20, 0);
	ok(ext_reply_parse(lie, n, &used, &back, &count, &hr) ==
	    EXT_REPLY_INVALID, "an entry of version 0 is invalid");
	memcpy(lie, buf, n);
	lie[0] = 'X';
	ok(ext_reply_parse(lie, 1, &used, &back, &count, &hr) ==
	    EXT_REPLY_INVALID, "a wrong first byte is invalid at once");
	memcpy(lie, buf, n);
	lie[17] = EXT_ID_LIST;
	ok(ext_reply_parse(lie, n, &used, &back, &count, &hr) ==
	    EXT_REPLY_INVALID, "a request among the answers is invalid");
}

/* A later version's entry: more bytes after the strings, ignored. */
static void
test_later_version(void)
{
	struct ext_runtime	 er, back;
	static uint8_t		 buf[2048];
	size_t			 n, used;
	uint32_t		 count, hr;

	sample(&er);
	n = ext_entry_build(buf, sizeof(buf), &er);
	memset(buf + n, 0xa5, 40);
	set16(buf + 14, (uint16_t)(n + 40));
	set16(buf + 20, 2);
	ok(ext_reply_parse(buf, n + 40, &used, &back, &count, &hr) ==
	    EXT_REPLY_ENTRY && used == n + 40 && same(&er, &back),
	    "a v2 entry's extra bytes are ignored");
	ok(ext_reply_parse(buf, n + 39, &used, &back, &count, &hr) ==
	    EXT_REPLY_MORE, "...and waited for");

	back.found = 9;
	er.found = 9;
	n = ext_entry_build(buf, sizeof(buf), &er);
	ok(ext_reply_parse(buf, n, &used, &back, &count, &hr) ==
	    EXT_REPLY_ENTRY && back.found == 9 && ext_found_name(9) == NULL,
	    "an unknown way of finding is kept, unnamed");
	ok(strcmp(ext_found_name(EXT_FOUND_ADVERTISE), "advertise") == 0 &&
	    strcmp(ext_found_name(EXT_FOUND_PROC), "proc") == 0,
	    "found names");
}

/*
 * The command line is cut to fit, at a character boundary.  With the
 * struct's fields an entry stays far below 65535 bytes, so the cut is
 * shown against a smaller buffer.
 */
static void
test_cut(void)
{
	struct ext_runtime	 er, back;
	static uint8_t		 buf[IPC_MESSAGE_MAX + 100];
	size_t			 n, i, used, fixed, len, bad = 0;
	uint32_t		 count, hr;

	sample(&er);
	/* "é" is two bytes: every other cut point falls inside one. */
	for (i = 0; i + 2 < sizeof(er.cmdline); i += 2)
		memcpy(er.cmdline + i, "\xc3\xa9", 2);
	er.cmdline[i] = '\0';
	memset(er.app, 'a', sizeof(er.app) - 1);
	memset(er.where, 'w', sizeof(er.where) - 1);
	memset(er.version, 'v', sizeof(er.version) - 1);

	n = ext_entry_build(buf, sizeof(buf), &er);
	ok(n > 0 && n <= IPC_MESSAGE_MAX && n == get16(buf + 14),
	    "the longest entry fits its size (%zu bytes)", n);
	ok(ext_reply_parse(buf, n, &used, &back, &count, &hr) ==
	    EXT_REPLY_ENTRY && same(&er, &back), "...and is not cut");

	fixed = n - strlen(er.cmdline);
	for (len = fixed; len < n; len++) {
		memset(buf, 0, sizeof(buf));
		i = ext_entry_build(buf, len, &er);
		if (i == 0 || i > len || i + 1 < len ||
		    ext_reply_parse(buf, i, &used, &back, &count, &hr) !=
		    EXT_REPLY_ENTRY || strlen(back.cmdline) % 2 != 0 ||
		    strncmp(back.cmdline, er.cmdline,
		    strlen(back.cmdline)) != 0 || strcmp(back.app, er.app) != 0 ||
		    strcmp(back.where, er.where) != 0)
			bad++;
	}
	ok(bad == 0, "cut to each buffer length at a character boundary");
	ok(ext_entry_build(buf, fixed - 1, &er) == 0,
	    "no room even for an empty command line: 0");
}

/* A peer's strings: control bytes and bad UTF-8 become '?'. */
static void
test_strings(void)
{
	struct ext_runtime	 back;
	static uint8_t		 buf[4096];
	const char		*app = "a\x1b[2Jb\x7f\x00z";
	const char		*cmd = "\xc3\xa9\xff\xc3(\xed\xa0\x80\xc2\x9b"
				    "\xf0\x9f\x98\x80\xe2\x82";
	size_t			 off, used, i;
	uint32_t		 count, hr;
	struct ext_runtime	 er;

	memset(&er, 0, sizeof(er));
	(void)ext_entry_build(buf, sizeof(buf), &er);
	/* Rewrite the first two strings by hand. */
	off = IPC_HEADER_LEN + 28;
	set16(buf + off, 9);
	memcpy(buf + off + 2, app, 9);
	off += 11;
	set16(buf + off, 16);
	memcpy(buf + off + 2, cmd, 16);
	off += 18;
	for (i = 0; i < 4; i++, off += 2)
		set16(buf + off, 0);
	set16(buf + 14, (uint16_t)off);
	ok(ext_reply_parse(buf, off, &used, &back, &count, &hr) ==
	    EXT_REPLY_ENTRY, "an entry with hostile strings parses");
	ok(strcmp(back.app, "a?[2Jb??z") == 0, "control bytes replaced: %s",
	    back.app);
	ok(strcmp(back.cmdline, "\xc3\xa9?" "?(????\xf0\x9f\x98\x80??") == 0,
	    "bad UTF-8, surrogates and C1 replaced: %s", back.cmdline);

	/* A long where is cut to its field, whole characters only. */
	memset(&er, 0, sizeof(er));
	(void)ext_entry_build(buf, sizeof(buf), &er);
	off = IPC_HEADER_LEN + 28 + 2 * 5;
	set16(buf + off, 300);
	for (i = 0; i < 150; i++)
		memcpy(buf + off + 2 + 2 * i, "\xc3\xa9", 2);
	off += 302;
	set16(buf + 14, (uint16_t)off);
	ok(ext_reply_parse(buf, off, &used, &back, &count, &hr) ==
	    EXT_REPLY_ENTRY && strlen(back.where) == 126,
	    "a long string cut at a character boundary");
}

int
main(void)
{
	test_requests();
	test_round_trip();
	test_truncation();
	test_later_version();
	test_cut();
	test_strings();
	return (tap_done());
}
