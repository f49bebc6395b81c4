/* SPDX-License-Identifier: ISC */

/*
 * A route pairs two endpoints.  Here its roles are decided and explained,
 * its listeners opened (with a pause instead of a spin when descriptors
 * run out), and its client-client offers scheduled.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/listener.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/acl.h"
#include "router/endpoint.h"
#include "router/engine.h"
#include "router/metrics.h"
#include "router/settings.h"
#include "transports/transport.h"

#define ACCEPT_PAUSE_MS		250

/* The engine's event loop and its routes: the daemon makes and runs them. */
struct event_base	*base;
struct route_list	 routes = TAILQ_HEAD_INITIALIZER(routes);
int			 draining;

static int		 paused_listeners;

static const char *const side_names[] = { "local", "remote" };

static const char *
route_mode_name(enum route_mode mode)
{
	switch (mode) {
	case MODE_CLIENT_SERVER:
		return ("client-server");
	case MODE_SERVER_SERVER:
		return ("server-server");
	case MODE_SERVER_CLIENT:
		return ("server-client");
	case MODE_CLIENT_CLIENT:
		return ("client-client");
	}
	return ("?");
}

/*
 * Decide what each connect endpoint reaches, a runtime or a listening
 * tool, and check the options that belong to a role.  A runtime must
 * never be sent an advertise: it would read it as a command header and
 * wait for a payload that never comes, its diagnostics stalled.  So a
 * connect endpoint reaches a runtime unless peer=tool says otherwise, or
 * client-client makes it the tool's side.
 */
static int
decide_peers(struct route *r, char *err, size_t len)
{
	struct endpoint	*ep;
	char		 why[256];
	int		 side, given = -1;

	for (side = 0; side < 2; side++) {
		ep = &r->endpoint[side];
		if (endpoint_check_role(ep, why, sizeof(why)) == -1) {
			snprintf(err, len, "%s: %s", ep->spec, why);
			return (-1);
		}
		if (ep->peer != PEER_AUTO)
			given = ep->peer == PEER_RUNTIME ? side :
			    OTHER_SIDE(side);
		/* A mirror's tools always name their runtime. */
		if (acl_names_runtimes(ep->policy) &&
		    r->endpoint[OTHER_SIDE(side)].role == ROLE_CONNECT &&
		    r->endpoint[OTHER_SIDE(side)].peer != PEER_ROUTER &&
		    (ep->transport->listen_name == NULL ||
		    ep->role == ROLE_CONNECT)) {
			snprintf(err, len, "%s: app=, cmdline= and found= name "
			    "runtimes the router knows by their ProcessInfo, "
			    "ones that dial it or a linked router's; %s dials "
			    "one", ep->spec,
			    r->endpoint[OTHER_SIDE(side)].name);
			return (-1);
		}
	}
	if (r->mode == MODE_CLIENT_CLIENT) {
		for (side = 0; side < 2; side++) {
			if (r->endpoint[side].peer != PEER_ROUTER)
				continue;
			snprintf(err, len, "%s: peer=router reaches another "
			    "dsroute for the tools of the other endpoint, "
			    "which must listen", r->endpoint[side].spec);
			return (-1);
		}
		if (r->endpoint[SIDE_LOCAL].peer != PEER_AUTO &&
		    r->endpoint[SIDE_LOCAL].peer ==
		    r->endpoint[SIDE_REMOTE].peer) {
			snprintf(err, len, "client-client: one side is the "
			    "runtime, the other the tool; both say peer=%s",
			    r->endpoint[SIDE_LOCAL].peer == PEER_RUNTIME ?
			    "runtime" : "tool");
			return (-1);
		}
		r->runtime_side = given != -1 ? given : settings.runtime_side;
		for (side = 0; side < 2; side++) {
			ep = &r->endpoint[side];
			if (ep->peer == PEER_AUTO)
				ep->peer_why = given != -1 ? "the other side's "
				    "peer=" : "--runtime";
			ep->peer = side == r->runtime_side ? PEER_RUNTIME :
			    PEER_TOOL;
		}
		return (0);
	}
	for (side = 0; side < 2; side++) {
		ep = &r->endpoint[side];
		/*
		 * Another router: a mirror's link, or the hop a tool's
		 * command crosses to reach it.  Its spares save that hop's
		 * handshakes; between local sockets there are none to save.
		 */
		if (ep->peer == PEER_ROUTER && r->endpoint[OTHER_SIDE(side)].
		    role != ROLE_LISTEN) {
			snprintf(err, len, "%s: peer=router reaches another "
			    "dsroute for the tools of the other endpoint, "
			    "which must listen", ep->spec);
			return (-1);
		}
		if (ep->peer == PEER_ROUTER && !ep->warm_given &&
		    !ep->transport->local)
			ep->warm = ENDPOINT_WARM_DEFAULT;
		if (ep->role != ROLE_CONNECT || ep->peer != PEER_AUTO)
			continue;
		ep->peer = PEER_RUNTIME;
		ep->peer_why = "a connect endpoint reaches a runtime unless "
		    "peer=tool is given";
	}
	return (0);
}

