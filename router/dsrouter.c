/* SPDX-License-Identifier: ISC */

/*
 * The dotnet-dsrouter command line: its six commands and four presets,
 * with its options spelled every way System.CommandLine takes them, made
 * into routes for the daemon (daemon_run()).  Around the routes it does what
 * dotnet-dsrouter does: a default IPC socket that `dotnet-trace -p PID`
 * and `dotnet-trace ps` find, quitting on Q when a tool launched it or a
 * person types it, blocked signals, the runtime timeout, the port
 * forwarding of the presets (preset.c) and the application given after
 * -- (launch.c), whose runtime dials a socket of the router's own.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/util.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/child.h"
#include "platform/platform.h"
#include "router/daemon.h"
#include "router/endpoint.h"
#include "router/engine.h"
#include "router/frontend.h"
#include "router/settings.h"
#include "transports/transport.h"

#define QUIT_GRACE_MS		500	/* a launching tool kills us at 1 s */
#define PARENT_CHECK_MS		1000
#define STDIN_POLL_MS		250	/* where it cannot be watched */

/* Which options a command takes. */
#define O_IPCC		0x001
#define O_IPCS		0x002
#define O_TCPC		0x004
#define O_TCPS		0x008
#define O_FORWARD	0x010
#define O_SERIAL	0x020
#define O_UNSAFE	0x040
#define O_COMMON	0x080	/* -rt, -v, -i, -bsig, --parentprocess */
#define O_WS		0x100	/* the runtime's side is a WebSocket server */
#define O_HOST_PORT	0x200	/* --host-port: where a preset listens */
#define O_DEVICE_PORT	0x400	/* --device-port: the app's on the device */

struct command {
	const char		*name;
	enum route_mode		 mode;
	unsigned		 options;
	/* Presets: the network address, forwarding and --info text. */
	const char		*address;
	enum forward_kind	 forward;
	const char		*device;
	const char		*app_host;	/* as the application sees it */
	int			 app_port;
};

static const struct command commands[] = {
	{ "client-server", MODE_CLIENT_SERVER,
	    O_IPCC | O_TCPS | O_FORWARD | O_DEVICE_PORT | O_UNSAFE | O_COMMON,
	    NULL, FORWARD_NONE, NULL, NULL, 0 },
	{ "server-server", MODE_SERVER_SERVER,
	    O_IPCS | O_TCPS | O_FORWARD | O_DEVICE_PORT | O_UNSAFE | O_COMMON,
	    NULL, FORWARD_NONE, NULL, NULL, 0 },
	{ "server-client", MODE_SERVER_CLIENT,
	    O_IPCS | O_TCPC | O_FORWARD | O_DEVICE_PORT | O_COMMON,
	    NULL, FORWARD_NONE, NULL, NULL, 0 },
	{ "client-client", MODE_CLIENT_CLIENT,
	    O_IPCC | O_TCPC | O_FORWARD | O_DEVICE_PORT | O_COMMON,
	    NULL, FORWARD_NONE, NULL, NULL, 0 },
	/* Browser runtimes dial a WebSocket server in both. */
	{ "server-websocket", MODE_SERVER_SERVER,
	    O_IPCS | O_WS | O_UNSAFE | O_COMMON,
	    NULL, FORWARD_NONE, NULL, NULL, 0 },
	{ "client-websocket", MODE_CLIENT_SERVER,
	    O_IPCC | O_WS | O_UNSAFE | O_COMMON,
	    NULL, FORWARD_NONE, NULL, NULL, 0 },
	{ "android", MODE_SERVER_SERVER,
	    O_SERIAL | O_COMMON | O_HOST_PORT | O_DEVICE_PORT,
	    "127.0.0.1:9001", FORWARD_ADB_REVERSE, "android device",
	    "127.0.0.1", 9000 },
	{ "android-emu", MODE_SERVER_SERVER, O_COMMON,
	    "127.0.0.1:9000", FORWARD_NONE, "android emulator",
	    "10.0.2.2", 9000 },
	{ "ios", MODE_SERVER_CLIENT, O_SERIAL | O_COMMON | O_DEVICE_PORT,
	    "127.0.0.1:9000", FORWARD_IPROXY, "ios device",
	    "127.0.0.1", 9000 },
	{ "ios-sim", MODE_SERVER_CLIENT, O_COMMON,
	    "127.0.0.1:9000", FORWARD_NONE, "ios simulator",
	    "127.0.0.1", 9000 },
};

enum {
	OPT_IPC_CLIENT = 256,
	OPT_IPC_SERVER,
	OPT_TCP_CLIENT,
	OPT_TCP_SERVER,
	OPT_RUNTIME_TIMEOUT,
	OPT_FORWARD_PORT,
	OPT_BLOCK_SIGNALS,
	OPT_PARENT_PROCESS,
	OPT_UNSAFE_LISTEN,
	OPT_WEB_SOCKET,
	OPT_HOST_PORT,
	OPT_DEVICE_PORT
};

static const struct option long_options[] = {
	{ "ipc-client", required_argument, NULL, OPT_IPC_CLIENT },
	{ "ipc-server", required_argument, NULL, OPT_IPC_SERVER },
	{ "tcp-client", required_argument, NULL, OPT_TCP_CLIENT },
	{ "tcp-server", required_argument, NULL, OPT_TCP_SERVER },
	{ "runtime-timeout", required_argument, NULL, OPT_RUNTIME_TIMEOUT },
	{ "forward-port", required_argument, NULL, OPT_FORWARD_PORT },
	{ "block-signals", required_argument, NULL, OPT_BLOCK_SIGNALS },
	{ "parentprocess", required_argument, NULL, OPT_PARENT_PROCESS },
	{ "unsafe-listen", no_argument, NULL, OPT_UNSAFE_LISTEN },
	{ "web-socket", required_argument, NULL, OPT_WEB_SOCKET },
	{ "host-port", required_argument, NULL, OPT_HOST_PORT },
	{ "device-port", required_argument, NULL, OPT_DEVICE_PORT },
	{ "verbose", required_argument, NULL, 'v' },
	{ "info", no_argument, NULL, 'i' },
	{ "serial", required_argument, NULL, 's' },
	{ "help", no_argument, NULL, 'h' },
	{ NULL, 0, NULL, 0 }
};

