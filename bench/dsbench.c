/* SPDX-License-Identifier: ISC */

/*
 * dsbench: the load tool of the dsroute benchmark.  It speaks the .NET
 * diagnostic IPC framing on both ends, so a router's first-message check
 * is on the measured path, and it verifies every byte it receives.
 *
 *   dsbench server --unix PATH --tcp HOST:PORT [--tls HOST:PORT
 *       --cert F --key F]
 *	the runtime side: one epoll loop serving a command per connection.
 *	CollectTracing2 whose provider arguments say "Bytes=N;Hold=H" is
 *	answered with the 28-byte OK (session id), then N bytes of the
 *	pattern, then a half-close (or, with Hold=1, nothing until the
 *	client leaves); ProcessInfo is answered with its reply, then close.
 *   dsbench stream ADDR --bytes N [--pid P]...	one trace stream
 *	(the relay's CPU per GB from the --pid processes; with
 *	--runtime-pid, the two ends' too: this client's and the server's)
 *   dsbench rr ADDR --conc C --duration S [--max N]	fresh conn per command
 *	(with --any-reply, any runtime's well-formed ProcessInfo reply is
 *	taken, such as a fake runtime's behind a mirror, not only the server's)
 *   dsbench idle ADDR --n N --pid P [--hold S]	N quiet trace sessions
 *   dsbench stall ADDR --n N --bytes B --pid P	N streams nobody reads
 *   dsbench probe ADDR				is anything listening?
 *   dsbench wsruntime tcp:HOST:PORT --path P [--chunk-max K]
 *	a browser runtime dialling a ws: listener: each command answered,
 *	a trace as binary messages of 1 to K (4, at most 65535) bytes, then
 *	it dials again
 *
 * ADDR is unix:PATH, tcp:HOST:PORT or tls:HOST:PORT.  Clients print one
 * "RESULT key=value ..." line.  Every loop is bounded by a count and by
 * the wall clock (--timeout, --duration).
 */

#define _GNU_SOURCE
#include <sys/types.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define IPC_MAGIC	"DOTNET_IPC_V1"
#define HDR_LEN		20
#define OK_STREAM_LEN	28		/* header + u64 session id */
#define PATTERN_LEN	(1024 * 1024)
#define CHUNK		(256 * 1024)
#define REQ_MAX		4096
#define MAX_PIDS	8

enum addr_kind { A_UNIX, A_TCP, A_TLS };

struct addr {
	enum addr_kind		 kind;
	struct sockaddr_storage	 ss;
	socklen_t		 len;
};

static uint8_t	*pattern;		/* PATTERN_LEN + CHUNK, wraps */
static SSL_CTX	*client_ctx;
static double	 timeout_s = 120;

static void __attribute__((__noreturn__, __format__(__printf__, 1, 2)))
die(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	fprintf(stderr, "dsbench: ");
	vfprintf(stderr, fmt, ap);
	fprintf(stderr, "\n");
	va_end(ap);
	exit(1);
}

static double
now_s(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (ts.tv_sec + ts.tv_nsec / 1e9);
}

/* The stream's bytes: 1 MiB of xorshift, repeated, readable across a wrap. */
static void
pattern_init(void)
{
	uint64_t	 x = 0x9e3779b97f4a7c15ULL;
	size_t		 i;

	if ((pattern = malloc(PATTERN_LEN + CHUNK)) == NULL)
		die("out of memory");
	for (i = 0; i < PATTERN_LEN; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		pattern[i] = (uint8_t)(x >> 32);
	}
	memcpy(pattern + PATTERN_LEN, pattern, CHUNK);
}

static void
parse_addr(const char *s, struct addr *a)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&a->ss;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&a->ss;
	char			 host[64], *colon;

	memset(a, 0, sizeof(*a));
	if (strncmp(s, "unix:", 5) == 0) {
		a->kind = A_UNIX;
		sun->sun_family = AF_UNIX;
		if (strlen(s + 5) >= sizeof(sun->sun_path))
			die("%s: path too long", s);
		strcpy(sun->sun_path, s + 5);
		a->len = sizeof(*sun);
		return;
	}
	if (strncmp(s, "tcp:", 4) == 0)
		a->kind = A_TCP;
	else if (strncmp(s, "tls:", 4) == 0)
		a->kind = A_TLS;
	else
		die("%s: give unix:PATH, tcp:HOST:PORT or tls:HOST:PORT", s);
	snprintf(host, sizeof(host), "%s", s + 4);
	if ((colon = strrchr(host, ':')) == NULL)
		die("%s: no port", s);
	*colon = '\0';
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		die("%s: give an IPv4 address (loopback only)", s);
	a->len = sizeof(*sin);
}

/* Idle and stall runs hold thousands of descriptors. */
static void
raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, v & 0xffffffffU);
	put32(p + 4, v >> 32);
}

static void
header(uint8_t *p, uint16_t size, uint8_t set, uint8_t id)
{
	memcpy(p, IPC_MAGIC, 14);
	put16(p + 14, size);
	p[16] = set;
	p[17] = id;
	put16(p + 18, 0);
}

/* Append an IPC string: u32 length in UTF-16 units with the NUL, UTF-16LE. */
static size_t
put_string(uint8_t *p, const char *s)
{
	size_t	 n = strlen(s) + 1, i;

	put32(p, (uint32_t)n);
	for (i = 0; i < n; i++)
		put16(p + 4 + 2 * i, (uint8_t)s[i]);
	return (4 + 2 * n);
}

/* A CollectTracing2 command whose provider arguments carry the request. */
static size_t
collect_tracing(uint8_t *msg, uint64_t bytes, int hold)
{
	char	 args[96];
	size_t	 n = HDR_LEN;

	snprintf(args, sizeof(args), "Bytes=%" PRIu64 ";Hold=%d", bytes, hold);
	put32(msg + n, 256);		/* circularBufferMB */
	put32(msg + n + 4, 1);		/* format: NetTrace */
	msg[n + 8] = 0;			/* requestRundown */
	put32(msg + n + 9, 1);		/* one provider */
	n += 13;
	put64(msg + n, 0xffffffffffffffffULL);
	put32(msg + n + 8, 5);		/* verbose */
	n += 12;
	n += put_string(msg + n, "Microsoft-DotNETCore-SampleProfiler");
	n += put_string(msg + n, args);
	header(msg, (uint16_t)n, 0x02, 0x03);
	return (n);
}