static void
accept_cb(struct evconnlistener *evl, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct listener	*l = arg;

	if (draining) {
		evutil_closesocket(fd);
		return;
	}
	session_accepted(l->route, l->side, fd, sa, salen, NULL);
}

/* A connection accepted by a transport that accepts on its own. */
static void
accepted_cb(int fd, void *arg)
{
	struct listener		*l = arg;
	struct sockaddr_storage	 none;

	if (draining) {
		transport_close(l->route->endpoint[l->side].transport, fd);
		return;
	}
	/* A local peer, with no address: counted by its credentials. */
	memset(&none, 0, sizeof(none));
	none.ss_family = AF_UNSPEC;
	session_accepted(l->route, l->side, fd, (struct sockaddr *)&none,
	    sizeof(none), NULL);
}

static void
listener_resume(struct listener *l)
{
	if (!l->paused)
		return;
	l->paused = 0;
	paused_listeners--;
	evtimer_del(&l->backoff);
	if (!draining)
		evconnlistener_enable(l->evl);
}

static void
backoff_cb(evutil_socket_t fd, short what, void *arg)
{
	listener_resume(arg);
}

/*
 * accept() failed for a reason other than a transient one.  Out of
 * descriptors or memory, stop accepting for a while rather than spin on a
 * listener that stays readable; a closing session resumes it earlier.
 */
static void
accept_error_cb(struct evconnlistener *evl, void *arg)
{
	struct listener	*l = arg;
	struct timeval	 tv;
	int		 error = EVUTIL_SOCKET_ERROR();

	if (error != EMFILE && error != ENFILE && error != ENOBUFS &&
	    error != ENOMEM) {
		log_error("%s: accept: %s", l->route->endpoint[l->side].name,
		    strerror(error));
		return;
	}
	if (!l->paused) {
		metrics.limits[ML_EMFILE]++;
		log_warning("%s: cannot accept (%s); pausing new connections",
		    l->route->endpoint[l->side].name, strerror(error));
		l->paused = 1;
		paused_listeners++;
	}
	evconnlistener_disable(evl);
	timeval_ms(&tv, ACCEPT_PAUSE_MS);
	evtimer_add(&l->backoff, &tv);
}

/* A session freed descriptors: paused listeners may accept again. */
void
route_listener_freed(void)
{
	struct route	*r;
	int		 side;

	if (paused_listeners == 0)
		return;
	TAILQ_FOREACH(r, &routes, entry) {
		for (side = 0; side < 2; side++) {
			if (r->listener[side].evl != NULL)
				listener_resume(&r->listener[side]);
		}
	}
}

