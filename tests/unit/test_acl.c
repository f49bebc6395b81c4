/* SPDX-License-Identifier: ISC */

/*
 * Unit tests of the access control: the truth table of every (set, id)
 * for every peer class and role against DESIGN.md section 4 (written out
 * here, apart from acl.c), rules, grants and identities, the payload
 * checks, and random messages.  Every message lives in a buffer of its
 * exact size, so AddressSanitizer catches any read past it.
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
#include "common/ipc.h"
#include "router/acl.h"
#include "tap.h"

#define SELF_UID	1000
#define RUNTIME_UID	1001
#define OTHER_UID	1002

/* DESIGN.md section 4, independently of acl.c. */
static const uint16_t known[] = {
	0x0101, 0x0102, 0x0103,				/* GenerateCoreDump */
	0x0201, 0x0202, 0x0203, 0x0204, 0x0205, 0x0206, 0x0207,
	0x0301, 0x0302,					/* profilers */
	0x0400, 0x0401, 0x0402, 0x0403, 0x0404, 0x0405, 0x0406, 0x0407,
	0x0408,
	0xd501, 0xd502, 0xd504,	/* routers' own: docs/extension.md */
};
static const uint16_t observe_set[] = {
	0x0400, 0x0404, 0x0408,				/* ProcessInfo 1-3 */
	0xd501, 0xd502, 0xd504,				/* routers' own */
	0x0201,						/* StopTracing */
	0x0202, 0x0203, 0x0204, 0x0205, 0x0206, 0x0207,	/* CollectTracing */
};
static const uint16_t no_payload[] = {
	0x0400, 0x0401, 0x0402, 0x0404, 0x0406, 0x0408,
};

static char	 err[512];

static int
in(const uint16_t *list, size_t n, int cmd)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (list[i] == cmd)
			return (1);
	}
	return (0);
}

#define IN(list, cmd)	in(list, sizeof(list) / sizeof(list[0]), cmd)

static int
expected_allow(enum acl_role role, int cmd)
{
	if (!IN(known, cmd))
		return (0);
	switch (role) {
	case ACL_NONE:
		return (0);
	case ACL_OBSERVE:
		return (IN(observe_set, cmd));
	case ACL_OPERATE:
		return (IN(observe_set, cmd) || cmd == 0x0401);
	case ACL_DUMP:
		return (IN(observe_set, cmd) || cmd == 0x0401 ||
		    (cmd >= 0x0101 && cmd <= 0x0103));
	case ACL_FULL:
		return (1);
	}
	return (0);
}

/* Build a message in a buffer of exactly its size; free it after use. */
static uint8_t *
message(int set, int id, const uint8_t *payload, size_t plen, size_t *len)
{
	uint8_t	*m;

	*len = IPC_HEADER_LEN + plen;
	if ((m = malloc(*len)) == NULL)
		abort();
	ipc_request(m, set, id);
	m[14] = *len & 0xff;
	m[15] = *len >> 8;
	if (plen > 0)
		memcpy(m + IPC_HEADER_LEN, payload, plen);
	return (m);
}

/*
 * Decide on (set, id) with a payload that passes every payload check: for
 * CollectTracing6 a whole streaming session in Drop mode, no provider.
 */
static void
decide_cmd(const struct acl_policy *p, const struct acl_peer *peer, int cmd,
    struct acl_decision *d)
{
	static const uint8_t	 benign[8] = { 0, 0, 0, 0, 64, 0, 0, 0 };
	static const uint8_t	 drop6[29] = { 0, 0, 0, 0, 64, 0, 0, 0, 1 };
	uint8_t			*m;
	size_t			 len;

	if (cmd == 0x0207)
		m = message(cmd >> 8, cmd & 0xff, drop6, sizeof(drop6), &len);
	else
		m = message(cmd >> 8, cmd & 0xff, benign, IN(no_payload, cmd) ?
		    0 : sizeof(benign), &len);
	acl_decide(p, peer, m, len, d);
	free(m);
}

static void
peer_local(struct acl_peer *peer, uid_t uid)
{
	memset(peer, 0, sizeof(*peer));
	peer->local = 1;
	peer->have_cred = 1;
	peer->uid = uid;
	peer->gid = 100;
	peer->self_uid = SELF_UID;
	peer->have_runtime_uid = 1;
	peer->runtime_uid = RUNTIME_UID;
}

static void
peer_tcp(struct acl_peer *peer, const char *addr)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)&peer->addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&peer->addr;

	memset(peer, 0, sizeof(*peer));
	peer->self_uid = SELF_UID;
	if (inet_pton(AF_INET, addr, &sin->sin_addr) == 1)
		sin->sin_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &sin6->sin6_addr) == 1)
		sin6->sin6_family = AF_INET6;
	else
		abort();
}

/* Compare all 65,536 (set, id) with the table; return the mismatches. */
static int
truth_table(const struct acl_policy *p, const struct acl_peer *peer,
    enum acl_role role, const char *what)
{
	struct acl_decision	 d;
	int			 cmd, want, ok_answer, bad = 0;
	uint32_t		 hr;

	for (cmd = 0; cmd <= 0xffff; cmd++) {
		if ((cmd >> 8) == IPC_SET_SERVER)
			continue;	/* ipc_classify refuses these first */
		decide_cmd(p, peer, cmd, &d);
		want = expected_allow(role, cmd);
		/* observe: ResumeRuntime answered OK, sent on to nobody. */
		ok_answer = role == ACL_OBSERVE && cmd == 0x0401;
		hr = !IN(known, cmd) ? HRESULT_UNKNOWN_COMMAND : ok_answer ? 0 :
		    HRESULT_ACCESS_DENIED;
		if (d.allow != want || (!want && d.hresult != hr) ||
		    d.answer_ok != ok_answer ||
		    d.rule == NULL || d.reason == NULL) {
			if (bad++ == 0)
				printf("# %s: 0x%04x allow=%d want %d "
				    "hresult 0x%08x rule %s\n", what, cmd,
				    d.allow, want, d.hresult, d.rule);
		}
	}
	return (bad);
}

