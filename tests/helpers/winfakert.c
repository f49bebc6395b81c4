/* SPDX-License-Identifier: ISC */

/*
 * winfakert.exe: the Windows twin of fakert, a fake .NET runtime
 * diagnostic server, on named pipes.  Built with mingw-w64, run under wine
 * (or Windows).  Like fakert it is an independent implementation of the
 * protocol as the runtime serves it, and shares no code with the router:
 * one server thread serves commands strictly one at a time over an
 * optional listen pipe and an optional connect ("reverse") pipe, and each
 * EventPipe session streams on its own thread.
 *
 *	winfakert [--listen PIPE] [--connect PIPE] [--suspend] [--pid N]
 *	          [--cookie HEX32] [--stream-bytes N] [--stream-chunk N]
 *	          [--events FILE] [--exit-after N] [--name NAME] [--info-pid N]
 *
 * PIPE is a bare name or \\.\pipe\NAME; both mean the same pipe.  The
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
#include <getopt.h>
#include <inttypes.h>
#include <io.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "le.h"
#include "sha256.h"

#define IPC_MAGIC		"DOTNET_IPC_V1"	/* 13 chars + NUL = 14 */
#define IPC_MAGIC_LEN		14
#define IPC_HDR_LEN		20
#define IPC_MAX_MSG		65535
#define ADVR_MAGIC		"ADVR_V1"	/* 7 chars + NUL = 8 */
#define ADVR_LEN		34

#define SET_DUMP		0x01
#define SET_EVENTPIPE		0x02
#define SET_PROFILER		0x03
#define SET_PROCESS		0x04
#define SET_SERVER		0xFF
#define ID_OK			0x00
#define ID_ERROR		0xFF

#define HR_BAD_ENCODING		0x80131384U
#define HR_UNKNOWN_COMMAND	0x80131385U
#define HR_UNKNOWN_MAGIC	0x80131386U
#define HR_E_FAIL		0x80004005U
#define HR_INVALIDARG		0x80070057U

#define MAX_SESSIONS		64
#define CONNECT_TIMEOUT_MS	100
#define ADVR_TIMEOUT_MS		100
#define BACKOFF_MIN_MS		10
#define BACKOFF_MAX_MS		500
#define BUSY_SLEEP_MS		10
#define PENDING			4	/* listen instances waiting */
#define BACKLOG			255	/* connected, not yet served */
#define PIPE_BUF_SIZE		65536
#define CMDLINE_MAX		4096
#define PIPE_NAME_MAX		256

#define RD_OK			0
#define RD_EOF			1
#define RD_QUIT			2

#define IO_DONE			0
#define IO_FAIL			1
#define IO_TIMEOUT		2
#define IO_QUIT			3

enum port {
	PORT_LISTEN,
	PORT_CONNECT
};

enum sstate {
	SS_FREE,
	SS_RUNNING,
	SS_DONE
};

/* One pipe handle and the event of its one operation at a time. */
struct pconn {
	HANDLE			 h;
	HANDLE			 ev;
	OVERLAPPED		 ov;
};

struct pipename {
	wchar_t			 w[PIPE_NAME_MAX + 16];
	char			 text[3 * (PIPE_NAME_MAX + 16)];
};

struct session {
	enum sstate		 state;
	int			 stop;
	struct pconn		*pc;
	uint64_t		 id;
	HANDLE			 thread;
};

struct buf {
	uint8_t			 data[IPC_MAX_MSG - IPC_HDR_LEN];
	size_t			 len;
	int			 overflow;
};

struct request {
	struct pconn		*pc;
	enum port		 from;
	uint8_t			 set;
	uint8_t			 id;
	const uint8_t		*payload;
	size_t			 len;
};

struct command {
	uint8_t			 set;
	uint8_t			 id;
	const char		*name;
	int			(*fn)(struct request *);
};