static int
listener_open(struct route *r, int side, char *err, size_t len)
{
	struct listener	*l = &r->listener[side];
	struct endpoint	*ep = &r->endpoint[side];
	int		 fd;

	l->route = r;
	l->side = side;
	if (ep->transport->accept_start != NULL) {
		if (ep->transport->accept_start(ep, accepted_cb, l, err,
		    len) == -1)
			return (-1);
		l->own = 1;
		return (0);
	}
	if ((fd = ep->transport->listen(ep, err, len)) == -1)
		return (-1);
	l->evl = evconnlistener_new(base, accept_cb, l,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, 0, fd);
	if (l->evl == NULL) {
		snprintf(err, len, "%s: cannot watch the listener", ep->name);
		evutil_closesocket(fd);
		if (ep->transport->unlisten != NULL)
			ep->transport->unlisten(ep);
		return (-1);
	}
	evconnlistener_set_error_cb(l->evl, accept_error_cb);
	evtimer_assign(&l->backoff, base, backoff_cb, l);
	return (0);
}

static void
offer_cb(evutil_socket_t fd, short what, void *arg)
{
	struct route	*r = arg;

	if (!draining && r->offer == NULL)
		session_offer(r);
}

/*
 * Open the next client-client offer after delay ms: 0 at once, -1 after
 * a back-off that grows while offers keep failing.
 */
void
route_offer_schedule(struct route *r, int delay)
{
	struct timeval	 tv;

	if (delay == 0)
		r->offer_backoff_ms = 0;
	else if (delay < 0) {
		r->offer_backoff_ms = r->offer_backoff_ms == 0 ? 10 :
		    r->offer_backoff_ms * 2;
		if (r->offer_backoff_ms > 500)
			r->offer_backoff_ms = 500;
		delay = r->offer_backoff_ms;
	}
	timeval_ms(&tv, delay);
	evtimer_add(&r->offer_timer, &tv);
}

static void
recheck_cb(evutil_socket_t fd, short what, void *arg)
{
	session_runtime_available(arg);
}

/* Let the tools waiting for a runtime look again after ms. */
void
route_recheck(struct route *r, int ms)
{
	struct timeval	 tv;

	timeval_ms(&tv, ms);
	evtimer_add(&r->recheck_timer, &tv);
}

/*
 * Refuse a listener that anyone beyond this host reaches in plaintext,
 * unless --unsafe-listen; warn of one that authenticates nobody.
 */
static int
exposed(struct endpoint *ep, enum exposure exposure, char *err, size_t len)
{
	switch (exposure) {
	case EXPOSURE_NONE:
		break;
	case EXPOSURE_WARN:
		log_warning("%s: verify=none: anyone who reaches it can "
		    "control the runtime", ep->name);
		break;
	case EXPOSURE_REFUSE:
		if (settings.unsafe_listen)
			break;
		snprintf(err, len, "refusing to listen for plaintext beyond "
		    "loopback: anyone who reaches it could control the "
		    "runtime; listen on 127.0.0.1 (with kubectl port-forward "
		    "or ssh -L) or pass --unsafe-listen");
		return (-1);
	}
	return (0);
}

/*
 * Refuse a dump-dir= that other users of this host could write (a link
 * planted there would redirect a dump), as the platform checks it; say
 * once that one this host does not have cannot be checked here.  old is
 * the policy the endpoint runs with on a reload, NULL at start-up: a
 * directory it had already is not noted again.  Return -1 with the
 * reason in err.
 */
static int
dump_dir_safe(const struct endpoint *ep, const struct acl_policy *old,
    char *err, size_t len)
{
	const char	*dir = acl_dump_dir(ep->policy), *was;
	uid_t		 also = (uid_t)-1;
	char		 why[PATH_MAX + 256];

	if (dir == NULL)
		return (0);
	/* The user it drops to is the router's once it has started. */
	if (settings.user[0] != '\0' && parse_uid(settings.user, &also) == -1)
		also = (uid_t)-1;
	switch (platform_dump_dir_check(dir, also, why, sizeof(why))) {
	case 0:
		return (0);
	case 1:
		was = acl_dump_dir(old);
		if (was == NULL || strcmp(was, dir) != 0)
			log_warning("%s: dump-dir=%s: %s, so it cannot be "
			    "checked here; where the runtime writes it, only "
			    "root or its user may write it or a directory "
			    "above it", ep->name, dir, why);
		return (0);
	default:
		snprintf(err, len, "%s: dump-dir=%s: %s", ep->name, dir, why);
		return (-1);
	}
}

