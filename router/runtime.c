/* SPDX-License-Identifier: ISC */

/*
 * Runtimes that dial us, known by the cookie of their advertise.  A
 * runtime keeps at most one idle connection open to a port and opens the
 * next one only after a command has taken it; we keep at most one parked
 * per cookie (a newer one replaces the older) and notice when a parked
 * connection dies.
 *
 * Tools are served by one "current" runtime, so that a StopTracing reaches
 * the process the CollectTracing went to.  While the current runtime is
 * busy with a command its next connection is awaited; once it is gone,
 * the runtime that advertised most recently becomes current.
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
#include "router/acl.h"
#include "router/engine.h"
#include "router/ext.h"
#include "router/metrics.h"
#include "router/settings.h"
#include "transports/transport.h"

#define RECONNECT_GRACE_MS	1000

static void	 runtime_parked_event(struct conn *, short);
static void	 link_relisted(struct runtime *, const struct ext_runtime *,
		    uint64_t);
static const struct acl_runtime *acl_runtime_of(const struct runtime *,
		    struct acl_runtime *);

/* What a parked connection tells its record: a byte, or its end. */
const struct conn_owner parked_conn_owner = {
	NULL, NULL, runtime_parked_event
};

static struct runtime *
runtime_find(struct route *r, const uint8_t *cookie)
{
	struct runtime	*rt;

	TAILQ_FOREACH(rt, &r->runtimes, entry) {
		if (memcmp(rt->advertise.cookie, cookie, IPC_COOKIE_LEN) == 0)
			return (rt);
	}
	return (NULL);
}

/*
 * A runtime the router dials for each tool, with no parked connection: a
 * linked router's, or one found by its socket.
 */
static int
dialled(const struct runtime *rt)
{
	return (rt->linked || rt->path != NULL);
}

/*
 * Whether rt is a runtime that dials us, with nothing open to it now (an
 * errand runs on its parked connection: none without one).
 */
static int
away(const struct runtime *rt)
{
	return (rt->parked.io.fd == -1 && rt->active == 0 && !dialled(rt));
}

/*
 * How long a runtime that dials us may stay away after its last command
 * before the timer forgets it: the backend wait, and never less than a
 * reconnect takes.
 */
static int
away_ms(void)
{
	return (settings.backend_wait_ms > RECONNECT_GRACE_MS ?
	    settings.backend_wait_ms : RECONNECT_GRACE_MS);
}

/*
 * Whether the tools of the endpoint on tool_side may reach the runtime:
 * its app=, cmdline= and found=, if any, name it (which needs its
 * ProcessInfo).
 */
int
runtime_reachable(const struct runtime *rt, int tool_side)
{
	struct acl_runtime	 ar;

	return (acl_runtime_allowed(rt->route->endpoint[tool_side].policy,
	    acl_runtime_of(rt, &ar)));
}

/* The runtime as app=, cmdline= and found= see it, or NULL if unknown. */
static const struct acl_runtime *
acl_runtime_of(const struct runtime *rt, struct acl_runtime *ar)
{
	if (rt == NULL || rt->info == NULL)
		return (NULL);
	ar->app = rt->app;
	ar->cmdline = rt->info->cmdline;
	ar->found = rt->found;
	return (ar);
}

/*
 * Whether the route must learn each runtime's ProcessInfo: for a mirror,
 * for app=, and once it has been asked for a listing, so that a runtime
 * that dials later is in the next one.
 */
static int
wants_info(const struct route *r)
{
	return (r->mirror != NULL || r->listed ||
	    acl_names_runtimes(r->endpoint[SIDE_LOCAL].policy) ||
	    acl_names_runtimes(r->endpoint[SIDE_REMOTE].policy));
}

/*
 * The route's runtime of that cookie as app=, cmdline= and found= see
 * it, or NULL while its ProcessInfo is not known.
 */
const struct acl_runtime *
runtime_acl(struct route *r, const uint8_t *cookie, struct acl_runtime *ar)
{
	return (acl_runtime_of(runtime_find(r, cookie), ar));
}

/* Whether the runtime of that cookie is gone, or was never known. */
static int
runtime_gone(struct route *r, const uint8_t *cookie)
{
	struct runtime	*rt = runtime_find(r, cookie);

	return (rt == NULL || rt->gone);
}

