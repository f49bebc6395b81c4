/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the WebSocket parsers of ws_frame.c, which read a peer's bytes
 * before anything else does.  The first byte picks what the rest is:
 *
 *	0, 1	frames, as a listener (masked) or a dialler reads them
 *	2	an upgrade request for the path /diag
 *	3	a server's answer to the key dGhlIHNhbXBsZSBub25jZQ==
 *
 * The harness asserts, independently of ws_frame.c:
 * - a frame header accepted is exactly what ws_frame_head() writes for
 *   what was read (so the shortest length form, no reserved bits, a
 *   known opcode), its payload within the bound, a control frame final
 *   and of 125 bytes at most, masked as the role requires; a header not
 *   yet complete is shorter than 14 bytes; a refusal is 1002 or 1009,
 *   with a reason;
 * - masking twice, from any offset, gives the bytes back;
 * - an accepted request ends at an empty line within the input, for the
 *   path asked, with a Host and a well-formed key, and the host taken
 *   from its Origin is followed by nothing or a port; a refusal is one
 *   of the statuses the router answers, with a reason;
 * - an accepted answer ends within the input and carries the right
 *   Sec-WebSocket-Accept, which for RFC 6455's sample key is the RFC's.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transports/ws_frame.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(cond, what) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_ws: %s\n", what);			\
		abort();						\
	}								\
} while (0)

#define BOUND		(1024 * 1024)
#define SAMPLE_KEY	"dGhlIHNhbXBsZSBub25jZQ=="
#define SAMPLE_ACCEPT	"s3pPLMBiTxaQ9kYGzzhZRbK+xOo="

static void
frames(const uint8_t *p, size_t len, int masked)
{
	struct ws_frame	 f;
	uint8_t		 head[WS_HEAD_MAX], copy[64];
	const char	*why;
	size_t		 n, i;
	int		 rv, code;

	while (len > 0) {
		why = NULL;
		rv = ws_frame_parse(p, len, masked, BOUND, &f, &code, &why);
		if (rv == 0) {
			CHECK(len < WS_HEAD_MAX, "more wanted of a whole header");
			return;
		}
		if (rv < 0) {
			CHECK(code == WS_CLOSE_PROTOCOL ||
			    code == WS_CLOSE_TOO_BIG, "a refusal's close code");
			CHECK(why != NULL && why[0] != '\0', "a reason");
			return;
		}
		CHECK((size_t)rv == f.head_len && f.head_len <= len,
		    "header length");
		CHECK(f.len <= BOUND, "payload over the bound");
		CHECK(f.masked == masked, "mask against the role");
		CHECK(f.opcode <= WS_OP_BINARY || (f.opcode >= WS_OP_CLOSE &&
		    f.opcode <= WS_OP_PONG), "unknown opcode");
		if (f.opcode >= WS_OP_CLOSE)
			CHECK(f.fin && f.len <= WS_CONTROL_MAX,
			    "control frame fragmented or long");
		n = ws_frame_head(head, f.fin, f.opcode, f.len,
		    f.masked ? f.mask : NULL);
		CHECK(n == f.head_len && memcmp(head, p, n) == 0,
		    "header not as written back");
		p += n;
		len -= n;
		n = f.len < len ? (size_t)f.len : len;
		memcpy(copy, p, n < sizeof(copy) ? n : sizeof(copy));
		i = n < sizeof(copy) ? n : sizeof(copy);
		ws_mask(copy, i, f.mask, len & 7);
		ws_mask(copy, i, f.mask, len & 7);
		CHECK(memcmp(copy, p, i) == 0, "masking twice changed bytes");
		p += n;
		len -= n;
	}
}

/*
 * An Origin's host, if taken, is in it right after "://", and only the
 * end or ":" and 1-5 digits follow it.
 */
static void
origin(const char *o)
{
	char		 host[256];
	const char	*h, *rest;
	size_t		 n;

	if (ws_origin_host(o, host, sizeof(host)) == -1)
		return;
	h = strstr(o, "://");
	CHECK(h != NULL && h != o, "a host without a scheme");
	h += 3;
	n = strlen(host);
	CHECK(n > 0 && strncmp(h, host, n) == 0, "a host not after ://");
	CHECK(host[0] == '[' ? host[n - 1] == ']' && strchr(host + 1, '[') ==
	    NULL : strpbrk(host, ":/?#@[]") == NULL, "a host with a delimiter");
	rest = h + n;
	if (*rest == ':') {
		n = strspn(rest + 1, "0123456789");
		CHECK(n >= 1 && n <= 5 && rest[1 + n] == '\0',
		    "something other than a port after the host");
	} else
		CHECK(*rest == '\0', "something after the host");
}

static const int statuses[] = { 400, 403, 404, 405, 426, 431 };

static void
request(const char *p, size_t len)
{
	struct ws_request	 r;
	size_t			 i;
	int			 rv;

	rv = ws_request_parse(p, len, "/diag", &r);
	if (rv > 0) {
		CHECK((size_t)rv <= len && p[rv - 1] == '\n' &&
		    (p[rv - 2] == '\n' || (rv >= 3 && p[rv - 2] == '\r' &&
		    p[rv - 3] == '\n')), "a head that does not end there");
		CHECK(strcmp(r.path, "/diag") == 0, "another path");
		CHECK(r.host[0] != '\0', "no Host");
		CHECK(strlen(r.key) == WS_KEY_LEN, "a key of another length");
		if (r.have_origin)
			origin(r.origin);
		return;
	}
	if (rv < 0) {
		for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++)
			if (r.status == statuses[i])
				break;
		CHECK(i < sizeof(statuses) / sizeof(statuses[0]),
		    "a status the router does not answer");
		CHECK(r.why != NULL, "a refusal without a reason");
	}
}

static void
answer(const char *p, size_t len)
{
	const char	*why = NULL;
	int		 rv;

	rv = ws_response_parse(p, len, SAMPLE_KEY, &why);
	if (rv > 0) {
		CHECK((size_t)rv <= len, "an answer past the input");
		CHECK(memmem(p, rv, SAMPLE_ACCEPT, strlen(SAMPLE_ACCEPT)) !=
		    NULL, "accepted without the right Sec-WebSocket-Accept");
	} else if (rv < 0)
		CHECK(why != NULL, "a refusal without a reason");
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char	 accept[WS_ACCEPT_LEN + 1];

	ws_accept_key(SAMPLE_KEY, accept);
	CHECK(strcmp(accept, SAMPLE_ACCEPT) == 0, "RFC 6455's sample digest");
	if (size == 0)
		return (0);
	switch (data[0] & 3) {
	case 0:
	case 1:
		frames(data + 1, size - 1, data[0] & 1);
		break;
	case 2:
		request((const char *)data + 1, size - 1);
		break;
	case 3:
		answer((const char *)data + 1, size - 1);
		break;
	}
	return (0);
}