/* The ProcessInfo reply every server sends, so clients can check it. */
static size_t
processinfo_reply(uint8_t *msg)
{
	static const uint8_t cookie[16] = {
		0x10, 0x32, 0x54, 0x76, 0x98, 0xba, 0xdc, 0xfe,
		0x01, 0x23, 0x45, 0x67, 0x89, 0xab, 0xcd, 0xef
	};
	size_t	 n = HDR_LEN;

	put64(msg + n, 4242);
	memcpy(msg + n + 8, cookie, 16);
	n += 24;
	n += put_string(msg + n, "/usr/bin/dotnet bench.dll");
	n += put_string(msg + n, "Linux");
	n += put_string(msg + n, "x64");
	header(msg, (uint16_t)n, 0xff, 0x00);
	return (n);
}

/* ---- server ---------------------------------------------------------- */

enum sstate { SS_HANDSHAKE, SS_REQUEST, SS_REPLY, SS_STREAM, SS_HOLD,
    SS_DRAIN };

struct sconn {
	int		 fd;
	SSL		*ssl;
	enum sstate	 state;
	uint32_t	 events;	/* registered epoll interest */
	int		 ssl_want;	/* EPOLLIN/EPOLLOUT the TLS layer needs */
	uint8_t		 req[REQ_MAX];
	size_t		 reqlen;
	uint8_t		 reply[256];
	size_t		 replen, repoff;
	uint64_t	 remaining, off;
	int		 hold;
	int		 close_after_reply;
};

struct slistener {
	int		 fd;
	int		 tls;
};

static int	 epfd;
static SSL_CTX	*server_ctx;

static void
sconn_free(struct sconn *c)
{
	if (c->ssl != NULL)
		SSL_free(c->ssl);
	close(c->fd);
	free(c);
}

/* Ask epoll for what the connection waits for, when that changed. */
static void
sconn_interest(struct sconn *c)
{
	struct epoll_event	 ev;
	uint32_t		 want = 0;

	if (c->ssl_want)
		want = c->ssl_want;
	else if (c->state == SS_REPLY || c->state == SS_STREAM)
		want = EPOLLOUT;
	else
		want = EPOLLIN;
	if (want == c->events)
		return;
	memset(&ev, 0, sizeof(ev));
	ev.events = want;
	ev.data.ptr = c;
	if (epoll_ctl(epfd, EPOLL_CTL_MOD, c->fd, &ev) == -1)
		die("epoll_ctl: %s", strerror(errno));
	c->events = want;
}

/* Read or write through TLS or the socket; -2 would block, -1 failed. */
static ssize_t
sio(struct sconn *c, void *buf, size_t len, int writing)
{
	ssize_t	 n;
	size_t	 done;
	int	 rv, err;

	c->ssl_want = 0;
	if (c->ssl == NULL) {
		n = writing ? send(c->fd, buf, len, MSG_NOSIGNAL) :
		    read(c->fd, buf, len);
		if (n == -1 && (errno == EAGAIN || errno == EINTR))
			return (-2);
		return (n);
	}
	rv = writing ? SSL_write_ex(c->ssl, buf, len, &done) :
	    SSL_read_ex(c->ssl, buf, len, &done);
	if (rv == 1)
		return ((ssize_t)done);
	err = SSL_get_error(c->ssl, rv);
	if (err == SSL_ERROR_WANT_READ) {
		c->ssl_want = EPOLLIN;
		return (-2);
	}
	if (err == SSL_ERROR_WANT_WRITE) {
		c->ssl_want = EPOLLOUT;
		return (-2);
	}
	if (err == SSL_ERROR_ZERO_RETURN)
		return (0);
	ERR_clear_error();
	return (-1);
}

/* Parse the "Bytes=N;Hold=H" arguments of a CollectTracing2 request. */
static int
parse_collect(struct sconn *c)
{
	char			 text[128];
	size_t			 off = HDR_LEN + 13 + 12, n, i;
	unsigned long long	 bytes;
	int			 hold;

	/* Skip the provider name, then read the arguments. */
	if (off + 4 > c->reqlen)
		return (-1);
	off += 4 + 2 * (size_t)(c->req[off] | c->req[off + 1] << 8);
	if (off + 4 > c->reqlen)
		return (-1);
	n = c->req[off] | c->req[off + 1] << 8;
	off += 4;
	if (n == 0 || n > sizeof(text) || off + 2 * n > c->reqlen)
		return (-1);
	for (i = 0; i < n; i++)
		text[i] = (char)c->req[off + 2 * i];
	text[n - 1] = '\0';
	if (sscanf(text, "Bytes=%llu;Hold=%d", &bytes, &hold) != 2)
		return (-1);
	c->remaining = bytes;
	c->hold = hold;
	return (0);
}

/* A whole request arrived: prepare the reply. */
static int
serve_request(struct sconn *c)
{
	uint8_t	 set = c->req[16], id = c->req[17];

	if (set == 0x04 && id == 0x00) {
		c->replen = processinfo_reply(c->reply);
		c->close_after_reply = 1;
	} else if (set == 0x02 && id == 0x03) {
		if (parse_collect(c) == -1)
			return (-1);
		header(c->reply, OK_STREAM_LEN, 0xff, 0x00);
		put64(c->reply + HDR_LEN, 0x5e551011);
		c->replen = OK_STREAM_LEN;
	} else
		return (-1);
	c->repoff = 0;
	c->state = SS_REPLY;
	return (0);
}