static void
runtime_free(struct runtime *rt)
{
	struct route	*r = rt->route;

	if (r->current == rt)
		r->current = NULL;
	TAILQ_REMOVE(&r->runtimes, rt, entry);
	mirror_runtime_gone(rt);
	resume_forget(rt);
	errand_forget(rt);
	infocache_forget(rt);
	conn_free(&rt->parked);
	free(rt->info);
	free(rt->where);
	free(rt->path);
	free(rt);
}

void
runtime_name(const struct runtime *rt, char *buf, size_t len)
{
	char	 cookie[33];

	ipc_cookie_hex(rt->advertise.cookie, cookie);
	snprintf(buf, len, "runtime pid %" PRIu64 " (cookie %s)",
	    rt->advertise.pid, cookie);
}

/* A runtime new to the route has advertised itself on conn c. */
static void
advertise_line(const struct runtime *rt, const struct conn *c)
{
	struct log_rec	 r;
	char		 name[96], cookie[33];

	if (!log_begin(&r, LL_INFO, "runtime.advertise"))
		return;
	runtime_name(rt, name, sizeof(name));
	ipc_cookie_hex(rt->advertise.cookie, cookie);
	log_say(&r, "%s connected on %s", name, c->io.endpoint->name);
	log_str(&r, "route", rt->route->name, LF_JSON);
	log_str(&r, "endpoint", c->io.endpoint->name, LF_JSON);
	log_u64(&r, "runtime_pid", rt->advertise.pid, LF_JSON);
	log_str(&r, "cookie", cookie, LF_JSON);
	log_end(&r);
}

/* Count the parked connections of every route, and those of c's peer. */
static void
count_parked(const struct conn *c, int *total, int *peer)
{
	struct route	*r;
	struct runtime	*rt;

	*total = *peer = 0;
	TAILQ_FOREACH(r, &routes, entry) {
		TAILQ_FOREACH(rt, &r->runtimes, entry) {
			if (rt->parked.io.fd == -1)
				continue;
			(*total)++;
			*peer += limit_same_peer(&rt->parked, c);
		}
	}
}

/*
 * Whether the conn c may speak for the runtime record rt: a cookie
 * belongs to the peer that first claimed it (its uid and pid, its
 * address, or its certificate), so that whoever learns a runtime's
 * cookie cannot take its place.
 */
static int
claim_holds(const struct runtime *rt, const struct conn *c)
{
	struct peer_key	 k;

	limit_peer_key(c, &k);
	return (k.kind == rt->owner.kind && k.len == rt->owner.len &&
	    memcmp(k.key, rt->owner.key, k.len) == 0 &&
	    c->io.pid == rt->owner_pid);
}

/*
 * Park the runtime conn of a session that just read its advertise, or
 * refuse it with a reason in *why: its cookie is another peer's, or too
 * many runtimes are parked in all or for its peer (--max-runtimes,
 * --max-runtimes-per-peer).  A known runtime reconnecting is never
 * refused for the limits: they are there to keep new cookies from
 * filling the sessions.  Return -1 if refused or out of memory.
 */