/* The signals --block-signals takes, by dotnet-dsrouter's names. */
static const char *const signal_names[] = { "SIGINT", "SIGQUIT", "SIGTERM" };
#define BLOCK_QUIT	(1u << 1)	/* its SIGQUIT */

/* dotnet-dsrouter's single-dash aliases, which getopt cannot take. */
static const struct {
	const char	*alias;
	const char	*name;
} aliases[] = {
	{ "-ipcc", "--ipc-client" },
	{ "-ipcs", "--ipc-server" },
	{ "-tcpc", "--tcp-client" },
	{ "-tcps", "--tcp-server" },
	{ "-rt", "--runtime-timeout" },
	{ "-fp", "--forward-port" },
	{ "-bsig", "--block-signals" },
	{ "-ws", "--web-socket" },
	{ "-v", "--verbose" },
	{ "-i", "--info" },
	{ "-s", "--serial" },
	{ "-h", "--help" },
	{ "-?", "--help" },
};

/* What the command line asked for. */
static const struct command	*cmd;
static const char	*ipc_client, *ipc_server, *tcp_client, *tcp_server;
static const char	*web_socket_url;
static char		*web_socket;	/* HOST:PORT/PATH of the -ws URL */
static int		 runtime_timeout_s = -1;
static int		 host_port = -1, device_port = -1;
static char		 preset_address[32];	/* with --host-port */
static const char	*forward_name;
static int		 show_info;
static const char	*parent;
static unsigned		 blocked;	/* bits of signal_names */

/* What runs around the routes. */
static struct route	*main_route;
static int		 default_ipc;	/* the -p socket and its sibling */
static struct forward	 forward;
static pid_t		 parent_pid = -1;
static int		 watch_stdin;
static int		 watch_quit;	/* the quit signal's event is set */
static char		 ipc_name[1024];	/* as a tool takes it */
static int		 runtime_available;
static struct event	 stdin_ev, timeout_ev, parent_ev, sigquit_ev;

static char		**args;		/* the rewritten command line */

static char		**command;	/* after --, or NULL */

static int	 dsrouter_start(void);
static void	 dsrouter_stop(void);
static int	 dsrouter_status(int);

static const struct frontend dsrouter = {
	.name = "dotnet-dsrouter",
	.start = dsrouter_start,
	.stop = dsrouter_stop,
	.status = dsrouter_status,
	.signal = launch_signal,
};

static void __dead
usage(int status)
{
	fprintf(status == 0 ? stdout : stderr,
	    "usage: dsroute COMMAND [options]      (also as dotnet-dsrouter)\n"
	    "\n"
	    "commands (local IPC side first, then the runtime's side):\n"
	    "  client-server  -ipcc PATH [-tcps HOST:PORT]   "
	    "a tool listens, a runtime dials\n"
	    "  server-server  [-ipcs PATH] [-tcps HOST:PORT] "
	    "tools dial, a runtime dials\n"
	    "  server-client  [-ipcs PATH] -tcpc HOST:PORT   "
	    "tools dial, a runtime listens\n"
	    "  client-client  -ipcc PATH -tcpc HOST:PORT     "
	    "a tool and a runtime listen\n"
	    "  server-websocket [-ipcs PATH] [-ws URL]       "
	    "tools dial, a browser dials\n"
	    "  client-websocket -ipcc PATH [-ws URL]         "
	    "a tool listens, a browser dials\n"
	    "presets (IPC server at the default path, found with -p PID):\n"
	    "  android        TCP server 127.0.0.1:9001, adb reverse tcp:9000 "
	    "tcp:9001\n"
	    "                 (--host-port and --device-port change 9001 and "
	    "9000)\n"
	    "  android-emu    TCP server 127.0.0.1:9000 (the emulator dials "
	    "10.0.2.2:9000)\n"
	    "  ios            TCP client to the device's port 9000 through "
	    "iproxy\n"
	    "  ios-sim        TCP client 127.0.0.1:9000\n"
	    "\n"
	    "options:\n"
	    "  -ipcc, --ipc-client PATH      the diagnostic port a tool "
	    "listens on\n"
	    "  -ipcs, --ipc-server PATH      where tools connect (default "
	    "below)\n"
	    "  -tcpc, --tcp-client HOST:PORT where the runtime listens\n"
	    "  -tcps, --tcp-server HOST:PORT where the runtime dials "
	    "(default 127.0.0.1:0)\n"
	    "  -ws, --web-socket URL         where browser runtimes dial "
	    "(default\n"
	    "                                ws://127.0.0.1:8088/diagnostics)\n"
	    "  -rt, --runtime-timeout SEC    stop if no runtime is seen within "
	    "SEC\n"
	    "  -fp, --forward-port Android|iOS  forward the port to a device "
	    "(adb, iproxy)\n"
	    "  -s, --serial SERIAL           the device for adb or iproxy\n"
	    "      --device-port PORT        the app's port on the device "
	    "(default: the\n"
	    "                                host port less one; android and "
	    "ios: 9000)\n"
	    "      --host-port PORT          android: the port here that adb "
	    "reverse reaches\n"
	    "                                (default 9001)\n"
	    "  -bsig, --block-signals LIST   ignore SIGINT;SIGQUIT;SIGTERM\n"
	    "  -v, --verbose LEVEL           none, critical, error, warning, "
	    "info, debug,\n"
	    "                                trace\n"
	    "  -i, --info                    print how to start the "
	    "application and the tool\n"
	    "      --unsafe-listen           allow plaintext TCP or ws "
	    "beyond loopback\n"
	    "After the options, -- COMMAND [ARG...] runs the application "
	    "(client-server and\n"
	    "server-server), its runtime dialling a socket of the router's "
	    "own.\n"
	    "Options also take the forms --opt:value and --opt=value.\n"
	    "The default -ipcs: %s.\n"
	    "Type q and Enter to quit.\n"
	    "\n"
	    "See dsroute(1).\n", platform_ipc_default_help());
	exit(status);
}

