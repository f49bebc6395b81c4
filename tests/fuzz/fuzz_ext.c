/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the extension codec of ext.c, which reads a peer router's bytes:
 * the input is read as the answer to a LIST, message after message, and
 * as a whole first message of a request.
 *
 * The harness asserts, independently of ext.c:
 * - a message parsed never claims more bytes than were given, and at
 *   least a header: its used length is its header's size field; MORE
 *   only while fewer bytes than that size (or than a header) are there;
 * - an ENTRY's strings are NUL-terminated within their fields, well-formed
 *   UTF-8 with no control character (C0, DEL, C1);
 * - an ENTRY rebuilt with ext_entry_build and parsed again gives the same
 *   fields, and the rebuilt message is what its size says;
 * - the same input gives the same result twice;
 * - a request accepted has a known id, a version other than 0, and a size
 *   within the input, and its cookie is the bytes after the version;
 * - an answer to WARM taken is an OK of its size, its wait the u32 after
 *   the version; one refused carries an HRESULT only from an error frame.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/ext.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(cond, what) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_ext: %s\n", what);		\
		abort();						\
	}								\
} while (0)

static uint8_t	 rebuilt[IPC_MESSAGE_MAX];

static size_t
size_of(const uint8_t *p)
{
	return ((size_t)p[14] | (size_t)p[15] << 8);
}

/* Check a string: terminated in its field, UTF-8, no control character. */
static void
check_string(const char *s, size_t field)
{
	const unsigned char	*p = (const unsigned char *)s;
	size_t			 n, i, k, j;

	CHECK(memchr(s, '\0', field) != NULL, "string not terminated");
	n = strlen(s);
	for (i = 0; i < n; i += k) {
		CHECK(p[i] >= 0x20 && p[i] != 0x7f, "C0 or DEL in a string");
		if (p[i] < 0x80)
			k = 1;
		else if (p[i] >= 0xc2 && p[i] <= 0xdf)
			k = 2;
		else if (p[i] >= 0xe0 && p[i] <= 0xef)
			k = 3;
		else {
			CHECK(p[i] >= 0xf0 && p[i] <= 0xf4, "bad UTF-8 lead");
			k = 4;
		}
		CHECK(i + k <= n, "UTF-8 character cut");
		for (j = 1; j < k; j++)
			CHECK((p[i + j] & 0xc0) == 0x80, "bad continuation");
		CHECK(!(p[i] == 0xc2 && p[i + 1] < 0xa0), "C1 in a string");
		CHECK(!(p[i] == 0xe0 && p[i + 1] < 0xa0), "overlong form");
		CHECK(!(p[i] == 0xed && p[i + 1] > 0x9f), "surrogate");
		CHECK(!(p[i] == 0xf0 && p[i + 1] < 0x90), "overlong form");
		CHECK(!(p[i] == 0xf4 && p[i + 1] > 0x8f), "past U+10FFFF");
	}
}

static void
check_entry(const struct ext_runtime *er)
{
	struct ext_runtime	 back;
	size_t			 n, used;
	uint32_t		 count, hr;

	check_string(er->app, sizeof(er->app));
	check_string(er->cmdline, sizeof(er->cmdline));
	check_string(er->os, sizeof(er->os));
	check_string(er->arch, sizeof(er->arch));
	check_string(er->version, sizeof(er->version));
	check_string(er->where, sizeof(er->where));

	n = ext_entry_build(rebuilt, sizeof(rebuilt), er);
	CHECK(n >= IPC_HEADER_LEN && n == size_of(rebuilt), "rebuilt size");
	CHECK(rebuilt[16] == EXT_SET && rebuilt[17] == EXT_ID_ENTRY,
	    "rebuilt header");
	CHECK(ext_reply_parse(rebuilt, n, &used, &back, &count, &hr) ==
	    EXT_REPLY_ENTRY && used == n, "rebuilt entry not parsed");
	CHECK(memcmp(er->cookie, back.cookie, IPC_COOKIE_LEN) == 0 &&
	    er->pid == back.pid && er->found == back.found &&
	    er->hops == back.hops, "rebuilt fixed fields differ");
	CHECK(strcmp(er->app, back.app) == 0 &&
	    strcmp(er->cmdline, back.cmdline) == 0 &&
	    strcmp(er->os, back.os) == 0 && strcmp(er->arch, back.arch) == 0 &&
	    strcmp(er->version, back.version) == 0 &&
	    strcmp(er->where, back.where) == 0, "rebuilt strings differ");
}