struct gen {
	uint64_t		 state;
	uint64_t		 word;
};

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
static int		 have_listen;
static int		 have_connect;
static int		 opt_suspend;
static uint64_t		 opt_pid;
static uint64_t		 opt_info_pid;	/* ProcessInfo's, if it lies */
static const char	*opt_name = "fakert";
static uint8_t		 cookie[16];
static uint64_t		 opt_stream_bytes;
static size_t		 opt_stream_chunk = 65536;
static uint64_t		 opt_exit_after;
static char		 cmdline[CMDLINE_MAX];

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
static struct pconn	*parked;
static uint8_t		 parked_byte;
static int		 paused;
static uint64_t		 rx_total;
static uint64_t		 served;
static uint64_t		 next_session = 1;

/* EventPipe sessions. */
static struct session	 sessions[MAX_SESSIONS];
static CRITICAL_SECTION	 sess_mtx;
static CONDITION_VARIABLE sess_cv;

/* Events file. */
static FILE		*evf;
static CRITICAL_SECTION	 ev_mtx;

static int	cmd_ok(struct request *);
static int	cmd_processinfo(struct request *);
static int	cmd_resume(struct request *);
static int	cmd_environment(struct request *);
static int	cmd_startup_profiler(struct request *);
static int	cmd_collect(struct request *);
static int	cmd_stop(struct request *);

static const struct command commands[] = {
	{ SET_DUMP, 0x01, "GenerateCoreDump", cmd_ok },
	{ SET_DUMP, 0x02, "GenerateCoreDump2", cmd_ok },
	{ SET_DUMP, 0x03, "GenerateCoreDump3", cmd_ok },
	{ SET_EVENTPIPE, 0x01, "StopTracing", cmd_stop },
	{ SET_EVENTPIPE, 0x02, "CollectTracing", cmd_collect },
	{ SET_EVENTPIPE, 0x03, "CollectTracing2", cmd_collect },
	{ SET_EVENTPIPE, 0x04, "CollectTracing3", cmd_collect },
	{ SET_EVENTPIPE, 0x05, "CollectTracing4", cmd_collect },
	{ SET_EVENTPIPE, 0x06, "CollectTracing5", cmd_collect },
	{ SET_EVENTPIPE, 0x07, "CollectTracing6", cmd_collect },
	{ SET_PROFILER, 0x01, "AttachProfiler", cmd_ok },
	{ SET_PROFILER, 0x02, "StartupProfiler", cmd_startup_profiler },
	{ SET_PROCESS, 0x00, "ProcessInfo", cmd_processinfo },
	{ SET_PROCESS, 0x01, "ResumeRuntime", cmd_resume },
	{ SET_PROCESS, 0x02, "ProcessEnvironment", cmd_environment },
	{ SET_PROCESS, 0x03, "SetEnvironmentVariable", cmd_ok },
	{ SET_PROCESS, 0x04, "ProcessInfo2", cmd_processinfo },
	{ SET_PROCESS, 0x05, "EnablePerfMap", cmd_ok },
	{ SET_PROCESS, 0x06, "DisablePerfMap", cmd_ok },
	{ SET_PROCESS, 0x07, "ApplyStartupHook", cmd_ok },
	{ SET_PROCESS, 0x08, "ProcessInfo3", cmd_processinfo },
};

static const char *environment[] = {
	"FAKERT=1",
	"LANG=C.UTF-8",
	"PATH=C:\\windows\\system32;C:\\windows",
	"USERPROFILE=C:\\nonexistent",
};

static void	ev_log(const char *, ...)
		    __attribute__((format(gnu_printf, 1, 2)));
static void	fatal(const char *, ...)
		    __attribute__((format(gnu_printf, 1, 2), noreturn));

