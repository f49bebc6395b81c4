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
 */

#include <windows.h>

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
#define IPC_MAX_PAYLOAD		(IPC_MAX_MSG - IPC_HDR_LEN)

#define SET_EVENTPIPE		0x02
#define SET_PROCESS		0x04
#define SET_SERVER		0xFF
#define ID_OK			0x00
#define ID_ERROR		0xFF

#define MAX_ENV_BYTES		(16 * 1024 * 1024)
#define MAX_RAW_REPLY		(1024 * 1024)
#define STRING_MAX		(3 * IPC_MAX_PAYLOAD + 1)
#define PIPE_NAME_MAX		256
#define BUSY_SLEEP_MS		10
#define SILENT_POLL_MS		10

#define EXIT_ERROR		1
#define EXIT_EOF		2
#define EXIT_TIMEOUT		3
#define EXIT_USAGE		64

/* Not a Windows error: raw's --reset, faketool's ECONNRESET. */
#define ERR_RESET		0x20000000UL

enum io {
	IO_OK,
	IO_EOF,
	IO_ERR,
	IO_TIMEOUT
};

/* One client pipe handle and the event of its one operation at a time. */
struct pconn {
	HANDLE			 h;
	HANDLE			 ev;
	OVERLAPPED		 ov;
};

struct reply {
	uint8_t			 set;
	uint8_t			 id;
	uint16_t		 size;
	uint8_t			 payload[IPC_MAX_PAYLOAD];
	size_t			 len;
};

struct cursor {
	const uint8_t		*p;
	size_t			 left;
	int			 bad;
};

struct stopper {
	HANDLE			 thread;
	uint64_t		 id;
	int			 status;
};

/* Target and global options. */
static wchar_t			 pipe_w[PIPE_NAME_MAX + 16];
static int64_t			 deadline;
static int64_t			 opt_silent_ms;	/* quiet after connecting */

static CRITICAL_SECTION		 out_mtx;
static __thread DWORD		 io_errno;

static void	out(const char *, ...)
		    __attribute__((format(gnu_printf, 1, 2)));
static void	diag(const char *, ...)
		    __attribute__((format(gnu_printf, 1, 2)));

/* Print one result line on stdout, whole and flushed. */
static void
out(const char *fmt, ...)
{
	va_list	ap;

	EnterCriticalSection(&out_mtx);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	LeaveCriticalSection(&out_mtx);
}