/* Return non-zero if name is a dotnet-dsrouter command or preset. */
static int
is_command(const char *name)
{
	size_t	 i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(name, commands[i].name) == 0)
			return (1);
	}
	return (0);
}

static const struct option *
find_long(const char *name, size_t len)
{
	const struct option	*o;

	for (o = long_options; o->name != NULL; o++) {
		if (strlen(o->name) == len && strncmp(o->name, name, len) == 0)
			return (o);
	}
	return (NULL);
}

/*
 * Rewrite one argument into a spelling getopt_long takes: a single-dash
 * alias becomes its long name, and "--opt:value" becomes "--opt=value".
 * Set *value_next if the next argument is this option's value.
 */
static char *
rewrite_arg(const char *arg, int *value_next)
{
	const struct option	*o;
	const char		*name = arg, *sep;
	char			*out;
	size_t			 i, len;

	*value_next = 0;
	if (arg[0] != '-' || arg[1] == '\0' || strcmp(arg, "--") == 0)
		return (xstrdup(arg));
	len = (sep = strpbrk(arg, ":=")) != NULL ? (size_t)(sep - arg) :
	    strlen(arg);
	if (arg[1] != '-') {
		for (i = 0; i < sizeof(aliases) / sizeof(aliases[0]); i++) {
			if (strlen(aliases[i].alias) == len &&
			    strncmp(aliases[i].alias, arg, len) == 0)
				break;
		}
		if (i == sizeof(aliases) / sizeof(aliases[0]))
			return (xstrdup(arg));	/* for getopt to judge */
		name = aliases[i].name;
		len = strlen(name);
	}
	o = find_long(name + 2, len - 2);
	if (sep == NULL) {
		*value_next = o != NULL && o->has_arg == required_argument;
		return (xstrdup(name));
	}
	if (asprintf(&out, "%.*s=%s", (int)len, name, sep + 1) == -1)
		fatalx("out of memory");
	return (out);
}

/* Rewrite the arguments after the command; free them with free_args(). */
static char **
rewrite_args(int argc, char *argv[], const char *label)
{
	char	**out;
	int	  i, value_next = 0, options_end = 0;

	out = xcalloc(argc + 1, sizeof(*out));
	out[0] = xstrdup(label);
	for (i = 1; i < argc; i++) {
		if (value_next || options_end) {
			out[i] = xstrdup(argv[i]);
			value_next = 0;
			continue;
		}
		out[i] = rewrite_arg(argv[i], &value_next);
		options_end = strcmp(argv[i], "--") == 0;
	}
	return (out);
}

static void
free_args(char **list)
{
	char	**p;

	if (list == NULL)
		return;
	for (p = list; *p != NULL; p++)
		free(*p);
	free(list);
}

/* Whole seconds for --runtime-timeout; -1, its default, means none. */
static int
parse_seconds(const char *s, int *v)
{
	char	*end;
	long	 n;

	errno = 0;
	n = strtol(s, &end, 10);
	if (*s == '\0' || *end != '\0' || errno != 0 || n < -1 ||
	    n > 24 * 3600 * 365)
		return (-1);
	*v = (int)n;
	return (0);
}

/* --block-signals "SIGINT;SIGQUIT": the signals to ignore. */
static void
parse_signals(const char *list)
{
	char	*copy, *p, *name;
	size_t	 i, n = sizeof(signal_names) / sizeof(signal_names[0]);

	p = copy = xstrdup(list);
	while ((name = strsep(&p, ";,")) != NULL) {
		if (*name == '\0')
			continue;
		for (i = 0; i < n; i++) {
			if (strcasecmp(name, signal_names[i]) == 0 ||
			    strcasecmp(name, signal_names[i] + 3) == 0)
				break;
		}
		if (i == n)
			fatalx("--block-signals: %s: give SIGINT, SIGQUIT or "
			    "SIGTERM, separated by ';'", name);
		blocked |= 1u << i;
	}
	free(copy);
}

/* Block the signals --block-signals named (platform_block_signal()). */
static void
block_signals(void)
{
	size_t	 i;

	for (i = 0; i < sizeof(signal_names) / sizeof(signal_names[0]); i++) {
		if ((blocked & (1u << i)) &&
		    platform_block_signal(signal_names[i]) == -1)
			fatalx("--block-signals: %s", strerror(errno));
	}
}

/* An IPC path or TCP address goes into an endpoint: no commas there. */
static const char *
check_value(const char *option, const char *v)
{
	if (*v == '\0')
		fatalx("--%s: give a value", option);
	if (strchr(v, ',') != NULL)
		fatalx("--%s %s: a comma cannot appear here", option, v);
	return (v);
}

/* A TCP address as dotnet-dsrouter takes it: also tcp:// and net.tcp://. */
static const char *
tcp_option(const char *option, char *v)
{
	size_t	 len;

	if (strncmp(v, "tcp://", 6) == 0)
		v += 6;
	else if (strncmp(v, "net.tcp://", 10) == 0)
		v += 10;
	len = strlen(v);
	if (len > 0 && v[len - 1] == '/')
		v[len - 1] = '\0';
	return (check_value(option, v));
}

