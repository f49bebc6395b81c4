/* SPDX-License-Identifier: ISC */

/*
 * Stand-ins: local processes named after remote runtimes, for the .NET
 * diagnostic tools to find (standin.h).
 *
 * A stand-in is this program run again, with argv[0] the remote app's
 * name and its command line saying what it stands for, in fixed words
 * and nothing else.  Whatever is in a stand-in's argv every local user
 * reads (ps, /proc/PID/cmdline), so the app's own command line, which
 * may hold its secrets, is never there (see mirror.c).  It is run from a
 * descriptor of our own binary opened through /proc/self/exe (at
 * standin_init(), or at the first start): that needs no path that a
 * chroot, a mount namespace or a package upgrade may have changed since,
 * and no read permission, so it still works once privileges are dropped.
 * macOS has neither /proc nor fexecve: there the descriptor is of the
 * file proc_pidpath names, and the file is run by its path only while
 * that path still leads to it (platform/darwin.c).
 *
 * It knows it is a stand-in by STANDIN_ENV, "FD:PPID": its lifeline's
 * descriptor and the pid of the dsroute that started it, which it
 * blanks.  Its environment is that and TMPDIR, the directory of its
 * socket, nothing of ours: the tools read a process's TMPDIR
 * (/proc/PID/environ, readable by its uid alone) to find its socket
 * when theirs is another.  A variable left over in a user's environment does
 * not turn dsroute into a stand-in (FD must be a socket and PPID our
 * parent), nor is such a dsroute a router: it stops, saying why, since a
 * stand-in's command line (a remote app's name, what it stands for) must
 * never be read as dsroute's options.
 *
 * The lifeline is a socketpair.  The stand-in blocks reading its end and
 * exits at EOF, when we close ours or die; our end reads EOF when the
 * stand-in ends, so its owner may watch it.
 *
 * What one costs is what loading this program costs: about 3.6 MB of
 * RSS at -O1, of which 0.8 MB is its own (the libraries' relocations,
 * its stack); the rest are pages of the files, shared with dsroute.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "platform/child.h"
#include "platform/os.h"
#include "platform/platform.h"
#include "platform/standin.h"

#define STANDIN_ENV	"DSROUTE_STANDIN"
#define STANDIN_FD	3		/* its lifeline, in the stand-in */
#define STANDIN_WORDS	32		/* most words of what */

extern char	**environ;

static int	 exe_fd = -1;

