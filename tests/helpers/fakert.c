/* SPDX-License-Identifier: ISC */

/*
 * fakert: a fake .NET runtime diagnostic server for the dsroute tests.
 *
 * It is an independent implementation of the diagnostic IPC protocol as
 * the runtime serves it: one server thread serving commands strictly one
 * at a time over an optional listen port and an optional connect
 * ("reverse") port, plus one streaming thread per EventPipe session.
 * Every observable step is appended to an events file, which the tests
 * use as their sentinel.  It shares no code with the router on purpose.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
#define LISTEN_BACKLOG		255
#define CMDLINE_MAX		4096
#define SUN_PATH_MAX		sizeof(((struct sockaddr_un *)0)->sun_path)

#define RD_OK			0
#define RD_EOF			1
#define RD_QUIT			2

enum port {
	PORT_LISTEN,
	PORT_CONNECT
};

enum sstate {
	SS_FREE,
	SS_RUNNING,
	SS_DONE
};

struct addr {
	int			 tcp;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	const char		*text;
};

struct session {
	enum sstate		 state;
	int			 stop;
	int			 fd;
	uint64_t		 id;
	pthread_t		 thread;
};

struct buf {
	uint8_t			 data[IPC_MAX_MSG - IPC_HDR_LEN];
	size_t			 len;
	int			 overflow;
};

struct request {
	int			 fd;
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

/* Configuration, fixed after option parsing. */
static struct addr	 listen_addr;
static struct addr	 connect_addr;
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
static int		 quit_pipe[2] = { -1, -1 };
static int		 ctl_pipe[2] = { -1, -1 };
static atomic_int	 quitting;
static int		 listen_fd = -1;
static char		 listen_path[SUN_PATH_MAX];

/* Server thread state; touched by the server thread only. */
static int		 parked_fd = -1;
static int		 paused;
static uint64_t		 rx_total;
static uint64_t		 served;
static uint64_t		 next_session = 1;

/* EventPipe sessions. */
static struct session	 sessions[MAX_SESSIONS];
static pthread_mutex_t	 sess_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t	 sess_cv = PTHREAD_COND_INITIALIZER;

/* Events file. */
static FILE		*evf;
static pthread_mutex_t	 ev_mtx = PTHREAD_MUTEX_INITIALIZER;

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
	"PATH=/usr/local/bin:/usr/bin:/bin",
	"HOME=/nonexistent",
};

static void	ev_log(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
static void	fatal(const char *, ...)
		    __attribute__((format(printf, 1, 2), noreturn));

/* Print a message with the errno text and exit 1. */
static void
fatal(const char *fmt, ...)
{
	va_list	ap;
	int	saved = errno;

	fprintf(stderr, "fakert: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (saved != 0)
		fprintf(stderr, ": %s", strerror(saved));
	fprintf(stderr, "\n");
	exit(1);
}

/* Append one line to the events file, flushed, never interleaved. */
static void
ev_log(const char *fmt, ...)
{
	va_list	ap;

	if (evf == NULL)
		return;
	pthread_mutex_lock(&ev_mtx);
	va_start(ap, fmt);
	vfprintf(evf, fmt, ap);
	va_end(ap);
	fputc('\n', evf);
	fflush(evf);
	pthread_mutex_unlock(&ev_mtx);
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
	    v < min || v > max) {
		errno = 0;
		fatal("%s: bad number \"%s\"", opt, s);
	}
	return (v);
}

/* Parse ADDR: a filesystem path, or tcp:HOST:PORT with HOST v4 or [v6]. */
static void
parse_addr(const char *opt, const char *s, struct addr *a)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&a->ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&a->ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&a->ss;
	char			 host[64];
	const char		*h, *port, *end;
	size_t			 hlen;
	uint64_t		 pnum;

	memset(a, 0, sizeof(*a));
	a->text = s;
	errno = 0;
	if (strncmp(s, "tcp:", 4) != 0) {
		if (*s == '\0' || strlen(s) >= sizeof(sun->sun_path))
			fatal("%s: bad or too long socket path \"%s\"", opt, s);
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, s);
		a->sslen = sizeof(*sun);
		return;
	}
	a->tcp = 1;
	h = s + 4;
	if (*h == '[') {
		end = strchr(h, ']');
		if (end == NULL || end[1] != ':')
			fatal("%s: bad address \"%s\"", opt, s);
		h++;
		hlen = end - h;
		port = end + 2;
	} else {
		end = strrchr(h, ':');
		if (end == NULL)
			fatal("%s: bad address \"%s\"", opt, s);
		hlen = end - h;
		port = end + 1;
	}
	if (hlen == 0 || hlen >= sizeof(host))
		fatal("%s: bad host in \"%s\"", opt, s);
	memcpy(host, h, hlen);
	host[hlen] = '\0';
	pnum = parse_number(opt, port, 0, 65535);
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)pnum);
		a->sslen = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)pnum);
		a->sslen = sizeof(*sin6);
	} else
		fatal("%s: bad host \"%s\" (numeric IPv4 or [IPv6])", opt,
		    host);
}

