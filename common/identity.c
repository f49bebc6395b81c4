/* SPDX-License-Identifier: ISC */

/*
 * TLS peer identities and the rules of allow-lists that name them (the
 * access control, acl.c, applies the lists).
 *
 * A rule names one field of a verified certificate: the subject CN, one
 * subject alternative name of a given type, or the SHA-256 fingerprint of
 * the whole certificate.  Matching is exact and byte-wise, and a SAN rule
 * only ever matches a SAN of its own type: a DNS rule never matches a URI,
 * an e-mail address or the CN (the confusions of Envoy CVE-2022-21656).
 *
 * The backends hand each name of a verified certificate, as the bytes it
 * holds, to identity_draft_cn_string() (which reads the CN's string type
 * itself, so that OpenSSL and mbed TLS see one name) or
 * identity_draft_san(), which keep only clean ones: a name with a NUL byte inside, an empty or overlong name
 * is left out whole, never cut short, so it cannot be truncated into a
 * name a rule allows.  identity_pack() then makes the identity a session
 * keeps: one allocation of exactly the names present (about a hundred
 * bytes instead of the draft's four kilobytes).  The host name a
 * router dials is matched against a server's names by
 * identity_dns_match(), in both backends.  Parsing and matching are pure
 * functions, so that they can be fuzzed.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/identity.h"
#include "common/util.h"

static const struct {
	const char	*prefix;
	enum san_type	 type;
} san_prefixes[] = {
	{ "dns:", SAN_DNS },
	{ "uri:", SAN_URI },
	{ "ip:", SAN_IP },
	{ "email:", SAN_EMAIL },
};

/*
 * A SHA-256 fingerprint as allow-fp= and sha256: take it, and as openssl
 * x509 -fingerprint prints it: 64 hex digits of either case, in pairs
 * that one colon may separate.  Return -1 for anything else.
 */
int
identity_fingerprint_parse(const char *s, uint8_t fp[32])
{
	size_t	 n = 0;
	int	 hi, lo;

	while (*s != '\0') {
		if (n == 32)
			return (-1);
		hi = hex_digit(s[0]);
		if (hi == -1 || (lo = hex_digit(s[1])) == -1)
			return (-1);
		fp[n++] = (uint8_t)(hi << 4 | lo);
		s += 2;
		if (*s == ':' && s[1] != '\0')
			s++;
	}
	return (n == 32 ? 0 : -1);
}

/* Write an IP address the way the backends print one: inet_ntop's form. */
static int
normalize_ip(const char *s, char *out, size_t len)
{
	struct in6_addr	 a6;
	struct in_addr	 a4;

	if (inet_pton(AF_INET, s, &a4) == 1)
		return (inet_ntop(AF_INET, &a4, out, len) == NULL ? -1 : 0);
	if (inet_pton(AF_INET6, s, &a6) == 1)
		return (inet_ntop(AF_INET6, &a6, out, len) == NULL ? -1 : 0);
	return (-1);
}

/*
 * Parse the value of an allow-cn=, allow-san= or allow-fp= option into a
 * rule.  On error, return -1 with a one-line reason in err.
 */
int
identity_rule_parse(enum allow_kind kind, const char *v,
    struct allow_rule *rule, char *err, size_t len)
{
	const char	*value = v;
	size_t		 i, n;

	memset(rule, 0, sizeof(*rule));
	rule->kind = kind;
	switch (kind) {
	case ALLOW_FP:
		if (identity_fingerprint_parse(v, rule->fingerprint) == -1) {
			snprintf(err, len, "allow-fp=%s: give the SHA-256 of "
			    "the certificate, 64 hex digits with or without "
			    "colons", v);
			return (-1);
		}
		return (0);
	case ALLOW_SAN:
		for (i = 0; i < sizeof(san_prefixes) /
		    sizeof(san_prefixes[0]); i++) {
			n = strlen(san_prefixes[i].prefix);
			if (strncmp(v, san_prefixes[i].prefix, n) == 0) {
				rule->san_type = san_prefixes[i].type;
				value = v + n;
				break;
			}
		}
		if (value == v) {
			snprintf(err, len, "allow-san=%s: say which kind of "
			    "name: dns:NAME, uri:URI, ip:ADDRESS or "
			    "email:ADDRESS", v);
			return (-1);
		}
		if (rule->san_type == SAN_IP) {
			if (normalize_ip(value, rule->value,
			    sizeof(rule->value)) == -1) {
				snprintf(err, len, "allow-san=%s: not an IPv4 "
				    "or IPv6 address", v);
				return (-1);
			}
			return (0);
		}
		break;
	case ALLOW_CN:
		break;
	}
	if (*value == '\0' || strlen(value) >= sizeof(rule->value)) {
		snprintf(err, len, "allow-%s=%s: give a name of 1 to %zu "
		    "bytes", kind == ALLOW_CN ? "cn" : "san", v,
		    sizeof(rule->value) - 1);
		return (-1);
	}
	memcpy(rule->value, value, strlen(value) + 1);
	return (0);
}