int
runtime_park(struct session *s, const char **why)
{
	static struct log_throttle	 throttle;
	static char			 reason[256];
	struct route			*r = s->route;
	struct conn			*c = &s->conn[OTHER_SIDE(s->tool_side)];
	struct runtime			*rt;
	char				 name[96], peer[96];
	int				 total, mine;

	*why = reason;
	limit_peer_name(c, peer, sizeof(peer));
	if ((rt = runtime_find(r, s->advertise.cookie)) != NULL &&
	    !claim_holds(rt, c)) {
		runtime_name(rt, name, sizeof(name));
		snprintf(reason, sizeof(reason), "refused: the cookie is %s's, "
		    "first claimed by another peer (%s now)", name, peer);
		if (log_throttle_pass(&throttle, "refused advertises"))
			log_warning("%s: %s", c->io.endpoint->name, reason);
		return (-1);
	}
	if (rt == NULL) {
		count_parked(c, &total, &mine);
		if (total >= settings.max_runtimes ||
		    mine >= settings.max_runtimes_per_peer) {
			metrics.limits[total >= settings.max_runtimes ?
			    ML_RUNTIMES : ML_RUNTIMES_PER_PEER]++;
			snprintf(reason, sizeof(reason), "refused: %d runtime "
			    "connections %s are parked (%s)", total >=
			    settings.max_runtimes ? total : mine, total >=
			    settings.max_runtimes ? "in all" : "of this peer",
			    total >= settings.max_runtimes ? "--max-runtimes" :
			    "--max-runtimes-per-peer");
			if (log_throttle_pass(&throttle, "refused advertises"))
				log_warning("%s: runtime pid %" PRIu64 " from "
				    "%s: %s", c->io.endpoint->name,
				    s->advertise.pid, peer, reason);
			return (-1);
		}
		if ((rt = calloc(1, sizeof(*rt))) == NULL)
			goto nomem;
		if (conn_init(&rt->parked, &parked_conn_owner, c->side,
		    c->io.endpoint) == -1) {
			free(rt);
			goto nomem;
		}
		rt->route = r;
		rt->advertise = s->advertise;
		limit_peer_key(c, &rt->owner);
		rt->owner_pid = c->io.pid;
		rt->found = EXT_FOUND_ADVERTISE;
		rt->parked.parked_in = rt;
		TAILQ_INSERT_TAIL(&r->runtimes, rt, entry);
		advertise_line(rt, c);
		/* The mirror names it, app= judges it: by what it says. */
		if (wants_info(r))
			errand_want(rt, ERRAND_INFO);
		resume_watch(rt);
	} else if (rt->parked.io.fd != -1) {
		/*
		 * A runtime dials again once it answered: an answer to our
		 * errand may wait on the old connection, unread.
		 */
		if (errand_busy(rt))
			errand_event(rt);
	}
	if (rt->parked.io.fd != -1) {
		runtime_name(rt, name, sizeof(name));
		log_debug("%s: a newer connection replaces the parked one",
		    name);
		conn_close(&rt->parked);
	}
	rt->side = c->side;
	rt->gone = 0;
	rt->last_used = now_ms();
	conn_move(&rt->parked, c);
	conn_update(&rt->parked);
	(void)errand_parked(rt);
	return (0);

nomem:
	snprintf(reason, sizeof(reason), "out of memory");
	return (-1);
}

/*
 * Choose the runtime to serve a tool on tool_side, or NULL to wait for
 * one.  Records of runtimes that are gone, or that have not come back
 * within the backend wait after their last command, are dropped here.
 */
static struct runtime *
runtime_pick(struct route *r, int tool_side, const uint8_t *bound)
{
	struct runtime	*rt, *next, *best = NULL;
	uint64_t	 now = now_ms();

	for (rt = TAILQ_FIRST(&r->runtimes); rt != NULL; rt = next) {
		next = TAILQ_NEXT(rt, entry);
		/* A linked router's runtimes go when it stops listing them. */
		if (away(rt) && (rt->gone || now - rt->last_used >
		    (uint64_t)settings.backend_wait_ms))
			runtime_free(rt);
	}
	/* A tool of the mirror came for one runtime, and waits for it. */
	rt = bound != NULL ? runtime_find(r, bound) : r->current;
	if (bound != NULL && (rt == NULL || rt->gone))
		return (NULL);
	if (rt != NULL && rt->side != tool_side && !rt->gone &&
	    runtime_reachable(rt, tool_side)) {
		if (rt->parked.io.fd != -1 && !errand_busy(rt))
			return (rt);
		/*
		 * A runtime reconnects as soon as its command is done.  Wait
		 * while a command is in flight, or briefly after one; past
		 * that it may have died mid-command, with no parked
		 * connection to tell us.
		 */
		if (rt->active > 0 || errand_busy(rt))
			return (NULL);
		if (now - rt->last_used < RECONNECT_GRACE_MS) {
			route_recheck(r, RECONNECT_GRACE_MS -
			    (int)(now - rt->last_used));
			return (NULL);
		}
	}
	if (bound != NULL)
		return (NULL);
	TAILQ_FOREACH(rt, &r->runtimes, entry) {
		if (rt->side == tool_side || rt->parked.io.fd == -1 ||
		    rt->gone || errand_busy(rt) ||
		    !runtime_reachable(rt, tool_side))
			continue;
		if (best == NULL || rt->last_used >= best->last_used)
			best = rt;
	}
	return (best);
}

/* The session's tool is served by rt from now on. */
static void
pair(struct session *s, struct runtime *rt)
{
	s->runtime = rt;
	s->advertise = rt->advertise;
	s->have_advertise = 1;
	rt->active++;
	rt->last_used = now_ms();
}

/*
 * Hand a parked runtime connection to a tool's session.  Return 1 if the
 * session now has its runtime, 0 if it has to wait, -1 with the reason
 * in *why and the error frame's HRESULT if the runtime serves as many
 * tools as it may, or the one the session is bound to is gone.
 */
