/* SPDX-License-Identifier: ISC */

/*
 * Warm connections: a connect endpoint that reaches another dsroute
 * (peer=router) keeps warm= connections to it already made, handshaken
 * and announced, so that a tool's command costs one round trip to the
 * other router instead of a TCP handshake, a TLS one and the request.
 *
 * A spare is made by an exchange (exchange.c) whose request is
 * WarmConnection (docs/extension.md) and whose answer says how long the
 * other router keeps a silent connection (its --silent-timeout); the
 * spare is replaced at two thirds of that, before it is cut.  A session
 * that dials the endpoint takes a spare instead (warm_take()), and a new
 * one is made behind it.  A spare that reads anything, or its end, is
 * dropped and replaced after a pause that doubles while dials fail.  An
 * answer that refuses WarmConnection (an older dsroute, or a runtime
 * after all) turns the pool off, with one line: sessions dial as before.
 *
 * Nothing else changes: the other router judges the tool's command that
 * follows, with the peer's identity of the handshake, and logs it as it
 * would on a fresh connection.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "router/engine.h"
#include "router/ext.h"
#include "router/settings.h"
#include "transports/transport.h"

#define WARM_RETRY_MS		100	/* the first pause after a failure */
#define WARM_RETRY_MAX_MS	10000
#define WARM_REFRESH_MS		60000	/* when the other side keeps forever */

struct warm_pool;

/* One spare: its hello in flight (x), or ready (conn). */
struct warm {
	struct warm_pool	*pool;
	struct exchange		 x;
	struct conn		 conn;
	uint32_t		 keep_ms;	/* the other side's wait */
	int			 ready;
	struct event		 refresh;
	TAILQ_ENTRY(warm)	 entry;
};

struct warm_pool {
	struct route		*route;
	int			 side;
	int			 off;		/* the other side refused */
	int			 said;		/* ... and the log says so */
	int			 retry_ms;	/* 0 while dials succeed */
	struct event		 retry;
	TAILQ_HEAD(, warm)	 spares;
};

static void	 warm_event(struct conn *, short);

/* What a ready spare's conn tells the pool: any byte, or its end. */
static const struct conn_owner warm_conn_owner = {
	NULL, NULL, warm_event
};

static void	 warm_dial(struct warm *);
static void	 refresh_cb(evutil_socket_t, short, void *);

static void
warm_free(struct warm *w)
{
	struct warm_pool	*p = w->pool;

	TAILQ_REMOVE(&p->spares, w, entry);
	evtimer_del(&w->refresh);
	exchange_free(&w->x);
	conn_free(&w->conn);
	free(w);
}

/* After a failure: try again later, each time twice as late. */
static void
warm_later(struct warm_pool *p)
{
	struct timeval	 tv;

	p->retry_ms = p->retry_ms == 0 ? WARM_RETRY_MS :
	    p->retry_ms * 2 > WARM_RETRY_MAX_MS ? WARM_RETRY_MAX_MS :
	    p->retry_ms * 2;
	timeval_ms(&tv, p->retry_ms);
	evtimer_add(&p->retry, &tv);
}

/* Make spares until the endpoint's warm= are there. */
static void
warm_fill(struct warm_pool *p)
{
	struct endpoint	*ep = &p->route->endpoint[p->side];
	struct warm	*w;
	int		 n = 0;

	if (p->off || draining || evtimer_pending(&p->retry, NULL))
		return;
	TAILQ_FOREACH(w, &p->spares, entry)
		n++;
	while (n++ < ep->warm) {
		if ((w = calloc(1, sizeof(*w))) == NULL ||
		    exchange_init(&w->x, p->route, p->side) == -1 ||
		    conn_init(&w->conn, &warm_conn_owner, p->side, ep) == -1) {
			if (w != NULL) {
				exchange_free(&w->x);
				conn_free(&w->conn);
			}
			free(w);
			log_warning("%s: out of memory for a warm connection",
			    ep->name);
			warm_later(p);
			return;
		}
		w->pool = p;
		evtimer_assign(&w->refresh, base, refresh_cb, w);
		TAILQ_INSERT_TAIL(&p->spares, w, entry);
		warm_dial(w);
	}
}

static void
retry_cb(evutil_socket_t fd, short what, void *arg)
{
	warm_fill(arg);
}

/* A spare's time is up before the other side's: make a new one. */
static void
refresh_cb(evutil_socket_t fd, short what, void *arg)
{
	struct warm	*w = arg;
	struct warm_pool *p = w->pool;

	warm_free(w);
	warm_fill(p);
}

