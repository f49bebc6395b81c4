/* SPDX-License-Identifier: ISC */

/*
 * A mirror's link to another dsroute (peer=router): every --link-poll the
 * router dials it, asks ListRuntimes (docs/extension.md) and reads the
 * answer whole; runtimes new to the listing get a record and appear in
 * the mirror, runtimes it no longer names disappear.  A tool's command
 * for one of them dials the same endpoint with SelectRuntime in front
 * (session.c), so the other router judges it under its own ACL.
 *
 * One listing at a time, each on a fresh connection, bounded by the
 * handshake deadline.  A router that cannot be reached, or refuses the
 * listing, is said once until it answers again; its runtimes are kept
 * for LINK_MISSES_MAX polls, then dropped.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "router/engine.h"
#include "router/ext.h"
#include "router/log.h"
#include "router/settings.h"
#include "router/util.h"
#include "transports/transport.h"

#define LINK_MISSES_MAX		3
#define LINK_ANSWER_MAX		(16 * 1024 * 1024)	/* bytes of a listing */

struct link {
	struct route		*route;
	int			 side;		/* the peer=router endpoint */
	struct conn		 conn;
	struct event		 timer;		/* next poll, or the deadline */
	struct evbuffer		*in;
	uint64_t		 generation;	/* of the listing under way */
	int			 polling;
	int			 misses;	/* polls in a row that failed */
	int			 down;		/* said that it failed */
	int			 listed;	/* entries in this listing */
	struct ext_runtime	 entry;
};

static void	 link_poll(evutil_socket_t, short, void *);
static void	 link_end(struct link *, const char *);

/* Start the link of a route's mirror to the router on side. */
int
link_start(struct route *r, int side, char *err, size_t len)
{
	struct link	*l;
	struct timeval	 tv;

	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    (l->in = evbuffer_new()) == NULL ||
	    conn_init(&l->conn, NULL, side, &r->endpoint[side]) == -1) {
		if (l != NULL && l->in != NULL)
			evbuffer_free(l->in);
		free(l);
		snprintf(err, len, "out of memory");
		return (-1);
	}
	l->route = r;
	l->side = side;
	l->conn.link = l;
	evtimer_assign(&l->timer, base, link_poll, l);
	r->link = l;
	timeval_ms(&tv, 0);
	evtimer_add(&l->timer, &tv);
	return (0);
}

static void
schedule(struct link *l, int ms)
{
	struct timeval	 tv;

	timeval_ms(&tv, ms);
	evtimer_add(&l->timer, &tv);
}

/* Time for a listing, or the one under way ran out of time. */
static void
link_poll(evutil_socket_t fd, short what, void *arg)
{
	struct link	*l = arg;

	(void)fd;
	(void)what;
	if (l->polling) {
		link_end(l, "no whole answer within the handshake deadline");
		return;
	}
	if (draining)
		return;
	l->polling = 1;
	l->generation++;
	l->listed = 0;
	evbuffer_drain(l->in, evbuffer_get_length(l->in));
	evbuffer_drain(l->conn.out, evbuffer_get_length(l->conn.out));
	schedule(l, settings.handshake_timeout_ms);
	switch (conn_dial(&l->conn)) {
	case -1:
		link_end(l, conn_error(&l->conn));
		return;
	case 0:
		(void)conn_start(&l->conn);
		return;
	}
}

/* The connection is up: ask for the listing. */
int
link_conn_ready(struct conn *c)
{
	struct link	*l = c->link;
	uint8_t		 rq[EXT_LIST_LEN];

	ext_list_request(rq);
	if (evbuffer_add(c->out, rq, sizeof(rq)) == -1) {
		link_end(l, "out of memory");
		return (-1);
	}
	conn_update(c);
	return (0);
}

int
link_conn_failed(struct conn *c, const char *what)
{
	struct link	*l = c->link;
	char		 why[256];

	snprintf(why, sizeof(why), "%s: %s", what, conn_error(c));
	link_end(l, why);
	return (-1);
}

/*
 * Read what the answer holds so far.  Return 1 when the listing is whole,
 * 0 for more, -1 with the reason in *why.
 */
