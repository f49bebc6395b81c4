/* SPDX-License-Identifier: ISC */

/*
 * Access control: the policy of an endpoint, and the decision on a tool's
 * first command.  Deciding is pure (no I/O), so that it can be unit tested
 * and fuzzed; parsing only looks up user and group names.
 *
 * A decision, in this order:
 *  1. a command the protocol does not know is refused with UNKNOWN_COMMAND,
 *     so that a client falls back to an older version of it;
 *  2. a command that takes no payload must have none: the runtime answers
 *     ProcessInfo with a payload with 20 bytes of its heap;
 *  3. a local peer whose credentials are unknown gets nothing;
 *  4. the endpoint's allow= and deny= rules, in order: the first that
 *     names the command decides;
 *  5. otherwise the peer's role decides: the first grant (ROLE=PRINCIPAL)
 *     that matches the peer, else the endpoint's policy=, else the default
 *     of the peer's class;
 *  6. an allowed command's payload must pass: no user_events session (its
 *     file descriptor cannot cross a byte pump), no Block-mode session
 *     from a network peer unless the endpoint says may-stall-app, the
 *     buffer cap, a dump path that is absolute and, with dump-dir=, below
 *     that directory.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <ctype.h>
#include <errno.h>
#include <fnmatch.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/identity.h"
#include "common/ipc.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/acl.h"

#define DUMP_PATH_MAX	4096

enum principal_type {
	PRINCIPAL_UID,
	PRINCIPAL_GID,
	PRINCIPAL_ADDR,
	PRINCIPAL_CN,
	PRINCIPAL_DNS,
	PRINCIPAL_URI,
	PRINCIPAL_IP,
	PRINCIPAL_EMAIL,
	PRINCIPAL_SHA256
};

struct grant {
	enum acl_role		 role;
	enum principal_type	 type;
	unsigned long		 id;		/* uid or gid */
	int			 family;	/* addr, ip: AF_INET(6) */
	uint8_t			 addr[16];
	int			 prefixlen;
	char			*text;		/* cn, dns, uri, email */
	int			 prefix;	/* uri ending in / matches below */
	uint8_t			 fingerprint[32];
	char			*label;		/* as written: observe=uid:1001 */
};

struct rule {
	int			 allow;
	int			 numeric;
	uint8_t			 set;
	uint8_t			 id;
	char			*name;		/* a name, or a name prefix */
	int			 wildcard;	/* the name ended with '*' */
	char			*label;		/* as written: deny=4:1 */
};

struct acl_policy {
	int			 have_role;
	enum acl_role		 role;
	char			 role_label[24];
	struct grant		*grants;
	size_t			 ngrants;
	struct rule		*rules;
	size_t			 nrules;
	char			*dump_dir;	/* no trailing slash; "" is / */
	uint32_t		 max_buffer_mb;	/* 0: no cap */
	int			 may_stall_app;	/* network peers may ask Block */
	struct grant		*advertisers;	/* advertise=PRINCIPAL */
	size_t			 nadvertisers;
	struct allow_rule	*allow;		/* allow-cn=, -san=, -fp= */
	int			 nallow;
	int			 advertise_any;	/* advertise=any */
	int			 advertise_none; /* advertise=none */
	char			**apps;		/* app=PATTERN: runtimes reached */
	size_t			 napps;
	char			**cmdlines;	/* cmdline=PATTERN */
	size_t			 ncmdlines;
	unsigned		 found;		/* found=HOW: bits of 1 << how */
};

static const char *const role_names[] = {
	[ACL_NONE] = "none",
	[ACL_OBSERVE] = "observe",
	[ACL_OPERATE] = "operate",
	[ACL_DUMP] = "dump",
	[ACL_FULL] = "full",
};

static const char *const role_rules[] = {
	[ACL_NONE] = "role none",
	[ACL_OBSERVE] = "role observe",
	[ACL_OPERATE] = "role operate",
	[ACL_DUMP] = "role dump",
	[ACL_FULL] = "role full",
};

#define CMD(set, id)	((set) << 8 | (id))

int
acl_role_parse(const char *s, enum acl_role *role)
{
	size_t	 i;

	for (i = 0; i < sizeof(role_names) / sizeof(role_names[0]); i++) {
		if (strcmp(s, role_names[i]) == 0) {
			*role = i;
			return (0);
		}
	}
	return (-1);
}

const char *
acl_role_name(enum acl_role role)
{
	return (role_names[role]);
}

/* Return the policy to change, allocating it on first use. */
static struct acl_policy *
policy_get(struct acl_policy **pp, char *err, size_t len)
{
	if (*pp == NULL && (*pp = calloc(1, sizeof(**pp))) == NULL)
		snprintf(err, len, "out of memory");
	return (*pp);
}

void
acl_policy_free(struct acl_policy *p)
{
	size_t	 i;

	if (p == NULL)
		return;
	for (i = 0; i < p->ngrants; i++) {
		free(p->grants[i].text);
		free(p->grants[i].label);
	}
	for (i = 0; i < p->nrules; i++) {
		free(p->rules[i].name);
		free(p->rules[i].label);
	}
	for (i = 0; i < p->nadvertisers; i++) {
		free(p->advertisers[i].text);
		free(p->advertisers[i].label);
	}
	for (i = 0; i < p->napps; i++)
		free(p->apps[i]);
	free(p->apps);
	for (i = 0; i < p->ncmdlines; i++)
		free(p->cmdlines[i]);
	free(p->cmdlines);
	free(p->advertisers);
	free(p->allow);
	free(p->grants);
	free(p->rules);
	free(p->dump_dir);
	free(p);
}

/* policy=ROLE: the role of every peer that no grant matches. */
int
acl_set_policy(struct acl_policy **pp, const char *v, char *err, size_t len)
{
	struct acl_policy	*p;
	enum acl_role		 role;

	if (acl_role_parse(v, &role) == -1) {
		snprintf(err, len, "policy=%s: give none, observe, operate, "
		    "dump or full", v);
		return (-1);
	}
	if ((p = policy_get(pp, err, len)) == NULL)
		return (-1);
	p->have_role = 1;
	p->role = role;
	snprintf(p->role_label, sizeof(p->role_label), "policy=%s", v);
	return (0);
}

