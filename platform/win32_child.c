/* SPDX-License-Identifier: ISC */

/*
 * Helper programs (adb.exe, iproxy.exe) on Windows, with child.c's
 * interface and behaviour: run without a shell and without ever
 * blocking the event loop, their standard output and error logged line
 * by line (standard error at error level), their exit reported to the
 * loop, and a deadline that kills one that hangs.
 *
 * libevent's select cannot watch a pipe.  Each child has a thread that
 * waits on its two pipes and its process, and hands what it reads to the
 * loop under a lock, waking the loop with event_active() on the child's
 * ev[0], an event without a descriptor (platform_init made libevent
 * thread-safe).  The loop thread does everything else: the lines, the
 * log, the callback.  The pipes are named ones read overlapped, so that
 * when the child has ended the thread can stop waiting for output that
 * a grandchild (adb's server) holds the pipe open for, as child.c stops
 * reading at SIGCHLD.
 *
 * Each child starts suspended and is put in a job that kills it when
 * dsroute ends, however it ends: the equal of PR_SET_PDEATHSIG.  As on
 * Linux, that holds for the child only: what it starts (adb's server)
 * breaks away from the job, and outlives us.  It gets its own hidden
 * console, so a Ctrl-C meant for us is not for it, and inherits only
 * its three standard handles.
 *
 * Windows keeps no zombies, and the stand-ins of standin.c are not built
 * here: there are no bare processes to reap.
 */

#include "config.h"

#include <windows.h>
#include <process.h>

#include <sys/types.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/child.h"
#include "platform/platform.h"

#define CHILD_PIPE_SIZE		(64 * 1024)
#define CHILD_READ_SIZE		4096
#define CHILD_HELD_MAX		(256 * 1024)	/* read, not yet taken */
#define CHILD_CMDLINE_MAX	32767		/* CreateProcessW's limit */

/*
 * The exit code of a child we end, as a console program stopped by
 * Ctrl-C has: codes from 0xC0000000 on are the system's (crashes, kills),
 * reported as -1, as a death by signal is.
 */
#define CHILD_KILLED		0xC000013AU
#define CHILD_ABNORMAL		0xC0000000U

/* c->pid of a child that could not run: its report waits for the loop. */
#define PID_NOT_RUN		((pid_t)-2)

/* A child's state beyond struct child: ev[0]'s argument. */
struct helper {
	struct child		*c;
	HANDLE			 process;	/* NULL: it could not run */
	HANDLE			 thread;
	HANDLE			 rd[2];		/* its stdout and stderr */
	OVERLAPPED		 ov[2];
	char			 buf[2][CHILD_READ_SIZE];
	int			 reading[2];	/* the thread's */
	int			 eof[2];	/* the thread's */
	HANDLE			 room;		/* the loop took what it held */
	HANDLE			 quit;		/* the loop waits no more */
	int			 locked;	/* lock initialised */
	CRITICAL_SECTION	 lock;		/* for what follows */
	struct evbuffer		*held[2];	/* read, for the loop to take */
	int			 ended;		/* the thread is done */
	DWORD			 code;		/* exit code, once ended */
};

static TAILQ_HEAD(, child) children = TAILQ_HEAD_INITIALIZER(children);
static HANDLE	 job;		/* every child's, killed when it closes */
static int	 job_warned;

static struct helper *
helper_of(const struct child *c)
{
	return (event_get_callback_arg(&c->ev[0]));
}

/* A Windows error as a line of text, in UTF-8, without its full stop. */
static const char *
win_error(DWORD err, char *buf, size_t len)
{
	wchar_t	 w[512];
	DWORD	 n;
	int	 end = 0;

	n = FormatMessageW(FORMAT_MESSAGE_FROM_SYSTEM |
	    FORMAT_MESSAGE_IGNORE_INSERTS, NULL, err, 0, w,
	    sizeof(w) / sizeof(w[0]), NULL);
	if (n > 0)
		end = WideCharToMultiByte(CP_UTF8, 0, w, (int)n, buf,
		    (int)len - 1, NULL, NULL);
	while (end > 0 && strchr(" \t\r\n.", buf[end - 1]) != NULL)
		end--;
	if (end <= 0)
		snprintf(buf, len, "error %lu", err);
	else
		buf[end] = '\0';
	return (buf);
}

