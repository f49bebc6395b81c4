/* SPDX-License-Identifier: ISC */

/*
 * Small helpers every layer uses (util.c): the monotonic clock, printable
 * socket addresses, the parsers of option values, and allocations that
 * may only fail at start-up.  Pure: nothing here asks the system more
 * than the time (users and groups by name are the platform's, ids.c).
 */

#ifndef UTIL_H
#define UTIL_H

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <netinet/in.h>

#include <stddef.h>
#include <stdint.h>

/* A network address, in the room it needs. */
union sockaddr_inet {
	struct sockaddr		 sa;
	struct sockaddr_in	 sin;
	struct sockaddr_in6	 sin6;
};

uint64_t	 now_ms(void);
void		 timeval_ms(struct timeval *, int);
double		 elapsed_s(const struct timeval *);
void		 sockaddr_name(const struct sockaddr *, socklen_t, char *,
		    size_t);
int		 sockaddr_peer(const struct sockaddr *, uint8_t [16], size_t *);
int		 parse_ms(const char *, int *);
int		 parse_size(const char *, size_t *);
int		 parse_id(const char *, unsigned long *);
int		 hex_digit(int);
void		*xcalloc(size_t, size_t);
char		*xstrdup(const char *);

#endif /* UTIL_H */
