/* SPDX-License-Identifier: ISC */

/*
 * winfakert.exe: the Windows twin of fakert, a fake .NET runtime
 * diagnostic server, on named pipes.  Built with mingw-w64, run under wine
 * (or Windows).  Like fakert it is an independent implementation of the
 * protocol as the runtime serves it, and shares no code with the router:
 * one server thread serves commands strictly one at a time over an
 * optional listen pipe and an optional connect ("reverse") pipe, and each
 * EventPipe session streams on its own thread.  The options, the commands,
 * the sessions and the wire are fakert's own code (fakertcore.c,
 * fakeproto.c); this file is the Windows part: named pipes, overlapped
 * I/O, Win32 threads and events, console control.
 *
 *	winfakert [--listen PIPE] [--connect PIPE] [--suspend] [--pid N]
 *	          [--cookie HEX32] [--stream-bytes N] [--stream-chunk N]
 *	          [--events FILE] [--exit-after N] [--name NAME] [--info-pid N]
 *
 * PIPE is a bare name or \\.\pipe\NAME; both mean the same pipe.
 * --listen default serves the runtime's own default port,
 * dotnet-diagnostic-PID with this process's pid.  The
 * options, the events-file lines and the stream bytes are fakert's, so the
 * same assertions and the Linux faketool's --expect-bytes and sha256 hold:
 *
 *	listen \\.\pipe\NAME      (always the full name)
 *	accept | advertise | parked-hup | resumed | exit
 *	command 0xSS 0xII SIZE NAME | bad-message KIND N | rx-bytes N
 *	stream-start ID | stream-end ID BYTES SHA256 | stream-broken ID BYTES
 *
 * The events file is written in binary (LF line ends), one flushed line
 * at a time; stdout and stderr are binary too, and messages start with
 * "fakert: ", as fakert's do.  FILE is opened by the C runtime: under wine
 * a Unix path works while the current directory is on the drive that maps
 * / (Z:, the default).  ProcessInfo says os=Windows arch=x64 (rid win-x64),
 * and its command line is "fakert" and the arguments, as fakert's is, so
 * only os= differs.
 *
 * The listen pipe keeps PENDING instances waiting for clients, each
 * replaced by an acceptor thread as soon as it connects and handed to the
 * server thread in order, so a burst of clients is queued (as a socket's
 * backlog would) rather than refused with ERROR_PIPE_BUSY.  (The real
 * runtime keeps one instance; under wine 8 a burst against it can wedge,
 * tests/windows/README.md.)  A name that is already served is refused at
 * start: with FILE_FLAG_FIRST_PIPE_INSTANCE on Windows, and by counting
 * instances under wine 8, which ignores that flag
 * (contrib/windows/pipeprobe.c).
 *
 * The connect pipe: dial it (ERROR_PIPE_BUSY is retried every 10 ms for
 * CONNECT_TIMEOUT_MS), send the 34-byte ADVR_V1 advertise within
 * ADVR_TIMEOUT_MS, park the connection, serve the first command on it, and
 * dial again; failures back off from 10 ms to 500 ms by 5/4, a parked
 * connection the peer closes logs parked-hup and is redialled after 10 ms.
 * With --suspend, ResumeRuntime on the connect pipe logs "resumed" and
 * prints "fakert: resumed" on stderr, as fakert does.
 *
 * It ends on Ctrl-C, Ctrl-Break or console close, or after --exit-after
 * commands, and logs "exit".  Under wine, SIGINT to the process is a
 * Ctrl-C; SIGTERM kills it at once (wine's own handler, status 143), with
 * no "exit" line.
 */

#include <windows.h>
#include <wincrypt.h>

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <io.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fakertcore.h"
#include "winpipe.h"

#define BUSY_SLEEP_MS		10
#define PENDING			4	/* listen instances waiting */
#define BACKLOG			255	/* connected, not yet served */
#define PIPE_BUF_SIZE		65536

#define IO_DONE			0
#define IO_FAIL			1
#define IO_TIMEOUT		2
#define IO_QUIT			3