/* Print a message and exit 1; callers put the Windows error in it. */
static void
fatal(const char *fmt, ...)
{
	va_list	ap;

	fprintf(stderr, "fakert: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	fflush(stderr);
	exit(1);
}

/* Append one line to the events file, flushed, never interleaved. */
static void
ev_log(const char *fmt, ...)
{
	va_list	ap;

	if (evf == NULL)
		return;
	EnterCriticalSection(&ev_mtx);
	va_start(ap, fmt);
	vfprintf(evf, fmt, ap);
	va_end(ap);
	fputc('\n', evf);
	fflush(evf);
	LeaveCriticalSection(&ev_mtx);
}

/* Append raw bytes to a payload buffer, remembering any overflow. */
static void
buf_add(struct buf *b, const void *p, size_t n)
{
	if (b->overflow || n > sizeof(b->data) - b->len) {
		b->overflow = 1;
		return;
	}
	memcpy(b->data + b->len, p, n);
	b->len += n;
}

static void
buf_u16(struct buf *b, uint16_t v)
{
	uint8_t	tmp[2];

	put_le16(tmp, v);
	buf_add(b, tmp, sizeof(tmp));
}

static void
buf_u32(struct buf *b, uint32_t v)
{
	uint8_t	tmp[4];

	put_le32(tmp, v);
	buf_add(b, tmp, sizeof(tmp));
}

static void
buf_u64(struct buf *b, uint64_t v)
{
	uint8_t	tmp[8];

	put_le64(tmp, v);
	buf_add(b, tmp, sizeof(tmp));
}

/* Append a protocol string: u32 count with NUL, then UTF-16LE units. */
static void
buf_string(struct buf *b, const char *s)
{
	size_t	i, n = strlen(s);

	buf_u32(b, (uint32_t)(n + 1));
	for (i = 0; i < n; i++)
		buf_u16(b, (unsigned char)s[i]);
	buf_u16(b, 0);
}

/* Parse a decimal or 0x-prefixed unsigned number, or exit. */
static uint64_t
parse_number(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	char			*end;
	unsigned long long	 v;

	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno != 0 || *s == '\0' || *s == '-' || *end != '\0' ||
	    v < min || v > max)
		fatal("%s: bad number \"%s\"", opt, s);
	return (v);
}

/* Parse PIPE: NAME or \\.\pipe\NAME, kept as the full name. */
static void
parse_pipe(const char *opt, const char *s, struct pipename *p)
{
	static const char	prefix[] = "\\\\.\\pipe\\";
	const char		*name = s;

	if (_strnicmp(s, prefix, sizeof(prefix) - 1) == 0)
		name = s + sizeof(prefix) - 1;
	else if (strncmp(s, "\\\\", 2) == 0)
		fatal("%s: \"%s\" is not a local pipe (\\\\.\\pipe\\NAME)",
		    opt, s);
	if (strncmp(s, "tcp:", 4) == 0 || *s == '/')
		fatal("%s: \"%s\": winfakert serves named pipes only (NAME or "
		    "\\\\.\\pipe\\NAME)", opt, s);
	if (*name == '\0' || strlen(name) > PIPE_NAME_MAX ||
	    strchr(name, '/') != NULL)
		fatal("%s: bad pipe name \"%s\"", opt, s);
	snprintf(p->text, sizeof(p->text), "%s%s", prefix, name);
	if (MultiByteToWideChar(CP_UTF8, 0, p->text, -1, p->w,
	    (int)(sizeof(p->w) / sizeof(p->w[0]))) == 0)
		fatal("%s: bad pipe name \"%s\"", opt, s);
}

