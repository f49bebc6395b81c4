/* SPDX-License-Identifier: ISC */

/*
 * The transports, listed by the prefixes of their endpoints.  A new
 * transport is a file that fills in a struct transport, and a line here,
 * or in the local_SYSTEM.c of each system that has it.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/util.h>

#include "common/ipc.h"
#include "common/log.h"
#include "transports/transport.h"

struct transport_env	 transport_env = { NULL, 20000 };

extern const struct transport	 transport_tcp;
extern const struct transport	 transport_tls;
extern const struct transport	 transport_ws;
extern const struct transport	 transport_wss;

/*
 * The local transports are the system's (local_SYSTEM.c): socket files on
 * POSIX systems, named pipes on Windows, proc: on Linux alone.  The
 * network's are everywhere.
 */
static const struct transport *const network[] = {
	&transport_tcp,
	&transport_tls,
	&transport_ws,
	&transport_wss,
};

#define NNETWORK	(sizeof(network) / sizeof(network[0]))

/* The i-th transport of this build, the local ones first; NULL after. */
const struct transport *
transport_nth(size_t i)
{
	size_t	 nlocal;

	for (nlocal = 0; transports_local[nlocal] != NULL; nlocal++)
		if (nlocal == i)
			return (transports_local[i]);
	return (i - nlocal < NNETWORK ? network[i - nlocal] : NULL);
}

/*
 * The transport of an endpoint specification, by its prefix, and the
 * length of that prefix in *skip; NULL if none has it.
 */
const struct transport *
transport_find(const char *spec, size_t *skip)
{
	const struct transport	*t;
	const char *const	*p;
	size_t			 i;

	for (i = 0; (t = transport_nth(i)) != NULL; i++) {
		for (p = t->prefixes; *p != NULL; p++) {
			if (strncmp(spec, *p, strlen(*p)) == 0) {
				*skip = strlen(*p);
				return (t);
			}
		}
	}
	return (NULL);
}

/* Why a specification's transport is not available here, or NULL. */
const char *
transport_unavailable(const char *spec)
{
	const struct transport_absent	*a;

	for (a = transports_absent; a->prefix != NULL; a++) {
		if (strncmp(spec, a->prefix, strlen(a->prefix)) == 0)
			return (a->why);
	}
	return (NULL);
}

/* Whether some transport takes an option of that name. */
int
transport_option_elsewhere(const char *name)
{
	const struct transport	*t;
	size_t			 i, j;

	for (i = 0; (t = transport_nth(i)) != NULL; i++) {
		for (j = 0; j < t->noptions; j++) {
			if (strcmp(t->options[j].name, name) == 0)
				return (1);
		}
	}
	return (0);
}

/* The first prefix of each transport, as "uds:, tcp:, tls:, ws: or wss:". */
void
transport_prefixes(char *buf, size_t len)
{
	const struct transport	*t;
	size_t			 i, n = 0;

	buf[0] = '\0';
	for (i = 0; (t = transport_nth(i)) != NULL; i++) {
		n += snprintf(buf + n, n < len ? len - n : 0, "%s%s",
		    i == 0 ? "" : transport_nth(i + 1) == NULL ? " or " : ", ",
		    t->prefixes[0]);
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

/*
 * Log the settings a runtime or a tool of this host needs to use the
 * local endpoint ep, a socket or a pipe called name; dn, when name is a
 * runtime's default port, says whose.
 */
void
transport_howto_local(const struct endpoint *ep, const struct endpoint *other,
    const char *name, const struct default_name *dn)
{
	int	 runtimes, tools;

	transport_serves(ep, other, &runtimes, &tools);
	if (runtimes)
		log_info("  runtime on this host: "
		    "DOTNET_DiagnosticPorts=%s,nosuspend (or ,suspend to wait "
		    "for a tool at start-up)%s%s", name,
		    other->role == ROLE_LISTEN ? "; its tools come through " :
		    "", other->role == ROLE_LISTEN ? other->name : "");
	if (tools && other->role == ROLE_LISTEN)
		log_info("  tool on this host, for a runtime that dials %s: "
		    "dotnet-trace collect --diagnostic-port %s,connect",
		    other->name, name);
	else if (tools)
		log_info("  tool on this host: dotnet-trace collect "
		    "--diagnostic-port %s,connect", name);
	if (ep->role == ROLE_LISTEN)
		return;
	if (dn != NULL)
		log_info("  %s is the default diagnostic port of process %ld",
		    name, dn->pid);
	else
		log_info("  a runtime's port, or a tool listening: "
		    "dotnet-trace collect --diagnostic-port %s", name);
}
