/* SPDX-License-Identifier: ISC */

/*
 * Windows has no stand-ins: a mirror (dir:PATH,listen) makes socket files
 * for tools that look for a local pid's socket, and Windows tools look
 * for a pipe named after a pid instead; dir: is refused there before any
 * mirror starts.  These keep mirror.c and main.c the same everywhere.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>

#include "platform/standin.h"

int
standin_init(char *err, size_t len)
{
	snprintf(err, len, "mirrors do not exist on Windows");
	return (-1);
}

int
standin_start(struct standin *s, const char *app, const char *what,
    const char *tmpdir, char *err, size_t len)
{
	s->pid = -1;
	s->fd = -1;
	snprintf(err, len, "stand-ins do not exist on Windows");
	return (-1);
}

void
standin_stop(struct standin *s)
{
	s->pid = -1;
	s->fd = -1;
}

unsigned long long
standin_start_time(const struct standin *s)
{
	return (0);
}

/* A process told it is a stand-in cannot be one here: say so and stop. */
int
standin_main(int argc, char *argv[])
{
	if (getenv("DSROUTE_STANDIN") == NULL)
		return (-1);
	fprintf(stderr, "dsroute: DSROUTE_STANDIN: stand-ins do not exist on "
	    "Windows\n");
	exit(1);
}