/* A name dotnet-trace -n can be given: [A-Za-z0-9._+-]. */
static int
standin_name_ok(const char *name)
{
	const char	*p;

	if (*name == '\0')
		return (0);
	for (p = name; *p != '\0'; p++) {
		if (!((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("._+-", *p) != NULL))
			return (0);
	}
	return (1);
}

/*
 * Open our own program, to run it again: call it before privileges are
 * dropped or the root changes.  Return -1 with a message in err.
 */
int
standin_init(char *err, size_t errlen)
{
	if (exe_fd != -1)
		return (0);
	if ((exe_fd = platform_self_open()) == -1) {
		snprintf(err, errlen, "cannot open %s: %s", os_self_exe,
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * Split s into words at spaces and tabs, into argv from *argc on, at
 * most STANDIN_WORDS in all.  The words point into s, which is changed.
 */
static void
standin_words(char *s, char **argv, int *argc)
{
	char	*w;

	while (*argc < STANDIN_WORDS &&
	    (w = strsep(&s, " \t")) != NULL) {
		if (*w != '\0')
			argv[(*argc)++] = w;
	}
}

/* In the child: its lifeline on STANDIN_FD, then the stand-in. */
static void __dead
standin_exec(int life, int report, char **argv, char **envp)
{
	int	 e;

	if (life == STANDIN_FD)
		(void)fcntl(life, F_SETFD, 0);
	else if (dup2(life, STANDIN_FD) == -1)
		goto fail;
	(void)platform_exec_fd(exe_fd, argv, envp);
fail:
	e = errno;
	(void)write(report, &e, sizeof(e));
	_exit(127);
}

/*
 * Start a stand-in called name, its command line name then the words of
 * what, its TMPDIR tmpdir (none if NULL).  Return -1 with a message in
 * err if it cannot start.  This waits for its exec (a pipe closed on
 * exec), so that a failure is told here, not later.
 */
int
standin_start(struct standin *s, const char *name, const char *what,
    const char *tmpdir, char *err, size_t errlen)
{
	char		*argv[STANDIN_WORDS + 2], *envp[3], env[64];
	char		*words, *dir = NULL;
	int		 life[2], report[2], argc = 0, e;
	sigset_t	 all, saved;
	struct proc_info pi;
	ssize_t		 n;

	s->pid = -1;
	s->fd = -1;
	s->starttime = 0;
	if (!standin_name_ok(name)) {
		snprintf(err, errlen, "stand-in name \"%.64s\" is not made of "
		    "[A-Za-z0-9._+-]", name);
		return (-1);
	}
	if (standin_init(err, errlen) == -1)
		return (-1);
	if (child_watch() == -1) {
		snprintf(err, errlen, "cannot watch child processes");
		return (-1);
	}

	/* Its command line: its name, then what it stands for. */
	if ((words = strdup(what)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return (-1);
	}
	argv[argc++] = (char *)name;
	standin_words(words, argv, &argc);
	argv[argc] = NULL;
	snprintf(env, sizeof(env), "%s=%d:%ld", STANDIN_ENV, STANDIN_FD,
	    (long)getpid());
	envp[0] = env;
	envp[1] = NULL;
	if (tmpdir != NULL) {
		if (asprintf(&dir, "TMPDIR=%s", tmpdir) == -1) {
			snprintf(err, errlen, "out of memory");
			free(words);
			return (-1);
		}
		envp[1] = dir;
		envp[2] = NULL;
	}

	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, life) == -1) {
		snprintf(err, errlen, "socketpair: %s", strerror(errno));
		free(words);
		free(dir);
		return (-1);
	}
	if (pipe2(report, O_CLOEXEC) == -1) {
		snprintf(err, errlen, "pipe: %s", strerror(errno));
		goto fail;
	}
	/* No handler of ours (libevent's) may run in the child. */
	sigfillset(&all);
	sigprocmask(SIG_SETMASK, &all, &saved);
	s->pid = fork();
	if (s->pid == 0)
		standin_exec(life[1], report[1], argv, envp);
	e = errno;
	sigprocmask(SIG_SETMASK, &saved, NULL);
	close(report[1]);
	if (s->pid == -1) {
		snprintf(err, errlen, "fork: %s", strerror(e));
		close(report[0]);
		goto fail;
	}
	while ((n = read(report[0], &e, sizeof(e))) == -1 && errno == EINTR)
		continue;
	close(report[0]);
	if (n != 0) {
		snprintf(err, errlen, "cannot run the stand-in %s: %s", name,
		    n == sizeof(e) ? strerror(e) : "no word from it");
		while (waitpid(s->pid, NULL, 0) == -1 && errno == EINTR)
			continue;
		s->pid = -1;
		goto fail;
	}
	close(life[1]);
	s->fd = life[0];
	child_hold(s->pid);
	if (proc_info_get(s->pid, 0, &pi) == 0)
		s->starttime = pi.starttime;
	free(words);
	free(dir);
	return (0);

fail:
	close(life[0]);
	close(life[1]);
	free(words);
	free(dir);
	return (-1);
}

/*
 * End a stand-in: close the lifeline, and SIGKILL it too, since a
 * stopped one would never read the EOF.  The pid is still ours to signal
 * (only we reap it); child.c reaps it when it has ended.
 */
void
standin_stop(struct standin *s)
{
	if (s->fd != -1) {
		close(s->fd);
		s->fd = -1;
	}
	if (s->pid > 0) {
		(void)kill(s->pid, SIGKILL);
		child_reap_later(s->pid);
		s->pid = -1;
	}
	s->starttime = 0;
}

/* Its start time, for the KEY of its socket's name; 0 if unknown. */
unsigned long long
standin_start_time(const struct standin *s)
{
	return (s->pid > 0 ? s->starttime : 0);
}

/* Parse STANDIN_ENV's value: return -1 if it is not ours. */
static int
standin_env(const char *v, int *fd, pid_t *parent)
{
	struct stat	 sb;
	char		*end;
	long		 l, p;

	errno = 0;
	l = strtol(v, &end, 10);
	if (errno != 0 || end == v || *end != ':' || l < 0 || l > 1024)
		return (-1);
	v = end + 1;
	p = strtol(v, &end, 10);
	/* Pid 1 too: dsroute as a container's entry point. */
	if (errno != 0 || end == v || *end != '\0' || p < 1)
		return (-1);
	if (fstat((int)l, &sb) == -1 || !S_ISSOCK(sb.st_mode))
		return (-1);
	*fd = (int)l;
	*parent = (pid_t)p;
	return (0);
}

/*
 * The stand-in itself: main() calls this first, so that a stand-in
 * starts nothing of dsroute (no loop, no log, no library state).  Return
 * -1 at once if this process is not one; else never return.
 */
int
standin_main(int argc, char *argv[])
{
	const char	*v;
	char		 buf[64], **e;
	sigset_t	 none;
	pid_t		 parent;
	ssize_t		 n;
	int		 fd, null, i;

	if ((v = getenv(STANDIN_ENV)) == NULL)
		return (-1);
	/*
	 * A stand-in's command line is a remote app's name and words of
	 * ours: one that cannot be a stand-in must never read it as
	 * dsroute's options.
	 */
	if (argc < 1 || argv[0] == NULL || standin_env(v, &fd, &parent) == -1) {
		dprintf(STDERR_FILENO, "dsroute: %s is set, but this is no "
		    "stand-in of a running dsroute; unset it\n", STANDIN_ENV);
		_exit(1);
	}

	/* Ends with dsroute, even if the lifeline leaked somewhere. */
	if (platform_parent_death(parent) == -1)
		_exit(0);
	/* A session of its own: no terminal's signals reach it. */
	(void)setsid();
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);

	/* No descriptor but the lifeline; the standard three on null. */
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	for (i = 0; i <= 2; i++) {
		if (i == fd)
			continue;
		if (null == -1 || dup2(null, i) == -1)
			(void)close(i);
	}
	for (i = 3; i < fd; i++)
		(void)close(i);
	platform_close_from(fd + 1);

	/*
	 * Nothing in the environment but TMPDIR, for the tools that read it.
	 * /proc/PID/environ cannot shrink without CAP_SYS_RESOURCE: what
	 * else was there is blanked in place.
	 */
	for (e = environ; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, "TMPDIR=", 7) != 0)
			memset(*e, 0, strlen(*e));
	}
	(void)clearenv();

	platform_set_name(argv[0]);

	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == 0)
			_exit(0);
		if (n == -1 && errno != EINTR)
			_exit(1);
	}
}
