/* SPDX-License-Identifier: ISC */

/*
 * Endpoint specifications: TYPE:ADDRESS[,option[=value]]...
 *
 *	uds:PATH[,listen|,connect][,mode=0660][,owner=U][,group=G]
 *	tcp:HOST:PORT[,listen|,connect]	HOST may be [v6], "*" or empty
 *	tls:HOST:PORT[,listen|,connect][,cert=F][,key=F][,ca=F]
 *	    [,verify=required|optional|none][,sni=NAME]
 *	    [,allow-cn=CN][,allow-san=dns:|uri:|ip:VALUE][,allow-fp=SHA256]
 *
 * and on either, the access control options of acl.c: policy=ROLE,
 * allow=CMD, deny=CMD, ROLE=PRINCIPAL, dump-dir=DIR, max-buffer-mb=N.
 *
 * Parsing is a pure function of the string (bar user and group names);
 * resolving addresses is a separate step so that the parser can be unit
 * tested and fuzzed.
 */

#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dsroute.h"

#define TYPE_BIT(t)	(1U << (t))
#define TLS		TYPE_BIT(ENDPOINT_TLS)
#define ANY_TYPE	(TYPE_BIT(ENDPOINT_UDS) | TYPE_BIT(ENDPOINT_TCP) | TLS)

struct endpoint_option {
	const char	*name;
	unsigned	 types;
	int		 takes_value;
	int		 (*set)(struct endpoint *, const char *, char *, size_t);
};

static int	 set_listen(struct endpoint *, const char *, char *, size_t);
static int	 set_connect(struct endpoint *, const char *, char *, size_t);
static int	 set_peer(struct endpoint *, const char *, char *, size_t);
static int	 set_advertise(struct endpoint *, const char *, char *, size_t);
static int	 set_mode(struct endpoint *, const char *, char *, size_t);
static int	 set_owner(struct endpoint *, const char *, char *, size_t);
static int	 set_group(struct endpoint *, const char *, char *, size_t);
static int	 set_policy(struct endpoint *, const char *, char *, size_t);
static int	 set_allow(struct endpoint *, const char *, char *, size_t);
static int	 set_deny(struct endpoint *, const char *, char *, size_t);
static int	 set_none(struct endpoint *, const char *, char *, size_t);
static int	 set_observe(struct endpoint *, const char *, char *, size_t);
static int	 set_operate(struct endpoint *, const char *, char *, size_t);
static int	 set_dump(struct endpoint *, const char *, char *, size_t);
static int	 set_full(struct endpoint *, const char *, char *, size_t);
static int	 set_dump_dir(struct endpoint *, const char *, char *, size_t);
static int	 set_max_buffer(struct endpoint *, const char *, char *,
		    size_t);
static int	 set_cert(struct endpoint *, const char *, char *, size_t);
static int	 set_key(struct endpoint *, const char *, char *, size_t);
static int	 set_ca(struct endpoint *, const char *, char *, size_t);
static int	 set_sni(struct endpoint *, const char *, char *, size_t);
static int	 set_verify(struct endpoint *, const char *, char *, size_t);
static int	 set_allow_cn(struct endpoint *, const char *, char *, size_t);
static int	 set_allow_san(struct endpoint *, const char *, char *, size_t);
static int	 set_allow_fp(struct endpoint *, const char *, char *, size_t);

static const struct endpoint_option options[] = {
	{ "listen", ANY_TYPE, 0, set_listen },
	{ "connect", ANY_TYPE, 0, set_connect },
	{ "peer", ANY_TYPE, 1, set_peer },
	{ "mode", TYPE_BIT(ENDPOINT_UDS), 1, set_mode },
	{ "owner", TYPE_BIT(ENDPOINT_UDS), 1, set_owner },
	{ "group", TYPE_BIT(ENDPOINT_UDS), 1, set_group },
	{ "cert", TLS, 1, set_cert },
	{ "key", TLS, 1, set_key },
	{ "ca", TLS, 1, set_ca },
	{ "sni", TLS, 1, set_sni },
	{ "verify", TLS, 1, set_verify },
};

