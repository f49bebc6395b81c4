/* SPDX-License-Identifier: ISC */

/*
 * The application a front end runs after its options, "-- COMMAND
 * [ARG...]" (dsroute's and dotnet-dsrouter's command lines): a wrapper
 * entrypoint, so that an image runs the router and the app in one
 * container with no sidecar and no shared volume.  Once every endpoint
 * listens, the child starts with DOTNET_DiagnosticPorts naming the
 * router's socket for runtimes (added to any value it has, ",suspend"
 * when asked, else ",nosuspend").  SIGINT and SIGTERM are passed on to
 * it; when it ends, the router drains and exits with its status, 128+N
 * for a signal N, as a shell would.  The process itself is the
 * platform's (child.h).
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/child.h"
#include "platform/platform.h"
#include "router/daemon.h"
#include "router/engine.h"
#include "router/frontend.h"
#include "router/settings.h"
#include "transports/transport.h"

#define LAUNCH_ENV		"DOTNET_DiagnosticPorts"
#define LAUNCH_STOP_MS		5000	/* its grace when we stop first */
#define STATUS_NOT_FOUND	127	/* a shell's, for a missing program */
#define STATUS_CANNOT_RUN	126	/* ... and for one it cannot run */

static char	**app_argv;		/* NULL: no -- COMMAND */
static int	 app_suspend;
static struct child app;
static int	 app_status = -1;	/* ours to exit with, once known */
static int	 stopping;
static char	*app_env[2];
static char	 own_dir[PATH_MAX];	/* of our socket for it, or "" */
static pid_t	 own_dir_pid;		/* who made it: a fork is not us */

/* The command after --, kept as given, and whether it starts suspended. */
void
launch_set(char **argv, int suspend)
{
	app_argv = argv;
	app_suspend = suspend;
}

/* Whether a command was given after --. */
int
launch_wanted(void)
{
	return (app_argv != NULL);
}

/* At exit, once the socket in it is gone. */
static void
own_dir_remove(void)
{
	if (own_dir[0] != '\0' && getpid() == own_dir_pid)
		sockfile_private_dir_remove(own_dir);
}

/*
 * The endpoint spec of a socket of our own for the application's runtime
 * to dial, when the command line gives none: app.sock in a directory
 * made for it in $TMPDIR (or /tmp), dsroute-PID-XXXXXX, mode 0700, so
 * that a /tmp anyone may write (a Kubernetes emptyDir is 0777, not
 * sticky) is no danger; both owned by --user when we drop to it.  The
 * directory goes at exit.  Return -1 with a reason in err.
 */
int
launch_private_spec(char *spec, size_t len, char *err, size_t errlen)
{
	const char	*dir = getenv("TMPDIR"), *user = NULL;
	size_t		 n;

	if (dir == NULL || dir[0] != '/')
		dir = "/tmp";
	n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	if (settings.user[0] != '\0')
		user = settings.user;
	if ((size_t)snprintf(own_dir, sizeof(own_dir), "%.*s/dsroute-%ld-XXXXXX",
	    (int)n, dir, (long)getpid()) >= sizeof(own_dir)) {
		own_dir[0] = '\0';
		snprintf(err, errlen, "TMPDIR is too long for a socket path");
		return (-1);
	}
	if (sockfile_private_dir(own_dir, user, err, errlen) == -1) {
		own_dir[0] = '\0';
		return (-1);
	}
	own_dir_pid = getpid();
	atexit(own_dir_remove);
	if ((size_t)snprintf(spec, len, "uds:%s/app.sock,listen%s%s", own_dir,
	    user != NULL ? ",owner=" : "", user != NULL ? user : "") >= len) {
		snprintf(err, errlen, "TMPDIR is too long for a socket path");
		return (-1);
	}
	return (0);
}

/* The application ended: say how in one line, and stop with its status. */
static void
launch_done(struct child *c, int status, struct evbuffer *output)
{
	(void)output;
	if (c->signal != 0) {
		app_status = 128 + c->signal;
		log_info("the application (%s) was ended by signal %d; "
		    "dsroute stops, exit status %d", c->name, c->signal,
		    app_status);
	} else {
		app_status = status;
		log_info("the application (%s) exited with status %d; dsroute "
		    "stops with it", c->name, status);
	}
	if (!stopping)
		daemon_shutdown();
}

