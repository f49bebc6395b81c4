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
 *
 * The application a front end launches (-- COMMAND) is neither: it gets
 * our standard streams and environment, a process group of its own
 * (given the terminal's foreground when we have it, as a shell gives a
 * job), and its end is reported with its status.  As process 1 of a
 * container we are what its orphans are given to: they are reaped too.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/child.h"
#include "platform/os.h"
#include "platform/platform.h"


static TAILQ_HEAD(, child) children = TAILQ_HEAD_INITIALIZER(children);
static struct event	*sigchld_ev;
static pid_t		*orphans;	/* bare pids still to reap */
static size_t		 norphans, orphans_size;
static pid_t		*held;		/* bare pids their owners still hold */
static size_t		 nheld, held_size;


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
	/* Ends with us, even if we are killed, where the system can. */
	os_dies_with_parent(SIGTERM);
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
		event_assign(&c->ev[i], child_base, c->fd[i],
		    EV_READ | EV_PERSIST, child_read, c);
		event_add(&c->ev[i], NULL);
	}
	evtimer_assign(&c->deadline, child_base, child_deadline, c);
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

/* A launched child had our terminal's foreground: take it back. */
static void
launch_take_terminal(struct child *c)
{
	sigset_t	 ttou, saved;

	if (!c->tty)
		return;
	c->tty = 0;
	sigemptyset(&ttou);
	sigaddset(&ttou, SIGTTOU);
	sigprocmask(SIG_BLOCK, &ttou, &saved);
	(void)tcsetpgrp(STDIN_FILENO, getpgrp());
	sigprocmask(SIG_SETMASK, &saved, NULL);
}

/* A launched child ended: its status, by exit or by signal, to the owner. */
static void
launch_finish(struct child *c, int status)
{
	launch_take_terminal(c);
	c->signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
	if (c->done != NULL)
		c->done(c, WIFEXITED(status) ? WEXITSTATUS(status) : -1, NULL);
}

/* Launching applications is what this system does. */
int
child_launch_available(void)
{
	return (1);
}

/*
 * In the launched child: the signals as a program expects them, its own
 * process group and, when we had the terminal, its foreground; then our
 * environment with env's changes, and the program.  An exec that fails
 * writes its errno to report.
 */
static void __dead
launch_exec(char *const argv[], char *const env[], int tty, int report)
{
	static const int sigs[] = {
		SIGPIPE, SIGINT, SIGTERM, SIGQUIT, SIGHUP, SIGCHLD, SIGTTIN,
		SIGTTOU, SIGTSTP
	};
	sigset_t	 none;
	const char	*eq;
	size_t		 i;
	int		 e;

	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	(void)setpgid(0, 0);
	if (tty) {
		/* From a background group, tcsetpgrp would stop us. */
		signal(SIGTTOU, SIG_IGN);
		(void)tcsetpgrp(STDIN_FILENO, getpid());
		signal(SIGTTOU, SIG_DFL);
	}
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (i = 0; env[i] != NULL; i++) {
		if ((eq = strchr(env[i], '=')) == NULL)
			(void)unsetenv(env[i]);
		else if (putenv(env[i]) != 0)
			goto fail;
	}
	/*
	 * Our standard streams, and nothing else of whoever started us:
	 * the report pipe goes first past them, closed at exec.
	 */
	if (report != STDERR_FILENO + 1) {
		if (dup2(report, STDERR_FILENO + 1) == -1)
			goto fail;
		report = STDERR_FILENO + 1;
	}
	(void)fcntl(report, F_SETFD, FD_CLOEXEC);
	platform_close_from(report + 1);
	os_dies_with_parent(SIGTERM);
	execvp(argv[0], argv);
fail:
	e = errno;
	(void)write(report, &e, sizeof(e));
	_exit(127);
}

/*
 * Launch argv[0] (searched in PATH unless it has a slash) with our
 * standard streams and environment, changed by env: "NAME=VALUE" sets,
 * "NAME" unsets.  The caller set c->name and c->done, which is called
 * with its exit status, or with c->signal set to the signal that ended
 * it.  This waits for the exec (a pipe closed on exec), so that a
 * program that cannot run is told here: return -1 with errno set.
 */