int
runtime_take(struct session *s, const char **why, uint32_t *hresult)
{
	struct route	*r = s->route;
	struct runtime	*rt;
	char		 name[96];

	rt = runtime_pick(r, s->tool_side, s->bound ? s->bound_cookie : NULL);
	if (rt == NULL) {
		if (s->bound && runtime_gone(r, s->bound_cookie)) {
			*why = "the runtime this name stood for is gone";
			*hresult = HRESULT_CONN_REFUSED;
			return (-1);
		}
		return (0);
	}
	*hresult = HRESULT_BUSY;
	if (limit_runtime_admit(rt->active, why) == -1)
		return (-1);
	runtime_name(rt, name, sizeof(name));
	if (r->current != rt && !s->bound)
		log_info("%s now serves tools on %s", name,
		    r->endpoint[s->tool_side].name);
	log_debug("session %" PRIu64 ": %s takes the parked connection of "
	    "%s", s->id, s->command, name);
	if (!s->bound)
		r->current = rt;
	conn_move(&s->conn[rt->side], &rt->parked);
	pair(s, rt);
	return (1);
}

/* A session paired with a runtime ended. */
void
runtime_release(struct session *s)
{
	struct runtime	*rt = s->runtime;

	s->runtime = NULL;
	rt->active--;
	rt->last_used = now_ms();
	if (rt->gone && rt->active == 0 && rt->parked.io.fd == -1)
		runtime_free(rt);
	else
		runtime_away(rt);
}

/*
 * rt's last command is done and its connection closed: a live runtime
 * dials again at once.  Nothing may tell us of one that died instead,
 * so unless it is back within the backend wait it is forgotten then (a
 * mirror's stand-in of it with it), not only when a tool next comes.
 */
void
runtime_away(struct runtime *rt)
{
	struct route	*r = rt->route;
	struct timeval	 tv;

	if (!away(rt) || evtimer_pending(&r->away_timer, NULL))
		return;
	timeval_ms(&tv, away_ms() + 1);
	evtimer_add(&r->away_timer, &tv);
}

/* The backend wait of a runtime that went away is over: forget those. */
void
runtime_away_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct route	*r = arg;
	struct runtime	*rt, *next;
	struct timeval	 tv;
	uint64_t	 now = now_ms(), wait = (uint64_t)away_ms(), left;
	uint64_t	 soonest = 0;
	char		 name[96];

	(void)fd;
	(void)what;
	for (rt = TAILQ_FIRST(&r->runtimes); rt != NULL; rt = next) {
		next = TAILQ_NEXT(rt, entry);
		if (!away(rt))
			continue;
		if (now - rt->last_used < wait) {
			left = wait - (now - rt->last_used);
			if (soonest == 0 || left < soonest)
				soonest = left;
			continue;
		}
		runtime_name(rt, name, sizeof(name));
		log_info("%s went away: it did not dial again within %d ms of "
		    "its last command", name, (int)wait);
		runtime_free(rt);
	}
	if (soonest != 0) {
		timeval_ms(&tv, (int)soonest + 1);
		evtimer_add(&r->away_timer, &tv);
	}
}

/*
 * The runtime of a session closed with its command unread.  Unless it has
 * dialled again since (a live runtime does once a command is done), it
 * died: forget it.
 */
void
runtime_lost(struct session *s)
{
	struct runtime	*rt = s->runtime;

	if (rt->parked.io.fd == -1) {
		rt->gone = 1;
		if (rt->route->current == rt)
			rt->route->current = NULL;
	}
	runtime_release(s);
}

/*
 * A parked connection became readable.  A runtime sends nothing on it
 * before a command: this is its end, or a protocol error.
 */
static void
runtime_parked_event(struct conn *c, short what)
{
	struct runtime	*rt = c->parked_in;
	char		 buf[64], name[96];
	ssize_t		 n;

	if (errand_busy(rt)) {
		errand_event(rt);
		return;
	}
	n = conn_read_parked(c, buf, sizeof(buf));
	if (n == IO_WANT_READ || n == IO_WANT_WRITE)
		return;
	runtime_name(rt, name, sizeof(name));
	if (n > 0)
		log_warning("%s: protocol error: bytes on a parked connection",
		    name);
	else if (n == IO_ERROR)
		log_info("%s went away: %s", name, conn_error(c));
	else
		log_info("%s went away", name);
	rt->gone = 1;
	conn_close(c);
	if (rt->active == 0)
		runtime_free(rt);
	else if (rt->route->current == rt)
		rt->route->current = NULL;
}