/*
 * A WebSocket URL as dotnet-dsrouter takes it, ws:// or http://, made into
 * a ws: endpoint's HOST:PORT/PATH; its port is 80 if it names none.  Its
 * host is checked once all options are read (--unsafe-listen).
 */
static char *
ws_option(const char *v)
{
	const char	*rest, *host_end, *path;
	char		*out;
	int		 has_port;

	if (strncasecmp(v, "ws://", 5) == 0)
		rest = v + 5;
	else if (strncasecmp(v, "http://", 7) == 0)
		rest = v + 7;
	else if (strncasecmp(v, "wss://", 6) == 0 ||
	    strncasecmp(v, "https://", 8) == 0)
		fatalx("--web-socket %s: wss needs a certificate, which this "
		    "command line cannot give; use a wss: endpoint with cert= "
		    "and key= (see dsroute(1))", v);
	else
		fatalx("--web-socket %s: give ws://HOST:PORT/PATH", v);
	check_value("web-socket", rest);
	host_end = rest[0] == '[' && strchr(rest, ']') != NULL ?
	    strchr(rest, ']') + 1 : rest + strcspn(rest, ":/");
	if (host_end == rest)
		fatalx("--web-socket %s: give a host", v);
	path = host_end + strcspn(host_end, "/");
	has_port = *host_end == ':';
	if (asprintf(&out, "%.*s%s%s", (int)(path - rest), rest,
	    has_port ? "" : ":80", *path == '/' ? path : "/") == -1)
		fatalx("out of memory");
	return (out);
}

/*
 * A wildcard host listens on every interface, where anyone who reaches the
 * port controls the runtime: only with --unsafe-listen, "*" and "+" (which
 * dotnet-dsrouter's URLs allow) meaning 0.0.0.0.
 */
static void
ws_check_host(void)
{
	static const char *const wildcards[] = {
		"*", "+", "0.0.0.0", "[::]"
	};
	char	*out;
	size_t	 i, len;

	for (i = 0; i < sizeof(wildcards) / sizeof(wildcards[0]); i++) {
		len = strlen(wildcards[i]);
		if (strncmp(web_socket, wildcards[i], len) == 0 &&
		    web_socket[len] == ':')
			break;
	}
	if (i == sizeof(wildcards) / sizeof(wildcards[0]))
		return;
	if (!settings.unsafe_listen)
		fatalx("--web-socket %s: refusing a wildcard host: it listens "
		    "on every interface, where anyone who reaches it could "
		    "control the runtime; give 127.0.0.1, or pass "
		    "--unsafe-listen", web_socket_url);
	if (i < 2) {
		if (asprintf(&out, "0.0.0.0%s", web_socket + 1) == -1)
			fatalx("out of memory");
		free(web_socket);
		web_socket = out;
	}
}

/* A port for --host-port or --device-port: 1 to 65535. */
static int
port_option(const char *option, const char *v)
{
	char	*end;
	long	 n;

	errno = 0;
	n = strtol(v, &end, 10);
	if (*v < '0' || *v > '9' || *end != '\0' || errno != 0 || n < 1 ||
	    n > 65535)
		fatalx("--%s %s: give a port from 1 to 65535", option, v);
	return ((int)n);
}

/* Refuse an option the command does not take, as System.CommandLine does. */
static void
need(unsigned bit, const char *option)
{
	if (!(cmd->options & bit))
		fatalx("%s does not take %s; see dsroute -h or dsroute(1)",
		    cmd->name, option);
}

/* Parse the options after the command. */
static void
parse_options(int argc, char *argv[])
{
	enum log_level	 level;
	const char	*opt;
	int		 ch;

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "+:hiv:s:", long_options,
	    NULL)) != -1) {
		opt = argv[optind - 1];
		switch (ch) {
		case OPT_IPC_CLIENT:
			need(O_IPCC, "--ipc-client");
			ipc_client = check_value("ipc-client", optarg);
			break;
		case OPT_IPC_SERVER:
			need(O_IPCS, "--ipc-server");
			ipc_server = check_value("ipc-server", optarg);
			break;
		case OPT_TCP_CLIENT:
			need(O_TCPC, "--tcp-client");
			tcp_client = tcp_option("tcp-client", optarg);
			break;
		case OPT_TCP_SERVER:
			need(O_TCPS, "--tcp-server");
			tcp_server = tcp_option("tcp-server", optarg);
			break;
		case OPT_RUNTIME_TIMEOUT:
			if (parse_seconds(optarg, &runtime_timeout_s) == -1)
				fatalx("--runtime-timeout %s: give whole "
				    "seconds", optarg);
			break;
		case OPT_FORWARD_PORT:
			need(O_FORWARD, "--forward-port");
			forward_name = optarg;
			break;
		case OPT_BLOCK_SIGNALS:
			parse_signals(optarg);
			break;
		case OPT_PARENT_PROCESS:
			parent = optarg;
			break;
		case OPT_UNSAFE_LISTEN:
			need(O_UNSAFE, "--unsafe-listen");
			settings.unsafe_listen = 1;
			break;
		case OPT_HOST_PORT:
			need(O_HOST_PORT, "--host-port");
			host_port = port_option("host-port", optarg);
			break;
		case OPT_DEVICE_PORT:
			need(O_DEVICE_PORT, "--device-port");
			device_port = port_option("device-port", optarg);
			break;
		case OPT_WEB_SOCKET:
			need(O_WS, "--web-socket");
			free(web_socket);
			web_socket = ws_option(optarg);
			web_socket_url = optarg;
			break;
		case 'v':
			if (log_level_parse(optarg, &level) == -1)
				fatalx("--verbose %s: give none, critical, "
				    "error, warning, info, debug or trace",
				    optarg);
			log_set_level(level);
			break;
		case 'i':
			show_info = 1;
			break;
		case 's':
			need(O_SERIAL | O_FORWARD, "--serial");
			forward.serial = optarg;
			break;
		case 'h':
			usage(0);
		case ':':
			fatalx("%s: %s needs a value", cmd->name, opt);
		default:
			fatalx("%s: unknown option %s; see dsroute -h",
			    cmd->name, opt);
		}
	}
	if (optind > 1 && strcmp(argv[optind - 1], "--") == 0) {
		if (optind == argc)
			fatalx("%s: --: give the application to run after it",
			    cmd->name);
		command = argv + optind;
		return;
	}
	if (optind < argc)
		fatalx("%s: unexpected argument %s", cmd->name, argv[optind]);
}