/* Start reading a certificate: no names yet. */
void
identity_draft_init(struct identity_draft *d)
{
	memset(d, 0, sizeof(*d));
}

/* Copy a name if it is 1 to IDENTITY_NAME_MAX bytes without a NUL. */
static int
copy_name(char dst[IDENTITY_NAME_MAX + 1], const void *src, size_t len)
{
	if (len == 0 || len > IDENTITY_NAME_MAX || memchr(src, '\0', len) !=
	    NULL)
		return (-1);
	memcpy(dst, src, len);
	dst[len] = '\0';
	return (0);
}

/*
 * Read one character of UTF-8 (RFC 3629: at most 4 bytes, no overlong
 * form) from the n bytes at p into *c: its length, or -1.
 */
static int
get_utf8(const uint8_t *p, size_t n, uint32_t *c)
{
	uint32_t	 min;
	size_t		 need, i;

	if (p[0] < 0x80) {
		*c = p[0];
		return (1);
	}
	if ((p[0] & 0xe0) == 0xc0) {
		need = 2;
		min = 0x80;
		*c = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		need = 3;
		min = 0x800;
		*c = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		need = 4;
		min = 0x10000;
		*c = p[0] & 0x07;
	} else
		return (-1);
	if (n < need)
		return (-1);
	for (i = 1; i < need; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return (-1);
		*c = *c << 6 | (p[i] & 0x3f);
	}
	return (*c < min ? -1 : (int)need);
}

/*
 * Write the character c as UTF-8 at out[*o], leaving room for a NUL in
 * len bytes.  -1 for no character (NUL, a surrogate, beyond U+10FFFF)
 * or no room.
 */
static int
put_utf8(char *out, size_t len, size_t *o, uint32_t c)
{
	static const uint8_t	 lead[] = { 0, 0, 0xc0, 0xe0, 0xf0 };
	size_t			 n = c < 0x80 ? 1 : c < 0x800 ? 2 :
				    c < 0x10000 ? 3 : 4;
	size_t			 i;

	if (c == 0 || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff) ||
	    *o + n >= len)
		return (-1);
	if (n == 1) {
		out[(*o)++] = (char)c;
		return (0);
	}
	out[*o] = (char)(lead[n] | (c >> (6 * (n - 1))));
	for (i = 1; i < n; i++)
		out[*o + i] = (char)(0x80 | ((c >> (6 * (n - 1 - i))) & 0x3f));
	*o += n;
	return (0);
}

/*
 * A CN as the string type its certificate wrote it in, as UTF-8 into out
 * (len bytes, NUL included): UTF8String if it is valid, BMPString
 * (UCS-2) and UniversalString (UCS-4) as their characters, and
 * PrintableString, IA5String and T61String only when they are ASCII,
 * where T.61 and Latin-1 and ASCII agree.  So both TLS backends read
 * one name from the same bytes.  Return its length, or -1 for a string
 * that is not clean (a NUL, a broken or too long one) or another type.
 */