/* Parse a command set or id: decimal, or hexadecimal with 0x. */
static int
parse_byte(const char *s, uint8_t *v)
{
	char		*end;
	unsigned long	 n;

	if (!isdigit((unsigned char)*s))
		return (-1);
	errno = 0;
	n = strtoul(s, &end, 0);
	if (*end != '\0' || errno != 0 || n > 0xff)
		return (-1);
	*v = (uint8_t)n;
	return (0);
}

/* Return non-zero if a name pattern names the command. */
static int
name_matches(const char *pattern, int wildcard, const char *name)
{
	if (wildcard)
		return (strncasecmp(name, pattern, strlen(pattern)) == 0);
	return (strcasecmp(name, pattern) == 0);
}

/* Return non-zero if some command the protocol knows has a matching name. */
static int
names_a_command(const char *pattern, int wildcard)
{
	const char	*name;
	size_t		 i;

	for (i = 0; (name = ipc_command_name_at(i)) != NULL; i++) {
		if (name_matches(pattern, wildcard, name))
			return (1);
	}
	return (0);
}

/*
 * allow=PATTERN or deny=PATTERN: a command by set and id (0x0401, 4:1) or
 * by name (ResumeRuntime, CollectTracing*, *).
 */
int
acl_add_rule(struct acl_policy **pp, int allow, const char *v, char *err,
    size_t len)
{
	struct acl_policy	*p;
	struct rule		 r, *rules;
	const char		*what = allow ? "allow" : "deny", *colon;
	char			 set[8], *star;
	size_t			 i, n = strlen(v);

	memset(&r, 0, sizeof(r));
	r.allow = allow;
	if (n == 6 && v[0] == '0' && (v[1] == 'x' || v[1] == 'X')) {
		for (i = 2; i < 6; i++) {
			if (hex_digit(v[i]) == -1)
				break;
		}
		if (i < 6)
			goto bad;
		r.numeric = 1;
		r.set = hex_digit(v[2]) << 4 | hex_digit(v[3]);
		r.id = hex_digit(v[4]) << 4 | hex_digit(v[5]);
	} else if ((colon = strchr(v, ':')) != NULL) {
		if ((size_t)(colon - v) >= sizeof(set))
			goto bad;
		memcpy(set, v, colon - v);
		set[colon - v] = '\0';
		if (parse_byte(set, &r.set) == -1 ||
		    parse_byte(colon + 1, &r.id) == -1)
			goto bad;
		r.numeric = 1;
	} else {
		if (n == 0 || n > 40)
			goto bad;
		for (i = 0; i < n; i++) {
			if (!isalnum((unsigned char)v[i]) &&
			    !(v[i] == '*' && i == n - 1))
				goto bad;
		}
		if ((r.name = strdup(v)) == NULL)
			goto nomem;
		if ((star = strchr(r.name, '*')) != NULL) {
			*star = '\0';
			r.wildcard = 1;
		}
		if (!names_a_command(r.name, r.wildcard)) {
			snprintf(err, len, "%s=%s: no command has that name "
			    "(see dsroute.conf(5) for the names)", what, v);
			free(r.name);
			return (-1);
		}
	}
	if (r.numeric && ipc_command_name(r.set, r.id) == NULL) {
		snprintf(err, len, "%s=%s: 0x%02x%02x is not a command dsroute "
		    "knows, and unknown commands are always refused", what, v,
		    r.set, r.id);
		return (-1);
	}
	if (asprintf(&r.label, "%s=%s", what, v) == -1) {
		r.label = NULL;
		goto nomem;
	}
	if ((p = policy_get(pp, err, len)) == NULL)
		goto fail;
	if ((rules = reallocarray(p->rules, p->nrules + 1,
	    sizeof(*rules))) == NULL)
		goto nomem;
	p->rules = rules;
	p->rules[p->nrules++] = r;
	return (0);

bad:
	snprintf(err, len, "%s=%s: give a command name such as ResumeRuntime "
	    "or CollectTracing*, or its set and id such as 0x0401 or 4:1",
	    what, v);
	return (-1);
nomem:
	snprintf(err, len, "out of memory");
fail:
	free(r.name);
	free(r.label);
	return (-1);
}

/* Parse ADDRESS[/PREFIX], v4 or v6, brackets allowed around v6. */
static int
parse_cidr(const char *v, struct grant *g)
{
	char		 buf[INET6_ADDRSTRLEN + 8], *slash, *addr = buf, *end;
	unsigned long	 bits;
	size_t		 n;
	int		 i, max;

	if ((n = strlen(v)) >= sizeof(buf))
		return (-1);
	memcpy(buf, v, n + 1);
	bits = 1000;
	if ((slash = strrchr(buf, '/')) != NULL) {
		*slash++ = '\0';
		if (!isdigit((unsigned char)*slash))
			return (-1);
		errno = 0;
		bits = strtoul(slash, &end, 10);
		if (*end != '\0' || errno != 0)
			return (-1);
	}
	n = strlen(addr);
	if (n >= 2 && addr[0] == '[' && addr[n - 1] == ']') {
		addr[n - 1] = '\0';
		addr++;
	}
	if (inet_pton(AF_INET, addr, g->addr) == 1) {
		g->family = AF_INET;
		max = 32;
	} else if (inet_pton(AF_INET6, addr, g->addr) == 1) {
		g->family = AF_INET6;
		max = 128;
	} else
		return (-1);
	if (bits == 1000)
		bits = max;
	if (bits > (unsigned long)max)
		return (-1);
	g->prefixlen = (int)bits;
	/* Clear the host bits, so that 10.1.2.3/8 means 10.0.0.0/8. */
	for (i = g->prefixlen; i < max; i++)
		g->addr[i / 8] &= ~(0x80 >> (i % 8));
	return (0);
}