static void
set_nonblock(int fd)
{
	int	flags;

	flags = fcntl(fd, F_GETFL);
	if (flags == -1 || fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		fatal("fcntl");
}

static void
set_nodelay(int fd)
{
	int	one = 1;

	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

/*
 * Wait until fd is ready for events, or until shutdown.  Returns 1 when
 * ready, 0 on timeout and -1 on shutdown.
 */
static int
wait_fd(int fd, short events, int timeout)
{
	struct pollfd	pfd[2];
	int		n;

	pfd[0].fd = fd;
	pfd[0].events = events;
	pfd[1].fd = quit_pipe[0];
	pfd[1].events = POLLIN;
	for (;;) {
		pfd[0].revents = pfd[1].revents = 0;
		n = poll(pfd, 2, timeout);
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 || pfd[1].revents != 0)
			return (-1);
		return (n == 0 ? 0 : 1);
	}
}

/* Read exactly len bytes with no timeout, like the runtime does. */
static int
read_full(int fd, void *buf, size_t len, size_t *got)
{
	uint8_t	*p = buf;
	ssize_t	 n;

	*got = 0;
	while (*got < len) {
		n = read(fd, p + *got, len - *got);
		if (n > 0) {
			*got += n;
			continue;
		}
		if (n == 0)
			return (RD_EOF);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return (RD_EOF);
		if (wait_fd(fd, POLLIN, -1) == -1)
			return (RD_QUIT);
	}
	return (RD_OK);
}

/*
 * Write len bytes, waiting at most timeout ms each time the socket is
 * full (-1: forever).  Returns the number of bytes written.
 */
static size_t
write_full(int fd, const void *buf, size_t len, int timeout)
{
	const uint8_t	*p = buf;
	size_t		 done = 0;
	ssize_t		 n;

	while (done < len) {
		n = send(fd, p + done, len - done, MSG_NOSIGNAL);
		if (n > 0) {
			done += n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
			break;
		if (wait_fd(fd, POLLOUT, timeout) != 1)
			break;
	}
	return (done);
}

/* Send one response message with the server command set. */
static void
send_msg(int fd, uint8_t id, const void *payload, size_t len)
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
	(void)write_full(fd, msg, IPC_HDR_LEN + len, -1);
}

static void
send_hresult(int fd, uint8_t id, uint32_t hr)
{
	uint8_t	p[4];

	put_le32(p, hr);
	send_msg(fd, id, p, sizeof(p));
}

static void
send_u64(int fd, uint64_t v)
{
	uint8_t	p[8];

	put_le64(p, v);
	send_msg(fd, ID_OK, p, sizeof(p));
}

/* Reply OK with i32 0 and do nothing else. */
static int
cmd_ok(struct request *rq)
{
	send_hresult(rq->fd, ID_OK, 0);
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
	buf_string(&b, "Linux");
	buf_string(&b, "x64");
	if (rq->id == 0x04 || rq->id == 0x08) {
		buf_string(&b, opt_name);
		buf_string(&b, "0.0.0-fake");
	}
	if (rq->id == 0x08)
		buf_string(&b, "linux-x64");
	if (b.overflow)
		send_hresult(rq->fd, ID_ERROR, HR_E_FAIL);
	else
		send_msg(rq->fd, ID_OK, b.data, b.len);
	return (0);
}

/* Resume startup if the suspended connect port delivered the command. */
static int
cmd_resume(struct request *rq)
{
	send_hresult(rq->fd, ID_OK, 0);
	if (paused && rq->from == PORT_CONNECT) {
		paused = 0;
		if (write(ctl_pipe[1], "R", 1) != 1)
			fatal("write");
	}
	return (0);
}

/* Accept StartupProfiler only while startup is paused. */
static int
cmd_startup_profiler(struct request *rq)
{
	if (paused)
		send_hresult(rq->fd, ID_OK, 0);
	else
		send_hresult(rq->fd, ID_ERROR, HR_INVALIDARG);
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
	send_msg(rq->fd, ID_OK, head.data, head.len);
	(void)write_full(rq->fd, cont.data, cont.len, -1);
	return (0);
}

/*
 * Produce the stream bytes at offsets off..off+n-1: "Nettrace", then the
 * little-endian words of a xorshift64 sequence.  The bytes depend only
 * on the session id and the offset, not on the chunk size.
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
static void *
stream_main(void *arg)
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
		pthread_mutex_lock(&sess_mtx);
		stop = s->stop;
		pthread_mutex_unlock(&sess_mtx);
		if (stop || atomic_load(&quitting))
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
		w = write_full(s->fd, chunk, n, -1);
		sha256_update(&md, chunk, w);
		total += w;
		if (w < n) {
			if (!atomic_load(&quitting))
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
	close(s->fd);

	pthread_mutex_lock(&sess_mtx);
	s->fd = -1;
	s->state = SS_DONE;
	pthread_cond_broadcast(&sess_cv);
	pthread_mutex_unlock(&sess_mtx);
	return (NULL);
}

/* Join sessions whose streaming thread has finished; call locked. */
static void
sessions_reap(void)
{
	int	i;

	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state != SS_DONE)
			continue;
		pthread_join(sessions[i].thread, NULL);
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
		send_hresult(rq->fd, ID_ERROR, HR_BAD_ENCODING);
		return (0);
	}
	pthread_mutex_lock(&sess_mtx);
	sessions_reap();
	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state == SS_FREE) {
			s = &sessions[i];
			break;
		}
	}
	if (s == NULL) {
		pthread_mutex_unlock(&sess_mtx);
		send_hresult(rq->fd, ID_ERROR, HR_E_FAIL);
		return (0);
	}
	s->state = SS_RUNNING;
	s->stop = 0;
	s->fd = rq->fd;
	s->id = 0x00007f3a00000000ULL + 0x40 * next_session++;
	send_u64(rq->fd, s->id);
	ev_log("stream-start %" PRIu64, s->id);
	if (pthread_create(&s->thread, NULL, stream_main, s) != 0) {
		s->state = SS_FREE;
		s->fd = -1;
		pthread_mutex_unlock(&sess_mtx);
		return (0);
	}
	pthread_mutex_unlock(&sess_mtx);
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
		send_hresult(rq->fd, ID_ERROR, HR_BAD_ENCODING);
		return (0);
	}
	id = get_le64(rq->payload);
	pthread_mutex_lock(&sess_mtx);
	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state == SS_RUNNING && sessions[i].id == id) {
			s = &sessions[i];
			break;
		}
	}
	if (s == NULL) {
		pthread_mutex_unlock(&sess_mtx);
		send_hresult(rq->fd, ID_ERROR, HR_INVALIDARG);
		return (0);
	}
	s->stop = 1;
	while (s->state != SS_DONE)
		pthread_cond_wait(&sess_cv, &sess_mtx);
	pthread_join(s->thread, NULL);
	s->state = SS_FREE;
	pthread_mutex_unlock(&sess_mtx);
	send_u64(rq->fd, id);
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
 * Serve exactly one message on fd, as the runtime server loop does, and
 * close the connection unless a streaming session took it.
 */