/* Print a diagnostic on stderr. */
static void
diag(const char *fmt, ...)
{
	va_list	ap;

	EnterCriticalSection(&out_mtx);
	fprintf(stderr, "faketool: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	LeaveCriticalSection(&out_mtx);
}

static int64_t
now_ms(void)
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

/* Print the line for a failed I/O result and return the exit status. */
static int
io_status(enum io r)
{
	switch (r) {
	case IO_OK:
		return (0);
	case IO_EOF:
		out("eof");
		return (EXIT_EOF);
	case IO_TIMEOUT:
		out("timeout");
		return (EXIT_TIMEOUT);
	default:
		out("%s", err_text(io_errno));
		return (EXIT_EOF);
	}
}

static void
hex_string(char *dst, const uint8_t *src, size_t n)
{
	size_t	i;

	for (i = 0; i < n; i++)
		snprintf(dst + 2 * i, 3, "%02x", src[i]);
	dst[2 * n] = '\0';
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

/* Decode hex (whitespace ignored) into dst; -1 if bad or too long. */
static ssize_t
hex_decode(const char *s, uint8_t *dst, size_t max)
{
	size_t	n = 0;
	int	hi = -1, v;

	for (; *s != '\0'; s++) {
		if (*s == ' ' || *s == '\t' || *s == '\n')
			continue;
		if ((v = hexval(*s)) == -1)
			return (-1);
		if (hi == -1) {
			hi = v;
			continue;
		}
		if (n == max)
			return (-1);
		dst[n++] = (hi << 4) | v;
		hi = -1;
	}
	return (hi == -1 ? (ssize_t)n : -1);
}

/* Parse an unsigned decimal or 0x number; -1 if malformed. */
static int
parse_u64(const char *s, uint64_t *v)
{
	char	*end;

	errno = 0;
	*v = strtoull(s, &end, 0);
	if (errno != 0 || *s == '\0' || *s == '-' || *end != '\0')
		return (-1);
	return (0);
}

/* Milliseconds left until the absolute time until, at least 0. */
static DWORD
ms_until(int64_t until)
{
	int64_t	left = until - now_ms();

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
pc_io(struct pconn *pc, int write, void *buf, DWORD len, DWORD *n,
    int64_t until)
{
	DWORD	r, e;
	BOOL	ok;

	for (;;) {
		*n = 0;
		if (now_ms() >= until)
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
static enum io
read_some(struct pconn *pc, void *buf, size_t len, size_t *got, int64_t until)
{
	DWORD	n;
	enum io	r;

	r = pc_io(pc, 0, buf, len > 1048576 ? 1048576 : (DWORD)len, &n, until);
	*got = n;
	return (r);
}

/* Read exactly len bytes before until. */
static enum io
read_full(struct pconn *pc, void *buf, size_t len, int64_t until)
{
	uint8_t	*p = buf;
	size_t	 done = 0, n;
	enum io	 r;

	while (done < len) {
		if ((r = read_some(pc, p + done, len - done, &n, until)) !=
		    IO_OK)
			return (r);
		done += n;
	}
	return (IO_OK);
}

/* Write exactly len bytes before until. */
static enum io
write_full(struct pconn *pc, const void *buf, size_t len, int64_t until)
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

static void
pc_close(struct pconn *pc)
{
	if (pc == NULL)
		return;
	CloseHandle(pc->h);
	CloseHandle(pc->ev);
	free(pc);
}

/* Sleep ms milliseconds, but never past the deadline. */
static enum io
sleep_ms(int64_t ms)
{
	int64_t	until = now_ms() + ms;

	if (until > deadline)
		until = deadline;
	if (until > now_ms())
		Sleep(ms_until(until));
	return (now_ms() >= deadline ? IO_TIMEOUT : IO_OK);
}

/* Parse ADDR: PIPE[,connect], PIPE a bare name or \\.\pipe\NAME. */
static int
parse_target(const char *arg)
{
	static const char	 prefix[] = "\\\\.\\pipe\\";
	char			 addr[PIPE_NAME_MAX + 32], full[PIPE_NAME_MAX + 16];
	char			*comma;
	const char		*name;

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
	name = addr;
	if (_strnicmp(addr, prefix, sizeof(prefix) - 1) == 0)
		name = addr + sizeof(prefix) - 1;
	else if (strncmp(addr, "\\\\", 2) == 0 || strncmp(addr, "tcp:", 4) ==
	    0 || addr[0] == '/')
		return (-1);
	if (*name == '\0' || strlen(name) > PIPE_NAME_MAX ||
	    strchr(name, '/') != NULL)
		return (-1);
	snprintf(full, sizeof(full), "%s%s", prefix, name);
	if (MultiByteToWideChar(CP_UTF8, 0, full, -1, pipe_w,
	    (int)(sizeof(pipe_w) / sizeof(pipe_w[0]))) == 0)
		return (-1);
	return (0);
}

/*
 * Say nothing on a fresh connection for --silent-ms, as dotnet-dsrouter's
 * client-client mode does with the connection it opens ahead of a tool.
 * The peer closing it (or speaking) meanwhile is an EOF.  PeekNamedPipe,
 * polled, watches without taking any byte.
 */
static enum io
stay_silent(struct pconn *pc)
{
	int64_t	until = now_ms() + opt_silent_ms;
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
		if (now_ms() >= until)
			break;
		Sleep(ms_until(until) < SILENT_POLL_MS ? ms_until(until) :
		    SILENT_POLL_MS);
	}
	return (now_ms() >= deadline ? IO_TIMEOUT : IO_OK);
}

/* Get a connection for one command: a new one to the pipe. */
static enum io
open_conn(struct pconn **pcp)
{
	struct pconn	*pc;
	HANDLE		 h;
	DWORD		 e;
	enum io		 r;

	for (;;) {
		h = CreateFileW(pipe_w, GENERIC_READ | GENERIC_WRITE, 0, NULL,
		    OPEN_EXISTING, FILE_FLAG_OVERLAPPED, NULL);
		if (h != INVALID_HANDLE_VALUE)
			break;
		e = GetLastError();
		if (e != ERROR_PIPE_BUSY) {
			io_errno = e;
			return (IO_ERR);
		}
		/* Every instance is taken: poll, bounded by the timeout. */
		if (now_ms() + BUSY_SLEEP_MS > deadline)
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
		pc_close(pc);
		return (r);
	}
	*pcp = pc;
	return (IO_OK);
}

/* Write one request message on pc. */
static enum io
send_request(struct pconn *pc, uint8_t set, uint8_t id, const void *payload,
    size_t len)
{
	static __thread uint8_t	msg[IPC_MAX_MSG];

	memcpy(msg, IPC_MAGIC, IPC_MAGIC_LEN);
	put_le16(msg + 14, (uint16_t)(IPC_HDR_LEN + len));
	msg[16] = set;
	msg[17] = id;
	put_le16(msg + 18, 0);
	if (len > 0)
		memcpy(msg + IPC_HDR_LEN, payload, len);
	return (write_full(pc, msg, IPC_HDR_LEN + len, deadline));
}

/*
 * Read one reply and check its header strictly.  Returns 0, or the exit
 * status after printing why.
 */
static int
read_reply(struct pconn *pc, struct reply *rp)
{
	uint8_t	hdr[IPC_HDR_LEN];
	enum io	r;

	if ((r = read_full(pc, hdr, sizeof(hdr), deadline)) != IO_OK)
		return (io_status(r));
	rp->size = hdr[14] | (hdr[15] << 8);
	rp->set = hdr[16];
	rp->id = hdr[17];
	if (memcmp(hdr, IPC_MAGIC, IPC_MAGIC_LEN) != 0) {
		diag("reply: bad magic");
		return (EXIT_ERROR);
	}
	if (rp->size < IPC_HDR_LEN) {
		diag("reply: size %u < 20", rp->size);
		return (EXIT_ERROR);
	}
	rp->len = rp->size - IPC_HDR_LEN;
	if ((r = read_full(pc, rp->payload, rp->len, deadline)) != IO_OK)
		return (io_status(r));
	if (rp->set != SET_SERVER) {
		diag("reply: command set 0x%02X, not 0xFF", rp->set);
		return (EXIT_ERROR);
	}
	if (rp->id != ID_OK && rp->id != ID_ERROR) {
		diag("reply: unknown response id 0x%02X", rp->id);
		return (EXIT_ERROR);
	}
	if (rp->id == ID_ERROR && rp->len < 4) {
		diag("reply: error frame without hresult");
		return (EXIT_ERROR);
	}
	return (0);
}

/* Print "error 0xHRESULT" for an error frame and return 1. */
static int
error_frame(const struct reply *rp)
{
	out("error 0x%08" PRIX32, get_le32(rp->payload));
	return (EXIT_ERROR);
}

/*
 * Run a simple command on a new connection: send it, read the reply,
 * close.  Returns 0 with *rp filled (maybe an error frame) or a status.
 */
static int
transact(uint8_t set, uint8_t id, const void *payload, size_t len,
    struct reply *rp)
{
	struct pconn	*pc;
	enum io		 r;
	int		 status;

	if ((r = open_conn(&pc)) != IO_OK)
		return (io_status(r));
	if ((r = send_request(pc, set, id, payload, len)) != IO_OK) {
		pc_close(pc);
		return (io_status(r));
	}
	status = read_reply(pc, rp);
	pc_close(pc);
	return (status);
}

static uint32_t
cur_u32(struct cursor *c)
{
	uint32_t	v;

	if (c->bad || c->left < 4) {
		c->bad = 1;
		return (0);
	}
	v = get_le32(c->p);
	c->p += 4;
	c->left -= 4;
	return (v);
}

static uint64_t
cur_u64(struct cursor *c)
{
	uint64_t	v;

	if (c->bad || c->left < 8) {
		c->bad = 1;
		return (0);
	}
	v = get_le64(c->p);
	c->p += 8;
	c->left -= 8;
	return (v);
}

/* Put one code point into dst as UTF-8. */
static size_t
utf8_put(char *dst, uint32_t cp)
{
	if (cp < 0x80) {
		dst[0] = cp;
		return (1);
	}
	if (cp < 0x800) {
		dst[0] = 0xc0 | (cp >> 6);
		dst[1] = 0x80 | (cp & 0x3f);
		return (2);
	}
	if (cp < 0x10000) {
		dst[0] = 0xe0 | (cp >> 12);
		dst[1] = 0x80 | ((cp >> 6) & 0x3f);
		dst[2] = 0x80 | (cp & 0x3f);
		return (3);
	}
	dst[0] = 0xf0 | (cp >> 18);
	dst[1] = 0x80 | ((cp >> 12) & 0x3f);
	dst[2] = 0x80 | ((cp >> 6) & 0x3f);
	dst[3] = 0x80 | (cp & 0x3f);
	return (4);
}

/*
 * Read a protocol string (u32 count with NUL, UTF-16LE units, last unit
 * 0) into dst as UTF-8.  dst must hold STRING_MAX bytes.
 */
static void
cur_string(struct cursor *c, char *dst)
{
	uint32_t	count, i, u, u2;
	size_t		n = 0;

	dst[0] = '\0';
	count = cur_u32(c);
	if (c->bad || count == 0)
		return;
	if (count > c->left / 2 || c->p[2 * (count - 1)] != 0 ||
	    c->p[2 * (count - 1) + 1] != 0) {
		c->bad = 1;
		return;
	}
	for (i = 0; i + 1 < count; i++) {
		u = c->p[2 * i] | (c->p[2 * i + 1] << 8);
		if (u >= 0xd800 && u < 0xdc00 && i + 2 < count) {
			u2 = c->p[2 * i + 2] | (c->p[2 * i + 3] << 8);
			if (u2 >= 0xdc00 && u2 < 0xe000) {
				u = 0x10000 + ((u - 0xd800) << 10) +
				    (u2 - 0xdc00);
				i++;
			} else
				u = 0xfffd;
		} else if (u >= 0xd800 && u < 0xe000)
			u = 0xfffd;
		n += utf8_put(dst + n, u);
	}
	dst[n] = '\0';
	c->p += 2 * (size_t)count;
	c->left -= 2 * (size_t)count;
}

/* ProcessInfo, ProcessInfo2 or ProcessInfo3 (id 0x00, 0x04, 0x08). */
static int
do_processinfo(uint8_t id, int quiet)
{
	static struct reply	 rp;
	static char		 cmd[STRING_MAX], os[STRING_MAX];
	static char		 arch[STRING_MAX], asmname[STRING_MAX];
	static char		 ver[STRING_MAX], rid[STRING_MAX];
	struct cursor		 c;
	uint64_t		 pid;
	uint32_t		 version = 0;
	char			 cookie[33];
	int			 status;

	if ((status = transact(SET_PROCESS, id, NULL, 0, &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR)
		return (error_frame(&rp));
	c.p = rp.payload;
	c.left = rp.len;
	c.bad = 0;
	if (id == 0x08)
		version = cur_u32(&c);
	pid = cur_u64(&c);
	if (!c.bad && c.left >= 16) {
		hex_string(cookie, c.p, 16);
		c.p += 16;
		c.left -= 16;
	} else
		c.bad = 1;
	cur_string(&c, cmd);
	cur_string(&c, os);
	cur_string(&c, arch);
	if (id != 0x00) {
		cur_string(&c, asmname);
		cur_string(&c, ver);
	}
	if (id == 0x08 && version >= 1)
		cur_string(&c, rid);
	if (c.bad || (c.left != 0 && !(id == 0x08 && version > 1))) {
		diag("ProcessInfo reply: malformed payload");
		return (EXIT_ERROR);
	}
	if (quiet)
		return (0);
	if (id == 0x00)
		out("pid=%" PRIu64 " cookie=%s cmdline=%s os=%s arch=%s", pid,
		    cookie, cmd, os, arch);
	else if (id == 0x04 || version < 1)
		out("pid=%" PRIu64 " cookie=%s cmdline=%s os=%s arch=%s "
		    "entrypoint=%s clrversion=%s", pid, cookie, cmd, os, arch,
		    asmname, ver);
	else
		out("pid=%" PRIu64 " cookie=%s cmdline=%s os=%s arch=%s "
		    "entrypoint=%s clrversion=%s rid=%s", pid, cookie, cmd, os,
		    arch, asmname, ver, rid);
	return (0);
}

/* ResumeRuntime. */
static int
do_resume(int quiet)
{
	static struct reply	rp;
	int			status;

	if ((status = transact(SET_PROCESS, 0x01, NULL, 0, &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR)
		return (error_frame(&rp));
	if (rp.len != 4) {
		diag("ResumeRuntime reply: payload %zu bytes, not 4", rp.len);
		return (EXIT_ERROR);
	}
	if (!quiet)
		out("ok");
	return (0);
}

/* ProcessEnvironment: reply, then the continuation read to EOF. */
static int
do_env(void)
{
	static struct reply	 rp;
	static char		 str[STRING_MAX];
	struct cursor		 c;
	struct pconn		*pc;
	uint8_t			*cont;
	uint32_t		 expect, count, i;
	size_t			 have = 0, n;
	enum io			 r;
	int			 status;

	if ((r = open_conn(&pc)) != IO_OK)
		return (io_status(r));
	if ((r = send_request(pc, SET_PROCESS, 0x02, NULL, 0)) != IO_OK) {
		pc_close(pc);
		return (io_status(r));
	}
	if ((status = read_reply(pc, &rp)) != 0) {
		pc_close(pc);
		return (status);
	}
	if (rp.id == ID_ERROR) {
		pc_close(pc);
		return (error_frame(&rp));
	}
	if (rp.len != 6) {
		pc_close(pc);
		diag("ProcessEnvironment reply: payload %zu, not 6", rp.len);
		return (EXIT_ERROR);
	}
	expect = get_le32(rp.payload);
	if (expect > MAX_ENV_BYTES) {
		pc_close(pc);
		diag("ProcessEnvironment: %" PRIu32 " bytes is too many",
		    expect);
		return (EXIT_ERROR);
	}
	if ((cont = malloc((size_t)expect + 1)) == NULL) {
		pc_close(pc);
		diag("out of memory");
		return (EXIT_ERROR);
	}
	/* Read to EOF, as the managed client does, then check the length. */
	for (;;) {
		r = read_some(pc, cont + have, expect + 1 - have, &n,
		    deadline);
		if (r != IO_OK)
			break;
		have += n;
		if (have > expect)
			break;
	}
	pc_close(pc);
	if (r != IO_OK && r != IO_EOF) {
		free(cont);
		return (io_status(r));
	}
	if (have != expect) {
		free(cont);
		if (have < expect)
			return (io_status(IO_EOF));
		diag("ProcessEnvironment: more than %" PRIu32 " bytes",
		    expect);
		return (EXIT_ERROR);
	}
	c.p = cont;
	c.left = have;
	c.bad = 0;
	count = cur_u32(&c);
	for (i = 0; i < count && !c.bad; i++)
		cur_string(&c, str);
	free(cont);
	if (c.bad || c.left != 0) {
		diag("ProcessEnvironment: malformed block");
		return (EXIT_ERROR);
	}
	out("env count=%" PRIu32, count);
	return (0);
}

/* StopTracing for id on a new connection. */
static int
do_stop(uint64_t id, int quiet)
{
	static __thread struct reply	rp;
	uint8_t				p[8];
	int				status;

	put_le64(p, id);
	if ((status = transact(SET_EVENTPIPE, 0x01, p, sizeof(p), &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR)
		return (error_frame(&rp));
	if (rp.len != 8 || get_le64(rp.payload) != id) {
		diag("StopTracing reply: does not echo session id");
		return (EXIT_ERROR);
	}
	if (!quiet)
		out("ok");
	return (0);
}

static DWORD WINAPI
stopper_main(LPVOID arg)
{
	struct stopper	*st = arg;

	st->status = do_stop(st->id, 1);
	return (0);
}

/* Append a protocol string to a payload under construction. */
static size_t
put_string(uint8_t *p, const char *s)
{
	size_t	i, n = strlen(s);

	put_le32(p, (uint32_t)(n + 1));
	for (i = 0; i <= n; i++)
		put_le16(p + 4 + 2 * i, (unsigned char)s[i]);
	return (4 + 2 * (n + 1));
}

/* Build the CollectTracing2 payload dotnet-trace would send. */
static size_t
collect2_payload(uint8_t *p)
{
	size_t	n = 0;

	put_le32(p + n, 64);		/* circularBufferMB */
	n += 4;
	put_le32(p + n, 1);		/* format: NetTrace */
	n += 4;
	p[n++] = 1;			/* requestRundown */
	put_le32(p + n, 1);		/* one provider */
	n += 4;
	put_le64(p + n, 0x1);		/* keywords */
	n += 8;
	put_le32(p + n, 4);		/* level: Informational */
	n += 4;
	n += put_string(p + n, "Microsoft-Windows-DotNETRuntime");
	put_le32(p + n, 0);		/* no arguments */
	n += 4;
	return (n);
}

/* CollectTracing2, then read the stream to EOF with the given options. */
static int
do_collect(int argc, char *argv[])
{
	static struct reply	 rp;
	static uint8_t		 buf[65536];
	struct stopper		 st;
	struct sha256		 md;
	struct pconn		*pc;
	uint8_t			 payload[256], digest[SHA256_LEN];
	char			 hex[2 * SHA256_LEN + 1];
	uint64_t		 stop_after = 0, rate = 0, hangup = 0;
	uint64_t		 expect = 0, total = 0, pause = 0, id, v;
	int64_t			 start, due;
	size_t			 want, n;
	int			 have_expect = 0, stopping = 0, i;
	int			 status;
	enum io			 r = IO_OK;

	for (i = 0; i < argc; i += 2) {
		if (i + 1 >= argc || parse_u64(argv[i + 1], &v) == -1) {
			diag("collect: %s needs a number", argv[i]);
			return (EXIT_USAGE);
		}
		if (strcmp(argv[i], "--stop-after-bytes") == 0)
			stop_after = v;
		else if (strcmp(argv[i], "--rate") == 0 && v > 0)
			rate = v;
		else if (strcmp(argv[i], "--hangup-after-bytes") == 0)
			hangup = v;
		else if (strcmp(argv[i], "--pause-after-bytes") == 0)
			pause = v;
		else if (strcmp(argv[i], "--expect-bytes") == 0) {
			expect = v;
			have_expect = 1;
		} else {
			diag("collect: unknown option %s", argv[i]);
			return (EXIT_USAGE);
		}
	}

	if ((r = open_conn(&pc)) != IO_OK)
		return (io_status(r));
	if ((r = send_request(pc, SET_EVENTPIPE, 0x03, payload,
	    collect2_payload(payload))) != IO_OK) {
		pc_close(pc);
		return (io_status(r));
	}
	if ((status = read_reply(pc, &rp)) != 0) {
		pc_close(pc);
		return (status);
	}
	if (rp.id == ID_ERROR) {
		pc_close(pc);
		return (error_frame(&rp));
	}
	if (rp.len != 8) {
		pc_close(pc);
		diag("CollectTracing2 reply: payload %zu, not 8", rp.len);
		return (EXIT_ERROR);
	}
	id = get_le64(rp.payload);

	if (sha256_init(&md) == -1) {
		pc_close(pc);
		diag("SHA-256 setup failed");
		return (EXIT_ERROR);
	}
	start = now_ms();
	for (;;) {
		if (hangup != 0 && total >= hangup)
			break;
		/* A stalled reader: take nothing more until the deadline. */
		if (pause != 0 && total >= pause) {
			r = sleep_ms(deadline - now_ms());
			break;
		}
		want = sizeof(buf);
		if (rate != 0 && rate / 20 < want)
			want = rate / 20 > 0 ? rate / 20 : 1;
		if (hangup != 0 && hangup - total < want)
			want = hangup - total;
		if (pause != 0 && pause - total < want)
			want = pause - total;
		if ((r = read_some(pc, buf, want, &n, deadline)) != IO_OK)
			break;
		sha256_update(&md, buf, n);
		total += n;
		if (stop_after != 0 && !stopping && total >= stop_after) {
			st.id = id;
			st.status = 0;
			if ((st.thread = CreateThread(NULL, 0, stopper_main,
			    &st, 0, NULL)) == NULL) {
				diag("CreateThread failed");
				r = IO_ERR;
				io_errno = GetLastError();
				break;
			}
			stopping = 1;
		}
		if (rate != 0) {
			due = start + (int64_t)(total * 1000 / rate);
			if (due > now_ms() && (r = sleep_ms(due - now_ms())) !=
			    IO_OK)
				break;
		}
	}
	/* Closing here on --hangup-after-bytes is the tool dying. */
	pc_close(pc);
	if (stopping) {
		WaitForSingleObject(st.thread, INFINITE);
		CloseHandle(st.thread);
	}
	if (sha256_final(&md, digest) == -1) {
		diag("SHA-256 failed");
		return (EXIT_ERROR);
	}
	hex_string(hex, digest, SHA256_LEN);
	out("session=%" PRIu64 " bytes=%" PRIu64 " sha256=%s", id, total,
	    hex);
	if (r != IO_OK && r != IO_EOF)
		return (io_status(r));
	if (stopping && st.status != 0)
		return (st.status);
	if (have_expect && total != expect) {
		diag("collect: expected %" PRIu64 " stream bytes, got %"
		    PRIu64, expect, total);
		return (EXIT_ERROR);
	}
	return (0);
}

/*
 * Read whatever arrives on pc until EOF, an error or until, keeping the
 * first MAX_RAW_REPLY bytes in reply and counting the rest in *total.
 */
static enum io
raw_read(struct pconn *pc, uint8_t *reply, size_t *have, uint64_t *total,
    int64_t until)
{
	static uint8_t	scratch[65536];
	size_t		got;
	enum io		r;

	for (;;) {
		if (*have < MAX_RAW_REPLY)
			r = read_some(pc, reply + *have, MAX_RAW_REPLY - *have,
			    &got, until);
		else
			r = read_some(pc, scratch, sizeof(scratch), &got,
			    until);
		if (r != IO_OK)
			return (r);
		if (*have < MAX_RAW_REPLY)
			*have += got;
		*total += got;
	}
}

/* Send raw bytes, optionally held or reset; show replies. */
static int
do_raw(int argc, char *argv[])
{
	static uint8_t	 data[IPC_MAX_MSG * 4];
	static char	 hex[2 * 4096 + 1];
	struct pconn	*pc;
	uint8_t		*reply;
	uint64_t	 chunk = 0, delay = 0, hold = 0, total = 0, v;
	int64_t		 until;
	ssize_t		 len;
	size_t		 off, n, have = 0;
	int		 reset = 0, eof = 0, i;
	enum io		 r = IO_OK;

	if (argc < 1 || (len = hex_decode(argv[0], data, sizeof(data))) ==
	    -1) {
		diag("raw: need HEX bytes");
		return (EXIT_USAGE);
	}
	i = 1;
	while (i < argc) {
		if (strcmp(argv[i], "--shut-wr") == 0) {
			diag("raw: --shut-wr: a pipe has no half-close");
			return (EXIT_USAGE);
		}
		if (strcmp(argv[i], "--reset") == 0) {
			reset = 1;
			i++;
			continue;
		}
		if (i + 1 >= argc || parse_u64(argv[i + 1], &v) == -1) {
			diag("raw: %s needs a number", argv[i]);
			return (EXIT_USAGE);
		}
		if (strcmp(argv[i], "--chunk") == 0 && v > 0)
			chunk = v;
		else if (strcmp(argv[i], "--own-pid-at") == 0 &&
		    v + 8 <= (uint64_t)len)
			put_le64(data + v, (uint64_t)GetCurrentProcessId());
		else if (strcmp(argv[i], "--delay-ms") == 0)
			delay = v;
		else if (strcmp(argv[i], "--hold-ms") == 0)
			hold = v;
		else {
			diag("raw: unknown option %s", argv[i]);
			return (EXIT_USAGE);
		}
		i += 2;
	}
	if (chunk == 0)
		chunk = len > 0 ? (uint64_t)len : 1;
	if ((reply = malloc(MAX_RAW_REPLY)) == NULL) {
		diag("out of memory");
		return (EXIT_ERROR);
	}
	if ((r = open_conn(&pc)) != IO_OK) {
		free(reply);
		return (io_status(r));
	}

	/* Send, chunk by chunk; a failed write just ends the sending. */
	for (off = 0; off < (size_t)len; off += n) {
		n = (size_t)len - off < chunk ? (size_t)len - off : chunk;
		if ((r = write_full(pc, data + off, n, deadline)) != IO_OK)
			break;
		if (off + n < (size_t)len && delay > 0 &&
		    (r = sleep_ms(delay)) != IO_OK)
			break;
	}
	if (r == IO_ERR) {
		diag("raw: write: %s", err_text(io_errno));
		r = IO_OK;
	}

	/* Hold the connection open, collecting whatever arrives. */
	if (r == IO_OK && hold > 0) {
		until = now_ms() + (int64_t)hold;
		if (until > deadline)
			until = deadline;
		r = raw_read(pc, reply, &have, &total, until);
		if (r == IO_EOF) {
			eof = 1;
			r = IO_OK;
		}
		if (r == IO_TIMEOUT && until < deadline)
			r = IO_OK;
		if (r == IO_OK && eof)
			r = sleep_ms(until - now_ms());
	}

	if (r == IO_OK && reset) {
		/* A pipe has no RST: the abrupt close is all there is. */
		r = IO_ERR;
		io_errno = ERR_RESET;
	} else if (r == IO_OK && eof)
		r = IO_EOF;
	else if (r == IO_OK)
		r = raw_read(pc, reply, &have, &total, deadline);
	pc_close(pc);

	if (have == 0)
		out("reply none");
	else {
		if (total > 4096) {
			diag("raw: reply is %" PRIu64 " bytes; showing 4096",
			    total);
			have = 4096;
		}
		hex_string(hex, reply, have);
		out("reply %s", hex);
	}
	free(reply);
	switch (r) {
	case IO_EOF:
		out("eof");
		return (0);
	case IO_TIMEOUT:
		out("timeout");
		return (EXIT_TIMEOUT);
	default:
		if (io_errno == ERR_RESET) {
			out("reset");
			return (0);
		}
		out("%s", err_text(io_errno));
		return (EXIT_EOF);
	}
}

/* Send an arbitrary well-formed command and describe the reply. */
static int
do_command(int argc, char *argv[])
{
	static struct reply	rp;
	static uint8_t		payload[IPC_MAX_PAYLOAD];
	uint64_t		set, id;
	ssize_t			len = 0;
	int			status;

	if (argc < 2 || argc > 3 || parse_u64(argv[0], &set) == -1 ||
	    set > 0xff || parse_u64(argv[1], &id) == -1 || id > 0xff ||
	    (argc == 3 && (len = hex_decode(argv[2], payload,
	    sizeof(payload))) == -1)) {
		diag("command: need SET ID [HEXPAYLOAD]");
		return (EXIT_USAGE);
	}
	if ((status = transact(set, id, payload, len, &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR) {
		out("reply set=0x%02X id=0x%02X size=%u hresult=0x%08" PRIX32,
		    rp.set, rp.id, rp.size, get_le32(rp.payload));
		return (error_frame(&rp));
	}
	out("reply set=0x%02X id=0x%02X size=%u payload=%zu", rp.set, rp.id,
	    rp.size, rp.len);
	return (0);
}

/* Run processinfo or resume N times, each on a fresh connection. */
static int
do_repeat(int argc, char *argv[])
{
	uint64_t	count, i;
	int		status = 0;

	if (argc != 2 || parse_u64(argv[0], &count) == -1 ||
	    (strcmp(argv[1], "processinfo") != 0 &&
	    strcmp(argv[1], "resume") != 0)) {
		diag("repeat: need N processinfo|resume");
		return (EXIT_USAGE);
	}
	for (i = 0; i < count; i++) {
		if (strcmp(argv[1], "processinfo") == 0)
			status = do_processinfo(0x00, 1);
		else
			status = do_resume(1);
		if (status != 0) {
			diag("repeat: iteration %" PRIu64 " failed", i + 1);
			return (status);
		}
	}
	out("ok %" PRIu64, count);
	return (0);
}

static void __attribute__((noreturn))
usage(void)
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
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "shut-wr", no_argument, NULL, 's' },
		{ "silent-ms", required_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*cmd;
	char		*end;
	double		 timeout = 30.0;
	uint64_t	 id;
	int		 ch, status, cargc;
	char		**cargv;

	_setmode(_fileno(stdout), _O_BINARY);	/* LF, not CRLF */
	_setmode(_fileno(stderr), _O_BINARY);
	InitializeCriticalSection(&out_mtx);
	while ((ch = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			timeout = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || timeout <= 0 ||
			    timeout > 86400)
				usage();
			break;
		case 's':
			diag("--shut-wr: a pipe has no half-close");
			usage();
			break;
		case 'q':
			opt_silent_ms = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' ||
			    opt_silent_ms < 0)
				usage();
			break;
		default:
			usage();
		}
	}
	if (argc - optind < 2)
		usage();
	if (parse_target(argv[optind]) == -1) {
		diag("bad ADDR \"%s\"", argv[optind]);
		usage();
	}
	cmd = argv[optind + 1];
	cargc = argc - optind - 2;
	cargv = argv + optind + 2;
	deadline = now_ms() + (int64_t)(timeout * 1000);

	if (strcmp(cmd, "processinfo") == 0 && cargc == 0)
		status = do_processinfo(0x00, 0);
	else if (strcmp(cmd, "processinfo2") == 0 && cargc == 0)
		status = do_processinfo(0x04, 0);
	else if (strcmp(cmd, "processinfo3") == 0 && cargc == 0)
		status = do_processinfo(0x08, 0);
	else if (strcmp(cmd, "resume") == 0 && cargc == 0)
		status = do_resume(0);
	else if (strcmp(cmd, "env") == 0 && cargc == 0)
		status = do_env();
	else if (strcmp(cmd, "collect") == 0)
		status = do_collect(cargc, cargv);
	else if (strcmp(cmd, "stop") == 0 && cargc == 1 &&
	    parse_u64(cargv[0], &id) == 0)
		status = do_stop(id, 0);
	else if (strcmp(cmd, "repeat") == 0)
		status = do_repeat(cargc, cargv);
	else if (strcmp(cmd, "raw") == 0)
		status = do_raw(cargc, cargv);
	else if (strcmp(cmd, "command") == 0)
		status = do_command(cargc, cargv);
	else {
		diag("unknown command or arguments: %s", cmd);
		status = EXIT_USAGE;
	}
	return (status);
}
