/* SPDX-License-Identifier: ISC */

/* The plain stream over a connected socket, shared by uds and tcp. */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "platform/platform.h"
#include "transports/socket.h"
#include "transports/transport.h"

static ssize_t
io_failed(struct stream *c, int want)
{
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return (want);
	c->error = errno;
	return (IO_ERROR);
}

ssize_t
socket_read(struct stream *c, void *buf, size_t len)
{
	ssize_t	 n;

	if ((n = recv(c->fd, buf, len, 0)) == -1)
		return (io_failed(c, IO_WANT_READ));
	return (n);
}

ssize_t
socket_write(struct stream *c, const void *buf, size_t len)
{
	ssize_t	 n;

	if ((n = send(c->fd, buf, len, MSG_NOSIGNAL)) == -1)
		return (io_failed(c, IO_WANT_WRITE));
	return (n);
}

/* Write as much of the buffer as the socket takes, with one writev. */
ssize_t
socket_write_buffer(struct stream *c, struct evbuffer *buf)
{
	int	 n;

	if ((n = evbuffer_write(buf, c->fd)) == -1)
		return (io_failed(c, IO_WANT_WRITE));
	return (n);
}

/* Send FIN; a peer that already went away is not an error here. */
int
socket_shutdown(struct stream *c)
{
	if (shutdown(c->fd, SHUT_WR) == -1 && errno != ENOTCONN) {
		c->error = errno;
		return (IO_ERROR);
	}
	return (0);
}

long
socket_unsent(struct stream *c)
{
	return (platform_unsent(c->fd));
}

/* Move what the socket holds into an empty kernel pipe. */
ssize_t
socket_read_pipe(struct stream *c, int pipe_w, size_t len)
{
	ssize_t	 n;

	if ((n = platform_kpipe_fill(pipe_w, c->fd, len)) == -1)
		return (io_failed(c, IO_WANT_READ));
	return (n);
}

/* Move what a kernel pipe holds into the socket, as far as it takes it. */
ssize_t
socket_write_pipe(struct stream *c, int pipe_r, size_t len)
{
	ssize_t	 n;

	if ((n = platform_kpipe_drain(pipe_r, c->fd, len)) == -1)
		return (io_failed(c, IO_WANT_WRITE));
	return (n);
}

int
socket_handshake(struct stream *c)
{
	return (0);
}

void
socket_teardown(struct stream *c)
{
}

/* Add a runtime's socket to the list; -1 when out of memory. */
int
found_add(struct found_list *l, uint64_t key, const char *path)
{
	struct found	*grown;
	int		 room;

	if (strlen(path) >= sizeof(l->v[0].path))
		return (0);
	if (l->n == l->room) {
		room = l->room == 0 ? 16 : l->room * 2;
		if ((grown = reallocarray(l->v, room, sizeof(*grown))) == NULL)
			return (-1);
		l->v = grown;
		l->room = room;
	}
	l->v[l->n].key = key;
	memcpy(l->v[l->n].path, path, strlen(path) + 1);
	l->n++;
	return (0);
}

void
found_free(struct found_list *l)
{
	free(l->v);
	memset(l, 0, sizeof(*l));
}