/* s in UTF-16, allocated; NULL with errno set if it is not UTF-8. */
static wchar_t *
utf16(const char *s)
{
	wchar_t	*w;
	int	 n;

	n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, NULL, 0);
	if (n <= 0) {
		errno = EINVAL;
		return (NULL);
	}
	if ((w = calloc((size_t)n, sizeof(*w))) == NULL)
		return (NULL);
	MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w, n);
	return (w);
}

/*
 * A pipe for one of the child's streams: the read end ours, overlapped,
 * the write end inheritable.  Its name is unpredictable, it has one
 * instance, and we are its client, so nobody else can be.
 */
static int
pipe_open(HANDLE *rd, HANDLE *wr)
{
	static LONG		 serial;
	SECURITY_ATTRIBUTES	 sa;
	char			 name[96];
	wchar_t			*w;
	uint64_t		 nonce;
	DWORD			 err;

	*rd = *wr = INVALID_HANDLE_VALUE;
	if (platform_random(&nonce, sizeof(nonce)) == -1) {
		SetLastError(ERROR_GEN_FAILURE);
		return (-1);
	}
	snprintf(name, sizeof(name), "\\\\.\\pipe\\dsroute-%lu-%ld-%016llx",
	    GetCurrentProcessId(), InterlockedIncrement(&serial),
	    (unsigned long long)nonce);
	if ((w = utf16(name)) == NULL) {
		SetLastError(ERROR_NOT_ENOUGH_MEMORY);
		return (-1);
	}
	*rd = CreateNamedPipeW(w, PIPE_ACCESS_INBOUND | FILE_FLAG_OVERLAPPED |
	    FILE_FLAG_FIRST_PIPE_INSTANCE, PIPE_TYPE_BYTE | PIPE_READMODE_BYTE |
	    PIPE_WAIT | PIPE_REJECT_REMOTE_CLIENTS, 1, 0, CHILD_PIPE_SIZE, 0,
	    NULL);
	if (*rd == INVALID_HANDLE_VALUE) {
		free(w);
		return (-1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.nLength = sizeof(sa);
	sa.bInheritHandle = TRUE;
	*wr = CreateFileW(w, GENERIC_WRITE | FILE_READ_ATTRIBUTES, 0, &sa,
	    OPEN_EXISTING, 0, NULL);
	err = GetLastError();
	free(w);
	if (*wr == INVALID_HANDLE_VALUE) {
		CloseHandle(*rd);
		*rd = INVALID_HANDLE_VALUE;
		SetLastError(err);
		return (-1);
	}
	return (0);
}

/* Whether the last component of a path has an extension. */
static int
has_extension(const wchar_t *path)
{
	const wchar_t	*p, *name = path;

	for (p = path; *p != L'\0'; p++) {
		if (*p == L'\\' || *p == L'/' || *p == L':')
			name = p + 1;
	}
	return (wcschr(name, L'.') != NULL);
}

/* Whether path names a file, not a directory. */
static int
is_file(const wchar_t *path)
{
	DWORD	 attr = GetFileAttributesW(path);

	return (attr != INVALID_FILE_ATTRIBUTES &&
	    !(attr & FILE_ATTRIBUTE_DIRECTORY));
}

/*
 * The file name in dir (dlen characters of it; none: as it is), or with
 * ".exe" added if it has no extension; NULL if neither is there.
 */
static wchar_t *
program_at(const wchar_t *dir, size_t dlen, const wchar_t *name)
{
	wchar_t	*path;
	size_t	 nlen = wcslen(name);

	if ((path = calloc(dlen + 1 + nlen + 5, sizeof(*path))) == NULL)
		return (NULL);
	if (dlen > 0) {
		memcpy(path, dir, dlen * sizeof(*path));
		if (dir[dlen - 1] != L'\\' && dir[dlen - 1] != L'/')
			path[dlen++] = L'\\';
	}
	memcpy(path + dlen, name, nlen * sizeof(*path));
	if (is_file(path))
		return (path);
	if (!has_extension(name)) {
		memcpy(path + dlen + nlen, L".exe", 5 * sizeof(*path));
		if (is_file(path))
			return (path);
	}
	free(path);
	return (NULL);
}

/*
 * The program argv0 names, as execvp finds it: as it is if it has a
 * directory, else in PATH only (CreateProcessW would look in the current
 * directory too, where anyone could plant an adb.exe); ".exe" is added
 * to a name without an extension.  NULL with errno set if none.
 */
static wchar_t *
program_find(const char *argv0)
{
	wchar_t		*name, *pathvar = NULL, *found = NULL;
	const wchar_t	*dir, *end;
	DWORD		 n;

	if ((name = utf16(argv0)) == NULL)
		return (NULL);
	if (*name == L'\0') {
		free(name);
		errno = ENOENT;
		return (NULL);
	}
	if (wcspbrk(name, L"\\/:") != NULL) {
		found = program_at(NULL, 0, name);
		goto out;
	}
	if ((n = GetEnvironmentVariableW(L"PATH", NULL, 0)) == 0 ||
	    (pathvar = calloc(n, sizeof(*pathvar))) == NULL ||
	    GetEnvironmentVariableW(L"PATH", pathvar, n) == 0)
		goto out;
	for (dir = pathvar; found == NULL && *dir != L'\0'; dir = end) {
		if ((end = wcschr(dir, L';')) == NULL)
			end = dir + wcslen(dir);
		/* A quoted directory, as cmd.exe allows. */
		if (end - dir >= 2 && *dir == L'"' && end[-1] == L'"')
			found = program_at(dir + 1, end - dir - 2, name);
		else if (end > dir)
			found = program_at(dir, end - dir, name);
		if (*end == L';')
			end++;
	}
out:
	free(name);
	free(pathvar);
	if (found == NULL)
		errno = ENOENT;
	return (found);
}

/* Append arg to b so that the MS C runtime splits it back out as it is. */
static void
quote_arg(struct evbuffer *b, const char *arg)
{
	const char	*p;
	size_t		 slashes, i;

	if (*arg != '\0' && strpbrk(arg, " \t\n\v\"") == NULL) {
		evbuffer_add(b, arg, strlen(arg));
		return;
	}
	evbuffer_add(b, "\"", 1);
	for (p = arg; ; p++) {
		for (slashes = 0; *p == '\\'; p++)
			slashes++;
		/* Backslashes double only before a quote, theirs or ours. */
		if (*p == '\0' || *p == '"') {
			for (i = 0; i < slashes * 2 + (*p == '"'); i++)
				evbuffer_add(b, "\\", 1);
		} else {
			for (i = 0; i < slashes; i++)
				evbuffer_add(b, "\\", 1);
		}
		if (*p == '\0')
			break;
		evbuffer_add(b, p, 1);
	}
	evbuffer_add(b, "\"", 1);
}

/*
 * The command line of argv, in UTF-16.  The program's name is quoted
 * whole: the runtime takes it up to the next quote, backslashes and all.
 * NULL with errno set if it cannot be one.
 */
static wchar_t *
command_line(char *const argv[])
{
	struct evbuffer	*b;
	wchar_t		*w = NULL;
	size_t		 i;

	if (strchr(argv[0], '"') != NULL) {
		errno = EINVAL;
		return (NULL);
	}
	if ((b = evbuffer_new()) == NULL)
		return (NULL);
	evbuffer_add_printf(b, "\"%s\"", argv[0]);
	for (i = 1; argv[i] != NULL; i++) {
		evbuffer_add(b, " ", 1);
		quote_arg(b, argv[i]);
	}
	evbuffer_add(b, "", 1);
	if (evbuffer_get_length(b) > CHILD_CMDLINE_MAX)
		errno = E2BIG;
	else
		w = utf16((const char *)evbuffer_pullup(b, -1));
	evbuffer_free(b);
	return (w);
}

/*
 * Start the program with wr as its standard output and error, suspended
 * until it is in the job.  Return -1 with why it cannot run in why.
 */
static int
helper_start(struct helper *h, char *const argv[], HANDLE wr[2], char *why,
    size_t len)
{
	STARTUPINFOEXW		 si;
	PROCESS_INFORMATION	 pi;
	SECURITY_ATTRIBUTES	 sa;
	HANDLE			 inherit[3], null;
	wchar_t			*app = NULL, *cmd = NULL;
	SIZE_T			 size = 0;
	DWORD			 err;
	char			 msg[256];
	BOOL			 ok;

	if ((app = program_find(argv[0])) == NULL ||
	    (cmd = command_line(argv)) == NULL) {
		snprintf(why, len, "%s", strerror(errno));
		free(app);
		return (-1);
	}
	/* Not our standard input: it carries the quit key. */
	memset(&sa, 0, sizeof(sa));
	sa.nLength = sizeof(sa);
	sa.bInheritHandle = TRUE;
	null = CreateFileW(L"NUL", GENERIC_READ, FILE_SHARE_READ |
	    FILE_SHARE_WRITE, &sa, OPEN_EXISTING, 0, NULL);
	if (null == INVALID_HANDLE_VALUE) {
		snprintf(why, len, "NUL: %s", win_error(GetLastError(), msg,
		    sizeof(msg)));
		free(app);
		free(cmd);
		return (-1);
	}

	memset(&si, 0, sizeof(si));
	si.StartupInfo.cb = sizeof(si);
	si.StartupInfo.dwFlags = STARTF_USESTDHANDLES;
	si.StartupInfo.hStdInput = inherit[0] = null;
	si.StartupInfo.hStdOutput = inherit[1] = wr[0];
	si.StartupInfo.hStdError = inherit[2] = wr[1];
	/* Only these three: never our sockets, which are inheritable. */
	(void)InitializeProcThreadAttributeList(NULL, 1, 0, &size);
	if ((si.lpAttributeList = malloc(size)) == NULL ||
	    !InitializeProcThreadAttributeList(si.lpAttributeList, 1, 0,
	    &size)) {
		free(si.lpAttributeList);
		si.lpAttributeList = NULL;
	} else if (!UpdateProcThreadAttribute(si.lpAttributeList, 0,
	    PROC_THREAD_ATTRIBUTE_HANDLE_LIST, inherit, sizeof(inherit),
	    NULL, NULL)) {
		DeleteProcThreadAttributeList(si.lpAttributeList);
		free(si.lpAttributeList);
		si.lpAttributeList = NULL;
	}
	if (si.lpAttributeList == NULL) {
		snprintf(why, len, "cannot limit the handles it inherits: %s",
		    win_error(GetLastError(), msg, sizeof(msg)));
		CloseHandle(null);
		free(app);
		free(cmd);
		return (-1);
	}
	ok = CreateProcessW(app, cmd, NULL, NULL, TRUE, CREATE_SUSPENDED |
	    CREATE_NO_WINDOW | CREATE_UNICODE_ENVIRONMENT |
	    EXTENDED_STARTUPINFO_PRESENT, NULL, NULL, &si.StartupInfo, &pi);
	err = GetLastError();
	DeleteProcThreadAttributeList(si.lpAttributeList);
	free(si.lpAttributeList);
	CloseHandle(null);
	free(app);
	free(cmd);
	if (!ok) {
		snprintf(why, len, "%s", win_error(err, msg, sizeof(msg)));
		return (-1);
	}
	/* Ends with us, even if we are killed; say so once if it cannot. */
	if (!AssignProcessToJobObject(job, pi.hProcess) && !job_warned) {
		job_warned = 1;
		log_warning("%s: cannot put it in dsroute's job (%s): it and "
		    "the helpers after it may outlive dsroute", h->c->name,
		    win_error(GetLastError(), msg, sizeof(msg)));
	}
	ResumeThread(pi.hThread);
	CloseHandle(pi.hThread);
	h->process = pi.hProcess;
	h->c->pid = (pid_t)pi.dwProcessId;
	return (0);
}

/* In the thread: give what was read to the loop, and wake it. */
static void
helper_hand(struct helper *h, int s, DWORD n)
{
	EnterCriticalSection(&h->lock);
	evbuffer_add(h->held[s], h->buf[s], n);
	LeaveCriticalSection(&h->lock);
	event_active(&h->c->ev[0], EV_READ, 0);
}

/* In the thread: whether the loop has yet to take much of stream s. */
static int
helper_full(struct helper *h, int s)
{
	size_t	 n;

	EnterCriticalSection(&h->lock);
	n = evbuffer_get_length(h->held[s]);
	LeaveCriticalSection(&h->lock);
	return (n >= CHILD_HELD_MAX);
}

/* In the thread: start reading stream s; at its end, mark it so. */
static void
helper_read(struct helper *h, int s)
{
	if (ReadFile(h->rd[s], h->buf[s], sizeof(h->buf[s]), NULL,
	    &h->ov[s]) || GetLastError() == ERROR_IO_PENDING)
		h->reading[s] = 1;
	else
		h->eof[s] = 1;
}

/* In the thread: collect the read of stream s, waiting for it if asked. */
static void
helper_collect(struct helper *h, int s, BOOL wait)
{
	DWORD	 n, err;

	if (!GetOverlappedResult(h->rd[s], &h->ov[s], &n, wait)) {
		if ((err = GetLastError()) == ERROR_IO_INCOMPLETE)
			return;
		h->reading[s] = 0;
		/* A cancelled read is not the end: a broken pipe is. */
		if (err != ERROR_OPERATION_ABORTED)
			h->eof[s] = 1;
		return;
	}
	h->reading[s] = 0;
	if (n > 0)
		helper_hand(h, s, n);
}

/* In the thread: stop the read of stream s, keeping what it got. */
static void
helper_cancel(struct helper *h, int s)
{
	if (!h->reading[s])
		return;
	(void)CancelIoEx(h->rd[s], &h->ov[s]);
	helper_collect(h, s, TRUE);
}

/*
 * The thread of a child: read its streams until it ends (or the loop
 * stops waiting), then what is left in the pipes, which a grandchild may
 * keep open for ever, then its exit code.
 */
static unsigned __stdcall
helper_run(void *arg)
{
	struct helper	*h = arg;
	HANDLE		 w[5];
	int		 which[5], n, s, i;
	DWORD		 r, avail, code;

	for (;;) {
		n = 0;
		for (s = 0; s < 2; s++) {
			if (!h->eof[s] && !h->reading[s] && !helper_full(h, s))
				helper_read(h, s);
			if (h->reading[s]) {
				which[n] = s;
				w[n++] = h->ov[s].hEvent;
			}
		}
		/* Streams first: what it wrote comes before its end. */
		which[n] = -1;
		w[n++] = h->process;
		which[n] = -2;
		w[n++] = h->quit;
		which[n] = -3;
		w[n++] = h->room;
		r = WaitForMultipleObjects((DWORD)n, w, FALSE, INFINITE);
		if (r >= WAIT_OBJECT_0 + (DWORD)n)
			break;
		if ((s = which[r - WAIT_OBJECT_0]) >= 0)
			helper_collect(h, s, TRUE);
		else if (s != -3)
			break;
	}
	for (s = 0; s < 2; s++) {
		helper_cancel(h, s);
		/* What is in the pipe now, and no more. */
		for (i = 0; !h->eof[s] && i < CHILD_PIPE_SIZE / CHILD_READ_SIZE;
		    i++) {
			if (!PeekNamedPipe(h->rd[s], NULL, 0, NULL, &avail,
			    NULL) || avail == 0)
				break;
			helper_read(h, s);
			helper_cancel(h, s);
		}
	}
	if (!GetExitCodeProcess(h->process, &code))
		code = CHILD_KILLED;
	EnterCriticalSection(&h->lock);
	h->code = code;
	h->ended = 1;
	LeaveCriticalSection(&h->lock);
	event_active(&h->c->ev[0], EV_READ, 0);
	return (0);
}

/* Free a child's state, once its thread has ended or was never. */
static void
helper_free(struct helper *h)
{
	int	 s;

	if (h->thread != NULL) {
		WaitForSingleObject(h->thread, INFINITE);
		CloseHandle(h->thread);
	}
	for (s = 0; s < 2; s++) {
		if (h->rd[s] != NULL && h->rd[s] != INVALID_HANDLE_VALUE)
			CloseHandle(h->rd[s]);
		if (h->ov[s].hEvent != NULL)
			CloseHandle(h->ov[s].hEvent);
		if (h->held[s] != NULL)
			evbuffer_free(h->held[s]);
	}
	if (h->process != NULL)
		CloseHandle(h->process);
	if (h->room != NULL)
		CloseHandle(h->room);
	if (h->quit != NULL)
		CloseHandle(h->quit);
	if (h->locked)
		DeleteCriticalSection(&h->lock);
	free(h);
}

/* A child ended: collect what it said, free its state, tell the caller. */
static void
child_finish(struct helper *h)
{
	struct child	*c = h->c;
	DWORD		 code = h->code;
	int		 result, s;

	TAILQ_REMOVE(&children, c, entry);
	evtimer_del(&c->deadline);
	helper_free(h);
	/* Its last wake may be pending still. */
	event_del(&c->ev[0]);
	for (s = 0; s < 2; s++)
		child_lines(c, s, 1);
	if (code < CHILD_ABNORMAL && !c->timed_out)
		result = (int)code;
	else
		result = -1;
	if (code < CHILD_ABNORMAL)
		log_debug("%s ended (exit status %lu)", c->name, code);
	else
		log_debug("%s ended (status 0x%08lx)", c->name, code);
	c->pid = -1;
	child_report(c, result);
}

/* The thread read something, or the child ended: in the loop. */
static void
child_wake(evutil_socket_t fd, short what, void *arg)
{
	struct helper	*h = arg;
	struct child	*c = h->c;
	int		 s, ended;

	EnterCriticalSection(&h->lock);
	for (s = 0; s < 2; s++)
		evbuffer_add_buffer(c->in[s], h->held[s]);
	ended = h->ended;
	LeaveCriticalSection(&h->lock);
	SetEvent(h->room);
	for (s = 0; s < 2; s++)
		child_lines(c, s, 0);
	if (ended)
		child_finish(h);
}

/* A child ran past its deadline: kill it; its thread reports the end. */
static void
child_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct helper	*h = arg;
	struct child	*c = h->c;

	log_error("%s: no answer within %.1fs; stopping it", c->name,
	    c->timeout_ms / 1000.0);
	c->timed_out = 1;
	if (h->process != NULL)
		(void)TerminateProcess(h->process, CHILD_KILLED);
}

/*
 * Start argv[0] (searched in PATH unless it has a directory, with .exe
 * added to a name without an extension).  The caller set c->name for
 * the log, c->timeout_ms (0: none), c->quiet (its standard error at
 * debug level, for a command that keeps failing the same way) and
 * c->done, called with its exit status (-1 if it was killed, crashed or
 * timed out) and its standard output.  A program that cannot run is
 * reported as execvp's failure is on POSIX: a line on its standard
 * error and exit status 127.  Return -1 with a reason logged if it
 * cannot start.
 */
int
child_spawn(struct child *c, char *const argv[])
{
	struct helper	*h = NULL;
	struct timeval	 tv;
	HANDLE		 wr[2] = { INVALID_HANDLE_VALUE, INVALID_HANDLE_VALUE };
	uintptr_t	 t;
	char		 why[300], msg[256];
	int		 s;

	c->fd[0] = c->fd[1] = -1;
	c->pid = -1;
	c->timed_out = 0;
	c->in[0] = c->in[1] = c->output = NULL;
	if (child_watch() == -1) {
		log_error("%s: cannot watch child processes", c->name);
		return (-1);
	}
	if ((h = calloc(1, sizeof(*h))) == NULL ||
	    (c->in[0] = evbuffer_new()) == NULL ||
	    (c->in[1] = evbuffer_new()) == NULL ||
	    (c->output = evbuffer_new()) == NULL ||
	    (h->held[0] = evbuffer_new()) == NULL ||
	    (h->held[1] = evbuffer_new()) == NULL ||
	    (h->ov[0].hEvent = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL ||
	    (h->ov[1].hEvent = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL ||
	    (h->room = CreateEventW(NULL, FALSE, FALSE, NULL)) == NULL ||
	    (h->quit = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL) {
		log_error("%s: out of memory", c->name);
		goto fail;
	}
	InitializeCriticalSection(&h->lock);
	h->locked = 1;
	h->c = c;
	for (s = 0; s < 2; s++) {
		if (pipe_open(&h->rd[s], &wr[s]) == -1) {
			log_error("%s: pipe: %s", c->name,
			    win_error(GetLastError(), msg, sizeof(msg)));
			goto fail;
		}
	}
	log_debug("running %s", c->name);
	event_assign(&c->ev[0], child_base, -1, 0, child_wake, h);
	evtimer_assign(&c->deadline, child_base, child_deadline, h);
	if (helper_start(h, argv, wr, why, sizeof(why)) == -1) {
		/* As execvp failing in the child. */
		evbuffer_add_printf(c->in[1], "cannot run %s: %s\n", argv[0],
		    why);
		h->code = 127;
		h->ended = 1;
		c->pid = PID_NOT_RUN;
		event_active(&c->ev[0], EV_READ, 0);
	} else if ((t = _beginthreadex(NULL, 0, helper_run, h, 0,
	    NULL)) == 0) {
		log_error("%s: cannot start a thread: %s", c->name,
		    strerror(errno));
		(void)TerminateProcess(h->process, CHILD_KILLED);
		goto fail;
	} else
		h->thread = (HANDLE)t;
	/* The child has its copies. */
	for (s = 0; s < 2; s++)
		CloseHandle(wr[s]);
	if (c->timeout_ms > 0) {
		timeval_ms(&tv, c->timeout_ms);
		evtimer_add(&c->deadline, &tv);
	}
	TAILQ_INSERT_TAIL(&children, c, entry);
	return (0);

fail:
	for (s = 0; s < 2; s++) {
		if (wr[s] != INVALID_HANDLE_VALUE)
			CloseHandle(wr[s]);
		if (c->in[s] != NULL)
			evbuffer_free(c->in[s]);
		c->in[s] = NULL;
	}
	if (c->output != NULL)
		evbuffer_free(c->output);
	c->output = NULL;
	if (h != NULL)
		helper_free(h);
	c->pid = -1;
	return (-1);
}

/*
 * The job every child is put in, once: it kills them when dsroute ends
 * (its handle closes with the process), lets what they start break
 * away, and ends a child that crashes without a dialog.  Return -1 if
 * Windows would not make it.
 */
int
child_watch(void)
{
	JOBOBJECT_EXTENDED_LIMIT_INFORMATION	 li;

	if (job != NULL)
		return (0);
	if ((job = CreateJobObjectW(NULL, NULL)) == NULL)
		return (-1);
	memset(&li, 0, sizeof(li));
	li.BasicLimitInformation.LimitFlags =
	    JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE |
	    JOB_OBJECT_LIMIT_SILENT_BREAKAWAY_OK |
	    JOB_OBJECT_LIMIT_DIE_ON_UNHANDLED_EXCEPTION;
	if (!SetInformationJobObject(job, JobObjectExtendedLimitInformation,
	    &li, sizeof(li))) {
		CloseHandle(job);
		job = NULL;
		return (-1);
	}
	return (0);
}

/* No zombies on Windows, and no stand-ins to hand over: nothing to do. */
void
child_reap_later(pid_t pid)
{
}

/*
 * Launching an application (-- COMMAND) is not done here: its signals,
 * its console and its exit status would all need their Windows ways.
 * The front ends refuse -- before anything starts.
 */
int
child_launch_available(void)
{
	return (0);
}

int
child_launch(struct child *c, char *const argv[], char *const env[])
{
	(void)c;
	(void)argv;
	(void)env;
	errno = ENOSYS;
	return (-1);
}

int
child_signal(struct child *c, int sig)
{
	(void)c;
	(void)sig;
	errno = ENOSYS;
	return (-1);
}

/* No bare processes are reaped here. */
void
child_hold(pid_t pid)
{
	(void)pid;
}

int
child_running(const struct child *c)
{
	return (c->pid > 0 || c->pid == PID_NOT_RUN);
}

/*
 * Stop a running child.  A program without our console has no SIGTERM
 * to catch, and adb and iproxy die of it anyway: it is ended at once,
 * as dotnet-dsrouter's Process.Kill() does, and grace_ms bounds the wait
 * for its end.  Run the loop until it is reaped; its done callback still
 * runs.
 */
void
child_stop(struct child *c, int grace_ms)
{
	struct helper	*h;
	struct timeval	 tv;

	if (!child_running(c))
		return;
	h = helper_of(c);
	if (h->process != NULL)
		(void)TerminateProcess(h->process, CHILD_KILLED);
	c->timeout_ms = grace_ms;
	timeval_ms(&tv, grace_ms);
	evtimer_add(&c->deadline, &tv);
	child_wait(c);
}

/*
 * Before the loop is freed: end the children still running, and their
 * threads, without their callbacks (nothing may wake a freed loop),
 * then close the job.
 */
void
child_cleanup(void)
{
	struct helper	*h;
	struct child	*c;

	while ((c = TAILQ_FIRST(&children)) != NULL) {
		TAILQ_REMOVE(&children, c, entry);
		h = helper_of(c);
		if (h->process != NULL)
			(void)TerminateProcess(h->process, CHILD_KILLED);
		SetEvent(h->quit);
		evtimer_del(&c->deadline);
		helper_free(h);
		event_del(&c->ev[0]);
		evbuffer_free(c->in[0]);
		evbuffer_free(c->in[1]);
		evbuffer_free(c->output);
		c->in[0] = c->in[1] = c->output = NULL;
		c->pid = -1;
	}
	if (job != NULL) {
		CloseHandle(job);
		job = NULL;
	}
}
