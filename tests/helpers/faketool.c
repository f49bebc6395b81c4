/* SPDX-License-Identifier: ISC */

/*
 * faketool: a fake diagnostic tool (what dotnet-trace and friends do on
 * the wire) for the dsroute tests, plus raw modes that send bad input.
 *
 * In connect role every command opens a new connection and expects no
 * advertise.  In listen role it listens on a Unix socket or a TCP port, waits for
 * runtimes to advertise, parks one connection per runtime cookie and
 * issues each command on a parked connection.  It is an independent
 * implementation of the protocol and shares no code with the router.
 *
 * Exit status: 0 success, 1 IPC error frame or failed check, 2 EOF or
 * I/O error before a complete reply, 3 timeout, 64 usage.
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
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "le.h"
#include "sha256.h"

#define IPC_MAGIC		"DOTNET_IPC_V1"	/* 13 chars + NUL = 14 */
#define IPC_MAGIC_LEN		14
#define IPC_HDR_LEN		20
#define IPC_MAX_MSG		65535
#define IPC_MAX_PAYLOAD		(IPC_MAX_MSG - IPC_HDR_LEN)
#define ADVR_MAGIC		"ADVR_V1"	/* 7 chars + NUL = 8 */
#define ADVR_LEN		34
#define ADVR_TIMEOUT_MS		250

#define SET_EVENTPIPE		0x02
#define SET_PROCESS		0x04
#define SET_SERVER		0xFF
#define ID_OK			0x00
#define ID_ERROR		0xFF

#define MAX_RUNTIMES		64
#define MAX_ENV_BYTES		(16 * 1024 * 1024)
#define MAX_RAW_REPLY		(1024 * 1024)
#define STRING_MAX		(3 * IPC_MAX_PAYLOAD + 1)
#define SUN_PATH_MAX		sizeof(((struct sockaddr_un *)0)->sun_path)

#define EXIT_ERROR		1
#define EXIT_EOF		2
#define EXIT_TIMEOUT		3
#define EXIT_USAGE		64

