/* SPDX-License-Identifier: ISC */

/*
 * The transports, listed by the prefixes of their endpoints.  This is the
 * one place that names them all: a new transport is a file that fills in
 * a struct transport, and a line here.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/util.h>

#include "transports/transport.h"

struct transport_env	 transport_env = { NULL, 20000 };

extern const struct transport	 transport_uds;
extern const struct transport	 transport_dir;
extern const struct transport	 transport_proc;
extern const struct transport	 transport_pipe;
extern const struct transport	 transport_tcp;
extern const struct transport	 transport_tls;
extern const struct transport	 transport_ws;
extern const struct transport	 transport_wss;

/*
 * The local transports are the system's: socket files on POSIX systems,
 * named pipes on Windows; proc: only where /proc reaches other mount
 * namespaces (Linux).  The others are everywhere.
 */
static const struct transport *const transports[] = {
#ifdef DSROUTE_WINDOWS
	&transport_pipe,
#else
	&transport_uds,
	&transport_dir,
#ifndef DSROUTE_DARWIN
	&transport_proc,
#endif
#endif
	&transport_tcp,
	&transport_tls,
	&transport_ws,
	&transport_wss,
};

/* Transports this build or this system does not have, and why. */
static const struct {
	const char	*prefix;
	const char	*why;
} unavailable[] = {
#ifdef DSROUTE_WINDOWS
	{ "uds:", "the .NET runtime on Windows serves a named pipe, not a "
	    "socket file: use pipe:NAME" },
	{ "unix:", "the .NET runtime on Windows serves a named pipe, not a "
	    "socket file: use pipe:NAME" },
	{ "dir:", "runtimes on Windows make no socket files to find: name "
	    "each pipe:dotnet-diagnostic-PID" },
	{ "proc:", "there is no /proc on Windows: name each "
	    "pipe:dotnet-diagnostic-PID" },
#else
	{ "pipe:", "named pipes exist only on Windows" },
	{ "namedpipe:", "named pipes exist only on Windows" },
#endif
#ifdef DSROUTE_DARWIN
	{ "proc:", "macOS has no /proc and no mount namespaces: its runtimes "
	    "make their sockets in their user's TMPDIR, so use "
	    "dir:$TMPDIR" },
#endif
};

#define NTRANSPORTS	(sizeof(transports) / sizeof(transports[0]))

/*
 * The transport of an endpoint specification, by its prefix, and the
 * length of that prefix in *skip; NULL if none has it.
 */
const struct transport *
transport_find(const char *spec, size_t *skip)
{
	const char *const	*p;
	size_t			 i;

	for (i = 0; i < NTRANSPORTS; i++) {
		for (p = transports[i]->prefixes; *p != NULL; p++) {
			if (strncmp(spec, *p, strlen(*p)) == 0) {
				*skip = strlen(*p);
				return (transports[i]);
			}
		}
	}
	return (NULL);
}

/* Every transport of this build, for the tests of their contract. */
const struct transport *const *
transport_all(size_t *n)
{
	*n = NTRANSPORTS;
	return (transports);
}

/* Why a specification's transport is not available here, or NULL. */
const char *
transport_unavailable(const char *spec)
{
	size_t	 i;

	for (i = 0; i < sizeof(unavailable) / sizeof(unavailable[0]); i++) {
		if (strncmp(spec, unavailable[i].prefix,
		    strlen(unavailable[i].prefix)) == 0)
			return (unavailable[i].why);
	}
	return (NULL);
}

/* Whether some transport takes an option of that name. */
int
transport_option_elsewhere(const char *name)
{
	size_t	 i, j;

	for (i = 0; i < NTRANSPORTS; i++) {
		for (j = 0; j < transports[i]->noptions; j++) {
			if (strcmp(transports[i]->options[j].name, name) == 0)
				return (1);
		}
	}
	return (0);
}

/* The first prefix of each transport, as "uds:, tcp:, tls:, ws: or wss:". */
void
transport_prefixes(char *buf, size_t len)
{
	size_t	 i, n = 0;

	buf[0] = '\0';
	for (i = 0; i < NTRANSPORTS; i++) {
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
		    i == 0 ? "" : i + 1 == NTRANSPORTS ? " or " : ", ",
		    transports[i]->prefixes[0]);
	}
}

/*
 * Close a descriptor of transport t that no conn holds (one accepted
 * and refused, or dialled and given up): a socket, unless the transport
 * makes its own descriptors.
 */
void
transport_close(const struct transport *t, int fd)
{
	if (t->close != NULL)
		t->close(fd);
	else
		evutil_closesocket(fd);
}

/*
 * Keep a copy of a string option of a transport, replacing an earlier
 * one: cert=FILE, owner=USER.  An empty value is refused.
 */
int
endpoint_set_string(char **dst, const char *v, char *err, size_t len)
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

/* Describe the last failure of a stream: the transport's words, or errno's. */
const char *
stream_error(const struct stream *st)
{
	if (st->why != NULL)
		return (st->why);
	if (st->error != 0)
		return (strerror(st->error));
	return ("failed");
}

/*
 * Who comes to the listener ep, given the route's other endpoint: the
 * runtimes that dial it (when the other listens for their tools, or
 * reaches a tool that listens), and the tools (when the other listens
 * for their runtimes, or reaches a runtime or a router).  In both
 * listening, a tool here meets a runtime there, and the reverse.
 */
void
transport_serves(const struct endpoint *ep, const struct endpoint *other,
    int *runtimes, int *tools)
{
	*runtimes = *tools = 0;
	if (ep->role != ROLE_LISTEN)
		return;
	*runtimes = other->role == ROLE_LISTEN || other->peer == PEER_TOOL;
	*tools = other->role == ROLE_LISTEN || other->peer != PEER_TOOL;
}
