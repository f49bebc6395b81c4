/* SPDX-License-Identifier: ISC */

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
	.tls_handshake_timeout_ms = 10000,
	.connect_timeout_ms = 10000,
	.backend_wait_ms = 30000,
	.close_timeout_ms = 60000,
	.shutdown_timeout_ms = 10000,
	.high_water = 512 * 1024,
	.low_water = 128 * 1024,
	.runtime_side = SIDE_LOCAL,
	.log_level = LL_INFO,
	.max_sessions = 1024,
	.max_sessions_per_peer = 64,
	.max_runtimes = 256,
	.max_runtimes_per_peer = 32,
	.offer_timeout_ms = 600000,
};

struct event_base	*base;
int			 draining;
const struct frontend	*frontend;

static struct event	 shutdown_timer;
static struct settings	 default_settings;
static const char	*config_path;

/* Settings given on the command line: they win over the file's. */
static struct {
	int		 ch;
	const char	*arg;
}			 cmdline[32];
static int		 ncmdline;

enum {
	OPT_HANDSHAKE_TIMEOUT = 256,
	OPT_CONNECT_TIMEOUT,
	OPT_BACKEND_WAIT,
	OPT_CLOSE_TIMEOUT,
	OPT_SHUTDOWN_TIMEOUT,
	OPT_BUFFER_SIZE,
	OPT_RUNTIME,
	OPT_UNSAFE_LISTEN,
	OPT_TLS_HANDSHAKE_TIMEOUT,
	OPT_MAX_SESSIONS,
	OPT_MAX_SESSIONS_PER_PEER,
	OPT_IDLE_TIMEOUT,
	OPT_USER,
	OPT_GROUP,
	OPT_ALLOW_CORE_DUMPS,
	OPT_MAX_RUNTIMES,
	OPT_MAX_RUNTIMES_PER_PEER,
	OPT_OFFER_TIMEOUT
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
	{ "config", required_argument, NULL, 'f' },
	{ "check", no_argument, NULL, 'n' },
	{ "tls-handshake-timeout", required_argument, NULL,
	    OPT_TLS_HANDSHAKE_TIMEOUT },
	{ "max-sessions", required_argument, NULL, OPT_MAX_SESSIONS },
	{ "max-sessions-per-peer", required_argument, NULL,
	    OPT_MAX_SESSIONS_PER_PEER },
	{ "idle-timeout", required_argument, NULL, OPT_IDLE_TIMEOUT },
	{ "max-runtimes", required_argument, NULL, OPT_MAX_RUNTIMES },
	{ "max-runtimes-per-peer", required_argument, NULL,
	    OPT_MAX_RUNTIMES_PER_PEER },
	{ "offer-timeout", required_argument, NULL, OPT_OFFER_TIMEOUT },
	{ "user", required_argument, NULL, OPT_USER },
	{ "group", required_argument, NULL, OPT_GROUP },
	{ "allow-core-dumps", no_argument, NULL, OPT_ALLOW_CORE_DUMPS },
	{ NULL, 0, NULL, 0 }
};

