/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the TLS allow-list: rules from text, identities from bytes.  The
 * input is
 *
 *	allow-cn=NAME\n		rules, one a line, as the endpoint options
 *	allow-san=TYPE:NAME\n	write them (at most MAX_RULES)
 *	allow-fp=HEX\n
 *	\0
 *	flags			bit 0: the fingerprint is the first allow-fp
 *				rule's, with one of its bytes (the next byte
 *				mod 32) XORed with the byte after
 *	cn			length, bytes
 *	SANs			count, then per SAN: type, length, bytes
 *	fingerprint		32 bytes, unless bit 0 says otherwise
 *
 * Missing bytes read as zero.  A name holding a NUL is left out of the
 * identity, as the TLS backends do (fuzz_cert checks that they do).
 * Checked (security.md 3.8, AC-6):
 * - a rule that parses says what its text says: its kind, its SAN type
 *   from the prefix, its value byte for byte (an IP in inet_ntop form),
 *   the fingerprint's 32 bytes;
 * - a SAN rule matches only a SAN of its own type (a DNS rule never a URI,
 *   e-mail or IP SAN, nor the CN, and the reverse); a CN rule only the CN;
 * - matching is exact: same length, same bytes, no case folding, no prefix;
 * - an allow-fp rule matches only the exact 32 bytes;
 * - identity_match returns the first rule that matches;
 * - identity_describe writes one printable token and never overruns.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/identity.h"
#include "router/acl.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAX_RULES	8

struct reader {
	const uint8_t	*p;
	size_t		 n;
};

static uint8_t
take8(struct reader *r)
{
	if (r->n == 0)
		return (0);
	r->n--;
	return (*r->p++);
}

/* A name of up to 255 bytes; one with a NUL inside comes out empty. */
static void
take_name(struct reader *r, char *dst, size_t size)
{
	size_t	 i, len = take8(r);

	for (i = 0; i < len && i + 1 < size; i++)
		dst[i] = (char)take8(r);
	dst[i] = '\0';
	if (strlen(dst) != i)
		dst[0] = '\0';
}

static int
hexdigit(int c)
{
	const char	*digits = "0123456789abcdef";
	const char	*p;

	if (c == '\0' ||
	    (p = strchr(digits, tolower((unsigned char)c))) == NULL)
		return (-1);
	return (p - digits);
}

/* Check a parsed rule against the text it came from. */
static void
check_rule(const char *option, const char *text, const struct allow_rule *rule)
{
	static const char *const prefixes[] = { "dns:", "uri:", "ip:",
	    "email:" };
	uint8_t		 fp[32], addr[16];
	char		 ip[INET6_ADDRSTRLEN];
	const char	*v;
	size_t		 n = 0;

	if (strcmp(option, "allow-fp") == 0) {
		if (rule->kind != ALLOW_FP)
			abort();
		for (v = text; *v != '\0'; v++) {
			if (*v == ':')
				continue;
			if (n == 64 || hexdigit(*v) == -1)
				abort();	/* only hex and colons */
			if (n % 2 == 0)
				fp[n / 2] = hexdigit(*v) << 4;
			else
				fp[n / 2] |= hexdigit(*v);
			n++;
		}
		if (n != 64 || memcmp(fp, rule->fingerprint, 32) != 0)
			abort();
		return;
	}
	if (strcmp(option, "allow-cn") == 0) {
		if (rule->kind != ALLOW_CN || strcmp(rule->value, text) != 0)
			abort();
		return;
	}
	if (rule->kind != ALLOW_SAN || rule->san_type > SAN_EMAIL)
		abort();
	v = prefixes[rule->san_type];
	if (strncmp(text, v, strlen(v)) != 0)
		abort();	/* the type is the one the text names */
	v = text + strlen(v);
	if (rule->san_type != SAN_IP) {
		if (strcmp(rule->value, v) != 0 || v[0] == '\0')
			abort();
		return;
	}
	if (inet_pton(AF_INET, v, addr) == 1)
		inet_ntop(AF_INET, addr, ip, sizeof(ip));
	else if (inet_pton(AF_INET6, v, addr) == 1)
		inet_ntop(AF_INET6, addr, ip, sizeof(ip));
	else
		abort();
	if (strcmp(rule->value, ip) != 0)
		abort();
}

