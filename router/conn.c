/* SPDX-License-Identifier: ISC */

/*
 * One side of a session: a socket behind its transport, its two events
 * and the bytes waiting to be written to it.  A conn exists before its
 * socket does, so that a tool's first message can wait in the output of
 * the runtime side until a runtime connection is dialled or handed over.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/identity.h"
#include "common/log.h"
#include "router/engine.h"
#include "router/metrics.h"
#include "transports/transport.h"

static void	 conn_event(evutil_socket_t, short, void *);
static void	 conn_connected(struct conn *);
static int	 conn_handshake(struct conn *);

/*
 * Prepare a conn with no socket yet, for its owner to hear of.  Return
 * -1 if out of memory.
 */
int
conn_init(struct conn *c, const struct conn_owner *owner, int side,
    struct endpoint *ep)
{
	memset(c, 0, sizeof(*c));
	c->owner = owner;
	c->side = side;
	c->io.endpoint = ep;
	c->io.transport = ep->transport;
	c->io.fd = -1;
	if ((c->out = evbuffer_new()) == NULL)
		return (-1);
	return (0);
}

/*
 * The printable peer of c, made when a log line needs it rather than kept
 * for the life of every session: a network peer's address, a local
 * peer's credentials, or what it dialled, and a verified identity.
 */
void
conn_peer_name(const struct conn *c, char *buf, size_t len)
{
	char	 addr[INET6_ADDRSTRLEN + 16], id[160];
	size_t	 n;

	if (c->io.addr.sa.sa_family == AF_INET ||
	    c->io.addr.sa.sa_family == AF_INET6) {
		sockaddr_name(&c->io.addr.sa, sizeof(c->io.addr), addr,
		    sizeof(addr));
		snprintf(buf, len, "%s:%s", c->io.transport->name, addr);
	} else if (c->io.have_cred)
		snprintf(buf, len, "%s(pid %ld uid %lu)", c->io.endpoint->name,
		    (long)c->io.pid, (unsigned long)c->io.uid);
	else
		snprintf(buf, len, "%s", c->io.endpoint->name);
	if (c->io.identity != NULL && (n = strlen(buf)) < len) {
		identity_describe(c->io.identity, id, sizeof(id));
		snprintf(buf + n, len - n, "(%s)", id);
	}
}

/*
 * The conn's events: on its socket, or with no descriptor for a
 * transport that makes them active itself (own_events).
 */
static void
conn_set_events(struct conn *c)
{
	if (c->io.transport->own_events) {
		event_assign(&c->rev, base, -1, EV_PERSIST, conn_event, c);
		event_assign(&c->wev, base, -1, EV_PERSIST, conn_event, c);
	} else {
		event_assign(&c->rev, base, c->io.fd,
		    EV_READ | EV_CLOSED | EV_PERSIST, conn_event, c);
		event_assign(&c->wev, base, c->io.fd, EV_WRITE | EV_PERSIST,
		    conn_event, c);
	}
	c->io.rev = &c->rev;
	c->io.wev = &c->wev;
	c->rev_added = c->wev_added = 0;
}

/* Stop a transport that makes the events active from making them so. */
static void
conn_disarm(struct conn *c)
{
	if (c->io.fd != -1 && c->io.transport->arm != NULL)
		c->io.transport->arm(&c->io, 0, 0);
}

/*
 * Give the conn a connected socket (accepted, or dialled without delay),
 * set up its transport and start the handshake.  Return -1 on failure.
 */
int
conn_attach(struct conn *c, int fd, int accepted)
{
	c->io.fd = fd;
	conn_set_events(c);
	if (c->io.transport->setup(&c->io, accepted) == -1)
		return (-1);
	c->handshaking = 1;
	return (0);
}

/* Move the socket of src into dst, which keeps its own output. */
void
conn_move(struct conn *dst, struct conn *src)
{
	conn_disarm(src);
	if (src->rev_added)
		event_del(&src->rev);
	if (src->wev_added)
		event_del(&src->wev);
	free(dst->io.identity);
	dst->io = src->io;
	dst->io.error = 0;
	dst->io.why = NULL;
	dst->counted = src->counted;
	conn_set_events(dst);
	src->io.fd = -1;
	src->io.tstate = NULL;
	src->io.identity = NULL;
	src->counted = NULL;
	src->rev_added = src->wev_added = 0;
}

/* Close the socket; the output buffer stays for the session to free. */
void
conn_close(struct conn *c)
{
	if (c->io.fd == -1)
		return;
	conn_disarm(c);
	if (c->rev_added)
		event_del(&c->rev);
	if (c->wev_added)
		event_del(&c->wev);
	c->rev_added = c->wev_added = 0;
	c->io.transport->teardown(&c->io);
	c->io.tstate = NULL;
	free(c->io.identity);
	c->io.identity = NULL;
	transport_close(c->io.transport, c->io.fd);
	c->io.fd = -1;
	pump_kpipe_free(c);
	if (c->counted != NULL)
		limit_release(c);
	c->connecting = c->handshaking = 0;
	c->reading = c->writing = 0;
	c->eof = c->shut = c->shut_pending = c->throttled = 0;
	c->rwant_write = c->wwant_read = c->peer_closed = 0;
}