/* The running route of that name, or NULL. */
static struct route *
route_named(const char *name)
{
	struct route	*r;

	TAILQ_FOREACH(r, &routes, entry) {
		if (strcmp(r->name, name) == 0)
			return (r);
	}
	return (NULL);
}

/*
 * Check what routes loaded for a reload ask of this host before any of
 * it is applied (their dump directories), so that a refusal keeps the
 * running configuration whole.  Return -1 with the reason in err.
 */
int
route_reload_check(struct route_list *fresh, char *err, size_t len)
{
	struct route	*nr, *r;
	char		 why[PATH_MAX + 512];
	int		 side;

	TAILQ_FOREACH(nr, fresh, entry) {
		r = route_named(nr->name);
		for (side = 0; side < 2; side++) {
			if (dump_dir_safe(&nr->endpoint[side], r != NULL ?
			    r->endpoint[side].policy : NULL, why,
			    sizeof(why)) == -1) {
				snprintf(err, len, "route [%s]: %s", nr->name,
				    why);
				return (-1);
			}
		}
	}
	return (0);
}

/* The mode, named after the two roles, local first. */
static void
decide_mode(struct route *r)
{
	if (r->endpoint[SIDE_LOCAL].role == ROLE_CONNECT)
		r->mode = r->endpoint[SIDE_REMOTE].role == ROLE_CONNECT ?
		    MODE_CLIENT_CLIENT : MODE_CLIENT_SERVER;
	else
		r->mode = r->endpoint[SIDE_REMOTE].role == ROLE_CONNECT ?
		    MODE_SERVER_CLIENT : MODE_SERVER_SERVER;
}

/*
 * dsroute -n: start each endpoint as route_start() would, short of
 * listening or dialling (names looked up, roles decided, exposure judged,
 * TLS files loaded and their keys matched), check the dump directory and
 * what listening will need, then let go of it all.  Return -1 with a
 * line in err.
 */
int
route_preflight(struct route *r, char *err, size_t len)
{
	struct endpoint	*ep;
	char		 why[256];
	int		 side, rv = 0;

	for (side = 0; side < 2 && rv == 0; side++) {
		ep = &r->endpoint[side];
		if (endpoint_start(ep, NULL, exposed, err, len) == -1 ||
		    dump_dir_safe(ep, NULL, err, len) == -1)
			rv = -1;
		else if (ep->transport->preflight != NULL &&
		    ep->transport->preflight(ep, why, sizeof(why)) == -1) {
			snprintf(err, len, "%s: %s", ep->name, why);
			rv = -1;
		}
	}
	for (side = 0; side < 2; side++) {
		ep = &r->endpoint[side];
		if (ep->transport->release != NULL)
			ep->transport->release(ep);
	}
	if (rv == 0) {
		decide_mode(r);
		rv = decide_peers(r, err, len);
	}
	return (rv);
}

/*
 * Resolve the endpoints, decide their roles, refuse unsafe listeners and
 * start listening.  On error, return -1 with a one-line reason in err.
 */
int
route_start(struct route *r, char *err, size_t len)
{
	int		 side;

	TAILQ_INIT(&r->runtimes);
	TAILQ_INIT(&r->waiting);
	evtimer_assign(&r->offer_timer, base, offer_cb, r);
	evtimer_assign(&r->recheck_timer, base, recheck_cb, r);
	evtimer_assign(&r->away_timer, base, runtime_away_sweep, r);
	r->started = 1;

	for (side = 0; side < 2; side++) {
		if (endpoint_start(&r->endpoint[side], NULL, exposed, err,
		    len) == -1 ||
		    dump_dir_safe(&r->endpoint[side], NULL, err, len) == -1)
			return (-1);
	}
	decide_mode(r);
	if (decide_peers(r, err, len) == -1)
		return (-1);

	for (side = 0; side < 2; side++) {
		if (r->endpoint[side].role != ROLE_LISTEN)
			continue;
		/* A mirror listens for each runtime, as it comes. */
		if (r->endpoint[side].transport->listen_name != NULL) {
			if (mirror_start(r, side, err, len) == -1) {
				route_stop_listening(r);
				return (-1);
			}
			continue;
		}
		if (listener_open(r, side, err, len) == -1) {
			route_stop_listening(r);
			return (-1);
		}
	}
	for (side = 0; side < 2; side++) {
		if (warm_start(r, side, err, len) == -1) {
			route_stop_listening(r);
			return (-1);
		}
	}
	if (r->mode == MODE_CLIENT_CLIENT)
		route_offer_schedule(r, 0);
	return (0);
}

