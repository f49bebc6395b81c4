/* SPDX-License-Identifier: ISC */

/*
 * The Windows platform, posix.c's twin: Winsock and libevent's threads
 * started, the console's Ctrl-C, Ctrl-Break and close turned into the
 * SIGINT and SIGTERM the daemon watches, what the kernel says about a
 * process (its start time, its image), random bytes, and hardening.
 *
 * Much of posix.c has no meaning here: there are no socket files (the
 * .NET runtime's diagnostic port is a named pipe, transports/pipe.c), no
 * /proc, no descriptor limit, no user to drop to, no fork and no
 * inherited listeners.  Those functions answer "none", or fail with
 * ENOSYS and a reason; their callers (uds.c, dir.c, proc.c, finder.c,
 * standin.c) are not built for Windows anyway.
 */

#include "config.h"

#include <windows.h>
#include <bcrypt.h>

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <io.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/thread.h>

#include "common/log.h"
#include "platform/platform.h"

/* 100 ns ticks from 1601 (FILETIME) to 1970. */
#define EPOCH_TICKS	116444736000000000ULL
#define TICKS_PER_SEC	10000000ULL

/* Set once the daemon's exit began: the console's events are ignored. */
static volatile LONG	 signals_blocked;

/*
 * The console's events, on a thread of their own, as the signals the
 * daemon watches.  libevent's handler (installed with the C runtime's
 * signal()) only writes a byte to its socket pair, which wakes the loop
 * from this thread as from a real signal.  Ctrl-Break, a closed console
 * and a shut-down are SIGTERM: Ctrl-Break is how one program asks
 * another to stop (GenerateConsoleCtrlEvent).
 */
static BOOL WINAPI
console_event(DWORD type)
{
	switch (type) {
	case CTRL_C_EVENT:
		if (!signals_blocked)
			raise(SIGINT);
		return (TRUE);
	case CTRL_BREAK_EVENT:
		if (!signals_blocked)
			raise(SIGTERM);
		return (TRUE);
	case CTRL_CLOSE_EVENT:
	case CTRL_SHUTDOWN_EVENT:
		if (!signals_blocked)
			raise(SIGTERM);
		/*
		 * Windows ends the process as soon as this returns: wait
		 * here, so the loop drains for as long as Windows allows
		 * (5 s for a closed console); exit() ends this thread.
		 */
		Sleep(INFINITE);
		return (TRUE);
	default:
		/* A logoff is only ever another user's, seen by a service. */
		return (TRUE);
	}
}

/*
 * What every process of dsroute does first: Winsock, libevent's locks
 * (before any event base: other threads wake the loop with
 * event_active()), bytes in and out unchanged, and the console's
 * events.
 */
void
platform_init(void)
{
	WSADATA	 wsa;
	int	 rv;

	if ((rv = WSAStartup(MAKEWORD(2, 2), &wsa)) != 0)
		fatalx("cannot start Winsock: error %d", rv);
	if (evthread_use_windows_threads() == -1)
		fatalx("cannot make libevent thread-safe");
	(void)_setmode(STDIN_FILENO, _O_BINARY);
	(void)_setmode(STDOUT_FILENO, _O_BINARY);
	(void)_setmode(STDERR_FILENO, _O_BINARY);
	if (!SetConsoleCtrlHandler(console_event, TRUE))
		fatalx("cannot watch the console: error %lu", GetLastError());
}

/* errno for a Windows error about a process or a handle. */
static int
errno_of(DWORD err)
{
	switch (err) {
	case ERROR_INVALID_PARAMETER:
		return (ESRCH);		/* no such process */
	case ERROR_ACCESS_DENIED:
		return (EACCES);
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return (ENOMEM);
	case ERROR_INVALID_HANDLE:
		return (EBADF);
	default:
		return (EINVAL);
	}
}

/* A process's handle for questions only; NULL with errno set if none. */
static HANDLE
process_open(pid_t pid)
{
	HANDLE	 h;

	if (pid <= 0 || (uint64_t)pid > UINT32_MAX) {
		errno = ESRCH;
		return (NULL);
	}
	if ((h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE,
	    (DWORD)pid)) == NULL)
		errno = errno_of(GetLastError());
	return (h);
}

