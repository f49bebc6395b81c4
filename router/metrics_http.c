/* SPDX-License-Identifier: ISC */

/*
 * --metrics: /metrics, /healthz and /readyz over HTTP from the router's
 * own event loop, with libevent's evhttp (no HTTP parser of our own).
 * The address is an endpoint of the tcp or tls transport, parsed,
 * resolved, checked for exposure, prepared (a TLS context) and bound by
 * that transport, as a route's listener is.
 *
 * Hardened as the other listeners are: GET and HEAD only, the request
 * line and headers bounded, no body, and a whole-request deadline
 * (--handshake-timeout): evhttp's own timeout restarts on every read, so
 * a client dripping a byte a second would never meet it.
 *
 * A crowd must not lock out a liveness probe or a scraper, which send
 * their request at once and are answered in the same turn of the loop.
 * So at most MAX_CONNS connections are open, MAX_PER_PEER of them from
 * one address (all of loopback as one), and a connection past either cap
 * makes room by cutting another: one that has sent nothing (the kernel's
 * queue says so, so that one whose request is on its way is not taken for
 * silent), else one that sent part of a request, oldest first; never one
 * that was answered, or else it is cut itself.  A connection that sends
 * nothing for SILENT_MS is cut anyway.  Past twice MAX_CONNS, cut ones
 * not yet let go by evhttp included, accepting pauses.
 *
 * evhttp owns each connection; to see one through we keep a reference to
 * its bufferevent (made in bevcb) and watch its input.  evhttp lets a
 * connection go by clearing the bufferevent's callbacks: each new
 * connection, and a sweep every SWEEP_MS, drop those, so a connection
 * counts as gone once it closed.  The sweep cuts those past their
 * deadline with shutdown(2), which evhttp reads as the end of the
 * connection.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <event2/http.h>
#include <event2/keyvalq_struct.h>
#include <event2/listener.h>

#include "router/daemon.h"
#include "router/endpoint.h"
#include "router/engine.h"
#include "router/log.h"
#include "router/metrics.h"
#include "router/settings.h"
#include "router/util.h"
#include "transports/transport.h"

#define MAX_CONNS	32		/* open at once; twice that pauses */
#define MAX_PER_PEER	8		/* of them from one address */
#define MAX_HEADERS	8192		/* request line and headers */
#define SILENT_MS	1000		/* for a first byte */
#define SWEEP_MS	100
#define PAUSE_MS	250		/* out of descriptors */
#define RECHECK_MS	2		/* at the cap: evhttp lets go soon */
#define CONTENT_TYPE	"text/plain; version=0.0.4; charset=utf-8"

/* What a connection has sent, the order in which room is made. */
enum mconn_said {
	SAID_NOTHING,
	SAID_PART,		/* of a request */
	SAID_REQUEST		/* a whole one, answered */
};

struct mconn {
	struct bufferevent	*bev;	/* evhttp's, with our reference */
	uint64_t		 silent_until; /* monotonic ms */
	uint64_t		 deadline;
	enum mconn_said		 said;
	uint8_t			 peer[16]; /* sockaddr_peer(), once known */
	size_t			 peer_len; /* 0 until then */
	int			 cut;	/* shut down, waiting for evhttp */
	TAILQ_ENTRY(mconn)	 entry;	/* oldest first */
};

static struct endpoint		 ep;
static int			 have_ep;
static int			 tls;
static struct evhttp		*http;
static struct evconnlistener	*evl;
static struct event		*sweep_ev;
static struct event		*pause_ev;
static struct event		*admit_ev;
static TAILQ_HEAD(, mconn)	 conns = TAILQ_HEAD_INITIALIZER(conns);
static int			 nconns;	/* cut ones too */
static int			 nopen;		/* not cut */
static int			 paused;	/* by the cap or by EMFILE */
static struct log_throttle	 throttle;

static void
log_cut(const char *what)
{
	if (log_enabled(LL_DEBUG) &&
	    log_throttle_pass(&throttle, "metrics connections cut"))
		log_debug("metrics: %s", what);
}

static void
set_paused(int on)
{
	if (paused == on)
		return;
	paused = on;
	if (on)
		evconnlistener_disable(evl);
	else
		evconnlistener_enable(evl);
}

