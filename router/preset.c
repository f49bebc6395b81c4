/* SPDX-License-Identifier: ISC */

/*
 * The device side of the dotnet-dsrouter presets: the port forwarding
 * that lets a phone reach this host (adb reverse or adb forward, kept in
 * place every 5 seconds and removed at exit only if we added it; iproxy
 * for an iOS device over usbmux) and the text that tells a user how to
 * start the application and the tool.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

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
#include "router/daemon.h"
#include "router/engine.h"
#include "router/frontend.h"

#define ADB_CHECK_MS		5000	/* as dotnet-dsrouter re-asserts it */
#define ADB_TIMEOUT_MS		15000	/* adb may have to start its server */
#define ADB_REMOVE_TIMEOUT_MS	5000
#define IPROXY_GRACE_MS		2000

static void	 adb_check(evutil_socket_t, short, void *);

/*
 * Locate adb as dotnet-dsrouter does: the SDK's platform-tools, or PATH
 * (platform_find_program(): adb.exe on Windows).
 */
static int
find_adb(char *buf, size_t len)
{
	static const char *const vars[] = {
		"ANDROID_SDK_ROOT", "ANDROID_HOME"
	};
	const char	*sdk;
	size_t		 i;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++) {
		if ((sdk = getenv(vars[i])) == NULL || *sdk == '\0')
			continue;
		if (platform_find_program(sdk, "platform-tools/adb", buf,
		    len) == 0) {
			log_debug("using %s (from $%s)", buf, vars[i]);
			return (0);
		}
		log_warning("$%s is %s, but %s is not there; looking for adb "
		    "in %s", vars[i], sdk, buf, platform_program_places());
	}
	if (platform_find_program(NULL, "adb", buf, len) == 0) {
		log_debug("using %s (from %s)", buf,
		    platform_program_places());
		return (0);
	}
	return (-1);
}

/* Pick a free loopback port for a forwarder to listen on. */
static int
free_port(void)
{
	struct sockaddr_in	 sin;
	socklen_t		 len = sizeof(sin);
	int			 fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	evutil_closesocket(fd);
	return (port);
}

/*
 * Get a forward ready before the routes are made: find its program and,
 * for iproxy, choose the local port it will listen on.  For adb, a
 * missing program is logged and forwarding is skipped, as dotnet-dsrouter
 * does; iproxy is the only way to an iOS device, so its absence is an
 * error.  Return -1 with a reason in err.
 */
int
forward_prepare(struct forward *fw, char *err, size_t len)
{
	int	 port;

	switch (fw->kind) {
	case FORWARD_NONE:
		return (0);
	case FORWARD_ADB_REVERSE:
	case FORWARD_ADB_FORWARD:
		if (fw->device_port <= 0) {
			snprintf(err, len, "adb forwarding uses device port "
			    "%d (the host port less one): give a host port "
			    "above 1", fw->device_port);
			return (-1);
		}
		if (find_adb(fw->program, sizeof(fw->program)) == -1) {
			log_error("adb not found: set ANDROID_HOME (or "
			    "ANDROID_SDK_ROOT) to the Android SDK or put adb "
			    "in %s; until then run adb %s tcp:%d tcp:%d "
			    "yourself", platform_program_places(),
			    fw->kind == FORWARD_ADB_REVERSE ?
			    "reverse" : "forward", fw->kind ==
			    FORWARD_ADB_REVERSE ? fw->device_port :
			    fw->host_port, fw->kind == FORWARD_ADB_REVERSE ?
			    fw->host_port : fw->device_port);
			fw->kind = FORWARD_NONE;
		}
		return (0);
	case FORWARD_IPROXY:
		if (platform_find_program(NULL, "iproxy", fw->program,
		    sizeof(fw->program)) == -1) {
			snprintf(err, len, "iproxy not found in %s: an iOS "
			    "device is reached through usbmuxd with iproxy "
			    "(%s); or forward the device's port %d to this "
			    "host yourself and use ios-sim",
			    platform_program_places(),
			    platform_iproxy_package(), fw->device_port);
			return (-1);
		}
		if ((port = free_port()) == -1) {
			snprintf(err, len, "no free loopback port for iproxy: "
			    "%s", strerror(errno));
			return (-1);
		}
		fw->host_port = port;
		return (0);
	}
	return (0);
}

