/* SPDX-License-Identifier: ISC */

/*
 * WebSocket frames and the HTTP upgrade, as pure functions (ws_frame.h).
 * Written here rather than taken from a library: Debian's wslay frames
 * only, drives I/O through callbacks of its own that fit neither our
 * non-blocking read/write operations nor the TLS transport beneath, and
 * the handshake, the one part with much to check, it leaves to us anyway.
 * What is left is a header parser and a few lines of SHA-1 and base64,
 * fuzzed (tests/fuzz/fuzz_ws.c).
 */

#include "config.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "transports/ws_frame.h"

/* The GUID RFC 6455 appends to a client's key before the digest. */
#define WS_GUID		"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

int
ws_frame_parse(const uint8_t *p, size_t len, int masked_expected,
    uint64_t max, struct ws_frame *f, int *code, const char **why)
{
	size_t		 need = 2, i;
	uint64_t	 n;

	*code = WS_CLOSE_PROTOCOL;
	if (len < 2)
		return (0);
	memset(f, 0, sizeof(*f));
	f->fin = (p[0] & 0x80) != 0;
	f->opcode = p[0] & 0x0f;
	f->masked = (p[1] & 0x80) != 0;
	n = p[1] & 0x7f;
	if (p[0] & 0x70) {
		*why = "reserved bits set (no extension was agreed)";
		return (-1);
	}
	switch (f->opcode) {
	case WS_OP_CONT:
	case WS_OP_TEXT:
	case WS_OP_BINARY:
		break;
	case WS_OP_CLOSE:
	case WS_OP_PING:
	case WS_OP_PONG:
		if (!f->fin) {
			*why = "fragmented control frame";
			return (-1);
		}
		if (n > WS_CONTROL_MAX) {
			*why = "control frame over 125 bytes";
			return (-1);
		}
		break;
	default:
		*why = "unknown opcode";
		return (-1);
	}
	if (f->masked != masked_expected) {
		*why = masked_expected ? "unmasked frame from a client" :
		    "masked frame from a server";
		return (-1);
	}
	if (n == 126)
		need += 2;
	else if (n == 127)
		need += 8;
	if (f->masked)
		need += 4;
	if (len < need)
		return (0);
	if (n == 126) {
		n = (uint64_t)p[2] << 8 | p[3];
		if (n < 126) {
			*why = "length not in its shortest form";
			return (-1);
		}
	} else if (n == 127) {
		if (p[2] & 0x80) {
			*why = "length with its top bit set";
			return (-1);
		}
		for (n = 0, i = 2; i < 10; i++)
			n = n << 8 | p[i];
		if (n < 65536) {
			*why = "length not in its shortest form";
			return (-1);
		}
	}
	if (n > max) {
		*code = WS_CLOSE_TOO_BIG;
		*why = "frame larger than the router takes";
		return (-1);
	}
	if (f->masked)
		memcpy(f->mask, p + need - 4, 4);
	f->len = n;
	f->head_len = need;
	return ((int)need);
}

/* Write a frame header into out; return its length. */
size_t
ws_frame_head(uint8_t out[WS_HEAD_MAX], int fin, int opcode, uint64_t len,
    const uint8_t *mask)
{
	size_t	 n = 2;
	int	 i;

	out[0] = (fin ? 0x80 : 0) | (opcode & 0x0f);
	out[1] = mask != NULL ? 0x80 : 0;
	if (len < 126)
		out[1] |= (uint8_t)len;
	else if (len <= 0xffff) {
		out[1] |= 126;
		out[2] = (uint8_t)(len >> 8);
		out[3] = (uint8_t)len;
		n = 4;
	} else {
		out[1] |= 127;
		for (i = 0; i < 8; i++)
			out[2 + i] = (uint8_t)(len >> (56 - 8 * i));
		n = 10;
	}
	if (mask != NULL) {
		memcpy(out + n, mask, 4);
		n += 4;
	}
	return (n);
}

/*
 * Mask or unmask n bytes that start off bytes into a payload, eight at a
 * time: every client frame is masked, so this runs over every byte a
 * browser or a dialling router sends (a byte at a time it cost a relay
 * more than the rest of forwarding, measured in bench/).
 */