/* Close every parked runtime connection of a route. */
void
runtime_drop_all(struct route *r)
{
	struct runtime	*rt, *next;

	for (rt = TAILQ_FIRST(&r->runtimes); rt != NULL; rt = next) {
		next = TAILQ_NEXT(rt, entry);
		conn_close(&rt->parked);
		rt->gone = 1;
		if (rt->active == 0)
			runtime_free(rt);
	}
}

/*
 * The router's ProcessInfo came back, or did not (errand.c).  A runtime
 * older than .NET 6 knows only ProcessInfo: it is asked that next.  What
 * it says of itself must agree with its advertise: the cookie is what
 * the record is known by, and the pid is what the judge saw; a runtime
 * that says otherwise is served as before but not mirrored.
 */
void
runtime_info_answer(struct runtime *rt, enum errand_kind kind,
    enum errand_result result, const uint8_t *reply, size_t len)
{
	struct process_info	*pi;
	uint32_t		 hresult;
	char			 name[96];
	int			 rv;

	runtime_name(rt, name, sizeof(name));
	if (result != ERRAND_ANSWERED) {
		if (++rt->info_tries < 3) {
			log_info("%s did not answer the router's ProcessInfo "
			    "(%s); asking again on its next connection", name,
			    result == ERRAND_TIMEOUT ? "no answer in time" :
			    result == ERRAND_CLOSED ? "it closed" :
			    "out of memory");
			errand_want(rt, kind);
		} else
			log_warning("%s did not answer the router's "
			    "ProcessInfo %d times; not mirrored", name,
			    rt->info_tries);
		return;
	}
	if ((pi = calloc(1, sizeof(*pi))) == NULL) {
		log_error("%s: out of memory; not mirrored", name);
		return;
	}
	rv = ipc_process_info_parse(reply, len, kind == ERRAND_INFO, pi,
	    &hresult);
	if (rv == 1 && kind == ERRAND_INFO &&
	    hresult == HRESULT_UNKNOWN_COMMAND) {
		/* Tools that ask it get the same answer from the record. */
		infocache_keep(rt, 1, reply, len);
		free(pi);
		errand_want(rt, ERRAND_INFO1);
		return;
	}
	if (rv != 0) {
		if (rv == 1)
			log_warning("%s refused the router's ProcessInfo "
			    "(0x%08" PRIx32 "); not mirrored", name, hresult);
		else
			log_warning("%s: protocol error: a malformed "
			    "ProcessInfo answer; not mirrored", name);
		free(pi);
		return;
	}
	if (memcmp(pi->cookie, rt->advertise.cookie, IPC_COOKIE_LEN) != 0 ||
	    pi->pid != rt->advertise.pid) {
		log_warning("%s: its ProcessInfo says pid %" PRIu64 "%s, not "
		    "what it advertised; not mirrored", name, pi->pid,
		    memcmp(pi->cookie, rt->advertise.cookie,
		    IPC_COOKIE_LEN) != 0 ? " and another cookie" : "");
		free(pi);
		return;
	}
	free(rt->info);
	rt->info = pi;
	ipc_process_info_name(pi, rt->app, sizeof(rt->app));
	infocache_keep(rt, kind == ERRAND_INFO ? 1 : 0, reply, len);
	mirror_runtime_known(rt);
}

/*
 * The record of the runtime a tool's command would reach, taking nothing:
 * the one the session is bound to, or the one serving the route's tools
 * where runtimes dial in, while it is known to be alive (parked, or in
 * use); NULL if the router cannot tell which (a dir: or proc: endpoint
 * picks one at each dial) or knows none.
 */
struct runtime *
runtime_serving(struct session *s)
{
	struct route	*r = s->route;
	struct runtime	*rt;

	if (s->bound)
		rt = runtime_find(r, s->bound_cookie);
	else if (r->endpoint[OTHER_SIDE(s->tool_side)].role == ROLE_LISTEN)
		rt = r->current;
	else
		return (NULL);
	if (rt == NULL || rt->gone || rt->side == s->tool_side ||
	    !runtime_reachable(rt, s->tool_side))
		return (NULL);
	if (!dialled(rt) && rt->parked.io.fd == -1 && rt->active == 0)
		return (NULL);
	return (rt);
}

