/* SPDX-License-Identifier: ISC */

/*
 * Endpoint specifications: TRANSPORT:ADDRESS[,option[=value]]...  The
 * transport is found by its prefix (transports/transport.c), which
 * parses the address and its own options (uds: mode=, tls: cert=, ...).
 * Here are the options every transport takes:
 *
 *	listen, connect			the role, else decided at start-up
 *	peer=runtime|tool|router	what a connect endpoint reaches
 *	policy=ROLE, allow=CMD, deny=CMD, ROLE=PRINCIPAL, dump-dir=DIR,
 *	max-buffer-mb=N, may-stall-app, advertise=PEER, app=, cmdline=,
 *	found=
 *					the access control of acl.c
 *	allow-cn=, allow-san=, allow-fp=	an identity allow-list, where
 *					the transport's peers have identities
 *
 * Parsing is a pure function of the string (bar user and group names);
 * resolving addresses is a separate step, so that the parser can be unit
 * tested and fuzzed.  The access control options are the only ones a
 * reload changes in place; the rest make up the transport spec.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/acl.h"
#include "router/endpoint.h"
#include "transports/transport.h"

static int	 set_listen(struct endpoint *, const char *, char *, size_t);
static int	 set_connect(struct endpoint *, const char *, char *, size_t);
static int	 set_peer(struct endpoint *, const char *, char *, size_t);
static int	 set_warm(struct endpoint *, const char *, char *, size_t);
static int	 set_advertise(struct endpoint *, const char *, char *, size_t);
static int	 set_policy(struct endpoint *, const char *, char *, size_t);
static int	 set_allow(struct endpoint *, const char *, char *, size_t);
static int	 set_deny(struct endpoint *, const char *, char *, size_t);
static int	 set_none(struct endpoint *, const char *, char *, size_t);
static int	 set_observe(struct endpoint *, const char *, char *, size_t);
static int	 set_operate(struct endpoint *, const char *, char *, size_t);
static int	 set_dump(struct endpoint *, const char *, char *, size_t);
static int	 set_full(struct endpoint *, const char *, char *, size_t);
static int	 set_dump_dir(struct endpoint *, const char *, char *, size_t);
static int	 set_app(struct endpoint *, const char *, char *, size_t);
static int	 set_cmdline(struct endpoint *, const char *, char *, size_t);
static int	 set_found(struct endpoint *, const char *, char *, size_t);
static int	 set_max_buffer(struct endpoint *, const char *, char *,
		    size_t);
static int	 set_may_stall_app(struct endpoint *, const char *, char *,
		    size_t);
static int	 set_allow_cn(struct endpoint *, const char *, char *, size_t);
static int	 set_allow_san(struct endpoint *, const char *, char *, size_t);
static int	 set_allow_fp(struct endpoint *, const char *, char *, size_t);

static const struct endpoint_option options[] = {
	{ "listen", 0, set_listen },
	{ "connect", 0, set_connect },
	{ "peer", 1, set_peer },
	{ "warm", 1, set_warm },
};

/* The access control options: a reload changes them in place. */
static const struct endpoint_option policy_options[] = {
	{ "advertise", 1, set_advertise },
	{ "policy", 1, set_policy },
	{ "allow", 1, set_allow },
	{ "deny", 1, set_deny },
	{ "none", 1, set_none },
	{ "observe", 1, set_observe },
	{ "operate", 1, set_operate },
	{ "dump", 1, set_dump },
	{ "full", 1, set_full },
	{ "dump-dir", 1, set_dump_dir },
	{ "app", 1, set_app },
	{ "cmdline", 1, set_cmdline },
	{ "found", 1, set_found },
	{ "max-buffer-mb", 1, set_max_buffer },
	{ "may-stall-app", 0, set_may_stall_app },
};

/* ... and those only for transports whose peers have identities. */
static const struct endpoint_option identity_options[] = {
	{ "allow-cn", 1, set_allow_cn },
	{ "allow-san", 1, set_allow_san },
	{ "allow-fp", 1, set_allow_fp },
};