/*
 * Access control (acl.c) and TLS allow-lists (identity.c): the only
 * options a reload changes in place.
 */
static const struct endpoint_option policy_options[] = {
	{ "allow-cn", TLS, 1, set_allow_cn },
	{ "allow-san", TLS, 1, set_allow_san },
	{ "allow-fp", TLS, 1, set_allow_fp },
	{ "advertise", ANY_TYPE, 1, set_advertise },
	{ "policy", ANY_TYPE, 1, set_policy },
	{ "allow", ANY_TYPE, 1, set_allow },
	{ "deny", ANY_TYPE, 1, set_deny },
	{ "none", ANY_TYPE, 1, set_none },
	{ "observe", ANY_TYPE, 1, set_observe },
	{ "operate", ANY_TYPE, 1, set_operate },
	{ "dump", ANY_TYPE, 1, set_dump },
	{ "full", ANY_TYPE, 1, set_full },
	{ "dump-dir", ANY_TYPE, 1, set_dump_dir },
	{ "max-buffer-mb", ANY_TYPE, 1, set_max_buffer },
};

static const struct {
	const char		*prefix;
	enum endpoint_type	 type;
} prefixes[] = {
	{ "uds:", ENDPOINT_UDS },
	{ "unix:", ENDPOINT_UDS },
	{ "tcp:", ENDPOINT_TCP },
	{ "tls:", ENDPOINT_TLS },
};

static const char *
type_name(enum endpoint_type type)
{
	switch (type) {
	case ENDPOINT_UDS:
		return ("uds");
	case ENDPOINT_TCP:
		return ("tcp");
	case ENDPOINT_TLS:
		return ("tls");
	}
	return ("?");
}

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

/* peer=runtime|tool: what listens where a connect endpoint dials. */
static int
set_peer(struct endpoint *ep, const char *v, char *err, size_t len)
{
	if (strcmp(v, "runtime") == 0)
		ep->peer = PEER_RUNTIME;
	else if (strcmp(v, "tool") == 0)
		ep->peer = PEER_TOOL;
	else {
		snprintf(err, len, "peer=%s: give runtime or tool", v);
		return (-1);
	}
	ep->peer_why = "peer= given";
	return (0);
}

static int
set_advertise(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_add_advertiser(&ep->policy, v, err, len));
}

static int
set_mode(struct endpoint *ep, const char *v, char *err, size_t len)
{
	char		*end;
	unsigned long	 mode;

	errno = 0;
	mode = strtoul(v, &end, 8);
	if (*v == '\0' || *end != '\0' || errno != 0 || mode > 0777) {
		snprintf(err, len, "mode=%s: give an octal mode such as 0660",
		    v);
		return (-1);
	}
	if (mode & 0111) {
		snprintf(err, len, "mode=%s: execute bits mean nothing on a "
		    "socket; give read and write bits such as 0660", v);
		return (-1);
	}
	ep->mode = (mode_t)mode;
	return (0);
}

