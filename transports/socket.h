/* SPDX-License-Identifier: ISC */

/*
 * What the socket transports share, private to transports/: the sockets
 * a service manager passed (inherit.c), the plain stream over a connected
 * socket (socket.c), which uds and tcp use as it is, and the socket level
 * of tcp (tcp.c), which tls builds on.
 */

#ifndef SOCKET_H
#define SOCKET_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

struct stream;
struct endpoint;
struct evbuffer;

/* inherit.c: a passed socket for the listener with its address. */
int		 inherit_has_unix(const char *);
int		 inherit_take_unix(const struct endpoint *, const char *);
int		 inherit_take_inet(const struct endpoint *,
		    const struct sockaddr *);

/*
 * uds.c: connecting to a socket file, and setting up a connection to one:
 * the peer's credentials, the name its socket is bound at, and that a
 * runtime's default socket name is the listener's own (dir.c, proc.c).
 */
struct default_name;
struct peer_cred;
int		 uds_dial_path(const char *, int *);
int		 uds_dial_found(struct endpoint *, const char *, int *);
int		 uds_peer_cred(struct stream *, struct peer_cred *);
int		 uds_peer_bound_name(struct stream *, char *, size_t);
int		 uds_conn_setup(struct stream *, int, const char *);
const char	*uds_named_listener_refusal(const char *,
		    const struct peer_cred *, const struct default_name *);

/*
 * finder.c: runtimes found by their default sockets (dir:, proc:), dialled
 * newest first; what was passed over is said once (FINDER_SAID remembered).
 */
#define FINDER_SAID	256
#define FOUND_PATH_MAX	108	/* sun_path */

struct found {
	uint64_t	 key;		/* the runtime's start time */
	char		 path[FOUND_PATH_MAX];
};

struct found_list {
	struct found	*v;
	int		 n;
	int		 room;
};

struct finder {
	char		 current[FOUND_PATH_MAX]; /* the runtime serving */
	uint64_t	 said[FINDER_SAID];	/* hashes of what and why */
	unsigned int	 nsaid;
	unsigned int	 scan_said;		/* lines of this scan */
	unsigned int	 scan_held;		/* ... and held back */
};

int		 found_add(struct found_list *, uint64_t, const char *);
void		 found_free(struct found_list *);
void		 finder_scan(struct finder *);
void		 finder_passed_over(const struct endpoint *, struct finder *,
		    const char *, const char *);
int		 finder_dial(const struct endpoint *, struct finder *,
		    struct found_list *, const char *(*)(const struct endpoint *,
		    int, const char *), int *);

/* socket.c */
ssize_t		 socket_read(struct stream *, void *, size_t);
ssize_t		 socket_write(struct stream *, const void *, size_t);
ssize_t		 socket_write_buffer(struct stream *, struct evbuffer *);
int		 socket_shutdown(struct stream *);
long		 socket_unsent(struct stream *);
ssize_t		 socket_read_pipe(struct stream *, int, size_t);
ssize_t		 socket_write_pipe(struct stream *, int, size_t);
int		 socket_handshake(struct stream *);
void		 socket_teardown(struct stream *);

/*
 * tcp.c: what tcp keeps of an endpoint, behind ep->t; a tls endpoint's
 * starts with it.
 */
struct tcp_endpoint {
	char			*host;		/* NULL: loopback */
	char			 port[8];
	int			 wildcard;	/* "*": every interface */
	struct sockaddr_storage	 addr;		/* resolved at start-up */
	socklen_t		 addrlen;
};

#define TCP(ep)		((struct tcp_endpoint *)(ep)->t)

int		 tcp_parse_address(struct tcp_endpoint *, const char *, char *,
		    size_t);
void		 tcp_clear_address(struct tcp_endpoint *);
int		 tcp_check(const struct endpoint *, char *, size_t);
void		 tcp_set_name(struct endpoint *);
void		 tcp_auto_role(struct endpoint *);
int		 tcp_resolve(struct endpoint *, char *, size_t);
int		 tcp_loopback(const struct endpoint *);
int		 tcp_listen(struct endpoint *, char *, size_t);
int		 tcp_dial(struct endpoint *, int *);
int		 tcp_setup(struct stream *, int);

#endif /* SOCKET_H */
