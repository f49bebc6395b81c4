/* SPDX-License-Identifier: ISC */

/*
 * Runtimes found by their sockets (dir:, proc:) kept as records, so that
 * a mirror can show them and ListRuntimes list them.  Each scan of the
 * endpoint (for a mirror every --link-poll, and shortly after the
 * directory changes where the transport can watch it; at each
 * ListRuntimes for a router that lists them) asks each socket it does not know yet for the
 * runtime's ProcessInfo2, on a connection of its own (an exchange), and
 * drops the records of sockets that are gone.  A tool's command for one
 * of them dials that socket (session.c).
 *
 * Tools that name no runtime are served as before: the transport's dial
 * picks one (finder.c).  At most FOUND_PROBES sockets are asked at once,
 * so a directory filled with sockets that never answer costs that many
 * connections a scan, each bounded by the handshake deadline.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/engine.h"
#include "router/ext.h"
#include "router/settings.h"
#include "transports/socket.h"
#include "transports/transport.h"

#define FOUND_PROBES	16
#define FOUND_SETTLE_MS	100	/* after a change, before the scan */

/* A socket asked for its runtime's ProcessInfo. */
struct probe {
	struct finding		*finding;
	struct exchange		 x;
	char			 path[FOUND_PATH_MAX];
	uint64_t		 key;
	int			 v1;		/* asked ProcessInfo, not 2 */
	TAILQ_ENTRY(probe)	 entry;
};

struct finding {
	struct route		*route;
	int			 side;		/* the dir: or proc: endpoint */
	uint8_t			 kind;		/* EXT_FOUND_DIR or _PROC */
	struct event		 timer;		/* a mirror's next scan */
	int			 periodic;
	struct event		 watch;		/* the directory changed */
	int			 watch_fd;	/* -1: rescans alone */
	int			 soon;		/* a scan is due shortly */
	uint64_t		 generation;	/* of the last scan */
	int			 said_error;
	TAILQ_HEAD(, probe)	 probes;
	int			 nprobes;
};

static void	 probe_free(struct probe *);
static void	 found_scan_cb(evutil_socket_t, short, void *);
static void	 found_changed(evutil_socket_t, short, void *);

/*
 * Watch the runtimes found on the route's endpoint on side: scanned every
 * --link-poll if periodic (a mirror's), else at each found_scan().
 */
