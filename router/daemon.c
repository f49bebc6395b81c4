/* SPDX-License-Identifier: ISC */

/*
 * The daemon: run the routes a front end made.  Take the sockets a
 * service manager passed, harden the process, make the event loop, watch
 * the signals, start the routes, drop privileges, then serve until
 * SIGTERM or SIGINT drains the sessions; SIGHUP reloads what a front end
 * and the transports can reload.  A service manager is told of each step
 * (notify.c).  Every front end ends here, and nothing here knows which
 * one it is.
 */

#include "config.h"

#include <sys/types.h>

#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/child.h"
#include "platform/notify.h"
#include "platform/platform.h"
#include "router/daemon.h"
#include "router/engine.h"
#include "router/metrics.h"
#include "router/settings.h"
#include "transports/transport.h"


static const struct frontend *frontend;
static struct event	 shutdown_timer;

/* Stop now: close everything and leave the loop. */
static void
stop_now(const char *reason)
{
	session_close_all(reason);
	event_base_loopexit(base, NULL);
}

static void
shutdown_timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	log_info("drain deadline reached");
	stop_now("router shutting down");
}

/*
 * SIGTERM or SIGINT: stop accepting, let forwarding sessions finish within
 * the shutdown timeout, then exit.  A second signal stops at once.
 */
static void
drain(void)
{
	struct route	*r;
	struct session	*s;
	struct timeval	 tv;
	int		 n = 0;

	if (draining) {
		log_info("second signal: stopping now");
		stop_now("router stopped");
		return;
	}
	draining = 1;
	TAILQ_FOREACH(r, &routes, entry) {
		route_stop_listening(r);
		runtime_drop_all(r);
	}
	session_drain_all();
	TAILQ_FOREACH(s, &sessions, entry)
		n++;
	notify_stopping("stopping: draining %d session%s", n,
	    n == 1 ? "" : "s");
	if (n == 0) {
		event_base_loopexit(base, NULL);
		return;
	}
	log_info("draining %d session%s (at most %.1fs)", n, n == 1 ? "" : "s",
	    settings.shutdown_timeout_ms / 1000.0);
	timeval_ms(&tv, settings.shutdown_timeout_ms);
	evtimer_add(&shutdown_timer, &tv);
}

/* Drain and stop, as SIGTERM does: for a front end's own reasons to quit. */
void
daemon_shutdown(void)
{
	drain();
}

/* What the router serves, for a service manager's status line. */
static const char *
serving(void)
{
	static char	 buf[64];
	struct route	*r;
	int		 n = 0;

	TAILQ_FOREACH(r, &routes, entry)
		n++;
	snprintf(buf, sizeof(buf), "serving %d route%s", n, n == 1 ? "" : "s");
	return (buf);
}

/*
 * SIGHUP: reload what can change without a restart: the front end's (a
 * configuration file) and the transports' credentials.  Each part loads
 * its new state whole and keeps the old one when that fails; sessions in
 * flight keep what they started with.  A service manager is told that
 * the router reloads, and then that it serves again, with what it kept.
 */
static void
reload(void)
{
	int	 front = 0, tr, m;

	notify_reloading();
	if (frontend->reload != NULL)
		front = frontend->reload();
	transport_env.ws_ping_interval_ms = settings.ws_ping_interval_ms;
	tr = route_reload_transports();
	m = metrics_http_reload();
	if (tr == 0 && !front && !m)
		log_info("nothing to reload: no configuration file and no "
		    "endpoint with credentials");
	else
		metrics.reloads[front != -1 && tr != -1 && m != -1]++;
	if (front == -1 || tr == -1 || m == -1)
		notify_ready("reload failed, the running configuration "
		    "stays (see the log); %s", serving());
	else
		notify_ready("reloaded; %s", serving());
}

/* Route libevent's own messages into our log. */
static void
libevent_log(int severity, const char *msg)
{
	switch (severity) {
	case EVENT_LOG_DEBUG:
		log_trace("libevent: %s", msg);
		break;
	case EVENT_LOG_MSG:
		log_debug("libevent: %s", msg);
		break;
	case EVENT_LOG_WARN:
		log_warning("libevent: %s", msg);
		break;
	default:
		log_error("libevent: %s", msg);
		break;
	}
}

static void
signal_cb(evutil_socket_t sig, short what, void *arg)
{
	switch (sig) {
	case SIGTERM:
	case SIGINT:
		log_info("%s received", sig == SIGTERM ? "SIGTERM" : "SIGINT");
		/* A front end's application is told first, and ends us. */
		if (frontend->signal != NULL && frontend->signal(sig))
			break;
		drain();
		break;
	case SIGHUP:
		log_info("SIGHUP received");
		reload();
		break;
	}
}

