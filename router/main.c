/*
 * Copyright (c) 2026 The dsroute authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * dsroute: route the .NET diagnostic IPC protocol between a local endpoint
 * and the network.  main() parses the command line, starts the routes and
 * runs the event loop until a signal drains it.
 */

#include "config.h"

#include <sys/types.h>

#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "dsroute.h"

struct settings settings = {
	.handshake_timeout_ms = 5000,
	.connect_timeout_ms = 10000,
	.backend_wait_ms = 30000,
	.close_timeout_ms = 60000,
	.shutdown_timeout_ms = 10000,
	.high_water = 512 * 1024,
	.low_water = 128 * 1024,
	.runtime_side = SIDE_LOCAL,
};

struct event_base	*base;
int			 draining;

static struct event	 shutdown_timer;

enum {
	OPT_HANDSHAKE_TIMEOUT = 256,
	OPT_CONNECT_TIMEOUT,
	OPT_BACKEND_WAIT,
	OPT_CLOSE_TIMEOUT,
	OPT_SHUTDOWN_TIMEOUT,
	OPT_BUFFER_SIZE,
	OPT_RUNTIME,
	OPT_UNSAFE_LISTEN
};

static const struct option long_options[] = {
	{ "verbose", required_argument, NULL, 'v' },
	{ "help", no_argument, NULL, 'h' },
	{ "version", no_argument, NULL, 'V' },
	{ "handshake-timeout", required_argument, NULL, OPT_HANDSHAKE_TIMEOUT },
	{ "connect-timeout", required_argument, NULL, OPT_CONNECT_TIMEOUT },
	{ "backend-wait", required_argument, NULL, OPT_BACKEND_WAIT },
	{ "close-timeout", required_argument, NULL, OPT_CLOSE_TIMEOUT },
	{ "shutdown-timeout", required_argument, NULL, OPT_SHUTDOWN_TIMEOUT },
	{ "buffer-size", required_argument, NULL, OPT_BUFFER_SIZE },
	{ "runtime", required_argument, NULL, OPT_RUNTIME },
	{ "unsafe-listen", no_argument, NULL, OPT_UNSAFE_LISTEN },
	{ NULL, 0, NULL, 0 }
};

static void __dead
usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: dsroute [options] LOCAL REMOTE\n"
	    "\n"
	    "endpoints:\n"
	    "  uds:PATH[,listen|,connect][,mode=0600][,owner=U][,group=G]\n"
	    "  tcp:HOST:PORT[,listen|,connect]      [v6]:PORT, *:PORT, "
	    "PORT 0 = any\n"
	    "\n"
	    "options:\n"
	    "  -v, --verbose LEVEL         none, critical, error, warning, "
	    "info, debug, trace\n"
	    "      --handshake-timeout T   first message deadline (5s)\n"
	    "      --connect-timeout T     dialling deadline (10s)\n"
	    "      --backend-wait T        wait for a parked runtime (30s)\n"
	    "      --close-timeout T       tool's grace after the runtime "
	    "ends (60s)\n"
	    "      --shutdown-timeout T    drain deadline on SIGTERM (10s)\n"
	    "      --buffer-size N         high water mark per direction "
	    "(512k)\n"
	    "      --runtime local|remote  client-client: the runtime's "
	    "side (local)\n"
	    "      --unsafe-listen         allow plaintext TCP beyond "
	    "loopback\n"
	    "  -h, --help                  this text\n"
	    "  -V, --version               the version\n"
	    "\n"
	    "See dsroute(1).\n");
	exit(status);
}

static int
option_ms(const char *name, const char *arg, int allow_zero)
{
	int	 ms;

	if (parse_ms(arg, &ms) == -1 || (ms == 0 && !allow_zero))
		fatalx("--%s %s: give a duration such as 5, 0.5 or 500ms",
		    name, arg);
	return (ms);
}

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
	struct timeval	 tv;
	int		 n = 0;
	struct session	*s;

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
	if (n == 0) {
		event_base_loopexit(base, NULL);
		return;
	}
	log_info("draining %d session%s (at most %.1fs)", n, n == 1 ? "" : "s",
	    settings.shutdown_timeout_ms / 1000.0);
	timeval_ms(&tv, settings.shutdown_timeout_ms);
	evtimer_add(&shutdown_timer, &tv);
}

/*
 * SIGHUP: reload what can change without a restart.  Each part loads its
 * new state whole and keeps the old one when that fails; sessions in
 * flight keep what they started with.
 */
static void
reload(void)
{
	log_info("nothing to reload");
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
		drain();
		break;
	case SIGHUP:
		log_info("SIGHUP received");
		reload();
		break;
	}
}