static void
test_truth_tables(void)
{
	static const struct {
		const char	*name;
		enum acl_role	 role;
	} roles[] = {
		{ "none", ACL_NONE }, { "observe", ACL_OBSERVE },
		{ "operate", ACL_OPERATE }, { "dump", ACL_DUMP },
		{ "full", ACL_FULL },
	};
	struct identity_draft	 draft;
	struct identity		*id;
	struct acl_policy	*p;
	struct acl_peer		 peer;
	char			 what[96];
	size_t			 i;

	/* The defaults of each peer class. */
	peer_local(&peer, SELF_UID);
	ok(truth_table(NULL, &peer, ACL_FULL, "same uid") == 0,
	    "default: local peer with dsroute's uid: full (65,280 pairs)");
	peer_local(&peer, 0);
	ok(truth_table(NULL, &peer, ACL_FULL, "root") == 0,
	    "default: local root: full");
	peer_local(&peer, RUNTIME_UID);
	ok(truth_table(NULL, &peer, ACL_FULL, "runtime uid") == 0,
	    "default: local peer with the runtime's uid: full");
	peer.have_runtime_uid = 0;
	ok(truth_table(NULL, &peer, ACL_NONE, "runtime uid unknown") == 0,
	    "default: the runtime's uid counts only when it is known");
	peer_local(&peer, OTHER_UID);
	ok(truth_table(NULL, &peer, ACL_NONE, "other uid") == 0,
	    "default: local peer with another uid: nothing");
	peer_local(&peer, SELF_UID);
	peer.have_cred = 0;
	ok(truth_table(NULL, &peer, ACL_NONE, "no credentials") == 0,
	    "default: local peer without credentials: nothing");
	peer_tcp(&peer, "127.0.0.1");
	ok(truth_table(NULL, &peer, ACL_OPERATE, "tcp v4") == 0,
	    "default: tcp peer on 127.0.0.1: operate");
	peer_tcp(&peer, "::1");
	ok(truth_table(NULL, &peer, ACL_OPERATE, "tcp v6") == 0,
	    "default: tcp peer on ::1: operate");
	identity_draft_init(&draft);
	identity_draft_cn(&draft, "client", 6);
	if ((id = identity_pack(&draft)) == NULL)
		abort();
	peer_tcp(&peer, "127.0.0.1");
	peer.identity = id;
	ok(truth_table(NULL, &peer, ACL_OPERATE, "tls") == 0,
	    "default: tls peer: operate");

	/* Each role through policy=, for each peer class. */
	for (i = 0; i < sizeof(roles) / sizeof(roles[0]); i++) {
		p = NULL;
		if (acl_set_policy(&p, roles[i].name, err, sizeof(err)) == -1)
			abort();
		peer_local(&peer, SELF_UID);
		snprintf(what, sizeof(what), "policy=%s, local same uid",
		    roles[i].name);
		ok(truth_table(p, &peer, roles[i].role, what) == 0, "%s", what);
		peer_local(&peer, OTHER_UID);
		snprintf(what, sizeof(what), "policy=%s, local other uid",
		    roles[i].name);
		ok(truth_table(p, &peer, roles[i].role, what) == 0, "%s", what);
		peer_tcp(&peer, "127.0.0.1");
		snprintf(what, sizeof(what), "policy=%s, tcp loopback",
		    roles[i].name);
		ok(truth_table(p, &peer, roles[i].role, what) == 0, "%s", what);
		peer.identity = id;
		snprintf(what, sizeof(what), "policy=%s, tls", roles[i].name);
		ok(truth_table(p, &peer, roles[i].role, what) == 0, "%s", what);
		peer_local(&peer, SELF_UID);
		peer.have_cred = 0;
		snprintf(what, sizeof(what), "policy=%s, local without "
		    "credentials gets nothing", roles[i].name);
		ok(truth_table(p, &peer, ACL_NONE, what) == 0, "%s", what);
		acl_policy_free(p);
	}
	free(id);
}

/* Decide on a payload-free or benign command; return the decision. */
static int
allows(const struct acl_policy *p, const struct acl_peer *peer, int cmd,
    const char **rule)
{
	struct acl_decision	 d;

	decide_cmd(p, peer, cmd, &d);
	if (rule != NULL)
		*rule = d.rule;
	return (d.allow);
}

static struct acl_policy *
policy(const char *const *opts)
{
	struct acl_policy	*p = NULL;
	enum acl_role		 role;
	const char		*v;
	char			 name[32];
	size_t			 n;
	int			 rv;

	for (; *opts != NULL; opts++) {
		v = strchr(*opts, '=');
		n = v - *opts;
		snprintf(name, sizeof(name), "%.*s", (int)n, *opts);
		v++;
		if (strcmp(name, "policy") == 0)
			rv = acl_set_policy(&p, v, err, sizeof(err));
		else if (strcmp(name, "allow") == 0)
			rv = acl_add_rule(&p, 1, v, err, sizeof(err));
		else if (strcmp(name, "deny") == 0)
			rv = acl_add_rule(&p, 0, v, err, sizeof(err));
		else if (strcmp(name, "dump-dir") == 0)
			rv = acl_set_dump_dir(&p, v, err, sizeof(err));
		else if (strcmp(name, "max-buffer-mb") == 0)
			rv = acl_set_max_buffer(&p, v, err, sizeof(err));
		else if (strcmp(name, "advertise") == 0)
			rv = acl_add_advertiser(&p, v, err, sizeof(err));
		else if (strcmp(name, "may-stall-app") == 0)
			rv = acl_set_may_stall_app(&p, err, sizeof(err));
		else if (acl_role_parse(name, &role) == 0)
			rv = acl_add_grant(&p, role, v, err, sizeof(err));
		else
			rv = -1;
		if (rv == -1) {
			printf("# %s: %s\n", *opts, err);
			abort();
		}
	}
	return (p);
}

#define POLICY(...)	policy((const char *const []){ __VA_ARGS__, NULL })

static void
test_rules(void)
{
	struct acl_policy	*p;
	struct acl_peer		 peer, other;
	const char		*rule;
	int			 cmd, all;

	peer_tcp(&peer, "127.0.0.1");
	peer_local(&other, OTHER_UID);

	p = POLICY("policy=observe", "allow=ResumeRuntime");
	ok(allows(p, &peer, 0x0401, &rule) && strcmp(rule,
	    "allow=ResumeRuntime") == 0, "allow= adds a command to the role, "
	    "and is named as the rule");
	ok(!allows(p, &peer, 0x0101, &rule) && strcmp(rule,
	    "role observe") == 0, "the role still decides the rest");
	acl_policy_free(p);

	p = POLICY("deny=CollectTracing*");
	peer_local(&peer, SELF_UID);
	for (cmd = 0x0202, all = 1; cmd <= 0x0207; cmd++)
		all &= !allows(p, &peer, cmd, NULL);
	ok(all, "deny=CollectTracing* denies CollectTracing 1 to 6, even to "
	    "a full peer");
	ok(allows(p, &peer, 0x0201, NULL) && allows(p, &peer, 0x0400, NULL),
	    "deny=CollectTracing* leaves StopTracing and ProcessInfo");
	acl_policy_free(p);

	p = POLICY("deny=4:1", "allow=ResumeRuntime");
	peer_tcp(&peer, "127.0.0.1");
	ok(!allows(p, &peer, 0x0401, &rule) && strcmp(rule, "deny=4:1") == 0,
	    "first match wins: deny=4:1 before allow=ResumeRuntime");
	acl_policy_free(p);
	p = POLICY("allow=0x0401", "deny=ResumeRuntime", "policy=none");
	ok(allows(p, &peer, 0x0401, &rule) && strcmp(rule,
	    "allow=0x0401") == 0, "first match wins: allow=0x0401 first");
	ok(!allows(p, &peer, 0x0400, NULL), "policy=none: nothing else");
	acl_policy_free(p);

	p = POLICY("allow=processinfo", "deny=0x04:0x02");
	ok(allows(p, &other, 0x0400, NULL), "names are matched without case; "
	    "rules apply to a peer with no role");
	ok(!allows(p, &other, 0x0404, NULL), "an exact name is not a prefix");
	peer_local(&peer, SELF_UID);
	ok(!allows(p, &peer, 0x0402, NULL), "0x04:0x02 names "
	    "ProcessEnvironment");
	acl_policy_free(p);

	p = POLICY("allow=*");
	ok(allows(p, &other, 0x0301, NULL), "allow=* allows every known "
	    "command");
	ok(!allows(p, &other, 0x0409, &rule) && strcmp(rule,
	    "unknown-command") == 0, "allow=* does not allow an unknown one");
	other.have_cred = 0;
	ok(!allows(p, &other, 0x0400, &rule) && strcmp(rule,
	    "no-credentials") == 0, "no rule helps a peer without "
	    "credentials");
	acl_policy_free(p);

	p = NULL;
	ok(acl_add_rule(&p, 0, "Foo*", err, sizeof(err)) == -1 &&
	    strstr(err, "no command has that name") != NULL,
	    "a name that matches no command is refused");
	ok(acl_add_rule(&p, 1, "0x0409", err, sizeof(err)) == -1 &&
	    strstr(err, "always refused") != NULL,
	    "a set and id that is no command is refused");
	ok(acl_add_rule(&p, 1, "4:300", err, sizeof(err)) == -1 &&
	    acl_add_rule(&p, 1, "4:", err, sizeof(err)) == -1 &&
	    acl_add_rule(&p, 1, "", err, sizeof(err)) == -1 &&
	    acl_add_rule(&p, 1, "Collect*Tracing", err, sizeof(err)) == -1 &&
	    acl_add_rule(&p, 1, "0x04", err, sizeof(err)) == -1 &&
	    acl_add_rule(&p, 1, "0x04zz", err, sizeof(err)) == -1 &&
	    acl_add_rule(&p, 1, "-4:1", err, sizeof(err)) == -1,
	    "malformed patterns are refused");
	ok(p == NULL, "a refused rule leaves no policy behind");
	ok(acl_set_policy(&p, "admin", err, sizeof(err)) == -1 && p == NULL,
	    "policy= takes only the five roles");
}

