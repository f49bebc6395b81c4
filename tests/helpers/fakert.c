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
 *
 * The options, the commands, the sessions and the wire are fakertcore.c's
 * and fakeproto.c's, which winfakert shares; this file is the Linux part:
 * Unix and TCP sockets, poll, pthreads and signals.
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
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fakertcore.h"

#define LISTEN_BACKLOG		255
#define SUN_PATH_MAX		sizeof(((struct sockaddr_un *)0)->sun_path)

struct addr {
	int			 tcp;
	struct sockaddr_storage	 ss;
	socklen_t		 sslen;
	const char		*text;
};

struct conn {
	int			 fd;
};

/* Configuration, fixed after option parsing. */
static struct addr	 listen_addr;
static struct addr	 connect_addr;

/* Process state. */
static int		 quit_pipe[2] = { -1, -1 };
static int		 ctl_pipe[2] = { -1, -1 };
static atomic_int	 quitting;
static int		 listen_fd = -1;
static char		 listen_path[SUN_PATH_MAX];

/* Server thread state; touched by the server thread only. */
static struct conn	*parked;

/* The streaming threads, by session slot, and the core's locks. */
static pthread_t	 stream_threads[MAX_SESSIONS];
static pthread_mutex_t	 locks[2] = {
	PTHREAD_MUTEX_INITIALIZER,
	PTHREAD_MUTEX_INITIALIZER
};
static pthread_cond_t	 sess_cv = PTHREAD_COND_INITIALIZER;

const struct platform	 os_platform = {
	"Linux", "linux-x64", "PATH=/usr/local/bin:/usr/bin:/bin",
	"HOME=/nonexistent"
};

/* A fatal message ends in the errno text, if there is an error. */
const char *
os_fatal_detail(void)
{
	return (errno != 0 ? strerror(errno) : NULL);
}

