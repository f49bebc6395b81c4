/* SPDX-License-Identifier: ISC */

/*
 * The platform as macOS has it, beside what posix.c shares with every
 * POSIX system.  What Linux reads in /proc, macOS tells through sysctl
 * and libproc: a process's start time (sysctl KERN_PROC_PID, the call
 * the .NET runtime keys its default socket with), its arguments
 * (KERN_PROCARGS2, parsed by darwin_parse.c), its program
 * (proc_pidpath).  A peer's credentials are getpeereid() and
 * LOCAL_PEERPID, what a socket still holds to send SO_NWRITE,
 * randomness arc4random_buf().
 *
 * What macOS lacks is said, never done silently: there are no pid or
 * mount namespaces (proc: is not built; dir: on the user's TMPDIR finds
 * the runtimes), no inotify (a directory is rescanned on a timer), no
 * prctl (no no-new-privileges, no undumpable flag, no parent-death
 * signal, no renaming of the process), no fexecve (our own program is
 * run again by its path, once its file is checked to be the one we
 * started from), and a sticky directory does not keep its users from
 * planting links for one another.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/param.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysctl.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <libproc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/darwin_parse.h"
#include "platform/os.h"
#include "platform/platform.h"

/* Where Homebrew puts iproxy and adb, though PATH may not say so. */
const char *const os_program_dirs[] = {
	"/opt/homebrew/bin", "/usr/local/bin", NULL
};

/* How standin_init() names what it opens. */
const char os_self_exe[] = "this program's file (proc_pidpath)";

/*
 * A descriptor for log lines that never holds up the loop.  Standard
 * error itself when it is a socket (the caller sends with MSG_DONTWAIT)
 * or a regular file; for a terminal, the terminal opened again,
 * non-blocking, which is a description of our own.  A pipe cannot be
 * opened again on macOS (/dev/fd/2 is the same description, and setting
 * O_NONBLOCK on it would change it for every process sharing it): -1,
 * and the caller writes to standard error as it is.
 */
int
platform_log_fd(int *is_socket)
{
	struct stat	 st;
	const char	*tty;

	*is_socket = 0;
	if (fstat(STDERR_FILENO, &st) == -1)
		return (-1);
	if (S_ISSOCK(st.st_mode)) {
		*is_socket = 1;
		return (STDERR_FILENO);
	}
	if (S_ISREG(st.st_mode))
		return (STDERR_FILENO);
	if (isatty(STDERR_FILENO) && (tty = ttyname(STDERR_FILENO)) != NULL)
		return (open(tty, O_WRONLY | O_NONBLOCK | O_NOCTTY |
		    O_CLOEXEC));
	return (-1);
}

/*
 * Fill pi for the process pid: its start time from sysctl KERN_PROC_PID,
 * as the runtime reads its own (darwin_proc_info_fill()).  own is
 * ignored: there are no pid namespaces.  Return -1 with errno set if it
 * cannot be read (ESRCH: gone).
 */
int
proc_info_get(pid_t pid, int own, struct proc_info *pi)
{
	struct kinfo_proc	 kp;
	size_t			 len = sizeof(kp);
	int			 mib[4] = { CTL_KERN, KERN_PROC, KERN_PROC_PID, 0 };

	memset(pi, 0, sizeof(*pi));
	pi->pid = pi->own_pid = pid;
	mib[3] = (int)pid;
	memset(&kp, 0, sizeof(kp));
	if (sysctl(mib, 4, &kp, &len, NULL, 0) == -1)
		return (-1);
	if (len < sizeof(kp) || kp.kp_proc.p_pid != pid) {
		errno = ESRCH;
		return (-1);
	}
	darwin_proc_info_fill(pid, kp.kp_proc.p_starttime.tv_sec,
	    kp.kp_proc.p_starttime.tv_usec, pi);
	return (0);
}

/*
 * The arguments pid was started with, NUL-separated as /proc's cmdline
 * has them, in buf, cut to len - 1 bytes: from sysctl KERN_PROCARGS2,
 * which only root and the process's own user may read.  Return their
 * length, or -1 with errno set (EINVAL: gone, or another user's).
 */