/* Stop listening on every route started, so that no socket file stays. */
static void __dead
start_failed(const char *err)
{
	struct route	*r;

	TAILQ_FOREACH(r, &routes, entry) {
		if (r->started)
			route_stop_listening(r);
	}
	fatalx("%s", err);
}

/*
 * Run the routes a front end put on the list: open them, serve until a
 * signal drains the router, then free everything.  Return the exit
 * status.
 */
int
daemon_run(const struct frontend *fe)
{
	struct route	*r;
	struct event	*sig[8];
	const int	*signals;
	size_t		 nsignals;
	struct log_rec	 rec;
	char		 err[512];
	size_t		 i;
	int		 fd, is_socket;

	frontend = fe;
	fd = platform_log_fd(&is_socket);
	log_open(fd, is_socket);
	/* What a service manager passed, before any program we run sees it. */
	if (inherit_open(err, sizeof(err)) == -1)
		fatalx("%s", err);
	notify_open();
	if (platform_harden(settings.allow_core_dumps, err, sizeof(err)) == -1)
		fatalx("%s", err);
	platform_raise_nofile();
	event_set_log_callback(libevent_log);
	if ((base = event_base_new()) == NULL)
		fatalx("cannot start the event loop");
	/* The layers below the engine watch their own events on it. */
	child_init(base);
	transport_env.base = base;
	transport_env.ws_ping_interval_ms = settings.ws_ping_interval_ms;
	evtimer_assign(&shutdown_timer, base, shutdown_timeout_cb, NULL);
	log_attach(base);

	/* Signals first: a socket that exists can be stopped cleanly. */
	nsignals = platform_signals(&signals);
	if (nsignals > sizeof(sig) / sizeof(sig[0]))
		fatalx("too many signals to watch");
	for (i = 0; i < nsignals; i++) {
		sig[i] = evsignal_new(base, signals[i], signal_cb, NULL);
		if (sig[i] == NULL || evsignal_add(sig[i], NULL) == -1)
			fatalx("cannot watch signal %d", signals[i]);
	}
	TAILQ_FOREACH(r, &routes, entry) {
		if (route_start(r, err, sizeof(err)) == -1)
			start_failed(err);
	}
	/* The metrics listener may take a passed socket too. */
	if (metrics_http_start(err, sizeof(err)) == -1)
		start_failed(err);
	if (inherit_unclaimed(err, sizeof(err)) == -1)
		start_failed(err);
	/* Every listener is bound and every key read: drop privileges. */
	if (platform_drop(settings.user, settings.group,
	    settings.allow_core_dumps, err, sizeof(err)) == -1)
		start_failed(err);

	if (log_begin(&rec, LL_INFO, "start")) {
		log_say(&rec, "dsroute %s started, pid %ld", PACKAGE_VERSION,
		    (long)getpid());
		log_str(&rec, "version", PACKAGE_VERSION, LF_JSON);
		log_u64(&rec, "pid", (uint64_t)getpid(), LF_JSON);
		log_end(&rec);
	}
	TAILQ_FOREACH(r, &routes, entry)
		route_describe(r);
	metrics_http_describe();
	limit_reserve(metrics_http_fds());
	limit_budget();
	if (fe->start != NULL && fe->start() == -1)
		drain();	/* it said why; nothing is served */
	else {
		if (log_begin(&rec, LL_INFO, "ready")) {
			log_say(&rec, "ready");
			log_end(&rec);
		}
		notify_ready("ready; %s", serving());
	}

	event_base_dispatch(base);

	/*
	 * Freeing the signal events restores the default actions: block
	 * the signals, so a late SIGTERM cannot kill an orderly exit.
	 */
	platform_block_signals(signals, nsignals);
	session_close_all("router stopped");
	metrics_http_stop();
	while ((r = TAILQ_FIRST(&routes)) != NULL) {
		TAILQ_REMOVE(&routes, r, entry);
		route_free(r);
	}
	if (fe->stop != NULL)
		fe->stop();
	/* The mirrors' stand-ins were told to end: none is left a zombie. */
	child_cleanup();
	inherit_close();
	notify_close();
	for (i = 0; i < nsignals; i++)
		event_free(sig[i]);
	evtimer_del(&shutdown_timer);
	log_detach();
	event_base_free(base);
	base = NULL;
	log_info("stopped");
	log_flush(1000);
	return (fe->status != NULL ? fe->status(0) : 0);
}