static int
set_owner(struct endpoint *ep, const char *v, char *err, size_t len)
{
	free(ep->owner);
	if ((ep->owner = strdup(v)) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	return (0);
}

static int
set_group(struct endpoint *ep, const char *v, char *err, size_t len)
{
	free(ep->group);
	if ((ep->group = strdup(v)) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	return (0);
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
set_max_buffer(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (acl_set_max_buffer(&ep->policy, v, err, len));
}

/* Keep a copy of a string option, replacing an earlier one. */
static int
set_string(char **dst, const char *v, char *err, size_t len)
{
	if (*v == '\0') {
		snprintf(err, len, "an option value is empty");
		return (-1);
	}
	free(*dst);
	if ((*dst = strdup(v)) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	return (0);
}

static int
set_cert(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (set_string(&ep->cert, v, err, len));
}

static int
set_key(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (set_string(&ep->key, v, err, len));
}

static int
set_ca(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (set_string(&ep->ca, v, err, len));
}

static int
set_sni(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (set_string(&ep->sni, v, err, len));
}

static int
set_verify(struct endpoint *ep, const char *v, char *err, size_t len)
{
	if (strcmp(v, "required") == 0)
		ep->verify = VERIFY_REQUIRED;
	else if (strcmp(v, "optional") == 0)
		ep->verify = VERIFY_OPTIONAL;
	else if (strcmp(v, "none") == 0)
		ep->verify = VERIFY_NONE;
	else {
		snprintf(err, len, "verify=%s: give required, optional or "
		    "none", v);
		return (-1);
	}
	return (0);
}

/* Append one allow-list rule. */
static int
add_allow(struct endpoint *ep, enum allow_kind kind, const char *v,
    char *err, size_t len)
{
	struct allow_rule	*rules;

	rules = reallocarray(ep->allow, ep->nallow + 1, sizeof(*rules));
	if (rules == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	ep->allow = rules;
	if (identity_rule_parse(kind, v, &rules[ep->nallow], err, len) == -1)
		return (-1);
	ep->nallow++;
	return (0);
}

static int
set_allow_cn(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (add_allow(ep, ALLOW_CN, v, err, len));
}

static int
set_allow_san(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (add_allow(ep, ALLOW_SAN, v, err, len));
}

static int
set_allow_fp(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (add_allow(ep, ALLOW_FP, v, err, len));
}

/* Check the TLS options that only make sense together. */
static int
check_tls(struct endpoint *ep, char *err, size_t len)
{
	if ((ep->cert == NULL) != (ep->key == NULL)) {
		snprintf(err, len, "give cert= and key= together");
		return (-1);
	}
	if (ep->role == ROLE_CONNECT) {
		if (ep->verify == VERIFY_OPTIONAL) {
			snprintf(err, len, "verify=optional is for listeners; "
			    "a connect endpoint verifies the server or, with "
			    "verify=none, does not");
			return (-1);
		}
		if (ep->nallow > 0) {
			snprintf(err, len, "allow-cn=, allow-san= and "
			    "allow-fp= are for listeners");
			return (-1);
		}
		return (0);
	}
	if (ep->sni != NULL) {
		snprintf(err, len, "sni= is for connect endpoints");
		return (-1);
	}
	if (ep->cert == NULL) {
		snprintf(err, len, "a TLS listener needs cert= and key=");
		return (-1);
	}
	if (ep->verify == VERIFY_NONE && ep->nallow > 0) {
		snprintf(err, len, "an allow-list needs client certificates; "
		    "it cannot go with verify=none");
		return (-1);
	}
	if (ep->ca == NULL && ep->verify != VERIFY_NONE) {
		snprintf(err, len, "a TLS listener verifies client "
		    "certificates against ca=FILE; give ca=, or verify=none "
		    "to accept any client");
		return (-1);
	}
	return (0);
}

/* Parse the path of a uds endpoint. */
static int
parse_uds(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	size_t	 n = strlen(addr);

	if (n == 0) {
		snprintf(err, len, "the socket path is empty");
		return (-1);
	}
	if (n >= sizeof(ep->path)) {
		snprintf(err, len, "the socket path is %zu bytes; a Unix "
		    "socket path holds at most %zu (choose a shorter "
		    "directory, e.g. under /tmp)", n, sizeof(ep->path) - 1);
		return (-1);
	}
	memcpy(ep->path, addr, n + 1);
	return (0);
}

/* Parse HOST:PORT, [V6]:PORT, *:PORT, :PORT or PORT (tcp and tls). */
static int
parse_tcp(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	const char	*host = NULL, *port, *colon, *close;
	size_t		 hostlen = 0;
	char		*end;
	unsigned long	 v;

	if (addr[0] == '[') {
		if ((close = strchr(addr, ']')) == NULL || close[1] != ':') {
			snprintf(err, len, "write an IPv6 address as "
			    "[ADDRESS]:PORT");
			return (-1);
		}
		host = addr + 1;
		hostlen = close - host;
		port = close + 2;
	} else if ((colon = strrchr(addr, ':')) != NULL) {
		if (memchr(addr, ':', colon - addr) != NULL) {
			snprintf(err, len, "write an IPv6 address as "
			    "[ADDRESS]:PORT");
			return (-1);
		}
		host = addr;
		hostlen = colon - addr;
		port = colon + 1;
	} else
		port = addr;

	errno = 0;
	v = strtoul(port, &end, 10);
	if (*port == '\0' || *end != '\0' || errno != 0 || v > 65535 ||
	    *port == '-' || *port == '+') {
		snprintf(err, len, "port '%s' is not a number from 0 to 65535",
		    port);
		return (-1);
	}
	snprintf(ep->port, sizeof(ep->port), "%lu", v);

	if (hostlen == 1 && host[0] == '*')
		ep->wildcard = 1;
	else if (hostlen > 0) {
		if (hostlen > 255) {
			snprintf(err, len, "host name too long");
			return (-1);
		}
		if ((ep->host = strndup(host, hostlen)) == NULL) {
			snprintf(err, len, "out of memory");
			return (-1);
		}
	}
	return (0);
}

/* Find an option by name; *policy says whether it is an access control one. */
static const struct endpoint_option *
find_option(const char *name, int *policy)
{
	size_t	 i;

	*policy = 0;
	for (i = 0; i < sizeof(options) / sizeof(options[0]); i++) {
		if (strcmp(options[i].name, name) == 0)
			return (&options[i]);
	}
	*policy = 1;
	for (i = 0; i < sizeof(policy_options) / sizeof(policy_options[0]);
	    i++) {
		if (strcmp(policy_options[i].name, name) == 0)
			return (&policy_options[i]);
	}
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
	if ((o = find_option(opt, &policy)) == NULL) {
		snprintf(err, len, "unknown option '%s'", opt);
		return (-1);
	}
	if (!(o->types & TYPE_BIT(ep->type))) {
		snprintf(err, len, "option '%s' does not apply to %s:",
		    opt, type_name(ep->type));
		return (-1);
	}
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
	char	*copy = NULL, *p, *opt;
	size_t	 i;
	int	 found = 0, rv = -1;

	memset(ep, 0, sizeof(*ep));
	ep->mode = 0600;
	if ((ep->spec = strdup(spec)) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}

	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++) {
		if (strncmp(spec, prefixes[i].prefix,
		    strlen(prefixes[i].prefix)) == 0) {
			ep->type = prefixes[i].type;
			spec += strlen(prefixes[i].prefix);
			found = 1;
			break;
		}
	}
	if (!found) {
		if (strncmp(spec, "pipe:", 5) == 0 ||
		    strncmp(spec, "namedpipe:", 10) == 0)
			snprintf(err, len, "named pipes exist only on Windows");
		else
			snprintf(err, len, "an endpoint starts with uds:, tcp: "
			    "or tls:, e.g. uds:/tmp/app.sock or "
			    "tcp:127.0.0.1:9000");
		goto out;
	}

	if ((copy = strdup(spec)) == NULL) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	p = copy;
	opt = strsep(&p, ",");
	if ((ep->transport_spec = strndup(ep->spec, strcspn(ep->spec, ","))) ==
	    NULL) {
		snprintf(err, len, "out of memory");
		goto out;
	}
	if (ep->type == ENDPOINT_UDS) {
		ep->transport = &transport_uds;
		if (parse_uds(ep, opt, err, len) == -1)
			goto out;
	} else {
		ep->transport = ep->type == ENDPOINT_TLS ? &transport_tls :
		    &transport_tcp;
		if (parse_tcp(ep, opt, err, len) == -1)
			goto out;
	}
	while ((opt = strsep(&p, ",")) != NULL) {
		if (*opt == '\0')
			continue;
		if (parse_option(ep, opt, err, len) == -1)
			goto out;
	}
	if (whole && ep->type != ENDPOINT_UDS && ep->role == ROLE_CONNECT &&
	    (strcmp(ep->port, "0") == 0 || ep->wildcard)) {
		snprintf(err, len, "a connect endpoint needs a host and a "
		    "port other than 0");
		goto out;
	}
	if (whole && ep->type == ENDPOINT_TLS && check_tls(ep, err, len) == -1)
		goto out;
	if (whole && endpoint_check_role(ep, err, len) == -1)
		goto out;
	endpoint_set_name(ep);
	rv = 0;
out:
	free(copy);
	if (rv == -1)
		endpoint_clear(ep);
	return (rv);
}

/*
 * Check the options that belong to one role, once the role is known:
 * peer= says what a connect endpoint reaches, advertise= who may offer
 * itself as a runtime to a listener.  Return -1 with a reason in err.
 */
int
endpoint_check_role(const struct endpoint *ep, char *err, size_t len)
{
	struct default_name	 dn;

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
	if (ep->peer == PEER_TOOL && ep->type == ENDPOINT_UDS &&
	    ipc_default_socket_parse(ep->path, 0, &dn)) {
		snprintf(err, len, "peer=tool: %s is named like a runtime's "
		    "default diagnostic port, and a runtime must never get an "
		    "advertise", ep->path);
		return (-1);
	}
	return (0);
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

void
endpoint_clear(struct endpoint *ep)
{
	free(ep->spec);
	free(ep->host);
	free(ep->owner);
	free(ep->group);
	free(ep->transport_spec);
	acl_policy_free(ep->policy);
	free(ep->cert);
	free(ep->key);
	free(ep->ca);
	free(ep->sni);
	free(ep->allow);
	memset(ep, 0, sizeof(*ep));
}

/* Resolve a tcp endpoint's address; a name resolves to its first address. */
int
endpoint_resolve(struct endpoint *ep, char *err, size_t len)
{
	struct addrinfo	 hints, *res;
	const char	*host;
	int		 rv;

	if (ep->type == ENDPOINT_UDS)
		return (0);
	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (ep->wildcard) {
		host = "::";
		hints.ai_flags |= AI_PASSIVE | AI_NUMERICHOST;
	} else
		host = ep->host != NULL ? ep->host : "127.0.0.1";
	if ((rv = getaddrinfo(host, ep->port, &hints, &res)) != 0) {
		snprintf(err, len, "cannot resolve '%s': %s", host,
		    gai_strerror(rv));
		return (-1);
	}
	memcpy(&ep->addr, res->ai_addr, res->ai_addrlen);
	ep->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	endpoint_set_name(ep);
	return (0);
}

/* Return non-zero if a resolved tcp address is on the loopback interface. */
int
endpoint_is_loopback(const struct endpoint *ep)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;
	const uint8_t			*a;

	switch (ep->addr.ss_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)&ep->addr;
		return ((ntohl(sin->sin_addr.s_addr) >> 24) == 127);
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)&ep->addr;
		if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			return (1);
		a = sin6->sin6_addr.s6_addr;
		return (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) && a[12] == 127);
	}
	return (0);
}

/* Set the printable name: the path, or the address with the bound port. */
void
endpoint_set_name(struct endpoint *ep)
{
	char	 addr[INET6_ADDRSTRLEN + 16];

	const char	*type = type_name(ep->type);

	if (ep->type == ENDPOINT_UDS)
		snprintf(ep->name, sizeof(ep->name), "uds:%s", ep->path);
	else if (ep->addrlen != 0) {
		sockaddr_name((struct sockaddr *)&ep->addr, ep->addrlen, addr,
		    sizeof(addr));
		snprintf(ep->name, sizeof(ep->name), "%s:%s", type, addr);
	} else if (ep->wildcard)
		snprintf(ep->name, sizeof(ep->name), "%s:*:%s", type,
		    ep->port);
	else
		snprintf(ep->name, sizeof(ep->name), "%s:%s:%s", type,
		    ep->host != NULL ? ep->host : "127.0.0.1", ep->port);
}