/* Print what an endpoint does and why. */
static void
describe_endpoint(struct route *r, int side)
{
	struct endpoint	*ep = &r->endpoint[side];
	struct log_rec	 rec;
	char		 extra[96] = "";

	if (ep->transport->describe != NULL)
		ep->transport->describe(ep, extra, sizeof(extra));
	if (log_begin(&rec, LL_INFO, ep->role == ROLE_LISTEN ? "listen" :
	    "connect")) {
		log_say(&rec, "%s %s: %s (%s)%s", side_names[side], ep->name,
		    ep->role == ROLE_LISTEN ? "listening" :
		    "connecting per session", ep->why, extra);
		log_str(&rec, "route", r->name, LF_JSON);
		log_str(&rec, "side", side_names[side], LF_JSON);
		log_str(&rec, "endpoint", ep->name, LF_JSON);
		log_str(&rec, "transport", ep->transport->name, LF_JSON);
		log_end(&rec);
	}
	if (ep->role == ROLE_CONNECT && ep->peer == PEER_ROUTER)
		log_info("  it reaches a router, another dsroute (%s); %d warm "
		    "connections kept to it (warm=)", ep->peer_why, ep->warm);
	else if (ep->role == ROLE_CONNECT)
		log_info("  it reaches a %s (%s)", ep->peer == PEER_TOOL ?
		    "tool that listens for runtimes" : "runtime", ep->peer_why);
}

/*
 * Log what the route does, and the lines that make a runtime and a tool
 * use it.
 */
void
route_describe(struct route *r)
{
	int	 side;

	if (r->helper != NULL) {
		log_info("route %s: %s to %s (%s)", r->name,
		    r->endpoint[SIDE_LOCAL].name, r->endpoint[SIDE_REMOTE].name,
		    r->helper);
		return;
	}
	log_info("route %s: %s", r->name, route_mode_name(r->mode));
	for (side = 0; side < 2; side++)
		describe_endpoint(r, side);
	switch (r->mode) {
	case MODE_CLIENT_CLIENT:
		log_info("the runtime is on the %s side; this router offers it "
		    "to the listening tool as the runtime would",
		    side_names[r->runtime_side]);
		break;
	default:
		log_info("each accepted connection is classified by its first "
		    "bytes: a runtime's advertise or a tool's command");
		break;
	}
	for (side = 0; side < 2 && !r->own_howto; side++) {
		if (r->endpoint[side].transport->howto != NULL)
			r->endpoint[side].transport->howto(&r->endpoint[side],
			    &r->endpoint[OTHER_SIDE(side)]);
	}
}

/* Stop accepting, and remove the socket files we created. */
void
route_stop_listening(struct route *r)
{
	struct listener	*l;
	int		 side;

	for (side = 0; side < 2; side++) {
		l = &r->listener[side];
		if (l->evl == NULL && !l->own)
			continue;
		if (l->paused) {
			l->paused = 0;
			paused_listeners--;
		}
		if (l->evl != NULL) {
			evtimer_del(&l->backoff);
			evconnlistener_free(l->evl);
		}
		l->evl = NULL;
		l->own = 0;
		if (r->endpoint[side].transport->unlisten != NULL)
			r->endpoint[side].transport->unlisten(
			    &r->endpoint[side]);
	}
	mirror_stop(r);
	found_stop(r);
	warm_stop(r);
	evtimer_del(&r->offer_timer);
	evtimer_del(&r->recheck_timer);
	evtimer_del(&r->away_timer);
}

/*
 * Make a route from two endpoint specifications.  On error, return NULL
 * with a one-line reason in err.
 */