/*
 * Standard error, written as it is: the C runtime's descriptor, with
 * no way to make it non-blocking for us alone.  A file or a console
 * takes writes without waiting for a reader; a pipe may block, and then
 * there is nothing better than -1 (the caller writes standard error as
 * it is, the same thing).
 */
int
platform_log_fd(int *is_socket)
{
	HANDLE	 h = (HANDLE)_get_osfhandle(STDERR_FILENO);

	*is_socket = 0;
	if (h == INVALID_HANDLE_VALUE || h == NULL)
		return (-1);
	switch (GetFileType(h)) {
	case FILE_TYPE_DISK:
	case FILE_TYPE_CHAR:
		return (STDERR_FILENO);
	default:
		return (-1);
	}
}

/*
 * Fill pi for the process pid.  Its start time is its creation time:
 * starttime in 100 ns ticks since 1601 (a FILETIME; unique to the
 * process, as the ticks after boot are on Linux), start_epoch in
 * seconds since 1970.  own is ignored: there are no pid namespaces.
 * Return -1 with errno set if it cannot be read (ESRCH: gone; EACCES: a
 * protected process).
 */
int
proc_info_get(pid_t pid, int own, struct proc_info *pi)
{
	FILETIME	 created, exited, kernel, user;
	HANDLE		 h;
	uint64_t	 t;
	BOOL		 ok;

	memset(pi, 0, sizeof(*pi));
	pi->pid = pi->own_pid = pid;
	if ((h = process_open(pid)) == NULL)
		return (-1);
	ok = GetProcessTimes(h, &created, &exited, &kernel, &user);
	if (!ok)
		errno = errno_of(GetLastError());
	CloseHandle(h);
	if (!ok)
		return (-1);
	t = (uint64_t)created.dwHighDateTime << 32 | created.dwLowDateTime;
	pi->starttime = t;
	if (t > EPOCH_TICKS)
		pi->start_epoch = (t - EPOCH_TICKS) / TICKS_PER_SEC;
	return (0);
}

/*
 * The program pid runs, as the one NUL-terminated word /proc's cmdline
 * would begin with: its full path, in UTF-8, cut to len - 1 bytes.  Its
 * arguments would take reading its memory.  Return the length, or -1
 * with errno set if it cannot be read.
 */
ssize_t
proc_cmdline_get(pid_t pid, char *buf, size_t len)
{
	wchar_t	*w;
	char	*u;
	DWORD	 wlen = 32768;
	HANDLE	 h;
	int	 n;
	size_t	 keep;

	if (len == 0) {
		errno = EINVAL;
		return (-1);
	}
	if ((w = malloc(wlen * sizeof(*w))) == NULL)
		return (-1);
	if ((h = process_open(pid)) == NULL) {
		free(w);
		return (-1);
	}
	if (!QueryFullProcessImageNameW(h, 0, w, &wlen)) {
		errno = errno_of(GetLastError());
		CloseHandle(h);
		free(w);
		return (-1);
	}
	CloseHandle(h);
	n = WideCharToMultiByte(CP_UTF8, 0, w, (int)wlen, NULL, 0, NULL,
	    NULL);
	if (n <= 0 || (u = malloc((size_t)n + 1)) == NULL) {
		free(w);
		errno = n <= 0 ? EINVAL : ENOMEM;
		return (-1);
	}
	WideCharToMultiByte(CP_UTF8, 0, w, (int)wlen, u, n, NULL, NULL);
	u[n] = '\0';
	free(w);
	if ((size_t)n + 1 <= len - 1) {
		memcpy(buf, u, (size_t)n + 1);
		buf[n + 1] = '\0';
		free(u);
		return (n + 1);
	}
	/* Cut between characters, not within one. */
	keep = len - 1;
	while (keep > 0 && ((unsigned char)u[keep] & 0xc0) == 0x80)
		keep--;
	memcpy(buf, u, keep);
	memset(buf + keep, '\0', len - keep);
	free(u);
	return ((ssize_t)(len - 1));
}

