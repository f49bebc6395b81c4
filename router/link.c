/* SPDX-License-Identifier: ISC */

/*
 * A mirror's link to another dsroute (peer=router): every --link-poll the
 * router dials it, asks ListRuntimes (docs/extension.md) and reads the
 * answer whole; runtimes new to the listing get a record and appear in
 * the mirror, runtimes it no longer names disappear.  A tool's command
 * for one of them dials the same endpoint with SelectRuntime in front
 * (session.c), so the other router judges it under its own ACL.
 *
 * One listing at a time, each an exchange (exchange.c): a fresh
 * connection, bounded by the handshake deadline.  A router that cannot
 * be reached, or refuses the listing, is said once until it answers
 * again.  A runtime that a listing lacks, or that a failed listing could
 * not name, keeps its record and its stand-in for --link-grace
 * (runtime.c): a router that restarts lists nothing at first, and the
 * stand-in's pid is what tools were given.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
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

struct link {
	struct route		*route;
	int			 side;		/* the peer=router endpoint */
	struct exchange		 x;
	struct event		 timer;		/* the next listing */
	uint64_t		 generation;	/* of the listing under way */
	int			 down;		/* said that it failed */
	int			 listed;	/* entries in this listing */
	struct ext_runtime	 entry;
};

static void	 link_poll(evutil_socket_t, short, void *);
static int	 read_answer(struct exchange *, const char **);
static void	 link_end(struct exchange *, const char *);

/* Start the link of a route's mirror to the router on side. */
int
link_start(struct route *r, int side, char *err, size_t len)
{
	struct link	*l;
	struct timeval	 tv;

	if ((l = calloc(1, sizeof(*l))) == NULL ||
	    exchange_init(&l->x, r, side) == -1) {
		free(l);
		snprintf(err, len, "out of memory");
		return (-1);
	}
	l->route = r;
	l->side = side;
	l->x.parse = read_answer;
	l->x.done = link_end;
	l->x.arg = l;
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

/* Time for a listing. */
static void
link_poll(evutil_socket_t fd, short what, void *arg)
{
	struct link	*l = arg;
	uint8_t		 rq[EXT_LIST_LEN];

	(void)fd;
	(void)what;
	if (draining || l->x.busy)
		return;
	l->generation++;
	l->listed = 0;
	ext_list_request(rq);
	exchange_start(&l->x, NULL, rq, sizeof(rq));
}

/*
 * Read what the answer holds so far.  Return 1 when the listing is whole,
 * 0 for more, -1 with the reason in *why.
 */
static int
read_answer(struct exchange *x, const char **why)
{
	static char	 reason[128];
	struct link	*l = x->arg;
	const uint8_t	*data;
	size_t		 have, used;
	uint32_t	 count, hresult;

	for (;;) {
		have = evbuffer_get_length(x->in);
		if (have == 0)
			return (0);
		if ((data = evbuffer_pullup(x->in, have < IPC_MESSAGE_MAX ?
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
		evbuffer_drain(x->in, used);
	}
}

/*
 * The listing is over: whole (why NULL), or failed.  Close, settle the
 * records, and poll again later.
 */
static void
link_end(struct exchange *x, const char *why)
{
	struct link	*l = x->arg;
	const char	*name = l->route->endpoint[l->side].name;

	if (why == NULL) {
		if (l->down)
			log_info("%s: the linked router answers again; it "
			    "lists %d runtimes", name, l->listed);
		l->down = 0;
		runtime_link_sweep(l->route, l->generation);
	} else {
		if (!l->down)
			log_warning("%s: cannot list the linked router's "
			    "runtimes: %s; trying every %.1fs", name, why,
			    settings.link_poll_ms / 1000.0);
		l->down = 1;
		/* A listing of none: what it listed waits out the grace. */
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
	exchange_free(&l->x);
	free(l);
	r->link = NULL;
}