static void
test_grants(void)
{
	/* One spelling rule for sha256: and allow-fp= (identity.c). */
	static const struct {
		const char	*fp;
		int		 ok;
	} fingerprints[] = {
		{ "00112233445566778899aabbccddeeff"
		    "00112233445566778899aabbccddeeff", 1 },
		{ "00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:"
		    "00:11:22:33:44:55:66:77:88:99:aa:bb:cc:dd:ee:ff", 1 },
		{ ":00112233445566778899aabbccddeeff"
		    "00112233445566778899aabbccddeeff", 0 },
		{ "00112233445566778899aabbccddeeff"
		    "00112233445566778899aabbccddeeff:", 0 },
		{ "00::112233445566778899aabbccddeeff"
		    "00112233445566778899aabbccddeeff", 0 },
		{ "0:0112233445566778899aabbccddeeff"
		    "00112233445566778899aabbccddeeff", 0 },
		{ "00112233445566778899aabbccddeeff"
		    "00112233445566778899aabbccddee", 0 },
	};
	char		 grant[160];
	uint8_t		 fp[32];
	size_t		 i;
	int		 took;
	struct acl_policy	*p;
	struct acl_peer		 peer;
	struct acl_decision	 d;

	p = POLICY("observe=uid:1002", "dump=gid:100", "full=uid:1002");
	peer_local(&peer, OTHER_UID);
	decide_cmd(p, &peer, 0x0400, &d);
	ok(d.allow && d.role == ACL_OBSERVE && strcmp(d.role_from,
	    "observe=uid:1002") == 0, "uid grant: another uid gets observe");
	ok(!allows(p, &peer, 0x0401, NULL), "the first grant wins over a "
	    "later one");
	peer_local(&peer, 1003);
	decide_cmd(p, &peer, 0x0101, &d);
	ok(d.allow && d.role == ACL_DUMP, "gid grant: the primary gid gets "
	    "dump");
	peer_tcp(&peer, "127.0.0.1");
	decide_cmd(p, &peer, 0x0401, &d);
	ok(d.role == ACL_OPERATE, "uid and gid grants do not match a network "
	    "peer");
	acl_policy_free(p);

	p = POLICY("observe=addr:10.0.0.0/8", "dump=addr:[fd00::]/8",
	    "none=addr:127.0.0.2", "policy=none");
	peer_tcp(&peer, "10.200.3.4");
	ok(allows(p, &peer, 0x0400, NULL) && !allows(p, &peer, 0x0401, NULL),
	    "addr:10.0.0.0/8 matches 10.200.3.4");
	peer_tcp(&peer, "::ffff:10.1.2.3");
	ok(allows(p, &peer, 0x0400, NULL), "and the v4-mapped ::ffff:10.1.2.3");
	peer_tcp(&peer, "11.0.0.1");
	ok(!allows(p, &peer, 0x0400, NULL), "but not 11.0.0.1");
	peer_tcp(&peer, "fd12:3456::1");
	ok(allows(p, &peer, 0x0102, NULL), "addr:fd00::/8 matches fd12:3456::1");
	peer_tcp(&peer, "fe80::1");
	ok(!allows(p, &peer, 0x0400, NULL), "but not fe80::1");
	peer_tcp(&peer, "127.0.0.2");
	decide_cmd(p, &peer, 0x0400, &d);
	ok(!d.allow && strcmp(d.role_from, "none=addr:127.0.0.2") == 0,
	    "none=addr:127.0.0.2 shuts one host out");
	peer_local(&peer, SELF_UID);
	ok(!allows(p, &peer, 0x0400, NULL), "policy=none applies to local "
	    "peers too");
	acl_policy_free(p);

	p = NULL;
	ok(acl_add_grant(&p, ACL_OBSERVE, "bob", err, sizeof(err)) == -1 &&
	    strstr(err, "uid:") != NULL, "a principal needs its type");
	ok(acl_add_grant(&p, ACL_OBSERVE, "addr:10.0.0.0/33", err,
	    sizeof(err)) == -1 && acl_add_grant(&p, ACL_OBSERVE,
	    "addr:10.0.0.0/", err, sizeof(err)) == -1 &&
	    acl_add_grant(&p, ACL_OBSERVE, "addr:::1/129", err,
	    sizeof(err)) == -1 && acl_add_grant(&p, ACL_OBSERVE,
	    "addr:host.example", err, sizeof(err)) == -1,
	    "bad networks are refused (no names: nothing is resolved)");
	ok(acl_add_grant(&p, ACL_OBSERVE, "sha256:abcd", err,
	    sizeof(err)) == -1 && acl_add_grant(&p, ACL_OBSERVE,
	    "uid:no-such-user-dsroute", err, sizeof(err)) == -1 &&
	    acl_add_grant(&p, ACL_OBSERVE, "cn:", err, sizeof(err)) == -1 &&
	    acl_add_grant(&p, ACL_OBSERVE, "ip:10.0.0", err, sizeof(err)) ==
	    -1, "bad pins, users, names and addresses are refused");
	ok(p == NULL, "refused grants leave no policy behind");
	for (i = 0; i < sizeof(fingerprints) / sizeof(fingerprints[0]); i++) {
		snprintf(grant, sizeof(grant), "sha256:%s", fingerprints[i].fp);
		took = acl_add_grant(&p, ACL_OBSERVE, grant, err,
		    sizeof(err)) == 0;
		ok(took == fingerprints[i].ok &&
		    (identity_fingerprint_parse(fingerprints[i].fp, fp) == 0) ==
		    fingerprints[i].ok, "fingerprint %d: %s as sha256: and as "
		    "allow-fp=", (int)i, fingerprints[i].ok ? "taken" :
		    "refused");
	}
	acl_policy_free(p);
	p = NULL;
	ok(acl_add_grant(&p, ACL_FULL, "uid:root", err, sizeof(err)) == 0,
	    "uid:root is looked up by name");
	acl_policy_free(p);
}