static const struct {
	const char		*prefix;
	enum principal_type	 type;
} principal_prefixes[] = {
	{ "uid:", PRINCIPAL_UID },
	{ "gid:", PRINCIPAL_GID },
	{ "addr:", PRINCIPAL_ADDR },
	{ "cn:", PRINCIPAL_CN },
	{ "dns:", PRINCIPAL_DNS },
	{ "uri:", PRINCIPAL_URI },
	{ "ip:", PRINCIPAL_IP },
	{ "email:", PRINCIPAL_EMAIL },
	{ "sha256:", PRINCIPAL_SHA256 },
};

/* Parse the value of a principal of a known type into g. */
static int
parse_principal(enum principal_type type, const char *v, struct grant *g,
    char *err, size_t len)
{
	uid_t		 uid;
	gid_t		 gid;
	size_t		 n = strlen(v);

	switch (type) {
	case PRINCIPAL_UID:
		if (parse_uid(v, &uid) == -1) {
			snprintf(err, len, "uid:%s: no such user", v);
			return (-1);
		}
		g->id = uid;
		return (0);
	case PRINCIPAL_GID:
		if (parse_gid(v, &gid) == -1) {
			snprintf(err, len, "gid:%s: no such group", v);
			return (-1);
		}
		g->id = gid;
		return (0);
	case PRINCIPAL_ADDR:
		if (parse_cidr(v, g) == -1) {
			snprintf(err, len, "addr:%s: give an address or a "
			    "network such as 10.0.0.0/8 or fd00::/8", v);
			return (-1);
		}
		return (0);
	case PRINCIPAL_IP:
		if (inet_pton(AF_INET, v, g->addr) == 1)
			g->family = AF_INET;
		else if (inet_pton(AF_INET6, v, g->addr) == 1)
			g->family = AF_INET6;
		else {
			snprintf(err, len, "ip:%s: give an IPv4 or IPv6 "
			    "address", v);
			return (-1);
		}
		return (0);
	case PRINCIPAL_SHA256:
		if (identity_fingerprint_parse(v, g->fingerprint) == -1) {
			snprintf(err, len, "sha256:%s: give 64 hex digits, "
			    "a colon allowed between pairs", v);
			return (-1);
		}
		return (0);
	default:
		if (n == 0 || n > IDENTITY_NAME_MAX) {
			snprintf(err, len, "the name is empty or longer than "
			    "255 bytes");
			return (-1);
		}
		/* A uri ending in a slash and a star matches below that path. */
		if (type == PRINCIPAL_URI && n >= 2 &&
		    strcmp(v + n - 2, "/*") == 0) {
			g->prefix = 1;
			n--;
		}
		if ((g->text = strndup(v, n)) == NULL) {
			snprintf(err, len, "out of memory");
			return (-1);
		}
		return (0);
	}
}

/*
 * Parse PRINCIPAL into g, labelled "what=PRINCIPAL" as written.  Return -1
 * with a reason in err.
 */
static int
grant_parse(const char *what, const char *v, struct grant *g, char *err,
    size_t len)
{
	char	 why[256];
	size_t	 i, n;

	for (i = 0; i < sizeof(principal_prefixes) /
	    sizeof(principal_prefixes[0]); i++) {
		n = strlen(principal_prefixes[i].prefix);
		if (strncmp(v, principal_prefixes[i].prefix, n) == 0)
			break;
	}
	if (i == sizeof(principal_prefixes) / sizeof(principal_prefixes[0])) {
		snprintf(err, len, "%s=%s: give the peer as uid:, gid:, addr:, "
		    "cn:, dns:, uri:, ip:, email: or sha256:", what, v);
		return (-1);
	}
	g->type = principal_prefixes[i].type;
	if (parse_principal(g->type, v + n, g, why, sizeof(why)) == -1) {
		snprintf(err, len, "%s=%s", what, why);
		return (-1);
	}
	if (asprintf(&g->label, "%s=%s", what, v) == -1) {
		g->label = NULL;
		free(g->text);
		snprintf(err, len, "out of memory");
		return (-1);
	}
	return (0);
}

/* Append g to a list of grants; on failure free it. */
static int
grant_append(struct grant **list, size_t *n, struct grant *g, char *err,
    size_t len)
{
	struct grant	*more;

	if ((more = reallocarray(*list, *n + 1, sizeof(*more))) == NULL) {
		snprintf(err, len, "out of memory");
		free(g->text);
		free(g->label);
		return (-1);
	}
	*list = more;
	(*list)[(*n)++] = *g;
	return (0);
}

/* ROLE=PRINCIPAL: give the peers that PRINCIPAL matches ROLE. */
int
acl_add_grant(struct acl_policy **pp, enum acl_role role, const char *v,
    char *err, size_t len)
{
	struct acl_policy	*p;
	struct grant		 g;

	memset(&g, 0, sizeof(g));
	g.role = role;
	if (grant_parse(role_names[role], v, &g, err, len) == -1)
		return (-1);
	if ((p = policy_get(pp, err, len)) == NULL) {
		free(g.text);
		free(g.label);
		return (-1);
	}
	return (grant_append(&p->grants, &p->ngrants, &g, err, len));
}

/*
 * advertise=PRINCIPAL, advertise=any or advertise=none: who may offer
 * itself as a runtime (send ADVR_V1) on a listening endpoint.
 */
int
acl_add_advertiser(struct acl_policy **pp, const char *v, char *err,
    size_t len)
{
	struct acl_policy	*p;
	struct grant		 g;
	int			 any = strcmp(v, "any") == 0;
	int			 none = strcmp(v, "none") == 0;

	memset(&g, 0, sizeof(g));
	if (!any && !none && grant_parse("advertise", v, &g, err, len) == -1)
		return (-1);
	if ((p = policy_get(pp, err, len)) == NULL) {
		free(g.text);
		free(g.label);
		return (-1);
	}
	if ((none && (p->advertise_any || p->nadvertisers > 0)) ||
	    (!none && p->advertise_none)) {
		snprintf(err, len, "advertise=%s: advertise=none cannot go "
		    "with other advertise= options", v);
		free(g.text);
		free(g.label);
		return (-1);
	}
	if (any || none) {
		p->advertise_any |= any;
		p->advertise_none |= none;
		return (0);
	}
	return (grant_append(&p->advertisers, &p->nadvertisers, &g, err, len));
}