/*
 * Answer ListRuntimes: a frame for each runtime of the route whose
 * ProcessInfo is known, then the end.  One not known yet is asked, to be
 * listed next time.  Return how many were listed, or -1 if out of
 * memory.
 */
int
runtime_list(struct route *r, int tool_side, struct evbuffer *out)
{
	static uint8_t		 frame[IPC_MESSAGE_MAX];
	static struct ext_runtime er;
	struct endpoint		*ep = &r->endpoint[OTHER_SIDE(tool_side)];
	struct runtime		*rt;
	uint8_t			 end[EXT_END_LEN];
	char			 err[128];
	size_t			 n;
	int			 count = 0;

	r->listed = 1;
	/* Runtimes found by their sockets: those asked now, next time. */
	if (ep->role == ROLE_CONNECT && ep->transport->find != NULL &&
	    found_start(r, OTHER_SIDE(tool_side), 0, err, sizeof(err)) == 0)
		found_scan(r);

	TAILQ_FOREACH(rt, &r->runtimes, entry) {
		/* One its own link lists not may be gone: not ours to list. */
		if (rt->side == tool_side || rt->gone || rt->unlisted != 0)
			continue;
		if (rt->info == NULL) {
			if (!dialled(rt) && rt->info_tries < 3 &&
			    !errand_due(rt, ERRAND_INFO) &&
			    !errand_due(rt, ERRAND_INFO1) &&
			    rt->errand != ERRAND_INFO &&
			    rt->errand != ERRAND_INFO1)
				errand_want(rt, ERRAND_INFO);
			continue;
		}
		if (!runtime_reachable(rt, tool_side))
			continue;
		memset(&er, 0, sizeof(er));
		memcpy(er.cookie, rt->advertise.cookie, IPC_COOKIE_LEN);
		er.pid = rt->advertise.pid;
		er.found = rt->found;
		er.hops = rt->hops;
		snprintf(er.app, sizeof(er.app), "%s", rt->app);
		snprintf(er.cmdline, sizeof(er.cmdline), "%s",
		    rt->info->cmdline);
		snprintf(er.os, sizeof(er.os), "%s", rt->info->os);
		snprintf(er.arch, sizeof(er.arch), "%s", rt->info->arch);
		snprintf(er.version, sizeof(er.version), "%s",
		    rt->info->version);
		snprintf(er.where, sizeof(er.where), "%s", rt->linked ?
		    rt->where : r->endpoint[rt->side].name);
		if ((n = ext_entry_build(frame, sizeof(frame), &er)) == 0 ||
		    evbuffer_add(out, frame, n) == -1)
			return (-1);
		count++;
	}
	ext_end_build(end, (uint32_t)count);
	if (evbuffer_add(out, end, sizeof(end)) == -1)
		return (-1);
	return (count);
}

/*
 * A tool came for one runtime the router dials (a linked router's, or
 * one found by its socket): count it on that runtime.  Return 1, or -1
 * with the reason and the error frame's HRESULT if the runtime is gone
 * or serves as many tools as it may.
 */
int
runtime_take_linked(struct session *s, const char **why, uint32_t *hresult)
{
	struct runtime	*rt;

	if (runtime_gone(s->route, s->bound_cookie)) {
		*why = "the runtime this name stood for is gone";
		*hresult = HRESULT_CONN_REFUSED;
		return (-1);
	}
	rt = runtime_find(s->route, s->bound_cookie);
	*hresult = HRESULT_BUSY;
	if (limit_runtime_admit(rt->active, why) == -1)
		return (-1);
	pair(s, rt);
	return (1);
}

/* How many runtimes the router dials for each tool, in all. */
static int
count_dialled(void)
{
	struct route	*r;
	struct runtime	*rt;
	int		 n = 0;

	TAILQ_FOREACH(r, &routes, entry) {
		TAILQ_FOREACH(rt, &r->runtimes, entry)
			n += dialled(rt);
	}
	return (n);
}

/*
 * A record for a runtime the router dials, with what it said of itself
 * (pi, its name made safe for a process and a file: it may come from
 * the network), or NULL with a line when --max-runtimes are known or out
 * of memory.  The caller fills in how it is reached.
 */
