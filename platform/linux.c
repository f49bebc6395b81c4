/* SPDX-License-Identifier: ISC */

/*
 * The platform as Linux has it, beside what posix.c shares with every
 * POSIX system: what /proc says about a process (its pid as it sees
 * itself, its start time, which the runtime uses as the key of its
 * default socket name, its environment and command line), SO_PEERCRED,
 * SIOCOUTQ, getrandom, inotify, prctl (no new privileges, no core dumps,
 * the parent's death, the name), running a binary by descriptor
 * (/proc/self/exe, fexecve), close_range, and the kernel's protection
 * of sticky directories.  The /proc parsers are pure, so that the unit
 * tests and the fuzzers reach them without a /proc.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <linux/sockios.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/os.h"
#include "platform/platform.h"

/* The environment of a process may be up to a few MiB; look this far. */
#define ENVIRON_MAX	(1024 * 1024)

/* Helpers are found in PATH alone. */
const char *const os_program_dirs[] = { NULL };

/* How standin_init() names what it opens. */
const char os_self_exe[] = "/proc/self/exe";

/*
 * A descriptor for log lines that never holds up the loop.  Standard error
 * itself when it is a socket (the caller sends with MSG_DONTWAIT) or a
 * regular file (it takes writes without waiting for a reader); for a pipe
 * or a terminal, a description of our own, opened non-blocking: setting
 * O_NONBLOCK on standard error would change it for every process sharing
 * it.  Return -1 when none can be had; the caller then writes to standard
 * error as it is.  Call it before platform_harden: a process that may not
 * dump core cannot open its own /proc/self/fd.
 */
int
platform_log_fd(int *is_socket)
{
	struct stat	 st;

	*is_socket = 0;
	if (fstat(STDERR_FILENO, &st) == -1)
		return (-1);
	if (S_ISSOCK(st.st_mode)) {
		*is_socket = 1;
		return (STDERR_FILENO);
	}
	if (S_ISREG(st.st_mode))
		return (STDERR_FILENO);
	return (open("/proc/self/fd/2", O_WRONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC));
}