static void
cut(struct mconn *mc, const char *why)
{
	evutil_socket_t	 fd = bufferevent_getfd(mc->bev);

	if (mc->cut)
		return;
	mc->cut = 1;
	nopen--;
	if (fd != -1)
		(void)shutdown(fd, SHUT_RDWR);
	log_cut(why);
}

/* Whether evhttp let mc go: it clears the callbacks when it does. */
static int
released(struct mconn *mc)
{
	bufferevent_event_cb	 eventcb;

	bufferevent_getcb(mc->bev, NULL, NULL, &eventcb, NULL);
	return (eventcb == NULL);
}

static void
drop(struct mconn *mc)
{
	/* Ours is the last reference: the socket closes here. */
	bufferevent_disable(mc->bev, EV_READ | EV_WRITE);
	bufferevent_decref(mc->bev);
	TAILQ_REMOVE(&conns, mc, entry);
	if (!mc->cut)
		nopen--;
	nconns--;
	free(mc);
}

/* Drop the connections evhttp let go. */
static void
drop_released(void)
{
	struct mconn	*mc, *next;

	for (mc = TAILQ_FIRST(&conns); mc != NULL; mc = next) {
		next = TAILQ_NEXT(mc, entry);
		if (released(mc))
			drop(mc);
	}
}

/*
 * What mc has sent.  Bytes evhttp has not read yet count: its request
 * may have come since the loop last looked.
 */
static enum mconn_said
said(struct mconn *mc)
{
	evutil_socket_t	 fd;
	char		 c;

	if (mc->said == SAID_NOTHING &&
	    (fd = bufferevent_getfd(mc->bev)) != -1 &&
	    recv(fd, &c, 1, MSG_PEEK) > 0)
		mc->said = SAID_PART;
	return (mc->said);
}

/*
 * Make room for mc, from the connections of peer (any, when NULL): cut
 * the one that said least, the oldest of those, but none that was
 * answered; if there is none, mc itself.
 */
static void
make_room(struct mconn *mc, const uint8_t *peer, size_t peer_len,
    const char *why)
{
	struct mconn	*c, *victim = NULL;
	enum mconn_said	 least = SAID_REQUEST;

	TAILQ_FOREACH(c, &conns, entry) {
		if (c == mc || c->cut || released(c) || (peer != NULL &&
		    (c->peer_len != peer_len ||
		    memcmp(c->peer, peer, peer_len) != 0)))
			continue;
		if (said(c) < least) {
			victim = c;
			if ((least = c->said) == SAID_NOTHING)
				break;
		}
	}
	cut(victim != NULL ? victim : mc, why);
}

/*
 * Once evhttp gave a new connection its socket: its address, and its
 * peer's share of the connections.
 */
static void
admit_cb(evutil_socket_t fd, short what, void *arg)
{
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	struct mconn		*mc, *c;
	int			 n;

	TAILQ_FOREACH(mc, &conns, entry) {
		if (mc->peer_len != 0 || mc->cut || released(mc) ||
		    (fd = bufferevent_getfd(mc->bev)) == -1)
			continue;
		sslen = sizeof(ss);
		if (getpeername(fd, (struct sockaddr *)&ss, &sslen) == -1 ||
		    sockaddr_peer((struct sockaddr *)&ss, mc->peer,
		    &mc->peer_len) == -1) {
			mc->peer_len = 1;	/* not an address: one peer */
			mc->peer[0] = 0;
		}
		n = 0;
		TAILQ_FOREACH(c, &conns, entry) {
			if (!c->cut && c->peer_len == mc->peer_len &&
			    memcmp(c->peer, mc->peer, mc->peer_len) == 0)
				n++;
		}
		if (n > MAX_PER_PEER)
			make_room(mc, mc->peer, mc->peer_len, "too many "
			    "connections from one address; cut one");
	}
}

/*
 * Drop the connections evhttp let go, cut those past their deadline or
 * silent too long; again while any is open.
 */
