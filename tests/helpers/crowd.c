/* SPDX-License-Identifier: ISC */

/*
 * crowd: many connections at once, for the load and limit tests.  Like
 * the fakes, it shares no code with the router.
 *
 *	crowd dribble N INTERVAL-MS SECONDS ADDR
 *		open N connections; each sends the IPC magic one byte per
 *		interval (a slowloris); report how many the peer closed and
 *		after how long: "dribble: closed=K of N min=S max=S"
 *	crowd hold N SECONDS ADDR [SOURCE-IPV4]
 *		open N connections (from SOURCE-IPV4, a loopback address,
 *		if given) and keep them silent for SECONDS (or until stdin
 *		closes); report "hold: opened=K of N"
 *	crowd stall
 *		listen on 127.0.0.1 with a backlog of one, fill it with a
 *		connection of its own and never accept: a peer that is slow
 *		to accept, whose connects stay pending; "stall: port=P"
 *	crowd cycles N ADDR
 *		N ProcessInfo commands one after the other, each on a new
 *		connection, reading the reply to EOF; "cycles: ok=K failed=F"
 *	crowd advertise N ADDR [hold]
 *		N connections that each send an ADVR_V1 advertise with a
 *		cookie of its own and this process's pid, one after the
 *		other; closed at once, or with "hold" kept open until the
 *		process is killed; "advertise: sent=K of N"
 *	crowd churn RATE SECONDS ADDR [SOURCE-IPV4]
 *		for SECONDS, open RATE connections a second that never send
 *		a byte, each kept until the peer closes it (or, past
 *		CHURN_OPEN of them, the oldest goes); "churn: opened=K
 *		closed-by-peer=C"
 *	crowd rejects N ADDR
 *		N connections that send garbage and must be answered with the
 *		runtime's UNKNOWN_MAGIC error frame, and closed;
 *		"rejects: answered=K other=O failed=F"
 *
 * ADDR is a Unix socket path or tcp:A.B.C.D:PORT.  Exit 0 when every
 * connection behaved as expected, 1 otherwise.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static const uint8_t	 processinfo[20] = "DOTNET_IPC_V1\0\x14\0\x04\0\0\0";
static const char	 magic[] = "DOTNET_IPC_V1";

static struct sockaddr_storage	 target;
static socklen_t		 target_len;
static struct sockaddr_in	 source;	/* hold: bind here first */

static int64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000);
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: crowd dribble N INTERVAL-MS SECONDS ADDR\n"
	    "       crowd hold N SECONDS ADDR [SOURCE-IPV4]\n"
	    "       crowd advertise N ADDR [hold]\n"
	    "       crowd stall\n"
	    "       crowd cycles N ADDR\n"
	    "       crowd churn RATE SECONDS ADDR [SOURCE-IPV4]\n"
	    "       crowd rejects N ADDR\n");
	exit(64);
}

static void
parse_addr(const char *s)
{
	struct sockaddr_un	*sun = (struct sockaddr_un *)&target;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&target;
	char			 host[64];
	const char		*colon;

	memset(&target, 0, sizeof(target));
	if (strncmp(s, "tcp:", 4) == 0) {
		s += 4;
		if ((colon = strrchr(s, ':')) == NULL ||
		    (size_t)(colon - s) >= sizeof(host))
			usage();
		memcpy(host, s, colon - s);
		host[colon - s] = '\0';
		sin->sin_family = AF_INET;
		sin->sin_port = htons((uint16_t)atoi(colon + 1));
		if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
			usage();
		target_len = sizeof(*sin);
		return;
	}
	if (strlen(s) >= sizeof(sun->sun_path))
		usage();
	sun->sun_family = AF_UNIX;
	strcpy(sun->sun_path, s);
	target_len = sizeof(*sun);
}