/*
 * allow-cn=, allow-san=, allow-fp=: the identity allow-list of a
 * listener whose peers have identities (TLS).  Off it, nothing goes.
 */
int
acl_add_allow(struct acl_policy **pp, enum allow_kind kind, const char *v,
    char *err, size_t len)
{
	struct acl_policy	*p;
	struct allow_rule	 rule, *rules;

	if (identity_rule_parse(kind, v, &rule, err, len) == -1)
		return (-1);
	if ((p = policy_get(pp, err, len)) == NULL)
		return (-1);
	if ((rules = reallocarray(p->allow, p->nallow + 1,
	    sizeof(*rules))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	p->allow = rules;
	p->allow[p->nallow++] = rule;
	return (0);
}

/* The allow-list of a policy, its length in *n. */
const struct allow_rule *
acl_allow_list(const struct acl_policy *p, int *n)
{
	*n = p != NULL ? p->nallow : 0;
	return (p != NULL ? p->allow : NULL);
}

/*
 * Apply the allow-list of a listener's policy to a peer's identity (NULL:
 * none).  Return 1 with a denial in d if the peer is not on it, 0 if there
 * is no list or it is on it.
 */
int
acl_check_allow_list(const struct acl_policy *p, const struct identity *id,
    struct acl_decision *d)
{
	if (p == NULL || p->nallow == 0 ||
	    (id != NULL && identity_match(id, p->allow, p->nallow) != -1))
		return (0);
	memset(d, 0, sizeof(*d));
	d->hresult = HRESULT_ACCESS_DENIED;
	d->role = ACL_NONE;
	d->role_from = "allow-list";
	d->rule = "allow-list";
	d->reason = id == NULL ? "no client certificate, and the listener "
	    "has an allow-list" : "identity not on the allow-list";
	return (1);
}

/* Whether the policy says anything about who may advertise. */
int
acl_has_advertisers(const struct acl_policy *p)
{
	return (p != NULL && (p->advertise_any || p->advertise_none ||
	    p->nadvertisers > 0));
}

/* dump-dir=DIR: dumps only to a file below DIR, an absolute path. */
int
acl_set_dump_dir(struct acl_policy **pp, const char *v, char *err,
    size_t len)
{
	struct acl_policy	*p;
	size_t			 n = strlen(v);
	char			*dir;

	if (v[0] != '/' || strstr(v, "/../") != NULL ||
	    (n >= 3 && strcmp(v + n - 3, "/..") == 0) ||
	    strchr(v, '\\') != NULL || n >= DUMP_PATH_MAX) {
		snprintf(err, len, "dump-dir=%s: give an absolute directory "
		    "without .. components", v);
		return (-1);
	}
	while (n > 0 && v[n - 1] == '/')
		n--;
	if ((dir = strndup(v, n)) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	if ((p = policy_get(pp, err, len)) == NULL) {
		free(dir);
		return (-1);
	}
	free(p->dump_dir);
	p->dump_dir = dir;
	return (0);
}

/*
 * The directory of dump-dir=, as given but for trailing slashes ("/" for
 * the root), or NULL without one: for the router's start-up check of
 * the directory itself (platform_dump_dir_check).
 */
const char *
acl_dump_dir(const struct acl_policy *p)
{
	if (p == NULL || p->dump_dir == NULL)
		return (NULL);
	return (p->dump_dir[0] == '\0' ? "/" : p->dump_dir);
}

/* Add a pattern to a list of them; -1 when out of memory. */
static int
add_pattern(char ***list, size_t *n, const char *v, char *err, size_t len)
{
	char	**grown, *pattern;

	if ((grown = reallocarray(*list, *n + 1, sizeof(*grown))) == NULL)
		goto nomem;
	*list = grown;
	if ((pattern = strdup(v)) == NULL)
		goto nomem;
	(*list)[(*n)++] = pattern;
	return (0);

nomem:
	snprintf(err, len, "out of memory");
	return (-1);
}

static const char *const found_names[] = {
	[ACL_FOUND_ADVERTISE] = "advertise",
	[ACL_FOUND_DIR] = "dir",
	[ACL_FOUND_PROC] = "proc",
	[ACL_FOUND_LINK] = "link",
};

/*
 * The runtimes an endpoint's tools reach, and are shown, by what each
 * says of itself and how the router knows it: app=PATTERN (its name),
 * cmdline=PATTERN (its command line; shell patterns, fnmatch(3)), and
 * found=advertise|dir|proc|link.  Each may be given more than once: one
 * of a kind must match, for each kind given.
 */
int
acl_add_runtime_rule(struct acl_policy **pp, const char *opt, const char *v,
    char *err, size_t len)
{
	struct acl_policy	*p;
	size_t			 i, how = 0;

	/* Refused before a policy is made: an empty one would stay. */
	if (strcmp(opt, "found") == 0) {
		for (i = 1; i < sizeof(found_names) / sizeof(found_names[0]);
		    i++) {
			if (strcmp(v, found_names[i]) == 0)
				how = i;
		}
		if (how == 0) {
			snprintf(err, len, "found=%s: give advertise, dir, proc "
			    "or link", v);
			return (-1);
		}
	} else if (*v == '\0' || strlen(v) > 1023) {
		snprintf(err, len, "%s=%s: give a shell pattern, at most 1023 "
		    "bytes", opt, v);
		return (-1);
	}
	if ((p = policy_get(pp, err, len)) == NULL)
		return (-1);
	if (how != 0) {
		p->found |= 1U << how;
		return (0);
	}
	if (strcmp(opt, "app") == 0)
		return (add_pattern(&p->apps, &p->napps, v, err, len));
	return (add_pattern(&p->cmdlines, &p->ncmdlines, v, err, len));
}

/* Whether the policy names the runtimes its tools may reach. */
int
acl_names_runtimes(const struct acl_policy *p)
{
	return (p != NULL && (p->napps > 0 || p->ncmdlines > 0 ||
	    p->found != 0));
}

static int
matches_one(char *const *patterns, size_t n, const char *s)
{
	size_t	 i;

	if (n == 0)
		return (1);
	for (i = 0; i < n; i++) {
		if (fnmatch(patterns[i], s, 0) == 0)
			return (1);
	}
	return (0);
}

/*
 * Whether the tools of policy p may reach the runtime rt (NULL: not known
 * yet, which only a policy that names no runtime lets through).
 */
int
acl_runtime_allowed(const struct acl_policy *p, const struct acl_runtime *rt)
{
	if (!acl_names_runtimes(p))
		return (1);
	if (rt == NULL)
		return (0);
	if (p->found != 0 && (rt->found <= 0 || rt->found >= ACL_FOUND_KINDS ||
	    !(p->found & (1U << rt->found))))
		return (0);
	return (matches_one(p->apps, p->napps, rt->app) &&
	    matches_one(p->cmdlines, p->ncmdlines, rt->cmdline));
}

/* max-buffer-mb=N: the largest EventPipe buffer a tool may ask for. */
int
acl_set_max_buffer(struct acl_policy **pp, const char *v, char *err,
    size_t len)
{
	struct acl_policy	*p;
	char			*end;
	unsigned long		 mb;

	errno = 0;
	mb = strtoul(v, &end, 10);
	if (!isdigit((unsigned char)*v) || *end != '\0' || errno != 0 ||
	    mb == 0 || mb > UINT32_MAX) {
		snprintf(err, len, "max-buffer-mb=%s: give a number of "
		    "megabytes, 1 or more", v);
		return (-1);
	}
	if ((p = policy_get(pp, err, len)) == NULL)
		return (-1);
	p->max_buffer_mb = (uint32_t)mb;
	return (0);
}

/*
 * may-stall-app: network peers may start Block-mode (non-lossy) sessions,
 * whose app threads wait while they read.
 */
int
acl_set_may_stall_app(struct acl_policy **pp, char *err, size_t len)
{
	struct acl_policy	*p;

	if ((p = policy_get(pp, err, len)) == NULL)
		return (-1);
	p->may_stall_app = 1;
	return (0);
}

/* Return non-zero if the first bits of two addresses are equal. */
static int
prefix_equal(const uint8_t *a, const uint8_t *b, int bits)
{
	int	 bytes = bits / 8, rest = bits % 8;

	if (memcmp(a, b, bytes) != 0)
		return (0);
	return (rest == 0 || ((a[bytes] ^ b[bytes]) & (0xff00 >> rest)) == 0);
}

/* Return the peer's address as 4 or 16 bytes; a v4-mapped v6 gives 4. */
static int
peer_address(const struct acl_peer *peer, const uint8_t **addr)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;

	switch (peer->addr.ss_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)&peer->addr;
		*addr = (const uint8_t *)&sin->sin_addr;
		return (AF_INET);
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)&peer->addr;
		*addr = sin6->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr)) {
			*addr += 12;
			return (AF_INET);
		}
		return (AF_INET6);
	}
	return (0);
}

