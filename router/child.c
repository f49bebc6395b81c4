/* SPDX-License-Identifier: ISC */

/*
 * Helper programs (adb, iproxy), run without a shell and without ever
 * blocking the event loop: each child's standard output and error come
 * back through pipes that libevent reads line by line, its exit through
 * SIGCHLD, and a deadline kills it if it hangs.  Its standard error is
 * logged at error level, as dotnet-dsrouter logs adb's.
 *
 * Bare processes (stand-ins) are only reaped: their owner hands their pid
 * over with child_reap_later() once it is done with them, so that the
 * same SIGCHLD event collects them and no pid is reused while its owner
 * may still signal it.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>
#ifdef HAVE_SYS_PRCTL_H
#include <sys/prctl.h>
#endif

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "platform/platform.h"
#include "router/engine.h"
#include "router/child.h"
#include "router/log.h"
#include "router/util.h"


static TAILQ_HEAD(, child) children = TAILQ_HEAD_INITIALIZER(children);
static struct event	*sigchld_ev;
static pid_t		*orphans;	/* bare pids still to reap */
static size_t		 norphans, orphans_size;

static void	 child_reap(evutil_socket_t, short, void *);

/* Close a stream, with whatever the child left in the pipe. */
static void
child_close_stream(struct child *c, int stream)
{
	if (c->fd[stream] == -1)
		return;
	while (evbuffer_read(c->in[stream], c->fd[stream], 4096) > 0)
		continue;
	event_del(&c->ev[stream]);
	close(c->fd[stream]);
	c->fd[stream] = -1;
	child_lines(c, stream, 1);
}

/* Output from a child: read what is there and log whole lines. */
static void
child_read(evutil_socket_t fd, short what, void *arg)
{
	struct child	*c = arg;
	int		 stream = fd == c->fd[0] ? 0 : 1;
	int		 n;

	n = evbuffer_read(c->in[stream], fd, 4096);
	if (n == -1 && (errno == EAGAIN || errno == EINTR))
		return;
	if (n <= 0) {
		child_close_stream(c, stream);
		return;
	}
	child_lines(c, stream, 0);
}

/* A child ran past its deadline: kill it; SIGCHLD reaps it. */
static void
child_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct child	*c = arg;

	log_error("%s: no answer within %.1fs; stopping it", c->name,
	    c->timeout_ms / 1000.0);
	c->timed_out = 1;
	kill(c->pid, SIGKILL);
}

/* In the child: a clean slate, then the program. */
static void __dead
child_exec(char *const argv[], int out, int err)
{
	sigset_t	 none;
	int		 null;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	signal(SIGPIPE, SIG_DFL);
	signal(SIGTTIN, SIG_DFL);
	/* Not our standard input: it carries the quit key. */
	if ((null = open("/dev/null", O_RDONLY)) != -1) {
		dup2(null, STDIN_FILENO);
		if (null != STDIN_FILENO)
			close(null);
	}
	dup2(out, STDOUT_FILENO);
	dup2(err, STDERR_FILENO);
	/*
	 * Nothing else: ours are close-on-exec, but not what whoever
	 * started us left open without it (a file, a socket).
	 */
	platform_close_from(STDERR_FILENO + 1);
	/* Its own process group: a Ctrl-C meant for us is not for it. */
	setpgid(0, 0);
#ifdef HAVE_SYS_PRCTL_H
	/* Ends with us, even if we are killed. */
	prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
	execvp(argv[0], argv);
	dprintf(STDERR_FILENO, "cannot run %s: %s\n", argv[0],
	    strerror(errno));
	_exit(127);
}

/*
 * Start argv[0] (searched in PATH unless it has a slash).  The caller set
 * c->name for the log, c->timeout_ms (0: none), c->quiet (its standard
 * error at debug level, for a command that keeps failing the same way)
 * and c->done, called with its exit status (-1 if it was killed or timed
 * out) and its standard output.  Return -1 with a reason logged if it
 * cannot start.
 */
int
child_spawn(struct child *c, char *const argv[])
{
	struct timeval	 tv;
	int		 out[2], err[2], i;

	c->fd[0] = c->fd[1] = -1;
	c->pid = -1;
	c->timed_out = 0;
	c->in[0] = c->in[1] = c->output = NULL;
	if (child_watch() == -1) {
		log_error("%s: cannot watch child processes", c->name);
		return (-1);
	}
	if ((c->in[0] = evbuffer_new()) == NULL ||
	    (c->in[1] = evbuffer_new()) == NULL ||
	    (c->output = evbuffer_new()) == NULL) {
		log_error("%s: out of memory", c->name);
		goto fail;
	}
	if (pipe2(out, O_CLOEXEC) == -1) {
		log_error("%s: pipe: %s", c->name, strerror(errno));
		goto fail;
	}
	if (pipe2(err, O_CLOEXEC) == -1) {
		log_error("%s: pipe: %s", c->name, strerror(errno));
		close(out[0]);
		close(out[1]);
		goto fail;
	}
	log_debug("running %s", c->name);
	if ((c->pid = fork()) == -1) {
		log_error("%s: fork: %s", c->name, strerror(errno));
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		goto fail;
	}
	if (c->pid == 0)
		child_exec(argv, out[1], err[1]);
	close(out[1]);
	close(err[1]);
	c->fd[0] = out[0];
	c->fd[1] = err[0];
	for (i = 0; i < 2; i++) {
		(void)platform_nonblock(c->fd[i]);
		event_assign(&c->ev[i], base, c->fd[i], EV_READ | EV_PERSIST,
		    child_read, c);
		event_add(&c->ev[i], NULL);
	}
	evtimer_assign(&c->deadline, base, child_deadline, c);
	if (c->timeout_ms > 0) {
		timeval_ms(&tv, c->timeout_ms);
		evtimer_add(&c->deadline, &tv);
	}
	TAILQ_INSERT_TAIL(&children, c, entry);
	return (0);

fail:
	for (i = 0; i < 2; i++) {
		if (c->in[i] != NULL)
			evbuffer_free(c->in[i]);
		c->in[i] = NULL;
	}
	if (c->output != NULL)
		evbuffer_free(c->output);
	c->output = NULL;
	c->pid = -1;
	return (-1);
}

