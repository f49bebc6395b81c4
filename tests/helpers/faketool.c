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
 *
 * The options, the commands and the wire are faketoolcore.c's and
 * fakeproto.c's, which winfaketool shares; this file is the Linux part:
 * Unix and TCP sockets, poll, the listen role, pthreads and signals.
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
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "faketoolcore.h"

#define ADVR_TIMEOUT_MS		250
#define MAX_RUNTIMES		64
#define SUN_PATH_MAX		sizeof(((struct sockaddr_un *)0)->sun_path)

struct conn {
	int			 fd;
};

struct runtime {
	uint8_t			 cookie[COOKIE_LEN];
	uint64_t		 pid;
	struct conn		*conn;
};

/* Target. */
static int			 role_listen;
static int			 target_tcp;
static struct sockaddr_storage	 target;
static socklen_t		 target_len;
static char			 listen_path[SUN_PATH_MAX];

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

/* collect --stop-after-bytes: the thread that stops the session. */
static pthread_t		 stopper;

/* raw: SIGUSR1 ends a --hold-ms early. */
static volatile sig_atomic_t	 hold_cut;

void
os_out_lock(void)
{
	pthread_mutex_lock(&out_mtx);
}

void
os_out_unlock(void)
{
	pthread_mutex_unlock(&out_mtx);
}