/* Move one connection as far as it goes; return -1 to close it. */
static int
sconn_step(struct sconn *c)
{
	uint8_t		 junk[4096];
	ssize_t		 n;
	size_t		 need, len;
	int		 rv;

	for (;;) {
		switch (c->state) {
		case SS_HANDSHAKE:
			c->ssl_want = 0;
			if ((rv = SSL_accept(c->ssl)) == 1) {
				c->state = SS_REQUEST;
				break;
			}
			switch (SSL_get_error(c->ssl, rv)) {
			case SSL_ERROR_WANT_READ:
				c->ssl_want = EPOLLIN;
				return (0);
			case SSL_ERROR_WANT_WRITE:
				c->ssl_want = EPOLLOUT;
				return (0);
			default:
				ERR_clear_error();
				return (-1);
			}
		case SS_REQUEST:
			need = HDR_LEN;
			if (c->reqlen >= HDR_LEN)
				need = c->req[14] | c->req[15] << 8;
			if (need < HDR_LEN || need > REQ_MAX)
				return (-1);
			if (c->reqlen >= need) {
				if (memcmp(c->req, IPC_MAGIC, 14) != 0 ||
				    serve_request(c) == -1)
					return (-1);
				break;
			}
			n = sio(c, c->req + c->reqlen, need - c->reqlen, 0);
			if (n == -2)
				return (0);
			if (n <= 0)
				return (-1);
			c->reqlen += n;
			break;
		case SS_REPLY:
			n = sio(c, c->reply + c->repoff, c->replen - c->repoff,
			    1);
			if (n == -2)
				return (0);
			if (n <= 0)
				return (-1);
			c->repoff += n;
			if (c->repoff < c->replen)
				break;
			if (c->close_after_reply)
				return (-1);
			c->state = c->hold ? SS_HOLD : SS_STREAM;
			break;
		case SS_STREAM:
			if (c->remaining == 0) {
				if (c->ssl != NULL)
					(void)SSL_shutdown(c->ssl);
				else
					(void)shutdown(c->fd, SHUT_WR);
				c->state = SS_DRAIN;
				break;
			}
			len = c->remaining < CHUNK ? c->remaining : CHUNK;
			n = sio(c, pattern + c->off % PATTERN_LEN, len, 1);
			if (n == -2)
				return (0);
			if (n <= 0)
				return (-1);
			c->off += n;
			c->remaining -= n;
			/* Let other connections have a turn. */
			return (0);
		case SS_HOLD:
		case SS_DRAIN:
			n = sio(c, junk, sizeof(junk), 0);
			if (n == -2)
				return (0);
			if (n <= 0)
				return (-1);
			break;
		}
	}
}

/* Accept every pending connection and start serving it. */
static void
server_accept(struct slistener *l)
{
	struct epoll_event	 ev;
	struct sconn		*c;
	const char		*sndbuf = getenv("DSBENCH_SNDBUF");
	int			 fd, on = 1, size;

	while ((fd = accept4(l->fd, NULL, NULL, SOCK_NONBLOCK |
	    SOCK_CLOEXEC)) != -1) {
		if ((c = calloc(1, sizeof(*c))) == NULL)
			die("out of memory");
		c->fd = fd;
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on,
		    sizeof(on));
		/* A diagnostic: a runtime with a larger send buffer. */
		if (sndbuf != NULL && (size = atoi(sndbuf)) > 0)
			(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &size,
			    sizeof(size));
		c->state = SS_REQUEST;
		if (l->tls) {
			if ((c->ssl = SSL_new(server_ctx)) == NULL)
				die("SSL_new");
			SSL_set_fd(c->ssl, fd);
			c->state = SS_HANDSHAKE;
		}
		memset(&ev, 0, sizeof(ev));
		ev.events = EPOLLIN;
		ev.data.ptr = c;
		c->events = EPOLLIN;
		if (epoll_ctl(epfd, EPOLL_CTL_ADD, fd, &ev) == -1)
			die("epoll_ctl: %s", strerror(errno));
		if (sconn_step(c) == -1)
			sconn_free(c);
		else
			sconn_interest(c);
	}
	if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
		fprintf(stderr, "dsbench server: accept: %s\n",
		    strerror(errno));
}

/* Open a listener for the server and watch it. */
static void
listen_on(struct slistener *l, const char *spec, int tls)
{
	struct addr		 a;
	struct epoll_event	 ev;
	int			 on = 1;

	parse_addr(spec, &a);
	if (a.kind == A_UNIX)
		unlink(((struct sockaddr_un *)&a.ss)->sun_path);
	l->fd = socket(a.ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK |
	    SOCK_CLOEXEC, 0);
	if (l->fd == -1)
		die("socket: %s", strerror(errno));
	(void)setsockopt(l->fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on));
	if (bind(l->fd, (struct sockaddr *)&a.ss, a.len) == -1 ||
	    listen(l->fd, 4096) == -1)
		die("listen %s: %s", spec, strerror(errno));
	l->tls = tls;
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = l;
	if (epoll_ctl(epfd, EPOLL_CTL_ADD, l->fd, &ev) == -1)
		die("epoll_ctl: %s", strerror(errno));
}