/* The certificate of the TLS peer under test, and its names. */
static struct identity_draft	 cert;

static void
new_cert(const char *cn)
{
	identity_draft_init(&cert);
	if (cn != NULL)
		identity_draft_cn(&cert, cn, strlen(cn));
}

/* Add a SAN as a backend would: an IP address as its bytes. */
static void
add_san(enum san_type type, const char *value)
{
	uint8_t	 addr[16];

	if (type == SAN_IP && inet_pton(AF_INET, value, addr) == 1)
		identity_draft_san(&cert, type, addr, 4);
	else if (type == SAN_IP && inet_pton(AF_INET6, value, addr) == 1)
		identity_draft_san(&cert, type, addr, 16);
	else
		identity_draft_san(&cert, type, value, strlen(value));
}

/* Return the role a TLS peer with identity id gets from policy p. */
static enum acl_role
role_of(const struct acl_policy *p, const struct identity *id)
{
	struct acl_peer		 peer;
	struct acl_decision	 d;

	peer_tcp(&peer, "127.0.0.1");
	peer.identity = id;
	decide_cmd(p, &peer, 0x0400, &d);
	return (d.role);
}

/* Return the role the peer with the certificate under test gets. */
static enum acl_role
tls_role(const struct acl_policy *p)
{
	struct identity	*id;
	enum acl_role	 role;

	if ((id = identity_pack(&cert)) == NULL)
		abort();
	role = role_of(p, id);
	free(id);
	return (role);
}

static void
test_identities(void)
{
	struct acl_policy	*p;
	struct identity		*id;
	int			 i;

	p = POLICY("policy=none", "observe=cn:oncall",
	    "dump=uri:spiffe://corp/ns/prod/*", "full=uri:spiffe://corp/admin",
	    "operate=dns:ci.example.com", "observe=ip:10.0.0.1",
	    "observe=ip:2001:db8::1", "operate=email:ops@example.com",
	    "full=sha256:00:11:22:33:44:55:66:77:88:99:AA:BB:CC:DD:EE:FF:"
	    "00112233445566778899aabbccddeeff");

	new_cert("oncall");
	ok(tls_role(p) == ACL_OBSERVE, "cn:oncall matches CN oncall");
	new_cert("OnCall");
	ok(tls_role(p) == ACL_NONE, "but not OnCall: exact, case and all");
	new_cert("oncall.evil");
	ok(tls_role(p) == ACL_NONE, "nor oncall.evil");
	new_cert(NULL);
	identity_draft_cn(&cert, "oncall\0.evil", 12);
	ok(tls_role(p) == ACL_NONE, "nor a CN with a NUL after oncall");

	new_cert(NULL);
	add_san(SAN_URI, "spiffe://corp/ns/prod/sa/api");
	ok(tls_role(p) == ACL_DUMP, "uri: prefix matches below its "
	    "slash");
	new_cert(NULL);
	add_san(SAN_URI, "spiffe://corp/ns/production/sa/api");
	ok(tls_role(p) == ACL_NONE, "but not a sibling that shares "
	    "the letters");
	new_cert(NULL);
	add_san(SAN_URI, "spiffe://corp/ns/prod/");
	ok(tls_role(p) == ACL_NONE, "nor the prefix itself");
	new_cert(NULL);
	add_san(SAN_URI, "spiffe://corp/ns/prod/../../admin");
	ok(tls_role(p) == ACL_NONE, "nor a path with dot segments");
	new_cert(NULL);
	add_san(SAN_URI, "spiffe://corp/ns/prod/%2e%2e/admin");
	ok(tls_role(p) == ACL_NONE, "nor one with escapes");
	new_cert(NULL);
	add_san(SAN_DNS, "spiffe://corp/admin");
	ok(tls_role(p) == ACL_NONE, "a DNS SAN never matches a uri: "
	    "grant");
	add_san(SAN_URI, "spiffe://corp/admin");
	ok(tls_role(p) == ACL_FULL, "an exact URI SAN does, among "
	    "others");
	new_cert(NULL);
	add_san(SAN_URI, "spiffe://corp/admin/x");
	ok(tls_role(p) == ACL_NONE, "an exact uri: grant is no prefix");

	new_cert(NULL);
	add_san(SAN_DNS, "ci.example.com");
	ok(tls_role(p) == ACL_OPERATE, "dns: matches its DNS SAN");
	new_cert("ci.example.com");
	add_san(SAN_DNS, "CI.example.com");
	ok(tls_role(p) == ACL_NONE, "not another case, nor the CN");
	new_cert(NULL);
	add_san(SAN_IP, "10.0.0.1");
	ok(tls_role(p) == ACL_OBSERVE, "ip: matches an IP SAN");
	new_cert(NULL);
	add_san(SAN_IP, "10.9.9.9");
	if ((id = identity_pack(&cert)) == NULL)
		abort();
	id->san[0].value = "2001:0db8:0:0::1";
	ok(role_of(p, id) == ACL_OBSERVE, "as an address, not as text");
	free(id);
	new_cert(NULL);
	add_san(SAN_DNS, "10.0.0.1");
	ok(tls_role(p) == ACL_NONE, "a DNS SAN that reads like the "
	    "address does not");
	new_cert(NULL);
	add_san(SAN_EMAIL, "ops@example.com");
	ok(tls_role(p) == ACL_OPERATE, "email: matches its SAN");

	new_cert(NULL);
	for (i = 0; i < 16; i++)
		cert.fingerprint[i] = cert.fingerprint[i + 16] = i * 0x11;
	ok(tls_role(p) == ACL_FULL, "sha256: pins the certificate "
	    "(colons and case do not matter)");
	cert.fingerprint[31] ^= 1;
	ok(tls_role(p) == ACL_NONE, "one bit off is another "
	    "certificate");
	ok(role_of(p, NULL) == ACL_NONE, "a tcp peer has no identity to "
	    "match");
	acl_policy_free(p);
}

/* Append a u32 to a payload under construction. */
static size_t
put32(uint8_t *p, size_t off, uint32_t v)
{
	p[off] = v & 0xff;
	p[off + 1] = (v >> 8) & 0xff;
	p[off + 2] = (v >> 16) & 0xff;
	p[off + 3] = v >> 24;
	return (off + 4);
}

/* A dump payload: count, the UTF-16 units of s, a NUL, type, flags. */
static size_t
dump_payload(uint8_t *p, const char *s)
{
	size_t	 i, n = strlen(s), off;

	off = put32(p, 0, n + 1);
	for (i = 0; i <= n; i++) {
		p[off++] = (uint8_t)s[i];
		p[off++] = 0;
	}
	off = put32(p, off, 4);
	return (put32(p, off, 0));
}