/* A child ended: collect what it said, free its state, tell the caller. */
static void
child_finish(struct child *c, int status)
{
	struct evbuffer	*output;
	int		 result;

	TAILQ_REMOVE(&children, c, entry);
	evtimer_del(&c->deadline);
	child_close_stream(c, 0);
	child_close_stream(c, 1);
	if (WIFEXITED(status) && !c->timed_out)
		result = WEXITSTATUS(status);
	else
		result = -1;
	log_debug("%s ended (%s %d)", c->name, WIFEXITED(status) ?
	    "exit status" : "signal", WIFEXITED(status) ?
	    WEXITSTATUS(status) : WTERMSIG(status));
	c->pid = -1;
	evbuffer_free(c->in[0]);
	evbuffer_free(c->in[1]);
	c->in[0] = c->in[1] = NULL;
	/* The callback may start the next command in the same struct. */
	output = c->output;
	c->output = NULL;
	if (c->done != NULL)
		c->done(c, result, output);
	evbuffer_free(output);
}

/*
 * Reap the bare pids that ended.  One that is not our child any more
 * (ECHILD) is dropped too, or it would be asked about forever.
 */
static void
child_reap_orphans(void)
{
	size_t	 i = 0;
	pid_t	 pid;

	while (i < norphans) {
		pid = waitpid(orphans[i], NULL, WNOHANG);
		if (pid == 0 || (pid == -1 && errno == EINTR)) {
			i++;
			continue;
		}
		orphans[i] = orphans[--norphans];
	}
}

/* SIGCHLD: reap whichever of our children ended. */
static void
child_reap(evutil_socket_t sig, short what, void *arg)
{
	struct child	*c, *next;
	pid_t		 pid;
	int		 status;

	for (c = TAILQ_FIRST(&children); c != NULL; c = next) {
		next = TAILQ_NEXT(c, entry);
		pid = waitpid(c->pid, &status, WNOHANG);
		if (pid == c->pid)
			child_finish(c, status);
	}
	child_reap_orphans();
}

/*
 * Watch SIGCHLD on the loop, once: before the first child is forked, so
 * that none can end unseen.  Return -1 if libevent would not.
 */
int
child_watch(void)
{
	if (sigchld_ev != NULL)
		return (0);
	sigchld_ev = evsignal_new(base, SIGCHLD, child_reap, NULL);
	if (sigchld_ev == NULL || evsignal_add(sigchld_ev, NULL) == -1) {
		if (sigchld_ev != NULL)
			event_free(sigchld_ev);
		sigchld_ev = NULL;
		return (-1);
	}
	return (0);
}

/*
 * Reap pid, a child the caller has no more use for, whenever it ends;
 * now if it already has.  The caller signalled it to end and forgets it.
 * If the list cannot grow, the pid stays a zombie until we exit: logged,
 * never fatal.
 */
void
child_reap_later(pid_t pid)
{
	pid_t	*p;
	size_t	 size;

	if (waitpid(pid, NULL, WNOHANG) != 0)
		return;
	if (norphans == orphans_size) {
		size = orphans_size == 0 ? 16 : orphans_size * 2;
		if ((p = reallocarray(orphans, size, sizeof(*p))) == NULL) {
			log_error("cannot keep track of process %ld: out of "
			    "memory", (long)pid);
			return;
		}
		orphans = p;
		orphans_size = size;
	}
	orphans[norphans++] = pid;
}

int
child_running(const struct child *c)
{
	return (c->pid > 0);
}

/*
 * Stop a running child: SIGTERM, then SIGKILL after grace_ms.  Run the
 * loop until it is reaped; its done callback still runs.
 */
void
child_stop(struct child *c, int grace_ms)
{
	struct timeval	 tv;

	if (!child_running(c))
		return;
	kill(c->pid, SIGTERM);
	c->timeout_ms = grace_ms;
	timeval_ms(&tv, grace_ms);
	evtimer_add(&c->deadline, &tv);
	child_wait(c);
}

/*
 * Forget the SIGCHLD watcher before the loop is freed, once the bare pids
 * handed over have ended: none is left a zombie for init.
 */
void
child_cleanup(void)
{
	size_t	 i;

	/* Each was signalled to end by its owner: waiting is short. */
	for (i = 0; i < norphans; i++)
		while (waitpid(orphans[i], NULL, 0) == -1 && errno == EINTR)
			;
	norphans = 0;
	free(orphans);
	orphans = NULL;
	norphans = orphans_size = 0;
	if (sigchld_ev != NULL) {
		event_free(sigchld_ev);
		sigchld_ev = NULL;
	}
}