/* The runtime side: serve every listener from one epoll loop, forever. */
static int
run_server(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "unix", required_argument, NULL, 'u' },
		{ "tcp", required_argument, NULL, 't' },
		{ "tls", required_argument, NULL, 's' },
		{ "cert", required_argument, NULL, 'c' },
		{ "key", required_argument, NULL, 'k' },
		{ NULL, 0, NULL, 0 }
	};
	struct slistener	 l[8];
	struct epoll_event	 evs[256];
	const char		*cert = NULL, *key = NULL, *tls[4];
	char			 spec[160];
	int			 nl = 0, ntls = 0, ch, n, i, j;
	struct sconn		*c;

	if ((epfd = epoll_create1(EPOLL_CLOEXEC)) == -1)
		die("epoll_create1: %s", strerror(errno));
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'u':
			if (nl >= 6)
				die("too many listeners");
			snprintf(spec, sizeof(spec), "unix:%s", optarg);
			listen_on(&l[nl++], spec, 0);
			break;
		case 't':
			if (nl >= 6)
				die("too many listeners");
			snprintf(spec, sizeof(spec), "tcp:%s", optarg);
			listen_on(&l[nl++], spec, 0);
			break;
		case 's':
			if (ntls >= 4)
				die("too many TLS listeners");
			tls[ntls++] = optarg;
			break;
		case 'c':
			cert = optarg;
			break;
		case 'k':
			key = optarg;
			break;
		default:
			die("server: unknown option");
		}
	}
	if (ntls > 0) {
		if (cert == NULL || key == NULL)
			die("--tls needs --cert and --key");
		server_ctx = SSL_CTX_new(TLS_server_method());
		if (server_ctx == NULL ||
		    SSL_CTX_use_certificate_chain_file(server_ctx, cert) != 1 ||
		    SSL_CTX_use_PrivateKey_file(server_ctx, key,
		    SSL_FILETYPE_PEM) != 1)
			die("cannot load %s / %s", cert, key);
		SSL_CTX_set_min_proto_version(server_ctx, TLS1_2_VERSION);
		SSL_CTX_set_num_tickets(server_ctx, 0);
		SSL_CTX_set_mode(server_ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
		    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
		for (i = 0; i < ntls; i++) {
			snprintf(spec, sizeof(spec), "tcp:%s", tls[i]);
			listen_on(&l[nl++], spec, 1);
		}
	}
	if (nl == 0)
		die("server: give --unix, --tcp or --tls");
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		if ((n = epoll_wait(epfd, evs, 256, -1)) == -1) {
			if (errno == EINTR)
				continue;
			die("epoll_wait: %s", strerror(errno));
		}
		for (i = 0; i < n; i++) {
			for (j = 0; j < nl; j++)
				if (evs[i].data.ptr == &l[j])
					break;
			if (j < nl) {
				server_accept(&l[j]);
				continue;
			}
			c = evs[i].data.ptr;
			if (sconn_step(c) == -1)
				sconn_free(c);
			else
				sconn_interest(c);
		}
	}
}

/* ---- clients --------------------------------------------------------- */

struct cconn {
	int	 fd;
	SSL	*ssl;
};

static void
client_tls_init(void)
{
	if (client_ctx != NULL)
		return;
	if ((client_ctx = SSL_CTX_new(TLS_client_method())) == NULL)
		die("SSL_CTX_new");
	SSL_CTX_set_min_proto_version(client_ctx, TLS1_2_VERSION);
	/* Loopback benchmark of the relays: no verification, no resumption. */
	SSL_CTX_set_verify(client_ctx, SSL_VERIFY_NONE, NULL);
	SSL_CTX_set_session_cache_mode(client_ctx, SSL_SESS_CACHE_OFF);
}

/* Connect (blocking, bounded by a receive/send timeout); -1 on failure. */
static int
cconnect(const struct addr *a, struct cconn *c)
{
	struct timeval	 tv;
	int		 on = 1;

	c->ssl = NULL;
	c->fd = socket(a->ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd == -1)
		return (-1);
	tv.tv_sec = (time_t)timeout_s;
	tv.tv_usec = 0;
	(void)setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (a->kind != A_UNIX)
		(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &on,
		    sizeof(on));
	if (connect(c->fd, (const struct sockaddr *)&a->ss, a->len) == -1)
		goto fail;
	if (a->kind == A_TLS) {
		if ((c->ssl = SSL_new(client_ctx)) == NULL)
			goto fail;
		SSL_set_fd(c->ssl, c->fd);
		if (SSL_connect(c->ssl) != 1)
			goto fail;
	}
	return (0);
fail:
	ERR_clear_error();
	if (c->ssl != NULL)
		SSL_free(c->ssl);
	c->ssl = NULL;
	close(c->fd);
	return (-1);
}

static void
cclose(struct cconn *c)
{
	if (c->ssl != NULL) {
		SSL_set_quiet_shutdown(c->ssl, 1);
		SSL_free(c->ssl);
	}
	close(c->fd);
}

/* Read up to len bytes: >0 read, 0 EOF, -1 error or timeout. */
static ssize_t
cread(struct cconn *c, void *buf, size_t len)
{
	size_t	 done;
	ssize_t	 n;
	int	 rv, err;

	if (c->ssl == NULL) {
		do
			n = read(c->fd, buf, len);
		while (n == -1 && errno == EINTR);
		return (n);
	}
	if ((rv = SSL_read_ex(c->ssl, buf, len, &done)) == 1)
		return ((ssize_t)done);
	err = SSL_get_error(c->ssl, rv);
	ERR_clear_error();
	if (err == SSL_ERROR_ZERO_RETURN)
		return (0);
	/* A relay that closes without close_notify ends the stream too. */
	if (err == SSL_ERROR_SSL || err == SSL_ERROR_SYSCALL)
		return (errno == EAGAIN ? -1 : 0);
	return (-1);
}

/* Write all of buf; -1 on failure. */
static int
cwrite_all(struct cconn *c, const void *buf, size_t len)
{
	size_t	 done;
	ssize_t	 n;

	if (c->ssl != NULL) {
		if (SSL_write_ex(c->ssl, buf, len, &done) != 1) {
			ERR_clear_error();
			return (-1);
		}
		return (0);
	}
	while (len > 0) {
		if ((n = send(c->fd, buf, len, MSG_NOSIGNAL)) == -1) {
			if (errno == EINTR)
				continue;
			return (-1);
		}
		buf = (const uint8_t *)buf + n;
		len -= n;
	}
	return (0);
}

/* Read exactly len bytes; -1 on failure or an early end. */
static int
cread_all(struct cconn *c, uint8_t *buf, size_t len)
{
	ssize_t	 n;

	while (len > 0) {
		if ((n = cread(c, buf, len)) <= 0)
			return (-1);
		buf += n;
		len -= n;
	}
	return (0);
}

