/* SPDX-License-Identifier: ISC */

/*
 * tlscrowd: many idle TLS sessions through a router, for measuring what
 * one costs (tests/tls-memory.sh).  Like the fakes, it shares no code
 * with the router.
 *
 *	tlscrowd sink PATH
 *		listen on the Unix socket PATH and accept every connection:
 *		a runtime that answers the first bytes of each with a
 *		24-byte OK frame, then discards what arrives and stays silent
 *		with the connection open (a trace with nothing to say).
 *		Prints "accepted K" after each connection.
 *	tlscrowd hold [-n | -k] N SECONDS tcp:A.B.C.D:PORT CA [CERT KEY]
 *		open N TLS connections one after the other, verifying the
 *		server against CA and presenting CERT if given; on each, send
 *		a ProcessInfo command and read the 24-byte answer (with -n,
 *		neither; with -k, a TLS 1.3 KeyUpdate that asks the peer to
 *		update its keys too goes between the two) and keep it open.
 *		Prints "hold: opened=K of N", then holds them for SECONDS or
 *		until killed.
 *
 * Exit 0 when every connection opened, 1 otherwise, 64 on usage errors.
 */

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/ssl.h>

#define SINK_MAX	100000

static const uint8_t	 processinfo[20] = "DOTNET_IPC_V1\0\x14\0\x04\0\0\0";
static const uint8_t	 ok_frame[24] = "DOTNET_IPC_V1\0\x18\0\xff\0\0\0\0\0\0";

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr, "usage: tlscrowd sink PATH\n"
	    "       tlscrowd hold [-n | -k] N SECONDS tcp:A.B.C.D:PORT CA "
	    "[CERT KEY]\n");
	exit(64);
}

/* Accept forever; answer each connection once, then drop what comes. */
static int
cmd_sink(const char *path)
{
	struct sockaddr_un	 sun;
	struct pollfd		*pfd;
	uint8_t			*answered;
	char			 buf[4096];
	long			 n = 1, accepted = 0, i;
	int			 fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		usage();
	strcpy(sun.sun_path, path);
	if ((pfd = calloc(SINK_MAX + 1, sizeof(*pfd))) == NULL ||
	    (answered = calloc(SINK_MAX + 1, 1)) == NULL ||
	    (fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1 ||
	    listen(fd, 1024) == -1) {
		perror("tlscrowd: sink");
		return (1);
	}
	pfd[0].fd = fd;
	pfd[0].events = POLLIN;
	for (;;) {
		if (poll(pfd, n, -1) == -1) {
			if (errno == EINTR)
				continue;
			perror("tlscrowd: poll");
			return (1);
		}
		if ((pfd[0].revents & POLLIN) && n <= SINK_MAX &&
		    (fd = accept(pfd[0].fd, NULL, NULL)) != -1) {
			pfd[n].fd = fd;
			pfd[n++].events = POLLIN;
			printf("accepted %ld\n", ++accepted);
			fflush(stdout);
		}
		for (i = 1; i < n; i++) {
			if (pfd[i].fd == -1 || pfd[i].revents == 0)
				continue;
			if (read(pfd[i].fd, buf, sizeof(buf)) <= 0 ||
			    (!answered[i] && write(pfd[i].fd, ok_frame,
			    sizeof(ok_frame)) != (ssize_t)sizeof(ok_frame))) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
			}
			answered[i] = 1;
		}
	}
}

/* Parse tcp:A.B.C.D:PORT. */
static void
parse_addr(const char *s, struct sockaddr_in *sin)
{
	char		 host[64];
	const char	*colon;

	if (strncmp(s, "tcp:", 4) != 0 || (colon = strrchr(s + 4, ':')) ==
	    NULL || (size_t)(colon - s - 4) >= sizeof(host))
		usage();
	memcpy(host, s + 4, colon - s - 4);
	host[colon - s - 4] = '\0';
	memset(sin, 0, sizeof(*sin));
	sin->sin_family = AF_INET;
	sin->sin_port = htons((uint16_t)atoi(colon + 1));
	if (inet_pton(AF_INET, host, &sin->sin_addr) != 1)
		usage();
}