static void __dead
usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: dsroute [options] LOCAL REMOTE\n"
	    "       dsroute [options] -f FILE\n"
	    "       dsroute client-server|server-server|server-client|"
	    "client-client [options]\n"
	    "       dsroute android|android-emu|ios|ios-sim [options]\n"
	    "              (dotnet-dsrouter's command line: dsroute android "
	    "-h)\n"
	    "\n"
	    "endpoints:\n"
	    "  uds:PATH[,listen|,connect][,mode=0600][,owner=U][,group=G]\n"
	    "  tcp:HOST:PORT[,listen|,connect]      [v6]:PORT, *:PORT, "
	    "PORT 0 = any\n"
	    "  access control on either: ,policy=ROLE ,allow=CMD ,deny=CMD "
	    ",ROLE=PEER\n"
	    "  listeners: ,advertise=PEER|any|none  who may offer itself as "
	    "a runtime\n"
	    "  connect endpoints: ,peer=runtime|tool  what listens there "
	    "(runtime)\n"
	    "  tls:HOST:PORT,listen,cert=F,key=F,ca=F[,verify=required|"
	    "optional|none]\n"
	    "      [,allow-cn=CN][,allow-san=dns:|uri:|ip:NAME]"
	    "[,allow-fp=SHA256]\n"
	    "  tls:HOST:PORT,connect[,ca=F][,cert=F,key=F][,sni=NAME]"
	    "[,verify=required|none]\n"
	    "\n"
	    "options:\n"
	    "  -f, --config FILE           run the routes of FILE "
	    "(dsroute.conf(5))\n"
	    "  -n, --check                 check the endpoints or FILE, "
	    "then exit\n"
	    "  -v, --verbose LEVEL         none, critical, error, warning, "
	    "info, debug, trace\n"
	    "      --handshake-timeout T   first message deadline (5s)\n"
	    "      --tls-handshake-timeout T  TLS handshake deadline (10s)\n"
	    "      --connect-timeout T     dialling deadline (10s)\n"
	    "      --backend-wait T        wait for a parked runtime (30s)\n"
	    "      --close-timeout T       tool's grace after the runtime "
	    "ends (60s)\n"
	    "      --offer-timeout T       a listening tool's wait for its "
	    "command (600s)\n"
	    "      --shutdown-timeout T    drain deadline on SIGTERM (10s)\n"
	    "      --buffer-size N         high water mark per direction "
	    "(512k)\n"
	    "      --runtime local|remote  client-client: the runtime's "
	    "side (local)\n"
	    "      --idle-timeout T        close a forwarding session quiet "
	    "that long (off)\n"
	    "      --max-sessions N        accepted connections open at "
	    "once (1024)\n"
	    "      --max-sessions-per-peer N  of them from one uid, address "
	    "or cert (64)\n"
	    "      --max-runtimes N        runtime connections parked at "
	    "once (256)\n"
	    "      --max-runtimes-per-peer N  of them from one peer (32)\n"
	    "      --unsafe-listen         allow plaintext TCP beyond "
	    "loopback\n"
	    "      --user USER, --group GROUP  drop to them once listening\n"
	    "      --allow-core-dumps      let the process dump core (it "
	    "holds TLS keys)\n"
	    "  -h, --help                  this text\n"
	    "  -V, --version               the version\n"
	    "\n"
	    "See dsroute(1).\n");
	exit(status);
}

static int
option_ms(const char *arg, int allow_zero, int *ms, char *err, size_t len)
{
	if (parse_ms(arg, ms) == -1 || (*ms == 0 && !allow_zero)) {
		snprintf(err, len, "give a duration such as 5, 0.5 or 500ms");
		return (-1);
	}
	return (0);
}

/* A count from 1 to 1,000,000. */
static int
option_count(const char *arg, int *n, char *err, size_t len)
{
	char	*end;
	long	 v;

	v = strtol(arg, &end, 10);
	if (arg[0] < '0' || arg[0] > '9' || *end != '\0' || v < 1 ||
	    v > 1000000) {
		snprintf(err, len, "give a number from 1 to 1000000");
		return (-1);
	}
	*n = (int)v;
	return (0);
}

/* A flag: given alone on the command line, or yes or no in the file. */
static int
option_flag(const char *arg, int *flag, char *err, size_t len)
{
	if (arg == NULL || strcmp(arg, "yes") == 0 ||
	    strcmp(arg, "true") == 0 || strcmp(arg, "1") == 0)
		*flag = 1;
	else if (strcmp(arg, "no") == 0 || strcmp(arg, "false") == 0 ||
	    strcmp(arg, "0") == 0)
		*flag = 0;
	else {
		snprintf(err, len, "give yes or no");
		return (-1);
	}
	return (0);
}

/* A user or group name or number, checked now, used after start-up. */
static int
option_id(const char *arg, int is_user, char *dst, size_t dstlen, char *err,
    size_t len)
{
	uid_t	 uid;
	gid_t	 gid;

	if (strlen(arg) >= dstlen || (is_user ? parse_uid(arg, &uid) :
	    parse_gid(arg, &gid)) == -1) {
		snprintf(err, len, "no such %s", is_user ? "user" : "group");
		return (-1);
	}
	snprintf(dst, dstlen, "%s", arg);
	return (0);
}

