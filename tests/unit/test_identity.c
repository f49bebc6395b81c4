/*
 * Copyright (c) 2026 The dsroute authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/* Unit tests of the allow-list rules and the identity matcher. */

#include "config.h"

#include <string.h>

#include "router/dsroute.h"
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

static void
add_san(struct identity *id, enum san_type type, const char *value)
{
	id->san[id->nsan].type = type;
	strcpy(id->san[id->nsan].value, value);
	id->nsan++;
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

static void
test_match(void)
{
	struct identity	 id;
	char		 desc[160];

	memset(&id, 0, sizeof(id));
	strcpy(id.cn, "tool");
	add_san(&id, SAN_URI, "spiffe://dsroute.test/tool");
	add_san(&id, SAN_EMAIL, "tool.example");
	id.fingerprint[0] = 0x12;

	reset();
	ok(rule(ALLOW_SAN, "dns:spiffe://dsroute.test/tool") && !matches(&id),
	    "a DNS rule does not match a URI SAN");
	ok(rule(ALLOW_SAN, "dns:tool.example") && !matches(&id),
	    "a DNS rule does not match an e-mail SAN");
	ok(rule(ALLOW_SAN, "dns:tool") && !matches(&id),
	    "a DNS rule does not match the CN");
	ok(rule(ALLOW_CN, "Tool") && !matches(&id), "CN compared exactly");
	ok(rule(ALLOW_SAN, "uri:spiffe://dsroute.test/tool/") &&
	    !matches(&id), "no prefix matching");
	ok(rule(ALLOW_SAN, "uri:spiffe://dsroute.test/tool") &&
	    identity_match(&id, rules, nrules) == nrules - 1,
	    "the URI rule matches, and its index is returned");
	reset();
	ok(rule(ALLOW_CN, "tool") && matches(&id), "CN rule");
	reset();
	ok(!matches(&id), "an empty list matches nothing");
	memset(id.fingerprint, 0xab, sizeof(id.fingerprint));
	ok(rule(ALLOW_FP, "abababababababababababababababab"
	    "abababababababababababababababab") && matches(&id),
	    "fingerprint rule");

	identity_describe(&id, desc, sizeof(desc));
	ok(strcmp(desc, "cn:tool,sha256:abababababababab") == 0,
	    "described by CN and fingerprint prefix: %s", desc);
	strcpy(id.cn, "a b,(c)");
	identity_describe(&id, desc, sizeof(desc));
	ok(strcmp(desc, "cn:a\\x20b\\x2c\\x28c\\x29,sha256:abababababababab")
	    == 0, "spaces and separators escaped: %s", desc);
	id.cn[0] = '\0';
	identity_describe(&id, desc, sizeof(desc));
	ok(strncmp(desc, "uri:spiffe://dsroute.test/tool,", 31) == 0,
	    "no CN: the first SAN: %s", desc);
}

int
main(void)
{
	test_parse();
	test_match();
	return (tap_done());
}