/* Read exactly len bytes, blocking; 0 on success. */
static int
read_full(SSL *ssl, uint8_t *buf, int len)
{
	int	 n, got = 0;

	while (got < len) {
		if ((n = SSL_read(ssl, buf + got, len - got)) <= 0)
			return (-1);
		got += n;
	}
	return (0);
}

/*
 * Send a command and read its answer; with mode 'k', ask the peer to
 * update its keys in between: its KeyUpdate comes before the answer.
 */
static int
exchange(SSL *ssl, int mode)
{
	uint8_t	 reply[sizeof(ok_frame)];

	if (SSL_write(ssl, processinfo, sizeof(processinfo)) !=
	    (int)sizeof(processinfo))
		return (-1);
	if (mode == 'k' && (SSL_key_update(ssl, SSL_KEY_UPDATE_REQUESTED) !=
	    1 || SSL_do_handshake(ssl) != 1))
		return (-1);
	if (read_full(ssl, reply, sizeof(reply)) == -1 ||
	    memcmp(reply, ok_frame, sizeof(reply)) != 0)
		return (-1);
	return (0);
}

/* Connect and complete a handshake, blocking; NULL on failure. */
static SSL *
open_one(SSL_CTX *ctx, const struct sockaddr_in *sin, int mode)
{
	SSL	*ssl;
	int	 fd;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) == -1)
		return (NULL);
	if (connect(fd, (const struct sockaddr *)sin, sizeof(*sin)) == -1 ||
	    (ssl = SSL_new(ctx)) == NULL) {
		close(fd);
		return (NULL);
	}
	if (SSL_set_fd(ssl, fd) != 1 || SSL_connect(ssl) != 1 ||
	    (mode != 'n' && exchange(ssl, mode) == -1)) {
		ERR_print_errors_fp(stderr);
		SSL_free(ssl);
		close(fd);
		return (NULL);
	}
	return (ssl);
}

static int
cmd_hold(int argc, char *argv[])
{
	struct sockaddr_in	 sin;
	SSL_CTX			*ctx;
	SSL			**ssl;
	long			 n, seconds, i, opened = 0;
	int			 mode = 0;

	if (argc > 0 && (strcmp(argv[0], "-n") == 0 ||
	    strcmp(argv[0], "-k") == 0)) {
		mode = argv[0][1];
		argc--;
		argv++;
	}
	if (argc != 4 && argc != 6)
		usage();
	n = atol(argv[0]);
	seconds = atol(argv[1]);
	parse_addr(argv[2], &sin);
	if ((ctx = SSL_CTX_new(TLS_client_method())) == NULL ||
	    SSL_CTX_load_verify_locations(ctx, argv[3], NULL) != 1 ||
	    (argc == 6 && (SSL_CTX_use_certificate_chain_file(ctx,
	    argv[4]) != 1 || SSL_CTX_use_PrivateKey_file(ctx, argv[5],
	    SSL_FILETYPE_PEM) != 1))) {
		ERR_print_errors_fp(stderr);
		return (1);
	}
	SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
	if ((ssl = calloc(n, sizeof(*ssl))) == NULL)
		return (1);
	for (i = 0; i < n; i++)
		opened += (ssl[i] = open_one(ctx, &sin, mode)) != NULL;
	printf("hold: opened=%ld of %ld\n", opened, n);
	fflush(stdout);
	sleep((unsigned)seconds);
	for (i = 0; i < n; i++) {
		if (ssl[i] != NULL) {
			close(SSL_get_fd(ssl[i]));
			SSL_free(ssl[i]);
		}
	}
	free(ssl);
	SSL_CTX_free(ctx);
	return (opened == n ? 0 : 1);
}

int
main(int argc, char *argv[])
{
	signal(SIGPIPE, SIG_IGN);
	if (argc == 3 && strcmp(argv[1], "sink") == 0)
		return (cmd_sink(argv[2]));
	if (argc >= 2 && strcmp(argv[1], "hold") == 0)
		return (cmd_hold(argc - 2, argv + 2));
	usage();
}