/*
 * Return non-zero if a URI is the prefix followed by more path, with no
 * dot segment that could climb back out of it.
 */
static int
uri_below(const char *uri, const char *prefix)
{
	size_t		 n = strlen(prefix);
	const char	*rest, *seg;

	if (strncmp(uri, prefix, n) != 0 || uri[n] == '\0')
		return (0);
	rest = uri + n;
	for (seg = rest; seg != NULL; seg = strchr(seg, '/')) {
		if (*seg == '/')
			seg++;
		if (strncmp(seg, "..", 2) == 0 && (seg[2] == '/' ||
		    seg[2] == '\0'))
			return (0);
		if (seg[0] == '.' && (seg[1] == '/' || seg[1] == '\0'))
			return (0);
	}
	return (strchr(rest, '%') == NULL);
}

/* Return non-zero if a verified TLS identity has the SAN the grant names. */
static int
san_matches(const struct grant *g, const struct identity *id)
{
	enum san_type	 want;
	uint8_t		 addr[16];
	int		 i;

	switch (g->type) {
	case PRINCIPAL_DNS:
		want = SAN_DNS;
		break;
	case PRINCIPAL_URI:
		want = SAN_URI;
		break;
	case PRINCIPAL_EMAIL:
		want = SAN_EMAIL;
		break;
	default:
		want = SAN_IP;
		break;
	}
	for (i = 0; i < id->nsan; i++) {
		if (id->san[i].type != want)
			continue;
		if (want == SAN_IP) {
			if (inet_pton(g->family, id->san[i].value, addr) == 1 &&
			    memcmp(addr, g->addr, g->family == AF_INET ?
			    4 : 16) == 0)
				return (1);
		} else if (g->prefix ? uri_below(id->san[i].value, g->text) :
		    strcmp(id->san[i].value, g->text) == 0)
			return (1);
	}
	return (0);
}

/* Return non-zero if a grant names the peer. */
static int
grant_matches(const struct grant *g, const struct acl_peer *peer)
{
	const struct identity	*id = peer->identity;
	const uint8_t		*addr = NULL;

	switch (g->type) {
	case PRINCIPAL_UID:
		return (peer->local && peer->uid == g->id);
	case PRINCIPAL_GID:
		return (peer->local && peer->gid == g->id);
	case PRINCIPAL_ADDR:
		return (!peer->local && peer_address(peer, &addr) ==
		    g->family && prefix_equal(addr, g->addr, g->prefixlen));
	case PRINCIPAL_CN:
		return (id != NULL && id->cn[0] != '\0' &&
		    strcmp(id->cn, g->text) == 0);
	case PRINCIPAL_SHA256:
		return (id != NULL && memcmp(id->fingerprint, g->fingerprint,
		    sizeof(g->fingerprint)) == 0);
	default:
		return (id != NULL && san_matches(g, id));
	}
}