/* Decide on a raw payload for a command. */
static void
decide_raw(const struct acl_policy *p, int cmd, const uint8_t *payload,
    size_t plen, struct acl_decision *d)
{
	struct acl_peer	 peer;
	uint8_t		*m;
	size_t		 len;

	peer_local(&peer, SELF_UID);
	m = message(cmd >> 8, cmd & 0xff, payload, plen, &len);
	acl_decide(p, &peer, m, len, d);
	free(m);
}

/* The dump path s under dump-dir=/var/dumps: allowed? */
static int
dump_ok(const struct acl_policy *p, const char *s, uint32_t *hresult)
{
	struct acl_decision	 d;
	uint8_t			 buf[8192];

	decide_raw(p, 0x0103, buf, dump_payload(buf, s), &d);
	*hresult = d.hresult;
	return (d.allow);
}

static void
test_dump_dir(void)
{
	struct acl_policy	*p = POLICY("dump-dir=/var/dumps/");
	struct acl_decision	 d;
	uint8_t			 buf[16384];
	size_t			 off, i;
	uint32_t		 hr;

	ok(strcmp(acl_dump_dir(p), "/var/dumps") == 0, "the directory the "
	    "router checks: as given, without its trailing slash");
	ok(dump_ok(p, "/var/dumps/core.1", &hr), "a file in the dump "
	    "directory");
	ok(dump_ok(p, "/var/dumps/app/core.%p", &hr), "a file further down");
	ok(!dump_ok(p, "/var/dumps", &hr) && hr == HRESULT_ACCESS_DENIED,
	    "not the directory itself");
	ok(!dump_ok(p, "/var/dumps/", &hr), "nor the directory with a slash");
	ok(!dump_ok(p, "/var/dumpsX/core", &hr), "nor a sibling with the "
	    "same start");
	ok(!dump_ok(p, "/var/dumps/../../etc/cron.d/x", &hr), "nor a path "
	    "with ..");
	ok(!dump_ok(p, "/var/dumps/a/..", &hr), "nor one ending in ..");
	ok(dump_ok(p, "/var/dumps/..core", &hr), "a name that starts with .. "
	    "is just a name");
	ok(!dump_ok(p, "var/dumps/core", &hr), "nor a relative path");
	ok(!dump_ok(p, "core", &hr), "nor a bare name");
	ok(!dump_ok(p, "\\\\server\\share\\core", &hr), "nor a UNC path");
	ok(!dump_ok(p, "//server/share/core", &hr), "nor a UNC path with "
	    "slashes");
	ok(!dump_ok(p, "/var/dumps/a\\..\\..\\x", &hr), "nor a backslash");
	ok(!dump_ok(p, "", &hr) && hr == HRESULT_ACCESS_DENIED,
	    "nor an empty path");

	off = put32(buf, 0, 0);
	decide_raw(p, 0x0101, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_ACCESS_DENIED && strcmp(d.rule,
	    "dump-dir") == 0, "a null path (count 0): the runtime would "
	    "choose, so no");

	off = dump_payload(buf, "/var/dumps/core");
	buf[0] = 200;		/* a count longer than the message */
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "a count that "
	    "lies: BAD_ENCODING");
	put32(buf, 0, 0xffffffff);
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "a count of "
	    "2^32-1 does not overflow");
	decide_raw(p, 0x0103, buf, 3, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "no room for the "
	    "count");
	off = dump_payload(buf, "/var/dumps/core");
	decide_raw(p, 0x0103, buf, 4 + 2 * 15 + 1, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "an odd byte "
	    "count, the NUL cut in half");
	buf[4 + 2 * 15] = 'x';	/* the NUL */
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "no NUL at the "
	    "end");
	off = dump_payload(buf, "/var/dumps/core/etc/x");
	buf[4 + 2 * 15] = 0;	/* "/var/dumps/core\0/etc/x" */
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_ACCESS_DENIED, "a NUL inside");

	/* U+00E9 and U+1F600 (a surrogate pair) in the file name. */
	off = put32(buf, 0, 15);
	for (i = 0; i < 11; i++) {
		buf[off++] = "/var/dumps/"[i];
		buf[off++] = 0;
	}
	buf[off++] = 0xe9;
	buf[off++] = 0x00;
	buf[off++] = 0x3d;
	buf[off++] = 0xd8;
	buf[off++] = 0x00;
	buf[off++] = 0xde;
	buf[off++] = 0;
	buf[off++] = 0;
	decide_raw(p, 0x0103, buf, off, &d);
	ok(d.allow, "non-ASCII names and surrogate pairs decode");
	buf[off - 4] = 0x41;	/* the low surrogate becomes 'A' */
	buf[off - 3] = 0;
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "a lone high "
	    "surrogate is refused");
	buf[off - 6] = 0x00;	/* the high surrogate becomes a low one */
	buf[off - 5] = 0xdc;
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "a lone low "
	    "surrogate is refused");

	/* 1400 euro signs: 4200 bytes of UTF-8, past the limit. */
	off = put32(buf, 0, 11 + 1400 + 1);
	for (i = 0; i < 11; i++) {
		buf[off++] = "/var/dumps/"[i];
		buf[off++] = 0;
	}
	for (i = 0; i < 1400; i++) {
		buf[off++] = 0xac;
		buf[off++] = 0x20;
	}
	buf[off++] = 0;
	buf[off++] = 0;
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && strstr(d.reason, "too long") != NULL, "a path too long "
	    "for the buffer is refused, not cut");
	acl_policy_free(p);

	p = POLICY("dump-dir=//");
	ok(strcmp(acl_dump_dir(p), "/") == 0, "dump-dir=//: the root");
	acl_policy_free(p);

	/* Without dump-dir: anywhere, but only an absolute, plain path. */
	p = POLICY("policy=dump");
	ok(acl_dump_dir(p) == NULL && acl_dump_dir(NULL) == NULL,
	    "without dump-dir: no directory to check");
	ok(dump_ok(p, "/tmp/core.1", &hr), "without dump-dir: an absolute "
	    "path anywhere");
	ok(dump_ok(p, "", &hr), "without dump-dir: no path, the runtime's "
	    "own place");
	ok(!dump_ok(p, "core", &hr) && hr == HRESULT_ACCESS_DENIED,
	    "without dump-dir: not a relative path");
	ok(!dump_ok(p, "/tmp/../etc/cron.d/x", &hr), "without dump-dir: not "
	    "a path with ..");
	ok(!dump_ok(p, "\\\\server\\share\\core", &hr), "without dump-dir: "
	    "not a UNC path");
	ok(!dump_ok(p, "//server/share/core", &hr), "without dump-dir: not a "
	    "UNC path with slashes");
	ok(!dump_ok(p, "/tmp/a\\b", &hr), "without dump-dir: not a "
	    "backslash");
	off = put32(buf, 0, 0xffffffff);
	decide_raw(p, 0x0103, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "without dump-dir: "
	    "a path length that lies is malformed");
	acl_policy_free(p);

	p = NULL;
	ok(acl_set_dump_dir(&p, "dumps", err, sizeof(err)) == -1 &&
	    acl_set_dump_dir(&p, "/var/../etc", err, sizeof(err)) == -1 &&
	    acl_set_dump_dir(&p, "/var/..", err, sizeof(err)) == -1 &&
	    p == NULL, "dump-dir must be absolute, without ..");
}

