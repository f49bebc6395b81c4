/* SPDX-License-Identifier: ISC */

/*
 * The workstation mirror, dir:PATH,listen: every runtime of the route's
 * other endpoint (that dialled it, found by dir: or proc:, or listed by a
 * linked router) appears in PATH as a local process, so that the
 * tools' own discovery (dotnet-trace ps, collect -p PID, -n NAME) finds
 * it.  The tools need a local process whose pid names the socket, so
 * each runtime gets a stand-in (standin.c), a child process named after
 * the app, and three listening sockets in PATH bound to that runtime:
 *
 *	dotnet-diagnostic-SPID-KEY-socket		ps, -p, -n, counters
 *	dotnet-diagnostic-dsrouter-SPID-KEY-socket	gcdump (see below)
 *	dsroute-NAME-PID-COOKIE-socket			--diagnostic-port
 *
 * SPID is the stand-in's pid and KEY its start time, as a runtime names
 * its own socket.  The client library takes the router's name when it is
 * not older than the plain one, and then accepts events from any pid:
 * without it dotnet-gcdump keeps only events whose pid is SPID, which the
 * runtime's are not.  So the router's name is made second.  The third
 * name is for tools without -p and for scripts: it names the app, its
 * own pid and the first 8 hex digits of its cookie, all of which the
 * runtime reports, none of which depend on the stand-in.
 *
 * A runtime appears once its ProcessInfo2 (its name and command line)
 * is known and disappears with its record (runtime.c): when its parked
 * connection dies or it stays away past the backend wait, when its socket
 * goes (found.c), or when the linked router has not listed it for
 * --link-grace (link.c, runtime.c), so that a stand-in and its pid
 * outlive that router's restart.  Its stand-in's TMPDIR is the mirror's
 * directory, where tools with another TMPDIR look once they read it.
 * Its names go at once and its stand-in STANDIN_GRACE_MS later: a tool
 * lists the names, then reads each process's name and command line, and
 * dotnet-trace ps fails whole (an unhandled InvalidOperationException)
 * when a process it listed is gone by then.  So the names it can still
 * list always lead to a live process.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "platform/standin.h"
#include "router/engine.h"
#include "transports/transport.h"

#define MIRROR_NAMES	3
#define STANDIN_AGAIN	3
#define STANDIN_GRACE_MS 2000		/* from its names' end to its own */

struct mirror_listener {
	struct mirror_entry	*entry;
	struct evconnlistener	*evl;
	struct sockfile		 file;
	char			 name[128];
	char			 path[108];	/* sun_path */
};

/* One runtime as the mirror shows it. */
struct mirror_entry {
	struct mirror		*mirror;
	struct runtime		*runtime;
	uint8_t			 cookie[IPC_COOKIE_LEN];
	struct standin		 standin;
	struct event		 lifeline;	/* EOF: the stand-in ended */
	int			 watched;
	struct event		 grace;		/* its names gone: its end */
	struct mirror_listener	 names[MIRROR_NAMES];
	TAILQ_ENTRY(mirror_entry) entry;	/* on entries, or leaving */
};

struct mirror {
	struct route		*route;
	int			 side;		/* the mirror's endpoint */
	TAILQ_HEAD(, mirror_entry) entries;
	TAILQ_HEAD(, mirror_entry) leaving;	/* names gone, in grace */
};

static void	 mirror_accept(struct evconnlistener *, evutil_socket_t,
		    struct sockaddr *, int, void *);
static void	 standin_ended(evutil_socket_t, short, void *);
static void	 entry_end(evutil_socket_t, short, void *);

/*
 * Start a route's mirror on its endpoint side.  The other endpoint is
 * where runtimes dial in, dir: or proc: (found.c), or another dsroute
 * (peer=router) whose runtimes the link lists.
 */
