/* SPDX-License-Identifier: ISC */

/*
 * The WebSocket pure functions against RFC 6455's own examples: the
 * Accept digest of its sample key, its sample frames (5.7), the three
 * length forms, and upgrade requests accepted and refused with the
 * status the router answers.
 */

#include "config.h"

#include <string.h>

#include "tests/unit/tap.h"
#include "transports/ws_frame.h"

static int
parse(const char *bytes, size_t len, int masked, struct ws_frame *f,
    int *code)
{
	const char	*why;

	return (ws_frame_parse((const uint8_t *)bytes, len, masked, 1 << 20,
	    f, code, &why));
}

static void
test_frames(void)
{
	struct ws_frame	 f;
	uint8_t		 head[WS_HEAD_MAX], p[5];
	int		 code;

	/* RFC 6455 5.7: "Hello", unmasked, and masked. */
	ok(parse("\x81\x05Hello", 7, 0, &f, &code) == 2 && f.fin &&
	    f.opcode == WS_OP_TEXT && f.len == 5, "RFC sample, unmasked");
	ok(parse("\x81\x85\x37\xfa\x21\x3d\x7f\x9f\x4d\x51\x58", 11, 1, &f,
	    &code) == 6 && f.masked && f.len == 5, "RFC sample, masked");
	memcpy(p, "\x7f\x9f\x4d\x51\x58", 5);
	ws_mask(p, 5, f.mask, 0);
	ok(memcmp(p, "Hello", 5) == 0, "...unmasks to Hello");
	ok(parse("\x01\x03Hel", 5, 0, &f, &code) == 2 && !f.fin &&
	    parse("\x80\x02lo", 4, 0, &f, &code) == 2 && f.fin &&
	    f.opcode == WS_OP_CONT, "RFC sample, fragmented");
	ok(parse("\x82\x7e\x01\x00", 4, 0, &f, &code) == 4 && f.len == 256,
	    "16-bit length");
	ok(parse("\x82\x7f\x00\x00\x00\x00\x00\x01\x00\x00", 10, 0, &f,
	    &code) == 10 && f.len == 65536, "64-bit length");
	ok(parse("\x82\x7e\x00", 3, 0, &f, &code) == 0, "a cut header wants more");
	ok(parse("\x82\x7e\x00\x05", 4, 0, &f, &code) == -1 &&
	    code == WS_CLOSE_PROTOCOL, "a length not in its shortest form");
	ok(parse("\x82\xff\x7f\xff\xff\xff\xff\xff\xff\xff\1\2\3\4", 14, 1,
	    &f, &code) == -1 && code == WS_CLOSE_TOO_BIG,
	    "2^63-1 bytes: 1009");
	ok(parse("\x82\x05hello", 7, 1, &f, &code) == -1 &&
	    code == WS_CLOSE_PROTOCOL, "unmasked from a client: 1002");
	ok(parse("\x82\x80\1\2\3\4", 6, 0, &f, &code) == -1,
	    "masked from a server");
	ok(parse("\xc2\x00", 2, 0, &f, &code) == -1, "reserved bit");
	ok(parse("\x83\x00", 2, 0, &f, &code) == -1, "unknown opcode");
	ok(parse("\x09\x00", 2, 0, &f, &code) == -1, "fragmented ping");
	ok(parse("\x89\x7e\x00\xc8", 4, 0, &f, &code) == -1,
	    "a 200-byte ping");
	ok(ws_frame_head(head, 1, WS_OP_BINARY, 65535, NULL) == 4 &&
	    head[0] == 0x82 && head[1] == 126 && head[2] == 0xff &&
	    head[3] == 0xff, "written: 65535 in 16 bits");
	ok(ws_frame_head(head, 1, WS_OP_BINARY, 125, (const uint8_t *)
	    "\1\2\3\4") == 6 && head[1] == (0x80 | 125), "written: masked, 7 bits");
}

static int
request(const char *req, struct ws_request *r)
{
	return (ws_request_parse(req, strlen(req), "/diag", r));
}

#define HEAD	"Host: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n" \
		"Sec-WebSocket-Version: 13\r\n"
#define KEY	"Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"