int
identity_cn_decode(enum cn_string kind, const void *src, size_t len,
    char *out, size_t outlen)
{
	const uint8_t	*p = src;
	size_t		 i, o = 0, step;
	uint32_t	 c;
	int		 n;

	switch (kind) {
	case CN_UTF8:
	case CN_PRINTABLE:
	case CN_IA5:
	case CN_T61:
		step = 1;
		break;
	case CN_BMP:
		step = 2;
		break;
	case CN_UNIVERSAL:
		step = 4;
		break;
	default:
		return (-1);
	}
	if (outlen == 0 || len % step != 0)
		return (-1);
	for (i = 0; i < len; i += step) {
		if (kind == CN_UTF8) {
			if ((n = get_utf8(p + i, len - i, &c)) == -1)
				return (-1);
			step = n;
		} else if (step == 1) {
			if ((c = p[i]) >= 0x80)
				return (-1);
		} else if (step == 2)
			c = (uint32_t)p[i] << 8 | p[i + 1];
		else
			c = (uint32_t)p[i] << 24 | (uint32_t)p[i + 1] << 16 |
			    (uint32_t)p[i + 2] << 8 | p[i + 3];
		if (put_utf8(out, outlen, &o, c) == -1)
			return (-1);
	}
	out[o] = '\0';
	return ((int)o);
}

/* Keep the subject CN, of the string type kind (identity_cn_decode()). */
int
identity_draft_cn_string(struct identity_draft *d, enum cn_string kind,
    const void *name, size_t len)
{
	char	 utf8[IDENTITY_NAME_MAX + 1];
	int	 n;

	if ((n = identity_cn_decode(kind, name, len, utf8,
	    sizeof(utf8))) <= 0)
		return (-1);
	return (identity_draft_cn(d, utf8, n));
}

/* Keep the subject CN; return -1, keeping none, if it is not clean. */
int
identity_draft_cn(struct identity_draft *d, const void *name, size_t len)
{
	return (copy_name(d->cn, name, len));
}

/*
 * Keep a SAN of the given type: a name as its bytes, an IP address as its
 * 4 or 16 bytes, kept as text.  Return -1, keeping nothing, if it is not
 * clean or there are IDENTITY_MAX_SANS already.
 */
int
identity_draft_san(struct identity_draft *d, enum san_type type,
    const void *value, size_t len)
{
	char	*dst;

	if (d->nsan == IDENTITY_MAX_SANS)
		return (-1);
	dst = d->san[d->nsan].value;
	if (type == SAN_IP) {
		if ((len != 4 && len != 16) || inet_ntop(len == 4 ? AF_INET :
		    AF_INET6, value, dst, IDENTITY_NAME_MAX + 1) == NULL)
			return (-1);
	} else if (copy_name(dst, value, len) == -1)
		return (-1);
	d->san[d->nsan++].type = type;
	return (0);
}

/*
 * Make the identity of a draft: one allocation with the names after the
 * struct, so that free() frees it.  NULL if out of memory.
 */
struct identity *
identity_pack(const struct identity_draft *d)
{
	struct identity	*id;
	size_t		 size, len;
	char		*text;
	int		 i;

	size = sizeof(*id) + d->nsan * sizeof(id->san[0]) + strlen(d->cn) + 1;
	for (i = 0; i < d->nsan; i++)
		size += strlen(d->san[i].value) + 1;
	if ((id = malloc(size)) == NULL)
		return (NULL);
	id->nsan = d->nsan;
	memcpy(id->fingerprint, d->fingerprint, sizeof(id->fingerprint));
	text = (char *)&id->san[d->nsan];
	len = strlen(d->cn) + 1;
	id->cn = memcpy(text, d->cn, len);
	text += len;
	for (i = 0; i < d->nsan; i++) {
		len = strlen(d->san[i].value) + 1;
		id->san[i].type = d->san[i].type;
		id->san[i].value = memcpy(text, d->san[i].value, len);
		text += len;
	}
	return (id);
}

/* Whether a and b, n bytes each, are equal but for ASCII case. */
static int
same_nocase(const char *a, const char *b, size_t n)
{
	size_t	 i;
	int	 x, y;

	for (i = 0; i < n; i++) {
		x = (unsigned char)a[i];
		y = (unsigned char)b[i];
		if (x >= 'A' && x <= 'Z')
			x += 'a' - 'A';
		if (y >= 'A' && y <= 'Z')
			y += 'a' - 'A';
		if (x != y)
			return (0);
	}
	return (1);
}