static struct runtime *
dialled_new(struct route *r, int side, uint8_t found,
    const struct process_info *pi, uint64_t generation)
{
	static struct log_throttle	 throttle;
	struct runtime			*rt;

	if (count_dialled() >= settings.max_runtimes) {
		metrics.limits[ML_RUNTIMES]++;
		if (log_throttle_pass(&throttle, "runtimes passed over"))
			log_warning("%s: runtime pid %" PRIu64 " passed over: "
			    "%d runtimes found or listed are known "
			    "(--max-runtimes)", r->endpoint[side].name,
			    pi->pid, settings.max_runtimes);
		return (NULL);
	}
	if ((rt = calloc(1, sizeof(*rt))) == NULL ||
	    (rt->info = malloc(sizeof(*rt->info))) == NULL ||
	    conn_init(&rt->parked, &parked_conn_owner, side,
	    &r->endpoint[side]) == -1) {
		if (rt != NULL)
			free(rt->info);
		free(rt);
		log_error("%s: out of memory; a runtime is passed over",
		    r->endpoint[side].name);
		return (NULL);
	}
	*rt->info = *pi;
	rt->route = r;
	rt->side = side;
	rt->found = found;
	rt->seen = generation;
	rt->last_used = now_ms();
	memcpy(rt->advertise.cookie, pi->cookie, IPC_COOKIE_LEN);
	rt->advertise.pid = pi->pid;
	rt->parked.parked_in = rt;
	ipc_process_info_name(rt->info, rt->app, sizeof(rt->app));
	return (rt);
}

/* The record is complete: keep it, say so, and show it. */
static void
dialled_add(struct runtime *rt, const char *how)
{
	char	 name[96];

	TAILQ_INSERT_TAIL(&rt->route->runtimes, rt, entry);
	runtime_name(rt, name, sizeof(name));
	log_info("%s (%s) is %s", name, rt->app, how);
	mirror_runtime_known(rt);
}

/*
 * A runtime the link lists again, in the listing numbered generation:
 * back after a listing that lacked it (its router restarted, or could
 * not be reached), it is bound to the record, stand-in and names it had.
 */
static void
link_relisted(struct runtime *rt, const struct ext_runtime *er,
    uint64_t generation)
{
	char	 name[96], *where;

	rt->seen = generation;
	rt->hops = (uint8_t)(er->hops + 1);
	if (strcmp(rt->where, er->where) != 0 &&
	    (where = strdup(er->where)) != NULL) {
		free(rt->where);
		rt->where = where;
	}
	/* A runtime resumed says more of itself: what was kept is old. */
	if (strcmp(rt->info->cmdline, er->cmdline) != 0) {
		snprintf(rt->info->cmdline, sizeof(rt->info->cmdline), "%s",
		    er->cmdline);
		infocache_forget(rt);
	}
	if (rt->unlisted == 0)
		return;
	rt->unlisted = 0;
	runtime_name(rt, name, sizeof(name));
	log_info("%s (%s) is listed by %s again; it keeps its record and its "
	    "stand-in", name, rt->app, rt->route->endpoint[rt->side].name);
}

/*
 * The linked router on side listed a runtime (link.c), in the listing
 * numbered generation.  A new one gets a record, and the mirror shows
 * it; a runtime listed through LINK_HOPS_MAX routers or more is taken
 * for a loop of links.
 */
void
runtime_link_seen(struct route *r, int side, const struct ext_runtime *er,
    uint64_t generation)
{
	static struct log_throttle	 throttle;
	struct process_info		 pi;
	struct runtime			*rt;
	char				 how[320];

	if ((rt = runtime_find(r, er->cookie)) != NULL) {
		if (rt->linked)
			link_relisted(rt, er, generation);
		return;
	}
	if (er->hops + 1 >= LINK_HOPS_MAX) {
		if (log_throttle_pass(&throttle, "listed runtimes passed over"))
			log_warning("%s: runtime pid %" PRIu64 " is listed "
			    "through %d routers: a loop of links? passed over",
			    r->endpoint[side].name, er->pid, er->hops + 1);
		return;
	}
	memset(&pi, 0, sizeof(pi));
	pi.pid = er->pid;
	memcpy(pi.cookie, er->cookie, IPC_COOKIE_LEN);
	snprintf(pi.cmdline, sizeof(pi.cmdline), "%s", er->cmdline);
	snprintf(pi.os, sizeof(pi.os), "%s", er->os);
	snprintf(pi.arch, sizeof(pi.arch), "%s", er->arch);
	snprintf(pi.assembly, sizeof(pi.assembly), "%s", er->app);
	snprintf(pi.version, sizeof(pi.version), "%s", er->version);
	if ((rt = dialled_new(r, side, EXT_FOUND_LINK, &pi,
	    generation)) == NULL)
		return;
	if ((rt->where = strdup(er->where)) == NULL) {
		log_error("%s: out of memory; a listed runtime is passed over",
		    r->endpoint[side].name);
		conn_free(&rt->parked);
		free(rt->info);
		free(rt);
		return;
	}
	rt->linked = 1;
	rt->hops = (uint8_t)(er->hops + 1);
	snprintf(how, sizeof(how), "listed by %s, where it is on %s",
	    r->endpoint[side].name, rt->where);
	dialled_add(rt, how);
}