void
conn_free(struct conn *c)
{
	conn_close(c);
	if (c->out != NULL)
		evbuffer_free(c->out);
	c->out = NULL;
}

int
conn_is_open(const struct conn *c)
{
	return (c->io.fd != -1 && !c->connecting && !c->handshaking);
}

/* Describe the last failure of a conn. */
const char *
conn_error(const struct conn *c)
{
	return (stream_error(&c->io));
}

/* Add ev to the loop or take it out as wanted; return whether it is in. */
static int
set_event(struct event *ev, int added, int want)
{
	if (want && !added)
		event_add(ev, NULL);
	else if (!want && added)
		event_del(ev);
	return (want != 0);
}

/* Ask the event loop for exactly the readiness the conn waits for. */
void
conn_update(struct conn *c)
{
	int	 want_read, want_write;

	if (c->io.fd == -1)
		return;
	if (c->connecting) {
		want_read = 0;
		want_write = 1;
	} else if (c->handshaking) {
		want_read = c->wwant_read;
		want_write = c->rwant_write;
	} else if (c->session == NULL) {
		/*
		 * Parked: only EOF or an unexpected byte can arrive, unless
		 * the router sends a command of its own (resume.c).  A read
		 * may wait for writability: a WebSocket's pong, a TLS
		 * record.
		 */
		want_read = !c->rwant_write;
		want_write = evbuffer_get_length(c->out) > 0 || c->rwant_write;
	} else {
		want_read = (c->reading && !c->eof && !c->throttled &&
		    !c->rwant_write) || c->wwant_read;
		want_write = (c->writing && !c->wwant_read &&
		    pump_queued(c) > 0) || c->rwant_write ||
		    c->shut_pending;
	}
	c->rev_added = set_event(&c->rev, c->rev_added, want_read);
	c->wev_added = set_event(&c->wev, c->wev_added, want_write);
	if (c->io.transport->arm != NULL)
		c->io.transport->arm(&c->io, want_read, want_write);
}

/*
 * Start connecting the conn to its endpoint.  Return 0 when connected at
 * once (the handshake follows), 1 while the connect is in progress, or -1
 * with c->error set.
 */
int
conn_dial(struct conn *c)
{
	int	 fd, pending;

	c->io.error = 0;
	c->io.why = NULL;
	/* A runtime found by its socket (dir:, proc:) is dialled there. */
	if (c->path != NULL)
		fd = c->io.transport->dial_found(c->io.endpoint, c->path,
		    &pending);
	else
		fd = c->io.transport->dial(c->io.endpoint, &pending);
	if (fd == -1) {
		c->io.error = errno;
		return (-1);
	}
	if (pending) {
		c->io.fd = fd;
		c->connecting = 1;
		conn_set_events(c);
		conn_update(c);
		return (1);
	}
	if (conn_attach(c, fd, 0) == -1) {
		conn_close(c);
		return (-1);
	}
	return (0);
}

/* A pending connect finished: learn how, then start the handshake. */
static void
conn_connected(struct conn *c)
{
	socklen_t	 len = sizeof(c->io.error);
	int		 fd = c->io.fd;

	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &c->io.error, &len) == -1)
		c->io.error = errno;
	c->connecting = 0;
	if (c->io.error != 0 || c->io.transport->setup(&c->io, 0) == -1) {
		(void)c->owner->failed(c, "connect");
		return;
	}
	c->handshaking = 1;
	(void)conn_handshake(c);
}

/*
 * Take one step of the transport's handshake; tell the session when the
 * conn is ready or has failed.  Return -1 if the session closed.
 */
static int
conn_handshake(struct conn *c)
{
	int	 rv;

	c->rwant_write = c->wwant_read = 0;
	rv = c->io.transport->handshake(&c->io);
	if (rv == 0) {
		c->handshaking = 0;
		if (c->io.transport->tls)
			metrics.tls_handshakes++;
		return (c->owner->ready(c));
	}
	if (rv == IO_WANT_READ)
		c->wwant_read = 1;
	else if (rv == IO_WANT_WRITE)
		c->rwant_write = 1;
	else {
		if (c->io.transport->tls)
			metrics.tls_failures++;
		return (c->owner->failed(c, "handshake"));
	}
	conn_update(c);
	return (0);
}

/*
 * Read on a conn no session pumps (parked, an errand's, an exchange's):
 * a read that waits for writability arms the write event instead of
 * the read one, which would fire again at once.
 */
ssize_t
conn_read_parked(struct conn *c, void *buf, size_t len)
{
	ssize_t	 n;

	c->rwant_write = 0;
	n = c->io.transport->read(&c->io, buf, len);
	if (n == IO_WANT_WRITE)
		c->rwant_write = 1;
	conn_update(c);
	return (n);
}

/*
 * Start a conn whose socket is connected: run its handshake.  Return -1
 * if the session closed.
 */
int
conn_start(struct conn *c)
{
	return (conn_handshake(c));
}

static void
conn_event(evutil_socket_t fd, short what, void *arg)
{
	struct conn	*c = arg;

	if (c->connecting)
		conn_connected(c);
	else if (c->handshaking)
		(void)conn_handshake(c);
	else
		c->owner->event(c, what);
}