int
mirror_start(struct route *r, int side, char *err, size_t len)
{
	struct endpoint	*other = &r->endpoint[OTHER_SIDE(side)];
	struct mirror	*m;

	if (other->role != ROLE_LISTEN && other->peer != PEER_ROUTER &&
	    other->transport->find == NULL) {
		snprintf(err, len, "%s: a mirror shows the runtimes that dial "
		    "the router, are found by their sockets or are another "
		    "router's: the other endpoint must listen (,listen), be "
		    "dir: or proc:, or reach a dsroute (,peer=router), not %s",
		    r->endpoint[side].name, other->name);
		return (-1);
	}
	if (other->role == ROLE_LISTEN && other->transport->listen_name !=
	    NULL) {
		snprintf(err, len, "%s: a mirror on both sides: neither has "
		    "runtimes to show", other->name);
		return (-1);
	}
	/* Its own sockets there would be found, and mirrored, in a loop. */
	if (other->transport->find != NULL &&
	    strcmp(other->name, r->endpoint[side].name) == 0) {
		snprintf(err, len, "%s: a mirror cannot show the runtimes of "
		    "the directory it makes its names in", other->name);
		return (-1);
	}
	/* The stand-ins' program, opened before privileges are dropped. */
	if (standin_init(err, len) == -1)
		return (-1);
	if ((m = calloc(1, sizeof(*m))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	m->route = r;
	m->side = side;
	TAILQ_INIT(&m->entries);
	TAILQ_INIT(&m->leaving);
	r->mirror = m;
	if (other->role == ROLE_CONNECT && other->peer == PEER_ROUTER)
		return (link_start(r, OTHER_SIDE(side), err, len));
	if (other->role == ROLE_CONNECT)
		return (found_start(r, OTHER_SIDE(side), 1, err, len));
	return (0);
}

static void
listener_close(struct mirror_entry *e, struct mirror_listener *l)
{
	const struct endpoint	*ep = &e->mirror->route->endpoint[
				    e->mirror->side];

	if (l->evl == NULL)
		return;
	evconnlistener_free(l->evl);
	l->evl = NULL;
	ep->transport->unlisten_name(&l->file);
}

/*
 * A runtime leaves the mirror: its names go now, its stand-in after
 * STANDIN_GRACE_MS (entry_end), or now if it has ended already or the
 * mirror stops (now).
 */
static void
entry_close(struct mirror_entry *e, int now)
{
	struct mirror	*m = e->mirror;
	struct timeval	 tv;
	int		 i;

	/* The tools' names go first, so none finds a stand-in alone. */
	for (i = MIRROR_NAMES - 1; i >= 0; i--)
		listener_close(e, &e->names[i]);
	if (e->watched)
		event_del(&e->lifeline);
	e->watched = 0;
	if (e->runtime != NULL)
		e->runtime->mirrored = NULL;
	e->runtime = NULL;
	TAILQ_REMOVE(&m->entries, e, entry);
	TAILQ_INSERT_TAIL(&m->leaving, e, entry);
	evtimer_assign(&e->grace, base, entry_end, e);
	if (now || e->standin.pid == -1) {
		entry_end(-1, 0, e);
		return;
	}
	timeval_ms(&tv, STANDIN_GRACE_MS);
	evtimer_add(&e->grace, &tv);
}

/* Its grace is over, or there is none: end the stand-in (child.c reaps). */
static void
entry_end(evutil_socket_t fd, short what, void *arg)
{
	struct mirror_entry	*e = arg;

	(void)fd;
	(void)what;
	evtimer_del(&e->grace);
	TAILQ_REMOVE(&e->mirror->leaving, e, entry);
	standin_stop(&e->standin);
	free(e);
}

static int
listener_open(struct mirror_entry *e, struct mirror_listener *l,
    char *err, size_t len)
{
	struct endpoint	*ep = &e->mirror->route->endpoint[e->mirror->side];
	int		 fd;

	l->entry = e;
	if ((fd = ep->transport->listen_name(ep, l->name, l->path,
	    sizeof(l->path), &l->file, err, len)) == -1)
		return (-1);
	l->evl = evconnlistener_new(base, mirror_accept, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (l->evl == NULL) {
		snprintf(err, len, "cannot watch the listener");
		evutil_closesocket(fd);
		ep->transport->unlisten_name(&l->file);
		return (-1);
	}
	return (0);
}

/*
 * A runtime of the route answered the router's ProcessInfo: show it.  A
 * failure is one line, and the runtime is still served the usual way.
 */
void
mirror_runtime_known(struct runtime *rt)
{
	struct mirror		*m = rt->route->mirror;
	struct mirror_entry	*e;
	struct endpoint		*ep;
	char			 what[256], cookie[33], err[256], name[96];
	unsigned long long	 key;
	pid_t			 spid;
	int			 i;

	if (m == NULL || rt->mirrored != NULL || draining)
		return;
	/* The mirror's app= patterns: what its tools may see and reach. */
	if (!runtime_reachable(rt, m->side)) {
		log_debug("%s: not mirrored, app= names other runtimes",
		    rt->app);
		return;
	}
	runtime_name(rt, name, sizeof(name));
	if ((e = calloc(1, sizeof(*e))) == NULL) {
		log_error("%s: out of memory; not mirrored", name);
		return;
	}
	e->mirror = m;
	e->runtime = rt;
	memcpy(e->cookie, rt->advertise.cookie, IPC_COOKIE_LEN);
	e->standin.pid = -1;
	e->standin.fd = -1;
	TAILQ_INSERT_TAIL(&m->entries, e, entry);
	rt->mirrored = e;

	/*
	 * Its command line says what it stands for, and never the app's
	 * own: a stand-in's argv is every local user's to read (ps,
	 * /proc/PID/cmdline), while the runtime lets only its own uid ask
	 * for its command line, which may carry its secrets.  It stays
	 * behind ProcessInfo, on the 0600 names, judged by the ACL.  What
	 * that costs: dotnet-trace ps, which reads /proc/PID/cmdline, shows
	 * these words and not the app's arguments.  No option puts them
	 * back: it would show one user's secrets to all for a column that
	 * ProcessInfo, and dsroute ps (a LIST through a name), give whoever
	 * may see them.
	 */
	snprintf(what, sizeof(what), "[dsroute stand-in for pid %" PRIu64
	    " on %s]", rt->advertise.pid, rt->route->endpoint[rt->side].name);
	/* Its TMPDIR is the names' directory: tools with another find it. */
	ep = &m->route->endpoint[m->side];
	if (standin_start(&e->standin, rt->app, what, ep->transport->name_dir !=
	    NULL ? ep->transport->name_dir(ep) : NULL, err, sizeof(err)) == -1)
		goto fail;
	spid = e->standin.pid;
	event_assign(&e->lifeline, base, e->standin.fd, EV_READ,
	    standin_ended, e);
	event_add(&e->lifeline, NULL);
	e->watched = 1;
	if ((key = standin_start_time(&e->standin)) == 0) {
		snprintf(err, sizeof(err), "cannot read the stand-in's start "
		    "time");
		goto fail;
	}
	ipc_cookie_hex(rt->advertise.cookie, cookie);
	snprintf(e->names[0].name, sizeof(e->names[0].name),
	    "dotnet-diagnostic-%ld-%llu-socket", (long)spid, key);
	snprintf(e->names[1].name, sizeof(e->names[1].name),
	    "dotnet-diagnostic-dsrouter-%ld-%llu-socket", (long)spid, key);
	snprintf(e->names[2].name, sizeof(e->names[2].name),
	    "dsroute-%s-%" PRIu64 "-%.8s-socket", rt->app, rt->advertise.pid,
	    cookie);
	for (i = 0; i < MIRROR_NAMES; i++) {
		if (listener_open(e, &e->names[i], err, sizeof(err)) == -1)
			goto fail;
	}
	log_info("%s (%s) is mirrored as pid %ld on %s; --diagnostic-port "
	    "%s,connect", name, rt->app, (long)spid,
	    m->route->endpoint[m->side].name, e->names[2].path);
	return;

fail:
	log_warning("%s: not mirrored: %s", name, err);
	entry_close(e, 0);
}

/*
 * A stand-in ended while its runtime is still there (killed by someone):
 * its names lead to no process, so they go, and a new stand-in takes its
 * place, STANDIN_AGAIN times in a runtime's life at most, so that one
 * that cannot live is not started in a loop.
 */
static void
standin_ended(evutil_socket_t fd, short what, void *arg)
{
	struct mirror_entry	*e = arg;
	struct runtime		*rt = e->runtime;
	char			 name[96];
	int			 again;

	(void)fd;
	(void)what;
	e->watched = 0;
	runtime_name(rt, name, sizeof(name));
	again = ++rt->standins_ended <= STANDIN_AGAIN;
	log_warning("%s (%s): its stand-in pid %ld ended%s", name, rt->app,
	    (long)e->standin.pid, again ? "; another takes its place" :
	    "; it was replaced too often: not mirrored");
	entry_close(e, 1);
	if (again)
		mirror_runtime_known(rt);
}

/* The runtime's record goes away: so does its stand-in. */
void
mirror_runtime_gone(struct runtime *rt)
{
	struct mirror_entry	*e = rt->mirrored;

	if (e == NULL)
		return;
	log_debug("mirror: the stand-in pid %ld goes with its runtime, in "
	    "%.1fs", (long)e->standin.pid, STANDIN_GRACE_MS / 1000.0);
	entry_close(e, 0);
}

/* A tool connected to a runtime's name: a session bound to it. */
static void
mirror_accept(struct evconnlistener *evl, evutil_socket_t fd,
    struct sockaddr *sa, int salen, void *arg)
{
	struct mirror_listener	*l = arg;
	struct mirror_entry	*e = l->entry;

	(void)evl;
	if (draining) {
		evutil_closesocket(fd);
		return;
	}
	session_accepted(e->mirror->route, e->mirror->side, fd, sa, salen,
	    e->cookie);
}

/*
 * Stop, remove every name and end every stand-in now, those in their
 * grace too: the router is going, and its stand-ins with it.
 */
void
mirror_stop(struct route *r)
{
	struct mirror	*m = r->mirror;

	if (m == NULL)
		return;
	link_stop(r);
	found_stop(r);
	while (!TAILQ_EMPTY(&m->entries))
		entry_close(TAILQ_FIRST(&m->entries), 1);
	while (!TAILQ_EMPTY(&m->leaving))
		entry_end(-1, 0, TAILQ_FIRST(&m->leaving));
	free(m);
	r->mirror = NULL;
}