/*
 * The application after --: its runtime dials the router, on this host
 * where the router listens for it, so only in the commands whose
 * runtime side listens, and not with an address for runtimes elsewhere.
 */
static void
check_command(void)
{
	if (command == NULL)
		return;
	if (!child_launch_available())
		fatalx("%s: -- %s: starting an application is not supported "
		    "on this system; start it yourself with the "
		    "DOTNET_DiagnosticPorts value that -i prints", cmd->name,
		    command[0]);
	if ((cmd->mode != MODE_CLIENT_SERVER &&
	    cmd->mode != MODE_SERVER_SERVER) || (cmd->options & O_WS) ||
	    cmd->address != NULL)
		fatalx("%s: -- %s: the application's runtime dials the router, "
		    "which only client-server and server-server take",
		    cmd->name, command[0]);
	if (tcp_server != NULL || forward_name != NULL)
		fatalx("%s: -- %s: the application dials a socket of this "
		    "host that the router makes; --%s is for a runtime "
		    "elsewhere: leave it out", cmd->name, command[0],
		    tcp_server != NULL ? "tcp-server" : "forward-port");
	/* As dotnet-dsrouter: suspended where a tool listens for it. */
	launch_set(command, cmd->mode == MODE_CLIENT_SERVER);
}

/* Split "HOST:PORT" (or "[V6]:PORT", or a port alone) into its port. */
static int
address_port(const char *address)
{
	const char	*colon = strrchr(address, ':');

	return (atoi(colon != NULL ? colon + 1 : address));
}

/* Decide the port forwarding of a command or of --forward-port. */
static void
plan_forwarding(void)
{
	int	 tcp_listens = cmd->mode == MODE_CLIENT_SERVER ||
		    cmd->mode == MODE_SERVER_SERVER;

	if (cmd->address != NULL) {
		/* A preset's two ports are its own: the app's stays put. */
		forward.kind = cmd->forward;
		forward.host_port = address_port(tcp_listens ? tcp_server :
		    tcp_client);
		forward.device_port = device_port != -1 ? device_port :
		    cmd->app_port;
	} else if (forward_name != NULL) {
		if (strcasecmp(forward_name, "Android") == 0)
			forward.kind = tcp_listens ? FORWARD_ADB_REVERSE :
			    FORWARD_ADB_FORWARD;
		else if (strcasecmp(forward_name, "iOS") == 0 && !tcp_listens)
			forward.kind = FORWARD_IPROXY;
		else
			fatalx("--forward-port %s: give Android%s",
			    forward_name, tcp_listens ? " (a device dialling "
			    "a TCP server is Android only)" : " or iOS");
		forward.host_port = address_port(tcp_listens ? tcp_server :
		    tcp_client);
		if (forward.host_port == 0)
			fatalx("--forward-port needs a fixed port in --%s",
			    tcp_listens ? "tcp-server" : "tcp-client");
		/* dotnet-dsrouter's rule, unless the device's is given. */
		if (device_port != -1)
			forward.device_port = device_port;
		else
			forward.device_port = forward.kind == FORWARD_IPROXY ?
			    forward.host_port : forward.host_port - 1;
	} else if (forward.serial != NULL)
		fatalx("--serial chooses the device for adb or iproxy: give "
		    "it with --forward-port");
	else if (device_port != -1)
		fatalx("--device-port is the port on the device that adb or "
		    "iproxy forwards: give it with --forward-port");
}

/*
 * The default IPC server name, and the runtime-style one next to it, as
 * the platform names them (platform_ipc_default_names()): in $TMPDIR
 * with a key, our start time by the runtime's rule, as a runtime's own
 * socket would have; on Windows pipes named by the pid alone.  Tools
 * pick the newest socket of a pid whatever its key, so when either name
 * is taken (planted by someone who guessed it), a random key keeps the
 * router from being stopped.  Names without a key have no other: the
 * listener then refuses to start on a name someone else serves.
 */
static void
default_paths(char *path, size_t len, char *sibling, size_t slen)
{
	struct proc_info	 pi;
	long			 pid = (long)getpid();
	unsigned long long	 key;
	int			 tries, keyed;

	key = proc_info_get(getpid(), 0, &pi) == 0 ? pi.starttime :
	    (unsigned long long)time(NULL);
	for (tries = 0; ; tries++) {
		keyed = platform_ipc_default_names(pid, key, path, len,
		    sibling, slen);
		if ((platform_ipc_stat(path) == -1 &&
		    platform_ipc_stat(sibling) == -1) || tries == 8)
			break;
		if (!keyed) {
			log_warning("%s or %s is taken already (planted by "
			    "someone who guessed it?); tools find this router "
			    "by these names only", path, sibling);
			break;
		}
		log_warning("%s or %s is taken already (planted by someone who "
		    "guessed it?); using another key", path, sibling);
		evutil_secure_rng_get_bytes(&key, sizeof(key));
		key >>= 1;
	}
}