static int
set_role(struct endpoint *ep, enum endpoint_role role, char *err, size_t len)
{
	if (ep->role != ROLE_AUTO && ep->role != role) {
		snprintf(err, len, "give either listen or connect, not both");
		return (-1);
	}
	ep->role = role;
	ep->why = role == ROLE_LISTEN ? ",listen given" : ",connect given";
	return (0);
}

static int
set_listen(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (set_role(ep, ROLE_LISTEN, err, len));
}

static int
set_connect(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (set_role(ep, ROLE_CONNECT, err, len));
}

/* peer=runtime|tool|router: what listens where a connect endpoint dials. */
static int
set_peer(struct endpoint *ep, const char *v, char *err, size_t len)
{
	if (strcmp(v, "runtime") == 0)
		ep->peer = PEER_RUNTIME;
	else if (strcmp(v, "tool") == 0)
		ep->peer = PEER_TOOL;
	else if (strcmp(v, "router") == 0)
		ep->peer = PEER_ROUTER;
	else {
		snprintf(err, len, "peer=%s: give runtime, tool or router", v);
		return (-1);
	}
	ep->peer_why = "peer= given";
	return (0);
}

/* warm=N: the spares a connect endpoint to a router keeps (warm.c). */
static int
set_warm(struct endpoint *ep, const char *v, char *err, size_t len)
{
	char	*end;
	long	 n;

	n = strtol(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || n > ENDPOINT_WARM_MAX) {
		snprintf(err, len, "warm=%s: give a number of connections, 0 "
		    "to %d", v, ENDPOINT_WARM_MAX);
		return (-1);
	}
	ep->warm = (int)n;
	ep->warm_given = 1;
	return (0);
}

static int
set_advertise(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_advertiser(&ep->policy, v, err, len));
}

static int
set_policy(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_set_policy(&ep->policy, v, err, len));
}

static int
set_allow(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_rule(&ep->policy, 1, v, err, len));
}

static int
set_deny(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_rule(&ep->policy, 0, v, err, len));
}

static int
set_none(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_grant(&ep->policy, ACL_NONE, v, err, len));
}

static int
set_observe(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_grant(&ep->policy, ACL_OBSERVE, v, err, len));
}

static int
set_operate(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_grant(&ep->policy, ACL_OPERATE, v, err, len));
}

static int
set_dump(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_grant(&ep->policy, ACL_DUMP, v, err, len));
}

static int
set_full(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_grant(&ep->policy, ACL_FULL, v, err, len));
}

static int
set_dump_dir(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_set_dump_dir(&ep->policy, v, err, len));
}

static int
set_app(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_runtime_rule(&ep->policy, "app", v, err, len));
}

static int
set_cmdline(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_runtime_rule(&ep->policy, "cmdline", v, err, len));
}

static int
set_found(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_runtime_rule(&ep->policy, "found", v, err, len));
}

static int
set_max_buffer(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_set_max_buffer(&ep->policy, v, err, len));
}

static int
set_may_stall_app(struct endpoint *ep, const char *v, char *err, size_t len)
{
	(void)v;
	return (acl_set_may_stall_app(&ep->policy, err, len));
}

static int
set_allow_cn(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_allow(&ep->policy, ALLOW_CN, v, err, len));
}

static int
set_allow_san(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_allow(&ep->policy, ALLOW_SAN, v, err, len));
}

static int
set_allow_fp(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_allow(&ep->policy, ALLOW_FP, v, err, len));
}

/* Find an option named name among n in a table. */
static const struct endpoint_option *
lookup(const struct endpoint_option *table, size_t n, const char *name)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (strcmp(table[i].name, name) == 0)
			return (&table[i]);
	}
	return (NULL);
}

#define LOOKUP(t, name)	lookup(t, sizeof(t) / sizeof(t[0]), name)

/*
 * Find an option of the endpoint's transport by name; *policy says
 * whether it is an access control one.  Return -1 with a reason in err if
 * it does not apply there.
 */