enum io {
	IO_OK,
	IO_EOF,
	IO_ERR,
	IO_TIMEOUT
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

struct runtime {
	uint8_t			 cookie[16];
	uint64_t		 pid;
	int			 fd;
};

struct stopper {
	pthread_t		 thread;
	uint64_t		 id;
	int			 status;
};

/* Target and global options. */
static int			 role_listen;
static int			 target_tcp;
static struct sockaddr_storage	 target;
static socklen_t		 target_len;
static char			 listen_path[SUN_PATH_MAX];
static int64_t			 deadline;
static int			 opt_shut_wr;
static int64_t			 opt_silent_ms;	/* quiet after connecting */

/* Listen role: the acceptor thread parks one connection per cookie. */
static int			 listen_fd = -1;
static int			 quit_pipe[2] = { -1, -1 };
static pthread_t		 acceptor;
static struct runtime		 runtimes[MAX_RUNTIMES];
static int			 nruntimes;
static pthread_mutex_t		 park_mtx = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t		 park_cv;

static pthread_mutex_t		 out_mtx = PTHREAD_MUTEX_INITIALIZER;
static __thread int		 io_errno;

/* raw: SIGUSR1 ends a --hold-ms early. */
static volatile sig_atomic_t	 hold_cut;

static void	out(const char *, ...)
		    __attribute__((format(printf, 1, 2)));
static void	diag(const char *, ...)
		    __attribute__((format(printf, 1, 2)));

/* Print one result line on stdout, whole and flushed. */
static void
out(const char *fmt, ...)
{
	va_list	ap;

	pthread_mutex_lock(&out_mtx);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	pthread_mutex_unlock(&out_mtx);
}

/* Print a diagnostic on stderr. */
static void
diag(const char *fmt, ...)
{
	va_list	ap;

	pthread_mutex_lock(&out_mtx);
	fprintf(stderr, "faketool: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	pthread_mutex_unlock(&out_mtx);
}

static int64_t
now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
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
		out("%s", strerror(io_errno));
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

/*
 * Wait until fd is ready for events or the absolute time until passes.
 */
static enum io
wait_io(int fd, short events, int64_t until)
{
	struct pollfd	pfd;
	int64_t		left;
	int		n;

	for (;;) {
		left = until - now_ms();
		if (left <= 0 || (hold_cut && (events & POLLIN)))
			return (IO_TIMEOUT);
		pfd.fd = fd;
		pfd.events = events;
		pfd.revents = 0;
		/* A tenth of a second at most: SIGUSR1 may hit another thread. */
		n = poll(&pfd, 1, left > 100 ? 100 : (int)left);
		if (n == -1) {
			if (errno == EINTR)
				continue;
			io_errno = errno;
			return (IO_ERR);
		}
		if (n == 1)
			return (IO_OK);
	}
}

/* Read up to len bytes (at least one) before until. */
static enum io
read_some(int fd, void *buf, size_t len, size_t *got, int64_t until)
{
	ssize_t	n;
	enum io	r;

	*got = 0;
	for (;;) {
		n = read(fd, buf, len);
		if (n > 0) {
			*got = n;
			return (IO_OK);
		}
		if (n == 0)
			return (IO_EOF);
		if (errno == EINTR)
			continue;
		if (errno != EAGAIN && errno != EWOULDBLOCK) {
			io_errno = errno;
			return (IO_ERR);
		}
		if ((r = wait_io(fd, POLLIN, until)) != IO_OK)
			return (r);
	}
}

/* Read exactly len bytes before until. */
static enum io
read_full(int fd, void *buf, size_t len, int64_t until)
{
	uint8_t	*p = buf;
	size_t	 done = 0, n;
	enum io	 r;

	while (done < len) {
		if ((r = read_some(fd, p + done, len - done, &n, until)) !=
		    IO_OK)
			return (r);
		done += n;
	}
	return (IO_OK);
}

/* Write exactly len bytes before until. */
static enum io
write_full(int fd, const void *buf, size_t len, int64_t until)
{
	const uint8_t	*p = buf;
	size_t		 done = 0;
	ssize_t		 n;
	enum io		 r;

	while (done < len) {
		n = send(fd, p + done, len - done, MSG_NOSIGNAL);
		if (n > 0) {
			done += n;
			continue;
		}
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1 && errno != EAGAIN && errno != EWOULDBLOCK) {
			io_errno = errno;
			return (IO_ERR);
		}
		if ((r = wait_io(fd, POLLOUT, until)) != IO_OK)
			return (r);
	}
	return (IO_OK);
}

static void
set_nonblock(int fd)
{
	int	flags;

	flags = fcntl(fd, F_GETFL);
	if (flags != -1)
		(void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

/* Sleep ms milliseconds, but never past the deadline. */
static enum io
sleep_ms(int64_t ms)
{
	struct timespec	ts;
	int64_t		until = now_ms() + ms, left;

	for (;;) {
		left = until - now_ms();
		if (now_ms() >= deadline)
			return (IO_TIMEOUT);
		if (left <= 0 || hold_cut)
			return (IO_OK);
		if (left > deadline - now_ms())
			left = deadline - now_ms();
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		nanosleep(&ts, NULL);
	}
}

/* Parse ADDR: PATH[,connect|,listen] or tcp:HOST:PORT[,connect|,listen]. */
static int
parse_target(const char *arg)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&target;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&target;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&target;
	char			 addr[PATH_MAX], host[64];
	char			*comma, *h, *end, *port;
	uint64_t		 pnum;

	if (strlen(arg) >= sizeof(addr))
		return (-1);
	strcpy(addr, arg);
	if ((comma = strrchr(addr, ',')) != NULL) {
		if (strcasecmp(comma + 1, "listen") == 0)
			role_listen = 1;
		else if (strcasecmp(comma + 1, "connect") != 0)
			return (-1);
		*comma = '\0';
	}
	memset(&target, 0, sizeof(target));
	if (strncmp(addr, "tcp:", 4) != 0) {
		if (addr[0] == '\0' || strlen(addr) >= sizeof(sun->sun_path))
			return (-1);
		sun->sun_family = AF_UNIX;
		strcpy(sun->sun_path, addr);
		strcpy(listen_path, addr);
		target_len = sizeof(*sun);
		return (0);
	}
	target_tcp = 1;
	h = addr + 4;
	if (*h == '[') {
		if ((end = strchr(h, ']')) == NULL || end[1] != ':')
			return (-1);
		h++;
		port = end + 2;
	} else {
		if ((end = strrchr(h, ':')) == NULL)
			return (-1);
		port = end + 1;
	}
	if (end == h || (size_t)(end - h) >= sizeof(host))
		return (-1);
	memcpy(host, h, end - h);
	host[end - h] = '\0';
	if (parse_u64(port, &pnum) == -1 || (pnum == 0 && !role_listen) ||
	    pnum > 65535)
		return (-1);
	if (inet_pton(AF_INET, host, &sin->sin_addr) == 1) {
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)pnum);
		target_len = sizeof(*sin);
	} else if (inet_pton(AF_INET6, host, &sin6->sin6_addr) == 1) {
		sin6->sin6_family = AF_INET6;
		sin6->sin6_port = htons((uint16_t)pnum);
		target_len = sizeof(*sin6);
	} else
		return (-1);
	return (0);
}