/* Connect, blocking; return the descriptor or -1. */
static int
dial(void)
{
	int	 fd;

	if ((fd = socket(target.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0)) ==
	    -1)
		return (-1);
	if (source.sin_family == AF_INET && bind(fd, (struct sockaddr *)&source,
	    sizeof(source)) == -1) {
		close(fd);
		return (-1);
	}
	if (connect(fd, (struct sockaddr *)&target, target_len) == -1) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Start a connect that does not wait; return the descriptor or -1. */
static int
dial_nonblocking(void)
{
	int	 fd;

	if ((fd = socket(target.ss_family, SOCK_STREAM | SOCK_CLOEXEC |
	    SOCK_NONBLOCK, 0)) == -1)
		return (-1);
	if ((source.sin_family == AF_INET && bind(fd,
	    (struct sockaddr *)&source, sizeof(source)) == -1) ||
	    (connect(fd, (struct sockaddr *)&target, target_len) == -1 &&
	    errno != EINPROGRESS)) {
		close(fd);
		return (-1);
	}
	return (fd);
}

/* Read until EOF; return the bytes read, or -1 on an error. */
static ssize_t
drain(int fd, uint8_t *first, size_t firstlen)
{
	uint8_t	 buf[4096];
	ssize_t	 n, total = 0;

	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		if ((size_t)total < firstlen)
			memcpy(first + total, buf, (size_t)n < firstlen -
			    total ? (size_t)n : firstlen - total);
		total += n;
	}
	return (n == 0 ? total : -1);
}

static int
cmd_cycles(long n)
{
	uint8_t	 reply[24];
	long	 i, ok = 0;
	ssize_t	 got;
	int	 fd;

	for (i = 0; i < n; i++) {
		if ((fd = dial()) == -1)
			continue;
		if (write(fd, processinfo, sizeof(processinfo)) ==
		    (ssize_t)sizeof(processinfo) &&
		    (got = drain(fd, reply, sizeof(reply))) >= 24 &&
		    memcmp(reply, magic, sizeof(magic)) == 0 &&
		    reply[16] == 0xff && reply[17] == 0x00)
			ok++;
		close(fd);
	}
	printf("cycles: ok=%ld failed=%ld\n", ok, n - ok);
	return (ok == n ? 0 : 1);
}

static int
cmd_rejects(long n)
{
	static const char	 garbage[] = "GET / HTTP/1.0\r\n\r\n";
	/* The runtime's answer to a wrong magic: UNKNOWN_MAGIC. */
	static const uint8_t	 frame[24] = "DOTNET_IPC_V1\0\x18\0\xff\xff"
				    "\0\0\x86\x13\x13\x80";
	uint8_t			 reply[24];
	long			 i, answered = 0, other = 0, failed = 0;
	ssize_t			 got;
	int			 fd;

	for (i = 0; i < n; i++) {
		if ((fd = dial()) == -1) {
			failed++;
			continue;
		}
		if (write(fd, garbage, sizeof(garbage) - 1) == -1) {
			failed++;
			close(fd);
			continue;
		}
		got = drain(fd, reply, sizeof(reply));
		if (got == (ssize_t)sizeof(frame) &&
		    memcmp(reply, frame, sizeof(frame)) == 0)
			answered++;
		else if (got >= 0)
			other++;
		else
			failed++;
		close(fd);
	}
	printf("rejects: answered=%ld other=%ld failed=%ld\n", answered,
	    other, failed);
	return (answered == n ? 0 : 1);
}

static int
cmd_advertise(long n, int hold)
{
	uint8_t		 advr[34];
	long		 i, sent = 0;
	uint64_t	 pid = (uint64_t)getpid();
	int		 fd, j;

	memcpy(advr, "ADVR_V1", 8);
	for (j = 0; j < 8; j++)
		advr[24 + j] = (pid >> (8 * j)) & 0xff;
	advr[32] = advr[33] = 0;
	for (i = 0; i < n; i++) {
		for (j = 0; j < 16; j++)
			advr[8 + j] = (uint8_t)(i * 31 + j * 7 + pid);
		memcpy(advr + 8, &i, sizeof(i));
		if ((fd = dial()) == -1)
			continue;
		if (write(fd, advr, sizeof(advr)) == (ssize_t)sizeof(advr))
			sent++;
		if (!hold)
			close(fd);
	}
	printf("advertise: sent=%ld of %ld\n", sent, n);
	fflush(stdout);
	while (hold)
		pause();
	return (sent == n ? 0 : 1);
}

