/* SPDX-License-Identifier: ISC */

/*
 * fakeproto.c: the diagnostic IPC protocol as the test fakes speak it
 * (fakeproto.h): what fakert, faketool, winfakert and winfaketool share,
 * with no OS call in it.
 */

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "fakeproto.h"
#include "le.h"

/* Append raw bytes to a payload buffer, remembering any overflow. */
static void
buf_add(struct fp_buf *b, const void *p, size_t n)
{
	if (b->overflow || n > sizeof(b->data) - b->len) {
		b->overflow = 1;
		return;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

/* Append v as an n-byte little-endian integer (n <= 8). */
static void
buf_int(struct fp_buf *b, uint64_t v, size_t n)
{
	uint8_t	tmp[8];

	put_le64(tmp, v);
	buf_add(b, tmp, n);
}

/* Append a protocol string: u32 count with NUL, then UTF-16LE units. */
static void
buf_string(struct fp_buf *b, const char *s)
{
	size_t	i, n = strlen(s);

	buf_int(b, n + 1, 4);
	for (i = 0; i < n; i++)
		buf_int(b, (unsigned char)s[i], 2);
	buf_int(b, 0, 2);
}

/*
 * Build one message in msg (IPC_MAX_MSG bytes): the header, then the
 * payload, cut to what a message holds.  Returns its length.
 */
size_t
fp_message(uint8_t *msg, uint8_t set, uint8_t id, const void *payload,
    size_t len)
{
	if (len > IPC_MAX_PAYLOAD)
		len = IPC_MAX_PAYLOAD;
	memcpy(msg, IPC_MAGIC, IPC_MAGIC_LEN);
	put_le16(msg + 14, (uint16_t)(IPC_HDR_LEN + len));
	msg[16] = set;
	msg[17] = id;
	put_le16(msg + 18, 0);
	if (len > 0)
		memcpy(msg + IPC_HDR_LEN, payload, len);
	return (IPC_HDR_LEN + len);
}

/* Read the IPC_HDR_LEN bytes of a header; nothing is checked but magic. */
void
fp_header(const uint8_t *hdr, struct fp_header *h)
{
	h->magic_ok = memcmp(hdr, IPC_MAGIC, IPC_MAGIC_LEN) == 0;
	h->size = hdr[14] | (hdr[15] << 8);
	h->set = hdr[16];
	h->id = hdr[17];
}

void
fp_cursor_init(struct fp_cursor *c, const uint8_t *p, size_t len)
{
	c->p = p;
	c->left = len;
	c->bad = 0;
}

/* Take the next n bytes: where they are, or NULL (and bad) if short. */
static const uint8_t *
cur_take(struct fp_cursor *c, size_t n)
{
	const uint8_t	*p = c->p;

	if (c->bad || c->left < n) {
		c->bad = 1;
		return (NULL);
	}
	c->p += n;
	c->left -= n;
	return (p);
}

uint32_t
fp_cur_u32(struct fp_cursor *c)
{
	const uint8_t	*p = cur_take(c, 4);

	return (p != NULL ? get_le32(p) : 0);
}

uint64_t
fp_cur_u64(struct fp_cursor *c)
{
	const uint8_t	*p = cur_take(c, 8);

	return (p != NULL ? get_le64(p) : 0);
}

/* Put one code point into dst as UTF-8. */
static size_t
utf8_put(char *dst, uint32_t cp)
{
	if (cp < 0x80) {
		dst[0] = cp;
		return (1);
	}
	if (cp < 0x800) {
		dst[0] = 0xc0 | (cp >> 6);
		dst[1] = 0x80 | (cp & 0x3f);
		return (2);
	}
	if (cp < 0x10000) {
		dst[0] = 0xe0 | (cp >> 12);
		dst[1] = 0x80 | ((cp >> 6) & 0x3f);
		dst[2] = 0x80 | (cp & 0x3f);
		return (3);
	}
	dst[0] = 0xf0 | (cp >> 18);
	dst[1] = 0x80 | ((cp >> 12) & 0x3f);
	dst[2] = 0x80 | ((cp >> 6) & 0x3f);
	dst[3] = 0x80 | (cp & 0x3f);
	return (4);
}

/*
 * Read a protocol string (u32 count with NUL, UTF-16LE units, last unit
 * 0) into dst as UTF-8.  dst must hold STRING_MAX bytes, or be NULL to
 * check and skip the string.
 */
void
fp_cur_string(struct fp_cursor *c, char *dst)
{
	const uint8_t	*p;
	uint32_t	 count, i, u, u2;
	size_t		 n = 0;

	if (dst != NULL)
		dst[0] = '\0';
	count = fp_cur_u32(c);
	if (c->bad || count == 0)
		return;
	if (count > c->left / 2 || c->p[2 * (count - 1)] != 0 ||
	    c->p[2 * (count - 1) + 1] != 0) {
		c->bad = 1;
		return;
	}
	p = cur_take(c, 2 * (size_t)count);
	for (i = 0; dst != NULL && i + 1 < count; i++) {
		u = p[2 * i] | (p[2 * i + 1] << 8);
		if (u >= 0xd800 && u < 0xdc00 && i + 2 < count) {
			u2 = p[2 * i + 2] | (p[2 * i + 3] << 8);
			if (u2 >= 0xdc00 && u2 < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) +
				    (u2 - 0xdc00);
				i++;
			} else
				u = 0xfffd;
		} else if (u >= 0xd800 && u < 0xe000)
			u = 0xfffd;
		n += utf8_put(dst + n, u);
	}
	if (dst != NULL)
		dst[n] = '\0';
}

/*
 * The reply to ProcessInfo, ProcessInfo2 or ProcessInfo3 (id 0x00, 0x04,
 * 0x08) into b, which it empties first; b->overflow says if it fit.
 */
void
fp_processinfo_put(struct fp_buf *b, uint8_t id, uint64_t pid,
    const uint8_t *cookie, const char *cmdline, const char *os,
    const char *arch, const char *entrypoint, const char *rid)
{
	memset(b, 0, sizeof(*b));
	if (id == 0x08)
		buf_int(b, 1, 4);
	buf_int(b, pid, 8);
	buf_add(b, cookie, COOKIE_LEN);
	buf_string(b, cmdline);
	buf_string(b, os);
	buf_string(b, arch);
	if (id == 0x04 || id == 0x08) {
		buf_string(b, entrypoint);
		buf_string(b, "0.0.0-fake");
	}
	if (id == 0x08)
		buf_string(b, rid);
}

/*
 * Read the reply payload to ProcessInfo, ProcessInfo2 or ProcessInfo3 (id
 * 0x00, 0x04, 0x08) strictly: 0, or -1 if it is malformed.  A later
 * ProcessInfo3 version may carry more at the end.
 */
int
fp_processinfo_get(struct fp_processinfo *pi, uint8_t id, const uint8_t *p,
    size_t len)
{
	struct fp_cursor	 c;
	const uint8_t		*ck;

	fp_cursor_init(&c, p, len);
	pi->version = 0;
	pi->cookie[0] = '\0';
	pi->entrypoint[0] = pi->clrversion[0] = pi->rid[0] = '\0';
	if (id == 0x08)
		pi->version = fp_cur_u32(&c);
	pi->pid = fp_cur_u64(&c);
	if ((ck = cur_take(&c, COOKIE_LEN)) != NULL)
		fp_hex_string(pi->cookie, ck, COOKIE_LEN);
	fp_cur_string(&c, pi->cmdline);
	fp_cur_string(&c, pi->os);
	fp_cur_string(&c, pi->arch);
	if (id != 0x00) {
		fp_cur_string(&c, pi->entrypoint);
		fp_cur_string(&c, pi->clrversion);
	}
	if (id == 0x08 && pi->version >= 1)
		fp_cur_string(&c, pi->rid);
	if (c.bad || (c.left != 0 && !(id == 0x08 && pi->version > 1)))
		return (-1);
	return (0);
}

/*
 * ProcessEnvironment's reply payload into head (the block's size and a
 * u16 0) and the block that follows it into cont: a u32 count, then the
 * NAME=VALUE strings.
 */
void
fp_environment_put(struct fp_buf *head, struct fp_buf *cont,
    const char *const *env, size_t n)
{
	size_t	i;

	memset(cont, 0, sizeof(*cont));
	buf_int(cont, n, 4);
	for (i = 0; i < n; i++)
		buf_string(cont, env[i]);
	memset(head, 0, sizeof(*head));
	buf_int(head, cont->len, 4);
	buf_int(head, 0, 2);
}

/* Check an environment block, all of it: 0 with *count, or -1. */
int
fp_environment_get(const uint8_t *p, size_t len, uint32_t *count)
{
	struct fp_cursor	c;
	uint32_t		i;

	fp_cursor_init(&c, p, len);
	*count = fp_cur_u32(&c);
	for (i = 0; i < *count && !c.bad; i++)
		fp_cur_string(&c, NULL);
	return (c.bad || c.left != 0 ? -1 : 0);
}

/* The ADVR_LEN bytes a runtime sends first on its connect port. */
void
fp_advertise_put(uint8_t *advr, const uint8_t *cookie, uint64_t pid)
{
	memcpy(advr, ADVR_MAGIC, 8);
	memcpy(advr + 8, cookie, COOKIE_LEN);
	put_le64(advr + 24, pid);
	put_le16(advr + 32, 0);
}

/* Read an advertise: 0 with its cookie and pid, or -1 for a bad magic. */
int
fp_advertise_get(const uint8_t *advr, uint8_t *cookie, uint64_t *pid)
{
	if (memcmp(advr, ADVR_MAGIC, 8) != 0)
		return (-1);
	memcpy(cookie, advr + 8, COOKIE_LEN);
	*pid = get_le64(advr + 24);
	return (0);
}

/* Append a protocol string to a payload under construction. */
static size_t
put_string(uint8_t *p, const char *s)
{
	size_t	i, n = strlen(s);

	put_le32(p, (uint32_t)(n + 1));
	for (i = 0; i <= n; i++)
		put_le16(p + 4 + 2 * i, (unsigned char)s[i]);
	return (4 + 2 * (n + 1));
}

/* Build the CollectTracing2 payload dotnet-trace would send (< 256). */
size_t
fp_collect2_payload(uint8_t *p)
{
	size_t	n = 0;

	put_le32(p + n, 64);		/* circularBufferMB */
	n += 4;
	put_le32(p + n, 1);		/* format: NetTrace */
	n += 4;
	p[n++] = 1;			/* requestRundown */
	put_le32(p + n, 1);		/* one provider */
	n += 4;
	put_le64(p + n, 0x1);		/* keywords */
	n += 8;
	put_le32(p + n, 4);		/* level: Informational */
	n += 4;
	n += put_string(p + n, "Microsoft-Windows-DotNETRuntime");
	put_le32(p + n, 0);		/* no arguments */
	n += 4;
	return (n);
}

/*
 * Start the stream of session id: 0, or -1 if the digest cannot start.
 * The stream is "Nettrace", then the little-endian words of a xorshift64
 * sequence seeded from the id: its bytes depend only on the session id
 * and the offset, not on the chunk size.
 */
int
fp_stream_init(struct fp_stream *st, uint64_t id)
{
	st->state = id ^ 0x9e3779b97f4a7c15ULL;
	if (st->state == 0)
		st->state = 1;
	st->word = 0;
	st->total = 0;
	return (sha256_init(&st->md));
}

/* Produce the n stream bytes that follow the ones sent. */
void
fp_stream_fill(struct fp_stream *st, uint8_t *out, size_t n)
{
	static const char	hdr[8] = { 'N', 'e', 't', 't', 'r', 'a', 'c',
				    'e' };
	uint64_t		off = st->total;
	size_t			i;
	unsigned int		k;

	for (i = 0; i < n; i++, off++) {
		if (off < sizeof(hdr)) {
			out[i] = hdr[off];
			continue;
		}
		k = (off - sizeof(hdr)) % 8;
		if (k == 0) {
			st->state ^= st->state << 13;
			st->state ^= st->state >> 7;
			st->state ^= st->state << 17;
			st->word = st->state;
		}
		out[i] = (st->word >> (8 * k)) & 0xff;
	}
}

/* Count and digest the first n of the bytes filled, which were sent. */
void
fp_stream_sent(struct fp_stream *st, const uint8_t *buf, size_t n)
{
	sha256_update(&st->md, buf, n);
	st->total += n;
}

/* Finish a digest into hex (SHA256_HEX_LEN bytes): 0, or -1 if it failed. */
int
fp_sha256_hex(struct sha256 *md, char *hex)
{
	uint8_t	digest[SHA256_LEN];

	if (sha256_final(md, digest) == -1)
		return (-1);
	fp_hex_string(hex, digest, SHA256_LEN);
	return (0);
}

void
fp_hex_string(char *dst, const uint8_t *src, size_t n)
{
	static const char	digits[] = "0123456789abcdef";
	size_t			i;

	for (i = 0; i < n; i++) {
		dst[2 * i] = digits[src[i] >> 4];
		dst[2 * i + 1] = digits[src[i] & 0xf];
	}
	dst[2 * n] = '\0';
}

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/*
 * Decode hex (whitespace ignored) into dst: 0 with *len, or -1 if bad or
 * longer than max bytes.
 */
int
fp_hex_decode(const char *s, uint8_t *dst, size_t max, size_t *len)
{
	size_t	n = 0;
	int	hi = -1, v;

	for (; *s != '\0'; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n')
			continue;
		if ((v = hexval(*s)) == -1)
			return (-1);
		if (hi == -1) {
			hi = v;
			continue;
		}
		if (n == max)
			return (-1);
		dst[n++] = (hi << 4) | v;
		hi = -1;
	}
	if (hi != -1)
		return (-1);
	*len = n;
	return (0);
}

/* Parse an unsigned decimal or 0x number; -1 if malformed. */
int
fp_parse_u64(const char *s, uint64_t *v)
{
	char	*end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno != 0 || *s == '\0' || *s == '-' || *end != '\0')
		return (-1);
	return (0);
}

/*
 * Parse a cookie: exactly 2 * COOKIE_LEN hex characters.  0, -1 for the
 * wrong length or -2 for a bad character.
 */
int
fp_parse_cookie(const char *s, uint8_t *cookie)
{
	int	i, hi, lo;

	if (strlen(s) != 2 * COOKIE_LEN)
		return (-1);
	for (i = 0; i < COOKIE_LEN; i++) {
		hi = hexval(s[2 * i]);
		lo = hexval(s[2 * i + 1]);
		if (hi == -1 || lo == -1)
			return (-2);
		cookie[i] = (hi << 4) | lo;
	}
	return (0);
}

/*
 * The command line a fake runtime reports: name, then the arguments after
 * argv[0], as many as fit in size bytes.
 */
void
fp_cmdline(char *dst, size_t size, const char *name, int argc, char *argv[])
{
	int	i;

	strcpy(dst, name);
	for (i = 1; i < argc; i++) {
		if (strlen(dst) + 1 + strlen(argv[i]) >= size)
			break;
		strcat(dst, " ");
		strcat(dst, argv[i]);
	}
}