/*
 * Apply one setting (an option other than -h, -V, -f and -n) to st; a
 * flag's arg is NULL on the command line, a boolean in the file.  Return
 * -1 with a message in err if the value is wrong.
 */
static int
option_apply(struct settings *st, int ch, const char *arg, char *err,
    size_t len)
{
	enum log_level	 level;

	switch (ch) {
	case 'v':
		if (log_level_parse(arg, &level) == -1) {
			snprintf(err, len, "give none, critical, error, "
			    "warning, info, debug or trace");
			return (-1);
		}
		st->log_level = level;
		return (0);
	case OPT_HANDSHAKE_TIMEOUT:
		return (option_ms(arg, 0, &st->handshake_timeout_ms, err, len));
	case OPT_TLS_HANDSHAKE_TIMEOUT:
		return (option_ms(arg, 0, &st->tls_handshake_timeout_ms, err,
		    len));
	case OPT_CONNECT_TIMEOUT:
		return (option_ms(arg, 0, &st->connect_timeout_ms, err, len));
	case OPT_BACKEND_WAIT:
		return (option_ms(arg, 1, &st->backend_wait_ms, err, len));
	case OPT_CLOSE_TIMEOUT:
		return (option_ms(arg, 0, &st->close_timeout_ms, err, len));
	case OPT_SHUTDOWN_TIMEOUT:
		return (option_ms(arg, 1, &st->shutdown_timeout_ms, err, len));
	case OPT_BUFFER_SIZE:
		/* The first message (up to 64 KiB) must fit. */
		if (parse_size(arg, &st->high_water) == -1 ||
		    st->high_water < 128 * 1024 ||
		    st->high_water > 64 * 1024 * 1024) {
			snprintf(err, len, "give a size from 128k to 64m");
			return (-1);
		}
		st->low_water = st->high_water / 4;
		return (0);
	case OPT_RUNTIME:
		if (strcmp(arg, "local") == 0)
			st->runtime_side = SIDE_LOCAL;
		else if (strcmp(arg, "remote") == 0)
			st->runtime_side = SIDE_REMOTE;
		else {
			snprintf(err, len, "give local or remote");
			return (-1);
		}
		return (0);
	case OPT_UNSAFE_LISTEN:
		return (option_flag(arg, &st->unsafe_listen, err, len));
	case OPT_MAX_SESSIONS:
		st->max_sessions_given = 1;
		return (option_count(arg, &st->max_sessions, err, len));
	case OPT_MAX_SESSIONS_PER_PEER:
		return (option_count(arg, &st->max_sessions_per_peer, err,
		    len));
	case OPT_IDLE_TIMEOUT:
		return (option_ms(arg, 1, &st->idle_timeout_ms, err, len));
	case OPT_OFFER_TIMEOUT:
		return (option_ms(arg, 0, &st->offer_timeout_ms, err, len));
	case OPT_MAX_RUNTIMES:
		return (option_count(arg, &st->max_runtimes, err, len));
	case OPT_MAX_RUNTIMES_PER_PEER:
		return (option_count(arg, &st->max_runtimes_per_peer, err,
		    len));
	case OPT_USER:
		return (option_id(arg, 1, st->user, sizeof(st->user), err,
		    len));
	case OPT_GROUP:
		return (option_id(arg, 0, st->group, sizeof(st->group), err,
		    len));
	case OPT_ALLOW_CORE_DUMPS:
		return (option_flag(arg, &st->allow_core_dumps, err, len));
	}
	snprintf(err, len, "not a setting");
	return (-1);
}

static const char *
option_name(int ch)
{
	const struct option	*o;

	for (o = long_options; o->name != NULL; o++) {
		if (o->val == ch)
			break;
	}
	return (o->name != NULL ? o->name : "?");
}