/* Find the peer's role and what gave it. */
static void
peer_role(const struct acl_policy *p, const struct acl_peer *peer,
    struct acl_decision *d)
{
	size_t	 i;

	for (i = 0; p != NULL && i < p->ngrants; i++) {
		if (grant_matches(&p->grants[i], peer)) {
			d->role = p->grants[i].role;
			d->role_from = p->grants[i].label;
			return;
		}
	}
	if (p != NULL && p->have_role) {
		d->role = p->role;
		d->role_from = p->role_label;
		return;
	}
	/* Never more than the runtime itself grants: its uid, or root. */
	d->role = ACL_FULL;
	if (!peer->local) {
		d->role = ACL_OPERATE;
		d->role_from = "default: a network peer";
	} else if (peer->uid == peer->self_uid)
		d->role_from = "default: dsroute's uid";
	else if (peer->uid == 0)
		d->role_from = "default: root";
	else if (peer->have_runtime_uid && peer->uid == peer->runtime_uid)
		d->role_from = "default: the runtime's uid";
	else {
		d->role = ACL_NONE;
		d->role_from = "default: another local uid";
	}
}

/* Return non-zero if the role lets the peer send a known command. */
static int
role_allows(enum acl_role role, int cmd)
{
	switch (cmd) {
	case CMD(IPC_SET_PROCESS, 0x00):	/* ProcessInfo */
	case CMD(IPC_SET_PROCESS, 0x04):	/* ProcessInfo2 */
	case CMD(IPC_SET_PROCESS, 0x08):	/* ProcessInfo3 */
	case CMD(IPC_SET_EVENTPIPE, 0x01):	/* StopTracing */
	case CMD(IPC_SET_EVENTPIPE, 0x02):	/* CollectTracing... */
	case CMD(IPC_SET_EVENTPIPE, 0x03):
	case CMD(IPC_SET_EVENTPIPE, 0x04):
	case CMD(IPC_SET_EVENTPIPE, 0x05):
	case CMD(IPC_SET_EVENTPIPE, 0x06):
	case CMD(IPC_SET_EVENTPIPE, 0x07):	/* ...CollectTracing6 */
	case CMD(IPC_SET_DSROUTE, 0x01):	/* ListRuntimes */
	case CMD(IPC_SET_DSROUTE, 0x02):	/* SelectRuntime */
	case CMD(IPC_SET_DSROUTE, 0x04):	/* WarmConnection */
		return (role >= ACL_OBSERVE);
	case CMD(IPC_SET_PROCESS, 0x01):	/* ResumeRuntime */
		return (role >= ACL_OPERATE);
	case CMD(IPC_SET_DUMP, 0x01):		/* GenerateCoreDump... */
	case CMD(IPC_SET_DUMP, 0x02):
	case CMD(IPC_SET_DUMP, 0x03):
		return (role >= ACL_DUMP);
	default:
		return (role >= ACL_FULL);
	}
}

/* Return non-zero if the protocol defines no payload for the command. */
static int
takes_no_payload(int cmd)
{
	switch (cmd) {
	case CMD(IPC_SET_PROCESS, 0x00):	/* ProcessInfo */
	case CMD(IPC_SET_PROCESS, 0x01):	/* ResumeRuntime */
	case CMD(IPC_SET_PROCESS, 0x02):	/* ProcessEnvironment */
	case CMD(IPC_SET_PROCESS, 0x04):	/* ProcessInfo2 */
	case CMD(IPC_SET_PROCESS, 0x06):	/* DisablePerfMap */
	case CMD(IPC_SET_PROCESS, 0x08):	/* ProcessInfo3 */
		return (1);
	}
	return (0);
}

/* Return the first rule that names the command, or NULL. */
static const struct rule *
rule_for(const struct acl_policy *p, uint8_t set, uint8_t id)
{
	const struct rule	*r;
	const char		*name = ipc_command_name(set, id);
	size_t			 i;

	for (i = 0; p != NULL && i < p->nrules; i++) {
		r = &p->rules[i];
		if (r->numeric ? r->set == set && r->id == id :
		    name_matches(r->name, r->wildcard, name))
			return (r);
	}
	return (NULL);
}

/*
 * Decode the string that starts a dump command's payload (u32 count of
 * UTF-16 units with the NUL, then the units) into path as UTF-8.  Return
 * NULL, or why it cannot be used; *malformed is set when the string breaks
 * the protocol rather than the policy.  Never reads past plen.
 */
static const char *
dump_path(const uint8_t *p, size_t plen, char *path, size_t size,
    int *malformed)
{
	uint64_t	 count;
	uint32_t	 cp, lo;
	size_t		 i, o = 0;

	*malformed = 1;
	if (plen < 4)
		return ("no room for the dump path's length");
	count = ipc_get32(p);
	if (count == 0) {
		/* No path: the runtime writes where it always does. */
		*malformed = 0;
		path[0] = '\0';
		return (NULL);
	}
	if (count * 2 > plen - 4)
		return ("the dump path is longer than the message");
	p += 4;
	if ((p[2 * (count - 1)] | p[2 * (count - 1) + 1]) != 0)
		return ("the dump path does not end with a NUL");
	*malformed = 0;
	for (i = 0; i + 1 < count; i++) {
		cp = p[2 * i] | p[2 * i + 1] << 8;
		if (cp == 0)
			return ("the dump path has a NUL inside");
		if (cp >= 0xdc00 && cp <= 0xdfff) {
			*malformed = 1;
			return ("the dump path is not valid UTF-16");
		}
		if (cp >= 0xd800 && cp <= 0xdbff) {
			lo = i + 2 < count ? (uint32_t)(p[2 * i + 2] |
			    p[2 * i + 3] << 8) : 0;
			if (lo < 0xdc00 || lo > 0xdfff) {
				*malformed = 1;
				return ("the dump path is not valid UTF-16");
			}
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			i++;
		}
		if (o + 5 > size)
			return ("the dump path is too long");
		if (cp < 0x80)
			path[o++] = cp;
		else if (cp < 0x800) {
			path[o++] = 0xc0 | cp >> 6;
			path[o++] = 0x80 | (cp & 0x3f);
		} else if (cp < 0x10000) {
			path[o++] = 0xe0 | cp >> 12;
			path[o++] = 0x80 | ((cp >> 6) & 0x3f);
			path[o++] = 0x80 | (cp & 0x3f);
		} else {
			path[o++] = 0xf0 | cp >> 18;
			path[o++] = 0x80 | ((cp >> 12) & 0x3f);
			path[o++] = 0x80 | ((cp >> 6) & 0x3f);
			path[o++] = 0x80 | (cp & 0x3f);
		}
	}
	path[o] = '\0';
	return (NULL);
}