void
ws_mask(uint8_t *p, size_t n, const uint8_t key[4], uint64_t off)
{
	uint8_t		 k8[8];
	uint64_t	 w, k;
	size_t		 i;

	for (i = 0; i < 8; i++)
		k8[i] = key[(off + i) & 3];
	memcpy(&k, k8, sizeof(k));
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, p + i, sizeof(w));
		w ^= k;
		memcpy(p + i, &w, sizeof(w));
	}
	for (; i < n; i++)
		p[i] ^= key[(off + i) & 3];
}

/* SHA-1 (FIPS 180-4), for the one digest the handshake needs. */
struct sha1 {
	uint32_t	 h[5];
	uint8_t		 block[64];
	size_t		 used;
	uint64_t	 total;
};

#define ROL(x, n)	(((x) << (n)) | ((x) >> (32 - (n))))

static void
sha1_block(struct sha1 *s, const uint8_t *b)
{
	uint32_t	 w[80], a, bb, c, d, e, f, k, t;
	int		 i;

	for (i = 0; i < 16; i++)
		w[i] = (uint32_t)b[4 * i] << 24 | (uint32_t)b[4 * i + 1] << 16 |
		    (uint32_t)b[4 * i + 2] << 8 | b[4 * i + 3];
	for (; i < 80; i++)
		w[i] = ROL(w[i - 3] ^ w[i - 8] ^ w[i - 14] ^ w[i - 16], 1);
	a = s->h[0];
	bb = s->h[1];
	c = s->h[2];
	d = s->h[3];
	e = s->h[4];
	for (i = 0; i < 80; i++) {
		if (i < 20) {
			f = (bb & c) | (~bb & d);
			k = 0x5a827999;
		} else if (i < 40) {
			f = bb ^ c ^ d;
			k = 0x6ed9eba1;
		} else if (i < 60) {
			f = (bb & c) | (bb & d) | (c & d);
			k = 0x8f1bbcdc;
		} else {
			f = bb ^ c ^ d;
			k = 0xca62c1d6;
		}
		t = ROL(a, 5) + f + e + k + w[i];
		e = d;
		d = c;
		c = ROL(bb, 30);
		bb = a;
		a = t;
	}
	s->h[0] += a;
	s->h[1] += bb;
	s->h[2] += c;
	s->h[3] += d;
	s->h[4] += e;
}

static void
sha1_add(struct sha1 *s, const void *data, size_t n)
{
	const uint8_t	*p = data;

	s->total += n;
	while (n > 0) {
		s->block[s->used++] = *p++;
		n--;
		if (s->used == 64) {
			sha1_block(s, s->block);
			s->used = 0;
		}
	}
}

static void
sha1_digest(const void *data, size_t n, const void *data2, size_t n2,
    uint8_t out[20])
{
	struct sha1	 s = { { 0x67452301, 0xefcdab89, 0x98badcfe,
			    0x10325476, 0xc3d2e1f0 }, { 0 }, 0, 0 };
	uint64_t	 bits;
	uint8_t		 pad = 0x80, zero = 0, len[8];
	int		 i;

	sha1_add(&s, data, n);
	sha1_add(&s, data2, n2);
	bits = s.total * 8;
	sha1_add(&s, &pad, 1);
	while (s.used != 56)
		sha1_add(&s, &zero, 1);
	for (i = 0; i < 8; i++)
		len[i] = (uint8_t)(bits >> (56 - 8 * i));
	sha1_add(&s, len, 8);
	for (i = 0; i < 20; i++)
		out[i] = (uint8_t)(s.h[i / 4] >> (24 - 8 * (i % 4)));
}