ssize_t
proc_cmdline_get(pid_t pid, char *buf, size_t len)
{
	struct darwin_procargs	 pa;
	int			 mib[3] = { CTL_KERN, KERN_PROCARGS2, 0 };
	int			 argmax_mib[2] = { CTL_KERN, KERN_ARGMAX };
	int			 argmax;
	size_t			 size = sizeof(argmax), n;
	char			*args;

	if (len == 0) {
		errno = EINVAL;
		return (-1);
	}
	if (sysctl(argmax_mib, 2, &argmax, &size, NULL, 0) == -1)
		return (-1);
	if (argmax <= 0 || (args = malloc((size_t)argmax)) == NULL) {
		errno = ENOMEM;
		return (-1);
	}
	mib[2] = (int)pid;
	size = (size_t)argmax;
	if (sysctl(mib, 3, args, &size, NULL, 0) == -1) {
		free(args);
		return (-1);
	}
	if (darwin_procargs_parse(args, size, &pa) == -1) {
		free(args);
		errno = EINVAL;
		return (-1);
	}
	n = pa.args_len < len - 1 ? pa.args_len : len - 1;
	memcpy(buf, pa.args, n);
	buf[n] = '\0';
	free(args);
	return ((ssize_t)n);
}

/*
 * Read a connected local peer's credentials: its ids by getpeereid(),
 * its pid by LOCAL_PEERPID (the process that connected, or that
 * listened).  -1 with errno if they cannot be had.
 */
int
peer_cred_get(int fd, struct peer_cred *pc)
{
	socklen_t	 len = sizeof(pc->pid);
	pid_t		 pid;

	if (getpeereid(fd, &pc->uid, &pc->gid) == -1)
		return (-1);
	if (getsockopt(fd, SOL_LOCAL, LOCAL_PEERPID, &pid, &len) == -1)
		return (-1);
	if (len != sizeof(pid) || pid <= 0) {
		errno = EINVAL;
		return (-1);
	}
	pc->pid = pid;
	return (0);
}

/*
 * A dump directory that others may write, though sticky: macOS has no
 * fs.protected_symlinks nor fs.protected_regular, so whoever may write
 * it can put a link where the next dump goes.  Always refused.
 */
int
os_sticky_dir_safe(const char *path, mode_t mode, char *err, size_t len)
{
	snprintf(err, len, "directory %s is sticky but writable by %s, and "
	    "macOS does not keep its users from planting links there for "
	    "one another; use a directory others cannot write", path,
	    (mode & S_IWOTH) ? "all" : "its group");
	return (-1);
}

/* Count the descriptors this process has open; -1 if unknown. */
long
platform_fds_in_use(void)
{
	struct proc_fdinfo	*fds;
	int			 size, n;

	if ((size = proc_pidinfo(getpid(), PROC_PIDLISTFDS, 0, NULL, 0)) <= 0)
		return (-1);
	/* Room for a few more, opened since the size was asked. */
	size += 16 * (int)PROC_PIDLISTFD_SIZE;
	if ((fds = malloc((size_t)size)) == NULL)
		return (-1);
	n = proc_pidinfo(getpid(), PROC_PIDLISTFDS, 0, fds, size);
	free(fds);
	if (n <= 0)
		return (-1);
	return ((long)(n / (int)PROC_PIDLISTFD_SIZE));
}

/*
 * How much a connected socket holds that its peer has not taken yet
 * (SO_NWRITE: what is in its send buffer), or -1 if the system will not
 * say.
 */
long
platform_unsent(int fd)
{
	socklen_t	 len = sizeof(int);
	int		 n;

	if (getsockopt(fd, SOL_SOCKET, SO_NWRITE, &n, &len) == -1)
		return (-1);
	return (n);
}

/* Fill buf with unpredictable bytes (a WebSocket client's masks, keys). */
int
platform_random(void *buf, size_t len)
{
	arc4random_buf(buf, len);
	return (0);
}

/*
 * From the start: unless allow_core, no core dump holds our memory
 * (TLS keys).  What Linux does besides with prctl, macOS cannot: it is
 * said once, here.
 */