static void
test_payloads(void)
{
	struct acl_policy	*p = POLICY("max-buffer-mb=256");
	struct acl_decision	 d;
	uint8_t			 buf[64];
	size_t			 off;
	int			 cmd, all;

	off = put32(buf, put32(buf, 0, 1), 64);
	decide_raw(NULL, 0x0206, buf, off, &d);
	ok(!d.allow && d.hresult == HRESULT_ACCESS_DENIED && strcmp(d.rule,
	    "user-events") == 0, "CollectTracing5 user_events: denied even to "
	    "a full peer");
	decide_raw(NULL, 0x0207, buf, off, &d);
	ok(!d.allow, "CollectTracing6 user_events: denied");
	put32(buf, 0, 7);
	decide_raw(NULL, 0x0206, buf, off, &d);
	ok(!d.allow, "an unknown session type: denied");
	decide_raw(NULL, 0x0206, buf, 3, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "no room for the "
	    "session type: BAD_ENCODING");

	off = put32(buf, put32(buf, 0, 0), 256);
	decide_raw(p, 0x0206, buf, off, &d);
	ok(d.allow, "CollectTracing5 streaming with 256 MB under a 256 cap");
	put32(buf, 4, 257);
	decide_raw(p, 0x0206, buf, off, &d);
	ok(!d.allow && strcmp(d.rule, "max-buffer-mb") == 0, "257 MB: denied");
	decide_raw(p, 0x0206, buf, 6, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING, "no room for the "
	    "buffer size under a cap");
	for (cmd = 0x0202, all = 1; cmd <= 0x0205; cmd++) {
		off = put32(buf, 0, 256);
		decide_raw(p, cmd, buf, off, &d);
		all &= d.allow;
		put32(buf, 0, 257);
		decide_raw(p, cmd, buf, off, &d);
		all &= !d.allow;
	}
	ok(all, "CollectTracing 1 to 4: the cap reads their first field");
	decide_raw(NULL, 0x0203, buf, 0, &d);
	ok(d.allow, "without a cap the buffer size is not parsed");
	acl_policy_free(p);
	p = NULL;
	ok(acl_set_max_buffer(&p, "0", err, sizeof(err)) == -1 &&
	    acl_set_max_buffer(&p, "-1", err, sizeof(err)) == -1 &&
	    acl_set_max_buffer(&p, "5000000000", err, sizeof(err)) == -1 &&
	    acl_set_max_buffer(&p, "12k", err, sizeof(err)) == -1 && p == NULL,
	    "max-buffer-mb takes a positive number of megabytes");

	/* No payload: the runtime would answer with 20 bytes of its heap. */
	for (off = 0, all = 1; off < sizeof(no_payload) /
	    sizeof(no_payload[0]); off++) {
		decide_raw(NULL, no_payload[off], buf, 1, &d);
		all &= !d.allow && d.hresult == HRESULT_BAD_ENCODING &&
		    strcmp(d.rule, "no-payload") == 0;
		decide_raw(NULL, no_payload[off], buf, 0, &d);
		all &= d.allow;
	}
	ok(all, "ProcessInfo 1-3, ResumeRuntime, ProcessEnvironment and "
	    "DisablePerfMap: only with size 20, even for full");
	off = put32(buf, 0, 1);
	decide_raw(NULL, 0x0405, buf, off, &d);
	ok(d.allow, "EnablePerfMap takes its payload");
}

/* Append bytes to a payload under construction. */
static size_t
put(uint8_t *p, size_t off, const void *v, size_t n)
{
	memcpy(p + off, v, n);
	return (off + n);
}

/*
 * A CollectTracing6 streaming payload as dotnet/diagnostics' client
 * writes it (SerializeV6): nproviders each named name with an event
 * filter of nids ids, then mode; its length, cut at cut if it is not 0.
 */
static size_t
trace6(uint8_t *p, int nproviders, int nids, uint32_t mode)
{
	static const uint8_t	 rundown[8] = { 0x39, 0x01, 0x02, 0x80 };
	size_t			 off;
	int			 i, j;

	off = put32(p, 0, 0);			/* session_type: streaming */
	off = put32(p, off, 256);		/* circularBufferMB */
	off = put32(p, off, 1);			/* format: NetTrace */
	off = put(p, off, rundown, 8);		/* rundownKeyword */
	p[off++] = 1;				/* requestStackwalk */
	off = put32(p, off, nproviders);
	for (i = 0; i < nproviders; i++) {
		off = put(p, off, "\xff\xff\xff\xff\0\0\0\0", 8);
		off = put32(p, off, 5);		/* logLevel */
		off = put32(p, off, 3);		/* "Ab" */
		off = put(p, off, "A\0b\0\0\0", 6);
		off = put32(p, off, 0);		/* no arguments */
		p[off++] = 1;			/* filter: enable */
		off = put32(p, off, nids);
		for (j = 0; j < nids; j++)
			off = put32(p, off, j + 1);
	}
	return (put32(p, off, mode));
}