/*
 * Return NULL if path may take a dump: absolute, without a .. component
 * or a Windows UNC or backslash form, and below dir when there is one.
 * An empty path leaves the place to the runtime, unless dir asks for one.
 * Else return why not.
 */
static const char *
dump_path_check(const char *path, const char *dir)
{
	const char	*seg;
	size_t		 n;

	if (path[0] == '\0')
		return (dir == NULL ? NULL :
		    "no dump path: the runtime would choose where");
	if ((path[0] == '/' && path[1] == '/') || path[0] == '\\')
		return ("the dump path is a UNC path");
	if (strchr(path, '\\') != NULL)
		return ("the dump path has a backslash");
	if (path[0] != '/')
		return ("the dump path is not absolute");
	for (seg = path; seg != NULL; seg = strchr(seg + 1, '/')) {
		if (strncmp(seg, "/..", 3) == 0 && (seg[3] == '/' ||
		    seg[3] == '\0'))
			return ("the dump path has a .. component");
	}
	if (dir == NULL)
		return (NULL);
	n = strlen(dir);
	if (strncmp(path, dir, n) != 0 || path[n] != '/' ||
	    path[n + 1] == '\0')
		return ("the dump path is outside the dump directory");
	return (NULL);
}

static void
deny(struct acl_decision *d, uint32_t hresult, const char *rule,
    const char *reason)
{
	d->allow = 0;
	d->hresult = hresult;
	d->rule = rule;
	d->reason = reason;
}

/*
 * A CollectTracing6 streaming session in Block mode makes the app's
 * threads wait while the reader is slow, and a reader beyond a network
 * hop is as slow as the hop: from a network peer only where the endpoint
 * says may-stall-app.  Any mode but Drop counts as Block, since a later
 * one would not be lossy either.  The refusal is UNKNOWN_COMMAND, what a
 * runtime older than .NET 11 answers, so that a tool that tries Block
 * first (dotnet-gcdump) goes on in Drop mode.
 */
static void
check_block_mode(const struct acl_policy *p, const struct acl_peer *peer,
    const uint8_t *payload, size_t plen, struct acl_decision *d)
{
	uint32_t	 mode;
	int		 rv;

	if (peer->local || (p != NULL && p->may_stall_app))
		return;
	if ((rv = ipc_collect6_buffer_mode(payload, plen, &mode)) == -1)
		deny(d, HRESULT_BAD_ENCODING, "malformed-payload",
		    "the CollectTracing6 payload ends before its "
		    "sessionBufferMode");
	else if (rv == 1 && mode != IPC_BUFFER_MODE_DROP)
		deny(d, HRESULT_UNKNOWN_COMMAND, "block-mode",
		    "a Block (non-lossy) session from a network peer: the "
		    "app's threads would wait for this reader; the endpoint "
		    "has no may-stall-app (refused as an unknown command, so "
		    "that the tool falls back to Drop)");
}

/* Check the payload of an allowed command against the policy. */
static void
check_payload(const struct acl_policy *p, const struct acl_peer *peer,
    int cmd, const uint8_t *msg, size_t len, struct acl_decision *d)
{
	const uint8_t	*payload = msg + IPC_HEADER_LEN;
	size_t		 plen = len - IPC_HEADER_LEN, off = 0;
	const char	*why, *dir;
	char		 path[DUMP_PATH_MAX];
	int		 malformed;

	switch (cmd) {
	case CMD(IPC_SET_EVENTPIPE, 0x06):	/* CollectTracing5 */
	case CMD(IPC_SET_EVENTPIPE, 0x07):	/* CollectTracing6 */
		if (plen < 4) {
			deny(d, HRESULT_BAD_ENCODING, "malformed-payload",
			    "no room for the session type");
			return;
		}
		if (ipc_get32(payload) != 0) {
			deny(d, HRESULT_ACCESS_DENIED, "user-events",
			    "a user_events session needs a file descriptor, "
			    "which cannot cross dsroute");
			return;
		}
		if (cmd == CMD(IPC_SET_EVENTPIPE, IPC_ID_COLLECT_TRACING6)) {
			check_block_mode(p, peer, payload, plen, d);
			if (!d->allow)
				return;
		}
		off = 4;
		/* FALLTHROUGH */
	case CMD(IPC_SET_EVENTPIPE, 0x02):	/* CollectTracing... */
	case CMD(IPC_SET_EVENTPIPE, 0x03):
	case CMD(IPC_SET_EVENTPIPE, 0x04):
	case CMD(IPC_SET_EVENTPIPE, 0x05):	/* ...CollectTracing4 */
		if (p == NULL || p->max_buffer_mb == 0)
			return;
		if (plen < off + 4)
			deny(d, HRESULT_BAD_ENCODING, "malformed-payload",
			    "no room for circularBufferMB");
		else if (ipc_get32(payload + off) > p->max_buffer_mb)
			deny(d, HRESULT_ACCESS_DENIED, "max-buffer-mb",
			    "circularBufferMB is above max-buffer-mb");
		return;
	case CMD(IPC_SET_DUMP, 0x01):		/* GenerateCoreDump... */
	case CMD(IPC_SET_DUMP, 0x02):
	case CMD(IPC_SET_DUMP, 0x03):
		dir = p != NULL ? p->dump_dir : NULL;
		if ((why = dump_path(payload, plen, path, sizeof(path),
		    &malformed)) == NULL)
			why = dump_path_check(path, dir);
		if (why != NULL)
			deny(d, malformed ? HRESULT_BAD_ENCODING :
			    HRESULT_ACCESS_DENIED, malformed ?
			    "malformed-payload" : dir != NULL ? "dump-dir" :
			    "dump-path", why);
		return;
	}
}

