/* SPDX-License-Identifier: ISC */

/*
 * The contract of the transport operations table (transports/transport.h),
 * checked on every transport of the build, so that a new one is held to
 * it the day it is listed: the operations the engine calls without
 * looking are there, its prefixes find it and no other, its example
 * parses, and its options do not take a name another layer owns.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "router/endpoint.h"
#include "transports/transport.h"
#include "tap.h"

/* Options endpoint.c takes for every transport (its common tables). */
static const char *const common_options[] = {
	"listen", "connect", "peer", "advertise", "policy", "allow", "deny",
	"none", "observe", "operate", "dump", "full", "dump-dir",
	"max-buffer-mb", "may-stall-app", "allow-cn", "allow-san", "allow-fp",
	NULL
};

static int
has_required_ops(const struct transport *t)
{
	return (t->parse != NULL && t->clear != NULL &&
	    t->set_name != NULL && t->auto_role != NULL &&
	    t->listen != NULL && t->dial != NULL &&
	    t->setup != NULL && t->handshake != NULL && t->read != NULL &&
	    t->write != NULL && t->write_buffer != NULL &&
	    t->shutdown != NULL && t->teardown != NULL);
}

/* Reloads come as a set: made, then committed or thrown away. */
static int
reload_whole(const struct transport *t)
{
	return ((t->reload == NULL) == (t->reload_commit == NULL) &&
	    (t->reload == NULL) == (t->reload_free == NULL));
}

static int
prefixes_find_it(const struct transport *t)
{
	const char *const	*p;
	size_t			 skip;

	if (t->prefixes == NULL || t->prefixes[0] == NULL)
		return (0);
	for (p = t->prefixes; *p != NULL; p++) {
		if ((*p)[strlen(*p) - 1] != ':' ||
		    transport_find(*p, &skip) != t || skip != strlen(*p))
			return (0);
	}
	return (1);
}

static int
example_parses(const struct transport *t)
{
	struct endpoint	 ep;
	char		 err[256];
	int		 good;

	if (endpoint_parse_part(t->example, &ep, err, sizeof(err)) == -1)
		return (0);
	good = ep.transport == t && ep.t != NULL && ep.name[0] != '\0';
	endpoint_clear(&ep);
	return (good);
}

static int
options_its_own(const struct transport *t)
{
	size_t	 i, j;

	for (i = 0; i < t->noptions; i++) {
		for (j = 0; common_options[j] != NULL; j++)
			if (strcmp(t->options[i].name, common_options[j]) == 0)
				return (0);
		for (j = i + 1; j < t->noptions; j++)
			if (strcmp(t->options[i].name, t->options[j].name) == 0)
				return (0);
		if (t->options[i].set == NULL)
			return (0);
	}
	return (1);
}

int
main(void)
{
	const struct transport	*all[32];
	size_t			 i, j, n;

	for (n = 0; n < 32 && (all[n] = transport_nth(n)) != NULL; n++)
		continue;
	ok(n >= 3, "the build has transports (%zu)", n);
	for (i = 0; i < n; i++) {
		ok(all[i]->name != NULL && all[i]->example != NULL,
		    "%s: a name and an example", all[i]->name);
		ok(has_required_ops(all[i]),
		    "%s: every operation the engine calls blindly",
		    all[i]->name);
		ok(reload_whole(all[i]), "%s: reload, commit and free together",
		    all[i]->name);
		ok(prefixes_find_it(all[i]), "%s: its prefixes find it",
		    all[i]->name);
		ok(example_parses(all[i]), "%s: its example %s parses",
		    all[i]->name, all[i]->example);
		ok(options_its_own(all[i]),
		    "%s: its options are its own, each once", all[i]->name);
		for (j = 0; j < i; j++)
			if (strcmp(all[i]->name, all[j]->name) == 0)
				break;
		ok(j == i, "%s: named once", all[i]->name);
	}
	ok(transport_find("quic:x", &i) == NULL &&
	    transport_unavailable("pipe:dotnet") != NULL,
	    "no transport for an unknown prefix; named pipes say why not");
	return (tap_done());
}