/* Build "PROGRAM [-s SERIAL] WORDS..." into argv, which has room for 8. */
static void
adb_argv(struct forward *fw, char *argv[], const char *w1, const char *w2,
    const char *w3, const char *w4)
{
	const char	*words[] = { w1, w2, w3, w4 };
	int		 n = 0;
	size_t		 i;

	argv[n++] = fw->program;
	if (fw->serial != NULL) {
		argv[n++] = "-s";
		argv[n++] = (char *)fw->serial;
	}
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++) {
		if (words[i] != NULL)
			argv[n++] = (char *)words[i];
	}
	argv[n] = NULL;
}

/* The rule's key (the port it listens on) and target, as adb lists them. */
static void
adb_rule(struct forward *fw, char key[16], char target[16])
{
	int	 reverse = fw->kind == FORWARD_ADB_REVERSE;

	snprintf(key, 16, "tcp:%d", reverse ? fw->device_port : fw->host_port);
	snprintf(target, 16, "tcp:%d", reverse ? fw->host_port :
	    fw->device_port);
}

static const char *
adb_verb(struct forward *fw)
{
	return (fw->kind == FORWARD_ADB_REVERSE ? "reverse" : "forward");
}

/* Say once what the rule does, or that it works again. */
static void
adb_in_place(struct forward *fw, const char *how)
{
	fw->child.quiet = 0;
	if (fw->state == FWD_IN_PLACE)
		return;
	fw->state = FWD_IN_PLACE;
	if (fw->kind == FORWARD_ADB_REVERSE)
		log_info("adb reverse: the device's 127.0.0.1:%d reaches "
		    "127.0.0.1:%d here (%s)", fw->device_port, fw->host_port,
		    how);
	else
		log_info("adb forward: 127.0.0.1:%d here reaches the device's "
		    "port %d (%s)", fw->host_port, fw->device_port, how);
}

/* Log a failure once, and the adb output of later ones at debug level. */
static void
adb_failed(struct forward *fw, const char *what, int status)
{
	if (fw->state == FWD_FAILING)
		return;
	fw->state = FWD_FAILING;
	fw->child.quiet = 1;
	log_error("adb %s failed (%s %d): is a device attached (adb "
	    "devices)%s? Retrying every %ds", what, status == -1 ? "status" :
	    "exit status", status, fw->serial == NULL ? ", and only one" : "",
	    ADB_CHECK_MS / 1000);
}

/* `adb reverse|forward KEY TARGET` ended: the rule is ours if it worked. */
static void
adb_added(struct child *c, int status, struct evbuffer *output)
{
	struct forward	*fw = c->arg;

	if (fw->stopping)
		return;
	if (status != 0) {
		adb_failed(fw, adb_verb(fw), status);
		return;
	}
	fw->owned = 1;
	adb_in_place(fw, "added by dsroute, removed at exit");
}

/* Find the rule in `adb reverse|forward --list`: 1 ours, 0 none, -1 other. */
static int
adb_find(struct forward *fw, struct evbuffer *output, char *other,
    size_t len)
{
	char	 key[16], target[16], *line, *serial, *from, *to, *p;
	size_t	 n;
	int	 found = 0;

	adb_rule(fw, key, target);
	while (!found &&
	    (line = evbuffer_readln(output, &n, EVBUFFER_EOL_LF)) != NULL) {
		p = line;
		serial = strsep(&p, " \t");
		from = strsep(&p, " \t");
		to = strsep(&p, " \t");
		if (from != NULL && to != NULL && strcmp(from, key) == 0 &&
		    (fw->kind == FORWARD_ADB_REVERSE || fw->serial == NULL ||
		    strcmp(serial, fw->serial) == 0)) {
			snprintf(other, len, "%s", to);
			found = strcmp(to, target) == 0 ? 1 : -1;
		}
		free(line);
	}
	return (found);
}

