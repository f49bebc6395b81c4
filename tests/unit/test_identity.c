/* SPDX-License-Identifier: ISC */

/* Unit tests of identities, the allow-list rules and the matcher. */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/identity.h"
#include "router/acl.h"
#include "tap.h"

static struct allow_rule	 rules[8];
static int			 nrules;
static char			 err[256];

static int
rule(enum allow_kind kind, const char *value)
{
	return (identity_rule_parse(kind, value, &rules[nrules++], err,
	    sizeof(err)) == 0);
}

static struct identity_draft	 draft;

static int
add_san(enum san_type type, const char *value)
{
	return (identity_draft_san(&draft, type, value, strlen(value)));
}

static int
matches(const struct identity *id)
{
	return (identity_match(id, rules, nrules) != -1);
}

static void
reset(void)
{
	memset(rules, 0, sizeof(rules));
	nrules = 0;
}

static void
test_parse(void)
{
	reset();
	ok(rule(ALLOW_SAN, "dns:tool.example") &&
	    rules[0].san_type == SAN_DNS &&
	    strcmp(rules[0].value, "tool.example") == 0, "dns: rule");
	ok(rule(ALLOW_SAN, "ip:0:0::1") && rules[1].san_type == SAN_IP &&
	    strcmp(rules[1].value, "::1") == 0, "ip: rule in canonical form");
	ok(!rule(ALLOW_SAN, "ip:300.1.1.1") && strstr(err, "not an IPv4"),
	    "bad ip: rule");
	ok(!rule(ALLOW_SAN, "tool.example") && strstr(err, "dns:NAME"),
	    "untyped SAN rule refused");
	ok(!rule(ALLOW_CN, "") && strstr(err, "1 to"), "empty CN refused");
	ok(rule(ALLOW_FP, "AB:CD:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89:"
	    "ab:cd:ef:01:23:45:67:89:ab:cd:ef:01:23:45:67:89") &&
	    rules[5].fingerprint[0] == 0xab && rules[5].fingerprint[31] == 0x89,
	    "fingerprint with colons");
	ok(!rule(ALLOW_FP, "ab:cd:") && !rule(ALLOW_FP,
	    "abcdef0123456789abcdef0123456789"
	    "abcdef0123456789abcdef012345678900"),
	    "fingerprints of the wrong length refused");
}

/* What a backend hands over, and what an identity keeps. */
static void
test_draft(void)
{
	static const char	 nul_cn[] = "tool\0.evil.example";
	static const uint8_t	 v4[4] = { 192, 0, 2, 7 };
	static const uint8_t	 v6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 1 };
	struct identity		*id;
	char			 longest[IDENTITY_NAME_MAX + 2];
	int			 i;

	identity_draft_init(&draft);
	ok(identity_draft_cn(&draft, nul_cn, sizeof(nul_cn) - 1) == -1 &&
	    draft.cn[0] == '\0', "a CN with a NUL inside is left out whole, "
	    "not cut at the NUL");
	ok(identity_draft_san(&draft, SAN_DNS, nul_cn, sizeof(nul_cn) - 1) ==
	    -1 && identity_draft_san(&draft, SAN_DNS, "tool\0", 5) == -1 &&
	    draft.nsan == 0, "so is a SAN, even with the NUL last");
	ok(identity_draft_cn(&draft, "", 0) == -1 && add_san(SAN_URI, "") ==
	    -1, "empty names are left out");
	memset(longest, 'a', sizeof(longest));
	ok(identity_draft_cn(&draft, longest, IDENTITY_NAME_MAX + 1) == -1 &&
	    identity_draft_cn(&draft, longest, IDENTITY_NAME_MAX) == 0 &&
	    strlen(draft.cn) == IDENTITY_NAME_MAX,
	    "names up to %d bytes are kept, longer ones left out whole",
	    IDENTITY_NAME_MAX);
	ok(identity_draft_cn(&draft, "tool", 4) == 0 &&
	    strcmp(draft.cn, "tool") == 0, "a clean CN is kept");
	ok(identity_draft_san(&draft, SAN_IP, v4, 4) == 0 &&
	    identity_draft_san(&draft, SAN_IP, v6, 16) == 0 &&
	    identity_draft_san(&draft, SAN_IP, v6, 5) == -1 &&
	    strcmp(draft.san[0].value, "192.0.2.7") == 0 &&
	    strcmp(draft.san[1].value, "2001:db8::1") == 0,
	    "IP SANs are kept as text; other lengths are left out");
	for (i = 2; i < IDENTITY_MAX_SANS; i++)
		add_san(SAN_DNS, "n.example");
	ok(add_san(SAN_DNS, "one.too.many") == -1 &&
	    draft.nsan == IDENTITY_MAX_SANS, "at most %d SANs",
	    IDENTITY_MAX_SANS);
	draft.fingerprint[31] = 0x5a;

	id = identity_pack(&draft);
	ok(id != NULL && strcmp(id->cn, draft.cn) == 0 &&
	    id->nsan == IDENTITY_MAX_SANS && id->san[0].type == SAN_IP &&
	    strcmp(id->san[1].value, "2001:db8::1") == 0 &&
	    id->san[15].type == SAN_DNS &&
	    strcmp(id->san[15].value, "n.example") == 0 &&
	    id->fingerprint[31] == 0x5a, "packed: the same names and pin");
	free(id);

	identity_draft_init(&draft);
	id = identity_pack(&draft);
	ok(id != NULL && id->cn[0] == '\0' && id->nsan == 0,
	    "an identity without names has an empty CN and no SAN");
	free(id);
}