/* A runtime advertised or answered: the runtime timeout is over. */
static void
runtime_seen_cb(struct route *r)
{
	if (runtime_available)
		return;
	runtime_available = 1;
	if (evtimer_initialized(&timeout_ev) &&
	    evtimer_pending(&timeout_ev, NULL)) {
		evtimer_del(&timeout_ev);
		log_debug("a runtime is available: the runtime timeout no "
		    "longer applies");
	}
}

/*
 * -ipcc names a tool that listens for runtimes; a runtime's own port
 * there would get an advertise.  Refuse it in the words of the command
 * line typed, and name what does bridge a runtime's port, which no
 * dotnet-dsrouter command does.
 */
static void
check_ipc_client(void)
{
	struct endpoint	 ep;
	char		 spec[1100], err[512];
	int		 runtime;

	if (ipc_client == NULL)
		return;
	(void)platform_ipc_spec(ipc_client, spec, sizeof(spec));
	if (endpoint_parse_part(spec, &ep, err, sizeof(err)) == -1)
		return;		/* make_routes() says why */
	runtime = ep.transport->runtime_port != NULL &&
	    ep.transport->runtime_port(&ep);
	endpoint_clear(&ep);
	if (runtime)
		fatalx("%s --ipc-client %s: that is a runtime's own "
		    "diagnostic port; -ipcc is where a tool listens for "
		    "runtimes (dotnet-trace collect --diagnostic-port PATH).  "
		    "To reach this runtime from TCP, run dsroute %s "
		    "tcp:127.0.0.1:9000 (dotnet-dsrouter has no command for "
		    "it)", cmd->name, ipc_client, spec);
}

/*
 * Make the routes: the command's, and with the default IPC path a second
 * one, started first, whose runtime-style socket forwards to it.  Tools
 * resolving -p PID take the newest dotnet-diagnostic-PID-*-socket, or the
 * dotnet-diagnostic-dsrouter-PID-*-socket when it exists and is no older;
 * `ps` lists only the former.
 */
static void
make_routes(void)
{
	struct route	*sibling;
	char		 local[1200], remote[1200], err[512];
	char		 path[1024], sibling_path[1024], spec[1100];
	int		 ipc_listens = cmd->mode == MODE_SERVER_SERVER ||
			    cmd->mode == MODE_SERVER_CLIENT;
	int		 tcp_listens = cmd->mode == MODE_CLIENT_SERVER ||
			    cmd->mode == MODE_SERVER_SERVER;
	const char	*tcp = tcp_listens ? tcp_server : tcp_client;
	char		 tcp_buf[64];

	if (forward.kind == FORWARD_IPROXY) {
		snprintf(tcp_buf, sizeof(tcp_buf), "127.0.0.1:%d",
		    forward.host_port);
		tcp = tcp_buf;
	}
	if (ipc_listens && ipc_server == NULL) {
		default_paths(path, sizeof(path), sibling_path,
		    sizeof(sibling_path));
		default_ipc = 1;
	} else
		snprintf(path, sizeof(path), "%s", ipc_listens ? ipc_server :
		    ipc_client);
	/*
	 * As dotnet-dsrouter has it: the TCP or WebSocket server is where
	 * runtimes dial, any that reach it (on loopback unless
	 * --unsafe-listen); the IPC client reaches a tool that listens.
	 */
	snprintf(ipc_name, sizeof(ipc_name), "%s",
	    platform_ipc_spec(path, spec, sizeof(spec)));
	snprintf(local, sizeof(local), "%s,%s", spec, ipc_listens ?
	    "listen" : "connect,peer=tool");
	if (launch_wanted()) {
		if (launch_private_spec(remote, sizeof(remote), err,
		    sizeof(err)) == -1)
			fatalx("%s: %s", cmd->name, err);
	} else if (cmd->options & O_WS)
		snprintf(remote, sizeof(remote), "ws:%s,listen,advertise=any",
		    web_socket);
	else
		snprintf(remote, sizeof(remote), "tcp:%s,%s", tcp,
		    tcp_listens ? "listen,advertise=any" :
		    "connect,peer=runtime");
	if ((main_route = route_new(cmd->name, local, remote, err,
	    sizeof(err))) == NULL)
		fatalx("%s", err);
	main_route->runtime_seen = runtime_seen_cb;
	/*
	 * Through adb or iproxy the app's port is the device's, which only
	 * the banner below knows: the transports' lines would name ours.
	 */
	main_route->own_howto = cmd->address != NULL || forward_name != NULL;

	if (default_ipc) {
		(void)platform_ipc_spec(sibling_path, spec, sizeof(spec));
		snprintf(local, sizeof(local), "%s,listen", spec);
		(void)platform_ipc_spec(path, spec, sizeof(spec));
		snprintf(remote, sizeof(remote), "%s,connect", spec);
		if ((sibling = route_new("pid-socket", local, remote, err,
		    sizeof(err))) == NULL)
			fatalx("%s", err);
		sibling->helper = "named like a runtime's socket, for "
		    "dotnet-trace ps and -p";
		TAILQ_INSERT_TAIL(&routes, sibling, entry);
	}
	TAILQ_INSERT_TAIL(&routes, main_route, entry);
}

/* Stop for a dotnet-dsrouter reason: quickly if a tool launched us. */
static void
quit(const char *why)
{
	log_info("%s: stopping", why);
	if (parent != NULL && settings.shutdown_timeout_ms > QUIT_GRACE_MS)
		settings.shutdown_timeout_ms = QUIT_GRACE_MS;
	daemon_shutdown();
}

/* Standard input: q or Q quits; its end does not. */
static void
stdin_cb(evutil_socket_t fd, short what, void *arg)
{
	char	 buf[256];
	ssize_t	 n;

	n = platform_stdin_read(buf, sizeof(buf));
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		/* EOF, or EIO when in the background of a terminal. */
		log_debug("standard input %s: q no longer quits",
		    n == 0 ? "ended" : "is unreadable");
		event_del(&stdin_ev);
		return;
	}
	if (memchr(buf, 'q', n) != NULL || memchr(buf, 'Q', n) != NULL) {
		event_del(&stdin_ev);
		quit("q read on standard input");
	}
}