/* A listen instance waiting in ConnectNamedPipe. */
struct waiting {
	HANDLE			 h;
	HANDLE			 ev;
	OVERLAPPED		 ov;
	int			 early;	/* ERROR_PIPE_CONNECTED */
};

/* Configuration, fixed after option parsing. */
static struct pipename	 listen_name;
static struct pipename	 connect_name;

/* Process state. */
static HANDLE		 quit_event;	/* manual: everything stops */
static HANDLE		 stop_event;	/* manual: console control */
static HANDLE		 resume_event;	/* auto: ResumeRuntime came */
static HANDLE		 done_event;	/* manual: the server finished */
static volatile LONG	 quitting;

/* The listen pipe: the acceptor's instances and its queue. */
static struct waiting	 waiting[PENDING];
static HANDLE		 acceptor;
static HANDLE		 queue_sem;
static CRITICAL_SECTION	 queue_lock;
static HANDLE		 queue[BACKLOG];
static int		 queue_head, queue_len;

/* Server thread state; touched by the server thread only. */
static struct conn	*parked;
static uint8_t		 parked_byte;

/* The streaming threads, by session slot, and the core's locks. */
static HANDLE		 stream_threads[MAX_SESSIONS];
static CRITICAL_SECTION	 locks[2];
static CONDITION_VARIABLE sess_cv;

const struct platform	 os_platform = {
	"Windows", "win-x64", "PATH=C:\\windows\\system32;C:\\windows",
	"USERPROFILE=C:\\nonexistent"
};

/* Nothing: callers of fatal() put the Windows error in the message. */
const char *
os_fatal_detail(void)
{
	return (NULL);
}

/*
 * Parse PIPE: NAME or \\.\pipe\NAME, kept as the full name; "default" to
 * --listen is the runtime's own default port, dotnet-diagnostic-PID with
 * this process's pid.
 */
void
os_parse_port(const char *opt, const char *s, enum port which)
{
	char	 own[64];

	if (which == PORT_LISTEN && strcmp(s, "default") == 0) {
		snprintf(own, sizeof(own), "dotnet-diagnostic-%lu",
		    GetCurrentProcessId());
		s = own;
	}
	switch (pipe_name(s, which == PORT_LISTEN ? &listen_name :
	    &connect_name)) {
	case PIPE_REMOTE:
		fatal("%s: \"%s\" is not a local pipe (\\\\.\\pipe\\NAME)",
		    opt, s);
	case PIPE_NOT_PIPE:
		fatal("%s: \"%s\": winfakert serves named pipes only (NAME or "
		    "\\\\.\\pipe\\NAME)", opt, s);
	case PIPE_BAD:
		fatal("%s: bad pipe name \"%s\"", opt, s);
	}
}