static const struct endpoint_option *
find_option(const struct endpoint *ep, const char *name, int *policy,
    char *err, size_t len)
{
	const struct transport		*tr = ep->transport;
	const struct endpoint_option	*o;

	*policy = 0;
	if ((o = LOOKUP(options, name)) != NULL ||
	    (o = lookup(tr->options, tr->noptions, name)) != NULL ||
	    (tr->options_of != NULL && (o = lookup(tr->options_of->options,
	    tr->options_of->noptions, name)) != NULL))
		return (o);
	*policy = 1;
	if ((o = LOOKUP(policy_options, name)) != NULL)
		return (o);
	if ((o = LOOKUP(identity_options, name)) != NULL &&
	    tr->identities)
		return (o);
	if (o != NULL || transport_option_elsewhere(name))
		snprintf(err, len, "option '%s' does not apply to %s:", name,
		    tr->name);
	else
		snprintf(err, len, "unknown option '%s'", name);
	return (NULL);
}

/*
 * Apply one ",name[=value]" option, and add it to the transport spec
 * unless it is one a reload changes in place.
 */
static int
parse_option(struct endpoint *ep, char *opt, char *err, size_t len)
{
	const struct endpoint_option	*o;
	char				*value, *spec;
	int				 policy;

	if ((value = strchr(opt, '=')) != NULL)
		*value++ = '\0';
	if ((o = find_option(ep, opt, &policy, err, len)) == NULL)
		return (-1);
	if (o->takes_value && value == NULL) {
		snprintf(err, len, "option '%s' needs a value: %s=...",
		    opt, opt);
		return (-1);
	}
	if (!o->takes_value && value != NULL) {
		snprintf(err, len, "option '%s' takes no value", opt);
		return (-1);
	}
	if (!policy) {
		if (asprintf(&spec, "%s,%s%s%s", ep->transport_spec, opt,
		    value != NULL ? "=" : "", value != NULL ? value : "") ==
		    -1) {
			snprintf(err, len, "out of memory");
			return (-1);
		}
		free(ep->transport_spec);
		ep->transport_spec = spec;
	}
	return (o->set(ep, value, err, len));
}

/*
 * Parse an endpoint specification into ep.  Unless whole is 0, also check
 * the options that only make sense together.  On error, return -1 with a
 * one-line reason in err.
 */