static void
sweep_cb(evutil_socket_t fd, short what, void *arg)
{
	struct mconn		*mc, *next;
	struct timeval		 tv;
	uint64_t		 now = now_ms();

	drop_released();
	for (mc = TAILQ_FIRST(&conns); mc != NULL; mc = next) {
		next = TAILQ_NEXT(mc, entry);
		if (now >= mc->deadline)
			cut(mc, "a client sent no whole request in time; cut");
		else if (now >= mc->silent_until && said(mc) == SAID_NOTHING)
			cut(mc, "a client sent nothing in time; cut");
	}
	if (paused && nconns <= MAX_CONNS && !evtimer_pending(pause_ev, NULL))
		set_paused(0);
	if (nconns > 0) {
		timeval_ms(&tv, SWEEP_MS);
		evtimer_add(sweep_ev, &tv);
	}
}

/* Bytes came: the connection has said something. */
static void
input_cb(struct evbuffer *b, const struct evbuffer_cb_info *info, void *arg)
{
	struct mconn	*mc = arg;

	if (info->n_added > 0 && mc->said == SAID_NOTHING)
		mc->said = SAID_PART;
}

/* A new connection: evhttp takes this bufferevent; we keep a reference. */
static struct bufferevent *
bev_cb(struct event_base *b, void *arg)
{
	struct mconn	*mc;
	struct timeval	 tv;
	uint64_t	 now = now_ms();

	drop_released();
	if ((mc = calloc(1, sizeof(*mc))) == NULL)
		return (NULL);
	mc->bev = tls ? tls_server_bufferevent(&ep, b) :
	    bufferevent_socket_new(b, -1, BEV_OPT_CLOSE_ON_FREE);
	if (mc->bev == NULL || evbuffer_add_cb(bufferevent_get_input(mc->bev),
	    input_cb, mc) == NULL) {
		/* evhttp makes a plain one; the sweep never sees it. */
		if (mc->bev != NULL)
			bufferevent_free(mc->bev);
		free(mc);
		log_cut("out of memory for a connection");
		return (NULL);
	}
	/* Input beyond what a request may be waits in the socket. */
	bufferevent_setwatermark(mc->bev, EV_READ, 0, MAX_HEADERS * 2);
	bufferevent_incref(mc->bev);
	mc->deadline = now + (uint64_t)settings.handshake_timeout_ms;
	mc->silent_until = now + SILENT_MS;
	TAILQ_INSERT_TAIL(&conns, mc, entry);
	nconns++;
	nopen++;
	if (nopen > MAX_CONNS)
		make_room(mc, NULL, 0, "too many connections; cut one");
	/* Its socket is set once this returns: its address then. */
	event_active(admit_ev, EV_TIMEOUT, 0);
	if (nconns >= 2 * MAX_CONNS) {
		/* Those cut end when evhttp reads their end, at once. */
		set_paused(1);
		if (!evtimer_pending(pause_ev, NULL)) {
			timeval_ms(&tv, RECHECK_MS);
			evtimer_add(pause_ev, &tv);
		}
	}
	if (!evtimer_pending(sweep_ev, NULL)) {
		timeval_ms(&tv, SWEEP_MS);
		evtimer_add(sweep_ev, &tv);
	}
	return (mc->bev);
}

/* A request was answered: its connection's next deadline starts now. */
static void
answered(struct evhttp_request *req)
{
	struct evhttp_connection	*evcon;
	struct bufferevent		*bev;
	struct mconn			*mc;

	if ((evcon = evhttp_request_get_connection(req)) == NULL ||
	    (bev = evhttp_connection_get_bufferevent(evcon)) == NULL)
		return;
	TAILQ_FOREACH(mc, &conns, entry) {
		if (mc->bev == bev) {
			mc->said = SAID_REQUEST;
			mc->deadline = now_ms() +
			    (uint64_t)settings.handshake_timeout_ms;
			TAILQ_REMOVE(&conns, mc, entry);
			TAILQ_INSERT_TAIL(&conns, mc, entry);
			break;
		}
	}
}

/* The gauges, from the engine's lists. */
static void
fill_gauges(struct metrics *m)
{
	struct session	*s;
	struct route	*r;
	struct runtime	*rt;

	memset(m->open, 0, sizeof(m->open));
	m->runtimes_known = m->runtimes_parked = 0;
	TAILQ_FOREACH(s, &sessions, entry)
		m->open[s->route->mode]++;
	TAILQ_FOREACH(r, &routes, entry) {
		TAILQ_FOREACH(rt, &r->runtimes, entry) {
			m->runtimes_known++;
			if (rt->parked.fd != -1)
				m->runtimes_parked++;
		}
	}
	m->log_dropped = log_dropped_total();
	m->http_open = (uint64_t)nopen;
}

