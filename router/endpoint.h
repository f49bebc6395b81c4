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

#include "transports/transport.h"

/* The spares a connect endpoint to another dsroute keeps (warm=). */
#define ENDPOINT_WARM_DEFAULT	2
#define ENDPOINT_WARM_MAX	16

int		 endpoint_parse(const char *, struct endpoint *, char *, size_t);
int		 endpoint_parse_part(const char *, struct endpoint *, char *,
		    size_t);
void		 endpoint_clear(struct endpoint *);
int		 endpoint_check_role(const struct endpoint *, char *, size_t);
int		 endpoint_start(struct endpoint *, const char *,
		    int (*)(struct endpoint *, enum exposure, char *, size_t),
		    char *, size_t);
const char	*endpoint_stand_in(const char *);

#endif /* ENDPOINT_H */