/* Open n connections into fds; return how many opened. */
static long
open_many(struct pollfd *pfd, long n)
{
	long	 i, opened = 0;

	for (i = 0; i < n; i++) {
		pfd[i].fd = dial();
		pfd[i].events = POLLIN;
		if (pfd[i].fd != -1) {
			fcntl(pfd[i].fd, F_SETFL, O_NONBLOCK);
			opened++;
		}
	}
	return (opened);
}

static int
cmd_hold(long n, long seconds)
{
	struct pollfd	*pfd;
	long		 opened, i;
	int64_t		 end;
	char		 c;

	if ((pfd = calloc(n + 1, sizeof(*pfd))) == NULL)
		return (1);
	opened = open_many(pfd, n);
	printf("hold: opened=%ld of %ld\n", opened, n);
	fflush(stdout);
	pfd[n].fd = STDIN_FILENO;
	pfd[n].events = POLLIN;
	end = now_ms() + seconds * 1000;
	while (now_ms() < end) {
		for (i = 0; i <= n; i++)
			pfd[i].revents = 0;
		if (poll(&pfd[n], 1, (int)(end - now_ms())) > 0 &&
		    read(STDIN_FILENO, &c, 1) <= 0)
			break;
	}
	for (i = 0; i < n; i++)
		if (pfd[i].fd != -1)
			close(pfd[i].fd);
	free(pfd);
	return (opened == n ? 0 : 1);
}

#define CHURN_OPEN	2000

static int
cmd_churn(long rate, long seconds)
{
	struct pollfd	 pfd[CHURN_OPEN];
	int64_t		 start = now_ms(), end = start + seconds * 1000;
	long		 opened = 0, by_peer = 0, i, next = 0;
	char		 buf[64];

	for (i = 0; i < CHURN_OPEN; i++) {
		pfd[i].fd = -1;
		pfd[i].events = POLLIN;
	}
	while (now_ms() < end) {
		/* Behind the rate: open the next one, the oldest making room. */
		while (opened < (now_ms() - start) * rate / 1000) {
			if (pfd[next].fd != -1)
				close(pfd[next].fd);
			if ((pfd[next].fd = dial_nonblocking()) != -1)
				opened++;
			next = (next + 1) % CHURN_OPEN;
		}
		if (poll(pfd, CHURN_OPEN, 1) <= 0)
			continue;
		for (i = 0; i < CHURN_OPEN; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			if (read(pfd[i].fd, buf, sizeof(buf)) <= 0) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				by_peer++;
			}
		}
	}
	for (i = 0; i < CHURN_OPEN; i++)
		if (pfd[i].fd != -1)
			close(pfd[i].fd);
	printf("churn: opened=%ld closed-by-peer=%ld\n", opened, by_peer);
	return (0);
}