/*
 * Whether every route is ready: each of its listeners open (not paused
 * for descriptors), and a server-server route, where runtimes dial in,
 * knows one.  A connect endpoint is not dialled: a probe would be a
 * connection the runtime must serve.  Say why not in why.
 */
static int
ready(char *why, size_t len)
{
	struct route	*r;
	int		 side;

	if (draining) {
		snprintf(why, len, "shutting down");
		return (0);
	}
	TAILQ_FOREACH(r, &routes, entry) {
		for (side = 0; side < 2; side++) {
			if (r->endpoint[side].role != ROLE_LISTEN)
				continue;
			if (r->listener[side].evl == NULL ||
			    r->listener[side].paused) {
				snprintf(why, len, "route %s: %s is not "
				    "accepting", r->name,
				    r->endpoint[side].name);
				return (0);
			}
		}
		if (r->mode != MODE_SERVER_SERVER || r->helper != NULL)
			continue;
		/* Tools and runtimes both dial in: one must be parked. */
		if (TAILQ_EMPTY(&r->runtimes)) {
			snprintf(why, len, "route %s: no runtime has "
			    "connected", r->name);
			return (0);
		}
	}
	return (1);
}

static void
reply(struct evhttp_request *req, int code, const char *reason,
    const char *type, struct evbuffer *body)
{
	struct evkeyvalq	*h = evhttp_request_get_output_headers(req);

	evhttp_add_header(h, "Content-Type", type);
	evhttp_add_header(h, "Cache-Control", "no-store");
	answered(req);		/* before the reply, which may free req */
	evhttp_send_reply(req, code, reason, body);
}

static void
text(struct evhttp_request *req, int code, const char *reason,
    const char *msg)
{
	struct evbuffer	*b;

	if ((b = evbuffer_new()) == NULL) {
		evhttp_send_error(req, 500, NULL);
		return;
	}
	evbuffer_add_printf(b, "%s\n", msg);
	reply(req, code, reason, "text/plain; charset=utf-8", b);
	evbuffer_free(b);
}

static void
request_cb(struct evhttp_request *req, void *arg)
{
	struct metrics_build	 bi = { PACKAGE_VERSION, TLS_BACKEND,
				    tls_library() };
	struct evbuffer		*b;
	const char		*path;
	char			 why[256];

	switch (evhttp_request_get_command(req)) {
	case EVHTTP_REQ_GET:
	case EVHTTP_REQ_HEAD:
		break;
	default:
		evhttp_add_header(evhttp_request_get_output_headers(req),
		    "Allow", "GET, HEAD");
		log_cut("a method other than GET or HEAD: 405");
		text(req, 405, "Method Not Allowed", "only GET and HEAD");
		return;
	}
	path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
	if (path == NULL)
		path = "";
	if (strcmp(path, "/metrics") == 0) {
		if ((b = evbuffer_new()) == NULL) {
			evhttp_send_error(req, 500, NULL);
			return;
		}
		fill_gauges(&metrics);
		if (metrics_render(&metrics, &bi, b) == -1) {
			evbuffer_free(b);
			evhttp_send_error(req, 500, NULL);
			return;
		}
		reply(req, 200, "OK", CONTENT_TYPE, b);
		evbuffer_free(b);
	} else if (strcmp(path, "/healthz") == 0)
		text(req, 200, "OK", "ok");
	else if (strcmp(path, "/readyz") == 0) {
		if (ready(why, sizeof(why)))
			text(req, 200, "OK", "ready");
		else
			text(req, 503, "Service Unavailable", why);
	} else
		text(req, 404, "Not Found", "/metrics, /healthz or /readyz");
}

static void
resume_cb(evutil_socket_t fd, short what, void *arg)
{
	struct timeval	 tv;

	drop_released();
	if (nconns < 2 * MAX_CONNS)
		set_paused(0);
	else {
		timeval_ms(&tv, RECHECK_MS);
		evtimer_add(pause_ev, &tv);
	}
}