/* CollectTracing6's Block mode: local peers, network peers, the option. */
static void
test_block_mode(void)
{
	struct acl_policy	*stall = POLICY("may-stall-app=");
	struct acl_decision	 d;
	struct acl_peer		 net, local;
	uint8_t			 buf[4096], *m;
	uint32_t		 mode;
	size_t			 n, len, cut;
	int			 all, rv;

	n = trace6(buf, 2, 3, 1);
	ok(ipc_collect6_buffer_mode(buf, n, &mode) == 1 && mode == 1,
	    "the parser finds Block after two providers with three ids each");
	n = trace6(buf, 0, 0, 0);
	ok(ipc_collect6_buffer_mode(buf, n, &mode) == 1 && mode == 0,
	    "... and Drop after none");
	put32(buf, 0, 1);
	ok(ipc_collect6_buffer_mode(buf, n, &mode) == 0,
	    "a user_events session has no mode");
	n = trace6(buf, 3, 2, 1);
	for (cut = 0, all = 1; cut < n; cut++)
		all &= ipc_collect6_buffer_mode(buf, cut, &mode) == -1;
	ok(all, "every payload cut short of the mode is malformed");
	/* A count that lies: the ids would run far past the payload. */
	n = trace6(buf, 1, 1, 0);
	put32(buf, 4 + 4 + 4 + 8 + 1 + 4 + 8 + 4 + 10 + 4 + 1, 0xffffffff);
	ok(ipc_collect6_buffer_mode(buf, n, &mode) == -1,
	    "an event filter's count past the payload is malformed");
	n = trace6(buf, 1, 0, 0);
	put32(buf, 4 + 4 + 4 + 8 + 1 + 4 + 8 + 4, 0x7fffffff);
	ok(ipc_collect6_buffer_mode(buf, n, &mode) == -1,
	    "a provider name's count past the payload is malformed");

	peer_tcp(&net, "192.0.2.7");
	peer_local(&local, RUNTIME_UID);
	n = trace6(buf, 2, 3, 1);
	m = message(IPC_SET_EVENTPIPE, 0x07, buf, n, &len);
	acl_decide(NULL, &net, m, len, &d);
	ok(!d.allow && d.hresult == HRESULT_UNKNOWN_COMMAND &&
	    strcmp(d.rule, "block-mode") == 0 && strstr(d.reason,
	    "may-stall-app") != NULL, "Block from a network peer: refused as "
	    "an unknown command, the audit line says why");
	acl_decide(NULL, &local, m, len, &d);
	ok(d.allow, "Block from a local peer (the runtime's uid): allowed");
	acl_decide(stall, &net, m, len, &d);
	ok(d.allow, "Block from a network peer where may-stall-app: allowed");
	free(m);
	n = trace6(buf, 2, 3, 0);
	m = message(IPC_SET_EVENTPIPE, 0x07, buf, n, &len);
	acl_decide(NULL, &net, m, len, &d);
	ok(d.allow, "Drop from a network peer: allowed");
	free(m);
	n = trace6(buf, 1, 0, 2);
	m = message(IPC_SET_EVENTPIPE, 0x07, buf, n, &len);
	acl_decide(NULL, &net, m, len, &d);
	ok(!d.allow && strcmp(d.rule, "block-mode") == 0,
	    "a mode after Block is no Drop: refused");
	free(m);
	n = trace6(buf, 1, 0, 1);
	m = message(IPC_SET_EVENTPIPE, 0x07, buf, n - 4, &len);
	acl_decide(NULL, &net, m, len, &d);
	ok(!d.allow && d.hresult == HRESULT_BAD_ENCODING,
	    "no mode from a network peer: BAD_ENCODING");
	acl_decide(NULL, &local, m, len, &d);
	ok(d.allow, "... and from a local peer the runtime judges it");
	free(m);
	n = trace6(buf, 1, 0, 1);
	m = message(IPC_SET_EVENTPIPE, 0x06, buf, n, &len);
	acl_decide(NULL, &net, m, len, &d);
	ok(d.allow, "CollectTracing5 has no mode: the same bytes pass");
	free(m);
	rv = acl_set_may_stall_app(&stall, err, sizeof(err));
	ok(rv == 0, "may-stall-app twice is may-stall-app");
	acl_policy_free(stall);
}

/* Random messages: no read past the message, and the invariants hold. */
static void
test_random(void)
{
	struct acl_policy	*pols[4];
	struct acl_peer		 peer;
	struct acl_decision	 d;
	uint8_t			*m;
	size_t			 len, plen, i;
	unsigned		 seed = 12345, bad = 0, allowed = 0;
	int			 n, set, id, j;

	pols[0] = NULL;
	pols[1] = POLICY("dump-dir=/d", "max-buffer-mb=10", "policy=full");
	pols[2] = POLICY("policy=observe", "allow=GenerateCoreDump*",
	    "dump-dir=/", "deny=StopTracing");
	pols[3] = POLICY("policy=dump", "dump-dir=/var/dumps");
	peer_local(&peer, SELF_UID);
	for (n = 0; n < 200000; n++) {
		set = rand_r(&seed) % 6;
		id = rand_r(&seed) % 10;
		plen = rand_r(&seed) % 4 == 0 ? rand_r(&seed) % 9 :
		    rand_r(&seed) % 300;
		if ((m = malloc(IPC_HEADER_LEN + plen)) == NULL)
			abort();
		len = IPC_HEADER_LEN + plen;
		ipc_request(m, set, id);
		m[14] = len & 0xff;
		m[15] = len >> 8;
		for (i = 0; i < plen; i++)
			m[IPC_HEADER_LEN + i] = rand_r(&seed);
		/* Often a small count, so dump paths get decoded. */
		if (plen >= 4 && rand_r(&seed) % 2)
			put32(m + IPC_HEADER_LEN, 0, rand_r(&seed) % 160);
		j = rand_r(&seed) % 4;
		acl_decide(pols[j], &peer, m, len, &d);
		if (d.rule == NULL || d.reason == NULL || d.role_from == NULL ||
		    (d.allow && ipc_command_name(set, id) == NULL) ||
		    (d.allow && IN(no_payload, set << 8 | id) && plen != 0) ||
		    (!d.allow && !d.answer_ok &&
		    d.hresult != HRESULT_ACCESS_DENIED &&
		    d.hresult != HRESULT_BAD_ENCODING &&
		    d.hresult != HRESULT_UNKNOWN_COMMAND) ||
		    (d.answer_ok && (d.allow || d.hresult != 0 ||
		    set != IPC_SET_PROCESS || id != 0x01)))
			bad++;
		allowed += d.allow;
		free(m);
	}
	ok(bad == 0 && allowed > 1000, "200,000 random messages: every "
	    "decision sound (%u allowed)", allowed);
	for (j = 0; j < 4; j++)
		acl_policy_free(pols[j]);
}

/* Decide on an advertise of pid from peer; return the decision's rule. */
static int
advertise_allowed(const struct acl_policy *p, const struct acl_peer *peer,
    uint64_t pid, const char **rule)
{
	struct advertise	 adv;
	struct acl_decision	 d;

	memset(&adv, 0, sizeof(adv));
	adv.pid = pid;
	acl_decide_advertise(p, peer, &adv, &d);
	if (rule != NULL)
		*rule = d.rule;
	return (d.allow);
}

/*
 * Who may offer itself as a runtime: by default on a Unix socket the
 * router's uid, root and the socket's owner= and group=, on the network
 * nobody; advertise= grants, any and none; and the claimed pid must be
 * the peer's on a Unix socket.
 */
