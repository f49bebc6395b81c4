/* SPDX-License-Identifier: ISC */

/*
 * The sd_notify(3) protocol, without libsystemd: a service manager that
 * starts dsroute with Type=notify sets NOTIFY_SOCKET to a datagram socket,
 * a path or an abstract name written with a leading '@', and learns from
 * one datagram of NAME=VALUE lines each time that the router is ready
 * (READY=1, once every listener listens), reloading (RELOADING=1 with the
 * monotonic time, then READY=1 when the reload is over, kept or not) and
 * stopping (STOPPING=1).  STATUS= says it in words for systemctl status.
 * A datagram that cannot go is logged once and never stops the router:
 * the service manager is told, not obeyed.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "platform/notify.h"

static int			 notify_fd = -1;
static struct sockaddr_un	 notify_addr;
static socklen_t		 notify_len;
static char			 notify_name[sizeof(notify_addr.sun_path) + 1];
static int			 notify_warned;

static void	 notify_state(const char *, const char *, va_list)
		    __attribute__((__format__(__printf__, 2, 0)));

/*
 * Read NOTIFY_SOCKET and remove it, so that no program we run takes it
 * for its own.  Call it before privileges are dropped.
 */
void
notify_open(void)
{
	const char	*v = getenv("NOTIFY_SOCKET");
	size_t		 n;

	if (v == NULL || *v == '\0') {
		unsetenv("NOTIFY_SOCKET");
		return;
	}
	n = strlen(v);
	log_escape(notify_name, sizeof(notify_name), v, n);
	unsetenv("NOTIFY_SOCKET");
	if ((v[0] != '/' && v[0] != '@') || n < 2 ||
	    n > sizeof(notify_addr.sun_path) - (v[0] == '/')) {
		log_warning("NOTIFY_SOCKET=%s: not a socket path or an "
		    "abstract name (@NAME); the service manager is not told "
		    "when the router is ready", notify_name);
		return;
	}
	memset(&notify_addr, 0, sizeof(notify_addr));
	notify_addr.sun_family = AF_UNIX;
	memcpy(notify_addr.sun_path, v, n);
	if (v[0] == '@')
		notify_addr.sun_path[0] = '\0';	/* abstract: no NUL after */
	notify_len = offsetof(struct sockaddr_un, sun_path) + n +
	    (v[0] == '/');
	/* Non-blocking: a service manager that does not read holds up no one. */
	if ((notify_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1) {
		log_warning("NOTIFY_SOCKET=%s: socket: %s; the service manager "
		    "is not told when the router is ready", notify_name,
		    strerror(errno));
		return;
	}
	log_debug("notifying the service manager at %s", notify_name);
}

/* Send one datagram of NAME=VALUE lines; say once if it cannot go. */
static void
notify_send(const char *msg)
{
	if (notify_fd == -1)
		return;
	if (sendto(notify_fd, msg, strlen(msg), MSG_NOSIGNAL,
	    (struct sockaddr *)&notify_addr, notify_len) != -1)
		return;
	if (!notify_warned)
		log_warning("cannot notify the service manager at %s: %s "
		    "(said once)", notify_name, strerror(errno));
	notify_warned = 1;
}

/* Send state and a STATUS= line made of fmt and ap. */
static void
notify_state(const char *state, const char *fmt, va_list ap)
{
	char	 status[256], msg[512];

	vsnprintf(status, sizeof(status), fmt, ap);
	snprintf(msg, sizeof(msg), "%s\nSTATUS=%s", state, status);
	notify_send(msg);
}

/* Start-up or a reload is over: serving. */
void
notify_ready(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	notify_state("READY=1", fmt, ap);
	va_end(ap);
}

/*
 * SIGHUP: reloading, until the next READY=1.  systemd 253 and later want
 * the CLOCK_MONOTONIC time of the request with it.
 */
void
notify_reloading(void)
{
	struct timespec	 ts;
	char		 msg[128];

	if (notify_fd == -1)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	snprintf(msg, sizeof(msg), "RELOADING=1\nSTATUS=reloading\n"
	    "MONOTONIC_USEC=%llu", (unsigned long long)ts.tv_sec * 1000000 +
	    (unsigned long long)ts.tv_nsec / 1000);
	notify_send(msg);
}

/* SIGTERM or SIGINT: draining, then gone. */
void
notify_stopping(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	notify_state("STOPPING=1", fmt, ap);
	va_end(ap);
}

void
notify_close(void)
{
	if (notify_fd != -1)
		close(notify_fd);
	notify_fd = -1;
}