/*
 * Decide on a tool's complete, well-formed first message (msg, len bytes)
 * from peer under policy p (NULL: the defaults).
 */
void
acl_decide(const struct acl_policy *p, const struct acl_peer *peer,
    const uint8_t *msg, size_t len, struct acl_decision *d)
{
	const struct rule	*r;
	uint8_t			 set = msg[IPC_SET_OFFSET];
	uint8_t			 id = msg[IPC_ID_OFFSET];
	int			 cmd = CMD(set, id);

	memset(d, 0, sizeof(*d));
	d->role = ACL_NONE;
	d->role_from = "-";
	if (ipc_command_name(set, id) == NULL) {
		deny(d, HRESULT_UNKNOWN_COMMAND, "unknown-command",
		    "dsroute does not know this command");
		return;
	}
	if (takes_no_payload(cmd) && len != IPC_HEADER_LEN) {
		deny(d, HRESULT_BAD_ENCODING, "no-payload",
		    "this command takes no payload");
		return;
	}
	if (peer->local && !peer->have_cred) {
		d->role_from = "no peer credentials";
		deny(d, HRESULT_ACCESS_DENIED, "no-credentials",
		    "the peer's credentials are unknown");
		return;
	}
	peer_role(p, peer, d);
	if ((r = rule_for(p, set, id)) != NULL) {
		if (!r->allow) {
			deny(d, HRESULT_ACCESS_DENIED, r->label,
			    "a deny rule names this command");
			return;
		}
		d->rule = r->label;
	} else if (cmd == CMD(IPC_SET_PROCESS, 0x01) &&
	    d->role == ACL_OBSERVE) {
		/*
		 * dotnet-trace and dotnet-counters send ResumeRuntime to
		 * every runtime: observe answers it OK itself, so that they
		 * work, and sends it on to none, so that it resumes nothing.
		 */
		deny(d, 0, role_rules[d->role], "observe resumes nothing: the "
		    "router answered ResumeRuntime OK and sent it on to no "
		    "runtime");
		d->answer_ok = 1;
		return;
	} else if (!role_allows(d->role, cmd)) {
		/* The real tools send it to running runtimes too. */
		deny(d, HRESULT_ACCESS_DENIED, role_rules[d->role],
		    cmd == CMD(IPC_SET_PROCESS, 0x01) ? "the peer's role does "
		    "not include ResumeRuntime, which dotnet-trace and "
		    "dotnet-counters send unless given --resume-runtime:false" :
		    "the peer's role does not include this command");
		return;
	} else
		d->rule = role_rules[d->role];
	d->allow = 1;
	d->reason = "allowed";
	check_payload(p, peer, cmd, msg, len, d);
}

/*
 * Decide whether peer may offer itself as a runtime with the advertise
 * adv, under policy p (NULL: the defaults).  The claim is checked first:
 * on a Unix socket the advertised pid must be the peer's, as we see it or
 * as it sees itself.  Then who may: advertise=none, advertise=any, the
 * first advertise=PRINCIPAL that matches, or by default on a Unix socket
 * the router's uid, root, and the socket's owner= and group= (no more
 * than the runtime itself would accept), and on the network nobody.
 */
void
acl_decide_advertise(const struct acl_policy *p, const struct acl_peer *peer,
    const struct advertise *adv, struct acl_decision *d)
{
	size_t	 i;

	memset(d, 0, sizeof(d[0]));
	d->role = ACL_NONE;
	d->role_from = "-";
	if (adv->pid == 0 || adv->pid > INT32_MAX) {
		deny(d, 0, "bad-pid", "the advertised pid is 0 or more than "
		    "32 bits");
		return;
	}
	if (peer->local && !peer->have_cred) {
		deny(d, 0, "no-credentials", "the peer's credentials are "
		    "unknown");
		return;
	}
	if (peer->local && peer->pid != 0 && adv->pid != (uint64_t)peer->pid &&
	    adv->pid != (uint64_t)peer->own_pid) {
		deny(d, 0, "pid-mismatch", "the advertised pid is not the "
		    "peer's");
		return;
	}
	if (p != NULL && p->advertise_none) {
		deny(d, 0, "advertise=none", "no peer may advertise here");
		return;
	}
	d->allow = 1;
	d->reason = "allowed";
	if (p != NULL && p->advertise_any) {
		d->rule = "advertise=any";
		return;
	}
	for (i = 0; p != NULL && i < p->nadvertisers; i++) {
		if (grant_matches(&p->advertisers[i], peer)) {
			d->rule = p->advertisers[i].label;
			return;
		}
	}
	if (!peer->local)
		deny(d, 0, "default: a network peer", "network peers may not "
		    "advertise unless advertise= names them");
	else if (peer->uid == peer->self_uid)
		d->rule = "default: dsroute's uid";
	else if (peer->uid == 0)
		d->rule = "default: root";
	else if (peer->have_owner && peer->uid == peer->owner_uid)
		d->rule = "default: the socket's owner=";
	else if (peer->have_group && peer->gid == peer->group_gid)
		d->rule = "default: the socket's group=";
	else
		deny(d, 0, "default: another local uid", "only the router's "
		    "uid, root and the socket's owner= and group= may "
		    "advertise unless advertise= names the peer");
}