int
found_start(struct route *r, int side, int periodic, char *err, size_t len)
{
	struct finding	*f;
	struct timeval	 tv;

	if (r->finding != NULL)
		return (0);
	if ((f = calloc(1, sizeof(*f))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	f->route = r;
	f->side = side;
	f->kind = strcmp(r->endpoint[side].transport->name, "proc") == 0 ?
	    EXT_FOUND_PROC : EXT_FOUND_DIR;
	f->periodic = periodic;
	TAILQ_INIT(&f->probes);
	evtimer_assign(&f->timer, base, found_scan_cb, f);
	r->finding = f;
	f->watch_fd = -1;
	if (periodic) {
		timeval_ms(&tv, 0);
		evtimer_add(&f->timer, &tv);
		/* A runtime that starts appears at once, not at a rescan. */
		if (r->endpoint[side].transport->watch != NULL &&
		    (f->watch_fd = r->endpoint[side].transport->watch(
		    &r->endpoint[side])) != -1) {
			event_assign(&f->watch, base, f->watch_fd,
			    EV_READ | EV_PERSIST, found_changed, f);
			event_add(&f->watch, NULL);
		}
	}
	return (0);
}

/* The whole reply: its header's size is there. */
static int
probe_parse(struct exchange *x, const char **why)
{
	const uint8_t	*h;
	size_t		 have = evbuffer_get_length(x->in), size;

	if (have < IPC_HEADER_LEN)
		return (0);
	if ((h = evbuffer_pullup(x->in, IPC_HEADER_LEN)) == NULL) {
		*why = "out of memory";
		return (-1);
	}
	size = ipc_size(h);
	return (have >= size ? 1 : 0);
}

static void
probe_ask(struct probe *p)
{
	uint8_t	 rq[IPC_HEADER_LEN];

	ipc_request(rq, IPC_SET_PROCESS, p->v1 ? IPC_ID_PROCESS_INFO :
	    IPC_ID_PROCESS_INFO2);
	exchange_start(&p->x, p->path, rq, sizeof(rq));
}

/* The socket answered, or did not: a record, or nothing until next time. */
static void
probe_done(struct exchange *x, const char *why)
{
	struct probe		*p = x->arg;
	struct finding		*f = p->finding;
	struct process_info	 pi;
	struct runtime		*rt;
	const uint8_t		*reply;
	size_t			 len = evbuffer_get_length(x->in);
	uint32_t		 hresult;
	int			 rv = -1;

	if (why != NULL) {
		log_debug("%s: %s: no ProcessInfo: %s",
		    f->route->endpoint[f->side].name, p->path, why);
		probe_free(p);
		return;
	}
	if ((reply = evbuffer_pullup(x->in, len)) != NULL)
		rv = ipc_process_info_parse(reply, len, !p->v1, &pi, &hresult);
	if (rv == 1 && !p->v1 && hresult == HRESULT_UNKNOWN_COMMAND) {
		/* A runtime before .NET 6 knows only ProcessInfo. */
		p->v1 = 1;
		probe_ask(p);
		return;
	}
	if (rv == 0) {
		if ((rt = runtime_found_seen(f->route, f->side, f->kind,
		    p->path, p->key, &pi, f->generation)) != NULL)
			infocache_keep(rt, p->v1 ? 0 : 1, reply, len);
	} else
		log_info("%s: %s: %s", f->route->endpoint[f->side].name,
		    p->path, rv == 1 ? "its runtime refused ProcessInfo" :
		    "protocol error: a malformed ProcessInfo answer");
	probe_free(p);
}

static void
probe_free(struct probe *p)
{
	TAILQ_REMOVE(&p->finding->probes, p, entry);
	p->finding->nprobes--;
	exchange_free(&p->x);
	free(p);
}

static int
probing(const struct finding *f, const char *path)
{
	const struct probe	*p;

	TAILQ_FOREACH(p, &f->probes, entry) {
		if (strcmp(p->path, path) == 0)
			return (1);
	}
	return (0);
}

/*
 * Whether a runtime known is still listening at path: a socket file
 * outlives a runtime killed, and then refuses.  A connect it accepts is
 * closed at once, before any byte: a runtime reads the end and waits for
 * the next.  One still connecting counts as there.
 */
static int
listening(struct endpoint *ep, const char *path)
{
	int	 fd, pending;

	if ((fd = ep->transport->dial_found(ep, path, &pending)) == -1)
		return (errno != ECONNREFUSED && errno != ENOENT);
	evutil_closesocket(fd);
	return (1);
}

/*
 * Scan the endpoint: sockets known keep their records while their
 * runtimes listen, new ones are asked, and records of sockets gone are
 * dropped.
 */
void
found_scan(struct route *r)
{
	struct finding	*f = r->finding;
	struct endpoint	*ep;
	struct found_list l;
	struct probe	*p;
	struct runtime	*rt;
	int		 i;

	if (f == NULL || draining)
		return;
	ep = &r->endpoint[f->side];
	memset(&l, 0, sizeof(l));
	if (ep->transport->find(ep, &l) == -1) {
		if (!f->said_error)
			log_warning("%s: cannot look for runtimes: %s",
			    ep->name, strerror(errno));
		f->said_error = 1;
		found_free(&l);
		return;
	}
	f->said_error = 0;
	f->generation++;
	for (i = 0; i < l.n; i++) {
		if ((rt = runtime_found_known(r, l.v[i].path,
		    l.v[i].key)) != NULL) {
			if (rt->active > 0 || listening(ep, rt->path))
				rt->seen = f->generation;
			continue;
		}
		if (probing(f, l.v[i].path) || f->nprobes >= FOUND_PROBES)
			continue;
		if ((p = calloc(1, sizeof(*p))) == NULL ||
		    exchange_init(&p->x, r, f->side) == -1) {
			free(p);
			log_error("%s: out of memory; a runtime is not asked",
			    ep->name);
			break;
		}
		p->finding = f;
		p->key = l.v[i].key;
		snprintf(p->path, sizeof(p->path), "%s", l.v[i].path);
		p->x.parse = probe_parse;
		p->x.done = probe_done;
		p->x.arg = p;
		TAILQ_INSERT_TAIL(&f->probes, p, entry);
		f->nprobes++;
		probe_ask(p);
	}
	found_free(&l);
	runtime_found_sweep(r, f->generation);
}

/*
 * Names came or went where the runtimes are: scan shortly, once however
 * many changes come meanwhile.
 */
static void
found_changed(evutil_socket_t fd, short what, void *arg)
{
	struct finding	*f = arg;
	struct timeval	 tv;

	(void)what;
	platform_dir_watch_drain(fd);
	if (f->soon)
		return;
	f->soon = 1;
	timeval_ms(&tv, FOUND_SETTLE_MS);
	evtimer_add(&f->timer, &tv);
}

/* A mirror's scan is due: scan, and again after --link-poll. */
static void
found_scan_cb(evutil_socket_t fd, short what, void *arg)
{
	struct finding	*f = arg;
	struct timeval	 tv;

	(void)fd;
	(void)what;
	f->soon = 0;
	found_scan(f->route);
	if (!draining) {
		timeval_ms(&tv, settings.link_poll_ms);
		evtimer_add(&f->timer, &tv);
	}
}

void
found_stop(struct route *r)
{
	struct finding	*f = r->finding;

	if (f == NULL)
		return;
	evtimer_del(&f->timer);
	if (f->watch_fd != -1) {
		event_del(&f->watch);
		close(f->watch_fd);
	}
	while (!TAILQ_EMPTY(&f->probes))
		probe_free(TAILQ_FIRST(&f->probes));
	free(f);
	r->finding = NULL;
}