static void
test_advertise(void)
{
	struct acl_policy	*p;
	struct acl_peer		 peer;
	const char		*rule;

	peer_local(&peer, SELF_UID);
	peer.pid = peer.own_pid = 4242;
	ok(advertise_allowed(NULL, &peer, 4242, &rule) &&
	    strcmp(rule, "default: dsroute's uid") == 0,
	    "advertise: the router's uid, its own pid");
	ok(!advertise_allowed(NULL, &peer, 1, &rule) &&
	    strcmp(rule, "pid-mismatch") == 0,
	    "advertise: the router's uid claiming pid 1: refused");
	peer.own_pid = 7;
	ok(advertise_allowed(NULL, &peer, 7, NULL) &&
	    advertise_allowed(NULL, &peer, 4242, NULL) &&
	    !advertise_allowed(NULL, &peer, 8, NULL),
	    "advertise: a pid in its own namespace, or as we see it");
	peer.pid = peer.own_pid = 0;
	ok(advertise_allowed(NULL, &peer, 99, NULL),
	    "advertise: a pid we cannot see cannot be checked");
	ok(!advertise_allowed(NULL, &peer, 0, &rule) &&
	    strcmp(rule, "bad-pid") == 0 &&
	    !advertise_allowed(NULL, &peer, (uint64_t)INT32_MAX + 1, NULL),
	    "advertise: pid 0 and pids beyond 32 bits are refused");
	peer.have_cred = 0;
	ok(!advertise_allowed(NULL, &peer, 99, &rule) &&
	    strcmp(rule, "no-credentials") == 0,
	    "advertise: no credentials, no advertise");

	peer_local(&peer, 0);
	ok(advertise_allowed(NULL, &peer, 1, NULL), "advertise: root");
	peer_local(&peer, OTHER_UID);
	ok(!advertise_allowed(NULL, &peer, 1, &rule) &&
	    strcmp(rule, "default: another local uid") == 0,
	    "advertise: another local uid is refused by default");
	peer.gid = 4321;
	ok(!advertise_allowed(NULL, &peer, 1, NULL),
	    "advertise: ... even with the group the file mode lets in");
	peer.have_group = 1;
	peer.group_gid = 4321;
	ok(advertise_allowed(NULL, &peer, 1, &rule) &&
	    strcmp(rule, "default: the socket's group=") == 0,
	    "advertise: the socket's group= may");
	peer.have_group = 0;
	peer.have_owner = 1;
	peer.owner_uid = OTHER_UID;
	ok(advertise_allowed(NULL, &peer, 1, &rule) &&
	    strcmp(rule, "default: the socket's owner=") == 0,
	    "advertise: the socket's owner= may");
	peer_local(&peer, RUNTIME_UID);
	ok(!advertise_allowed(NULL, &peer, 1, NULL),
	    "advertise: the uid of a runtime elsewhere is not enough");

	p = POLICY("advertise=uid:1002", "advertise=addr:10.0.0.0/8");
	peer_local(&peer, 1002);
	ok(advertise_allowed(p, &peer, 1, &rule) &&
	    strcmp(rule, "advertise=uid:1002") == 0,
	    "advertise=uid: grants that uid");
	peer_local(&peer, SELF_UID);
	ok(advertise_allowed(p, &peer, 1, NULL),
	    "advertise=: the defaults stay");
	peer_tcp(&peer, "10.1.2.3");
	ok(advertise_allowed(p, &peer, 1, &rule) &&
	    strcmp(rule, "advertise=addr:10.0.0.0/8") == 0,
	    "advertise=addr: grants a network");
	peer_tcp(&peer, "192.168.1.1");
	ok(!advertise_allowed(p, &peer, 1, &rule) &&
	    strcmp(rule, "default: a network peer") == 0,
	    "advertise: other network peers are refused");
	acl_policy_free(p);

	peer_tcp(&peer, "127.0.0.1");
	ok(!advertise_allowed(NULL, &peer, 1, NULL),
	    "advertise: a network peer is refused by default, loopback too");
	p = POLICY("policy=full", "full=addr:127.0.0.1");
	ok(!advertise_allowed(p, &peer, 1, NULL),
	    "advertise: a command role grants no advertise");
	acl_policy_free(p);
	p = POLICY("advertise=any");
	ok(advertise_allowed(p, &peer, 1, &rule) &&
	    strcmp(rule, "advertise=any") == 0, "advertise=any: anyone");
	peer_local(&peer, OTHER_UID);
	peer.pid = 5000;
	ok(!advertise_allowed(p, &peer, 1, NULL),
	    "advertise=any: a claim of another pid is still refused");
	acl_policy_free(p);
	p = POLICY("advertise=none");
	peer_local(&peer, SELF_UID);
	ok(!advertise_allowed(p, &peer, 1, &rule) &&
	    strcmp(rule, "advertise=none") == 0, "advertise=none: nobody");
	ok(acl_add_advertiser(&p, "any", err, sizeof(err)) == -1 &&
	    acl_add_advertiser(&p, "uid:0", err, sizeof(err)) == -1,
	    "advertise=none goes with no other advertise=");
	acl_policy_free(p);
	p = NULL;
	ok(acl_add_advertiser(&p, "nobody", err, sizeof(err)) == -1 &&
	    acl_add_advertiser(&p, "uid:", err, sizeof(err)) == -1 &&
	    p == NULL, "advertise=: a bad principal is refused");
	ok(!acl_has_advertisers(NULL) &&
	    acl_add_advertiser(&p, "cn:phone", err, sizeof(err)) == 0 &&
	    acl_has_advertisers(p), "advertise=cn: parsed");
	acl_policy_free(p);
}

/* app=, cmdline=, found=: which runtimes an endpoint's tools reach. */
static void
test_runtime_rules(void)
{
	struct acl_policy	*p = NULL, *q = NULL;
	struct acl_runtime	 orders = { "Orders.Api",
				    "/usr/bin/dotnet /srv/orders/Orders.Api.dll",
				    ACL_FOUND_ADVERTISE };
	struct acl_runtime	 billing = { "Billing", "/srv/billing/Billing",
				    ACL_FOUND_PROC };

	ok(acl_runtime_allowed(NULL, NULL) && acl_runtime_allowed(NULL,
	    &orders), "without rules every runtime, named or not yet");
	ok(acl_add_runtime_rule(&p, "app", "Orders.*", err,
	    sizeof(err)) == 0 && acl_add_runtime_rule(&p, "app", "Billing",
	    err, sizeof(err)) == 0 && acl_names_runtimes(p), "app=: two");
	ok(acl_runtime_allowed(p, &orders) && acl_runtime_allowed(p,
	    &billing), "app=: a pattern or a name matches");
	orders.app = "orders.api";
	ok(!acl_runtime_allowed(p, &orders), "app=: case counts");
	orders.app = "XOrders.Api";
	ok(!acl_runtime_allowed(p, &orders), "app=: the whole name");
	orders.app = "Orders.Api";
	ok(!acl_runtime_allowed(p, NULL), "a runtime not known yet is not "
	    "reached where rules name runtimes");
	ok(acl_add_runtime_rule(&p, "found", "proc", err, sizeof(err)) == 0 &&
	    !acl_runtime_allowed(p, &orders) && acl_runtime_allowed(p,
	    &billing), "found=proc: with app=, both must hold");
	ok(acl_add_runtime_rule(&q, "cmdline", "*/srv/orders/*", err,
	    sizeof(err)) == 0 && acl_runtime_allowed(q, &orders) &&
	    !acl_runtime_allowed(q, &billing), "cmdline=: a pattern of the "
	    "command line");
	ok(acl_add_runtime_rule(&q, "app", "", err, sizeof(err)) == -1 &&
	    strstr(err, "app=") != NULL, "app=: empty refused, with a reason");
	ok(acl_add_runtime_rule(&q, "found", "ssh", err, sizeof(err)) == -1 &&
	    strstr(err, "advertise, dir, proc or link") != NULL,
	    "found=: an unknown way refused, with the known ones");
	acl_policy_free(p);
	acl_policy_free(q);
}

int
main(void)
{
	enum acl_role	 role;

	ok(acl_role_parse("operate", &role) == 0 && role == ACL_OPERATE &&
	    strcmp(acl_role_name(ACL_DUMP), "dump") == 0 &&
	    acl_role_parse("Full", &role) == -1, "role names");
	test_truth_tables();
	test_rules();
	test_grants();
	test_identities();
	test_dump_dir();
	test_payloads();
	test_block_mode();
	test_random();
	test_advertise();
	test_runtime_rules();
	return (tap_done());
}
