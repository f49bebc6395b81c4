/* SPDX-License-Identifier: ISC */

/*
 * standins: drives platform/posix_standin.c for tests/standin.sh, on an event
 * loop of its own as the daemon's.  Its stand-ins are this program run
 * again, so main() calls standin_main() first, as dsroute's does.
 *
 *   standins one NAME WHAT [leak]
 *	start one stand-in and print "pid=P fd=F start=T"; with leak, a
 *	process that keeps a copy of our end of the lifeline ("leak=P"),
 *	so that only PR_SET_PDEATHSIG can end the stand-in when we are
 *	killed.  On SIGUSR1 stop it, and once it is reaped print "reaped"
 *	and exit 0.
 *   standins churn N NAME
 *	start N stand-ins, wait until each has taken NAME, stop them all,
 *	and print "running N", "reaped N", "children none" and "fds
 *	before=X after=Y"; exit 0 if all went so.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "platform/child.h"
#include "platform/platform.h"
#include "platform/standin.h"
#include "router/engine.h"

#define DEADLINE_MS	10000

static struct standin	*all;
static pid_t		*pids;		/* theirs, kept past the stop */
static int		 nall;
static int		 stopped;

/* The process is gone, reaped: a zombie still answers kill(0). */
static int
gone(pid_t pid)
{
	return (kill(pid, 0) == -1 && errno == ESRCH);
}

/* Its comm is name's first 15 bytes. */
static int
named(pid_t pid, const char *name)
{
	char	 path[64], comm[64];
	FILE	*f;
	int	 ok = 0;

	snprintf(path, sizeof(path), "/proc/%ld/comm", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	if (fgets(comm, sizeof(comm), f) != NULL) {
		comm[strcspn(comm, "\n")] = '\0';
		ok = strncmp(comm, name, 15) == 0 && strlen(comm) ==
		    (strlen(name) < 15 ? strlen(name) : 15);
	}
	fclose(f);
	return (ok);
}

/* Run the loop a little, so that SIGCHLD is handled. */
static void
spin(void)
{
	struct timeval	 tv = { 0, 10000 };

	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
}

static void
one_stop(evutil_socket_t sig, short what, void *arg)
{
	standin_stop(&all[0]);
	stopped = 1;
}

static int
one(int argc, char *argv[])
{
	struct event	*ev;
	char		 err[256];
	pid_t		 pid, leak = -1;

	if (argc < 2)
		return (2);
	all = calloc(1, sizeof(*all));
	if (standin_start(&all[0], argv[0], argv[1], getenv("STANDIN_TMPDIR"),
	    err, sizeof(err)) == -1) {
		fprintf(stderr, "standins: %s\n", err);
		return (1);
	}
	pid = all[0].pid;
	if (argc > 2 && strcmp(argv[2], "leak") == 0) {
		if ((leak = fork()) == 0) {
			/* Our end of the lifeline, open as long as it lives. */
			(void)dup(all[0].fd);
			for (;;)
				pause();
		}
	}
	printf("pid=%ld fd=%d start=%llu", (long)pid, all[0].fd,
	    standin_start_time(&all[0]));
	if (leak != -1)
		printf(" leak=%ld", (long)leak);
	printf("\n");
	fflush(stdout);
	ev = evsignal_new(base, SIGUSR1, one_stop, NULL);
	evsignal_add(ev, NULL);
	while (!stopped)
		event_base_loop(base, EVLOOP_ONCE);
	event_free(ev);
	while (!gone(pid))
		spin();
	printf("reaped\n");
	fflush(stdout);
	child_cleanup();
	return (0);
}

static int
churn(int argc, char *argv[])
{
	char	 err[256], what[64];
	long	 before, after;
	uint64_t deadline;
	int	 i, n, up;

	if (argc < 2 || (nall = atoi(argv[0])) <= 0)
		return (2);
	if ((all = calloc(nall, sizeof(*all))) == NULL ||
	    (pids = calloc(nall, sizeof(*pids))) == NULL)
		return (1);
	/* The module keeps our program open from its first start. */
	if (standin_init(err, sizeof(err)) == -1) {
		fprintf(stderr, "standins: %s\n", err);
		return (1);
	}
	before = platform_fds_in_use();
	for (i = 0; i < nall; i++) {
		snprintf(what, sizeof(what), "dsroute stand-in %d", i);
		if (standin_start(&all[i], argv[1], what, NULL, err,
		    sizeof(err)) == -1) {
			fprintf(stderr, "standins: %d: %s\n", i, err);
			return (1);
		}
		pids[i] = all[i].pid;
	}
	deadline = now_ms() + DEADLINE_MS;
	do {
		for (i = up = 0; i < nall; i++)
			up += named(all[i].pid, argv[1]);
		if (up < nall)
			spin();
	} while (up < nall && now_ms() < deadline);
	printf("running %d\n", up);
	for (i = 0; i < nall; i++)
		standin_stop(&all[i]);
	do {
		spin();
		for (i = n = 0; i < nall; i++)
			n += gone(pids[i]);
	} while (n < nall && now_ms() < deadline);
	printf("reaped %d\n", n);
	child_cleanup();
	printf("children %s\n", waitpid(-1, NULL, WNOHANG) == -1 &&
	    errno == ECHILD ? "none" : "some");
	after = platform_fds_in_use();
	printf("fds before=%ld after=%ld\n", before, after);
	return (up == nall && n == nall && before == after ? 0 : 1);
}

int
main(int argc, char *argv[])
{
	(void)standin_main(argc, argv);
	if ((base = event_base_new()) == NULL)
		return (1);
	child_init(base);
	if (argc > 1 && strcmp(argv[1], "one") == 0)
		return (one(argc - 2, argv + 2));
	if (argc > 1 && strcmp(argv[1], "churn") == 0)
		return (churn(argc - 2, argv + 2));
	fprintf(stderr, "usage: standins one NAME WHAT [leak] | churn N "
	    "NAME\n");
	return (2);
}