struct route *
route_new(const char *name, const char *local, const char *remote,
    char *err, size_t len)
{
	struct route	*r;
	const char	*spec[2] = { local, remote };
	char		 why[256];
	int		 side;

	if ((r = calloc(1, sizeof(*r))) == NULL ||
	    (r->name = strdup(name)) == NULL) {
		free(r);
		snprintf(err, len, "out of memory");
		return (NULL);
	}
	for (side = 0; side < 2; side++) {
		if (endpoint_parse(spec[side], &r->endpoint[side], why,
		    sizeof(why)) == -1) {
			snprintf(err, len, "%s: %s", spec[side], why);
			route_free(r);
			return (NULL);
		}
	}
	return (r);
}

void
route_free(struct route *r)
{
	int	 side;

	if (r->started) {
		route_stop_listening(r);
		runtime_drop_all(r);
	}
	for (side = 0; side < 2; side++) {
		if (r->started && r->endpoint[side].transport != NULL &&
		    r->endpoint[side].transport->release != NULL)
			r->endpoint[side].transport->release(
			    &r->endpoint[side]);
	}
	endpoint_clear(&r->endpoint[SIDE_LOCAL]);
	endpoint_clear(&r->endpoint[SIDE_REMOTE]);
	free(r->name);
	free(r);
}

/* The credentials of ep did not load: the reload keeps every old one. */
static void
reload_failed(const struct endpoint *ep, const char *err)
{
	struct log_rec	 r;

	if (!log_begin(&r, LL_ERROR, "reload"))
		return;
	log_say(&r, "reload: %s: %s; keeping the current certificates of "
	    "every endpoint", ep->name, err);
	log_str(&r, "what", "credentials", LF_JSON);
	log_str(&r, "result", "failed", LF_JSON);
	log_str(&r, "endpoint", ep->name, LF_JSON);
	log_str(&r, "error", err, LF_JSON);
	log_end(&r);
}

/*
 * Reload what every endpoint's transport can reload (a TLS endpoint's
 * certificate, key and CA files), all or nothing: the new state is put
 * in use only when every endpoint's loaded.  On any failure keep the
 * current state of every endpoint and log why in one line.  Return the
 * number of endpoints reloaded, or -1.
 */
int
route_reload_transports(void)
{
	struct route	*r;
	struct endpoint	*ep;
	struct log_rec	 rec;
	void		**fresh;
	char		 err[512];
	int		 side, n = 0, i = 0;

	TAILQ_FOREACH(r, &routes, entry) {
		for (side = 0; side < 2; side++)
			n += r->endpoint[side].transport->reload != NULL;
	}
	if (n == 0)
		return (0);
	if ((fresh = calloc(n, sizeof(*fresh))) == NULL) {
		log_error("reload: out of memory; keeping the current "
		    "certificates");
		return (-1);
	}
	TAILQ_FOREACH(r, &routes, entry) {
		for (side = 0; side < 2; side++) {
			ep = &r->endpoint[side];
			if (ep->transport->reload == NULL)
				continue;
			if ((fresh[i] = ep->transport->reload(ep, err,
			    sizeof(err))) == NULL) {
				reload_failed(ep, err);
				while (i-- > 0)
					ep->transport->reload_free(fresh[i]);
				free(fresh);
				return (-1);
			}
			i++;
		}
	}
	i = 0;
	TAILQ_FOREACH(r, &routes, entry) {
		for (side = 0; side < 2; side++) {
			ep = &r->endpoint[side];
			if (ep->transport->reload != NULL)
				ep->transport->reload_commit(ep, fresh[i++]);
		}
	}
	free(fresh);
	if (log_begin(&rec, LL_INFO, "reload")) {
		log_say(&rec, "reload: new certificates, keys and CA files for "
		    "%d endpoint%s; sessions in flight keep theirs", n,
		    n == 1 ? "" : "s");
		log_str(&rec, "what", "credentials", LF_JSON);
		log_str(&rec, "result", "ok", LF_JSON);
		log_u64(&rec, "endpoints", (uint64_t)n, LF_JSON);
		log_end(&rec);
	}
	return (n);
}