/*
 * Run the routes already on the list: open them, serve until a signal
 * drains the router, then free everything.  Every front end (the native
 * command line, the dotnet-dsrouter commands, a configuration file) ends
 * here.  Return the exit status.
 */
int
dsroute_run(void)
{
	struct route	*r;
	struct event	*sig[3];
	static const int signals[] = { SIGTERM, SIGINT, SIGHUP };
	sigset_t	 stopping;
	char		 err[512];
	size_t		 i;

	event_set_log_callback(libevent_log);
	if ((base = event_base_new()) == NULL)
		fatalx("cannot start the event loop");
	evtimer_assign(&shutdown_timer, base, shutdown_timeout_cb, NULL);

	/* Signals first: a socket that exists can be stopped cleanly. */
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++) {
		sig[i] = evsignal_new(base, signals[i], signal_cb, NULL);
		if (sig[i] == NULL || evsignal_add(sig[i], NULL) == -1)
			fatalx("cannot watch signal %d", signals[i]);
	}
	TAILQ_FOREACH(r, &routes, entry) {
		if (route_start(r, err, sizeof(err)) == -1)
			fatalx("%s", err);
	}

	log_info("dsroute %s started, pid %ld", PACKAGE_VERSION,
	    (long)getpid());
	TAILQ_FOREACH(r, &routes, entry)
		route_describe(r);
	log_info("ready");

	event_base_dispatch(base);

	/*
	 * Stopping already: freeing the signal events below restores the
	 * default actions, and a further SIGTERM must not cut the clean-up
	 * short (exit status 143).  Hold such signals until we exit.
	 */
	sigemptyset(&stopping);
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		sigaddset(&stopping, signals[i]);
	sigprocmask(SIG_BLOCK, &stopping, NULL);

	session_close_all("router stopped");
	while ((r = TAILQ_FIRST(&routes)) != NULL) {
		TAILQ_REMOVE(&routes, r, entry);
		route_free(r);
	}
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		event_free(sig[i]);
	evtimer_del(&shutdown_timer);
	event_base_free(base);
	log_info("stopped");
	return (0);
}

int
main(int argc, char *argv[])
{
	struct route	*r;
	enum log_level	 level;
	char		 err[512];
	int		 ch;

	signal(SIGPIPE, SIG_IGN);

	while ((ch = getopt_long(argc, argv, "hVv:", long_options,
	    NULL)) != -1) {
		switch (ch) {
		case 'v':
			if (log_level_parse(optarg, &level) == -1)
				fatalx("-v %s: give none, critical, error, "
				    "warning, info, debug or trace", optarg);
			log_set_level(level);
			break;
		case 'h':
			usage(0);
		case 'V':
			printf("dsroute %s\n", PACKAGE_VERSION);
			exit(0);
		case OPT_HANDSHAKE_TIMEOUT:
			settings.handshake_timeout_ms = option_ms(
			    "handshake-timeout", optarg, 0);
			break;
		case OPT_CONNECT_TIMEOUT:
			settings.connect_timeout_ms = option_ms(
			    "connect-timeout", optarg, 0);
			break;
		case OPT_BACKEND_WAIT:
			settings.backend_wait_ms = option_ms("backend-wait",
			    optarg, 1);
			break;
		case OPT_CLOSE_TIMEOUT:
			settings.close_timeout_ms = option_ms("close-timeout",
			    optarg, 0);
			break;
		case OPT_SHUTDOWN_TIMEOUT:
			settings.shutdown_timeout_ms = option_ms(
			    "shutdown-timeout", optarg, 1);
			break;
		case OPT_BUFFER_SIZE:
			/* The first message (up to 64 KiB) must fit. */
			if (parse_size(optarg, &settings.high_water) == -1 ||
			    settings.high_water < 128 * 1024 ||
			    settings.high_water > 64 * 1024 * 1024)
				fatalx("--buffer-size %s: give a size from 128k "
				    "to 64m", optarg);
			settings.low_water = settings.high_water / 4;
			break;
		case OPT_RUNTIME:
			if (strcmp(optarg, "local") == 0)
				settings.runtime_side = SIDE_LOCAL;
			else if (strcmp(optarg, "remote") == 0)
				settings.runtime_side = SIDE_REMOTE;
			else
				fatalx("--runtime %s: give local or remote",
				    optarg);
			break;
		case OPT_UNSAFE_LISTEN:
			settings.unsafe_listen = 1;
			break;
		default:
			usage(1);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc != 2)
		usage(1);

	if ((r = route_new("main", argv[0], argv[1], err, sizeof(err))) ==
	    NULL)
		fatalx("%s", err);
	TAILQ_INSERT_TAIL(&routes, r, entry);
	return (dsroute_run());
}