int64_t
os_now_ms(void)
{
	struct timespec	ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

/* The text of the last I/O error on this thread. */
const char *
os_errtext(void)
{
	return (strerror(io_errno));
}

uint64_t
os_pid(void)
{
	return ((uint64_t)getpid());
}

static struct conn *
conn_new(int fd)
{
	struct conn	*c;

	if ((c = malloc(sizeof(*c))) != NULL)
		c->fd = fd;
	return (c);
}

void
os_close(struct conn *c)
{
	close(c->fd);
	free(c);
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
		left = until - os_now_ms();
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
enum io
os_read_some(struct conn *c, void *buf, size_t len, size_t *got,
    int64_t until)
{
	ssize_t	n;
	enum io	r;

	*got = 0;
	for (;;) {
		n = read(c->fd, buf, len);
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
		if ((r = wait_io(c->fd, POLLIN, until)) != IO_OK)
			return (r);
	}
}

/* Write exactly len bytes before until. */
enum io
os_write_full(struct conn *c, const void *buf, size_t len, int64_t until)
{
	const uint8_t	*p = buf;
	size_t		 done = 0;
	ssize_t		 n;
	enum io		 r;

	while (done < len) {
		n = send(c->fd, p + done, len - done, MSG_NOSIGNAL);
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
		if ((r = wait_io(c->fd, POLLOUT, until)) != IO_OK)
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
enum io
os_sleep_ms(int64_t ms)
{
	struct timespec	ts;
	int64_t		until = os_now_ms() + ms, left;

	for (;;) {
		left = until - os_now_ms();
		if (os_now_ms() >= deadline)
			return (IO_TIMEOUT);
		if (left <= 0 || hold_cut)
			return (IO_OK);
		if (left > deadline - os_now_ms())
			left = deadline - os_now_ms();
		ts.tv_sec = left / 1000;
		ts.tv_nsec = (left % 1000) * 1000000;
		nanosleep(&ts, NULL);
	}
}

/* Parse ADDR: PATH[,connect|,listen] or tcp:HOST:PORT[,connect|,listen]. */
int
os_parse_target(const char *arg)
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
	if (fp_parse_u64(port, &pnum) == -1 || (pnum == 0 && !role_listen) ||
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
	struct conn	*c;
	uint8_t		 advr[ADVR_LEN], cookie[COOKIE_LEN];
	char		 hex[2 * COOKIE_LEN + 1];
	uint64_t	 pid;
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
		if ((c = conn_new(fd)) == NULL) {
			close(fd);
			continue;
		}
		if (read_full(c, advr, sizeof(advr), os_now_ms() +
		    ADVR_TIMEOUT_MS) != IO_OK) {
			diag("no advertise within %d ms; closed",
			    ADVR_TIMEOUT_MS);
			os_close(c);
			continue;
		}
		if (fp_advertise_get(advr, cookie, &pid) == -1) {
			diag("bad advertise magic; closed");
			os_close(c);
			continue;
		}

		pthread_mutex_lock(&park_mtx);
		rt = NULL;
		for (i = 0; i < nruntimes; i++) {
			if (memcmp(runtimes[i].cookie, cookie, COOKIE_LEN) ==
			    0) {
				rt = &runtimes[i];
				break;
			}
		}
		if (rt == NULL && nruntimes < MAX_RUNTIMES) {
			rt = &runtimes[nruntimes++];
			memcpy(rt->cookie, cookie, COOKIE_LEN);
			rt->conn = NULL;
			fp_hex_string(hex, rt->cookie, COOKIE_LEN);
			out("advertise pid=%" PRIu64 " cookie=%s", pid, hex);
		}
		if (rt == NULL) {
			os_close(c);
		} else {
			/* A newer connection replaces the parked one. */
			if (rt->conn != NULL)
				os_close(rt->conn);
			rt->conn = c;
			rt->pid = pid;
			pthread_cond_broadcast(&park_cv);
		}
		pthread_mutex_unlock(&park_mtx);
	}
	return (NULL);
}

/* Take the parked connection of the first runtime that advertised. */
/*
 * The deadline, on os_now_ms()'s monotonic clock, as park_cv waits for
 * it: on that clock where POSIX's clock selection lets the condition
 * take it; else (macOS) on the real-time clock, as far from now.
 */
static void
park_deadline(struct timespec *ts)
{
#if defined(_POSIX_CLOCK_SELECTION) && _POSIX_CLOCK_SELECTION > 0
	ts->tv_sec = deadline / 1000;
	ts->tv_nsec = (deadline % 1000) * 1000000;
#else
	struct timespec	now;
	int64_t		left = deadline - os_now_ms(), at;

	clock_gettime(CLOCK_REALTIME, &now);
	at = (int64_t)now.tv_sec * 1000 + now.tv_nsec / 1000000 +
	    (left > 0 ? left : 0);
	ts->tv_sec = at / 1000;
	ts->tv_nsec = (at % 1000) * 1000000;
#endif
}

static enum io
take_parked(struct conn **cp)
{
	struct timespec	ts;
	int		rc = 0;

	park_deadline(&ts);
	pthread_mutex_lock(&park_mtx);
	while (nruntimes == 0 || runtimes[0].conn == NULL) {
		rc = pthread_cond_timedwait(&park_cv, &park_mtx, &ts);
		if (rc == ETIMEDOUT)
			break;
	}
	if (nruntimes > 0 && runtimes[0].conn != NULL) {
		*cp = runtimes[0].conn;
		runtimes[0].conn = NULL;
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
stay_silent(struct conn *c)
{
	enum io	r;

	r = wait_io(c->fd, POLLIN, os_now_ms() + opt_silent_ms);
	if (r == IO_TIMEOUT)
		return (os_now_ms() >= deadline ? IO_TIMEOUT : IO_OK);
	if (r == IO_OK) {
		diag("closed (or spoken to) while silent");
		return (IO_EOF);
	}
	return (r);
}

/* Get a connection for one command: parked, or freshly connected. */
enum io
os_open(struct conn **cp)
{
	struct conn	*c;
	socklen_t	 elen = sizeof(int);
	int		 fd, err = 0;
	enum io		 r;

	if (role_listen)
		return (take_parked(cp));
	if ((fd = socket(target.ss_family, SOCK_STREAM | SOCK_CLOEXEC,
	    0)) == -1) {
		io_errno = errno;
		return (IO_ERR);
	}
	if ((c = conn_new(fd)) == NULL) {
		io_errno = ENOMEM;
		close(fd);
		return (IO_ERR);
	}
	if (target_tcp) {
		set_nonblock(fd);
		if (connect(fd, (struct sockaddr *)&target, target_len) ==
		    -1) {
			if (errno != EINPROGRESS) {
				io_errno = errno;
				os_close(c);
				return (IO_ERR);
			}
			if ((r = wait_io(fd, POLLOUT, deadline)) != IO_OK) {
				os_close(c);
				return (r);
			}
			if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err,
			    &elen) == -1 || err != 0) {
				io_errno = err != 0 ? err : errno;
				os_close(c);
				return (IO_ERR);
			}
		}
	} else {
		if (connect(fd, (struct sockaddr *)&target, target_len) ==
		    -1) {
			io_errno = errno;
			os_close(c);
			return (IO_ERR);
		}
		set_nonblock(fd);
	}
	if (opt_silent_ms > 0 && (r = stay_silent(c)) != IO_OK) {
		os_close(c);
		return (r);
	}
	*cp = c;
	return (IO_OK);
}

/* A socket half-closes: --shut-wr is never refused. */
int
os_shut_wr_ok(const char *what)
{
	return (0);
}

void
os_shut_wr(struct conn *c)
{
	(void)shutdown(c->fd, SHUT_WR);
}

/* raw --reset: an RST on close (SO_LINGER 0), reported as ECONNRESET. */
enum io
os_reset(struct conn *c)
{
	struct linger	lg;

	lg.l_onoff = 1;
	lg.l_linger = 0;
	(void)setsockopt(c->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
	io_errno = ECONNRESET;
	return (IO_ERR);
}

int
os_is_reset(void)
{
	return (io_errno == ECONNRESET);
}

static void *
stopper_main(void *arg)
{
	tool_stopper();
	return (NULL);
}

/* Start the stopper thread: 0, or -1 with the error. */
int
os_stopper_start(void)
{
	if (pthread_create(&stopper, NULL, stopper_main, NULL) != 0) {
		diag("pthread_create failed");
		io_errno = EAGAIN;
		return (-1);
	}
	return (0);
}

void
os_stopper_join(void)
{
	pthread_join(stopper, NULL);
}

static void
on_usr1(int sig)
{
	hold_cut = 1;
}

/* raw: SIGUSR1 ends a --hold-ms early. */
void
os_raw_signals(void)
{
	struct sigaction	sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_usr1;	/* no SA_RESTART: poll returns */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
}

int
os_hold_cut(void)
{
	return (hold_cut);
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
#if defined(_POSIX_CLOCK_SELECTION) && _POSIX_CLOCK_SELECTION > 0
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
#endif
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
		if (runtimes[i].conn != NULL)
			os_close(runtimes[i].conn);
	}
	close(listen_fd);
	close(quit_pipe[0]);
	close(quit_pipe[1]);
	pthread_cond_destroy(&park_cv);
	if (listen_path[0] != '\0')
		unlink(listen_path);
}

void
os_usage(void)
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

/* Ignore SIGPIPE; in the listen role, listen and start the acceptor. */
int
os_start(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (role_listen && start_listen() == -1)
		return (-1);
	return (0);
}

void
os_finish(void)
{
	if (role_listen)
		stop_listen();
}

int
main(int argc, char *argv[])
{
	return (tool_main(argc, argv));
}
