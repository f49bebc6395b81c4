/* SPDX-License-Identifier: ISC */

/*
 * dsroute's own command line: settings as long options (the settings
 * table makes the getopt table and --help), then two endpoints, LOCAL and
 * REMOTE, or a configuration file of routes with -f.  After -- comes an
 * application to run (launch.c); then one endpoint will do, the socket
 * its runtime dials being the router's own.  -n checks them and exits.
 * SIGHUP reloads the file, the command line's settings winning over it as
 * at start-up.
 */

#include "config.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/child.h"
#include "router/conffile.h"
#include "router/daemon.h"
#include "router/engine.h"
#include "router/frontend.h"
#include "router/settings.h"

#define OPT_SETTING	256		/* + the index in settings_table */
#define OPT_SYNTAX	255		/* --syntax */

static const char	*config_path;

/* Settings given on the command line: they win over the file's. */
static struct {
	const struct setting	*s;
	const char		*arg;
}			 given[64];
static int		 ngiven;

static int	 cli_reload(void);
static int	 cli_start(void);
static void	 cli_stop(void);

static const struct frontend cli = {
	.name = "dsroute",
	.start = cli_start,
	.stop = cli_stop,
	.reload = cli_reload,
	.status = launch_status,
	.signal = launch_signal,
};

static void __dead
usage(int status)
{
	FILE	*fp = status == 0 ? stdout : stderr;

	fprintf(fp,
	    "usage: dsroute [options] LOCAL REMOTE\n"
	    "       dsroute [options] -f FILE\n"
	    "       dsroute [options] [LOCAL] REMOTE -- COMMAND [ARG...]\n"
	    "              (run COMMAND, its runtime dialling LOCAL or a "
	    "socket of ours)\n"
	    "       dsroute client-server|server-server|server-client|"
	    "client-client|\n"
	    "               server-websocket|client-websocket [options]\n"
	    "       dsroute android|android-emu|ios|ios-sim [options]\n"
	    "              (dotnet-dsrouter's command line: dsroute android "
	    "-h)\n"
	    "       dsroute ps [--json] [--timeout T] [ENDPOINT | dir:[PATH]]\n"
	    "              (the runtimes a router or the local mirror knows: "
	    "dsroute ps -h)\n"
	    "\n"
	    "endpoints, TRANSPORT:ADDRESS[,option]...; ,listen or ,connect "
	    "sets the role:\n"
	    "  uds:PATH[,mode=0600][,owner=U][,group=G]  a Unix socket\n"
	    "  dir:[DIR]             the runtimes whose default sockets are "
	    "in DIR ($TMPDIR)\n"
	    "  dir:[DIR],listen      the mirror: the other side's runtimes, "
	    "as local ones\n"
	    "  proc:                 the runtimes of every process of this "
	    "host\n"
	    "  pipe:NAME             a Windows named pipe\n"
	    "  tcp:HOST:PORT         [v6]:PORT, *:PORT, PORT 0 = any\n"
	    "  tls:HOST:PORT,cert=F,key=F,ca=F[,verify=required|optional|"
	    "none]\n"
	    "  tls:HOST:PORT,connect[,ca=F][,cert=F,key=F][,sni=NAME]"
	    "[,verify=required|none]\n"
	    "  ws:HOST:PORT[/PATH][,origin=URL], wss:... with the tls: "
	    "options  WebSocket\n"
	    "  connect endpoints: ,peer=runtime|tool|router  what listens "
	    "there (runtime)\n"
	    "\n"
	    "access control, on either endpoint (dsroute(1), ACCESS "
	    "CONTROL):\n"
	    "  ,policy=ROLE          the others' role: none, observe, "
	    "operate, dump or full\n"
	    "                        (default: full for this uid and "
	    "root, remote: operate)\n"
	    "  ,ROLE=PEER            a role for uid:U gid:G addr:CIDR cn: "
	    "dns: uri: sha256:\n"
	    "  ,allow=CMD ,deny=CMD  add or take a command: ResumeRuntime, "
	    "GenerateCoreDump*\n"
	    "  ,dump-dir=DIR ,max-buffer-mb=N  where dumps go, how big a "
	    "trace's buffer\n"
	    "  ,app=PATTERN ,cmdline=PATTERN ,found=advertise|dir|proc|link  "
	    "which runtimes\n"
	    "  listeners: ,advertise=PEER|any|none  who may offer itself as "
	    "a runtime\n"
	    "  tls: ,allow-cn=CN ,allow-san=dns:|uri:|ip:|email:NAME "
	    ",allow-fp=SHA256\n"
	    "\n"
	    "options:\n");
	usage_option(fp, 'f', "--config FILE",
	    "run the routes of FILE (dsroute.conf(5))");
	usage_option(fp, 'n', "--check", "check the endpoints or FILE, then exit");
	usage_option(fp, 0, "--suspend",
	    "-- COMMAND: it waits for a tool to resume it");
	settings_usage(fp);
	usage_option(fp, 'h', "--help", "this text");
	usage_option(fp, 'V', "--version", "the version");
	fprintf(fp,
	    "Durations T are seconds, such as 5 or 0.5, or 500ms.\n"
	    "\n"
	    "See dsroute(1).\n");
	exit(status);
}

