/* SPDX-License-Identifier: ISC */

/*
 * Included first in every file of the Windows build (-include): the POSIX
 * names dsroute's portable files use that Windows spells differently or
 * lacks.  Whatever needs more than a name lives in platform/win32.c; what
 * is missing from the C library is in compat.c.
 */

#ifndef COMPAT_WIN32_H
#define COMPAT_WIN32_H

/* asprintf(), and gmtime_r() and localtime_r() from mingw's headers. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE	1
#endif
#define _POSIX_THREAD_SAFE_FUNCTIONS	200112L

#define WIN32_LEAN_AND_MEAN
#define NOGDI
#define NOMINMAX

#include <winsock2.h>
#include <ws2tcpip.h>

#include <stddef.h>
#include <stdio.h>
#include <stdint.h>
#include <sys/types.h>

typedef unsigned int	uid_t;
typedef unsigned int	gid_t;

/*
 * Windows has no uids.  A pipe's DACL admits dsroute's own user and
 * SYSTEM only, so a local peer is judged as dsroute's own user, this one
 * number; uid= and gid= rules have nothing to match there.
 */
#define DSROUTE_WIN32_UID	((uid_t)1)
static inline uid_t
geteuid(void)
{
	return (DSROUTE_WIN32_UID);
}

/*
 * No reload signal exists: SIGHUP is a number the C runtime never
 * raises, left out of the signals the daemon watches (platform_signals).
 */
#define SIGHUP		1

/*
 * Winsock never raises SIGPIPE, and shutdown() names its directions so.
 * Standard error is never a socket there (platform_log_fd), so log.c's
 * non-blocking send to one does not happen.
 */
#define MSG_NOSIGNAL	0
#define MSG_DONTWAIT	0
#define SHUT_RD		SD_RECEIVE
#define SHUT_WR		SD_SEND
#define SHUT_RDWR	SD_BOTH

/*
 * Winsock takes socket options and buffers as char pointers, reports
 * failures through WSAGetLastError() rather than errno, and says
 * WSAEWOULDBLOCK where a non-blocking connect() is in progress.  These
 * wrappers (compat.c) keep dsroute's errno checks true; socket() takes
 * SOCK_NONBLOCK and SOCK_CLOEXEC as on Linux.
 */
#define SOCK_NONBLOCK	0x4000
#define SOCK_CLOEXEC	0x8000
#define socket(d, t, p)		compat_socket((d), (t), (p))
#define connect(s, a, n)	compat_connect((s), (a), (n))
#define recv(s, b, n, f)	compat_recv((s), (b), (n), (f))
#define send(s, b, n, f)	compat_send((s), (b), (n), (f))
#define getsockopt(s, l, o, v, n) compat_getsockopt((s), (l), (o), (v), (n))
#define setsockopt(s, l, o, v, n) \
	setsockopt((s), (l), (o), (const char *)(v), (n))
int	 compat_socket(int, int, int);
int	 compat_connect(int, const struct sockaddr *, socklen_t);
ssize_t	 compat_recv(int, void *, size_t, int);
ssize_t	 compat_send(int, const void *, size_t, int);
int	 compat_getsockopt(int, int, int, void *, socklen_t *);

/*
 * libevent's evbuffer_write() leaves its Winsock error where errno is
 * not; its header is read first, so that the name is only replaced in
 * calls.
 */
#include <event2/buffer.h>
#define evbuffer_write(b, s)	compat_evbuffer_write((b), (s))
int	 compat_evbuffer_write(struct evbuffer *, int);
int	 compat_errno(int);

/*
 * msvcrt's strerror() knows the C runtime's own errno values only: the
 * POSIX ones mingw adds, which compat_errno() gives socket failures
 * (ECONNREFUSED, ECONNRESET, ETIMEDOUT...), come out as "Unknown
 * error".  compat_strerror() words them as glibc does.  <string.h> is
 * read first, so that the name is only replaced in calls.
 */
#include <string.h>
#define strerror(e)	compat_strerror(e)
char	*compat_strerror(int);

/* compat.c */
char	*strndup(const char *, size_t);
char	*strsep(char **, const char *);
void	*reallocarray(void *, size_t, size_t);
ssize_t	 getline(char **, size_t *, FILE *);

/*
 * With __USE_MINGW_ANSI_STDIO, printf is mingw's C99 one, which knows %zu
 * and %lld; gcc must check formats against it, not the MS runtime's.
 */
#define __printf__	__gnu_printf__

#ifndef timersub
#define timersub(a, b, r) do {						\
	(r)->tv_sec = (a)->tv_sec - (b)->tv_sec;			\
	(r)->tv_usec = (a)->tv_usec - (b)->tv_usec;			\
	if ((r)->tv_usec < 0) {						\
		(r)->tv_sec--;						\
		(r)->tv_usec += 1000000;				\
	}								\
} while (0)
#endif

#endif /* COMPAT_WIN32_H */