static int
parse_spec(const char *spec, struct endpoint *ep, int whole, char *err,
    size_t len)
{
	const char	*why;
	char		*copy = NULL, *p, *opt, prefixes[64];
	size_t		 skip;
	int		 rv = -1;

	memset(ep, 0, sizeof(*ep));
	if ((ep->spec = strdup(spec)) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	if ((ep->transport = transport_find(spec, &skip)) == NULL) {
		if ((why = transport_unavailable(spec)) != NULL)
			snprintf(err, len, "%s", why);
		else {
			transport_prefixes(prefixes, sizeof(prefixes));
			snprintf(err, len, "an endpoint starts with %s, e.g. "
			    "uds:/tmp/app.sock or tcp:127.0.0.1:9000",
			    prefixes);
		}
		goto out;
	}
	if ((copy = strdup(spec + skip)) == NULL ||
	    (ep->transport_spec = strndup(ep->spec, strcspn(ep->spec,
	    ","))) == NULL) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	p = copy;
	opt = strsep(&p, ",");
	if (ep->transport->parse(ep, opt, err, len) == -1)
		goto out;
	while ((opt = strsep(&p, ",")) != NULL) {
		if (*opt == '\0')
			continue;
		if (parse_option(ep, opt, err, len) == -1)
			goto out;
	}
	ep->transport->set_name(ep);
	if (whole && ep->transport->check != NULL &&
	    ep->transport->check(ep, err, len) == -1)
		goto out;
	if (whole && endpoint_check_role(ep, err, len) == -1)
		goto out;
	rv = 0;
out:
	free(copy);
	if (rv == -1)
		endpoint_clear(ep);
	return (rv);
}

/* Parse a whole endpoint specification into ep. */
int
endpoint_parse(const char *spec, struct endpoint *ep, char *err, size_t len)
{
	return (parse_spec(spec, ep, 1, err, len));
}

/*
 * Parse the first part of a specification, whose other options are still
 * to come (the configuration file's side.option lines): each option on
 * its own, without the checks of options that only make sense together.
 */
int
endpoint_parse_part(const char *spec, struct endpoint *ep, char *err,
    size_t len)
{
	return (parse_spec(spec, ep, 0, err, len));
}

/*
 * An endpoint of the same transport as spec that parses, to check
 * options on when spec's own address is wrong; NULL if spec names no
 * transport.
 */
const char *
endpoint_stand_in(const char *spec)
{
	const struct transport	*tr;
	size_t			 skip;

	return ((tr = transport_find(spec, &skip)) != NULL ? tr->example :
	    NULL);
}

/*
 * Start an endpoint up to where it may listen or dial, in the one order
 * every user of endpoints follows: look its names up (resolve), decide a
 * role none was given (auto_role), let judge say what to do with who can
 * reach a listener (exposure; NULL for an endpoint that only dials), and
 * load what its connections need (prepare: TLS contexts, before
 * privileges are dropped).  On failure, return -1 with a line in err
 * naming the endpoint by label, or by its spec and, once resolved, its
 * name.
 */
int
endpoint_start(struct endpoint *ep, const char *label,
    int (*judge)(struct endpoint *, enum exposure, char *, size_t),
    char *err, size_t len)
{
	const struct transport	*t = ep->transport;
	char			 why[256];

	if (t->resolve != NULL && t->resolve(ep, why, sizeof(why)) == -1) {
		snprintf(err, len, "%s: %s", label != NULL ? label : ep->spec,
		    why);
		return (-1);
	}
	if (ep->role == ROLE_AUTO)
		t->auto_role(ep);
	if (judge != NULL && t->exposure != NULL &&
	    judge(ep, t->exposure(ep), why, sizeof(why)) == -1) {
		snprintf(err, len, "%s: %s", label != NULL ? label : ep->spec,
		    why);
		return (-1);
	}
	if (t->prepare != NULL && t->prepare(ep, why, sizeof(why)) == -1) {
		snprintf(err, len, "%s: %s", label != NULL ? label : ep->name,
		    why);
		return (-1);
	}
	return (0);
}

void
endpoint_clear(struct endpoint *ep)
{
	if (ep->transport != NULL && ep->t != NULL)
		ep->transport->clear(ep);
	free(ep->spec);
	free(ep->transport_spec);
	acl_policy_free(ep->policy);
	memset(ep, 0, sizeof(*ep));
}

/*
 * Check the options that belong to one role, once the role is known:
 * peer= says what a connect endpoint reaches, advertise= who may offer
 * itself as a runtime to a listener.  Return -1 with a reason in err.
 */
int
endpoint_check_role(const struct endpoint *ep, char *err, size_t len)
{
	int	 nallow;

	(void)acl_allow_list(ep->policy, &nallow);
	if (nallow > 0 && ep->role == ROLE_CONNECT) {
		snprintf(err, len, "allow-cn=, allow-san= and allow-fp= are "
		    "for listeners");
		return (-1);
	}
	if (nallow > 0 && ep->transport->verifies_peers != NULL &&
	    !ep->transport->verifies_peers(ep)) {
		snprintf(err, len, "an allow-list needs client certificates; "
		    "it cannot go with verify=none");
		return (-1);
	}
	if (ep->warm_given && (ep->role == ROLE_LISTEN ||
	    (ep->role == ROLE_CONNECT && ep->peer != PEER_ROUTER))) {
		snprintf(err, len, "warm= is for a connect endpoint that "
		    "reaches another dsroute (,connect,peer=router)");
		return (-1);
	}
	if (ep->role == ROLE_LISTEN && ep->peer != PEER_AUTO) {
		snprintf(err, len, "peer= is for connect endpoints: a "
		    "listener learns what each peer is from its first bytes");
		return (-1);
	}
	if (ep->role == ROLE_CONNECT && acl_has_advertisers(ep->policy)) {
		snprintf(err, len, "advertise= is for listeners: nobody "
		    "advertises to a connect endpoint");
		return (-1);
	}
	if (ep->peer == PEER_TOOL && ep->transport->runtime_port != NULL &&
	    ep->transport->runtime_port(ep)) {
		snprintf(err, len, "peer=tool: %s is named like a runtime's "
		    "default diagnostic port, and a runtime must never get an "
		    "advertise", ep->name);
		return (-1);
	}
	return (0);
}