static void
replies(const uint8_t *p, size_t len)
{
	static struct ext_runtime	 er, again;
	enum ext_reply_kind		 kind;
	size_t				 used, used2;
	uint32_t			 count, hr, count2, hr2;

	while (len > 0) {
		count = hr = count2 = hr2 = 0;
		kind = ext_reply_parse(p, len, &used, &er, &count, &hr);
		CHECK(ext_reply_parse(p, len, &used2, &again, &count2, &hr2) ==
		    kind && used2 == used && count2 == count && hr2 == hr &&
		    memcmp(&er, &again, sizeof(er)) == 0, "not repeatable");
		switch (kind) {
		case EXT_REPLY_MORE:
			CHECK(len < IPC_HEADER_LEN || len < size_of(p),
			    "more wanted of a whole message");
			return;
		case EXT_REPLY_INVALID:
			return;
		case EXT_REPLY_ENTRY:
			check_entry(&er);
			/* FALLTHROUGH */
		case EXT_REPLY_END:
		case EXT_REPLY_ERROR:
			CHECK(used >= IPC_HEADER_LEN && used <= len &&
			    used == size_of(p), "used length");
			break;
		}
		if (kind == EXT_REPLY_ERROR)
			CHECK(p[16] == 0xff && p[17] == 0xff && used >= 24,
			    "an error frame");
		if (kind == EXT_REPLY_END)
			CHECK(p[16] == 0xff && p[17] == 0x00 &&
			    used >= EXT_END_LEN, "an END");
		p += used;
		len -= used;
	}
}

static void
request(const uint8_t *p, size_t len)
{
	struct ext_request	 req;

	if (ext_request_parse(p, len, &req) == -1)
		return;
	CHECK(len >= IPC_HEADER_LEN && size_of(p) <= len, "request size");
	CHECK(p[16] == EXT_SET, "request set");
	CHECK(req.version != 0 && req.version == (p[20] | p[21] << 8),
	    "request version");
	if (req.id == EXT_ID_SELECT)
		CHECK(size_of(p) >= EXT_SELECT_LEN &&
		    memcmp(req.cookie, p + 22, IPC_COOKIE_LEN) == 0,
		    "SELECT cookie");
	else if (req.id == EXT_ID_WARM)
		CHECK(size_of(p) >= EXT_WARM_LEN, "WARM size");
	else
		CHECK(req.id == EXT_ID_LIST && size_of(p) >= EXT_LIST_LEN,
		    "request id");
}

/* The answer to WARM: whole only as an OK of its size, with its fields. */
static void
warm_answer(const uint8_t *p, size_t len)
{
	uint32_t	 keep = 0, hresult = 0;
	int		 rv;

	rv = ext_warm_answer_parse(p, len, &keep, &hresult);
	if (rv > 0) {
		CHECK((size_t)rv == size_of(p) && (size_t)rv <= len &&
		    rv >= EXT_WARM_ANSWER_LEN, "WARM answer size");
		CHECK(p[16] == 0xff && p[17] == 0x00, "WARM answer not an OK");
		CHECK(keep == ((uint32_t)p[22] | (uint32_t)p[23] << 8 |
		    (uint32_t)p[24] << 16 | (uint32_t)p[25] << 24),
		    "WARM answer's wait");
		CHECK(hresult == 0, "an OK with an HRESULT");
	} else if (rv == 0)
		CHECK(len < IPC_HEADER_LEN || len < size_of(p) ||
		    (p[17] == 0xff && len < IPC_HEADER_LEN + 4),
		    "more wanted of a whole WARM answer");
	else if (hresult != 0)
		CHECK(len >= IPC_HEADER_LEN + 4 && p[17] == 0xff,
		    "an HRESULT from no error frame");
	CHECK(ext_warm_answer_parse(p, len, &keep, &hresult) == rv,
	    "WARM answer: another result the second time");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	replies(data, size);
	request(data, size);
	warm_answer(data, size);
	return (0);
}
