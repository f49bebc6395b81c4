/* SPDX-License-Identifier: ISC */

/*
 * The few C library functions dsroute uses that mingw's runtime lacks,
 * with their POSIX (or BSD) meaning.
 */

#include "config.h"

#include <errno.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

char *
strndup(const char *s, size_t max)
{
	size_t	 n;
	char	*p;

	for (n = 0; n < max && s[n] != '\0'; n++)
		;
	if ((p = malloc(n + 1)) == NULL)
		return (NULL);
	memcpy(p, s, n);
	p[n] = '\0';
	return (p);
}

char *
strsep(char **sp, const char *delim)
{
	char	*s = *sp, *end;

	if (s == NULL)
		return (NULL);
	if ((end = strpbrk(s, delim)) != NULL) {
		*end = '\0';
		*sp = end + 1;
	} else
		*sp = NULL;
	return (s);
}

void *
reallocarray(void *p, size_t n, size_t size)
{
	if (size != 0 && n > SIZE_MAX / size) {
		errno = ENOMEM;
		return (NULL);
	}
	return (realloc(p, n * size));
}

/* One [...] of a pattern at *pp against c: 1 if it matches. */
static int
bracket_match(const char **pp, char c)
{
	const char	*p = *pp;
	int		 negate = 0, match = 0;
	char		 lo, hi;

	if (*p == '!' || *p == '^') {
		negate = 1;
		p++;
	}
	do {
		if (*p == '\0')
			return (-1);	/* no closing bracket */
		lo = hi = *p++;
		if (*p == '-' && p[1] != ']' && p[1] != '\0') {
			hi = p[1];
			p += 2;
		}
		if (lo <= c && c <= hi)
			match = 1;
	} while (*p != ']');
	*pp = p + 1;
	return (match != negate);
}

/*
 * fnmatch(3) with no flags: '*' and '?' match any characters, '/'
 * included, '[...]' a set, and '\' quotes the next character.
 */
int
fnmatch(const char *pattern, const char *s, int flags)
{
	const char	*p = pattern;
	int		 m;

	(void)flags;
	for (;;) {
		switch (*p) {
		case '\0':
			return (*s == '\0' ? 0 : FNM_NOMATCH);
		case '*':
			while (*p == '*')
				p++;
			if (*p == '\0')
				return (0);
			for (; *s != '\0'; s++)
				if (fnmatch(p, s, flags) == 0)
					return (0);
			return (FNM_NOMATCH);
		case '?':
			if (*s == '\0')
				return (FNM_NOMATCH);
			p++;
			s++;
			break;
		case '[':
			p++;
			if (*s == '\0' || (m = bracket_match(&p, *s)) == 0)
				return (FNM_NOMATCH);
			if (m == -1) {		/* a lone '[' is itself */
				if (*s != '[')
					return (FNM_NOMATCH);
			}
			s++;
			break;
		case '\\':
			if (p[1] != '\0')
				p++;
			/* FALLTHROUGH */
		default:
			if (*p != *s)
				return (FNM_NOMATCH);
			p++;
			s++;
			break;
		}
	}
}

ssize_t
getline(char **buf, size_t *size, FILE *fp)
{
	size_t	 n = 0;
	int	 c;
	char	*p;

	if (*buf == NULL || *size == 0) {
		if ((*buf = realloc(*buf, 128)) == NULL)
			return (-1);
		*size = 128;
	}
	while ((c = getc(fp)) != EOF) {
		if (n + 1 >= *size) {
			if (*size > SIZE_MAX / 2 ||
			    (p = realloc(*buf, *size * 2)) == NULL) {
				errno = ENOMEM;
				return (-1);
			}
			*buf = p;
			*size *= 2;
		}
		(*buf)[n++] = (char)c;
		if (c == '\n')
			break;
	}
	if (n == 0)
		return (-1);
	(*buf)[n] = '\0';
	return ((ssize_t)n);
}

/* The errno for a Winsock error. */
int
compat_errno(int wsa)
{
	switch (wsa) {
	case WSAEWOULDBLOCK:	return (EAGAIN);
	case WSAEINPROGRESS:	return (EINPROGRESS);
	case WSAEINTR:		return (EINTR);
	case WSAECONNRESET:	return (ECONNRESET);
	case WSAECONNABORTED:	return (ECONNABORTED);
	case WSAECONNREFUSED:	return (ECONNREFUSED);
	case WSAENOTCONN:	return (ENOTCONN);
	case WSAESHUTDOWN:	return (EPIPE);
	case WSAETIMEDOUT:	return (ETIMEDOUT);
	case WSAENETUNREACH:	return (ENETUNREACH);
	case WSAEHOSTUNREACH:	return (EHOSTUNREACH);
	case WSAENETDOWN:	return (ENETDOWN);
	case WSAEADDRINUSE:	return (EADDRINUSE);
	case WSAEADDRNOTAVAIL:	return (EADDRNOTAVAIL);
	case WSAEAFNOSUPPORT:	return (EAFNOSUPPORT);
	case WSAEMFILE:		return (EMFILE);
	case WSAENOBUFS:	return (ENOBUFS);
	case WSAEACCES:		return (EACCES);
	case WSAEINVAL:		return (EINVAL);
	case WSAENOTSOCK:	return (ENOTSOCK);
	case WSAEMSGSIZE:	return (EMSGSIZE);
	case 0:			return (0);
	default:		return (EIO);
	}
}