static struct conn *
pc_new(HANDLE h)
{
	struct conn	*pc;

	if ((pc = calloc(1, sizeof(*pc))) == NULL)
		fatal("out of memory");
	pc->h = h;
	if ((pc->ev = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL)
		fatal("CreateEvent: error %lu", GetLastError());
	return (pc);
}

/*
 * One overlapped read or write of up to len bytes, waited for at most ms
 * (INFINITE: forever) or until shutdown.  *n gets the bytes moved (a
 * write moves all or, when cut short, what the pipe took).
 */
static int
pc_io(struct conn *pc, int write, void *buf, DWORD len, DWORD ms, DWORD *n,
    DWORD *err)
{
	HANDLE	hs[2];
	DWORD	r;
	BOOL	ok;

	*n = 0;
	*err = 0;
	memset(&pc->ov, 0, sizeof(pc->ov));
	ResetEvent(pc->ev);
	pc->ov.hEvent = pc->ev;
	ok = write ? WriteFile(pc->h, buf, len, NULL, &pc->ov) :
	    ReadFile(pc->h, buf, len, NULL, &pc->ov);
	if (!ok && GetLastError() != ERROR_IO_PENDING) {
		*err = GetLastError();
		return (IO_FAIL);
	}
	hs[0] = pc->ev;
	hs[1] = quit_event;
	r = WaitForMultipleObjects(2, hs, FALSE, ms);
	if (r != WAIT_OBJECT_0)
		CancelIoEx(pc->h, &pc->ov);
	if (GetOverlappedResult(pc->h, &pc->ov, n, TRUE)) {
		if (r == WAIT_OBJECT_0 || *n == len)
			return (IO_DONE);
	} else
		*err = GetLastError();
	if (r == WAIT_OBJECT_0)
		return (IO_FAIL);
	return (r == WAIT_TIMEOUT ? IO_TIMEOUT : IO_QUIT);
}

/* Read exactly len bytes with no timeout, like the runtime does. */
int
os_read_full(struct conn *pc, void *buf, size_t len, size_t *got)
{
	uint8_t	*p = buf;
	DWORD	 n, err;
	int	 r;

	*got = 0;
	while (*got < len) {
		r = pc_io(pc, 0, p + *got, (DWORD)(len - *got), INFINITE, &n,
		    &err);
		*got += n;
		if (r == IO_QUIT)
			return (RD_QUIT);
		if (r != IO_DONE || n == 0)
			return (RD_EOF);
	}
	return (RD_OK);
}

/*
 * Write len bytes, waiting at most timeout ms for the pipe to take them
 * (FOREVER: no limit).  Returns the number of bytes written.
 */
size_t
os_write_full(struct conn *pc, const void *buf, size_t len, int timeout)
{
	const uint8_t	*p = buf;
	size_t		 done = 0;
	DWORD		 n, err, want, ms;
	int		 r;

	ms = timeout == FOREVER ? INFINITE : (DWORD)timeout;
	while (done < len) {
		want = len - done > 1048576 ? 1048576 : (DWORD)(len - done);
		r = pc_io(pc, 1, (void *)(p + done), want, ms, &n, &err);
		done += n;
		if (r != IO_DONE || n == 0)
			break;
	}
	return (done);
}

void
os_lock(enum lock l)
{
	EnterCriticalSection(&locks[l]);
}

void
os_unlock(enum lock l)
{
	LeaveCriticalSection(&locks[l]);
}

void
os_sessions_wait(void)
{
	SleepConditionVariableCS(&sess_cv, &locks[LOCK_SESSIONS], INFINITE);
}

void
os_sessions_wake(void)
{
	WakeAllConditionVariable(&sess_cv);
}

static DWORD WINAPI
stream_main(LPVOID arg)
{
	rt_stream((int)(intptr_t)arg);
	return (0);
}

int
os_stream_start(int i)
{
	stream_threads[i] = CreateThread(NULL, 0, stream_main,
	    (LPVOID)(intptr_t)i, 0, NULL);
	return (stream_threads[i] == NULL ? -1 : 0);
}

void
os_stream_join(int i)
{
	WaitForSingleObject(stream_threads[i], INFINITE);
	CloseHandle(stream_threads[i]);
}

int
os_quitting(void)
{
	return (quitting != 0);
}

/* Tell the main thread that ResumeRuntime came. */
void
os_resume(void)
{
	SetEvent(resume_event);
}

uint64_t
os_pid(void)
{
	return ((uint64_t)GetCurrentProcessId());
}

/*
 * Open the connect pipe: dial it (busy instances retried for 100 ms),
 * then send the advertise within 100 ms.  Returns the connection or NULL.
 */
static struct conn *
connect_port(void)
{
	struct conn	*pc;
	uint8_t		 advr[ADVR_LEN];
	HANDLE		 h;
	DWORD		 start = GetTickCount();

	for (;;) {
		h = CreateFileW(connect_name.w, GENERIC_READ | GENERIC_WRITE,
		    0, NULL, OPEN_EXISTING, FILE_FLAG_OVERLAPPED, NULL);
		if (h != INVALID_HANDLE_VALUE)
			break;
		/* No WaitNamedPipe: it wedges servers under wine 8. */
		if (GetLastError() != ERROR_PIPE_BUSY ||
		    GetTickCount() - start >= CONNECT_TIMEOUT_MS ||
		    WaitForSingleObject(quit_event, BUSY_SLEEP_MS) !=
		    WAIT_TIMEOUT)
			return (NULL);
	}
	pc = pc_new(h);
	fp_advertise_put(advr, cookie, opt_pid);
	if (os_write_full(pc, advr, sizeof(advr), ADVR_TIMEOUT_MS) !=
	    sizeof(advr)) {
		os_close(pc);
		return (NULL);
	}
	ev_log("advertise");
	return (pc);
}

/*
 * Watch the parked connection: one overlapped read of one byte, which
 * completes with the first byte of a command or with the peer's close.
 * (The runtime posts a zero-byte read for the same; this keeps the byte.)
 * Returns 0, or -1 if the read failed at once.
 */
static int
parked_watch(void)
{
	memset(&parked->ov, 0, sizeof(parked->ov));
	ResetEvent(parked->ev);
	parked->ov.hEvent = parked->ev;
	if (ReadFile(parked->h, &parked_byte, 1, NULL, &parked->ov) ||
	    GetLastError() == ERROR_IO_PENDING)
		return (0);
	return (-1);
}

/* Drop the parked connection after its peer hung up. */
static void
parked_hup(void)
{
	rt_hup(parked);
	parked = NULL;
}

/* Cancel the parked connection's read and close it. */
static void
parked_drop(void)
{
	DWORD	n;

	if (parked == NULL)
		return;
	CancelIoEx(parked->h, &parked->ov);
	(void)GetOverlappedResult(parked->h, &parked->ov, &n, TRUE);
	os_close(parked);
	parked = NULL;
}

/* Take the oldest connected listen instance, or NULL. */
static HANDLE
queue_pop(void)
{
	HANDLE	h = NULL;

	EnterCriticalSection(&queue_lock);
	if (queue_len > 0) {
		h = queue[queue_head];
		queue_head = (queue_head + 1) % BACKLOG;
		queue_len--;
	}
	LeaveCriticalSection(&queue_lock);
	return (h);
}

/*
 * Run the diagnostic server loop: keep zero or one parked connection on
 * the connect pipe, wait for it and for the listen queue, serve one at a
 * time.
 */
static DWORD WINAPI
server_main(LPVOID arg)
{
	HANDLE		 hs[3];
	DWORD		 timeout, r, n, got;
	int		 backoff = 0, hup_delay = 0, ip, il;
	HANDLE		 h;

	(void)arg;
	while (!quitting) {
		os_lock(LOCK_SESSIONS);
		rt_sessions_reap();
		os_unlock(LOCK_SESSIONS);

		timeout = INFINITE;
		if (have_connect && parked == NULL) {
			if (hup_delay) {
				hup_delay = 0;
				timeout = BACKOFF_MIN_MS;
			} else if ((parked = connect_port()) != NULL) {
				backoff = 0;
				if (parked_watch() == -1) {
					parked_hup();
					hup_delay = 1;
					continue;
				}
			} else {
				if (quitting)
					break;
				backoff = rt_backoff(backoff);
				timeout = backoff;
			}
		}

		n = 0;
		hs[n++] = quit_event;
		ip = il = -1;
		if (parked != NULL) {
			ip = n;
			hs[n++] = parked->ev;
		}
		if (have_listen) {
			il = n;
			hs[n++] = queue_sem;
		}
		r = WaitForMultipleObjects(n, hs, FALSE, timeout);
		if (r == WAIT_TIMEOUT)
			continue;
		if (r == WAIT_FAILED)
			fatal("WaitForMultipleObjects: error %lu",
			    GetLastError());
		r -= WAIT_OBJECT_0;
		if (r == 0)
			break;

		if (ip != -1 && (int)r == ip) {
			if (GetOverlappedResult(parked->h, &parked->ov, &got,
			    FALSE) && got == 1) {
				struct conn	*pc = parked;

				parked = NULL;
				rt_serve(pc, PORT_CONNECT, &parked_byte, 1);
			} else {
				parked_hup();
				hup_delay = 1;
			}
		} else if (il != -1 && (int)r == il) {
			if ((h = queue_pop()) != NULL) {
				ev_log("accept");
				rt_serve(pc_new(h), PORT_LISTEN, NULL, 0);
			}
		}

		if (opt_exit_after != 0 && served >= opt_exit_after)
			break;
	}
	parked_drop();
	SetEvent(done_event);
	return (0);
}

/* One listen instance of the pipe; the first must be the only one. */
static HANDLE
make_instance(int first)
{
	HANDLE	h;
	DWORD	n = 0;

	h = CreateNamedPipeW(listen_name.w, PIPE_ACCESS_DUPLEX |
	    FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
	    PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
	    PIPE_REJECT_REMOTE_CLIENTS, PIPE_UNLIMITED_INSTANCES,
	    PIPE_BUF_SIZE, PIPE_BUF_SIZE, 0, NULL);
	if (h == INVALID_HANDLE_VALUE) {
		if (first && GetLastError() == ERROR_ACCESS_DENIED)
			fatal("%s is already served (or not ours)",
			    listen_name.text);
		fatal("CreateNamedPipe %s: error %lu", listen_name.text,
		    GetLastError());
	}
	/* Wine 8 ignores FILE_FLAG_FIRST_PIPE_INSTANCE: count instead. */
	if (first && GetNamedPipeHandleStateW(h, NULL, &n, NULL, NULL, NULL,
	    0) && n > 1)
		fatal("%s is already served (%lu instances)",
		    listen_name.text, n - 1);
	return (h);
}

/*
 * Start waiting for a client on slot i.  A client that came before
 * ConnectNamedPipe (instances listen from creation) sets the event by
 * hand, as no completion comes then.
 */
static void
arm(int i)
{
	struct waiting	*w = &waiting[i];

	memset(&w->ov, 0, sizeof(w->ov));
	ResetEvent(w->ev);
	w->ov.hEvent = w->ev;
	w->early = 0;
	if (ConnectNamedPipe(w->h, &w->ov))
		SetEvent(w->ev);
	else if (GetLastError() == ERROR_PIPE_CONNECTED) {
		w->early = 1;
		SetEvent(w->ev);
	} else if (GetLastError() != ERROR_IO_PENDING) {
		/* A client came and went: that instance is spent. */
		CloseHandle(w->h);
		w->h = make_instance(0);
		arm(i);
	}
}

/* Hand the connected instances to the server, replacing each at once. */
static DWORD WINAPI
acceptor_main(LPVOID arg)
{
	HANDLE	hs[1 + PENDING], h;
	DWORD	r, n;
	int	i, ok;

	(void)arg;
	for (i = 0; i < PENDING; i++)
		arm(i);
	for (;;) {
		hs[0] = quit_event;
		for (i = 0; i < PENDING; i++)
			hs[1 + i] = waiting[i].ev;
		r = WaitForMultipleObjects(1 + PENDING, hs, FALSE, INFINITE);
		if (r == WAIT_OBJECT_0 || r == WAIT_FAILED)
			break;
		i = r - WAIT_OBJECT_0 - 1;
		if (i < 0 || i >= PENDING)
			break;
		h = waiting[i].h;
		ok = waiting[i].early ||
		    GetOverlappedResult(h, &waiting[i].ov, &n, FALSE);
		waiting[i].h = make_instance(0);
		arm(i);
		if (!ok) {
			CloseHandle(h);
			continue;
		}
		EnterCriticalSection(&queue_lock);
		if (queue_len == BACKLOG) {
			/* A full backlog refuses, as listen(2)'s does. */
			LeaveCriticalSection(&queue_lock);
			CloseHandle(h);
			continue;
		}
		queue[(queue_head + queue_len) % BACKLOG] = h;
		queue_len++;
		LeaveCriticalSection(&queue_lock);
		ReleaseSemaphore(queue_sem, 1, NULL);
	}
	for (i = 0; i < PENDING; i++) {
		if (!waiting[i].early) {
			CancelIoEx(waiting[i].h, &waiting[i].ov);
			(void)GetOverlappedResult(waiting[i].h,
			    &waiting[i].ov, &n, TRUE);
		}
		CloseHandle(waiting[i].h);
		CloseHandle(waiting[i].ev);
	}
	return (0);
}

/* Create the listen instances; the acceptor arms them. */
static void
setup_listen(void)
{
	int	i;

	if ((queue_sem = CreateSemaphoreW(NULL, 0, BACKLOG, NULL)) == NULL)
		fatal("CreateSemaphore: error %lu", GetLastError());
	InitializeCriticalSection(&queue_lock);
	for (i = 0; i < PENDING; i++) {
		waiting[i].h = make_instance(i == 0);
		if ((waiting[i].ev = CreateEventW(NULL, TRUE, FALSE, NULL)) ==
		    NULL)
			fatal("CreateEvent: error %lu", GetLastError());
	}
	ev_log("listen %s", listen_name.text);
}

/* Ctrl-C, Ctrl-Break, console close: shut down as fakert does on TERM. */
static BOOL WINAPI
on_console(DWORD type)
{
	(void)type;
	SetEvent(stop_event);
	return (TRUE);
}

void
os_random_cookie(uint8_t *c)
{
	HCRYPTPROV	prov;

	if (!CryptAcquireContextW(&prov, NULL, NULL, PROV_RSA_AES,
	    CRYPT_VERIFYCONTEXT) ||
	    !CryptGenRandom(prov, COOKIE_LEN, c))
		fatal("CryptGenRandom: error %lu", GetLastError());
	CryptReleaseContext(prov, 0);
}

void
os_usage(void)
{
	fprintf(stderr,
	    "usage: winfakert [--listen PIPE] [--connect PIPE] [--suspend] "
	    "[--pid N]\n"
	    "                 [--cookie HEX32] [--stream-bytes N] "
	    "[--stream-chunk N]\n"
	    "                 [--events FILE] [--exit-after N] [--name NAME] "
	    "[--info-pid N]\n"
	    "                 [-- WORD...]\n"
	    "PIPE is a pipe name or \\\\.\\pipe\\NAME; --listen default is "
	    "dotnet-diagnostic-<its pid>\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	HANDLE		 server, hs[3];
	const char	*events;
	DWORD		 r;

	_setmode(_fileno(stdout), _O_BINARY);
	_setmode(_fileno(stderr), _O_BINARY);
	events = rt_options(argc, argv);

	InitializeCriticalSection(&locks[LOCK_EVENTS]);
	InitializeCriticalSection(&locks[LOCK_SESSIONS]);
	InitializeConditionVariable(&sess_cv);
	if ((quit_event = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL ||
	    (stop_event = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL ||
	    (resume_event = CreateEventW(NULL, FALSE, FALSE, NULL)) == NULL ||
	    (done_event = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL)
		fatal("CreateEvent: error %lu", GetLastError());
	if (events != NULL && (evf = fopen(events, "ab")) == NULL)
		fatal("%s: %s", events, strerror(errno));
	if (have_listen)
		setup_listen();
	SetConsoleCtrlHandler(on_console, TRUE);

	if (have_listen && (acceptor = CreateThread(NULL, 0, acceptor_main,
	    NULL, 0, NULL)) == NULL)
		fatal("CreateThread: error %lu", GetLastError());
	if ((server = CreateThread(NULL, 0, server_main, NULL, 0, NULL)) ==
	    NULL)
		fatal("CreateThread: error %lu", GetLastError());

	/*
	 * The main thread plays the runtime's startup: with --suspend it
	 * waits for ResumeRuntime; in any case it then waits for a console
	 * control event or for the server to finish after --exit-after.
	 */
	hs[0] = resume_event;
	hs[1] = done_event;
	hs[2] = stop_event;
	for (;;) {
		r = WaitForMultipleObjects(3, hs, FALSE, INFINITE);
		if (r == WAIT_OBJECT_0) {
			rt_resumed();
			continue;
		}
		break;
	}

	InterlockedExchange(&quitting, 1);
	SetEvent(quit_event);
	WaitForSingleObject(server, INFINITE);
	CloseHandle(server);
	if (acceptor != NULL) {
		WaitForSingleObject(acceptor, INFINITE);
		CloseHandle(acceptor);
		while (queue_len > 0)
			CloseHandle(queue_pop());
	}

	rt_sessions_finish();
	rt_exit();
	return (0);
}