/* Out of descriptors: pause, as a route's listener does, never spin. */
static void
accept_error_cb(struct evconnlistener *l, void *arg)
{
	struct timeval	 tv;
	int		 error = EVUTIL_SOCKET_ERROR();

	if (error != EMFILE && error != ENFILE && error != ENOBUFS &&
	    error != ENOMEM) {
		log_cut("accept failed");
		return;
	}
	metrics.limits[ML_EMFILE]++;
	log_cut("out of descriptors; pausing");
	set_paused(1);
	timeval_ms(&tv, PAUSE_MS);
	evtimer_add(pause_ev, &tv);
}

/*
 * The endpoint spec of --metrics: a bare port is loopback; with no
 * transport's prefix, tcp: is implied.
 */
static int
metrics_spec(const char *v, char *buf, size_t len)
{
	size_t	 n = strspn(v, "0123456789");

	if (n > 0 && v[n] == '\0')
		return (snprintf(buf, len, "tcp:127.0.0.1:%s,listen", v));
	if (transport_find(v, &n) != NULL)
		return (snprintf(buf, len, "%s,listen", v));
	return (snprintf(buf, len, "tcp:%s,listen", v));
}

/*
 * Parse --metrics into e and check what parsing can: the transport, no
 * route options, TLS where the build can serve it.  Return -1 with a
 * one-line reason in err, e cleared.
 */
static int
metrics_parse(struct endpoint *e, char *err, size_t len)
{
	char	 spec[300], why[256] = "too long";

	if ((size_t)metrics_spec(settings.metrics, spec, sizeof(spec)) >=
	    sizeof(spec) || endpoint_parse(spec, e, why, sizeof(why)) == -1) {
		snprintf(err, len, "--metrics %s: %s", settings.metrics,
		    why);
		return (-1);
	}
	if (strcmp(e->transport->name, "tls") != 0 &&
	    strcmp(e->transport->name, "tcp") != 0)
		snprintf(err, len, "--metrics %s: give tcp:HOST:PORT, "
		    "tls:HOST:PORT,... or a port", settings.metrics);
	else if (e->policy != NULL)
		snprintf(err, len, "--metrics %s: access control options are "
		    "for routes; metrics take the tls: options only",
		    settings.metrics);
	else if (strcmp(e->transport->name, "tls") == 0 &&
	    !tls_server_bufferevents())
		snprintf(err, len, "--metrics %s: this dsroute is built with "
		    "%s, and libevent 2.1 serves HTTPS only with OpenSSL; "
		    "serve tcp: on loopback, or build with OpenSSL",
		    settings.metrics, tls_library());
	else
		return (0);
	endpoint_clear(e);
	return (-1);
}

/* -n: check --metrics as far as it can be without opening it. */
int
metrics_http_check(char *err, size_t len)
{
	struct endpoint	 e;

	if (settings.metrics[0] == '\0')
		return (0);
	memset(&e, 0, sizeof(e));
	if (metrics_parse(&e, err, len) == -1)
		return (-1);
	endpoint_clear(&e);
	return (0);
}

/*
 * Open --metrics, before privileges are dropped (it binds a port and
 * reads TLS keys).  Return -1 with a one-line reason in err.
 */