static struct pconn *
pc_new(HANDLE h)
{
	struct pconn	*pc;

	if ((pc = calloc(1, sizeof(*pc))) == NULL)
		fatal("out of memory");
	pc->h = h;
	if ((pc->ev = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL)
		fatal("CreateEvent: error %lu", GetLastError());
	return (pc);
}

/*
 * Close a pipe connection.  Bytes already written stay readable by the
 * peer: closing the server end is not DisconnectNamedPipe, which would
 * drop them (pipeprobe).
 */
static void
pc_close(struct pconn *pc)
{
	if (pc == NULL)
		return;
	CloseHandle(pc->h);
	CloseHandle(pc->ev);
	free(pc);
}

/*
 * One overlapped read or write of up to len bytes, waited for at most ms
 * (INFINITE: forever) or until shutdown.  *n gets the bytes moved (a
 * write moves all or, when cut short, what the pipe took).
 */
static int
pc_io(struct pconn *pc, int write, void *buf, DWORD len, DWORD ms, DWORD *n,
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
static int
read_full(struct pconn *pc, void *buf, size_t len, size_t *got)
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
 * (INFINITE: forever).  Returns the number of bytes written.
 */
static size_t
write_full(struct pconn *pc, const void *buf, size_t len, DWORD timeout)
{
	const uint8_t	*p = buf;
	size_t		 done = 0;
	DWORD		 n, err, want;
	int		 r;

	while (done < len) {
		want = len - done > 1048576 ? 1048576 : (DWORD)(len - done);
		r = pc_io(pc, 1, (void *)(p + done), want, timeout, &n, &err);
		done += n;
		if (r != IO_DONE || n == 0)
			break;
	}
	return (done);
}

/* Send one response message with the server command set. */
static void
send_msg(struct pconn *pc, uint8_t id, const void *payload, size_t len)
{
	uint8_t	msg[IPC_MAX_MSG];

	if (len > IPC_MAX_MSG - IPC_HDR_LEN)
		len = IPC_MAX_MSG - IPC_HDR_LEN;
	memcpy(msg, IPC_MAGIC, IPC_MAGIC_LEN);
	put_le16(msg + 14, (uint16_t)(IPC_HDR_LEN + len));
	msg[16] = SET_SERVER;
	msg[17] = id;
	put_le16(msg + 18, 0);
	if (len > 0)
		memcpy(msg + IPC_HDR_LEN, payload, len);
	(void)write_full(pc, msg, IPC_HDR_LEN + len, INFINITE);
}

static void
send_hresult(struct pconn *pc, uint8_t id, uint32_t hr)
{
	uint8_t	p[4];

	put_le32(p, hr);
	send_msg(pc, id, p, sizeof(p));
}

static void
send_u64(struct pconn *pc, uint64_t v)
{
	uint8_t	p[8];

	put_le64(p, v);
	send_msg(pc, ID_OK, p, sizeof(p));
}

/* Reply OK with i32 0 and do nothing else. */
static int
cmd_ok(struct request *rq)
{
	send_hresult(rq->pc, ID_OK, 0);
	return (0);
}

/* Reply with ProcessInfo, ProcessInfo2 or ProcessInfo3 fields. */
static int
cmd_processinfo(struct request *rq)
{
	static struct buf	b;

	memset(&b, 0, sizeof(b));
	if (rq->id == 0x08)
		buf_u32(&b, 1);
	buf_u64(&b, opt_info_pid != 0 ? opt_info_pid : opt_pid);
	buf_add(&b, cookie, sizeof(cookie));
	buf_string(&b, cmdline);
	buf_string(&b, "Windows");
	buf_string(&b, "x64");
	if (rq->id == 0x04 || rq->id == 0x08) {
		buf_string(&b, opt_name);
		buf_string(&b, "0.0.0-fake");
	}
	if (rq->id == 0x08)
		buf_string(&b, "win-x64");
	if (b.overflow)
		send_hresult(rq->pc, ID_ERROR, HR_E_FAIL);
	else
		send_msg(rq->pc, ID_OK, b.data, b.len);
	return (0);
}

/* Resume startup if the suspended connect port delivered the command. */
static int
cmd_resume(struct request *rq)
{
	send_hresult(rq->pc, ID_OK, 0);
	if (paused && rq->from == PORT_CONNECT) {
		paused = 0;
		SetEvent(resume_event);
	}
	return (0);
}

/* Accept StartupProfiler only while startup is paused. */
static int
cmd_startup_profiler(struct request *rq)
{
	if (paused)
		send_hresult(rq->pc, ID_OK, 0);
	else
		send_hresult(rq->pc, ID_ERROR, HR_INVALIDARG);
	return (0);
}

/* Reply with the environment size, then send the block itself. */
static int
cmd_environment(struct request *rq)
{
	static struct buf	cont;
	struct buf		head;
	size_t			i, n;

	n = sizeof(environment) / sizeof(environment[0]);
	memset(&cont, 0, sizeof(cont));
	buf_u32(&cont, (uint32_t)n);
	for (i = 0; i < n; i++)
		buf_string(&cont, environment[i]);
	memset(&head, 0, sizeof(head));
	buf_u32(&head, (uint32_t)cont.len);
	buf_u16(&head, 0);
	send_msg(rq->pc, ID_OK, head.data, head.len);
	(void)write_full(rq->pc, cont.data, cont.len, INFINITE);
	return (0);
}

/*
 * Produce the stream bytes at offsets off..off+n-1: "Nettrace", then the
 * little-endian words of a xorshift64 sequence.  The bytes depend only
 * on the session id and the offset, not on the chunk size: fakert's.
 */
static void
stream_fill(uint8_t *out, size_t n, uint64_t off, struct gen *g)
{
	static const char	hdr[8] = { 'N', 'e', 't', 't', 'r', 'a', 'c',
				    'e' };
	size_t			i;
	unsigned int		k;

	for (i = 0; i < n; i++, off++) {
		if (off < sizeof(hdr)) {
			out[i] = hdr[off];
			continue;
		}
		k = (off - sizeof(hdr)) % 8;
		if (k == 0) {
			g->state ^= g->state << 13;
			g->state ^= g->state >> 7;
			g->state ^= g->state << 17;
			g->word = g->state;
		}
		out[i] = (g->word >> (8 * k)) & 0xff;
	}
}

/* Stream one EventPipe session until stopped, complete or broken. */
static DWORD WINAPI
stream_main(LPVOID arg)
{
	struct session	*s = arg;
	struct gen	 g;
	struct sha256	 md;
	uint8_t		*chunk, digest[SHA256_LEN];
	char		 hex[2 * SHA256_LEN + 1];
	uint64_t	 total = 0, left;
	unsigned int	 i;
	size_t		 n, w;
	int		 stop, broken = 0;

	chunk = malloc(opt_stream_chunk);
	if (chunk == NULL || sha256_init(&md) == -1)
		fatal("stream setup");
	g.state = s->id ^ 0x9e3779b97f4a7c15ULL;
	if (g.state == 0)
		g.state = 1;
	g.word = 0;
	for (;;) {
		EnterCriticalSection(&sess_mtx);
		stop = s->stop;
		LeaveCriticalSection(&sess_mtx);
		if (stop || quitting)
			break;
		n = opt_stream_chunk;
		if (opt_stream_bytes != 0) {
			left = opt_stream_bytes - total;
			if (left == 0)
				break;
			if (left < n)
				n = left;
		}
		stream_fill(chunk, n, total, &g);
		w = write_full(s->pc, chunk, n, INFINITE);
		sha256_update(&md, chunk, w);
		total += w;
		if (w < n) {
			if (!quitting)
				broken = 1;
			break;
		}
	}
	if (sha256_final(&md, digest) == -1)
		fatal("stream digest");
	for (i = 0; i < SHA256_LEN; i++)
		snprintf(hex + 2 * i, 3, "%02x", digest[i]);
	hex[2 * SHA256_LEN] = '\0';
	if (broken)
		ev_log("stream-broken %" PRIu64 " %" PRIu64, s->id, total);
	else
		ev_log("stream-end %" PRIu64 " %" PRIu64 " %s", s->id, total,
		    hex);
	free(chunk);
	pc_close(s->pc);

	EnterCriticalSection(&sess_mtx);
	s->pc = NULL;
	s->state = SS_DONE;
	WakeAllConditionVariable(&sess_cv);
	LeaveCriticalSection(&sess_mtx);
	return (0);
}

/* Join sessions whose streaming thread has finished; call locked. */
static void
sessions_reap(void)
{
	int	i;

	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state != SS_DONE)
			continue;
		WaitForSingleObject(sessions[i].thread, INFINITE);
		CloseHandle(sessions[i].thread);
		sessions[i].state = SS_FREE;
	}
}

