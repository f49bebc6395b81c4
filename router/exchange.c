/* SPDX-License-Identifier: ISC */

/*
 * One request of the router's own to a peer it dials, and the answer
 * read whole: a link's ListRuntimes to another router (link.c), a found
 * runtime's ProcessInfo (found.c).  A fresh connection each time, bounded
 * by the handshake deadline; the owner's parse says when the answer is
 * whole, and done hears how it ended, once.
 */

#include "config.h"

#include <sys/types.h>

#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/util.h"
#include "router/engine.h"
#include "router/settings.h"
#include "transports/transport.h"

/* What waits to be parsed: at most a frame and a read. */
#define EXCHANGE_READ		16384
#define EXCHANGE_BUFFERED	(IPC_MESSAGE_MAX + EXCHANGE_READ)

static int	 exchange_conn_ready(struct conn *);
static int	 exchange_conn_failed(struct conn *, const char *);
static void	 exchange_event(struct conn *, short);

/* What an exchange's conn tells it. */
const struct conn_owner exchange_conn_owner = {
	exchange_conn_ready, exchange_conn_failed, exchange_event
};

static void	 exchange_timeout(evutil_socket_t, short, void *);

/*
 * Make an exchange with the endpoint on side of route r.  Return -1 if
 * out of memory.
 */
int
exchange_init(struct exchange *x, struct route *r, int side)
{
	memset(x, 0, sizeof(*x));
	if ((x->in = evbuffer_new()) == NULL)
		return (-1);
	if (conn_init(&x->conn, &exchange_conn_owner, side,
	    &r->endpoint[side]) == -1) {
		evbuffer_free(x->in);
		x->in = NULL;
		return (-1);
	}
	x->conn.exchange = x;
	evtimer_assign(&x->timer, base, exchange_timeout, x);
	return (0);
}

/*
 * The exchange is over: close (but for an answer whole on an exchange
 * whose owner keeps the connection, x->keep), then tell the owner, who
 * may start anew or free x: nothing here touches x after.
 */
static void
finish(struct exchange *x, const char *why)
{
	evtimer_del(&x->timer);
	if (!x->keep || why != NULL)
		conn_close(&x->conn);
	x->busy = 0;
	x->done(x, why);
}

static void
exchange_timeout(evutil_socket_t fd, short what, void *arg)
{
	(void)fd;
	(void)what;
	finish(arg, "no whole answer within the handshake deadline");
}

/*
 * Dial (path, if not NULL, else the endpoint's own address) and send the
 * request; parse and done are the owner's, set beforehand.
 */
void
exchange_start(struct exchange *x, const char *path, const uint8_t *rq,
    size_t len)
{
	struct timeval	 tv;
	int		 rv;

	x->busy = 1;
	evbuffer_drain(x->in, evbuffer_get_length(x->in));
	evbuffer_drain(x->conn.out, evbuffer_get_length(x->conn.out));
	if (evbuffer_add(x->conn.out, rq, len) == -1) {
		finish(x, "out of memory");
		return;
	}
	timeval_ms(&tv, settings.handshake_timeout_ms);
	evtimer_add(&x->timer, &tv);
	x->conn.path = path;
	if ((rv = conn_dial(&x->conn)) == -1)
		finish(x, conn_error(&x->conn));
	else if (rv == 0)
		(void)conn_start(&x->conn);
}

/* Stop what is under way, telling nobody. */
static void
exchange_cancel(struct exchange *x)
{
	evtimer_del(&x->timer);
	conn_close(&x->conn);
	x->busy = 0;
}

void
exchange_free(struct exchange *x)
{
	exchange_cancel(x);
	conn_free(&x->conn);
	if (x->in != NULL)
		evbuffer_free(x->in);
	x->in = NULL;
}

/* The connection is up: the request goes with the next write event. */
static int
exchange_conn_ready(struct conn *c)
{
	conn_update(c);
	return (0);
}

static int
exchange_conn_failed(struct conn *c, const char *what)
{
	char	 why[256];

	snprintf(why, sizeof(why), "%s: %s", what, conn_error(c));
	finish(c->exchange, why);
	return (-1);
}

/* Readiness: write what is left of the request, read the answer. */
static void
exchange_event(struct conn *c, short what)
{
	struct exchange	*x = c->exchange;
	const char	*why = NULL;
	uint8_t		 buf[EXCHANGE_READ];
	ssize_t		 n;
	int		 done;

	(void)what;
	if (evbuffer_get_length(c->out) > 0) {
		if (c->io.transport->write_buffer(&c->io, c->out) == IO_ERROR) {
			finish(x, conn_error(c));
			return;
		}
		conn_update(c);
	}
	for (;;) {
		n = conn_read_parked(c, buf, sizeof(buf));
		if (n == IO_WANT_READ || n == IO_WANT_WRITE)
			return;
		if (n == IO_ERROR) {
			finish(x, conn_error(c));
			return;
		}
		if (n == 0) {
			finish(x, "it closed before its answer was whole");
			return;
		}
		if (evbuffer_get_length(x->in) + (size_t)n >
		    EXCHANGE_BUFFERED || evbuffer_add(x->in, buf,
		    (size_t)n) == -1) {
			finish(x, "protocol error: a frame longer than the "
			    "protocol allows");
			return;
		}
		if ((done = x->parse(x, &why)) != 0) {
			finish(x, done == 1 ? NULL : why);
			return;
		}
	}
}