/*
 * A command line that is wrong as a whole: say why (unless getopt has),
 * and how it goes, in a few lines rather than the whole of --help.
 */
static void __dead
usage_error(const char *why)
{
	if (why != NULL)
		fprintf(stderr, "dsroute: %s\n", why);
	fprintf(stderr,
	    "usage: dsroute [options] LOCAL REMOTE, or dsroute [options] -f "
	    "FILE,\n"
	    "       such as dsroute uds:/tmp/dsroute/app.sock "
	    "tcp:127.0.0.1:9000\n"
	    "dsroute --help lists the endpoints and options; dsroute(1) "
	    "says the rest.\n");
	exit(1);
}

/* The getopt table: the settings', then the front end's own options. */
static struct option *
long_options(void)
{
	static const struct option own[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ "config", required_argument, NULL, 'f' },
		{ "check", no_argument, NULL, 'n' },
		{ "syntax", no_argument, NULL, OPT_SYNTAX },
		{ "suspend", no_argument, NULL, 'S' },
	};
	struct option		*o;
	const struct setting	*s;
	size_t			 n = 0, i;

	for (s = settings_table; s->name != NULL; s++)
		n++;
	o = xcalloc(n + sizeof(own) / sizeof(own[0]) + 1, sizeof(*o));
	for (i = 0; i < n; i++) {
		s = &settings_table[i];
		o[i].name = s->name;
		o[i].has_arg = s->type == ST_FLAG ? no_argument :
		    required_argument;
		o[i].val = s->letter != 0 ? s->letter : OPT_SETTING + (int)i;
	}
	memcpy(&o[n], own, sizeof(own));
	return (o);
}