/* Start a session: reply with its id and hand the stream to a thread. */
static int
cmd_collect(struct request *rq)
{
	struct session	*s = NULL;
	int		 i;

	if (rq->len < 4) {
		send_hresult(rq->pc, ID_ERROR, HR_BAD_ENCODING);
		return (0);
	}
	EnterCriticalSection(&sess_mtx);
	sessions_reap();
	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state == SS_FREE) {
			s = &sessions[i];
			break;
		}
	}
	if (s == NULL) {
		LeaveCriticalSection(&sess_mtx);
		send_hresult(rq->pc, ID_ERROR, HR_E_FAIL);
		return (0);
	}
	s->state = SS_RUNNING;
	s->stop = 0;
	s->pc = rq->pc;
	s->id = 0x00007f3a00000000ULL + 0x40 * next_session++;
	send_u64(rq->pc, s->id);
	ev_log("stream-start %" PRIu64, s->id);
	if ((s->thread = CreateThread(NULL, 0, stream_main, s, 0, NULL)) ==
	    NULL) {
		s->state = SS_FREE;
		s->pc = NULL;
		LeaveCriticalSection(&sess_mtx);
		return (0);
	}
	LeaveCriticalSection(&sess_mtx);
	return (1);
}

/* Stop a session, wait for its stream to close, then reply. */
static int
cmd_stop(struct request *rq)
{
	struct session	*s = NULL;
	uint64_t	 id;
	int		 i;

	if (rq->len < 8) {
		send_hresult(rq->pc, ID_ERROR, HR_BAD_ENCODING);
		return (0);
	}
	id = get_le64(rq->payload);
	EnterCriticalSection(&sess_mtx);
	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state == SS_RUNNING && sessions[i].id == id) {
			s = &sessions[i];
			break;
		}
	}
	if (s == NULL) {
		LeaveCriticalSection(&sess_mtx);
		send_hresult(rq->pc, ID_ERROR, HR_INVALIDARG);
		return (0);
	}
	s->stop = 1;
	while (s->state != SS_DONE)
		SleepConditionVariableCS(&sess_cv, &sess_mtx, INFINITE);
	WaitForSingleObject(s->thread, INFINITE);
	CloseHandle(s->thread);
	s->state = SS_FREE;
	LeaveCriticalSection(&sess_mtx);
	send_u64(rq->pc, id);
	return (0);
}