static int
read_answer(struct link *l, const char **why)
{
	static char	 reason[128];
	const uint8_t	*data;
	size_t		 have, used;
	uint32_t	 count, hresult;

	for (;;) {
		have = evbuffer_get_length(l->in);
		if (have == 0)
			return (0);
		if ((data = evbuffer_pullup(l->in, have < IPC_MESSAGE_MAX ?
		    have : IPC_MESSAGE_MAX)) == NULL) {
			*why = "out of memory";
			return (-1);
		}
		switch (ext_reply_parse(data, have < IPC_MESSAGE_MAX ? have :
		    IPC_MESSAGE_MAX, &used, &l->entry, &count, &hresult)) {
		case EXT_REPLY_MORE:
			return (0);
		case EXT_REPLY_ENTRY:
			runtime_link_seen(l->route, l->side, &l->entry,
			    l->generation);
			l->listed++;
			break;
		case EXT_REPLY_END:
			if (count != (uint32_t)l->listed) {
				*why = "protocol error: the listing's count is "
				    "not its number of entries";
				return (-1);
			}
			return (1);
		case EXT_REPLY_ERROR:
			snprintf(reason, sizeof(reason), "it refused the "
			    "listing: 0x%08" PRIx32 " (%s)%s", hresult,
			    ipc_hresult_name(hresult),
			    hresult == HRESULT_UNKNOWN_COMMAND ? "; is it a "
			    "dsroute, and new enough?" :
			    hresult == HRESULT_ACCESS_DENIED ? "; its ACL must "
			    "give this router the observe role" : "");
			*why = reason;
			return (-1);
		default:
			*why = "protocol error: an answer that is no listing";
			return (-1);
		}
		evbuffer_drain(l->in, used);
	}
}

/* Readiness on the listing's connection. */
void
link_event(struct conn *c, short what)
{
	struct link	*l = c->link;
	const char	*why = NULL;
	uint8_t		 buf[16384];
	ssize_t		 n;
	int		 done;

	(void)what;
	if (evbuffer_get_length(c->out) > 0) {
		if (c->transport->write_buffer(c, c->out) == IO_ERROR) {
			link_end(l, conn_error(c));
			return;
		}
		conn_update(c);
	}
	for (;;) {
		n = c->transport->read(c, buf, sizeof(buf));
		if (n == IO_WANT_READ || n == IO_WANT_WRITE)
			return;
		if (n == IO_ERROR) {
			link_end(l, conn_error(c));
			return;
		}
		if (n == 0) {
			link_end(l, "it closed before the listing was whole");
			return;
		}
		if (evbuffer_get_length(l->in) + (size_t)n > LINK_ANSWER_MAX ||
		    evbuffer_add(l->in, buf, (size_t)n) == -1) {
			link_end(l, "the listing is too long");
			return;
		}
		if ((done = read_answer(l, &why)) != 0) {
			link_end(l, done == 1 ? NULL : why);
			return;
		}
	}
}

/*
 * The listing is over: whole (why NULL), or failed.  Close, settle the
 * records, and poll again later.
 */
static void
link_end(struct link *l, const char *why)
{
	const char	*name = l->route->endpoint[l->side].name;

	conn_close(&l->conn);
	l->polling = 0;
	evtimer_del(&l->timer);
	if (why == NULL) {
		if (l->down)
			log_info("%s: the linked router answers again; it "
			    "lists %d runtimes", name, l->listed);
		l->down = 0;
		l->misses = 0;
		runtime_link_sweep(l->route, l->generation);
	} else {
		if (!l->down)
			log_warning("%s: cannot list the linked router's "
			    "runtimes: %s; trying every %.1fs", name, why,
			    settings.link_poll_ms / 1000.0);
		l->down = 1;
		/* What it listed before stands for a while. */
		if (++l->misses >= LINK_MISSES_MAX)
			runtime_link_sweep(l->route, 0);
	}
	if (!draining)
		schedule(l, settings.link_poll_ms);
}

void
link_stop(struct route *r)
{
	struct link	*l = r->link;

	if (l == NULL)
		return;
	evtimer_del(&l->timer);
	conn_free(&l->conn);
	evbuffer_free(l->in);
	free(l);
	r->link = NULL;
}