/* --runtime-timeout passed without a runtime: shut down, with status 0. */
static void
timeout_cb(evutil_socket_t fd, short what, void *arg)
{
	log_info("No runtime connected before timeout.");
	log_info("Starting automatic shutdown.");
	daemon_shutdown();
}

/* The tool that launched us is gone when we have another parent. */
static void
parent_cb(evutil_socket_t fd, short what, void *arg)
{
	pid_t	 now = platform_parent_pid();

	if (now == parent_pid || now == -1)
		return;
	event_del(&parent_ev);
	log_info("the tool that started dsroute (pid %ld) is gone",
	    (long)parent_pid);
	quit("no parent");
}

static void
sigquit_cb(evutil_socket_t fd, short what, void *arg)
{
	quit("SIGQUIT received");
}

/* The host and port an application uses to reach the main route. */
static void
app_address(char *host, size_t len, int *port)
{
	struct endpoint	*ep = &main_route->endpoint[SIDE_REMOTE];

	if (cmd->address != NULL) {
		/* Without adb the user forwards to the same device port. */
		snprintf(host, len, "%s", cmd->app_host);
		*port = forward.device_port > 0 ? forward.device_port :
		    cmd->app_port;
		return;
	}
	if (forward.kind != FORWARD_NONE) {
		snprintf(host, len, "127.0.0.1");
		*port = forward.device_port;
		return;
	}
	if (tcp_address(ep, host, len, port) == -1) {
		snprintf(host, len, "?");
		*port = 0;
	} else if (strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0)
		snprintf(host, len, "THIS-HOST");
}

/* The --info text for a browser app, which takes no suspend. */
static void
print_ws_info(const char *tool)
{
	struct endpoint	*ws = &main_route->endpoint[SIDE_REMOTE];
	long		 pid = (long)getpid();

	printf("How to connect current dsroute pid=%ld with a browser app and "
	    "diagnostics tooling.\n", pid);
	printf("Start the app (its .NET runtime built with the diagnostic "
	    "server) with this environment variable set:\n");
	printf("DOTNET_DiagnosticPorts=ws://%s\n", strchr(ws->name, ':') + 1);
	if (tool != NULL)
		printf("Run diagnostic tool connecting the app through dsroute "
		    "pid=%ld:\n%s\n", pid, tool);
	printf("See dsroute(1) for additional details and examples.\n\n");
	fflush(stdout);
}

/* Print dotnet-dsrouter's --info text for the main route. */
static void
print_info(void)
{
	struct endpoint	*ipc = &main_route->endpoint[SIDE_LOCAL];
	char		 host[INET6_ADDRSTRLEN + 16], tool[1200];
	const char	*tool_line = tool;
	int		 port;
	int		 app_listens = cmd->mode == MODE_SERVER_CLIENT ||
			    cmd->mode == MODE_CLIENT_CLIENT;

	if (default_ipc)
		snprintf(tool, sizeof(tool), "dotnet-trace collect -p %ld",
		    (long)getpid());
	else if (ipc->role == ROLE_LISTEN)
		snprintf(tool, sizeof(tool), "dotnet-trace collect "
		    "--diagnostic-port %s,connect", ipc_name);
	else
		snprintf(tool, sizeof(tool), "dotnet-trace collect "
		    "--diagnostic-port %s   (start it before the application)",
		    ipc_name);
	/* A tool that launched us knows how it connects. */
	if (parent != NULL)
		tool_line = NULL;
	if (launch_wanted()) {
		printf("The application is dsroute pid=%ld's child, its "
		    "runtime dialling the router.\n", (long)getpid());
		if (tool_line != NULL)
			printf("Run diagnostic tool connecting it through "
			    "dsroute:\n%s\n", tool_line);
		printf("See dsroute(1) for additional details and "
		    "examples.\n\n");
		fflush(stdout);
		return;
	}
	if (cmd->options & O_WS) {
		print_ws_info(tool_line);
		return;
	}
	app_address(host, sizeof(host), &port);
	preset_howto(stdout, cmd->device != NULL ? cmd->device :
	    "the target host", host, port, app_listens, tool_line);
}

/* The routes listen: start what runs around them. */
static int
dsrouter_start(void)
{
	struct endpoint	*tcp = &main_route->endpoint[SIDE_REMOTE];
	struct timeval	 tv;
	int		 fd, sig;

	const char	*kind = cmd->options & O_WS ? "WebSocket" : "tcp";

	if (tcp->role == ROLE_LISTEN && tcp->transport->exposure != NULL &&
	    tcp->transport->exposure(tcp) != EXPOSURE_NONE)
		log_warning("Binding %s server endpoint to anything except "
		    "loopback interface (localhost, 127.0.0.1 or [::1]) is NOT "
		    "recommended. Any connections towards %s server endpoint "
		    "will be unauthenticated and unencrypted.", kind, kind);
	if (default_ipc)
		log_info("tools find this router with -p %ld: dotnet-trace "
		    "collect -p %ld, or dotnet-trace ps", (long)getpid(),
		    (long)getpid());
	if (show_info || (cmd->address != NULL && log_enabled(LL_INFO)))
		print_info();

	if (watch_stdin) {
		if ((fd = platform_stdin_event_fd()) != -1) {
			event_assign(&stdin_ev, base, fd, EV_READ | EV_PERSIST,
			    stdin_cb, NULL);
			event_add(&stdin_ev, NULL);
		} else {
			event_assign(&stdin_ev, base, -1, EV_PERSIST, stdin_cb,
			    NULL);
			timeval_ms(&tv, STDIN_POLL_MS);
			event_add(&stdin_ev, &tv);
		}
		log_debug("q on standard input quits");
	}
	if (parent_pid != -1) {
		event_assign(&parent_ev, base, -1, EV_PERSIST, parent_cb,
		    NULL);
		timeval_ms(&tv, PARENT_CHECK_MS);
		event_add(&parent_ev, &tv);
	}
	if (!(blocked & BLOCK_QUIT) && (sig = platform_quit_signal()) != -1) {
		evsignal_assign(&sigquit_ev, base, sig, sigquit_cb, NULL);
		evsignal_add(&sigquit_ev, NULL);
		watch_quit = 1;
	}
	evtimer_assign(&timeout_ev, base, timeout_cb, NULL);
	if (runtime_timeout_s >= 0 && !runtime_available) {
		timeval_ms(&tv, runtime_timeout_s * 1000);
		evtimer_add(&timeout_ev, &tv);
		log_debug("stopping unless a runtime is seen within %ds",
		    runtime_timeout_s);
	}
	forward_start(&forward);
	return (launch_start(main_route, SIDE_REMOTE));
}

