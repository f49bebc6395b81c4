/* SPDX-License-Identifier: ISC */

/* Small helpers: clocks, addresses, number parsing, start-up allocation. */

#include "config.h"

#include <sys/socket.h>
#include <sys/un.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/util.h"

/* Milliseconds on the monotonic clock. */
uint64_t
now_ms(void)
{
	struct timespec	 ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ((uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000);
}

void
timeval_ms(struct timeval *tv, int ms)
{
	tv->tv_sec = ms / 1000;
	tv->tv_usec = (ms % 1000) * 1000;
}

/* Seconds since a time taken with gettimeofday. */
double
elapsed_s(const struct timeval *since)
{
	struct timeval	 now, d;

	gettimeofday(&now, NULL);
	timersub(&now, since, &d);
	return (d.tv_sec + d.tv_usec / 1e6);
}

/* Format a socket address as host:port, [v6]:port or a socket path. */
void
sockaddr_name(const struct sockaddr *sa, socklen_t len, char *buf,
    size_t size)
{
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;
	const struct sockaddr_un	*sun;
	char				 host[INET6_ADDRSTRLEN];

	switch (sa->sa_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)sa;
		inet_ntop(AF_INET, &sin->sin_addr, host, sizeof(host));
		snprintf(buf, size, "%s:%u", host, ntohs(sin->sin_port));
		break;
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)sa;
		inet_ntop(AF_INET6, &sin6->sin6_addr, host, sizeof(host));
		snprintf(buf, size, "[%s]:%u", host, ntohs(sin6->sin6_port));
		break;
	case AF_UNIX:
		sun = (const struct sockaddr_un *)sa;
		if ((size_t)len <= offsetof(struct sockaddr_un, sun_path) ||
		    sun->sun_path[0] == '\0')
			snprintf(buf, size, "unnamed");
		else
			snprintf(buf, size, "%.*s",
			    (int)(len - offsetof(struct sockaddr_un, sun_path)),
			    sun->sun_path);
		break;
	default:
		snprintf(buf, size, "family %d", sa->sa_family);
		break;
	}
}

/*
 * Parse a duration: decimal digits with an optional fraction ("5",
 * "0.25"), in seconds, or followed by "s" or "ms".  Store milliseconds,
 * rounded to the nearest.  Only that grammar is taken: strtod() would
 * also take nan, inf, hex floats, exponents, signs and blanks, and a NaN
 * passes every range check.
 */
int
parse_ms(const char *s, int *ms)
{
	const char	*p = s;
	uint64_t	 v = 0, place = 1000, unit_ms = 1000;
	int		 digits = 0;

	/* v counts ten-thousandths of the unit. */
	for (; *p >= '0' && *p <= '9'; p++, digits++) {
		v = v * 10 + (uint64_t)(*p - '0') * 10000;
		if (v > (uint64_t)INT_MAX * 10000)
			return (-1);
	}
	if (*p == '.') {
		for (p++; *p >= '0' && *p <= '9'; p++, digits++) {
			v += (uint64_t)(*p - '0') * place;
			place /= 10;
		}
	}
	if (digits == 0)
		return (-1);
	if (strcmp(p, "ms") == 0)
		unit_ms = 1;
	else if (*p != '\0' && strcmp(p, "s") != 0)
		return (-1);
	v = (v * unit_ms + 5000) / 10000;
	if (v > INT_MAX)
		return (-1);
	*ms = (int)v;
	return (0);
}

/* Parse a byte count with an optional k, m or g suffix (powers of 1024). */
int
parse_size(const char *s, size_t *size)
{
	char			*end;
	unsigned long long	 v;
	unsigned		 shift = 0;

	errno = 0;
	v = strtoull(s, &end, 10);
	if (end == s || errno != 0 || *s == '-')
		return (-1);
	switch (*end) {
	case 'k':
	case 'K':
		shift = 10;
		break;
	case 'm':
	case 'M':
		shift = 20;
		break;
	case 'g':
	case 'G':
		shift = 30;
		break;
	case '\0':
		break;
	default:
		return (-1);
	}
	if (shift != 0 && end[1] != '\0')
		return (-1);
	if (v > (SIZE_MAX >> shift))
		return (-1);
	*size = (size_t)v << shift;
	return (0);
}

/* The value of a hexadecimal digit, either case; -1 for another byte. */
int
hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/* Parse an id given as a decimal number; -1 if it is not one. */
int
parse_id(const char *s, unsigned long *id)
{
	char	*end;

	if (*s < '0' || *s > '9')
		return (-1);
	errno = 0;
	*id = strtoul(s, &end, 10);
	if (*end != '\0' || errno != 0 || *id >= (unsigned long)(uid_t)-1)
		return (-1);
	return (0);
}

/* Allocate at start-up: failing here leaves nothing to clean up. */
void *
xcalloc(size_t n, size_t size)
{
	void	*p;

	if ((p = calloc(n, size)) == NULL)
		fatalx("out of memory");
	return (p);
}

char *
xstrdup(const char *s)
{
	char	*p;

	if ((p = strdup(s)) == NULL)
		fatalx("out of memory");
	return (p);
}

/*
 * The peer an IP address is, as key bytes (4 or 16 in *len): an IPv4-
 * mapped address is the IPv4 peer, and every loopback address is this
 * host, one peer (127.0.0.0/8 holds 16 million of them).  Return -1 for
 * another family.
 */
int
sockaddr_peer(const struct sockaddr *sa, uint8_t key[16], size_t *len)
{
	static const uint8_t		 loopback[4] = { 127, 0, 0, 1 };
	const struct sockaddr_in6	*sin6;
	const uint8_t			*a;

	switch (sa->sa_family) {
	case AF_INET:
		a = (const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr;
		break;
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)sa;
		a = sin6->sin6_addr.s6_addr;
		if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			a = loopback;
		else if (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr))
			a += 12;
		else {
			memcpy(key, a, 16);
			*len = 16;
			return (0);
		}
		break;
	default:
		return (-1);
	}
	memcpy(key, a[0] == 127 ? loopback : a, 4);
	*len = 4;
	return (0);
}