/* The setting of a getopt value, or NULL. */
static const struct setting *
setting_of(int ch)
{
	const struct setting	*s;

	for (s = settings_table; s->name != NULL; s++) {
		if (ch == (s->letter != 0 ? s->letter :
		    OPT_SETTING + (int)(s - settings_table)))
			return (s);
	}
	return (NULL);
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

	settings_init(st);
	if (config_load(cfg, config_path, settings_set, st) == -1)
		return (-1);
	for (i = 0; i < ngiven; i++)
		(void)settings_apply(st, given[i].s, given[i].arg, err,
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

/* SIGHUP: reload the configuration file, all of it or nothing. */
static int
cli_reload(void)
{
	struct config	 cfg;
	struct settings	 st;
	struct log_rec	 r;
	char		 err[PATH_MAX + 1024];
	int		 waiting;

	if (config_path == NULL)
		return (0);
	if (load_config(&cfg, &st) == -1) {
		config_report(&cfg, 1);
		if (log_begin(&r, LL_ERROR, "reload")) {
			log_say(&r, "reload: %s has %zu error%s; the running "
			    "configuration stays", config_path, cfg.nerrors,
			    cfg.nerrors == 1 ? "" : "s");
			log_str(&r, "what", "config", LF_JSON);
			log_str(&r, "result", "failed", LF_JSON);
			log_str(&r, "config", config_path, LF_JSON);
			log_u64(&r, "errors", cfg.nerrors, LF_JSON);
			log_end(&r);
		}
		config_free(&cfg);
		return (-1);
	}
	if (route_reload_check(&cfg.routes, err, sizeof(err)) == -1) {
		if (log_begin(&r, LL_ERROR, "reload")) {
			log_say(&r, "reload: %s: %s; the running configuration "
			    "stays", config_path, err);
			log_str(&r, "what", "config", LF_JSON);
			log_str(&r, "result", "failed", LF_JSON);
			log_str(&r, "config", config_path, LF_JSON);
			log_str(&r, "error", err, LF_JSON);
			log_end(&r);
		}
		config_free(&cfg);
		return (-1);
	}
	waiting = config_apply(&cfg);
	waiting += settings_reload(&st);
	limit_budget();
	config_free(&cfg);
	if (log_begin(&r, LL_INFO, "reload")) {
		log_say(&r, "reloaded %s%s", config_path, waiting == 0 ? "" :
		    "; the changes logged above wait for a restart");
		log_str(&r, "what", "config", LF_JSON);
		log_str(&r, "result", "ok", LF_JSON);
		log_str(&r, "config", config_path, LF_JSON);
		log_u64(&r, "waiting_for_restart", (uint64_t)waiting, LF_JSON);
		log_end(&r);
	}
	return (1);
}

/* Take the routes of the file, or exit 1 with every error. */
static void
routes_from_file(int check)
{
	struct config	 cfg;
	struct route	*r;

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
}

/* Why argc endpoints are not two: what was given, and what is missing. */
static const char *
endpoint_count(int argc, char *argv[], char *buf, size_t len)
{
	if (argc == 0)
		snprintf(buf, len, "give two endpoints, LOCAL and REMOTE, or "
		    "-f FILE");
	else if (argc == 1)
		snprintf(buf, len, "%s is one endpoint; give two, LOCAL and "
		    "REMOTE, or REMOTE -- COMMAND", argv[0]);
	else
		snprintf(buf, len, "%d arguments; give two endpoints, LOCAL "
		    "and REMOTE (a third, %s, is one too many)", argc, argv[2]);
	return (buf);
}

/* The routes listen: run the application after --, if any. */
static int
cli_start(void)
{
	return (launch_start(TAILQ_FIRST(&routes), -1));
}

static void
cli_stop(void)
{
	launch_stop();
}

/*
 * The first -- ends dsroute's arguments; what follows is the application
 * to run.  Return the number of arguments before it.
 */
static int
split_command(int argc, char *argv[])
{
	int	 i;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--") != 0)
			continue;
		if (i + 1 == argc)
			fatalx("--: give the application to run after it");
		if (!child_launch_available())
			fatalx("-- %s: starting an application is not "
			    "supported on this system; start it yourself with "
			    "DOTNET_DiagnosticPorts naming the router's socket",
			    argv[i + 1]);
		argv[i] = NULL;
		return (i);
	}
	return (argc);
}

/* LOCAL and REMOTE, or REMOTE alone before -- with a socket of ours. */
static void
route_from_args(int argc, char *argv[], int check)
{
	struct route	*r;
	char		 own[1200], err[512];
	const char	*local, *remote;

	if (argc == 1 && launch_wanted()) {
		if (launch_private_spec(own, sizeof(own), err,
		    sizeof(err)) == -1)
			fatalx("%s", err);
		local = own;
		remote = argv[0];
	} else if (argc == 2) {
		local = argv[0];
		remote = argv[1];
	} else
		usage_error(endpoint_count(argc, argv, err, sizeof(err)));
	if ((r = route_new("main", local, remote, err, sizeof(err))) == NULL) {
		if (check) {
			fprintf(stderr, "%s\n", err);
			exit(1);
		}
		fatalx("%s", err);
	}
	TAILQ_INSERT_TAIL(&routes, r, entry);
}

/*
 * Parse dsroute's own command line into settings and routes; with -n,
 * -h or -V, do that and exit.  Return the front end for the daemon.
 */
const struct frontend *
cli_frontend(int argc, char *argv[])
{
	/* Static: an error in the options exits with it still reachable. */
	static struct option	*longopts;
	const struct setting	*s;
	struct route		*r;
	char			 err[512];
	char			**command = NULL;
	int			 ch, check = 0, syntax = 0, suspend = 0, ours;

	/* getopt sees, and permutes, only what comes before --. */
	if ((ours = split_command(argc, argv)) < argc)
		command = argv + ours + 1;
	argc = ours;
	longopts = long_options();
	while ((ch = getopt_long(argc, argv, "f:hnVv:", longopts,
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
		case OPT_SYNTAX:
			syntax = 1;
			break;
		case 'S':
			suspend = 1;
			break;
		case '?':
			/* getopt has said which option. */
			usage_error(NULL);
		default:
			if ((s = setting_of(ch)) == NULL)
				usage_error(NULL);
			if (settings_apply(&settings, s, optarg, err,
			    sizeof(err)) == -1)
				fatalx("--%s %s: %s", s->name, optarg, err);
			if (s->type == ST_LEVEL)
				log_set_level(settings.log_level);
			if (s->type == ST_LOG_FORMAT)
				log_set_format(settings.log_format);
			if (ngiven == sizeof(given) / sizeof(given[0]))
				fatalx("too many options");
			given[ngiven].s = s;
			given[ngiven++].arg = optarg;
			break;
		}
	}
	free(longopts);
	longopts = NULL;
	argc -= optind;
	argv += optind;

	if (suspend && command == NULL)
		fatalx("--suspend is for the application after --: give one");
	if (command != NULL && config_path != NULL)
		fatalx("-- COMMAND takes its endpoints on the command line, "
		    "not -f: its runtime dials the route's socket");
	launch_set(command, suspend);
	if (config_path != NULL) {
		if (argc != 0) {
			snprintf(err, sizeof(err), "-f %s takes the routes from "
			    "the file: %s is one argument too many",
			    config_path, argv[0]);
			usage_error(err);
		}
		routes_from_file(check);
	} else
		route_from_args(argc, argv, check);
	if (check) {
		if (metrics_http_check(err, sizeof(err)) == -1) {
			fprintf(stderr, "%s\n", err);
			exit(1);
		}
		/* --syntax: for another host, whose files are not here. */
		TAILQ_FOREACH(r, &routes, entry) {
			if (!syntax &&
			    route_preflight(r, err, sizeof(err)) == -1) {
				fprintf(stderr, "%s\n", err);
				exit(1);
			}
		}
		while ((r = TAILQ_FIRST(&routes)) != NULL) {
			TAILQ_REMOVE(&routes, r, entry);
			route_free(r);
		}
		printf("configuration OK (not checked: %s)\n", syntax ?
		    "anything beyond the syntax (--syntax)" : "that ports are "
		    "free, and that peers and runtimes answer");
		exit(0);
	}
	log_set_level(settings.log_level);
	log_set_format(settings.log_format);
	return (&cli);
}