static void
test_match(void)
{
	struct identity	*id;
	char		 desc[160];

	identity_draft_init(&draft);
	identity_draft_cn(&draft, "tool", 4);
	add_san(SAN_URI, "spiffe://dsroute.test/tool");
	add_san(SAN_EMAIL, "tool.example");
	draft.fingerprint[0] = 0x12;
	id = identity_pack(&draft);

	reset();
	ok(rule(ALLOW_SAN, "dns:spiffe://dsroute.test/tool") && !matches(id),
	    "a DNS rule does not match a URI SAN");
	ok(rule(ALLOW_SAN, "dns:tool.example") && !matches(id),
	    "a DNS rule does not match an e-mail SAN");
	ok(rule(ALLOW_SAN, "dns:tool") && !matches(id),
	    "a DNS rule does not match the CN");
	ok(rule(ALLOW_CN, "Tool") && !matches(id), "CN compared exactly");
	ok(rule(ALLOW_SAN, "uri:spiffe://dsroute.test/tool/") &&
	    !matches(id), "no prefix matching");
	ok(rule(ALLOW_SAN, "uri:spiffe://dsroute.test/tool") &&
	    identity_match(id, rules, nrules) == nrules - 1,
	    "the URI rule matches, and its index is returned");
	reset();
	ok(rule(ALLOW_CN, "tool") && matches(id), "CN rule");
	reset();
	ok(!matches(id), "an empty list matches nothing");
	free(id);

	memset(draft.fingerprint, 0xab, sizeof(draft.fingerprint));
	id = identity_pack(&draft);
	ok(rule(ALLOW_FP, "abababababababababababababababab"
	    "abababababababababababababababab") && matches(id),
	    "fingerprint rule");
	identity_describe(id, desc, sizeof(desc));
	ok(strcmp(desc, "cn:tool,sha256:abababababababab") == 0,
	    "described by CN and fingerprint prefix: %s", desc);
	free(id);

	identity_draft_cn(&draft, "a b,(c)", 7);
	id = identity_pack(&draft);
	identity_describe(id, desc, sizeof(desc));
	ok(strcmp(desc, "cn:a\\x20b\\x2c\\x28c\\x29,sha256:abababababababab")
	    == 0, "spaces and separators escaped: %s", desc);
	free(id);

	draft.cn[0] = '\0';
	id = identity_pack(&draft);
	identity_describe(id, desc, sizeof(desc));
	ok(strncmp(desc, "uri:spiffe://dsroute.test/tool,", 31) == 0,
	    "no CN: the first SAN: %s", desc);
	free(id);
}

/*
 * TLS-10: a certificate whose CN or SAN is an allowed name, a NUL and
 * more never matches that name, nor anything else.
 */
static void
test_nul_names(void)
{
	static const char	 evil[] = "tool\0.evil.example";
	struct identity		*id;

	identity_draft_init(&draft);
	(void)identity_draft_cn(&draft, evil, sizeof(evil) - 1);
	(void)identity_draft_san(&draft, SAN_DNS, evil, sizeof(evil) - 1);
	(void)identity_draft_san(&draft, SAN_URI, evil, sizeof(evil) - 1);
	id = identity_pack(&draft);
	reset();
	ok(rule(ALLOW_CN, "tool") && rule(ALLOW_SAN, "dns:tool") &&
	    rule(ALLOW_SAN, "uri:tool") && !matches(id),
	    "TLS-10: names with a NUL match no rule, not even their prefix");
	free(id);
}