/* Parse ADDR: a filesystem path, or tcp:HOST:PORT with HOST v4 or [v6]. */
void
os_parse_port(const char *opt, const char *s, enum port which)
{
	struct addr		*a = which == PORT_LISTEN ? &listen_addr :
				    &connect_addr;
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
	pnum = rt_parse_number(opt, port, 0, 65535);
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

static struct conn *
conn_new(int fd)
{
	struct conn	*c;

	if ((c = malloc(sizeof(*c))) == NULL)
		fatal("out of memory");
	c->fd = fd;
	return (c);
}

int
os_read_full(struct conn *c, void *buf, size_t len, size_t *got)
{
	return (read_full(c->fd, buf, len, got));
}

size_t
os_write_full(struct conn *c, const void *buf, size_t len, int timeout)
{
	return (write_full(c->fd, buf, len, timeout));
}

void
os_close(struct conn *c)
{
	close(c->fd);
	free(c);
}

void
os_lock(enum lock l)
{
	pthread_mutex_lock(&locks[l]);
}

void
os_unlock(enum lock l)
{
	pthread_mutex_unlock(&locks[l]);
}

void
os_sessions_wait(void)
{
	pthread_cond_wait(&sess_cv, &locks[LOCK_SESSIONS]);
}

void
os_sessions_wake(void)
{
	pthread_cond_broadcast(&sess_cv);
}

static void *
stream_main(void *arg)
{
	rt_stream((int)(intptr_t)arg);
	return (NULL);
}

int
os_stream_start(int i)
{
	if (pthread_create(&stream_threads[i], NULL, stream_main,
	    (void *)(intptr_t)i) != 0)
		return (-1);
	return (0);
}

void
os_stream_join(int i)
{
	pthread_join(stream_threads[i], NULL);
}

int
os_quitting(void)
{
	return (atomic_load(&quitting));
}

/* Tell the main thread that ResumeRuntime came. */
void
os_resume(void)
{
	if (write(ctl_pipe[1], "R", 1) != 1)
		fatal("write");
}

uint64_t
os_pid(void)
{
	return ((uint64_t)getpid());
}

void
os_random_cookie(uint8_t *c)
{
	int	fd;

	if ((fd = open("/dev/urandom", O_RDONLY | O_CLOEXEC)) == -1)
		fatal("/dev/urandom");
	if (read(fd, c, COOKIE_LEN) != COOKIE_LEN)
		fatal("/dev/urandom");
	close(fd);
}

/*
 * Open the connect port: connect (TCP with a 100 ms timeout), then send
 * the advertise within 100 ms.  Returns the parked connection or NULL.
 */
static struct conn *
connect_port(void)
{
	uint8_t		advr[ADVR_LEN];
	socklen_t	elen = sizeof(int);
	int		fd, err = 0, family = connect_addr.ss.ss_family;

	if ((fd = socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (NULL);
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
	fp_advertise_put(advr, cookie, opt_pid);
	if (write_full(fd, advr, sizeof(advr), ADVR_TIMEOUT_MS) !=
	    sizeof(advr))
		goto fail;
	ev_log("advertise");
	return (conn_new(fd));
fail:
	close(fd);
	return (NULL);
}

/* Drop the parked connection after its peer hung up. */
static void
parked_hup(void)
{
	rt_hup(parked);
	parked = NULL;
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
	n = recv(parked->fd, &c, 1, MSG_PEEK | MSG_DONTWAIT);
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
	rt_serve(conn_new(fd), PORT_LISTEN, NULL, 0);
}

/*
 * Run the diagnostic server loop: keep zero or one parked connection on
 * the connect port, poll it with the listen port, serve one at a time.
 */
static void *
server_main(void *arg)
{
	struct pollfd	 pfd[3];
	struct conn	*c;
	int		 backoff = 0, hup_delay = 0, timeout, n, r;
	int		 ip, il;

	(void)arg;
	while (!atomic_load(&quitting)) {
		os_lock(LOCK_SESSIONS);
		rt_sessions_reap();
		os_unlock(LOCK_SESSIONS);

		timeout = -1;
		if (have_connect && parked == NULL) {
			if (hup_delay) {
				hup_delay = 0;
				timeout = BACKOFF_MIN_MS;
			} else if ((parked = connect_port()) != NULL)
				backoff = 0;
			else {
				backoff = rt_backoff(backoff);
				timeout = backoff;
			}
		}

		n = 0;
		pfd[n].fd = quit_pipe[0];
		pfd[n++].events = POLLIN;
		ip = il = -1;
		if (parked != NULL) {
			ip = n;
			pfd[n].fd = parked->fd;
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
				c = parked;
				parked = NULL;
				rt_serve(c, PORT_CONNECT, NULL, 0);
			} else if (r == 0) {
				parked_hup();
				hup_delay = 1;
			}
		} else if (il != -1 && pfd[il].revents != 0)
			accept_and_serve();

		if (opt_exit_after != 0 && served >= opt_exit_after)
			break;
	}
	if (parked != NULL) {
		os_close(parked);
		parked = NULL;
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

void
os_usage(void)
{
	fprintf(stderr,
	    "usage: fakert [--listen ADDR] [--connect ADDR] [--suspend] "
	    "[--pid N]\n"
	    "              [--cookie HEX32] [--stream-bytes N] "
	    "[--stream-chunk N]\n"
	    "              [--events FILE] [--exit-after N] [--name NAME] "
	    "[--info-pid N]\n"
	    "              [-- WORD...]\n"
	    "ADDR is a socket path or tcp:HOST:PORT (IPv4 or [IPv6])\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	struct sigaction	 sa;
	sigset_t		 set, oset;
	pthread_t		 server;
	const char		*events;
	int			 fd, i;
	char			 c;

	events = rt_options(argc, argv);

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
			rt_resumed();
			continue;
		}
		break;
	}

	atomic_store(&quitting, 1);
	if (write(quit_pipe[1], "Q", 1) != 1)
		fatal("write");
	pthread_join(server, NULL);

	rt_sessions_finish();

	if (listen_fd != -1) {
		close(listen_fd);
		if (listen_path[0] != '\0')
			unlink(listen_path);
	}
	rt_exit();
	for (i = 0; i < 2; i++) {
		close(quit_pipe[i]);
		close(ctl_pipe[i]);
	}
	return (0);
}