/* A setting of the configuration file, named as its long option. */
static int
setting_by_name(void *arg, const char *name, const char *value, char *err,
    size_t len)
{
	const struct option	*o;
	char			 why[128];

	for (o = long_options; o->name != NULL; o++) {
		if (strcmp(o->name, name) == 0)
			break;
	}
	if (o->name == NULL || o->val == 'h' || o->val == 'V' ||
	    o->val == 'f' || o->val == 'n') {
		snprintf(err, len, "unknown setting '%s'", name);
		return (-1);
	}
	if (option_apply(arg, o->val, value, why, sizeof(why)) == -1) {
		snprintf(err, len, "%s = %s: %s", name, value, why);
		return (-1);
	}
	return (0);
}

/*
 * Load the configuration file into cfg and st: the defaults, then the
 * file's settings, then the command line's, which win.
 */
static int
load_config(struct config *cfg, struct settings *st)
{
	char	 err[128];
	int	 i;

	*st = default_settings;
	if (config_load(cfg, config_path, setting_by_name, st) == -1)
		return (-1);
	for (i = 0; i < ncmdline; i++)
		(void)option_apply(st, cmdline[i].ch, cmdline[i].arg, err,
		    sizeof(err));
	return (0);
}

/* Print or log every error of a configuration file, as file:line: message. */
static void
config_report(const struct config *cfg, int to_log)
{
	const struct config_error	*e;
	char				 where[32] = "";
	size_t				 i;

	for (i = 0; i < cfg->nerrors; i++) {
		e = &cfg->errors[i];
		if (e->line > 0)
			snprintf(where, sizeof(where), ":%d", e->line);
		else
			where[0] = '\0';
		if (to_log)
			log_error("%s%s: %s", config_path, where, e->message);
		else
			fprintf(stderr, "%s%s: %s\n", config_path, where,
			    e->message);
	}
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

/* Drain and stop, as SIGTERM does: for a front end's own reasons to quit. */
void
dsroute_shutdown(void)
{
	drain();
}

/* Reload the configuration file: all of it, or nothing. */
static void
reload_config(void)
{
	struct config	 cfg;
	struct settings	 st;
	int		 waiting;

	if (load_config(&cfg, &st) == -1) {
		config_report(&cfg, 1);
		log_error("reload: %s has %zu error%s; the running "
		    "configuration stays", config_path, cfg.nerrors,
		    cfg.nerrors == 1 ? "" : "s");
		config_free(&cfg);
		return;
	}
	waiting = config_apply(&cfg);
	if (st.runtime_side != settings.runtime_side ||
	    st.unsafe_listen != settings.unsafe_listen) {
		log_warning("reload: runtime and unsafe-listen apply when "
		    "routes start; that takes a restart");
		st.runtime_side = settings.runtime_side;
		st.unsafe_listen = settings.unsafe_listen;
		waiting++;
	}
	if (strcmp(st.user, settings.user) != 0 ||
	    strcmp(st.group, settings.group) != 0 ||
	    st.allow_core_dumps != settings.allow_core_dumps) {
		log_warning("reload: user, group and allow-core-dumps apply "
		    "at start-up; that takes a restart");
		memcpy(st.user, settings.user, sizeof(st.user));
		memcpy(st.group, settings.group, sizeof(st.group));
		st.allow_core_dumps = settings.allow_core_dumps;
		waiting++;
	}
	settings = st;
	log_set_level(settings.log_level);
	limit_budget();
	config_free(&cfg);
	log_info("reloaded %s%s", config_path, waiting == 0 ? "" :
	    "; the changes logged above wait for a restart");
}

/*
 * SIGHUP: reload what can change without a restart, the configuration
 * file and the TLS credentials.  Each part loads its new state whole and
 * keeps the old one when that fails; sessions in flight keep what they
 * started with.
 */
static void
reload(void)
{
	if (config_path != NULL)
		reload_config();
	if (route_reload_tls() == 0 && config_path == NULL)
		log_info("nothing to reload: no configuration file (-f) and "
		    "no TLS endpoint");
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
	sigset_t	 block;
	char		 err[512];
	size_t		 i;

	if (privilege_harden(err, sizeof(err)) == -1)
		fatalx("%s", err);
	limit_raise_nofile();
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
		if (route_start(r, err, sizeof(err)) == -1) {
			/* Leave no socket file of the routes already open. */
			TAILQ_FOREACH(r, &routes, entry) {
				if (r->started)
					route_stop_listening(r);
			}
			fatalx("%s", err);
		}
	}
	/* Every listener is bound and every key read: drop privileges. */
	if (privilege_drop(err, sizeof(err)) == -1) {
		TAILQ_FOREACH(r, &routes, entry)
			route_stop_listening(r);
		fatalx("%s", err);
	}

	log_info("dsroute %s started, pid %ld", PACKAGE_VERSION,
	    (long)getpid());
	TAILQ_FOREACH(r, &routes, entry)
		route_describe(r);
	limit_budget();
	if (frontend != NULL && frontend->start != NULL)
		frontend->start();
	log_info("ready");

	event_base_dispatch(base);

	/*
	 * Freeing the signal events restores the default actions: block
	 * the signals, so a late SIGTERM cannot kill an orderly exit.
	 */
	sigemptyset(&block);
	for (i = 0; i < sizeof(signals) / sizeof(signals[0]); i++)
		sigaddset(&block, signals[i]);
	sigprocmask(SIG_BLOCK, &block, NULL);

	session_close_all("router stopped");
	while ((r = TAILQ_FIRST(&routes)) != NULL) {
		TAILQ_REMOVE(&routes, r, entry);
		route_free(r);
	}
	if (frontend != NULL && frontend->stop != NULL)
		frontend->stop();
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
	struct config	 cfg;
	struct route	*r;
	const char	*name;
	char		 err[512];
	int		 ch, check = 0;

	signal(SIGPIPE, SIG_IGN);

	/* The dotnet-dsrouter command line: by name, or by its commands. */
	name = strrchr(argv[0], '/') != NULL ? strrchr(argv[0], '/') + 1 :
	    argv[0];
	if (strcmp(name, "dotnet-dsrouter") == 0 ||
	    (argc > 1 && dsrouter_is_command(argv[1])))
		return (dsrouter_main(argc, argv));

	default_settings = settings;
	while ((ch = getopt_long(argc, argv, "f:hnVv:", long_options,
	    NULL)) != -1) {
		switch (ch) {
		case 'h':
			usage(0);
		case 'V':
			printf("dsroute %s\n", PACKAGE_VERSION);
			exit(0);
		case 'f':
			config_path = optarg;
			break;
		case 'n':
			check = 1;
			break;
		case '?':
			usage(1);
		default:
			if (option_apply(&settings, ch, optarg, err,
			    sizeof(err)) == -1)
				fatalx("--%s %s: %s", option_name(ch), optarg,
				    err);
			if (ch == 'v')
				log_set_level(settings.log_level);
			if (ncmdline == sizeof(cmdline) / sizeof(cmdline[0]))
				fatalx("too many options");
			cmdline[ncmdline].ch = ch;
			cmdline[ncmdline++].arg = optarg;
			break;
		}
	}
	argc -= optind;
	argv += optind;

	if (config_path != NULL) {
		if (argc != 0)
			usage(1);
		if (load_config(&cfg, &settings) == -1) {
			config_report(&cfg, !check);
			if (!check)
				log_critical("%s: %zu error%s", config_path,
				    cfg.nerrors, cfg.nerrors == 1 ? "" : "s");
			config_free(&cfg);
			exit(1);
		}
		while ((r = TAILQ_FIRST(&cfg.routes)) != NULL) {
			TAILQ_REMOVE(&cfg.routes, r, entry);
			TAILQ_INSERT_TAIL(&routes, r, entry);
		}
		config_free(&cfg);
	} else {
		if (argc != 2)
			usage(1);
		if ((r = route_new("main", argv[0], argv[1], err,
		    sizeof(err))) == NULL) {
			if (check) {
				fprintf(stderr, "%s\n", err);
				exit(1);
			}
			fatalx("%s", err);
		}
		TAILQ_INSERT_TAIL(&routes, r, entry);
	}
	if (check) {
		while ((r = TAILQ_FIRST(&routes)) != NULL) {
			TAILQ_REMOVE(&routes, r, entry);
			route_free(r);
		}
		printf("configuration OK\n");
		return (0);
	}
	log_set_level(settings.log_level);
	return (dsroute_run());
}