static void
test_upgrade(void)
{
	struct ws_request	 r;
	char			 accept[WS_ACCEPT_LEN + 1], big[10000];
	const char		*why;
	const char		*ans = "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n";

	ws_accept_key("dGhlIHNhbXBsZSBub25jZQ==", accept);
	ok(strcmp(accept, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=") == 0,
	    "RFC 6455's sample key and Accept");
	ok(request("GET /diag HTTP/1.1\r\n" HEAD KEY "\r\n", &r) > 0 &&
	    !r.have_origin, "an upgrade without Origin");
	ok(request("GET /diag?x HTTP/1.1\r\n" HEAD KEY
	    "Origin: http://localhost:1\r\n\r\n", &r) > 0 && r.have_origin &&
	    strcmp(r.origin, "http://localhost:1") == 0,
	    "with a query and an Origin");
	ok(request("GET /diag HTTP/1.1\r\n" HEAD, &r) == 0,
	    "an unfinished head wants more");
	ok(request("POST /diag HTTP/1.1\r\n" HEAD KEY "\r\n", &r) == -1 &&
	    r.status == 405, "POST: 405");
	ok(request("GET /other HTTP/1.1\r\n" HEAD KEY "\r\n", &r) == -1 &&
	    r.status == 404, "another path: 404");
	ok(request("GET /diag HTTP/1.1\r\n" HEAD "\r\n", &r) == -1 &&
	    r.status == 400, "no key: 400");
	ok(request("GET /diag HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Version: 8\r\n" KEY "\r\n",
	    &r) == -1 && r.status == 426, "version 8: 426");
	memset(big, 'a', sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	ok(request(big, &r) == -1 && r.status == 431, "10000 bytes: 431");
	ok(ws_response_parse(ans, strlen(ans), "dGhlIHNhbXBsZSBub25jZQ==",
	    &why) == (int)strlen(ans), "the server's answer");
	ok(ws_response_parse(ans, strlen(ans), "AAAAAAAAAAAAAAAAAAAAAA==",
	    &why) == -1, "an Accept for another key");
}

/* Masking eight bytes at a time is masking byte by byte, at any offset. */
static void
test_mask(void)
{
	static const uint8_t	 key[4] = { 0x37, 0xfa, 0x21, 0x3d };
	uint8_t			 p[64], want[64];
	size_t			 n, i;
	uint64_t		 off;
	int			 same = 1;

	for (n = 0; n <= sizeof(p); n++) {
		for (off = 0; off < 9; off++) {
			for (i = 0; i < n; i++)
				p[i] = want[i] = (uint8_t)(i * 29 + off);
			for (i = 0; i < n; i++)
				want[i] ^= key[(off + i) & 3];
			ws_mask(p, n, key, off);
			if (memcmp(p, want, n) != 0)
				same = 0;
		}
	}
	ok(same, "masking: every length to 64 at offsets 0 to 8, as byte "
	    "by byte");
	ws_mask(p, 64, key, 3);
	ws_mask(p, 64, key, 3);
	ok(memcmp(p, want, 64) == 0, "masking twice gives the bytes back");
}

/* An Origin's host: only the end or a port may follow it. */
static void
test_origin(void)
{
	static const struct {
		const char	*origin, *host;
	} cases[] = {
		{ "http://localhost", "localhost" },
		{ "https://app.example:8443", "app.example" },
		{ "http://[::1]", "[::1]" },
		{ "http://[::1]:8080", "[::1]" },
		{ "http://127.0.0.1:1", "127.0.0.1" },
		{ "http://[::1]evil", NULL },
		{ "http://[::1]:80x", NULL },
		{ "http://localhost@evil.example", NULL },
		{ "http://localhost:80evil", NULL },
		{ "http://localhost:", NULL },
		{ "http://localhost:123456", NULL },
		{ "http://localhost/", NULL },
		{ "http://[::1", NULL },
		{ "http://[::ffff:127.0.0.1]:1", "[::ffff:127.0.0.1]" },
		{ "http://[x: y[-]", NULL },
		{ "http://[::1[]", NULL },
		{ "http://", NULL },
		{ "://localhost", NULL },
		{ "null", NULL },
	};
	char	 host[64];
	size_t	 i;
	int	 rv;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		rv = ws_origin_host(cases[i].origin, host, sizeof(host));
		if (cases[i].host != NULL)
			ok(rv == 0 && strcmp(host, cases[i].host) == 0,
			    "origin %s: host %s", cases[i].origin,
			    cases[i].host);
		else
			ok(rv == -1, "origin %s: refused", cases[i].origin);
	}
	ok(ws_origin_host("http://a-host-too-long", host, 8) == -1,
	    "a host longer than the buffer: refused");
}

int
main(void)
{
	test_frames();
	test_mask();
	test_upgrade();
	test_origin();
	return (tap_done());
}
