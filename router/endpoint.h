/* SPDX-License-Identifier: ISC */

/*
 * Endpoints (endpoint.c): TRANSPORT:ADDRESS[,option[=value]]..., parsed
 * into what every transport has (a role, what a connect endpoint reaches,
 * an access control policy, a printable name) and what only its
 * transport reads, behind ep->t.  Parsing is a pure function of the
 * string (bar user and group names), so that it can be fuzzed.
 */

#ifndef ENDPOINT_H
#define ENDPOINT_H

#include <sys/types.h>

#include <stddef.h>

struct acl_policy;
struct transport;

enum endpoint_role {
	ROLE_AUTO,
	ROLE_LISTEN,
	ROLE_CONNECT
};

/*
 * What a connect endpoint reaches: a runtime, a tool that listens, or
 * another dsroute whose runtimes a mirror shows (docs/extension.md).
 */
enum endpoint_peer {
	PEER_AUTO,
	PEER_RUNTIME,
	PEER_TOOL,
	PEER_ROUTER
};

struct endpoint {
	char			*spec;		/* as the user wrote it */
	const struct transport	*transport;
	void			*t;		/* the transport's own */
	enum endpoint_role	 role;		/* as given, then as decided */
	const char		*why;		/* why this role */
	enum endpoint_peer	 peer;		/* connect: what listens there */
	const char		*peer_why;
	char			 name[160];	/* printable, with the bound port */
	struct acl_policy	*policy;	/* NULL: the defaults */
	char			*transport_spec; /* spec less its policy options */
};

/* An option ,name[=value] of an endpoint, and what sets it. */
struct endpoint_option {
	const char	*name;
	int		 takes_value;
	int		 (*set)(struct endpoint *, const char *, char *, size_t);
};

/* The ids a local endpoint's socket file is given: owner= and group=. */
struct endpoint_ids {
	int		 have_uid;
	uid_t		 uid;
	int		 have_gid;
	gid_t		 gid;
};

int		 endpoint_parse(const char *, struct endpoint *, char *, size_t);
int		 endpoint_parse_part(const char *, struct endpoint *, char *,
		    size_t);
void		 endpoint_clear(struct endpoint *);
int		 endpoint_check_role(const struct endpoint *, char *, size_t);
const char	*endpoint_stand_in(const char *);
int		 endpoint_set_string(char **, const char *, char *, size_t);

#endif /* ENDPOINT_H */