static void
serve(int fd, enum port from)
{
	static uint8_t		 msg[IPC_MAX_MSG];
	const struct command	*cmd;
	struct request		 rq;
	size_t			 got, size;
	int			 r, kept = 0;

	r = read_full(fd, msg, IPC_HDR_LEN, &got);
	rx_total += got;
	if (r == RD_QUIT)
		goto done;
	if (r != RD_OK) {
		ev_log("bad-message short-header %zu", got);
		send_hresult(fd, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	size = msg[14] | (msg[15] << 8);
	if (size < IPC_HDR_LEN) {
		ev_log("bad-message size %d", IPC_HDR_LEN);
		send_hresult(fd, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	r = read_full(fd, msg + IPC_HDR_LEN, size - IPC_HDR_LEN, &got);
	rx_total += got;
	if (r == RD_QUIT)
		goto done;
	if (r != RD_OK) {
		ev_log("bad-message short-payload %zu", IPC_HDR_LEN + got);
		send_hresult(fd, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	if (memcmp(msg, IPC_MAGIC, IPC_MAGIC_LEN) != 0) {
		ev_log("bad-message magic %zu", size);
		send_hresult(fd, ID_ERROR, HR_UNKNOWN_MAGIC);
		goto done;
	}
	if ((cmd = find_command(msg[16], msg[17])) == NULL) {
		ev_log("bad-message unknown-command %zu", size);
		send_hresult(fd, ID_ERROR, HR_UNKNOWN_COMMAND);
		goto done;
	}
	ev_log("command 0x%02X 0x%02X %zu %s", cmd->set, cmd->id, size,
	    cmd->name);
	rq.fd = fd;
	rq.from = from;
	rq.set = cmd->set;
	rq.id = cmd->id;
	rq.payload = msg + IPC_HDR_LEN;
	rq.len = size - IPC_HDR_LEN;
	kept = cmd->fn(&rq);
	served++;
done:
	if (!kept)
		close(fd);
	ev_log("rx-bytes %" PRIu64, rx_total);
}

/*
 * Open the connect port: connect (TCP with a 100 ms timeout), then send
 * the advertise within 100 ms.  Returns the parked fd or -1.
 */
static int
connect_port(void)
{
	uint8_t		advr[ADVR_LEN];
	socklen_t	elen = sizeof(int);
	int		fd, err = 0, family = connect_addr.ss.ss_family;

	if ((fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (connect_addr.tcp) {
		set_nonblock(fd);
		if (connect(fd, (struct sockaddr *)&connect_addr.ss,
		    connect_addr.sslen) == -1) {
			if (errno != EINPROGRESS ||
			    wait_fd(fd, POLLOUT, CONNECT_TIMEOUT_MS) != 1 ||
			    getsockopt(fd, SOL_SOCKET, SO_ERROR, &err,
			    &elen) == -1 || err != 0)
				goto fail;
		}
		set_nodelay(fd);
	} else {
		if (connect(fd, (struct sockaddr *)&connect_addr.ss,
		    connect_addr.sslen) == -1)
			goto fail;
		set_nonblock(fd);
	}
	memcpy(advr, ADVR_MAGIC, 8);
	memcpy(advr + 8, cookie, sizeof(cookie));
	put_le64(advr + 24, opt_pid);
	put_le16(advr + 32, 0);
	if (write_full(fd, advr, sizeof(advr), ADVR_TIMEOUT_MS) !=
	    sizeof(advr))
		goto fail;
	ev_log("advertise");
	return (fd);
fail:
	close(fd);
	return (-1);
}

/* Drop the parked connection after its peer hung up. */
static void
parked_hup(void)
{
	close(parked_fd);
	parked_fd = -1;
	ev_log("parked-hup");
	ev_log("rx-bytes %" PRIu64, rx_total);
}

/*
 * Classify a signalled parked connection: 1 if it carries data to serve,
 * 0 if the peer hung up (POLLHUP/POLLERR, or EOF such as a TCP FIN), -1
 * if nothing is there after all.
 */
static int
parked_has_data(short revents)
{
	uint8_t	c;
	ssize_t	n;

	/*
	 * Hang-up wins over pending data, as in the runtime's poll: a
	 * request followed by a full close before we look is dropped.
	 */
	if (revents & (POLLHUP | POLLERR | POLLNVAL))
		return (0);
	n = recv(parked_fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
	if (n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK ||
	    errno == EINTR))
		return (-1);
	return (n == 1);
}

/* Accept one connection on the listen port and serve it. */
static void
accept_and_serve(void)
{
	int	fd;

	fd = accept(listen_fd, NULL, NULL);
	if (fd == -1)
		return;
	if (fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		fatal("fcntl");
	set_nonblock(fd);
	if (listen_addr.tcp)
		set_nodelay(fd);
	ev_log("accept");
	serve(fd, PORT_LISTEN);
}

/*
 * Run the diagnostic server loop: keep zero or one parked connection on
 * the connect port, poll it with the listen port, serve one at a time.
 */
static void *
server_main(void *arg)
{
	struct pollfd	pfd[3];
	int		backoff = 0, hup_delay = 0, timeout, n, r;
	int		ip, il, fd;

	(void)arg;
	while (!atomic_load(&quitting)) {
		pthread_mutex_lock(&sess_mtx);
		sessions_reap();
		pthread_mutex_unlock(&sess_mtx);

		timeout = -1;
		if (have_connect && parked_fd == -1) {
			if (hup_delay) {
				hup_delay = 0;
				timeout = BACKOFF_MIN_MS;
			} else if ((parked_fd = connect_port()) != -1)
				backoff = 0;
			else {
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
		pfd[n].fd = quit_pipe[0];
		pfd[n++].events = POLLIN;
		ip = il = -1;
		if (parked_fd != -1) {
			ip = n;
			pfd[n].fd = parked_fd;
			pfd[n++].events = POLLIN;
		}
		if (listen_fd != -1) {
			il = n;
			pfd[n].fd = listen_fd;
			pfd[n++].events = POLLIN;
		}
		if (poll(pfd, n, timeout) == -1) {
			if (errno == EINTR)
				continue;
			fatal("poll");
		}
		if (pfd[0].revents != 0)
			break;

		if (ip != -1 && pfd[ip].revents != 0) {
			r = parked_has_data(pfd[ip].revents);
			if (r == 1) {
				fd = parked_fd;
				parked_fd = -1;
				serve(fd, PORT_CONNECT);
			} else if (r == 0) {
				parked_hup();
				hup_delay = 1;
			}
		} else if (il != -1 && pfd[il].revents != 0)
			accept_and_serve();

		if (opt_exit_after != 0 && served >= opt_exit_after)
			break;
	}
	if (parked_fd != -1) {
		close(parked_fd);
		parked_fd = -1;
	}
	if (write(ctl_pipe[1], "D", 1) != 1)
		fatal("write");
	return (NULL);
}

/* Create the listen socket: 0600 before bind, as the runtime does. */
static void
setup_listen(void)
{
	struct sockaddr_storage	 ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&ss;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&ss;
	socklen_t		 sslen = sizeof(ss);
	char			 host[INET6_ADDRSTRLEN];
	int			 one = 1;

	listen_fd = socket(listen_addr.ss.ss_family,
	    SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (listen_fd == -1)
		fatal("socket");
	if (listen_addr.tcp) {
		if (setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &one,
		    sizeof(one)) == -1)
			fatal("setsockopt");
	} else if (fchmod(listen_fd, 0600) == -1)
		fatal("fchmod");
	if (bind(listen_fd, (struct sockaddr *)&listen_addr.ss,
	    listen_addr.sslen) == -1)
		fatal("bind %s", listen_addr.text);
	if (!listen_addr.tcp)
		strcpy(listen_path, listen_addr.text);
	if (listen(listen_fd, LISTEN_BACKLOG) == -1)
		fatal("listen");
	set_nonblock(listen_fd);

	if (!listen_addr.tcp) {
		ev_log("listen %s", listen_path);
		return;
	}
	if (getsockname(listen_fd, (struct sockaddr *)&ss, &sslen) == -1)
		fatal("getsockname");
	if (ss.ss_family == AF_INET) {
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		ev_log("listen tcp:%s:%u", host, ntohs(sin->sin_port));
	} else {
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		ev_log("listen tcp:[%s]:%u", host, ntohs(sin6->sin6_port));
	}
}

/* Tell the main thread to shut down; async-signal-safe. */
static void
on_signal(int sig)
{
	ssize_t	n;
	int	saved = errno;

	(void)sig;
	n = write(ctl_pipe[1], "S", 1);
	(void)n;
	errno = saved;
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

	errno = 0;
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
	int	fd;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1)
		fatal("/dev/urandom");
	if (read(fd, cookie, sizeof(cookie)) != sizeof(cookie))
		fatal("/dev/urandom");
	close(fd);
}

/* Build the command line reported by ProcessInfo. */
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
	    "usage: fakert [--listen ADDR] [--connect ADDR] [--suspend] "
	    "[--pid N]\n"
	    "              [--cookie HEX32] [--stream-bytes N] "
	    "[--stream-chunk N]\n"
	    "              [--events FILE] [--exit-after N] [--name NAME] "
	    "[--info-pid N]\n"
	    "ADDR is a socket path or tcp:HOST:PORT (IPv4 or [IPv6])\n");
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
	struct sigaction	 sa;
	sigset_t		 set, oset;
	pthread_t		 server;
	const char		*events = NULL;
	int			 ch, have_cookie = 0, fd, i;
	char			 c;

	opt_pid = (uint64_t)getpid();
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (have_listen)
				fatal("--listen given twice");
			parse_addr("--listen", optarg, &listen_addr);
			have_listen = 1;
			break;
		case 'c':
			if (have_connect)
				fatal("--connect given twice");
			parse_addr("--connect", optarg, &connect_addr);
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
	errno = 0;
	if (opt_suspend && !have_connect)
		fatal("--suspend needs --connect");
	if (!have_cookie)
		random_cookie();
	build_cmdline(argc, argv);
	paused = opt_suspend;

	signal(SIGPIPE, SIG_IGN);
	if (pipe(quit_pipe) == -1 || pipe(ctl_pipe) == -1)
		fatal("pipe");
	for (i = 0; i < 2; i++) {
		(void)fcntl(quit_pipe[i], F_SETFD, FD_CLOEXEC);
		(void)fcntl(ctl_pipe[i], F_SETFD, FD_CLOEXEC);
	}
	if (events != NULL) {
		fd = open(events, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC,
		    0644);
		if (fd == -1 || (evf = fdopen(fd, "a")) == NULL)
			fatal("%s", events);
	}
	if (have_listen)
		setup_listen();

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	/* Only the main thread takes the signals. */
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &set, &oset);
	if (pthread_create(&server, NULL, server_main, NULL) != 0)
		fatal("pthread_create");
	pthread_sigmask(SIG_SETMASK, &oset, NULL);

	/*
	 * The main thread plays the runtime's startup: with --suspend it
	 * waits for ResumeRuntime; in any case it then waits for a signal
	 * or for the server to finish after --exit-after commands.
	 */
	for (;;) {
		if (read(ctl_pipe[0], &c, 1) != 1) {
			if (errno == EINTR)
				continue;
			fatal("read");
		}
		if (c == 'R') {
			ev_log("resumed");
			fprintf(stderr, "fakert: resumed\n");
			continue;
		}
		break;
	}

	atomic_store(&quitting, 1);
	if (write(quit_pipe[1], "Q", 1) != 1)
		fatal("write");
	pthread_join(server, NULL);

	pthread_mutex_lock(&sess_mtx);
	for (i = 0; i < MAX_SESSIONS; i++) {
		while (sessions[i].state == SS_RUNNING)
			pthread_cond_wait(&sess_cv, &sess_mtx);
	}
	sessions_reap();
	pthread_mutex_unlock(&sess_mtx);

	if (listen_fd != -1) {
		close(listen_fd);
		if (listen_path[0] != '\0')
			unlink(listen_path);
	}
	ev_log("exit");
	if (evf != NULL)
		fclose(evf);
	for (i = 0; i < 2; i++) {
		close(quit_pipe[i]);
		close(ctl_pipe[i]);
	}
	return (0);
}