/*
 * Whether a DNS name a server's certificate presents (len bytes, from a
 * dNSName or, without a subjectAltName, the CN) names the host dialled,
 * name.  Equal but for ASCII case, a trailing dot counting; or "*."
 * then two or more labels of letters, digits and '-', the '*' standing
 * for the whole first label of name, not part of it, and never for a
 * label right under a top-level domain.  A name with a NUL byte inside
 * names nothing.  Both TLS backends check a dialled name with this.
 */
int
identity_dns_match(const void *presented, size_t len, const char *name)
{
	const char	*p = presented, *rest, *dot;
	size_t		 nlen = strlen(name), rlen, i;

	if (len == 0 || nlen == 0 || memchr(p, '\0', len) != NULL)
		return (0);
	if (len == nlen && same_nocase(p, name, len))
		return (1);
	if (len < 5 || p[0] != '*' || p[1] != '.')
		return (0);
	rest = p + 2;
	rlen = len - 2;
	/* Two labels after the '*' at least, a trailing dot not counting. */
	if (memchr(rest, '.', rlen - 1) == NULL)
		return (0);
	for (i = 0; i < rlen; i++) {
		if (!((rest[i] >= 'a' && rest[i] <= 'z') ||
		    (rest[i] >= 'A' && rest[i] <= 'Z') ||
		    (rest[i] >= '0' && rest[i] <= '9') || rest[i] == '-' ||
		    (rest[i] == '.' && i > 0 && rest[i - 1] != '.')))
			return (0);
	}
	if ((dot = strchr(name, '.')) == NULL || dot == name ||
	    memchr(name, '*', dot - name) != NULL)
		return (0);
	return (strlen(dot + 1) == rlen && same_nocase(dot + 1, rest, rlen));
}

/* Say whether one rule names the identity. */
static int
rule_matches(const struct identity *id, const struct allow_rule *rule)
{
	int	 i;

	switch (rule->kind) {
	case ALLOW_CN:
		return (id->cn[0] != '\0' && strcmp(id->cn, rule->value) == 0);
	case ALLOW_FP:
		return (memcmp(id->fingerprint, rule->fingerprint,
		    sizeof(id->fingerprint)) == 0);
	case ALLOW_SAN:
		for (i = 0; i < id->nsan; i++) {
			if (id->san[i].type == rule->san_type &&
			    strcmp(id->san[i].value, rule->value) == 0)
				return (1);
		}
		return (0);
	}
	return (0);
}

/* Return the index of the first of n rules that names id, or -1. */
int
identity_match(const struct identity *id, const struct allow_rule *rules,
    int n)
{
	int	 i;

	for (i = 0; i < n; i++) {
		if (rule_matches(id, &rules[i]))
			return (i);
	}
	return (-1);
}

/* Copy a name for a log field: no spaces, commas or brackets unescaped. */
static size_t
escape_name(char *dst, size_t len, const char *src)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 o = 0;
	unsigned char		 ch;

	for (; *src != '\0'; src++) {
		ch = (unsigned char)*src;
		if (ch > 0x20 && ch < 0x7f && strchr("\\,()", ch) == NULL) {
			if (o + 1 >= len)
				break;
			dst[o++] = ch;
		} else {
			if (o + 4 >= len)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = digits[ch >> 4];
			dst[o++] = digits[ch & 0xf];
		}
	}
	if (len > 0)
		dst[o] = '\0';
	return (o);
}

/*
 * Describe a verified peer for the session log: its CN, or its first SAN
 * when it has no CN, and the first 8 bytes of its fingerprint.
 */
void
identity_describe(const struct identity *id, char *buf, size_t len)
{
	static const char *const types[] = { "dns", "uri", "ip", "email" };
	char			 name[128];
	const char		*type = "cn";
	const char		*value = id->cn;
	int			 i;

	if (id->cn[0] == '\0' && id->nsan > 0) {
		type = types[id->san[0].type];
		value = id->san[0].value;
	}
	if (value[0] == '\0') {
		type = "anonymous";
		name[0] = '\0';
	} else
		escape_name(name, sizeof(name), value);
	snprintf(buf, len, "%s%s%s,sha256:", type, name[0] != '\0' ? ":" : "",
	    name);
	for (i = 0; i < 8; i++)
		snprintf(buf + strlen(buf), len - strlen(buf), "%02x",
		    id->fingerprint[i]);
}