/* `adb reverse|forward --list` ended: keep, report, or add the rule. */
static void
adb_listed(struct child *c, int status, struct evbuffer *output)
{
	struct forward	*fw = c->arg;
	char		 key[16], target[16], other[64];
	char		*argv[8];

	if (fw->stopping)
		return;
	if (status != 0) {
		adb_failed(fw, "--list", status);
		return;
	}
	adb_rule(fw, key, target);
	switch (adb_find(fw, output, other, sizeof(other))) {
	case 1:
		adb_in_place(fw, fw->owned ? "added by dsroute, removed at "
		    "exit" : "already there; left in place at exit");
		return;
	case -1:
		if (fw->state != FWD_CONFLICT)
			log_warning("adb %s: %s already goes to %s, not %s; "
			    "leaving that rule alone (adb %s --remove %s "
			    "frees it)", adb_verb(fw), key, other, target,
			    adb_verb(fw), key);
		fw->state = FWD_CONFLICT;
		return;
	}
	/* Missing: add it (again, if the device or adb restarted). */
	fw->owned = 0;
	adb_argv(fw, argv, adb_verb(fw), key, target, NULL);
	snprintf(fw->child.name, sizeof(fw->child.name), "adb %s %s %s",
	    adb_verb(fw), key, target);
	fw->child.done = adb_added;
	(void)child_spawn(&fw->child, argv);
}

/* Every few seconds: is the rule still there? */
static void
adb_check(evutil_socket_t fd, short what, void *arg)
{
	struct forward	*fw = arg;
	char		*argv[8];

	if (child_running(&fw->child))
		return;
	adb_argv(fw, argv, adb_verb(fw), "--list", NULL, NULL);
	snprintf(fw->child.name, sizeof(fw->child.name), "adb %s --list",
	    adb_verb(fw));
	fw->child.timeout_ms = ADB_TIMEOUT_MS;
	fw->child.done = adb_listed;
	fw->child.arg = fw;
	(void)child_spawn(&fw->child, argv);
}

/* iproxy ended on its own: the device is out of reach, so stop. */
static void
iproxy_ended(struct child *c, int status, struct evbuffer *output)
{
	struct forward	*fw = c->arg;

	if (fw->stopping)
		return;
	log_error("iproxy ended (%s %d): the device's port %d is out of "
	    "reach; stopping", status == -1 ? "status" : "exit status",
	    status, fw->device_port);
	fw->failed = 1;
	daemon_shutdown();
}

/* Start forwarding, once the routes listen. */
void
forward_start(struct forward *fw)
{
	struct timeval	 tv;
	char		 host[16], device[16];
	char		*argv[8];
	int		 n = 0;

	switch (fw->kind) {
	case FORWARD_NONE:
		break;
	case FORWARD_ADB_REVERSE:
	case FORWARD_ADB_FORWARD:
		event_assign(&fw->timer, base, -1, EV_PERSIST, adb_check, fw);
		timeval_ms(&tv, ADB_CHECK_MS);
		event_add(&fw->timer, &tv);
		adb_check(-1, 0, fw);
		break;
	case FORWARD_IPROXY:
		snprintf(host, sizeof(host), "%d", fw->host_port);
		snprintf(device, sizeof(device), "%d", fw->device_port);
		argv[n++] = fw->program;
		if (fw->serial != NULL) {
			argv[n++] = "-u";
			argv[n++] = (char *)fw->serial;
		}
		argv[n++] = host;
		argv[n++] = device;
		argv[n] = NULL;
		snprintf(fw->child.name, sizeof(fw->child.name), "iproxy");
		fw->child.done = iproxy_ended;
		fw->child.arg = fw;
		if (child_spawn(&fw->child, argv) == -1) {
			fw->failed = 1;
			daemon_shutdown();
			return;
		}
		log_info("iproxy: 127.0.0.1:%d here reaches the iOS device's "
		    "port %d over usbmux", fw->host_port, fw->device_port);
		break;
	}
}

