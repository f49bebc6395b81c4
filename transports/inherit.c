/* SPDX-License-Identifier: ISC */

/*
 * Listening sockets a service manager passed (socket activation, as
 * systemd's ListenStream= does): described by the platform at start-up,
 * before any endpoint listens, then each taken by the listener with the
 * same address: a uds endpoint by its path, a tcp or tls one by its
 * family, address and port.  That listener uses the descriptor instead of
 * binding, and leaves the socket file alone at exit, since it did not
 * make it.  An endpoint no descriptor matches binds as usual.  A
 * descriptor that is not a listening stream socket, or that no listen
 * endpoint takes, stops the start-up: a unit whose sockets and
 * configuration disagree must not half work.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/util.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "transports/socket.h"
#include "transports/transport.h"

static struct inherited_fd	*fds;
static char			*taken;
static size_t			 nfds;

/* Whether a descriptor is something a listener can use; else say why. */
static int
usable(const struct inherited_fd *f, char *err, size_t len)
{
	const struct sockaddr_un	*sun;
	const char			*why = NULL;

	if (!f->is_socket)
		why = "is not a socket";
	else if (f->type != SOCK_STREAM)
		why = f->type == SOCK_DGRAM ? "is a datagram socket" :
		    "is not a stream socket";
	else if (f->family != AF_UNIX && f->family != AF_INET &&
	    f->family != AF_INET6)
		why = "is not a Unix, IPv4 or IPv6 socket";
	else if (!f->listening)
		why = "is not listening (Accept=yes passes connections; "
		    "dsroute needs Accept=no)";
	else if (f->family == AF_UNIX) {
		sun = (const struct sockaddr_un *)&f->addr;
		if ((size_t)f->addrlen <= offsetof(struct sockaddr_un, sun_path) ||
		    sun->sun_path[0] == '\0')
			why = "is not bound to a socket file (an abstract or "
			    "unnamed socket)";
	}
	if (why == NULL)
		return (0);
	snprintf(err, len, "fd %d (\"%s\") from the service manager %s; "
	    "dsroute takes listening stream sockets (ListenStream=)", f->fd,
	    f->name, why);
	return (-1);
}

/*
 * Take the descriptors the service manager passed, if any, and refuse
 * one no listener could use.  Return -1 with a one-line reason in err.
 */
int
inherit_open(char *err, size_t len)
{
	size_t	 i;

	if (platform_inherited_fds(&fds, &nfds, err, len) == -1)
		return (-1);
	taken = nfds != 0 ? xcalloc(nfds, 1) : NULL;
	for (i = 0; i < nfds; i++) {
		if (usable(&fds[i], err, len) == -1)
			return (-1);
	}
	if (nfds != 0)
		log_debug("%zu listening socket%s from the service manager",
		    nfds, nfds == 1 ? "" : "s");
	return (0);
}

/* The path of an inherited Unix socket, NUL-terminated in buf. */
static void
unix_path(const struct inherited_fd *f, char *buf, size_t size)
{
	const struct sockaddr_un	*sun =
	    (const struct sockaddr_un *)&f->addr;
	size_t				 n;

	n = f->addrlen - offsetof(struct sockaddr_un, sun_path);
	if (n > sizeof(sun->sun_path))
		n = sizeof(sun->sun_path);
	n = strnlen(sun->sun_path, n);
	if (n >= size)
		n = size - 1;
	memcpy(buf, sun->sun_path, n);
	buf[n] = '\0';
}

/* The untaken inherited socket listening at path, or -1. */
static int
find_unix(const char *path)
{
	char	 p[sizeof(((struct sockaddr_un *)0)->sun_path) + 1];
	size_t	 i;

	for (i = 0; i < nfds; i++) {
		if (taken[i] || fds[i].family != AF_UNIX)
			continue;
		unix_path(&fds[i], p, sizeof(p));
		if (strcmp(p, path) == 0)
			return ((int)i);
	}
	return (-1);
}

/* Whether two IPv4 or IPv6 addresses are the same, port included. */
static int
same_inet(const struct sockaddr *a, const struct sockaddr *b)
{
	const struct sockaddr_in	*a4, *b4;
	const struct sockaddr_in6	*a6, *b6;

	if (a->sa_family != b->sa_family)
		return (0);
	switch (a->sa_family) {
	case AF_INET:
		a4 = (const struct sockaddr_in *)a;
		b4 = (const struct sockaddr_in *)b;
		return (a4->sin_port == b4->sin_port &&
		    a4->sin_addr.s_addr == b4->sin_addr.s_addr);
	case AF_INET6:
		a6 = (const struct sockaddr_in6 *)a;
		b6 = (const struct sockaddr_in6 *)b;
		return (a6->sin6_port == b6->sin6_port &&
		    memcmp(&a6->sin6_addr, &b6->sin6_addr,
		    sizeof(a6->sin6_addr)) == 0);
	}
	return (0);
}

/* Hand inherited socket i to the endpoint: non-blocking, logged. */
static int
take(size_t i, const struct endpoint *ep)
{
	if (platform_nonblock(fds[i].fd) == -1)
		return (-1);
	taken[i] = 1;
	log_info("%s: using fd %d (\"%s\") from the service manager instead "
	    "of binding", ep->name, fds[i].fd, fds[i].name);
	return (fds[i].fd);
}

/* Whether a socket listening at path was passed, for a uds endpoint. */
int
inherit_has_unix(const char *path)
{
	return (find_unix(path) != -1);
}

/* The socket listening at path, for a uds listener; -1 if none. */
int
inherit_take_unix(const struct endpoint *ep, const char *path)
{
	int	 i;

	if ((i = find_unix(path)) == -1)
		return (-1);
	return (take(i, ep));
}

/* The socket listening at addr, for a tcp or tls listener; -1 if none. */
int
inherit_take_inet(const struct endpoint *ep, const struct sockaddr *addr)
{
	size_t	 i;

	for (i = 0; i < nfds; i++) {
		if (!taken[i] && same_inet((const struct sockaddr *)
		    &fds[i].addr, addr))
			return (take(i, ep));
	}
	return (-1);
}

/*
 * Once every listener is open: refuse a passed socket none took, since
 * its address is in the unit but in no endpoint.  Return -1 with a
 * one-line reason in err.
 */
int
inherit_unclaimed(char *err, size_t len)
{
	char	 addr[128];
	size_t	 i;

	for (i = 0; i < nfds; i++) {
		if (taken[i])
			continue;
		sockaddr_name((const struct sockaddr *)&fds[i].addr,
		    fds[i].addrlen, addr, sizeof(addr));
		snprintf(err, len, "fd %d (\"%s\") from the service manager "
		    "listens on %s, which no listen endpoint has: give one "
		    "with that address (uds: the same path; tcp:, tls: the "
		    "same address and port)", fds[i].fd, fds[i].name, addr);
		return (-1);
	}
	return (0);
}

/* At exit: close what no listener took, and forget them all. */
void
inherit_close(void)
{
	size_t	 i;

	for (i = 0; i < nfds; i++) {
		if (!taken[i])
			evutil_closesocket(fds[i].fd);
	}
	free(fds);
	free(taken);
	fds = NULL;
	taken = NULL;
	nfds = 0;
}