/* A CN in each string type becomes one UTF-8 name, or none. */
static void
test_cn_strings(void)
{
	static const uint8_t	 bmp[] = { 0, 't', 0, 'o', 0, 'o', 0, 'l',
	    0x00, 0xe9 };
	static const uint8_t	 univ[] = { 0, 0, 0, 't', 0, 1, 0xf6, 0x00 };
	static const uint8_t	 surrogate[] = { 0, 't', 0xd8, 0x3d };
	static const uint8_t	 bmp_nul[] = { 0, 't', 0, 0 };
	char			 out[IDENTITY_NAME_MAX + 1];

	ok(identity_cn_decode(CN_UTF8, "tool\xc3\xa9", 6, out,
	    sizeof(out)) == 6 && strcmp(out, "tool\xc3\xa9") == 0,
	    "UTF8String: its bytes");
	ok(identity_cn_decode(CN_BMP, bmp, sizeof(bmp), out,
	    sizeof(out)) == 6 && strcmp(out, "tool\xc3\xa9") == 0,
	    "BMPString: the same name in UTF-8");
	ok(identity_cn_decode(CN_UNIVERSAL, univ, sizeof(univ), out,
	    sizeof(out)) == 5 && strcmp(out, "t\xf0\x9f\x98\x80") == 0,
	    "UniversalString: beyond the BMP too");
	ok(identity_cn_decode(CN_PRINTABLE, "tool", 4, out,
	    sizeof(out)) == 4 && identity_cn_decode(CN_IA5, "tool", 4, out,
	    sizeof(out)) == 4 && identity_cn_decode(CN_T61, "tool", 4, out,
	    sizeof(out)) == 4, "PrintableString, IA5String, T61String: ASCII");
	ok(identity_cn_decode(CN_T61, "tool\xe9", 5, out, sizeof(out)) ==
	    -1 && identity_cn_decode(CN_PRINTABLE, "tool\xe9", 5, out,
	    sizeof(out)) == -1, "... and nothing beyond, whose meaning differs");
	ok(identity_cn_decode(CN_UTF8, "bad\xff", 4, out, sizeof(out)) ==
	    -1 && identity_cn_decode(CN_UTF8, "\xc0\xaf", 2, out,
	    sizeof(out)) == -1 && identity_cn_decode(CN_UTF8, "\xed\xa0\x80",
	    3, out, sizeof(out)) == -1 && identity_cn_decode(CN_UTF8,
	    "\xe2\x82", 2, out, sizeof(out)) == -1,
	    "UTF8String: not UTF-8, overlong, a surrogate, cut short: none");
	ok(identity_cn_decode(CN_BMP, bmp, 3, out, sizeof(out)) == -1 &&
	    identity_cn_decode(CN_BMP, surrogate, sizeof(surrogate), out,
	    sizeof(out)) == -1 && identity_cn_decode(CN_BMP, bmp_nul,
	    sizeof(bmp_nul), out, sizeof(out)) == -1 &&
	    identity_cn_decode(CN_UTF8, "a\0b", 3, out, sizeof(out)) == -1,
	    "an odd BMPString, a surrogate, a NUL: none");
	ok(identity_cn_decode(CN_OTHER, "tool", 4, out, sizeof(out)) == -1,
	    "another string type: none");
	ok(identity_cn_decode(CN_UTF8, "tool", 4, out, 4) == -1 &&
	    identity_cn_decode(CN_UTF8, "tool", 4, out, 5) == 4,
	    "a name that does not fit: none");
	identity_draft_init(&draft);
	ok(identity_draft_cn_string(&draft, CN_BMP, bmp, sizeof(bmp)) == 0 &&
	    strcmp(draft.cn, "tool\xc3\xa9") == 0, "kept as the CN");
}

/* Whether a presented name names the host dialled. */
static int
host(const char *presented, const char *name)
{
	return (identity_dns_match(presented, strlen(presented), name));
}

static void
test_dns_match(void)
{
	ok(host("node.test", "node.test") && host("NODE.Test", "node.TEST"),
	    "equal but for case");
	ok(!host("node.test.", "node.test") && !host("node.test", "node.test.")
	    && host("node.test.", "node.test."), "a trailing dot counts");
	ok(!host("node.tes", "node.test") && !host("node.test.evil",
	    "node.test") && !host("evilnode.test", "node.test"),
	    "no prefix, no suffix");
	ok(host("*.node.test", "a.node.test") &&
	    host("*.node.test", "xn--bcher-kva.node.test") &&
	    host("*.NODE.test", "A.node.TEST"), "a wildcard for one label");
	ok(!host("*.node.test", "node.test") &&
	    !host("*.node.test", "a.b.node.test") &&
	    !host("*.node.test", ".node.test"),
	    "no empty label, no two labels");
	ok(!host("*.test", "node.test") && !host("*.test.", "node.test.") &&
	    !host("*", "node"), "none right under a top-level domain");
	ok(!host("x*.node.test", "xa.node.test") &&
	    !host("*a.node.test", "ba.node.test") &&
	    !host("a.*.test", "a.node.test") &&
	    !host("*.*.test", "a.node.test"), "no partial wildcard");
	ok(!host("*.no de.test", "a.no de.test") &&
	    !host("*.node..test", "a.node..test"),
	    "a wildcard only over letters, digits, '-' and single dots");
	ok(!identity_dns_match("node.test\0.evil", 15, "node.test") &&
	    !identity_dns_match("node.test\0", 10, "node.test"),
	    "a name with a NUL names nothing");
	ok(!host("", "node.test") && !host("node.test", ""),
	    "empty names name nothing");
	ok(host("*.node.test", "*.node.test") &&
	    !host("*.node.test", "*a.node.test"),
	    "a '*' dialled is only itself");
}

int
main(void)
{
	test_parse();
	test_draft();
	test_match();
	test_nul_names();
	test_cn_strings();
	test_dns_match();
	return (tap_done());
}