/* Read a small /proc file whole into buf; return its length or -1. */
static ssize_t
read_file(const char *path, char *buf, size_t len)
{
	ssize_t	 n, got = 0;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	while ((size_t)got < len - 1) {
		if ((n = read(fd, buf + got, len - 1 - got)) == -1) {
			if (errno == EINTR)
				continue;
			close(fd);
			return (-1);
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return (got);
}

/* Parse a decimal u64 at *p, within end; advance *p.  Return -1 if none. */
static int
parse_u64(const char **p, const char *end, uint64_t *v)
{
	const char	*s = *p;

	*v = 0;
	if (s == end || *s < '0' || *s > '9')
		return (-1);
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (*v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return (-1);
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	return (0);
}

/*
 * The start time of a process, field 22 of its /proc/PID/stat, counted
 * after the last ')': the command name before it may hold spaces and
 * parentheses of its own.  Return -1 if buf has no such field.
 */
int
proc_stat_starttime(const char *buf, size_t len, uint64_t *starttime)
{
	const char	*p, *end = buf + len;
	int		 field;

	for (p = end; p > buf && p[-1] != ')'; p--)
		;
	if (p == buf)
		return (-1);
	/* p is past ')'; fields 3 to 21 come before the start time. */
	for (field = 3; field <= 22; field++) {
		if (p == end || *p != ' ')
			return (-1);
		p++;
		if (field == 22)
			return (parse_u64(&p, end, starttime));
		while (p < end && *p != ' ')
			p++;
	}
	return (-1);
}

/*
 * The pid of a process as it knows itself: the last entry of the NSpid
 * line of its status.  dflt when there is no such line.
 */
pid_t
proc_status_own_pid(const char *buf, size_t len, pid_t dflt)
{
	const char	*p, *end = buf + len, *line;
	uint64_t	 v;
	pid_t		 own = dflt;

	for (line = buf; line < end; line = p + 1) {
		for (p = line; p < end && *p != '\n'; p++)
			;
		if ((size_t)(p - line) < 6 || memcmp(line, "NSpid:", 6) != 0)
			continue;
		for (line += 6; line < p; ) {
			while (line < p && (*line == ' ' || *line == '\t'))
				line++;
			if (line == p)
				break;
			if (parse_u64(&line, p, &v) == -1 || v > INT32_MAX)
				return (dflt);
			own = (pid_t)v;
		}
		break;
	}
	return (own);
}

/* The boot time, in seconds since 1970, from /proc/stat; 0 if unknown. */
static uint64_t
boot_time(void)
{
	static uint64_t	 btime;
	FILE		*f;
	char		*line = NULL;
	const char	*p;
	size_t		 size = 0;
	ssize_t		 n;

	if (btime != 0 || (f = fopen("/proc/stat", "re")) == NULL)
		return (btime);
	/* The interrupt counts before it can fill many pages. */
	while ((n = getline(&line, &size, f)) != -1) {
		if (strncmp(line, "btime ", 6) != 0)
			continue;
		p = line + 6;
		if (parse_u64(&p, line + n, &btime) == -1)
			btime = 0;
		break;
	}
	free(line);
	fclose(f);
	return (btime);
}

/*
 * Fill pi for the process pid, as this process sees it: its start time,
 * and with own non-zero also the pid it knows itself by.  Return -1
 * with errno set if it cannot be read (gone, or hidden by hidepid=).
 */
int
proc_info_get(pid_t pid, int own, struct proc_info *pi)
{
	char		 path[64], buf[4096];
	ssize_t		 n;
	long		 hz;

	memset(pi, 0, sizeof(*pi));
	pi->pid = pi->own_pid = pid;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((n = read_file(path, buf, sizeof(buf))) == -1)
		return (-1);
	if (proc_stat_starttime(buf, n, &pi->starttime) == -1) {
		errno = EINVAL;
		return (-1);
	}
	if ((hz = sysconf(_SC_CLK_TCK)) > 0 && boot_time() != 0)
		pi->start_epoch = boot_time() + pi->starttime / (uint64_t)hz;
	if (!own)
		return (0);
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((n = read_file(path, buf, sizeof(buf))) != -1)
		pi->own_pid = proc_status_own_pid(buf, n, pid);
	return (0);
}

/*
 * Call fn for every process in /proc but this one, until it returns -1.
 * Return -1 with errno set if /proc cannot be read.
 */
int
proc_each(int (*fn)(pid_t, void *), void *arg)
{
	struct dirent	*de;
	DIR		*dp;
	char		*end;
	long		 pid;
	int		 saved;

	if ((dp = opendir("/proc")) == NULL)
		return (-1);
	while ((errno = 0, de = readdir(dp)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9')
			continue;
		pid = strtol(de->d_name, &end, 10);
		if (*end != '\0' || pid > INT32_MAX || pid == (long)getpid())
			continue;
		if (fn((pid_t)pid, arg) == -1) {
			errno = 0;
			break;
		}
	}
	saved = errno;
	closedir(dp);
	errno = saved;
	return (saved != 0 ? -1 : 0);
}

/*
 * The value of the variable name in an environment block (NUL-separated
 * NAME=VALUE entries, the last one perhaps cut short), in buf: 1 if it is
 * set, 0 if not, -1 with ENAMETOOLONG if the value does not fit.  The
 * block is the process's to write: nothing is read beyond n bytes.
 */
int
proc_environ_find(const char *env, size_t n, const char *name, char *buf,
    size_t len)
{
	size_t		 nlen = strlen(name), elen, vlen;
	const char	*p = env, *end = env + n, *nul;

	while (p < end) {
		nul = memchr(p, '\0', end - p);
		elen = nul != NULL ? (size_t)(nul - p) : (size_t)(end - p);
		if (elen > nlen && memcmp(p, name, nlen) == 0 &&
		    p[nlen] == '=') {
			vlen = elen - nlen - 1;
			if (vlen >= len) {
				errno = ENAMETOOLONG;
				return (-1);
			}
			memcpy(buf, p + nlen + 1, vlen);
			buf[vlen] = '\0';
			return (1);
		}
		p += elen + 1;
	}
	return (0);
}

/*
 * The value of the variable name in the environment pid started with, in
 * buf: 1 if it is set, 0 if not, -1 with errno set if the environment
 * cannot be read (EACCES: another user's process, without privileges).
 */
int
proc_environ_get(pid_t pid, const char *name, char *buf, size_t len)
{
	char		 path[64], *env;
	ssize_t		 n;
	int		 rv;

	if ((env = malloc(ENVIRON_MAX)) == NULL)
		return (-1);
	snprintf(path, sizeof(path), "/proc/%ld/environ", (long)pid);
	if ((n = read_file(path, env, ENVIRON_MAX)) == -1) {
		free(env);
		return (-1);
	}
	rv = proc_environ_find(env, n, name, buf, len);
	free(env);
	return (rv);
}

/*
 * The arguments pid was started with (or set since), NUL-separated, in
 * buf, cut to len - 1 bytes.  Return their length, or -1 with errno set
 * if they cannot be read (the process is gone).
 */
ssize_t
proc_cmdline_get(pid_t pid, char *buf, size_t len)
{
	char	 path[64];

	snprintf(path, sizeof(path), "/proc/%ld/cmdline", (long)pid);
	return (read_file(path, buf, len));
}

/* Read a connected local peer's credentials; -1 with errno if none. */
int
peer_cred_get(int fd, struct peer_cred *pc)
{
	struct ucred	 cred;
	socklen_t	 len = sizeof(cred);

	if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1)
		return (-1);
	if (len != sizeof(cred)) {
		errno = EINVAL;
		return (-1);
	}
	pc->pid = cred.pid;
	pc->uid = cred.uid;
	pc->gid = cred.gid;
	return (0);
}

/* A value of /proc/sys/fs (fs.protected_symlinks, ...), or -1. */
static int
fs_sysctl(const char *name)
{
	char	 path[64], buf[16];
	FILE	*fp;
	int	 v = -1;

	snprintf(path, sizeof(path), "/proc/sys/fs/%s", name);
	if ((fp = fopen(path, "re")) == NULL)
		return (-1);
	if (fgets(buf, sizeof(buf), fp) != NULL)
		v = atoi(buf);
	fclose(fp);
	return (v);
}

/*
 * A dump directory that others may write, though sticky: it is safe
 * only where the kernel follows no link and opens no file that someone
 * else planted in it, which Linux does for a sticky directory that all
 * may write, with fs.protected_symlinks and fs.protected_regular on,
 * and for no directory only its group may write (protected_symlinks
 * leaves those out).  Return 0, or -1 with the reason in err.
 */
int
os_sticky_dir_safe(const char *path, mode_t mode, char *err, size_t len)
{
	int	 links, files;

	if ((mode & S_IWOTH) == 0) {
		snprintf(err, len, "directory %s is writable by its group: "
		    "the kernel refuses planted links only in a sticky "
		    "directory that all may write; chmod g-w", path);
		return (-1);
	}
	links = fs_sysctl("protected_symlinks");
	files = fs_sysctl("protected_regular");
	if (links < 1 || files < 1) {
		snprintf(err, len, "directory %s is sticky and writable by "
		    "all, but this kernel follows links and opens files that "
		    "others plant there (fs.protected_symlinks=%d, "
		    "fs.protected_regular=%d): set both to 1, or use a "
		    "directory others cannot write", path, links, files);
		return (-1);
	}
	return (0);
}

/* Count the descriptors this process has open; -1 if unknown. */
long
platform_fds_in_use(void)
{
	DIR		*d;
	struct dirent	*de;
	long		 n = 0;

	if ((d = opendir("/proc/self/fd")) == NULL)
		return (-1);
	while ((de = readdir(d)) != NULL) {
		if (de->d_name[0] != '.')
			n++;
	}
	closedir(d);
	return (n - 1);		/* less the one reading the directory */
}

/*
 * How much a connected socket holds that its peer has not taken yet, or
 * -1 if the kernel will not say.  A count that changes is a reader at
 * work, though the router wrote nothing for a while.
 */
long
platform_unsent(int fd)
{
	int	 n;

	if (ioctl(fd, SIOCOUTQ, &n) == -1)
		return (-1);
	return (n);
}

#define KPIPE_SIZE	(256 * 1024)

/*
 * A kernel pipe between two stream sockets: splice(2) moves a stream's
 * pages socket to pipe to socket without copying them through the
 * router.  Each call moves what is there without blocking: a count, 0 at
 * the source's end, or -1 with errno (EAGAIN: nothing to move now).
 */
int
platform_kpipe_open(int fd[2])
{
	if (pipe2(fd, O_NONBLOCK | O_CLOEXEC) == -1)
		return (-1);
	/*
	 * As much as one read of the pump (256 KiB), for a quarter of the
	 * calls; past the user's pipe-user-pages-soft the kernel says no
	 * and the pipe keeps its 64 KiB.
	 */
	(void)fcntl(fd[0], F_SETPIPE_SZ, KPIPE_SIZE);
	return (0);
}

ssize_t
platform_kpipe_fill(int pipe_w, int from, size_t n)
{
	return (splice(from, NULL, pipe_w, NULL, n,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK));
}

ssize_t
platform_kpipe_drain(int pipe_r, int to, size_t n)
{
	return (splice(pipe_r, NULL, to, NULL, n,
	    SPLICE_F_MOVE | SPLICE_F_NONBLOCK));
}

/*
 * Fill buf with unpredictable bytes from the kernel (a WebSocket client's
 * masks and keys).  Return -1 if it would not give them.
 */
int
platform_random(void *buf, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = getrandom(buf, len, 0)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		buf = (uint8_t *)buf + n;
		len -= n;
	}
	return (0);
}

/*
 * From the start: no program the process runs gains privileges, and
 * unless allow_core, no core dump or ptrace by the same user reads its
 * memory, which holds TLS keys.  Return -1 on failure.
 */
int
platform_harden(int allow_core, char *err, size_t len)
{
	struct rlimit	 none = { 0, 0 };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, len, "cannot set no-new-privileges: %s",
		    strerror(errno));
		return (-1);
	}
	if (allow_core)
		return (0);
	if (setrlimit(RLIMIT_CORE, &none) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		snprintf(err, len, "cannot turn core dumps off: %s",
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/*
 * A descriptor of our own program, to run it again later: opened through
 * /proc/self/exe while /proc is there, O_PATH so that a binary we may
 * only execute will do, and it stays the program we started as though
 * a package upgrade replaces the file.  -1 with errno set on failure.
 */
int
platform_self_open(void)
{
	return (open("/proc/self/exe", O_PATH | O_CLOEXEC));
}

/* Run the program fd names (platform_self_open); returns only on error. */
int
platform_exec_fd(int fd, char *const argv[], char *const envp[])
{
	return (fexecve(fd, argv, envp));
}

/*
 * Be killed when parent, our parent, ends.  Return -1 if it already has
 * (we were adopted before the request took hold), or cannot be asked.
 */
int
platform_parent_death(pid_t parent)
{
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) == -1)
		return (-1);
	return (getppid() == parent ? 0 : -1);
}

/* The name ps shows (comm); the kernel keeps its first 15 bytes. */
void
platform_set_name(const char *name)
{
	(void)prctl(PR_SET_NAME, name, 0, 0, 0);
}

/* Close every descriptor from fd on. */
void
platform_close_from(int fd)
{
	long	 max;

#ifdef HAVE_CLOSE_RANGE
	if (close_range(fd, ~0U, 0) == 0)
		return;
#endif
	if ((max = sysconf(_SC_OPEN_MAX)) == -1 || max > 65536)
		max = 65536;
	for (; fd < max; fd++)
		(void)close(fd);
}

/*
 * A descriptor that becomes readable when names are made or removed in
 * dir (inotify), or -1: the caller rescans on a timer then.
 */
int
platform_dir_watch(const char *dir)
{
	int	 fd;

	if ((fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC)) == -1)
		return (-1);
	if (inotify_add_watch(fd, dir, IN_CREATE | IN_DELETE | IN_MOVED_TO |
	    IN_MOVED_FROM | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR) == -1) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Read what the watch has to say: only that something changed counts. */
void
platform_dir_watch_drain(int fd)
{
	char	 buf[4096];

	while (read(fd, buf, sizeof(buf)) > 0)
		;
}

/* The real, effective and saved ids. */
int
os_ids(uid_t uid[3], gid_t gid[3])
{
	if (getresuid(&uid[0], &uid[1], &uid[2]) == -1 ||
	    getresgid(&gid[0], &gid[1], &gid[2]) == -1)
		return (-1);
	return (0);
}

/*
 * After the ids changed: no-new-privileges must still hold, and core
 * dumps, which changing ids turned off, come back if asked.
 */
int
os_after_drop(int allow_core, char *err, size_t len)
{
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, len, "no-new-privileges is not set; stopping");
		return (-1);
	}
	if (allow_core)
		(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	return (0);
}

/* In a child: sig comes when the parent dies. */
void
os_dies_with_parent(int sig)
{
	(void)prctl(PR_SET_PDEATHSIG, sig);
}

/* The umask to bind a socket under: none, its own mode is its file's. */
mode_t
os_socket_umask(mode_t mode)
{
	(void)mode;
	return (0);
}

/* A socket file takes the mode of the socket bound, less the umask. */
int
os_socket_chmod(int fd, mode_t mode)
{
	return (fchmod(fd, mode));
}

/* Where an iOS device's iproxy comes from. */
const char *
platform_iproxy_package(void)
{
	return ("on Debian and Ubuntu: libusbmuxd-tools");
}

/* How the router names where it read what it knows of a process. */
void
platform_proc_where(pid_t pid, char *buf, size_t len)
{
	snprintf(buf, len, "/proc/%ld", (long)pid);
}