static const struct command *
find_command(uint8_t set, uint8_t id)
{
	size_t	i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (commands[i].set == set && commands[i].id == id)
			return (&commands[i]);
	}
	return (NULL);
}

/*
 * Serve exactly one message on pc, as the runtime server loop does, and
 * close the connection unless a streaming session took it.  The first
 * npre bytes of the message were read already (a parked connection's).
 */
static void
serve(struct pconn *pc, enum port from, const uint8_t *pre, size_t npre)
{
	static uint8_t		 msg[IPC_MAX_MSG];
	const struct command	*cmd;
	struct request		 rq;
	size_t			 got, size;
	int			 r, kept = 0;

	memcpy(msg, pre, npre);
	rx_total += npre;
	r = read_full(pc, msg + npre, IPC_HDR_LEN - npre, &got);
	rx_total += got;
	got += npre;
	if (r == RD_QUIT)
		goto done;
	if (r != RD_OK) {
		ev_log("bad-message short-header %zu", got);
		send_hresult(pc, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	size = msg[14] | (msg[15] << 8);
	if (size < IPC_HDR_LEN) {
		ev_log("bad-message size %d", IPC_HDR_LEN);
		send_hresult(pc, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	r = read_full(pc, msg + IPC_HDR_LEN, size - IPC_HDR_LEN, &got);
	rx_total += got;
	if (r == RD_QUIT)
		goto done;
	if (r != RD_OK) {
		ev_log("bad-message short-payload %zu", IPC_HDR_LEN + got);
		send_hresult(pc, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	if (memcmp(msg, IPC_MAGIC, IPC_MAGIC_LEN) != 0) {
		ev_log("bad-message magic %zu", size);
		send_hresult(pc, ID_ERROR, HR_UNKNOWN_MAGIC);
		goto done;
	}
	if ((cmd = find_command(msg[16], msg[17])) == NULL) {
		ev_log("bad-message unknown-command %zu", size);
		send_hresult(pc, ID_ERROR, HR_UNKNOWN_COMMAND);
		goto done;
	}
	ev_log("command 0x%02X 0x%02X %zu %s", cmd->set, cmd->id, size,
	    cmd->name);
	rq.pc = pc;
	rq.from = from;
	rq.set = cmd->set;
	rq.id = cmd->id;
	rq.payload = msg + IPC_HDR_LEN;
	rq.len = size - IPC_HDR_LEN;
	kept = cmd->fn(&rq);
	served++;
done:
	if (!kept)
		pc_close(pc);
	ev_log("rx-bytes %" PRIu64, rx_total);
}

/*
 * Open the connect pipe: dial it (busy instances retried for 100 ms),
 * then send the advertise within 100 ms.  Returns the connection or NULL.
 */
static struct pconn *
connect_port(void)
{
	struct pconn	*pc;
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
	memcpy(advr, ADVR_MAGIC, 8);
	memcpy(advr + 8, cookie, sizeof(cookie));
	put_le64(advr + 24, opt_pid);
	put_le16(advr + 32, 0);
	if (write_full(pc, advr, sizeof(advr), ADVR_TIMEOUT_MS) !=
	    sizeof(advr)) {
		pc_close(pc);
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
	pc_close(parked);
	parked = NULL;
	ev_log("parked-hup");
	ev_log("rx-bytes %" PRIu64, rx_total);
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
	pc_close(parked);
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
		EnterCriticalSection(&sess_mtx);
		sessions_reap();
		LeaveCriticalSection(&sess_mtx);

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
				if (backoff == 0)
					backoff = BACKOFF_MIN_MS;
				else if (backoff * 5 / 4 > BACKOFF_MAX_MS)
					backoff = BACKOFF_MAX_MS;
				else
					backoff = backoff * 5 / 4;
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
				struct pconn	*pc = parked;

				parked = NULL;
				serve(pc, PORT_CONNECT, &parked_byte, 1);
			} else {
				parked_hup();
				hup_delay = 1;
			}
		} else if (il != -1 && (int)r == il) {
			if ((h = queue_pop()) != NULL) {
				ev_log("accept");
				serve(pc_new(h), PORT_LISTEN, NULL, 0);
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

static int
hexval(char c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* Parse --cookie: exactly 32 hex characters. */
static void
parse_cookie(const char *s)
{
	int	i, hi, lo;

	if (strlen(s) != 32)
		fatal("--cookie: need 32 hex characters");
	for (i = 0; i < 16; i++) {
		hi = hexval(s[2 * i]);
		lo = hexval(s[2 * i + 1]);
		if (hi == -1 || lo == -1)
			fatal("--cookie: bad hex \"%s\"", s);
		cookie[i] = (hi << 4) | lo;
	}
}

static void
random_cookie(void)
{
	HCRYPTPROV	prov;

	if (!CryptAcquireContextW(&prov, NULL, NULL, PROV_RSA_AES,
	    CRYPT_VERIFYCONTEXT) ||
	    !CryptGenRandom(prov, sizeof(cookie), cookie))
		fatal("CryptGenRandom: error %lu", GetLastError());
	CryptReleaseContext(prov, 0);
}

/* Build the command line reported by ProcessInfo: fakert's. */
static void
build_cmdline(int argc, char *argv[])
{
	int	i;

	strcpy(cmdline, "fakert");
	for (i = 1; i < argc; i++) {
		if (strlen(cmdline) + 1 + strlen(argv[i]) >= sizeof(cmdline))
			break;
		strcat(cmdline, " ");
		strcat(cmdline, argv[i]);
	}
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
	    "usage: winfakert [--listen PIPE] [--connect PIPE] [--suspend] "
	    "[--pid N]\n"
	    "                 [--cookie HEX32] [--stream-bytes N] "
	    "[--stream-chunk N]\n"
	    "                 [--events FILE] [--exit-after N] [--name NAME] "
	    "[--info-pid N]\n"
	    "PIPE is a pipe name or \\\\.\\pipe\\NAME\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "suspend", no_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cookie", required_argument, NULL, 'k' },
		{ "stream-bytes", required_argument, NULL, 'b' },
		{ "stream-chunk", required_argument, NULL, 'C' },
		{ "events", required_argument, NULL, 'e' },
		{ "exit-after", required_argument, NULL, 'x' },
		{ "name", required_argument, NULL, 'n' },
		{ "info-pid", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 }
	};
	HANDLE		 server, hs[3];
	const char	*events = NULL;
	DWORD		 r;
	int		 ch, have_cookie = 0, i;

	_setmode(_fileno(stdout), _O_BINARY);
	_setmode(_fileno(stderr), _O_BINARY);
	opt_pid = (uint64_t)GetCurrentProcessId();
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (have_listen)
				fatal("--listen given twice");
			parse_pipe("--listen", optarg, &listen_name);
			have_listen = 1;
			break;
		case 'c':
			if (have_connect)
				fatal("--connect given twice");
			parse_pipe("--connect", optarg, &connect_name);
			have_connect = 1;
			break;
		case 's':
			opt_suspend = 1;
			break;
		case 'p':
			opt_pid = parse_number("--pid", optarg, 0, UINT64_MAX);
			break;
		case 'k':
			parse_cookie(optarg);
			have_cookie = 1;
			break;
		case 'b':
			opt_stream_bytes = parse_number("--stream-bytes",
			    optarg, 0, UINT64_MAX);
			break;
		case 'C':
			opt_stream_chunk = parse_number("--stream-chunk",
			    optarg, 1, 16 * 1024 * 1024);
			break;
		case 'e':
			events = optarg;
			break;
		case 'x':
			opt_exit_after = parse_number("--exit-after", optarg,
			    1, UINT64_MAX);
			break;
		case 'n':
			opt_name = optarg;
			break;
		case 'i':
			opt_info_pid = parse_number("--info-pid", optarg, 1,
			    UINT64_MAX);
			break;
		default:
			usage();
		}
	}
	if (optind != argc || (!have_listen && !have_connect))
		usage();
	if (opt_suspend && !have_connect)
		fatal("--suspend needs --connect");
	if (!have_cookie)
		random_cookie();
	build_cmdline(argc, argv);
	paused = opt_suspend;

	InitializeCriticalSection(&ev_mtx);
	InitializeCriticalSection(&sess_mtx);
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
			ev_log("resumed");
			fprintf(stderr, "fakert: resumed\n");
			fflush(stderr);
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

	EnterCriticalSection(&sess_mtx);
	for (i = 0; i < MAX_SESSIONS; i++) {
		while (sessions[i].state == SS_RUNNING)
			SleepConditionVariableCS(&sess_cv, &sess_mtx,
			    INFINITE);
	}
	sessions_reap();
	LeaveCriticalSection(&sess_mtx);

	ev_log("exit");
	if (evf != NULL)
		fclose(evf);
	return (0);
}