/* Is the answer to WarmConnection whole?  1 yes, 0 more, -1 no such. */
static int
warm_parse(struct exchange *x, const char **why)
{
	struct warm	*w = x->arg;
	uint32_t	 keep, hresult;
	size_t		 len = evbuffer_get_length(x->in);
	int		 rv;

	rv = ext_warm_answer_parse(evbuffer_pullup(x->in, -1), len, &keep,
	    &hresult);
	if (rv == 0)
		return (0);
	if (rv < 0) {
		if (hresult != 0 || len > 0) {
			/* It answered, and not as a router that warms. */
			w->pool->off = 1;
			*why = hresult != 0 ? "it refused WarmConnection" :
			    "its answer to WarmConnection is not a router's";
		} else
			*why = "no answer to WarmConnection";
		return (-1);
	}
	w->keep_ms = keep;
	return (1);
}

/* The hello ended: keep the connection as a spare, or say why not. */
static void
warm_done(struct exchange *x, const char *why)
{
	struct warm		*w = x->arg;
	struct warm_pool	*p = w->pool;
	struct endpoint		*ep = &p->route->endpoint[p->side];
	struct timeval		 tv;
	uint32_t		 keep = w->keep_ms;

	if (why != NULL) {
		if (p->off && !p->said++)
			log_warning("%s: no warm connections: %s (an older "
			    "dsroute?); each tool's command dials it", ep->name,
			    why);
		else if (!p->off)
			log_debug("%s: a warm connection failed: %s", ep->name,
			    why);
		warm_free(w);
		if (!p->off)
			warm_later(p);
		return;
	}
	p->retry_ms = 0;
	conn_move(&w->conn, &x->conn);
	w->ready = 1;
	conn_update(&w->conn);
	/* Two thirds of what the other side waits, to be there first. */
	timeval_ms(&tv, keep > 0 ? (int)(keep / 3 * 2) : WARM_REFRESH_MS);
	evtimer_add(&w->refresh, &tv);
	log_debug("%s: a warm connection is ready (kept %.1fs there)",
	    ep->name, keep / 1000.0);
}

/* Dial a spare and send WarmConnection on it. */
static void
warm_dial(struct warm *w)
{
	uint8_t	 hello[EXT_WARM_LEN];

	ext_warm_request(hello);
	w->x.parse = warm_parse;
	w->x.done = warm_done;
	w->x.arg = w;
	w->x.keep = 1;
	exchange_start(&w->x, NULL, hello, sizeof(hello));
}

/* A ready spare read something, or its end: it is no spare any more. */
static void
warm_event(struct conn *c, short what)
{
	struct warm	*w;
	struct warm_pool *p;
	uint8_t		 b[64];
	ssize_t		 n;

	(void)what;
	w = (struct warm *)((char *)c - offsetof(struct warm, conn));
	p = w->pool;
	n = conn_read_parked(c, b, sizeof(b));
	if (n == IO_WANT_READ || n == IO_WANT_WRITE)
		return;
	log_debug("%s: a warm connection %s", p->route->endpoint[p->side].name,
	    n > 0 ? "sent bytes unasked; dropped" : n == 0 ? "was closed" :
	    conn_error(c));
	warm_free(w);
	warm_later(p);
}

/*
 * Start the spares of the endpoint on side of r, if it has warm=.
 * Return -1 with a reason in err if out of memory.
 */
int
warm_start(struct route *r, int side, char *err, size_t len)
{
	struct warm_pool	*p;

	if (r->endpoint[side].warm <= 0)
		return (0);
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	p->route = r;
	p->side = side;
	TAILQ_INIT(&p->spares);
	evtimer_assign(&p->retry, base, retry_cb, p);
	r->warm[side] = p;
	warm_fill(p);
	return (0);
}

/*
 * A session dials the endpoint on c's side: give c a ready spare instead,
 * and make another.  Return 1 if c has one (open and handshaken), else 0.
 */
int
warm_take(struct route *r, struct conn *c)
{
	struct warm_pool	*p = r->warm[c->side];
	struct warm		*w;

	if (p == NULL)
		return (0);
	TAILQ_FOREACH(w, &p->spares, entry) {
		if (!w->ready)
			continue;
		conn_move(c, &w->conn);
		warm_free(w);
		warm_fill(p);
		return (1);
	}
	return (0);
}

/* Drop every spare (drain, or the end). */
void
warm_stop(struct route *r)
{
	struct warm_pool	*p;
	int			 side;

	for (side = 0; side < 2; side++) {
		if ((p = r->warm[side]) == NULL)
			continue;
		while (!TAILQ_EMPTY(&p->spares))
			warm_free(TAILQ_FIRST(&p->spares));
		evtimer_del(&p->retry);
		free(p);
		r->warm[side] = NULL;
	}
}