int
metrics_http_start(char *err, size_t len)
{
	struct evhttp_bound_socket	*bound;
	char				 why[256];
	int				 fd;

	if (settings.metrics[0] == '\0')
		return (0);
	if (metrics_parse(&ep, err, len) == -1)
		return (-1);
	have_ep = 1;
	tls = strcmp(ep.transport->name, "tls") == 0;
	if (ep.transport->resolve != NULL &&
	    ep.transport->resolve(&ep, why, sizeof(why)) == -1)
		goto fail;
	if (ep.transport->exposure != NULL) {
		switch (ep.transport->exposure(&ep)) {
		case EXPOSURE_NONE:
			break;
		case EXPOSURE_WARN:
			log_warning("--metrics %s: verify=none beyond loopback: "
			    "anyone who reaches it reads the metrics",
			    ep.name);
			break;
		case EXPOSURE_REFUSE:
			/*
			 * Unlike a route's, this listener passes no command
			 * to a runtime: it tells counts, no names of peers.
			 * An address beyond loopback, given in full, is the
			 * operator's choice (a kubelet's probes and
			 * Prometheus reach a pod's own address); say so.
			 */
			log_warning("--metrics %s: plaintext beyond loopback: "
			    "anyone who reaches it reads the counts (no "
			    "command passes through it; tls: to restrict it)",
			    ep.name);
			break;
		}
	}
	if (ep.transport->prepare != NULL &&
	    ep.transport->prepare(&ep, why, sizeof(why)) == -1)
		goto fail;
	if ((fd = ep.transport->listen(&ep, why, sizeof(why))) == -1)
		goto fail;
	if ((evl = evconnlistener_new(base, NULL, NULL, LEV_OPT_CLOSE_ON_FREE |
	    LEV_OPT_CLOSE_ON_EXEC, 0, fd)) == NULL) {
		evutil_closesocket(fd);
		snprintf(why, sizeof(why), "cannot watch the listener");
		goto fail;
	}
	if ((http = evhttp_new(base)) == NULL ||
	    (sweep_ev = evtimer_new(base, sweep_cb, NULL)) == NULL ||
	    (pause_ev = evtimer_new(base, resume_cb, NULL)) == NULL ||
	    (admit_ev = event_new(base, -1, 0, admit_cb, NULL)) == NULL ||
	    (bound = evhttp_bind_listener(http, evl)) == NULL) {
		snprintf(why, sizeof(why), "out of memory");
		goto fail;
	}
	evconnlistener_set_error_cb(evl, accept_error_cb);
	evhttp_set_max_headers_size(http, MAX_HEADERS);
	evhttp_set_max_body_size(http, 0);
	/* Every method evhttp knows reaches request_cb, which says 405. */
	evhttp_set_allowed_methods(http, EVHTTP_REQ_GET | EVHTTP_REQ_POST |
	    EVHTTP_REQ_HEAD | EVHTTP_REQ_PUT | EVHTTP_REQ_DELETE |
	    EVHTTP_REQ_OPTIONS | EVHTTP_REQ_TRACE | EVHTTP_REQ_CONNECT |
	    EVHTTP_REQ_PATCH);
	evhttp_set_timeout(http, settings.handshake_timeout_ms / 1000 + 1);
	evhttp_set_bevcb(http, bev_cb, NULL);
	evhttp_set_gencb(http, request_cb, NULL);
	return (0);
fail:
	snprintf(err, len, "--metrics %s: %s", settings.metrics, why);
	return (-1);
}

/*
 * SIGHUP: a metrics endpoint over tls: loads its certificate, key and CA
 * files again, for the connections that come next; on failure it keeps
 * what it has.  Return 1 if it reloaded, 0 if it has nothing to, -1.
 */
int
metrics_http_reload(void)
{
	char	 err[512];
	void	*fresh;

	if (http == NULL || !tls || ep.transport->reload == NULL)
		return (0);
	if ((fresh = ep.transport->reload(&ep, err, sizeof(err))) == NULL) {
		log_error("reload: --metrics %s: %s; keeping its current "
		    "certificates", ep.name, err);
		return (-1);
	}
	ep.transport->reload_commit(&ep, fresh);
	log_info("reload: new certificates for --metrics %s", ep.name);
	return (1);
}

/* The start-up line. */
void
metrics_http_describe(void)
{
	if (http != NULL)
		log_info("metrics: http%s://%s/metrics, /healthz, /readyz",
		    tls ? "s" : "", strchr(ep.name, ':') + 1);
}

/* Descriptors metrics may hold at once, for the budget of sessions. */
int
metrics_http_fds(void)
{
	return (http != NULL ? 2 * MAX_CONNS : 0);
}

void
metrics_http_stop(void)
{
	struct mconn	*mc;

	if (http != NULL)
		evhttp_free(http);	/* its connections and the listener */
	http = NULL;
	evl = NULL;
	while ((mc = TAILQ_FIRST(&conns)) != NULL) {
		TAILQ_REMOVE(&conns, mc, entry);
		bufferevent_decref(mc->bev);
		free(mc);
	}
	nconns = nopen = 0;
	if (sweep_ev != NULL)
		event_free(sweep_ev);
	if (pause_ev != NULL)
		event_free(pause_ev);
	if (admit_ev != NULL)
		event_free(admit_ev);
	sweep_ev = pause_ev = admit_ev = NULL;
	if (have_ep) {
		if (ep.transport != NULL && ep.transport->release != NULL)
			ep.transport->release(&ep);
		endpoint_clear(&ep);
		have_ep = 0;
	}
}
