/* SPDX-License-Identifier: ISC */

/*
 * Included first in every file of the macOS build (-include): the few
 * calls of Linux that the portable files make and macOS lacks, in their
 * Linux spelling, so that no shared file tells the systems apart.
 * socket() and socketpair() take SOCK_NONBLOCK and SOCK_CLOEXEC, which
 * are set with fcntl() once the socket is made, SO_NOSIGPIPE with them;
 * pipe2() takes O_CLOEXEC and O_NONBLOCK likewise; clearenv() and
 * reallocarray() are here.  Between the call and the fcntl() a fork()
 * would see the descriptor without close-on-exec: dsroute forks only on
 * its one thread, which is busy here.  Each is static inline, so that
 * the test peers, which link nothing of the router, have them too.  What
 * needs more than a spelling is platform/darwin.c's.
 */

#ifndef COMPAT_DARWIN_H
#define COMPAT_DARWIN_H

/* The system extensions (_DARWIN_C_SOURCE) before any system header. */
#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/*
 * Apple's <sys/cdefs.h> defines __dead as nothing, an obsolete spelling;
 * the portable files take it for noreturn, as the BSDs and log.h do.
 */
#undef __dead
#define __dead		__attribute__((__noreturn__))

#define SOCK_NONBLOCK	0x20000000
#define SOCK_CLOEXEC	0x10000000

extern char	**environ;

/* Close fd, keeping the errno of what failed before. */
static inline void
compat_close_keep_errno(int fd)
{
	int	 saved = errno;

	(void)close(fd);
	errno = saved;
}

/* Set close-on-exec and non-blocking on fd, as asked; -1 on failure. */
static inline int
compat_fd_flags(int fd, int cloexec, int nonblock)
{
	int	 flags;

	if (cloexec && fcntl(fd, F_SETFD, FD_CLOEXEC) == -1)
		return (-1);
	if (nonblock && ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1))
		return (-1);
	return (0);
}

/*
 * A socket with Linux's type flags.  SIGPIPE is ignored process-wide
 * (platform_init()), and MSG_NOSIGNAL is honoured; SO_NOSIGPIPE makes
 * sure of a socket we made whatever a send() asks.
 */
static inline int
compat_socket(int domain, int type, int protocol)
{
	int	 fd, on = 1;

	fd = socket(domain, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC), protocol);
	if (fd == -1)
		return (-1);
	if (compat_fd_flags(fd, type & SOCK_CLOEXEC, type & SOCK_NONBLOCK) ==
	    -1) {
		compat_close_keep_errno(fd);
		return (-1);
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_NOSIGPIPE, &on, sizeof(on));
	return (fd);
}

static inline int
compat_socketpair(int domain, int type, int protocol, int fds[2])
{
	int	 cloexec = type & SOCK_CLOEXEC, nonblock = type & SOCK_NONBLOCK;
	int	 i, on = 1;

	if (socketpair(domain, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC),
	    protocol, fds) == -1)
		return (-1);
	for (i = 0; i < 2; i++) {
		if (compat_fd_flags(fds[i], cloexec, nonblock) == -1) {
			compat_close_keep_errno(fds[0]);
			compat_close_keep_errno(fds[1]);
			return (-1);
		}
		(void)setsockopt(fds[i], SOL_SOCKET, SO_NOSIGPIPE, &on,
		    sizeof(on));
	}
	return (0);
}

static inline int
compat_pipe2(int fds[2], int flags)
{
	int	 i;

	if (pipe(fds) == -1)
		return (-1);
	for (i = 0; i < 2; i++) {
		if (compat_fd_flags(fds[i], flags & O_CLOEXEC,
		    flags & O_NONBLOCK) == -1) {
			compat_close_keep_errno(fds[0]);
			compat_close_keep_errno(fds[1]);
			return (-1);
		}
	}
	return (0);
}

/* An empty environment, as glibc's clearenv() leaves it. */
static inline int
compat_clearenv(void)
{
	static char	*none[1];

	environ = none;
	return (0);
}

/* OpenBSD's reallocarray(): realloc() of n * size, unless that overflows. */
static inline void *
compat_reallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return (NULL);
	}
	return (realloc(p, n * size));
}

#define socket(d, t, p)		compat_socket((d), (t), (p))
#define socketpair(d, t, p, f)	compat_socketpair((d), (t), (p), (f))
#define pipe2(f, fl)		compat_pipe2((f), (fl))
#define clearenv()		compat_clearenv()
#define reallocarray(p, n, s)	compat_reallocarray((p), (n), (s))

#endif /* COMPAT_DARWIN_H */