static const char b64[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* Base64 of n bytes into out, which has room for 4 * ((n + 2) / 3) + 1. */
void
ws_base64(const uint8_t *in, size_t n, char *out)
{
	uint32_t	 v;
	size_t		 i;

	for (i = 0; i + 2 < n; i += 3) {
		v = (uint32_t)in[i] << 16 | (uint32_t)in[i + 1] << 8 | in[i + 2];
		*out++ = b64[v >> 18];
		*out++ = b64[(v >> 12) & 63];
		*out++ = b64[(v >> 6) & 63];
		*out++ = b64[v & 63];
	}
	if (i < n) {
		v = (uint32_t)in[i] << 16 | (i + 1 < n ? (uint32_t)in[i + 1] << 8 :
		    0);
		*out++ = b64[v >> 18];
		*out++ = b64[(v >> 12) & 63];
		*out++ = i + 1 < n ? b64[(v >> 6) & 63] : '=';
		*out++ = '=';
	}
	*out = '\0';
}

/* The Sec-WebSocket-Accept answer to a client's key. */
void
ws_accept_key(const char *key, char out[WS_ACCEPT_LEN + 1])
{
	uint8_t	 digest[20];

	sha1_digest(key, strlen(key), WS_GUID, strlen(WS_GUID), digest);
	ws_base64(digest, sizeof(digest), out);
}

const char *
ws_status_text(int status)
{
	switch (status) {
	case 101:
		return ("Switching Protocols");
	case 400:
		return ("Bad Request");
	case 403:
		return ("Forbidden");
	case 404:
		return ("Not Found");
	case 405:
		return ("Method Not Allowed");
	case 426:
		return ("Upgrade Required");
	case 431:
		return ("Request Header Fields Too Large");
	}
	return ("Error");
}

/* Whether a comma-separated header value lists token, in any case. */
static int
has_token(const char *v, size_t n, const char *token)
{
	size_t	 tlen = strlen(token), i = 0, start, end;

	while (i < n) {
		while (i < n && (v[i] == ' ' || v[i] == '\t' || v[i] == ','))
			i++;
		start = i;
		while (i < n && v[i] != ',')
			i++;
		end = i;
		while (end > start && (v[end - 1] == ' ' || v[end - 1] == '\t'))
			end--;
		if (end - start == tlen && strncasecmp(v + start, token,
		    tlen) == 0)
			return (1);
	}
	return (0);
}

/* Copy a header value into dst if it fits; return -1 if not. */
static int
copy_value(char *dst, size_t size, const char *v, size_t n)
{
	if (n >= size)
		return (-1);
	memcpy(dst, v, n);
	dst[n] = '\0';
	return (0);
}

/* Whether s is a well-formed key: base64 of 16 bytes. */
static int
valid_key(const char *s)
{
	size_t	 i;

	if (strlen(s) != WS_KEY_LEN || strcmp(s + 22, "==") != 0)
		return (0);
	for (i = 0; i < 22; i++)
		if (strchr(b64, s[i]) == NULL || s[i] == '\0')
			return (0);
	/* The last character before == carries 4 bits only. */
	return ((strchr(b64, s[21]) - b64) % 16 == 0);
}

/*
 * Where the head ends (past its empty line) in buf, 0 if not yet there,
 * or -1 if it breaks the bounds: a line, the header count or the whole.
 */
static int
head_end(const char *buf, size_t len, size_t *end)
{
	size_t	 i, line = 0, lines = 0;

	for (i = 0; i < len; i++) {
		if (buf[i] != '\n') {
			if (++line > WS_LINE_MAX)
				return (-1);
			continue;
		}
		if (line == 0 || (line == 1 && buf[i - 1] == '\r')) {
			*end = i + 1;
			return (1);
		}
		if (++lines > WS_HEADERS_MAX + 1)
			return (-1);
		line = 0;
	}
	return (len >= WS_HEAD_BYTES_MAX ? -1 : 0);
}

/*
 * Visit the header lines of a complete head: call fn with each name and
 * value.  Return -1 on a malformed line.
 */
struct header {
	const char	*name;
	size_t		 nlen;
	const char	*value;
	size_t		 vlen;
};

static int
next_line(const char **p, const char *end, const char **line, size_t *n)
{
	const char	*nl;

	if ((nl = memchr(*p, '\n', end - *p)) == NULL)
		return (-1);
	*line = *p;
	*n = nl - *p;
	if (*n > 0 && (*p)[*n - 1] == '\r')
		(*n)--;
	*p = nl + 1;
	return (0);
}

static int
split_header(const char *line, size_t n, struct header *h)
{
	const char	*colon;

	if (n == 0 || line[0] == ' ' || line[0] == '\t' ||
	    (colon = memchr(line, ':', n)) == NULL || colon == line)
		return (-1);
	h->name = line;
	h->nlen = colon - line;
	h->value = colon + 1;
	h->vlen = n - (h->nlen + 1);
	while (h->vlen > 0 && (*h->value == ' ' || *h->value == '\t')) {
		h->value++;
		h->vlen--;
	}
	while (h->vlen > 0 && (h->value[h->vlen - 1] == ' ' ||
	    h->value[h->vlen - 1] == '\t'))
		h->vlen--;
	if (memchr(h->value, '\0', h->vlen) != NULL)
		return (-1);
	return (0);
}

static int
is_header(const struct header *h, const char *name)
{
	return (h->nlen == strlen(name) &&
	    strncasecmp(h->name, name, h->nlen) == 0);
}

static int
refuse(struct ws_request *r, int status, const char *why)
{
	r->status = status;
	r->why = why;
	return (-1);
}

/*
 * Read an upgrade request for path from the len bytes of buf.  Return 0
 * while the head is incomplete, its length once it is complete and asks
 * for an upgrade r records, or -1 with the HTTP status to answer and why
 * in r.
 */
int
ws_request_parse(const char *buf, size_t len, const char *path,
    struct ws_request *r)
{
	const char	*p = buf, *end, *line, *sp1, *sp2, *q;
	struct header	 h;
	size_t		 n, headlen, tlen;
	int		 upgrade = 0, connection = 0, version = 0, rv;

	memset(r, 0, sizeof(*r));
	if ((rv = head_end(buf, len, &headlen)) == 0)
		return (0);
	if (rv == -1)
		return (refuse(r, 431, "request head too large"));
	end = buf + headlen;
	(void)next_line(&p, end, &line, &n);
	if ((sp1 = memchr(line, ' ', n)) == NULL ||
	    (sp2 = memchr(sp1 + 1, ' ', n - (sp1 + 1 - line))) == NULL)
		return (refuse(r, 400, "malformed request line"));
	if (sp1 - line != 3 || memcmp(line, "GET", 3) != 0)
		return (refuse(r, 405, "method other than GET"));
	if ((size_t)(line + n - (sp2 + 1)) != 8 ||
	    memcmp(sp2 + 1, "HTTP/1.1", 8) != 0)
		return (refuse(r, 400, "not HTTP/1.1"));
	tlen = sp2 - (sp1 + 1);
	if ((q = memchr(sp1 + 1, '?', tlen)) != NULL)
		tlen = q - (sp1 + 1);
	if (copy_value(r->path, sizeof(r->path), sp1 + 1, tlen) == -1 ||
	    strcmp(r->path, path) != 0)
		return (refuse(r, 404, "no WebSocket at that path"));
	while (p < end) {
		(void)next_line(&p, end, &line, &n);
		if (n == 0)
			break;
		if (split_header(line, n, &h) == -1)
			return (refuse(r, 400, "malformed header"));
		if (is_header(&h, "Host")) {
			if (r->host[0] != '\0' || copy_value(r->host,
			    sizeof(r->host), h.value, h.vlen) == -1)
				return (refuse(r, 400, "bad Host"));
		} else if (is_header(&h, "Upgrade"))
			upgrade |= has_token(h.value, h.vlen, "websocket");
		else if (is_header(&h, "Connection"))
			connection |= has_token(h.value, h.vlen, "upgrade");
		else if (is_header(&h, "Sec-WebSocket-Version")) {
			if (version != 0)
				return (refuse(r, 400, "two versions"));
			version = h.vlen == 2 && memcmp(h.value, "13", 2) == 0 ?
			    13 : -1;
		} else if (is_header(&h, "Sec-WebSocket-Key")) {
			if (r->key[0] != '\0' || copy_value(r->key,
			    sizeof(r->key), h.value, h.vlen) == -1 ||
			    !valid_key(r->key))
				return (refuse(r, 400, "bad Sec-WebSocket-Key"));
		} else if (is_header(&h, "Origin")) {
			if (r->have_origin || copy_value(r->origin,
			    sizeof(r->origin), h.value, h.vlen) == -1)
				return (refuse(r, 403, "bad Origin"));
			r->have_origin = 1;
		}
	}
	if (r->host[0] == '\0')
		return (refuse(r, 400, "no Host"));
	if (!upgrade || !connection)
		return (refuse(r, 400, "not a WebSocket upgrade"));
	if (version != 13)
		return (refuse(r, 426, "WebSocket version other than 13"));
	if (r->key[0] == '\0')
		return (refuse(r, 400, "no Sec-WebSocket-Key"));
	return ((int)headlen);
}

/*
 * Read a server's answer to our upgrade with key.  Return 0 while it is
 * incomplete, its length once it accepts, or -1 with why.
 */
int
ws_response_parse(const char *buf, size_t len, const char *key,
    const char **why)
{
	const char	*p = buf, *end, *line;
	struct header	 h;
	char		 want[WS_ACCEPT_LEN + 1];
	size_t		 n, headlen;
	int		 upgrade = 0, connection = 0, accept = 0, rv;

	if ((rv = head_end(buf, len, &headlen)) == 0)
		return (0);
	if (rv == -1) {
		*why = "answer head too large";
		return (-1);
	}
	end = buf + headlen;
	(void)next_line(&p, end, &line, &n);
	if (n < 12 || memcmp(line, "HTTP/1.1 ", 9) != 0) {
		*why = "not an HTTP/1.1 answer";
		return (-1);
	}
	if (memcmp(line + 9, "101", 3) != 0 || (n > 12 && line[12] != ' ')) {
		*why = "the server refused the upgrade";
		return (-1);
	}
	ws_accept_key(key, want);
	while (p < end) {
		(void)next_line(&p, end, &line, &n);
		if (n == 0)
			break;
		if (split_header(line, n, &h) == -1) {
			*why = "malformed header in the answer";
			return (-1);
		}
		if (is_header(&h, "Upgrade"))
			upgrade |= has_token(h.value, h.vlen, "websocket");
		else if (is_header(&h, "Connection"))
			connection |= has_token(h.value, h.vlen, "upgrade");
		else if (is_header(&h, "Sec-WebSocket-Accept"))
			accept = h.vlen == WS_ACCEPT_LEN &&
			    memcmp(h.value, want, WS_ACCEPT_LEN) == 0;
		else if (is_header(&h, "Sec-WebSocket-Extensions") ||
		    is_header(&h, "Sec-WebSocket-Protocol")) {
			*why = "the server chose an extension or protocol "
			    "not offered";
			return (-1);
		}
	}
	if (!upgrade || !connection || !accept) {
		*why = "the answer is not a valid WebSocket upgrade";
		return (-1);
	}
	return ((int)headlen);
}

/*
 * The host of an Origin, SCHEME://HOST[:PORT], into host, brackets kept
 * ("[::1]"): return 0, or -1 if origin is not of that form.  Only the
 * end or a port may follow the host, so that "http://[::1]evil" or
 * "http://localhost@evil" is no origin of [::1] or of localhost.
 */
int
ws_origin_host(const char *origin, char *host, size_t len)
{
	const char	*h, *end;
	size_t		 digits;

	if ((h = strstr(origin, "://")) == NULL || h == origin)
		return (-1);
	h += 3;
	if (*h == '[') {
		/* An IPv6 literal: hex digits, colons, and dots (v4-mapped). */
		end = h + 1 + strspn(h + 1, "0123456789abcdefABCDEF:.");
		if (*end != ']')
			return (-1);
		end++;
	} else
		end = h + strcspn(h, ":/?#@[]");
	if (end == h || (size_t)(end - h) >= len)
		return (-1);
	if (*end == ':') {
		digits = strspn(end + 1, "0123456789");
		if (digits == 0 || digits > 5 || end[1 + digits] != '\0')
			return (-1);
	} else if (*end != '\0')
		return (-1);
	memcpy(host, h, end - h);
	host[end - h] = '\0';
	return (0);
}