/* Send a CollectTracing2 for bytes and check the 28-byte OK. */
static int
start_trace(struct cconn *c, uint64_t bytes, int hold)
{
	uint8_t	 msg[512], ok[OK_STREAM_LEN], want[OK_STREAM_LEN];
	size_t	 n = collect_tracing(msg, bytes, hold);

	header(want, OK_STREAM_LEN, 0xff, 0x00);
	put64(want + HDR_LEN, 0x5e551011);
	if (cwrite_all(c, msg, n) == -1 || cread_all(c, ok, sizeof(ok)) == -1)
		return (-1);
	return (memcmp(ok, want, sizeof(ok)) == 0 ? 0 : -1);
}

/* CPU seconds (user + system, children included) of a process tree. */
static double
tree_cpu(pid_t pid)
{
	char		 path[64], buf[1024], *p, *tok;
	FILE		*f;
	double		 total = 0, tick = (double)sysconf(_SC_CLK_TCK);
	unsigned long	 v[4];
	pid_t		 child;
	int		 i;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (0);
	if (fgets(buf, sizeof(buf), f) != NULL &&
	    (p = strrchr(buf, ')')) != NULL) {
		/* Fields 14-17: utime stime cutime cstime. */
		for (i = 3, tok = strtok(p + 2, " "); tok != NULL && i < 17;
		    i++, tok = strtok(NULL, " ")) {
			if (i >= 13)
				v[i - 13] = strtoul(tok, NULL, 10);
		}
		if (i == 17)
			total = (v[0] + v[1] + v[2] + v[3]) / tick;
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return (total);
	while (fscanf(f, "%d", &child) == 1)
		total += tree_cpu(child);
	fclose(f);
	return (total);
}

struct mem {
	double	 rss_kib, pss_kib;
	int	 fds, procs;
};

/* Add the RSS, PSS, descriptors and processes of a process tree to m. */
static void
tree_mem(pid_t pid, struct mem *m)
{
	char	 path[64], line[256];
	FILE	*f;
	DIR	*d;
	pid_t	 child;
	unsigned long v;

	m->procs++;
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL) {
			if (sscanf(line, "Rss: %lu", &v) == 1)
				m->rss_kib += v;
			else if (sscanf(line, "Pss: %lu", &v) == 1)
				m->pss_kib += v;
		}
		fclose(f);
	}
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)pid);
	if ((d = opendir(path)) != NULL) {
		while (readdir(d) != NULL)
			m->fds++;
		m->fds -= 2;
		closedir(d);
	}
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)pid,
	    (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return;
	while (fscanf(f, "%d", &child) == 1)
		tree_mem(child, m);
	fclose(f);
}

static void
mem_of(pid_t *pids, int npids, struct mem *m)
{
	int	 i;

	memset(m, 0, sizeof(*m));
	for (i = 0; i < npids; i++)
		tree_mem(pids[i], m);
}

static int
count_procs(pid_t *pids, int npids)
{
	struct mem	 m;

	mem_of(pids, npids, &m);
	return (m.procs);
}

struct client_opts {
	struct addr	 addr;
	const char	*name;
	uint64_t	 bytes;
	double		 duration;
	long		 max;
	int		 conc, n;
	double		 hold;
	pid_t		 pids[MAX_PIDS];
	int		 npids;
	pid_t		 runtime_pid;	/* the far end, for the ends' CPU */
	int		 any_reply;	/* rr: any runtime's ProcessInfo */
};


/* One trace stream: GB/s of the payload, relay CPU per GB, every byte checked. */
static int
run_stream(struct client_opts *o)
{
	struct cconn	 c;
	uint8_t		*buf;
	uint64_t	 got = 0;
	double		 t0, t1, cpu0 = 0, cpu1 = 0, cpu_open = 0, deadline;
	double		 ends0, ends1;
	ssize_t		 n;
	int		 i, procs0, ok = 1;

	if ((buf = malloc(CHUNK)) == NULL)
		die("out of memory");
	procs0 = count_procs(o->pids, o->npids);
	for (i = 0; i < o->npids; i++)
		cpu0 += tree_cpu(o->pids[i]);
	ends0 = tree_cpu(getpid()) +
	    (o->runtime_pid ? tree_cpu(o->runtime_pid) : 0);
	t0 = now_s();
	deadline = t0 + timeout_s;
	if (cconnect(&o->addr, &c) == -1)
		die("stream: connect %s: %s", o->name, strerror(errno));
	if (start_trace(&c, o->bytes, 0) == -1)
		die("stream: %s: no OK reply to CollectTracing", o->name);
	while (now_s() < deadline) {
		if ((n = cread(&c, buf, CHUNK)) <= 0)
			break;
		if (got + n > o->bytes ||
		    memcmp(buf, pattern + got % PATTERN_LEN, n) != 0) {
			ok = 0;
			break;
		}
		got += n;
	}
	t1 = now_s();
	ends1 = tree_cpu(getpid()) +
	    (o->runtime_pid ? tree_cpu(o->runtime_pid) : 0);
	/*
	 * A fork-per-connection relay's child still runs here; once it
	 * exits, its time counts only if the parent reaps it with wait().
	 */
	for (i = 0; i < o->npids; i++)
		cpu_open += tree_cpu(o->pids[i]);
	cclose(&c);
	for (i = 0; i < 100 && count_procs(o->pids, o->npids) > procs0; i++)
		usleep(5000);
	for (i = 0; i < o->npids; i++)
		cpu1 += tree_cpu(o->pids[i]);
	if (cpu_open > cpu1)
		cpu1 = cpu_open;
	if (got != o->bytes)
		ok = 0;
	printf("RESULT kind=stream config=%s bytes=%" PRIu64 " secs=%.4f "
	    "gbps=%.4f relay_cpu_s=%.3f cpu_s_per_gb=%.4f "
	    "ends_cpu_s_per_gb=%.4f verify=%s\n", o->name, got, t1 - t0,
	    got / (t1 - t0) / 1e9, cpu1 - cpu0,
	    got > 0 ? (cpu1 - cpu0) / (got / 1e9) : 0,
	    got > 0 && o->runtime_pid ? (ends1 - ends0) / (got / 1e9) : 0,
	    ok ? "ok" : "FAIL");
	free(buf);
	return (ok ? 0 : 1);
}

