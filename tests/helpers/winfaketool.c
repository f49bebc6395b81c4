/* SPDX-License-Identifier: ISC */

/*
 * winfaketool.exe: the Windows twin of faketool, a fake diagnostic tool
 * (what dotnet-trace and friends do on the wire), on a named pipe.  Built
 * with mingw-w64, run under wine (or Windows).  An independent
 * implementation of the protocol that shares no code with the router.
 *
 *	winfaketool [--timeout SEC] [--silent-ms MS] PIPE[,connect] COMMAND
 *
 * PIPE is a bare name or \\.\pipe\NAME.  Every command opens a new
 * connection, as faketool's connect role does; ERROR_PIPE_BUSY (every
 * instance taken) is retried every 10 ms until the timeout, never with
 * WaitNamedPipe, which wedges servers under wine 8
 * (tests/windows/README.md).  The commands, their arguments, the lines
 * on stdout and the exit status are faketool's, so tests can swap one
 * for the other:
 *
 *	processinfo | processinfo2 | processinfo3 | resume | env
 *	collect [--stop-after-bytes N] [--rate BPS] [--hangup-after-bytes N]
 *	        [--expect-bytes N] [--pause-after-bytes N]
 *	stop ID | repeat N processinfo|resume | command SET ID [HEXPAYLOAD]
 *	raw HEX [--chunk N] [--delay-ms MS] [--hold-ms MS] [--reset]
 *	        [--own-pid-at OFFSET]
 *
 * Exit status: 0 success, 1 IPC error frame or failed check, 2 EOF or
 * I/O error before a complete reply, 3 timeout, 64 usage.
 *
 * What a pipe cannot do: there is no half-close, so --shut-wr (global or
 * raw's) is refused as a usage error; --reset is an abrupt CloseHandle
 * (a pipe has no RST), reported as "reset" the way faketool reports its
 * SO_LINGER 0 close; there is no SIGUSR1, so nothing cuts --hold-ms
 * short; the listen role (PIPE,listen) is not here.  I/O errors print the
 * text Linux would (a vanished pipe: "No such file or directory"; a
 * write to a closed one: "Broken pipe"), else "Windows error N".  Output
 * is binary: lines end in LF; diagnostics on stderr start with
 * "faketool: ", as faketool's do.
 *
 * The options, the commands and the wire are faketool's own code
 * (faketoolcore.c, fakeproto.c); this file is the Windows part: the pipe,
 * overlapped I/O and Win32 threads.
 */

#include <windows.h>

#include <fcntl.h>
#include <io.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faketoolcore.h"
#include "winpipe.h"

#define BUSY_SLEEP_MS		10
#define SILENT_POLL_MS		10

/* Not a Windows error: raw's --reset, faketool's ECONNRESET. */
#define ERR_RESET		0x20000000UL

/* Target. */
static struct pipename		 target;

static CRITICAL_SECTION		 out_mtx;
static __thread DWORD		 io_errno;

/* collect --stop-after-bytes: the thread that stops the session. */
static HANDLE			 stopper;

void
os_out_lock(void)
{
	EnterCriticalSection(&out_mtx);
}

void
os_out_unlock(void)
{
	LeaveCriticalSection(&out_mtx);
}

int64_t
os_now_ms(void)
{
	return ((int64_t)GetTickCount64());
}

/* The text faketool's strerror() would print for the same failure. */
static const char *
err_text(DWORD e)
{
	static __thread char	b[40];

	switch (e) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
	case ERROR_BAD_PATHNAME:
		return ("No such file or directory");
	case ERROR_ACCESS_DENIED:
		return ("Permission denied");
	case ERROR_BROKEN_PIPE:
	case ERROR_NO_DATA:
	case ERROR_PIPE_NOT_CONNECTED:
		return ("Broken pipe");
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return ("Cannot allocate memory");
	default:
		snprintf(b, sizeof(b), "Windows error %lu", e);
		return (b);
	}
}

/* The text of the last I/O error on this thread. */
const char *
os_errtext(void)
{
	return (err_text(io_errno));
}

uint64_t
os_pid(void)
{
	return ((uint64_t)GetCurrentProcessId());
}

/* Milliseconds left until the absolute time until, at least 0. */
static DWORD
ms_until(int64_t until)
{
	int64_t	left = until - os_now_ms();

	if (left <= 0)
		return (0);
	return (left > 0x7fffffff ? 0x7fffffff : (DWORD)left);
}