/* Byte-wise equality of two names, lengths included. */
static int
same_name(const char *a, const char *b)
{
	size_t	 n = strlen(a);

	return (n == strlen(b) && memcmp(a, b, n) == 0);
}

/* What a rule must match, from the definition, not from identity.c. */
static int
should_match(const struct allow_rule *rule, const struct identity *id)
{
	int	 i;

	switch (rule->kind) {
	case ALLOW_CN:
		return (id->cn[0] != '\0' && same_name(id->cn, rule->value));
	case ALLOW_FP:
		for (i = 0; i < 32; i++) {
			if (id->fingerprint[i] != rule->fingerprint[i])
				return (0);
		}
		return (1);
	case ALLOW_SAN:
		for (i = 0; i < id->nsan; i++) {
			if (id->san[i].type == rule->san_type &&
			    same_name(id->san[i].value, rule->value))
				return (1);
		}
		return (0);
	}
	abort();
}

static void
check_describe(const struct identity *id)
{
	char	 buf[160];
	size_t	 i, n;
	int	 commas = 0;

	memset(buf, 'X', sizeof(buf));
	identity_describe(id, buf, sizeof(buf));
	if ((n = strnlen(buf, sizeof(buf))) == sizeof(buf))
		abort();
	for (i = 0; i < n; i++) {
		if (buf[i] <= ' ' || buf[i] > '~')
			abort();	/* one printable token */
		commas += buf[i] == ',';
	}
	if (commas != 1 || strstr(buf, ",sha256:") == NULL)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct allow_rule	 rules[MAX_RULES];
	struct identity_draft	 d;
	struct identity		*id;
	struct reader		 r;
	const uint8_t		*nul;
	char			*text, *line, *next, *value, err[512];
	uint8_t			 flags;
	int			 nrules = 0, first_fp = -1, first, i, rv;
	size_t			 k;
	enum allow_kind		 kind;

	if ((nul = memchr(data, '\0', size)) == NULL)
		return (0);
	if ((text = strdup((const char *)data)) == NULL)
		return (0);
	for (line = text; line != NULL && nrules < MAX_RULES; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		if ((value = strchr(line, '=')) == NULL)
			continue;
		*value++ = '\0';
		if (strcmp(line, "allow-cn") == 0)
			kind = ALLOW_CN;
		else if (strcmp(line, "allow-san") == 0)
			kind = ALLOW_SAN;
		else if (strcmp(line, "allow-fp") == 0)
			kind = ALLOW_FP;
		else
			continue;
		err[0] = '\0';
		rv = identity_rule_parse(kind, value, &rules[nrules], err,
		    sizeof(err));
		if (rv == -1) {
			if (err[0] == '\0')
				abort();	/* a refusal says why */
			continue;
		}
		check_rule(line, value, &rules[nrules]);
		if (kind == ALLOW_FP && first_fp == -1)
			first_fp = nrules;
		nrules++;
	}
	free(text);

	r.p = nul + 1;
	r.n = size - (nul + 1 - data);
	/* Names as any bytes: a draft, not one a transport has cleaned. */
	memset(&d, 0, sizeof(d));
	flags = take8(&r);
	take_name(&r, d.cn, sizeof(d.cn));
	k = take8(&r) % (IDENTITY_MAX_SANS + 1);
	while (k-- > 0) {
		d.san[d.nsan].type = take8(&r) % 4;
		take_name(&r, d.san[d.nsan].value, sizeof(d.san[0].value));
		if (d.san[d.nsan].value[0] != '\0')
			d.nsan++;
	}
	if ((flags & 1) && first_fp != -1) {
		memcpy(d.fingerprint, rules[first_fp].fingerprint, 32);
		i = take8(&r) % 32;
		d.fingerprint[i] ^= take8(&r);
	} else {
		for (i = 0; i < 32; i++)
			d.fingerprint[i] = take8(&r);
	}
	if ((id = identity_pack(&d)) == NULL)
		abort();

	first = -1;
	for (i = 0; i < nrules; i++) {
		rv = identity_match(id, &rules[i], 1);
		if (rv != (should_match(&rules[i], id) ? 0 : -1))
			abort();	/* wrong type, inexact, or missed */
		if (rv == 0 && first == -1)
			first = i;
	}
	if (identity_match(id, rules, nrules) != first)
		abort();
	check_describe(id);
	free(id);
	return (0);
}