static void
adb_removed(struct child *c, int status, struct evbuffer *output)
{
	if (status == 0)
		log_info("%s: removed the rule dsroute added", c->name);
	else
		log_error("%s failed (%s %d): the rule may still be there",
		    c->name, status == -1 ? "status" : "exit status", status);
}

/* Stop forwarding at exit; remove an adb rule only if we added it. */
void
forward_stop(struct forward *fw)
{
	char	 key[16], target[16];
	char	*argv[8];

	fw->stopping = 1;
	switch (fw->kind) {
	case FORWARD_NONE:
		return;
	case FORWARD_IPROXY:
		child_stop(&fw->child, IPROXY_GRACE_MS);
		return;
	case FORWARD_ADB_REVERSE:
	case FORWARD_ADB_FORWARD:
		break;
	}
	event_del(&fw->timer);
	child_stop(&fw->child, 1000);
	if (!fw->owned)
		return;
	adb_rule(fw, key, target);
	adb_argv(fw, argv, adb_verb(fw), "--remove", key, NULL);
	snprintf(fw->child.name, sizeof(fw->child.name), "adb %s --remove %s",
	    adb_verb(fw), key);
	fw->child.timeout_ms = ADB_REMOVE_TIMEOUT_MS;
	fw->child.quiet = 0;
	fw->child.done = adb_removed;
	if (child_spawn(&fw->child, argv) == 0)
		child_wait(&fw->child);
}

/*
 * Print how to start the application and the tool, as dotnet-dsrouter's
 * --info does: the application's DOTNET_DiagnosticPorts values (or the
 * .NET SDK's MSBuild properties that set them) for ordinary and start-up
 * tracing, then the tool's command line unless tool is NULL.
 */
void
preset_howto(FILE *fp, const char *device, const char *host, int port,
    int app_listens, const char *tool)
{
	const char	*mode = app_listens ? "listen" : "connect";
	char		 address[300];
	long		 pid = (long)getpid();

	snprintf(address, sizeof(address), strchr(host, ':') != NULL ?
	    "[%s]:%d" : "%s:%d", host, port);
	fprintf(fp, "How to connect current dsroute pid=%ld with %s and "
	    "diagnostics tooling.\n", pid, device);
	fprintf(fp, "Start an application on %s with ONE of the following "
	    "environment variables set:\n", device);
	fprintf(fp, "[Default Tracing]\nDOTNET_DiagnosticPorts=%s,nosuspend,"
	    "%s\n", address, mode);
	fprintf(fp, "[Startup Tracing]\nDOTNET_DiagnosticPorts=%s,suspend,%s\n",
	    address, mode);
	fprintf(fp, "or build and run it on %s with these MSBuild "
	    "properties:\n", device);
	fprintf(fp, "[Default Tracing]\ndotnet build -t:Run -c Release "
	    "-p:DiagnosticAddress=%s -p:DiagnosticPort=%d "
	    "-p:DiagnosticSuspend=false -p:DiagnosticListenMode=%s\n", host,
	    port, mode);
	fprintf(fp, "[Startup Tracing]\ndotnet build -t:Run -c Release "
	    "-p:DiagnosticAddress=%s -p:DiagnosticPort=%d "
	    "-p:DiagnosticSuspend=true -p:DiagnosticListenMode=%s\n", host,
	    port, mode);
	if (tool != NULL)
		fprintf(fp, "Run diagnostic tool connecting application on %s "
		    "through dsroute pid=%ld:\n%s\n", device, pid, tool);
	fprintf(fp, "See dsroute(1) for additional details and examples.\n\n");
	fflush(fp);
}