/*
 * One overlapped read or write of up to len bytes before until.  A read
 * gets at least one byte or says why not; a write completes whole (a
 * pipe takes all of it) or fails.
 */
static enum io
pc_io(struct conn *pc, int write, void *buf, DWORD len, DWORD *n,
    int64_t until)
{
	DWORD	r, e;
	BOOL	ok;

	for (;;) {
		*n = 0;
		if (os_now_ms() >= until)
			return (IO_TIMEOUT);
		memset(&pc->ov, 0, sizeof(pc->ov));
		ResetEvent(pc->ev);
		pc->ov.hEvent = pc->ev;
		ok = write ? WriteFile(pc->h, buf, len, NULL, &pc->ov) :
		    ReadFile(pc->h, buf, len, NULL, &pc->ov);
		if (!ok && (e = GetLastError()) != ERROR_IO_PENDING)
			goto failed;
		r = WaitForSingleObject(pc->ev, ms_until(until));
		if (r != WAIT_OBJECT_0)
			CancelIoEx(pc->h, &pc->ov);
		if (!GetOverlappedResult(pc->h, &pc->ov, n, TRUE)) {
			e = GetLastError();
			if (e == ERROR_OPERATION_ABORTED && *n == 0)
				return (IO_TIMEOUT);
			if (*n > 0)
				return (IO_OK);
			goto failed;
		}
		if (*n > 0 || len == 0)
			return (IO_OK);
		if (r != WAIT_OBJECT_0)
			return (IO_TIMEOUT);
		/* A zero-byte message from the peer: read again. */
	}
failed:
	if (!write && (e == ERROR_BROKEN_PIPE || e == ERROR_PIPE_NOT_CONNECTED))
		return (IO_EOF);
	io_errno = e;
	return (IO_ERR);
}

/* Read up to len bytes (at least one) before until. */
enum io
os_read_some(struct conn *pc, void *buf, size_t len, size_t *got,
    int64_t until)
{
	DWORD	n;
	enum io	r;

	r = pc_io(pc, 0, buf, len > 1048576 ? 1048576 : (DWORD)len, &n, until);
	*got = n;
	return (r);
}

/* Write exactly len bytes before until. */
enum io
os_write_full(struct conn *pc, const void *buf, size_t len, int64_t until)
{
	const uint8_t	*p = buf;
	size_t		 done = 0;
	DWORD		 n, want;
	enum io		 r;

	while (done < len) {
		want = len - done > 1048576 ? 1048576 : (DWORD)(len - done);
		r = pc_io(pc, 1, (void *)(p + done), want, &n, until);
		if (r != IO_OK)
			return (r);
		done += n;
	}
	return (IO_OK);
}

/* Sleep ms milliseconds, but never past the deadline. */
enum io
os_sleep_ms(int64_t ms)
{
	int64_t	until = os_now_ms() + ms;

	if (until > deadline)
		until = deadline;
	if (until > os_now_ms())
		Sleep(ms_until(until));
	return (os_now_ms() >= deadline ? IO_TIMEOUT : IO_OK);
}

/* Parse ADDR: PIPE[,connect], PIPE a bare name or \\.\pipe\NAME. */
int
os_parse_target(const char *arg)
{
	char	 addr[PIPE_NAME_MAX + 32];
	char	*comma;

	if (strlen(arg) >= sizeof(addr))
		return (-1);
	strcpy(addr, arg);
	if ((comma = strrchr(addr, ',')) != NULL) {
		if (_stricmp(comma + 1, "listen") == 0) {
			diag("the listen role is not in winfaketool");
			return (-1);
		}
		if (_stricmp(comma + 1, "connect") != 0)
			return (-1);
		*comma = '\0';
	}
	return (pipe_name(addr, &target) == 0 ? 0 : -1);
}

/*
 * Say nothing on a fresh connection for --silent-ms, as dotnet-dsrouter's
 * client-client mode does with the connection it opens ahead of a tool.
 * The peer closing it (or speaking) meanwhile is an EOF.  PeekNamedPipe,
 * polled, watches without taking any byte.
 */
