/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the configuration file parser the way dsroute -n reads a file:
 * the input is the file, read from a memory stream; nothing listens and
 * no name is resolved.  Beyond "no crash, no leak" (LSan checks that
 * config_free leaves nothing behind), the harness checks:
 * - a file that loads has routes, each with a valid, unique name, not
 *   started, whose endpoints are neither resolved nor given a TLS context
 *   or socket file, and parse again from their own text to the same thing;
 * - a file that does not load reports at least one error, every error
 *   has a message and a line inside the file, in the order of the lines,
 *   and no route is left built (nothing partial to apply).
 */

#include "config.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/acl.h"
#include "router/conffile.h"
#include "router/endpoint.h"
#include "router/engine.h"
#include "router/settings.h"
#include "transports/socket.h"
#include "transports/tls.h"
#include "transports/transport.h"
#include "transports/uds.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/*
 * The settings callback dsroute -f uses, less the user and group look-ups
 * (a fuzzer should not read the password database): a known setting
 * with a good value is taken, anything else is refused, so that both
 * paths of the parser run.
 */
static int
setting(void *arg, const char *name, const char *value, char *err,
    size_t len)
{
	const struct setting	*s = settings_find(name);

	if (s != NULL && (s->type == ST_USER || s->type == ST_GROUP)) {
		if (*value != '\0')
			return (0);
		snprintf(err, len, "%s: give a name", name);
		return (-1);
	}
	return (settings_set(arg, name, value, err, len));
}

static int
valid_name(const char *name)
{
	size_t	 i, n = strlen(name);

	if (n == 0 || n > 40)
		return (0);
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)name[i]) &&
		    strchr("-_.", name[i]) == NULL)
			return (0);
	}
	return (1);
}

/* -n resolves, loads and creates nothing. */
static void
check_untouched(const struct endpoint *ep)
{
	const char	*tr = ep->transport->name;

	if (strcmp(tr, "uds") == 0 && UDS(ep)->file.made)
		abort();
	if ((strcmp(tr, "tcp") == 0 || strcmp(tr, "tls") == 0) &&
	    TCP(ep)->addrlen != 0)
		abort();
	if (strcmp(tr, "tls") == 0 && TLS(ep)->ctx != NULL)
		abort();
}

/* A route's endpoint must parse again from its own text, the same. */
static void
check_endpoint(const struct endpoint *ep)
{
	struct endpoint	 again;
	char		 err[512], said[256], again_said[256];
	int		 n, again_n;

	if (ep->spec == NULL || ep->transport == NULL || ep->name[0] == '\0')
		abort();
	check_untouched(ep);
	said[0] = again_said[0] = '\0';
	if (ep->transport->describe != NULL)
		ep->transport->describe(ep, said, sizeof(said));
	if (endpoint_parse(ep->spec, &again, err, sizeof(err)) == -1 ||
	    again.transport != ep->transport || again.role != ep->role ||
	    strcmp(again.name, ep->name) != 0 ||
	    strcmp(again.transport_spec, ep->transport_spec) != 0 ||
	    (again.policy == NULL) != (ep->policy == NULL))
		abort();
	acl_allow_list(again.policy, &again_n);
	acl_allow_list(ep->policy, &n);
	if (again_n != n)
		abort();
	if (again.transport->describe != NULL)
		again.transport->describe(&again, again_said,
		    sizeof(again_said));
	if (strcmp(said, again_said) != 0)
		abort();
	endpoint_clear(&again);
}

static void
check_loaded(const struct config *cfg)
{
	const struct route	*r, *other;

	if (cfg->nerrors != 0 || cfg->oom || TAILQ_EMPTY(&cfg->routes))
		abort();
	TAILQ_FOREACH(r, &cfg->routes, entry) {
		if (!valid_name(r->name) || r->started)
			abort();
		for (other = TAILQ_NEXT(r, entry); other != NULL;
		    other = TAILQ_NEXT(other, entry)) {
			if (strcmp(r->name, other->name) == 0)
				abort();	/* a name twice */
		}
		check_endpoint(&r->endpoint[SIDE_LOCAL]);
		check_endpoint(&r->endpoint[SIDE_REMOTE]);
	}
}

static void
check_refused(const struct config *cfg, int nlines)
{
	size_t	 i;

	if (cfg->nerrors == 0 || !TAILQ_EMPTY(&cfg->routes))
		abort();	/* nothing partial may be left to apply */
	for (i = 0; i < cfg->nerrors; i++) {
		if (cfg->errors[i].message == NULL ||
		    cfg->errors[i].message[0] == '\0' ||
		    cfg->errors[i].line < 1 || cfg->errors[i].line > nlines)
			abort();	/* file:line: message, inside the file */
		if (i > 0 && cfg->errors[i].line < cfg->errors[i - 1].line)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config	 cfg;
	struct settings	 st;
	FILE		*fp;
	uint8_t		*copy;
	size_t		 i;
	int		 nlines = 0;

	if ((copy = malloc(size + 1)) == NULL)
		return (0);
	memcpy(copy, data, size);
	/* Lines as getline counts them; an empty file still has line 1. */
	for (i = 0; i < size; i++)
		nlines += copy[i] == '\n';
	if (size > 0 && copy[size - 1] != '\n')
		nlines++;
	if (nlines == 0)
		nlines = 1;
	if ((fp = fmemopen(copy, size, "r")) == NULL)
		abort();
	settings_init(&st);
	if (config_parse(&cfg, "fuzz.conf", fp, setting, &st) == 0)
		check_loaded(&cfg);
	else
		check_refused(&cfg, nlines);
	if (strcmp(cfg.path, "fuzz.conf") != 0)
		abort();
	config_free(&cfg);
	if (cfg.path != NULL || cfg.errors != NULL ||
	    TAILQ_FIRST(&cfg.routes) != NULL)
		abort();
	fclose(fp);
	free(copy);
	return (0);
}