struct rr_thread {
	struct client_opts	*o;
	pthread_t		 tid;
	double			 deadline;
	double			*lat;
	long			 nlat, cap, errors;
	long			*budget;
};

static pthread_mutex_t	 budget_lock = PTHREAD_MUTEX_INITIALIZER;

static int
take_budget(long *budget)
{
	int	 ok;

	pthread_mutex_lock(&budget_lock);
	ok = *budget > 0;
	if (ok)
		(*budget)--;
	pthread_mutex_unlock(&budget_lock);
	return (ok);
}

/*
 * Read a reply of another runtime (a fake one, or a real one): a
 * well-formed OK header and the whole message it announces.  Return 0,
 * or -1 if it is not one.
 */
static int
read_any_reply(struct cconn *c)
{
	uint8_t		 buf[65536];
	size_t		 size;

	if (cread_all(c, buf, HDR_LEN) == -1 ||
	    memcmp(buf, IPC_MAGIC, sizeof(IPC_MAGIC)) != 0 ||
	    buf[16] != 0xff || buf[17] != 0x00)
		return (-1);
	size = (size_t)buf[14] | (size_t)buf[15] << 8;
	if (size < HDR_LEN + 24)
		return (-1);
	return (cread_all(c, buf + HDR_LEN, size - HDR_LEN));
}

/* ProcessInfo on a fresh connection, again and again. */
static void *
rr_loop(void *arg)
{
	struct rr_thread	*t = arg;
	struct cconn		 c;
	uint8_t			 req[HDR_LEN], want[256], got[256];
	size_t			 wlen = processinfo_reply(want);
	double			 t0;

	header(req, HDR_LEN, 0x04, 0x00);
	while (now_s() < t->deadline && t->nlat < t->cap &&
	    take_budget(t->budget)) {
		t0 = now_s();
		if (cconnect(&t->o->addr, &c) == -1) {
			t->errors++;
			continue;
		}
		if (cwrite_all(&c, req, sizeof(req)) == -1 ||
		    (t->o->any_reply ? read_any_reply(&c) :
		    cread_all(&c, got, wlen) == -1 ||
		    memcmp(got, want, wlen) != 0)) {
			t->errors++;
			cclose(&c);
			continue;
		}
		t->lat[t->nlat++] = now_s() - t0;
		cclose(&c);
	}
	return (NULL);
}