static int
cmd_dribble(long n, long interval, long seconds)
{
	struct pollfd	*pfd;
	int64_t		*closed_at, start, end, next;
	size_t		*sent;
	long		 opened, i, closed = 0;
	double		 min = -1, max = 0, t;
	char		 buf[64];
	int		 timeout;

	pfd = calloc(n, sizeof(*pfd));
	closed_at = calloc(n, sizeof(*closed_at));
	sent = calloc(n, sizeof(*sent));
	if (pfd == NULL || closed_at == NULL || sent == NULL)
		return (1);
	start = now_ms();
	opened = open_many(pfd, n);
	end = start + seconds * 1000;
	next = start;
	while (now_ms() < end && closed < opened) {
		if (now_ms() >= next) {
			/* One more byte of the magic on every open one. */
			for (i = 0; i < n; i++) {
				if (pfd[i].fd == -1 || closed_at[i] != 0)
					continue;
				if (write(pfd[i].fd, magic + sent[i] %
				    sizeof(magic), 1) == 1)
					sent[i]++;
			}
			next += interval;
		}
		timeout = (int)(next - now_ms());
		if (poll(pfd, n, timeout < 0 ? 0 : timeout) <= 0)
			continue;
		for (i = 0; i < n; i++) {
			if (pfd[i].fd == -1 || closed_at[i] != 0 ||
			    pfd[i].revents == 0)
				continue;
			if (read(pfd[i].fd, buf, sizeof(buf)) <= 0) {
				closed_at[i] = now_ms();
				t = (closed_at[i] - start) / 1000.0;
				if (min < 0 || t < min)
					min = t;
				if (t > max)
					max = t;
				closed++;
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
		}
	}
	printf("dribble: closed=%ld of %ld min=%.1f max=%.1f\n", closed, n,
	    min < 0 ? 0 : min, max);
	for (i = 0; i < n; i++)
		if (pfd[i].fd != -1)
			close(pfd[i].fd);
	free(pfd);
	free(closed_at);
	free(sent);
	return (opened == n && closed == n ? 0 : 1);
}

static int
cmd_stall(void)
{
	struct sockaddr_in	*sin = (struct sockaddr_in *)&target;
	int			 fd;

	memset(&target, 0, sizeof(target));
	sin->sin_family = AF_INET;
	sin->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	target_len = sizeof(*sin);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&target, target_len) == -1 ||
	    listen(fd, 0) == -1 ||
	    getsockname(fd, (struct sockaddr *)&target, &target_len) == -1)
		return (1);
	/* The queue holds one: ours.  Later SYNs are dropped. */
	if (dial() == -1)
		return (1);
	printf("stall: port=%u\n", ntohs(sin->sin_port));
	fflush(stdout);
	for (;;)
		pause();
}

int
main(int argc, char *argv[])
{
	if (argc == 2 && strcmp(argv[1], "stall") == 0)
		return (cmd_stall());
	if (argc < 3)
		usage();
	if (strcmp(argv[1], "dribble") == 0 && argc == 6) {
		parse_addr(argv[5]);
		return (cmd_dribble(atol(argv[2]), atol(argv[3]),
		    atol(argv[4])));
	}
	if (strcmp(argv[1], "hold") == 0 && (argc == 5 || argc == 6)) {
		parse_addr(argv[4]);
		if (argc == 6) {
			source.sin_family = AF_INET;
			if (inet_pton(AF_INET, argv[5], &source.sin_addr) != 1)
				usage();
		}
		return (cmd_hold(atol(argv[2]), atol(argv[3])));
	}
	if (strcmp(argv[1], "churn") == 0 && (argc == 5 || argc == 6)) {
		parse_addr(argv[4]);
		if (argc == 6) {
			source.sin_family = AF_INET;
			if (inet_pton(AF_INET, argv[5], &source.sin_addr) != 1)
				usage();
		}
		return (cmd_churn(atol(argv[2]), atol(argv[3])));
	}
	if (strcmp(argv[1], "cycles") == 0 && argc == 4) {
		parse_addr(argv[3]);
		return (cmd_cycles(atol(argv[2])));
	}
	if (strcmp(argv[1], "advertise") == 0 && (argc == 4 || (argc == 5 &&
	    strcmp(argv[4], "hold") == 0))) {
		parse_addr(argv[3]);
		return (cmd_advertise(atol(argv[2]), argc == 5));
	}
	if (strcmp(argv[1], "rejects") == 0 && argc == 4) {
		parse_addr(argv[3]);
		return (cmd_rejects(atol(argv[2])));
	}
	usage();
}