/*
 * A socket's peer credentials: only local transports ask, and a named
 * pipe's client is asked by transports/pipe.c itself
 * (GetNamedPipeClientProcessId).  TCP has none.
 */
int
peer_cred_get(int fd, struct peer_cred *pc)
{
	errno = ENOSYS;
	return (-1);
}

/* Name the kind of a file that is not a socket, for a refusal. */
const char *
sockfile_kind(mode_t mode)
{
	if (S_ISDIR(mode))
		return ("directory");
	if (S_ISREG(mode))
		return ("regular file");
#ifdef S_ISFIFO
	if (S_ISFIFO(mode))
		return ("FIFO");
#endif
	return ("non-socket file");
}

/* No socket files: nobody can answer at a path. */
int
sockfile_probe(const char *path)
{
	return (0);
}

#define NO_SOCKET_FILES	"socket files do not exist on Windows; the .NET " \
	"runtime's diagnostic port there is a named pipe: use pipe:NAME"

int
sockfile_listen(struct sockfile *sf, char *err, size_t len)
{
	snprintf(err, len, "%s: %s", sf->path, NO_SOCKET_FILES);
	errno = ENOSYS;
	return (-1);
}

int
sockfile_dir_check(const char *dir, char *err, size_t len)
{
	snprintf(err, len, "directory %s: %s", dir, NO_SOCKET_FILES);
	errno = ENOSYS;
	return (-1);
}

void
sockfile_remove(struct sockfile *sf)
{
	sf->made = 0;
}

int
sockfile_private_dir(char *tmpl, const char *owner, char *err, size_t len)
{
	(void)owner;
	snprintf(err, len, "%s: %s", tmpl, NO_SOCKET_FILES);
	errno = ENOSYS;
	return (-1);
}

void
sockfile_private_dir_remove(const char *path)
{
	(void)path;
}

/*
 * dump-dir= is a POSIX path (acl.c takes no drive and no backslash):
 * the directory of a runtime on another host, which cannot be checked
 * from here.
 */
int
platform_dump_dir_check(const char *dir, uid_t also, char *err, size_t len)
{
	snprintf(err, len, "directory %s is a POSIX path, not one of this "
	    "Windows host", dir);
	return (1);
}

/* Make a socket non-blocking; -1 on failure (not a socket). */
int
platform_nonblock(int fd)
{
	u_long	 on = 1;

	if (ioctlsocket((SOCKET)fd, FIONBIO, &on) == SOCKET_ERROR) {
		errno = WSAGetLastError() == WSAENOTSOCK ? EBADF : EINVAL;
		return (-1);
	}
	return (0);
}

/*
 * The handles this process has open (sockets, pipes, but also threads,
 * events and keys), as the nearest thing to its descriptors; -1 if
 * unknown.
 */
long
platform_fds_in_use(void)
{
	DWORD	 n;

	/* None at all is no answer (wine's). */
	if (!GetProcessHandleCount(GetCurrentProcess(), &n) || n == 0)
		return (-1);
	return ((long)n);
}

/* Winsock does not say what a socket holds unsent: unknown. */
long
platform_unsent(int fd)
{
	return (-1);
}

/*
 * Fill buf with unpredictable bytes from the system's preferred
 * generator.  Return -1 if it would not give them.
 */
int
platform_random(void *buf, size_t len)
{
	ULONG	 n;

	while (len > 0) {
		n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
		if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, buf, n,
		    BCRYPT_USE_SYSTEM_PREFERRED_RNG))) {
			errno = EIO;
			return (-1);
		}
		buf = (uint8_t *)buf + n;
		len -= n;
	}
	return (0);
}

/*
 * The signals the daemon watches: stop (TERM, INT), which the console's
 * events raise.  There is no SIGHUP to reload by.
 */
size_t
platform_signals(const int **sigs)
{
	static const int	 list[] = { SIGTERM, SIGINT };

	*sigs = list;
	return (sizeof(list) / sizeof(list[0]));
}

/* Windows users and groups are SIDs, not numbers: no name has an id. */
int
platform_user_id(const char *name, uid_t *uid)
{
	errno = ENOSYS;
	return (-1);
}