/*
 * A scan of the dir: or proc: endpoint found the socket at path with
 * start time key: its runtime's record, if it is known already.
 */
struct runtime *
runtime_found_known(struct route *r, const char *path, uint64_t key)
{
	struct runtime	*rt;

	TAILQ_FOREACH(rt, &r->runtimes, entry) {
		if (rt->path != NULL && rt->key == key && !rt->gone &&
		    strcmp(rt->path, path) == 0)
			return (rt);
	}
	return (NULL);
}

/*
 * The runtime at path answered its ProcessInfo (found.c): keep it.
 * Return its record, or NULL.
 */
struct runtime *
runtime_found_seen(struct route *r, int side, uint8_t found,
    const char *path, uint64_t key, const struct process_info *pi,
    uint64_t generation)
{
	struct runtime	*rt;
	char		 how[320];

	if ((rt = runtime_find(r, pi->cookie)) != NULL) {
		if (rt->path != NULL)
			rt->seen = generation;
		return (rt->path != NULL ? rt : NULL);
	}
	if ((rt = dialled_new(r, side, found, pi, generation)) == NULL)
		return (NULL);
	if ((rt->path = strdup(path)) == NULL) {
		log_error("%s: out of memory; a runtime found is passed over",
		    r->endpoint[side].name);
		conn_free(&rt->parked);
		free(rt->info);
		free(rt);
		return (NULL);
	}
	rt->key = key;
	snprintf(how, sizeof(how), "found on %s at %s",
	    r->endpoint[side].name, path);
	dialled_add(rt, how);
	return (rt);
}

/*
 * Whether a linked runtime the listing lacks waits for --link-grace: a
 * router that restarted lists nothing until its runtimes come back to
 * it, and one that cannot be reached lists nothing at all, while the
 * stand-ins' pids, which tools were given, should outlive both.
 */
static int
link_grace(struct runtime *rt)
{
	char		 name[96];
	uint64_t	 now = now_ms();

	if (settings.link_grace_ms == 0)
		return (0);
	if (rt->unlisted == 0) {
		rt->unlisted = now;
		runtime_name(rt, name, sizeof(name));
		log_info("%s (%s) is not listed by %s; it keeps its stand-in "
		    "for %.1fs (--link-grace), in case it comes back", name,
		    rt->app, rt->route->endpoint[rt->side].name,
		    settings.link_grace_ms / 1000.0);
	}
	return (now - rt->unlisted < (uint64_t)settings.link_grace_ms);
}

/*
 * The listing, or the scan, numbered generation is over: the runtimes of
 * that kind it did not name are gone, a linked one after --link-grace.
 * One a tool is using goes when the tool is done.
 */
static void
sweep(struct route *r, uint64_t generation, int linked)
{
	struct runtime	*rt, *next;
	char		 name[96];

	for (rt = TAILQ_FIRST(&r->runtimes); rt != NULL; rt = next) {
		next = TAILQ_NEXT(rt, entry);
		if (!dialled(rt) || rt->linked != linked ||
		    rt->seen == generation || rt->gone)
			continue;
		if (linked && link_grace(rt))
			continue;
		runtime_name(rt, name, sizeof(name));
		log_info("%s (%s) is no longer %s %s", name, rt->app,
		    linked ? "listed by" : "found on",
		    r->endpoint[rt->side].name);
		rt->gone = 1;
		if (rt->active == 0)
			runtime_free(rt);
	}
}

void
runtime_link_sweep(struct route *r, uint64_t generation)
{
	sweep(r, generation, 1);
}

void
runtime_found_sweep(struct route *r, uint64_t generation)
{
	sweep(r, generation, 0);
}