/* The loop ended: undo the forwarding, free our events. */
static void
dsrouter_stop(void)
{
	launch_stop();
	forward_stop(&forward);
	if (watch_stdin)
		event_del(&stdin_ev);
	if (parent_pid != -1)
		event_del(&parent_ev);
	if (watch_quit)
		event_del(&sigquit_ev);
	evtimer_del(&timeout_ev);
	child_cleanup();
}

/*
 * Read the quit key from a terminal, or from the pipe of a tool that
 * launched us; not from a file, nor from anything else redirected.
 */
static int
stdin_watchable(void)
{
	if (platform_stdin_terminal())
		return (1);
	if (parent == NULL)
		return (0);
	if (!platform_stdin_pipe()) {
		log_debug("standard input is not a pipe: q does not quit");
		return (0);
	}
	return (1);
}

/* The parent's pid from --parentprocess PID:NAME, if it is our parent. */
static void
parse_parent(void)
{
	char	*end;
	long	 pid;

	if (parent == NULL)
		return;
	pid = strtol(parent, &end, 10);
	if (end != parent && (*end == ':' || *end == '\0') &&
	    pid == (long)platform_parent_pid())
		parent_pid = (pid_t)pid;
}

/*
 * Whether the command line is dotnet-dsrouter's: dsroute runs under that
 * name, or its first argument is one of its commands.
 */
int
dsrouter_wanted(int argc, char *argv[])
{
	char	 name[256];

	platform_program_name(argv[0], name, sizeof(name));
	return (strcmp(name, "dotnet-dsrouter") == 0 ||
	    (argc > 1 && is_command(argv[1])));
}

/* The exit status: 1 if iproxy ended, since the device was lost. */
static int
dsrouter_status(int rv)
{
	free_args(args);
	args = NULL;
	free(web_socket);
	web_socket = NULL;
	return (forward.failed ? 1 : launch_status(rv));
}

/*
 * The dotnet-dsrouter command line: argv[1] is the command.  Make its
 * routes and return the front end for the daemon.
 */
const struct frontend *
dsrouter_frontend(int argc, char *argv[])
{
	char	 label[64], err[512];
	size_t	 i;

	if (argc < 2)
		usage(1);
	if (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-?") == 0)
		usage(0);
	if (strcmp(argv[1], "--version") == 0) {
		printf("dsroute %s (dotnet-dsrouter command line)\n",
		    PACKAGE_VERSION);
		exit(0);
	}
	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (strcmp(argv[1], commands[i].name) == 0)
			cmd = &commands[i];
	}
	if (cmd == NULL)
		fatalx("%s: unknown command; give client-server, "
		    "server-server, server-client, client-client, "
		    "server-websocket, client-websocket, android, "
		    "android-emu, ios or ios-sim", argv[1]);

	snprintf(label, sizeof(label), "dsroute %s", cmd->name);
	args = rewrite_args(argc - 1, argv + 1, label);
	parse_options(argc - 1, args);
	check_command();

	if (cmd->address != NULL) {
		if (host_port != -1) {
			snprintf(preset_address, sizeof(preset_address),
			    "127.0.0.1:%d", host_port);
			tcp_server = preset_address;
		} else if (cmd->mode == MODE_SERVER_SERVER)
			tcp_server = cmd->address;
		else
			tcp_client = cmd->address;
	}
	if ((cmd->mode == MODE_CLIENT_SERVER ||
	    cmd->mode == MODE_CLIENT_CLIENT) && ipc_client == NULL)
		fatalx("%s needs --ipc-client PATH: the diagnostic port a tool "
		    "listens on (dotnet-trace collect --diagnostic-port PATH)",
		    cmd->name);
	if ((cmd->mode == MODE_SERVER_CLIENT ||
	    cmd->mode == MODE_CLIENT_CLIENT) && tcp_client == NULL)
		fatalx("%s needs --tcp-client HOST:PORT: where the application "
		    "listens (DOTNET_DiagnosticPorts=HOST:PORT,listen)",
		    cmd->name);
	check_ipc_client();
	if (tcp_server == NULL)
		tcp_server = "127.0.0.1:0";
	if ((cmd->options & O_WS) && web_socket == NULL) {
		web_socket_url = "ws://127.0.0.1:8088/diagnostics";
		web_socket = ws_option(web_socket_url);
	}
	if (cmd->options & O_WS)
		ws_check_host();

	plan_forwarding();
	if (forward_prepare(&forward, err, sizeof(err)) == -1)
		fatalx("%s: %s", cmd->name, err);
	make_routes();
	parse_parent();
	/* The application has our standard input, and the terminal. */
	watch_stdin = !launch_wanted() && stdin_watchable();
	block_signals();

	return (&dsrouter);
}
