/* SPDX-License-Identifier: ISC */

/*
 * Copyright (c) 2026 The dsroute authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/* TCP over IPv4 and IPv6. */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "router/dsroute.h"

const struct transport transport_tcp = {
	.name = "tcp",
	.listen = tcp_listen,
	.unlisten = tcp_unlisten,
	.dial = tcp_dial,
	.setup = tcp_setup,
	.handshake = socket_handshake,
	.read = socket_read,
	.write = socket_write,
	.write_buffer = socket_write_buffer,
	.shutdown = socket_shutdown,
	.teardown = socket_teardown,
};

static int
tcp_socket(int family)
{
	return (socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
}

/* Listen on the endpoint's address; report the port chosen for port 0. */
int
tcp_listen(struct endpoint *ep, char *err, size_t len)
{
	struct sockaddr_in	*sin;
	socklen_t		 alen;
	int			 fd, on = 1;

	fd = tcp_socket(ep->addr.ss_family);
	if (fd == -1 && ep->wildcard && errno == EAFNOSUPPORT) {
		/* No IPv6 here: every interface means 0.0.0.0. */
		sin = (struct sockaddr_in *)&ep->addr;
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons((uint16_t)atoi(ep->port));
		ep->addrlen = sizeof(*sin);
		fd = tcp_socket(AF_INET);
	}
	if (fd == -1) {
		snprintf(err, len, "socket: %s", strerror(errno));
		return (-1);
	}
	/* Accepted sockets inherit TCP_NODELAY: no setsockopt per session. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1 ||
	    bind(fd, (struct sockaddr *)&ep->addr, ep->addrlen) == -1 ||
	    listen(fd, SOMAXCONN) == -1) {
		snprintf(err, len, "cannot listen on %s: %s", ep->name,
		    strerror(errno));
		close(fd);
		return (-1);
	}
	/* Learn the port the kernel chose for port 0. */
	alen = sizeof(ep->addr);
	if (getsockname(fd, (struct sockaddr *)&ep->addr, &alen) == 0)
		ep->addrlen = alen;
	endpoint_set_name(ep);
	return (fd);
}

void
tcp_unlisten(struct endpoint *ep)
{
}

/*
 * A connect to a nearby peer, loopback above all, has usually finished
 * by the time connect() says EINPROGRESS: look once, without waiting, to
 * spare a trip through the event loop.  Return 1 if it has finished,
 * with *error set (0 when connected).
 */
static int
connect_finished(int fd, int *error)
{
	struct pollfd	 pfd;
	socklen_t	 len = sizeof(*error);

	pfd.fd = fd;
	pfd.events = POLLOUT;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) != 1)
		return (0);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, error, &len) == -1)
		*error = errno;
	return (1);
}

/* Start a non-blocking connect to the endpoint's address. */
int
tcp_dial(struct endpoint *ep, int *pending)
{
	int	 fd, error, on = 1;

	if ((fd = tcp_socket(ep->addr.ss_family)) == -1)
		return (-1);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	*pending = 0;
	if (connect(fd, (struct sockaddr *)&ep->addr, ep->addrlen) == 0)
		return (fd);
	error = errno;
	if (error == EINPROGRESS) {
		if (!connect_finished(fd, &error)) {
			*pending = 1;
			return (fd);
		}
		if (error == 0)
			return (fd);
	}
	close(fd);
	errno = error;
	return (-1);
}

/*
 * Forward each write at once: the router adds no delay of its own.  A
 * dialled socket got TCP_NODELAY in tcp_dial, an accepted one from its
 * listener (Linux and the BSDs copy it to accepted sockets).
 */
int
tcp_setup(struct conn *c, int accepted)
{
	return (0);
}