static int
cmp_double(const void *a, const void *b)
{
	double	 x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* Fresh connections from o->conc threads: rate and latency percentiles. */
static int
run_rr(struct client_opts *o)
{
	struct rr_thread	*t;
	double			*all, t0, t1, cpu0 = 0, cpu1 = 0;
	long			 n = 0, errors = 0, budget = o->max;
	int			 i;

	if ((t = calloc(o->conc, sizeof(*t))) == NULL)
		die("out of memory");
	for (i = 0; i < o->npids; i++)
		cpu0 += tree_cpu(o->pids[i]);
	t0 = now_s();
	for (i = 0; i < o->conc; i++) {
		t[i].o = o;
		t[i].deadline = t0 + o->duration;
		t[i].cap = o->max;
		t[i].budget = &budget;
		if ((t[i].lat = malloc(o->max * sizeof(double))) == NULL)
			die("out of memory");
		if (pthread_create(&t[i].tid, NULL, rr_loop, &t[i]) != 0)
			die("pthread_create");
	}
	for (i = 0; i < o->conc; i++) {
		pthread_join(t[i].tid, NULL);
		n += t[i].nlat;
		errors += t[i].errors;
	}
	t1 = now_s();
	for (i = 0; i < o->npids; i++)
		cpu1 += tree_cpu(o->pids[i]);
	if ((all = malloc((n + 1) * sizeof(double))) == NULL)
		die("out of memory");
	for (n = 0, i = 0; i < o->conc; i++) {
		memcpy(all + n, t[i].lat, t[i].nlat * sizeof(double));
		n += t[i].nlat;
		free(t[i].lat);
	}
	qsort(all, n, sizeof(double), cmp_double);
	printf("RESULT kind=rr config=%s conc=%d n=%ld errors=%ld secs=%.3f "
	    "conn_per_s=%.1f p50_us=%.1f p90_us=%.1f p99_us=%.1f "
	    "max_us=%.1f relay_cpu_us_per_conn=%.1f\n", o->name, o->conc, n,
	    errors, t1 - t0, n / (t1 - t0), n ? all[n / 2] * 1e6 : 0,
	    n ? all[n * 9 / 10] * 1e6 : 0, n ? all[n * 99 / 100] * 1e6 : 0,
	    n ? all[n - 1] * 1e6 : 0, n ? (cpu1 - cpu0) / n * 1e6 : 0);
	free(all);
	free(t);
	return (errors == 0 && n > 0 ? 0 : 1);
}

/*
 * Hold n sessions, each with one exchange done end to end, and report
 * what they cost the relay.  With bytes > 0 (stall), each asks for that
 * much and reads none of it: memory must stay bounded and flat.
 */
static int
run_idle(struct client_opts *o, int stall)
{
	struct cconn	*c;
	struct mem	 before, mid, after;
	double		 deadline = now_s() + timeout_s;
	int		 i, open = 0;

	if ((c = calloc(o->n, sizeof(*c))) == NULL)
		die("out of memory");
	mem_of(o->pids, o->npids, &before);
	for (i = 0; i < o->n && now_s() < deadline; i++) {
		if (cconnect(&o->addr, &c[i]) == -1)
			break;
		if (start_trace(&c[i], stall ? o->bytes : 0, !stall) == -1) {
			cclose(&c[i]);
			break;
		}
		open++;
	}
	usleep((useconds_t)(o->hold * 1e6));
	mem_of(o->pids, o->npids, &mid);
	if (stall) {
		/* Flat means the second look finds what the first did. */
		usleep((useconds_t)(o->hold * 1e6));
	}
	mem_of(o->pids, o->npids, &after);
	printf("RESULT kind=%s config=%s n=%d opened=%d rss_kib_before=%.0f "
	    "rss_kib_after=%.0f rss_kib_per_session=%.2f "
	    "pss_kib_per_session=%.2f fds_per_session=%.2f "
	    "procs=%d%s", stall ? "stall" : "idle", o->name, o->n, open,
	    before.rss_kib, after.rss_kib,
	    open ? (after.rss_kib - before.rss_kib) / open : 0,
	    open ? (after.pss_kib - before.pss_kib) / open : 0,
	    open ? (double)(after.fds - before.fds) / open : 0, after.procs,
	    stall ? "" : "\n");
	if (stall)
		printf(" rss_kib_per_session_first=%.2f growth_kib=%.0f\n",
		    open ? (mid.rss_kib - before.rss_kib) / open : 0,
		    after.rss_kib - mid.rss_kib);
	for (i = 0; i < open; i++)
		cclose(&c[i]);
	free(c);
	return (open == o->n ? 0 : 1);
}

/* Is something accepting connections at the address? */
static int
run_probe(struct client_opts *o)
{
	struct cconn	 c;

	if (cconnect(&o->addr, &c) == -1)
		return (1);
	cclose(&c);
	return (0);
}

/* ---- a browser runtime over WebSocket --------------------------------- */

/* A client frame (FIN, masked with a zero key: legal, and free). */
static size_t
ws_frame(uint8_t *p, uint8_t opcode, const uint8_t *data, size_t len)
{
	size_t	 n = 0;

	p[n++] = 0x80 | opcode;
	if (len < 126)
		p[n++] = 0x80 | (uint8_t)len;
	else {
		p[n++] = 0x80 | 126;
		p[n++] = (uint8_t)(len >> 8);
		p[n++] = (uint8_t)len;
	}
	memset(p + n, 0, 4);
	n += 4;
	memcpy(p + n, data, len);
	return (n + len);
}

/*
 * Read the next data message from the router into buf (a request: one
 * unfragmented message under 64 KiB), answering pings.  Return its
 * length, or -1 at a close, an error or EOF.
 */
static ssize_t
ws_read_message(struct cconn *c, uint8_t *buf, size_t cap)
{
	uint8_t	 h[4], out[256];
	size_t	 len;
	int	 op;

	for (;;) {
		if (cread_all(c, h, 2) == -1)
			return (-1);
		op = h[0] & 0x0f;
		len = h[1] & 0x7f;
		if (len == 126) {
			if (cread_all(c, h + 2, 2) == -1)
				return (-1);
			len = (size_t)h[2] << 8 | h[3];
		}
		if (len == 127 || (h[1] & 0x80) || len > cap)
			return (-1);
		if (len > 0 && cread_all(c, buf, len) == -1)
			return (-1);
		if (op == 0x9) {		/* ping: pong */
			if (len > 125 || cwrite_all(c, out,
			    ws_frame(out, 0xa, buf, len)) == -1)
				return (-1);
			continue;
		}
		if (op == 0xa)
			continue;
		if (op == 0x8)
			return (-1);
		return ((ssize_t)len);
	}
}

/* The byte count a CollectTracing asks for ("Bytes=N" in UTF-16). */
static uint64_t
requested_bytes(const uint8_t *msg, size_t len)
{
	static const char	 key[] = "Bytes=";
	uint64_t		 v = 0;
	size_t			 i, k;

	for (i = 0; i + 2 * sizeof(key) < len; i++) {
		for (k = 0; k < sizeof(key) - 1; k++)
			if (msg[i + 2 * k] != key[k] || msg[i + 2 * k + 1] != 0)
				break;
		if (k < sizeof(key) - 1)
			continue;
		for (i += 2 * k; i + 1 < len && msg[i] >= '0' &&
		    msg[i] <= '9' && msg[i + 1] == 0; i += 2)
			v = v * 10 + (msg[i] - '0');
		return (v);
	}
	return (0);
}

/*
 * A browser runtime: dial the router's ws: listener, advertise, answer
 * one command (ProcessInfo, or CollectTracing with its bytes of the
 * pattern as binary messages of 1 to chunk_max bytes, as the real one
 * streams a trace), close, and dial again, until killed.
 */
static int
run_wsruntime(struct client_opts *o, const char *path, int chunk_max)
{
	static const uint8_t cookie[16] = {
		0xb0, 0x05, 0xe2, 0x01, 0x55, 0xaa, 0x12, 0x34,
		0x56, 0x78, 0x9a, 0xbc, 0xde, 0xf0, 0x0f, 0xf0
	};
	struct cconn	 c;
	uint8_t		 adv[34], req[65536], reply[256], *out;
	char		 up[512], resp[1024];
	size_t		 n, k, m, outcap = 256 * 1024;
	ssize_t		 len;
	uint64_t	 off, want;
	unsigned	 size = 0;

	if ((out = malloc(outcap)) == NULL)
		die("out of memory");
	memcpy(adv, "ADVR_V1", 8);
	memcpy(adv + 8, cookie, 16);
	put64(adv + 24, 4243);
	put16(adv + 32, 0);
	for (;;) {
		if (cconnect(&o->addr, &c) == -1) {
			usleep(10000);
			continue;
		}
		n = (size_t)snprintf(up, sizeof(up), "GET %s HTTP/1.1\r\n"
		    "Host: localhost\r\nUpgrade: websocket\r\n"
		    "Connection: Upgrade\r\n"
		    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
		    "Sec-WebSocket-Version: 13\r\n\r\n", path);
		if (cwrite_all(&c, up, n) == -1)
			goto next;
		for (k = 0; k < sizeof(resp) - 1; k++) {
			if (cread_all(&c, (uint8_t *)resp + k, 1) == -1)
				goto next;
			if (k >= 3 && memcmp(resp + k - 3, "\r\n\r\n", 4) == 0)
				break;
		}
		resp[k] = '\0';
		if (strncmp(resp, "HTTP/1.1 101", 12) != 0)
			die("wsruntime: the upgrade was refused: %.60s", resp);
		if (cwrite_all(&c, out, ws_frame(out, 0x2, adv, 34)) == -1)
			goto next;
		if ((len = ws_read_message(&c, req, sizeof(req))) < HDR_LEN)
			goto next;
		if (req[16] == 0x04 && req[17] == 0x00) {
			n = processinfo_reply(reply);
			(void)cwrite_all(&c, out, ws_frame(out, 0x2, reply, n));
			goto next;
		}
		want = requested_bytes(req, (size_t)len);
		header(reply, OK_STREAM_LEN, 0xff, 0x00);
		put64(reply + HDR_LEN, 0x5e551011);
		if (cwrite_all(&c, out, ws_frame(out, 0x2, reply,
		    OK_STREAM_LEN)) == -1)
			goto next;
		for (off = 0; off < want;) {
			for (m = 0; m + 8 + (size_t)chunk_max <= outcap &&
			    off < want;) {
				k = size++ % (unsigned)chunk_max + 1;
				if (k > want - off)
					k = (size_t)(want - off);
				m += ws_frame(out + m, 0x2,
				    pattern + off % PATTERN_LEN, k);
				off += k;
			}
			if (cwrite_all(&c, out, m) == -1)
				break;
		}
next:
		cclose(&c);
	}
}

static void __attribute__((__noreturn__))
usage(void)
{
	fprintf(stderr,
	    "usage: dsbench server --unix PATH --tcp HOST:PORT "
	    "[--tls HOST:PORT --cert F --key F]\n"
	    "       dsbench stream ADDR --bytes N [--pid P]... [--name N] "
	    "[--runtime-pid P]\n"
	    "       dsbench rr ADDR [--conc C] [--duration S] [--max N] "
	    "[--any-reply]\n"
	    "       dsbench idle ADDR [--n N] [--hold S] --pid P\n"
	    "       dsbench stall ADDR [--n N] [--bytes B] [--hold S] --pid P\n"
	    "       dsbench probe ADDR\n"
	    "       dsbench wsruntime tcp:HOST:PORT --path P [--chunk-max K]\n"
	    "ADDR: unix:PATH, tcp:HOST:PORT or tls:HOST:PORT; every client "
	    "takes --timeout S\n");
	exit(2);
}

int
main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "bytes", required_argument, NULL, 'b' },
		{ "pid", required_argument, NULL, 'p' },
		{ "name", required_argument, NULL, 'N' },
		{ "conc", required_argument, NULL, 'c' },
		{ "duration", required_argument, NULL, 'd' },
		{ "max", required_argument, NULL, 'm' },
		{ "n", required_argument, NULL, 'n' },
		{ "hold", required_argument, NULL, 'h' },
		{ "timeout", required_argument, NULL, 'T' },
		{ "runtime-pid", required_argument, NULL, 'R' },
		{ "path", required_argument, NULL, 'P' },
		{ "chunk-max", required_argument, NULL, 'K' },
		{ "any-reply", no_argument, NULL, 'A' },
		{ NULL, 0, NULL, 0 }
	};
	struct client_opts	 o;
	const char		*mode, *path = "/";
	int			 ch, chunk_max = 4;

	if (argc < 2)
		usage();
	signal(SIGPIPE, SIG_IGN);
	raise_nofile();
	pattern_init();
	mode = argv[1];
	if (strcmp(mode, "server") == 0)
		return (run_server(argc - 1, argv + 1));
	if (argc < 3)
		usage();
	memset(&o, 0, sizeof(o));
	parse_addr(argv[2], &o.addr);
	o.name = argv[2];
	o.bytes = 1ULL << 30;
	o.conc = 1;
	o.duration = 2;
	o.max = 1000000;
	o.n = 1000;
	o.hold = 1;
	optind = 3;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			o.bytes = strtoull(optarg, NULL, 10);
			break;
		case 'p':
			if (o.npids < MAX_PIDS)
				o.pids[o.npids++] = atoi(optarg);
			break;
		case 'N':
			o.name = optarg;
			break;
		case 'R':
			o.runtime_pid = atoi(optarg);
			break;
		case 'c':
			o.conc = atoi(optarg);
			break;
		case 'd':
			o.duration = atof(optarg);
			break;
		case 'm':
			o.max = atol(optarg);
			break;
		case 'n':
			o.n = atoi(optarg);
			break;
		case 'h':
			o.hold = atof(optarg);
			break;
		case 'T':
			timeout_s = atof(optarg);
			break;
		case 'P':
			path = optarg;
			break;
		case 'K':
			chunk_max = atoi(optarg);
			break;
		case 'A':
			o.any_reply = 1;
			break;
		default:
			usage();
		}
	}
	if (o.conc < 1 || o.conc > 64 || o.max < 1 || o.n < 1 ||
	    o.duration <= 0 || o.duration > 600 || timeout_s <= 0 ||
	    chunk_max < 1 || chunk_max > 65535)
		usage();
	if (o.addr.kind == A_TLS)
		client_tls_init();
	if (strcmp(mode, "stream") == 0)
		return (run_stream(&o));
	if (strcmp(mode, "rr") == 0)
		return (run_rr(&o));
	if (strcmp(mode, "idle") == 0)
		return (run_idle(&o, 0));
	if (strcmp(mode, "stall") == 0)
		return (run_idle(&o, 1));
	if (strcmp(mode, "probe") == 0)
		return (run_probe(&o));
	if (strcmp(mode, "wsruntime") == 0)
		return (run_wsruntime(&o, path, chunk_max));
	usage();
}