/* Accept runtimes, check their advertise and park one per cookie. */
static void *
acceptor_main(void *arg)
{
	struct pollfd	 pfd[2];
	struct runtime	*rt;
	uint8_t		 advr[ADVR_LEN];
	char		 hex[33];
	int		 fd, i;

	(void)arg;
	for (;;) {
		pfd[0].fd = listen_fd;
		pfd[0].events = POLLIN;
		pfd[1].fd = quit_pipe[0];
		pfd[1].events = POLLIN;
		pfd[0].revents = pfd[1].revents = 0;
		if (poll(pfd, 2, -1) == -1) {
			if (errno == EINTR)
				continue;
			break;
		}
		if (pfd[1].revents != 0)
			break;
		if ((fd = accept(listen_fd, NULL, NULL)) == -1)
			continue;
		(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
		set_nonblock(fd);
		if (read_full(fd, advr, sizeof(advr), now_ms() +
		    ADVR_TIMEOUT_MS) != IO_OK) {
			diag("no advertise within %d ms; closed",
			    ADVR_TIMEOUT_MS);
			close(fd);
			continue;
		}
		if (memcmp(advr, ADVR_MAGIC, 8) != 0) {
			diag("bad advertise magic; closed");
			close(fd);
			continue;
		}

		pthread_mutex_lock(&park_mtx);
		rt = NULL;
		for (i = 0; i < nruntimes; i++) {
			if (memcmp(runtimes[i].cookie, advr + 8, 16) == 0) {
				rt = &runtimes[i];
				break;
			}
		}
		if (rt == NULL && nruntimes < MAX_RUNTIMES) {
			rt = &runtimes[nruntimes++];
			memcpy(rt->cookie, advr + 8, 16);
			rt->fd = -1;
			hex_string(hex, rt->cookie, 16);
			out("advertise pid=%" PRIu64 " cookie=%s",
			    get_le64(advr + 24), hex);
		}
		if (rt == NULL) {
			close(fd);
		} else {
			/* A newer connection replaces the parked one. */
			if (rt->fd != -1)
				close(rt->fd);
			rt->fd = fd;
			rt->pid = get_le64(advr + 24);
			pthread_cond_broadcast(&park_cv);
		}
		pthread_mutex_unlock(&park_mtx);
	}
	return (NULL);
}

/* Take the parked connection of the first runtime that advertised. */
static enum io
take_parked(int *fdp)
{
	struct timespec	ts;
	int		rc = 0;

	ts.tv_sec = deadline / 1000;
	ts.tv_nsec = (deadline % 1000) * 1000000;
	pthread_mutex_lock(&park_mtx);
	while (nruntimes == 0 || runtimes[0].fd == -1) {
		rc = pthread_cond_timedwait(&park_cv, &park_mtx, &ts);
		if (rc == ETIMEDOUT)
			break;
	}
	if (nruntimes > 0 && runtimes[0].fd != -1) {
		*fdp = runtimes[0].fd;
		runtimes[0].fd = -1;
		rc = 0;
	}
	pthread_mutex_unlock(&park_mtx);
	return (rc == 0 ? IO_OK : IO_TIMEOUT);
}

/*
 * Say nothing on a fresh connection for --silent-ms, as dotnet-dsrouter's
 * client-client mode does with the connection it opens ahead of a tool.
 * The peer closing it meanwhile is an EOF.
 */
static enum io
stay_silent(int fd)
{
	enum io	r;

	r = wait_io(fd, POLLIN, now_ms() + opt_silent_ms);
	if (r == IO_TIMEOUT)
		return (now_ms() >= deadline ? IO_TIMEOUT : IO_OK);
	if (r == IO_OK) {
		diag("closed (or spoken to) while silent");
		return (IO_EOF);
	}
	return (r);
}

/* Get a connection for one command: parked, or freshly connected. */
static enum io
open_conn(int *fdp)
{
	socklen_t	elen = sizeof(int);
	int		fd, err = 0;
	enum io		r;

	if (role_listen)
		return (take_parked(fdp));
	if ((fd = socket(target.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) == -1) {
		io_errno = errno;
		return (IO_ERR);
	}
	if (target_tcp) {
		set_nonblock(fd);
		if (connect(fd, (struct sockaddr *)&target, target_len) ==
		    -1) {
			if (errno != EINPROGRESS) {
				io_errno = errno;
				close(fd);
				return (IO_ERR);
			}
			if ((r = wait_io(fd, POLLOUT, deadline)) != IO_OK) {
				close(fd);
				return (r);
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err,
			    &elen) == -1 || err != 0) {
				io_errno = err != 0 ? err : errno;
				close(fd);
				return (IO_ERR);
			}
		}
	} else {
		if (connect(fd, (struct sockaddr *)&target, target_len) ==
		    -1) {
			io_errno = errno;
			close(fd);
			return (IO_ERR);
		}
		set_nonblock(fd);
	}
	if (opt_silent_ms > 0 && (r = stay_silent(fd)) != IO_OK) {
		close(fd);
		return (r);
	}
	*fdp = fd;
	return (IO_OK);
}

/* Write one request message on fd. */
static enum io
send_request(int fd, uint8_t set, uint8_t id, const void *payload,
    size_t len)
{
	static uint8_t	msg[IPC_MAX_MSG];
	enum io		r;

	memcpy(msg, IPC_MAGIC, IPC_MAGIC_LEN);
	put_le16(msg + 14, (uint16_t)(IPC_HDR_LEN + len));
	msg[16] = set;
	msg[17] = id;
	put_le16(msg + 18, 0);
	if (len > 0)
		memcpy(msg + IPC_HDR_LEN, payload, len);
	r = write_full(fd, msg, IPC_HDR_LEN + len, deadline);
	if (r == IO_OK && opt_shut_wr)
		(void)shutdown(fd, SHUT_WR);
	return (r);
}

/*
 * Read one reply and check its header strictly.  Returns 0, or the exit
 * status after printing why.
 */
static int
read_reply(int fd, struct reply *rp)
{
	uint8_t	hdr[IPC_HDR_LEN];
	enum io	r;

	if ((r = read_full(fd, hdr, sizeof(hdr), deadline)) != IO_OK)
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
	if ((r = read_full(fd, rp->payload, rp->len, deadline)) != IO_OK)
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
	enum io	r;
	int	fd, status;

	if ((r = open_conn(&fd)) != IO_OK)
		return (io_status(r));
	if ((r = send_request(fd, set, id, payload, len)) != IO_OK) {
		close(fd);
		return (io_status(r));
	}
	status = read_reply(fd, rp);
	close(fd);
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
	uint8_t			*cont;
	uint32_t		 expect, count, i;
	size_t			 have = 0, n;
	enum io			 r;
	int			 fd, status;

	if ((r = open_conn(&fd)) != IO_OK)
		return (io_status(r));
	if ((r = send_request(fd, SET_PROCESS, 0x02, NULL, 0)) != IO_OK) {
		close(fd);
		return (io_status(r));
	}
	if ((status = read_reply(fd, &rp)) != 0) {
		close(fd);
		return (status);
	}
	if (rp.id == ID_ERROR) {
		close(fd);
		return (error_frame(&rp));
	}
	if (rp.len != 6) {
		close(fd);
		diag("ProcessEnvironment reply: payload %zu, not 6", rp.len);
		return (EXIT_ERROR);
	}
	expect = get_le32(rp.payload);
	if (expect > MAX_ENV_BYTES) {
		close(fd);
		diag("ProcessEnvironment: %" PRIu32 " bytes is too many",
		    expect);
		return (EXIT_ERROR);
	}
	if ((cont = malloc((size_t)expect + 1)) == NULL) {
		close(fd);
		diag("out of memory");
		return (EXIT_ERROR);
	}
	/* Read to EOF, as the managed client does, then check the length. */
	for (;;) {
		r = read_some(fd, cont + have, expect + 1 - have, &n,
		    deadline);
		if (r != IO_OK)
			break;
		have += n;
		if (have > expect)
			break;
	}
	close(fd);
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

/* StopTracing for id on a new (or the next parked) connection. */
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

static void *
stopper_main(void *arg)
{
	struct stopper	*st = arg;

	st->status = do_stop(st->id, 1);
	return (NULL);
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
	uint8_t			 payload[256], digest[SHA256_LEN];
	char			 hex[2 * SHA256_LEN + 1];
	uint64_t		 stop_after = 0, rate = 0, hangup = 0;
	uint64_t		 expect = 0, total = 0, pause = 0, id, v;
	int64_t			 start, due;
	size_t			 want, n;
	int			 have_expect = 0, stopping = 0, fd, i;
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

	if ((r = open_conn(&fd)) != IO_OK)
		return (io_status(r));
	if ((r = send_request(fd, SET_EVENTPIPE, 0x03, payload,
	    collect2_payload(payload))) != IO_OK) {
		close(fd);
		return (io_status(r));
	}
	if ((status = read_reply(fd, &rp)) != 0) {
		close(fd);
		return (status);
	}
	if (rp.id == ID_ERROR) {
		close(fd);
		return (error_frame(&rp));
	}
	if (rp.len != 8) {
		close(fd);
		diag("CollectTracing2 reply: payload %zu, not 8", rp.len);
		return (EXIT_ERROR);
	}
	id = get_le64(rp.payload);

	if (sha256_init(&md) == -1) {
		close(fd);
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
		if ((r = read_some(fd, buf, want, &n, deadline)) != IO_OK)
			break;
		sha256_update(&md, buf, n);
		total += n;
		if (stop_after != 0 && !stopping && total >= stop_after) {
			st.id = id;
			st.status = 0;
			if (pthread_create(&st.thread, NULL, stopper_main,
			    &st) != 0) {
				diag("pthread_create failed");
				r = IO_ERR;
				io_errno = EAGAIN;
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
	close(fd);
	if (stopping)
		pthread_join(st.thread, NULL);
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
 * Read whatever arrives on fd until EOF, an error or until, keeping the
 * first MAX_RAW_REPLY bytes in reply and counting the rest in *total.
 */
static enum io
raw_read(int fd, uint8_t *reply, size_t *have, uint64_t *total,
    int64_t until)
{
	static uint8_t	scratch[65536];
	size_t		got;
	enum io		r;

	for (;;) {
		if (*have < MAX_RAW_REPLY)
			r = read_some(fd, reply + *have, MAX_RAW_REPLY - *have,
			    &got, until);
		else
			r = read_some(fd, scratch, sizeof(scratch), &got,
			    until);
		if (r != IO_OK)
			return (r);
		if (*have < MAX_RAW_REPLY)
			*have += got;
		*total += got;
	}
}

static void
on_usr1(int sig)
{
	hold_cut = 1;
}

/*
 * Send raw bytes, optionally held (until SIGUSR1, at most), half-closed
 * or reset; show replies.
 */
static int
do_raw(int argc, char *argv[])
{
	static uint8_t	 data[IPC_MAX_MSG * 4];
	static char	 hex[2 * 4096 + 1];
	struct sigaction sa;
	struct linger	 lg;
	uint8_t		*reply;
	uint64_t	 chunk = 0, delay = 0, hold = 0, total = 0, v;
	int64_t		 until;
	ssize_t		 len;
	size_t		 off, n, have = 0;
	int		 shut = 0, reset = 0, eof = 0, fd, i;
	enum io		 r = IO_OK;

	if (argc < 1 || (len = hex_decode(argv[0], data, sizeof(data))) ==
	    -1) {
		diag("raw: need HEX bytes");
		return (EXIT_USAGE);
	}
	i = 1;
	while (i < argc) {
		if (strcmp(argv[i], "--shut-wr") == 0) {
			shut = 1;
			i++;
			continue;
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
			put_le64(data + v, (uint64_t)getpid());
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
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: poll returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	if ((reply = malloc(MAX_RAW_REPLY)) == NULL) {
		diag("out of memory");
		return (EXIT_ERROR);
	}
	if ((r = open_conn(&fd)) != IO_OK) {
		free(reply);
		return (io_status(r));
	}

	/* Send, chunk by chunk; a failed write just ends the sending. */
	for (off = 0; off < (size_t)len; off += n) {
		n = (size_t)len - off < chunk ? (size_t)len - off : chunk;
		if ((r = write_full(fd, data + off, n, deadline)) != IO_OK)
			break;
		if (off + n < (size_t)len && delay > 0 &&
		    (r = sleep_ms(delay)) != IO_OK)
			break;
	}
	if (r == IO_ERR) {
		diag("raw: write: %s", strerror(io_errno));
		r = IO_OK;
	}
	if (r == IO_OK && (shut || opt_shut_wr))
		(void)shutdown(fd, SHUT_WR);

	/* Hold the connection open, collecting whatever arrives. */
	if (r == IO_OK && hold > 0) {
		until = now_ms() + (int64_t)hold;
		if (until > deadline)
			until = deadline;
		r = raw_read(fd, reply, &have, &total, until);
		if (r == IO_EOF) {
			eof = 1;
			r = IO_OK;
		}
		if (r == IO_TIMEOUT && (until < deadline || hold_cut))
			r = IO_OK;
		if (r == IO_OK && eof)
			r = sleep_ms(until - now_ms());
	}

	if (r == IO_OK && reset) {
		lg.l_onoff = 1;
		lg.l_linger = 0;
		(void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
		r = IO_ERR;
		io_errno = ECONNRESET;
	} else if (r == IO_OK && eof)
		r = IO_EOF;
	else if (r == IO_OK)
		r = raw_read(fd, reply, &have, &total, deadline);
	close(fd);

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
		if (io_errno == ECONNRESET) {
			out("reset");
			return (0);
		}
		out("%s", strerror(io_errno));
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

/* Remove the listen socket on a fatal signal; async-signal-safe. */
static void
on_signal(int sig)
{
	if (listen_path[0] != '\0')
		unlink(listen_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/*
 * Listen role: bind the Unix socket (0600), or the TCP address (printing
 * "listening tcp:HOST:PORT" with the bound port), and start the acceptor.
 */
static int
start_listen(void)
{
	struct sigaction	sa;
	struct stat		sb;
	pthread_condattr_t	ca;
	struct sockaddr_storage	bound;
	socklen_t		blen = sizeof(bound);
	char			host[INET6_ADDRSTRLEN];
	int			on = 1;

	if (target_tcp) {
		if ((listen_fd = socket(target.ss_family,
		    SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
		    setsockopt(listen_fd, SOL_SOCKET, SO_REUSEADDR, &on,
		    sizeof(on)) == -1 ||
		    bind(listen_fd, (struct sockaddr *)&target, target_len) ==
		    -1 || getsockname(listen_fd, (struct sockaddr *)&bound,
		    &blen) == -1) {
			diag("listen: %s", strerror(errno));
			return (-1);
		}
		if (bound.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&bound)->
			    sin_addr, host, sizeof(host));
			out("listening tcp:%s:%u", host, ntohs(
			    ((struct sockaddr_in *)&bound)->sin_port));
		} else {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&bound)->
			    sin6_addr, host, sizeof(host));
			out("listening tcp:[%s]:%u", host, ntohs(
			    ((struct sockaddr_in6 *)&bound)->sin6_port));
		}
	} else {
		if (stat(listen_path, &sb) == 0 && S_ISSOCK(sb.st_mode))
			unlink(listen_path);
		if ((listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC,
		    0)) == -1 || fchmod(listen_fd, 0600) == -1 ||
		    bind(listen_fd, (struct sockaddr *)&target, target_len) ==
		    -1) {
			diag("listen %s: %s", listen_path, strerror(errno));
			listen_path[0] = '\0';
			return (-1);
		}
	}
	if (listen(listen_fd, 255) == -1 || pipe(quit_pipe) == -1) {
		diag("listen %s: %s", listen_path, strerror(errno));
		return (-1);
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	pthread_condattr_init(&ca);
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	pthread_cond_init(&park_cv, &ca);
	pthread_condattr_destroy(&ca);
	if (pthread_create(&acceptor, NULL, acceptor_main, NULL) != 0) {
		diag("pthread_create failed");
		return (-1);
	}
	return (0);
}

/* Listen role: stop the acceptor, close parked connections, unlink. */
static void
stop_listen(void)
{
	int	i;

	if (write(quit_pipe[1], "Q", 1) == 1)
		pthread_join(acceptor, NULL);
	for (i = 0; i < nruntimes; i++) {
		if (runtimes[i].fd != -1)
			close(runtimes[i].fd);
	}
	close(listen_fd);
	close(quit_pipe[0]);
	close(quit_pipe[1]);
	pthread_cond_destroy(&park_cv);
	if (listen_path[0] != '\0')
		unlink(listen_path);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
	    "usage: faketool [--timeout SEC] [--shut-wr] [--silent-ms MS] "
	    "ADDR COMMAND [args]\n"
	    "ADDR: PATH[,connect|,listen] | tcp:HOST:PORT[,connect|,listen]\n"
	    "commands:\n"
	    "  processinfo | processinfo2 | processinfo3 | resume | env\n"
	    "  collect [--stop-after-bytes N] [--rate BPS] "
	    "[--hangup-after-bytes N]\n"
	    "          [--expect-bytes N] [--pause-after-bytes N]\n"
	    "  stop ID\n"
	    "  repeat N processinfo|resume\n"
	    "  raw HEX [--chunk N] [--delay-ms MS] [--hold-ms MS] [--shut-wr] "
	    "[--reset]\n"
	    "      [--own-pid-at OFFSET]  (this process's pid, u64 LE, there)\n"
	    "      (SIGUSR1 ends the hold early)\n"
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

	while ((ch = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			timeout = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || timeout <= 0 ||
			    timeout > 86400)
				usage();
			break;
		case 's':
			opt_shut_wr = 1;
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
	signal(SIGPIPE, SIG_IGN);
	if (role_listen && start_listen() == -1)
		return (EXIT_EOF);

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

	if (role_listen)
		stop_listen();
	return (status);
}