int
platform_group_id(const char *name, gid_t *gid)
{
	errno = ENOSYS;
	return (-1);
}

/* Handles are limited by memory only: nothing to raise. */
void
platform_raise_nofile(void)
{
}

/*
 * No limit on sockets (libevent's select backend grows its sets):
 * LONG_MAX, as for an unlimited rlimit.
 */
long
platform_fd_limit(void)
{
	return (LONG_MAX);
}

/*
 * Nothing can be blocked, but the console's events can be ignored from
 * now on: the daemon freed its signal events, and the C runtime's
 * default for SIGINT and SIGTERM would end the orderly exit at once.
 */
void
platform_block_signals(const int *sigs, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (sigs[i] == SIGINT || sigs[i] == SIGTERM)
			InterlockedExchange(&signals_blocked, 1);
	}
}

typedef BOOL (WINAPI *search_mode_fn)(DWORD);

/*
 * From the start: no error dialog waits for a user who is not there,
 * and no DLL or program is looked for in the current directory, where
 * anyone who can write it could plant one.  Windows makes no core files
 * to forbid (allow_core has nothing to do).  Return -1 on failure.
 */
int
platform_harden(int allow_core, char *err, size_t len)
{
	search_mode_fn	 search_mode;
	HMODULE		 k32;

	SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX);
	if (!SetDllDirectoryW(L"")) {
		snprintf(err, len, "cannot take the current directory out of "
		    "the DLL search path: error %lu", GetLastError());
		return (-1);
	}
	/* Not in every Windows: looked up rather than imported. */
	if ((k32 = GetModuleHandleW(L"kernel32.dll")) != NULL &&
	    (search_mode = (search_mode_fn)(void (*)(void))GetProcAddress(k32,
	    "SetSearchPathMode")) != NULL)
		(void)search_mode(BASE_SEARCH_PATH_ENABLE_SAFE_SEARCHMODE |
		    BASE_SEARCH_PATH_PERMANENT);
	return (0);
}

/*
 * Open a configuration file to read: a regular file of at most max
 * bytes.  Who may write it is for its ACL to say; this does not read
 * ACLs.
 */
int
platform_config_open(const char *path, off_t max, char *err, size_t len)
{
	struct stat	 st;
	int		 fd;

	if ((fd = open(path, O_RDONLY)) == -1 || fstat(fd, &st) == -1) {
		snprintf(err, len, "cannot read it: %s", strerror(errno));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, len, "cannot read it: %s", S_ISDIR(st.st_mode) ?
		    strerror(EISDIR) : "it is not a file");
		goto fail;
	}
	if (st.st_size > max) {
		snprintf(err, len, "cannot read it: it is larger than %lld "
		    "bytes", (long long)max);
		goto fail;
	}
	return (fd);

fail:
	if (fd != -1)
		close(fd);
	return (-1);
}

/* The mirror's stand-ins (standin.c) are not there on Windows. */
int
platform_self_open(void)
{
	errno = ENOSYS;
	return (-1);
}

int
platform_exec_fd(int fd, char *const argv[], char *const envp[])
{
	errno = ENOSYS;
	return (-1);
}

int
platform_parent_death(pid_t parent)
{
	errno = ENOSYS;
	return (-1);
}

void
platform_set_name(const char *name)
{
}

void
platform_close_from(int fd)
{
}

/* There is no user to switch to: a service has its account. */
int
platform_drop(const char *user, const char *group, int allow_core, char *err,
    size_t len)
{
	if (user[0] == '\0' && group[0] == '\0')
		return (0);
	snprintf(err, len, "--user and --group do not exist on Windows: run "
	    "dsroute under the account it should have");
	return (-1);
}

/* No socket files, so no directory of them to watch. */
int
platform_dir_watch(const char *dir)
{
	errno = ENOSYS;
	return (-1);
}

void
platform_dir_watch_drain(int fd)
{
}

/* No service manager passes listeners (LISTEN_FDS) on Windows. */
int
platform_inherited_fds(struct inherited_fd **fds, size_t *n, char *err,
    size_t len)
{
	*fds = NULL;
	*n = 0;
	return (0);
}