static enum io
stay_silent(struct conn *pc)
{
	int64_t	until = os_now_ms() + opt_silent_ms;
	DWORD	avail;

	if (until > deadline)
		until = deadline;
	for (;;) {
		avail = 0;
		if (!PeekNamedPipe(pc->h, NULL, 0, NULL, &avail, NULL) ||
		    avail > 0) {
			diag("closed (or spoken to) while silent");
			return (IO_EOF);
		}
		if (os_now_ms() >= until)
			break;
		Sleep(ms_until(until) < SILENT_POLL_MS ? ms_until(until) :
		    SILENT_POLL_MS);
	}
	return (os_now_ms() >= deadline ? IO_TIMEOUT : IO_OK);
}

/* Get a connection for one command: a new one to the pipe. */
enum io
os_open(struct conn **pcp)
{
	struct conn	*pc;
	HANDLE		 h;
	DWORD		 e;
	enum io		 r;

	for (;;) {
		h = CreateFileW(target.w, GENERIC_READ | GENERIC_WRITE, 0, NULL,
		    OPEN_EXISTING, FILE_FLAG_OVERLAPPED, NULL);
		if (h != INVALID_HANDLE_VALUE)
			break;
		e = GetLastError();
		if (e != ERROR_PIPE_BUSY) {
			io_errno = e;
			return (IO_ERR);
		}
		/* Every instance is taken: poll, bounded by the timeout. */
		if (os_now_ms() + BUSY_SLEEP_MS > deadline)
			return (IO_TIMEOUT);
		Sleep(BUSY_SLEEP_MS);
	}
	if ((pc = calloc(1, sizeof(*pc))) == NULL ||
	    (pc->ev = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL) {
		free(pc);
		CloseHandle(h);
		io_errno = ERROR_NOT_ENOUGH_MEMORY;
		return (IO_ERR);
	}
	pc->h = h;
	if (opt_silent_ms > 0 && (r = stay_silent(pc)) != IO_OK) {
		os_close(pc);
		return (r);
	}
	*pcp = pc;
	return (IO_OK);
}

/* A pipe has no half-close: --shut-wr is refused, saying so. */
int
os_shut_wr_ok(const char *what)
{
	diag("%s: a pipe has no half-close", what);
	return (-1);
}

/* Never called: os_shut_wr_ok() refuses --shut-wr. */
void
os_shut_wr(struct conn *pc)
{
}

/* raw --reset: a pipe has no RST, the abrupt close is all there is. */
enum io
os_reset(struct conn *pc)
{
	io_errno = ERR_RESET;
	return (IO_ERR);
}

int
os_is_reset(void)
{
	return (io_errno == ERR_RESET);
}

static DWORD WINAPI
stopper_main(LPVOID arg)
{
	tool_stopper();
	return (0);
}

/* Start the stopper thread: 0, or -1 with the error. */
int
os_stopper_start(void)
{
	if ((stopper = CreateThread(NULL, 0, stopper_main, NULL, 0, NULL)) ==
	    NULL) {
		diag("CreateThread failed");
		io_errno = GetLastError();
		return (-1);
	}
	return (0);
}

void
os_stopper_join(void)
{
	WaitForSingleObject(stopper, INFINITE);
	CloseHandle(stopper);
}

/* No SIGUSR1 on Windows: nothing cuts raw's --hold-ms short. */
void
os_raw_signals(void)
{
}

int
os_hold_cut(void)
{
	return (0);
}

int
os_start(void)
{
	return (0);
}

void
os_finish(void)
{
}

void
os_usage(void)
{
	fprintf(stderr,
	    "usage: winfaketool [--timeout SEC] [--silent-ms MS] "
	    "PIPE[,connect] COMMAND [args]\n"
	    "PIPE: NAME | \\\\.\\pipe\\NAME\n"
	    "commands:\n"
	    "  processinfo | processinfo2 | processinfo3 | resume | env\n"
	    "  collect [--stop-after-bytes N] [--rate BPS] "
	    "[--hangup-after-bytes N]\n"
	    "          [--expect-bytes N] [--pause-after-bytes N]\n"
	    "  stop ID\n"
	    "  repeat N processinfo|resume\n"
	    "  raw HEX [--chunk N] [--delay-ms MS] [--hold-ms MS] [--reset]\n"
	    "      [--own-pid-at OFFSET]  (this process's pid, u64 LE, there)\n"
	    "  command SET ID [HEXPAYLOAD]\n");
	exit(EXIT_USAGE);
}

int
main(int argc, char *argv[])
{
	_setmode(_fileno(stdout), _O_BINARY);	/* LF, not CRLF */
	_setmode(_fileno(stderr), _O_BINARY);
	InitializeCriticalSection(&out_mtx);
	return (tool_main(argc, argv));
}