/*
 * The endpoint of the route where the application's runtime dials in: a
 * listening socket of this host, on side or, if side is -1, either
 * (LOCAL first); NULL if there is none.
 */
static const struct endpoint *
runtime_endpoint(const struct route *r, int side)
{
	const struct endpoint	*ep;
	int			 last = side == -1 ? SIDE_REMOTE : side;

	for (side = side == -1 ? SIDE_LOCAL : side; side <= last; side++) {
		ep = &r->endpoint[side];
		if (ep->role == ROLE_LISTEN && ep->transport->local &&
		    ep->transport->runtime_address != NULL)
			return (ep);
	}
	return (NULL);
}

/*
 * The routes listen: start the application with DOTNET_DiagnosticPorts
 * naming route r's socket for runtimes, the endpoint on side (-1: the
 * one that is such a socket).  Return -1 with a line logged if it cannot
 * start; the exit status says how (127 for a program that is not there,
 * as a shell has it).
 */
int
launch_start(const struct route *r, int side)
{
	const struct endpoint	*ep;
	const char		*old = getenv(LAUNCH_ENV);
	char			 path[1024];
	int			 e;

	if (app_argv == NULL)
		return (0);
	if ((ep = runtime_endpoint(r, side)) == NULL ||
	    ep->transport->runtime_address(ep, path, sizeof(path)) == -1) {
		log_critical("-- %s: neither endpoint is a socket of this host "
		    "that a runtime dials (uds:PATH,listen); the application "
		    "is not started", app_argv[0]);
		app_status = 1;
		return (-1);
	}
	if (asprintf(&app_env[0], "%s=%s%s%s,%s", LAUNCH_ENV,
	    old != NULL ? old : "", old != NULL && *old != '\0' &&
	    old[strlen(old) - 1] != ';' ? ";" : "", path,
	    app_suspend ? "suspend" : "nosuspend") == -1) {
		app_env[0] = NULL;
		log_critical("out of memory");
		app_status = 1;
		return (-1);
	}
	app_env[1] = NULL;
	snprintf(app.name, sizeof(app.name), "%s", app_argv[0]);
	app.done = launch_done;
	if (child_launch(&app, app_argv, app_env) == -1) {
		e = errno;
		log_critical("cannot run %s: %s", app_argv[0], strerror(e));
		app_status = e == ENOENT ? STATUS_NOT_FOUND : STATUS_CANNOT_RUN;
		return (-1);
	}
	snprintf(app.name, sizeof(app.name), "%.200s, pid %d", app_argv[0],
	    (int)app.pid);
	log_info("started the application (%s) with %s%s", app.name,
	    app_env[0], app_suspend ? ": its runtime waits for a "
	    "ResumeRuntime" : "");
	return (0);
}

/* SIGTERM or SIGINT: the application's to act on, while it runs. */
int
launch_signal(int sig)
{
	if (!child_running(&app))
		return (0);
	log_info("passing %s on to the application (%s); dsroute stops when "
	    "it ends", sig == SIGTERM ? "SIGTERM" : "SIGINT", app.name);
	if (child_signal(&app, sig) == -1) {
		log_error("cannot signal the application: %s",
		    strerror(errno));
		return (0);
	}
	return (1);
}

/*
 * The loop ended: an application still running (the router stopped for
 * another reason) gets SIGTERM, and SIGKILL a while later.
 */
void
launch_stop(void)
{
	stopping = 1;
	if (child_running(&app)) {
		log_info("stopping the application (%s)", app.name);
		child_stop(&app, LAUNCH_STOP_MS);
	}
	free(app_env[0]);
	app_env[0] = NULL;
}

/* The exit status: the application's, once it ended, else rv. */
int
launch_status(int rv)
{
	return (app_status >= 0 ? app_status : rv);
}