int
platform_harden(int allow_core, char *err, size_t len)
{
	struct rlimit	 none = { 0, 0 };

	log_info("macOS has no prctl: programs this router runs can gain "
	    "privileges (no no-new-privileges), and a debugger of the same "
	    "user is kept out by the system's rules alone");
	if (allow_core)
		return (0);
	if (setrlimit(RLIMIT_CORE, &none) == -1) {
		snprintf(err, len, "cannot turn core dumps off: %s",
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * A descriptor of our own program, to run it again later: its file, by
 * the path the kernel gives of the running image.  Read permission is
 * needed (macOS has no O_PATH).  -1 with errno set on failure.
 */
int
platform_self_open(void)
{
	char	 path[PROC_PIDPATHINFO_MAXSIZE];

	if (proc_pidpath(getpid(), path, sizeof(path)) <= 0)
		return (-1);
	return (open(path, O_RDONLY | O_CLOEXEC));
}

/*
 * Run the program fd names (platform_self_open).  macOS has no
 * fexecve: the file is run by the path the descriptor has now, and only
 * if that path still leads to it (a package upgrade replaced it:
 * ENOENT).  Returns only on error.
 */
int
platform_exec_fd(int fd, char *const argv[], char *const envp[])
{
	char		 path[MAXPATHLEN];
	struct stat	 opened, named;

	if (fcntl(fd, F_GETPATH, path) == -1 || fstat(fd, &opened) == -1)
		return (-1);
	if (stat(path, &named) == -1)
		return (-1);
	if (opened.st_dev != named.st_dev || opened.st_ino != named.st_ino) {
		errno = ENOENT;
		return (-1);
	}
	return (execve(path, argv, envp));
}

/*
 * Be killed when parent ends: macOS cannot be asked, and the stand-in's
 * lifeline ends it instead.  Return -1 if the parent already has.
 */
int
platform_parent_death(pid_t parent)
{
	return (getppid() == parent ? 0 : -1);
}

/*
 * The name ps shows: macOS names a process after its program's file, and
 * nothing changes that after exec; a stand-in's arguments (its name
 * first) are what ps prints.
 */
void
platform_set_name(const char *name)
{
	(void)name;
}

/* Close every descriptor from fd on. */
void
platform_close_from(int fd)
{
	long	 max;

	if ((max = sysconf(_SC_OPEN_MAX)) == -1 || max > 65536)
		max = 65536;
	for (; fd < max; fd++)
		(void)close(fd);
}

/*
 * macOS has no inotify: -1, and the caller rescans dir on a timer.
 * Said once for each directory.
 */
int
platform_dir_watch(const char *dir)
{
	log_info("dir:%s: macOS has no inotify; the directory is scanned "
	    "for runtimes on a timer (--link-poll) instead", dir);
	errno = ENOSYS;
	return (-1);
}

void
platform_dir_watch_drain(int fd)
{
	(void)fd;
}

/*
 * The real, effective and saved ids.  macOS does not tell the saved
 * uid or gid: they are given as the effective ones, which is what
 * setuid() and setgid() by root make them (check_dropped() then proves
 * that root cannot be had back).
 */
int
os_ids(uid_t uid[3], gid_t gid[3])
{
	uid[0] = getuid();
	uid[1] = uid[2] = geteuid();
	gid[0] = getgid();
	gid[1] = gid[2] = getegid();
	return (0);
}

/* After the ids changed: no prctl to check or to turn core dumps back on. */
int
os_after_drop(int allow_core, char *err, size_t len)
{
	return (0);
}

/* In a child: macOS has no signal at the parent's death. */
void
os_dies_with_parent(int sig)
{
	(void)sig;
}

/* The umask to bind a socket under: its mode comes from the umask. */
mode_t
os_socket_umask(mode_t mode)
{
	return (~mode & 0777);
}

/* A socket's own mode is not its file's on macOS: nothing to set. */
int
os_socket_chmod(int fd, mode_t mode)
{
	(void)fd;
	(void)mode;
	return (0);
}

/* Where an iOS device's iproxy comes from. */
const char *
platform_iproxy_package(void)
{
	return ("with Homebrew: brew install libimobiledevice");
}

/* How the router names where it read what it knows of a process. */
void
platform_proc_where(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "process %ld (sysctl)", (long)pid);
}