int
child_launch(struct child *c, char *const argv[], char *const env[])
{
	sigset_t	 all, saved;
	ssize_t		 n;
	int		 report[2], e;

	c->fd[0] = c->fd[1] = -1;
	c->in[0] = c->in[1] = c->output = NULL;
	c->pid = -1;
	c->timed_out = c->signal = 0;
	c->launched = 1;
	if (child_watch() == -1) {
		errno = ENOMEM;
		return (-1);
	}
	/* As a shell gives a job the terminal: when we are its foreground. */
	c->tty = isatty(STDIN_FILENO) && tcgetpgrp(STDIN_FILENO) == getpgrp();
	if (pipe2(report, O_CLOEXEC) == -1)
		return (-1);
	/* No handler of ours (libevent's) may run in the child. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &saved);
	c->pid = fork();
	if (c->pid == 0)
		launch_exec(argv, env, c->tty, report[1]);
	e = errno;
	close(report[1]);
	if (c->pid == -1) {
		sigprocmask(SIG_SETMASK, &saved, NULL);
		close(report[0]);
		errno = e;
		return (-1);
	}
	/* Both sides set the group: neither may signal it before it is. */
	(void)setpgid(c->pid, c->pid);
	while ((n = read(report[0], &e, sizeof(e))) == -1 && errno == EINTR)
		continue;
	close(report[0]);
	if (n != 0) {
		while (waitpid(c->pid, NULL, 0) == -1 && errno == EINTR)
			continue;
		c->pid = -1;
		launch_take_terminal(c);
		sigprocmask(SIG_SETMASK, &saved, NULL);
		errno = n == sizeof(e) ? e : EIO;
		return (-1);
	}
	evtimer_assign(&c->deadline, child_base, child_deadline, c);
	TAILQ_INSERT_TAIL(&children, c, entry);
	sigprocmask(SIG_SETMASK, &saved, NULL);
	log_debug("%s runs as pid %ld%s", c->name, (long)c->pid, c->tty ?
	    ", in the terminal's foreground" : "");
	return (0);
}

/* Pass a signal on to a launched child.  Return -1 if it is not there. */
int
child_signal(struct child *c, int sig)
{
	if (!child_running(c))
		return (-1);
	return (kill(c->pid, sig));
}

/*
 * A bare process its owner will hand over with child_reap_later(): until
 * then, reaping the orphans of a container passes over it.
 */
void
child_hold(pid_t pid)
{
	pid_t	*p;
	size_t	 size;

	if (nheld == held_size) {
		size = held_size == 0 ? 16 : held_size * 2;
		if ((p = reallocarray(held, size, sizeof(*p))) == NULL)
			return;		/* then it is reaped like an orphan */
		held = p;
		held_size = size;
	}
	held[nheld++] = pid;
}

/* A child ended: collect what it said, free its state, tell the caller. */
static void
child_finish(struct child *c, int status)
{
	int	 result;

	TAILQ_REMOVE(&children, c, entry);
	evtimer_del(&c->deadline);
	log_debug("%s ended (%s %d)", c->name, WIFEXITED(status) ?
	    "exit status" : "signal", WIFEXITED(status) ?
	    WEXITSTATUS(status) : WTERMSIG(status));
	c->pid = -1;
	if (c->launched) {
		launch_finish(c, status);
		return;
	}
	child_close_stream(c, 0);
	child_close_stream(c, 1);
	if (WIFEXITED(status) && !c->timed_out)
		result = WEXITSTATUS(status);
	else
		result = -1;
	child_report(c, result);
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

/* Whether pid is a bare process of ours, held or handed over. */
static int
child_known(pid_t pid)
{
	size_t	 i;

	for (i = 0; i < nheld; i++) {
		if (held[i] == pid)
			return (1);
	}
	for (i = 0; i < norphans; i++) {
		if (orphans[i] == pid)
			return (1);
	}
	return (0);
}

/*
 * As process 1 we are given every orphan of the container: reap those
 * that ended and are none of ours.  WNOWAIT looks without reaping, so a
 * stand-in's pid stays its owner's until it is handed over.
 */
static void
child_reap_adopted(void)
{
	struct child	*c;
	siginfo_t	 si;

	if (getpid() != 1)
		return;
	for (;;) {
		memset(&si, 0, sizeof(si));
		if (waitid(P_ALL, 0, &si, WEXITED | WNOHANG | WNOWAIT) == -1 ||
		    si.si_pid == 0 || child_known(si.si_pid))
			return;
		TAILQ_FOREACH(c, &children, entry) {
			if (c->pid == si.si_pid)
				return;
		}
		(void)waitpid(si.si_pid, NULL, WNOHANG);
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
	child_reap_adopted();
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
	sigchld_ev = evsignal_new(child_base, SIGCHLD, child_reap, NULL);
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
	size_t	 size, i;

	for (i = 0; i < nheld; i++) {
		if (held[i] == pid) {
			held[i] = held[--nheld];
			break;
		}
	}
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
	free(held);
	held = NULL;
	nheld = held_size = 0;
	if (sigchld_ev != NULL) {
		event_free(sigchld_ev);
		sigchld_ev = NULL;
	}
}