#undef strerror

/* strerror(), with the POSIX errno values msvcrt does not know. */
char *
compat_strerror(int e)
{
	const char	*s;

	switch (e) {
	case EADDRINUSE:	s = "Address already in use"; break;
	case EADDRNOTAVAIL:	s = "Cannot assign requested address"; break;
	case EAFNOSUPPORT:	s = "Address family not supported by protocol";
				break;
	case EALREADY:		s = "Operation already in progress"; break;
	case ECANCELED:		s = "Operation canceled"; break;
	case ECONNABORTED:	s = "Software caused connection abort"; break;
	case ECONNREFUSED:	s = "Connection refused"; break;
	case ECONNRESET:	s = "Connection reset by peer"; break;
	case EDESTADDRREQ:	s = "Destination address required"; break;
	case EHOSTUNREACH:	s = "No route to host"; break;
	case EINPROGRESS:	s = "Operation now in progress"; break;
	case EISCONN:		s = "Transport endpoint is already connected";
				break;
	case ELOOP:		s = "Too many levels of symbolic links"; break;
	case EMSGSIZE:		s = "Message too long"; break;
	case ENETDOWN:		s = "Network is down"; break;
	case ENETRESET:		s = "Network dropped connection on reset";
				break;
	case ENETUNREACH:	s = "Network is unreachable"; break;
	case ENOBUFS:		s = "No buffer space available"; break;
	case ENOPROTOOPT:	s = "Protocol not available"; break;
	case ENOTCONN:		s = "Transport endpoint is not connected"; break;
	case ENOTSOCK:		s = "Socket operation on non-socket"; break;
	case ENOTSUP:
	case EOPNOTSUPP:	s = "Operation not supported"; break;
	case EOVERFLOW:		s = "Value too large for defined data type";
				break;
	case EPROTO:		s = "Protocol error"; break;
	case EPROTONOSUPPORT:	s = "Protocol not supported"; break;
	case EPROTOTYPE:	s = "Protocol wrong type for socket"; break;
	case ETIMEDOUT:		s = "Connection timed out"; break;
	case EWOULDBLOCK:	s = "Resource temporarily unavailable"; break;
	default:
		return (strerror(e));
	}
	return ((char *)s);
}

#undef socket
#undef connect
#undef recv
#undef send
#undef getsockopt

int
compat_socket(int domain, int type, int protocol)
{
	SOCKET	 s;
	u_long	 on = 1;

	/* Not inherited by the programs dsroute runs: CLOEXEC always. */
	s = WSASocketW(domain, type & ~(SOCK_NONBLOCK | SOCK_CLOEXEC),
	    protocol, NULL, 0, WSA_FLAG_OVERLAPPED | WSA_FLAG_NO_HANDLE_INHERIT);
	if (s == INVALID_SOCKET) {
		errno = compat_errno(WSAGetLastError());
		return (-1);
	}
	if ((type & SOCK_NONBLOCK) && ioctlsocket(s, FIONBIO, &on) != 0) {
		errno = compat_errno(WSAGetLastError());
		closesocket(s);
		return (-1);
	}
	return ((int)s);
}

int
compat_connect(int s, const struct sockaddr *sa, socklen_t len)
{
	int	 e;

	if (connect((SOCKET)s, sa, len) == 0)
		return (0);
	e = WSAGetLastError();
	errno = e == WSAEWOULDBLOCK ? EINPROGRESS : compat_errno(e);
	return (-1);
}

ssize_t
compat_recv(int s, void *buf, size_t len, int flags)
{
	int	 n;

	if (len > INT_MAX)
		len = INT_MAX;
	if ((n = recv((SOCKET)s, buf, (int)len, flags)) == SOCKET_ERROR) {
		errno = compat_errno(WSAGetLastError());
		return (-1);
	}
	return (n);
}

ssize_t
compat_send(int s, const void *buf, size_t len, int flags)
{
	int	 n;

	if (len > INT_MAX)
		len = INT_MAX;
	if ((n = send((SOCKET)s, buf, (int)len, flags)) == SOCKET_ERROR) {
		errno = compat_errno(WSAGetLastError());
		return (-1);
	}
	return (n);
}

/* SO_ERROR's value is a Winsock error too. */
int
compat_getsockopt(int s, int level, int name, void *val, socklen_t *len)
{
	if (getsockopt((SOCKET)s, level, name, val, len) == SOCKET_ERROR) {
		errno = compat_errno(WSAGetLastError());
		return (-1);
	}
	if (level == SOL_SOCKET && name == SO_ERROR && *len >= (int)sizeof(int))
		*(int *)val = compat_errno(*(int *)val);
	return (0);
}

#undef evbuffer_write

int
compat_evbuffer_write(struct evbuffer *buf, int s)
{
	int	 n;

	if ((n = evbuffer_write(buf, s)) == -1)
		errno = compat_errno(WSAGetLastError());
	return (n);
}
