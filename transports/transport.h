/* SPDX-License-Identifier: ISC */

/*
 * The transport operations table: the one face every transport shows the
 * rest of dsroute.  The endpoint grammar, the routes, the sessions and
 * the pump see an endpoint and a connection only through these
 * operations; they never call a socket option, a TLS library or a
 * credential lookup themselves, nor read what a transport keeps behind
 * ep->t and c->tstate.  Each transport is one file that fills in a table;
 * transport.c lists the tables by prefix.  Adding a transport adds a file
 * and a line there.
 */

#ifndef TRANSPORT_H
#define TRANSPORT_H

#include <sys/types.h>

#include <stddef.h>

#include "common/util.h"

struct acl_policy;
struct default_name;
struct event;
struct event_base;
struct evbuffer;
struct found_list;
struct identity;
struct sockfile;
struct transport;

enum endpoint_role {
	ROLE_AUTO,
	ROLE_LISTEN,
	ROLE_CONNECT
};

/*
 * What a connect endpoint reaches: a runtime, a tool that listens, or
 * another dsroute whose runtimes a mirror shows (docs/extension.md).
 */
enum endpoint_peer {
	PEER_AUTO,
	PEER_RUNTIME,
	PEER_TOOL,
	PEER_ROUTER
};

/*
 * An endpoint (router/endpoint.c parses it): what every transport has,
 * and what only its transport reads, behind t.  The last five are the
 * engine's; a transport leaves them alone.
 */
struct endpoint {
	const struct transport	*transport;
	void			*t;		/* the transport's own */
	enum endpoint_role	 role;		/* as given, then as decided */
	const char		*why;		/* why this role */
	enum endpoint_peer	 peer;		/* connect: what listens there */
	const char		*peer_why;
	char			 name[160];	/* printable, with the bound port */

	char			*spec;		/* as the user wrote it */
	char			*transport_spec; /* spec less its policy options */
	struct acl_policy	*policy;	/* NULL: the defaults */
	int			 warm;		/* spares kept (warm=), */
	int			 warm_given;	/* ... as given */
};

/* An option ,name[=value] of an endpoint, and what sets it. */
struct endpoint_option {
	const char	*name;
	int		 takes_value;
	int		 (*set)(struct endpoint *, const char *, char *, size_t);
};

/* The ids a local endpoint's socket file is given: owner= and group=. */
struct endpoint_ids {
	int		 have_uid;
	uid_t		 uid;
	int		 have_gid;
	gid_t		 gid;
};

/*
 * A connection as its transport sees it: the engine's conn holds one.  A
 * transport fills in who the peer is (its address or credentials, and
 * a verified identity), and why an operation failed; it never decides
 * what the peer may do.
 */
struct stream {
	int			 fd;
	int			 error;		/* errno of the last failure */
	const char		*why;		/* or the transport's reason */
	const struct transport	*transport;
	struct endpoint		*endpoint;
	void			*tstate;	/* the transport's own */
	/* own_events: what the transport makes active (the conn's). */
	struct event		*rev;
	struct event		*wev;

	/* The peer.  A session holds two of these: no holes. */
	struct identity		*identity;	/* a verified peer, if any */
	union sockaddr_inet	 addr;		/* a network peer's, or AF_UNSPEC */
	int			 have_cred;	/* a local peer's credentials */
	pid_t			 pid;
	uid_t			 uid;
	gid_t			 gid;
	unsigned		 sndbuf_grown:1; /* the transport grew it once */
};

/* Results of stream operations besides a byte count. */
#define IO_EOF		0	/* orderly end of stream */
#define IO_ERROR	(-1)	/* reset or failure: errno or stream->error says */
#define IO_WANT_READ	(-2)	/* retry when the socket is readable */
#define IO_WANT_WRITE	(-3)	/* retry when the socket is writable */

/* Who can reach a listener, as far as its transport can tell. */
enum exposure {
	EXPOSURE_NONE,		/* this host, or peers it authenticates */
	EXPOSURE_WARN,		/* beyond this host, authenticating nobody */
	EXPOSURE_REFUSE		/* beyond this host in plaintext */
};

struct transport {
	const char		*name;		/* "uds", in names and logs */
	const char *const	*prefixes;	/* "uds:", "unix:", NULL */
	const char		*example;	/* parses, bar the checks */
	int			 local;		/* peers are local processes */
	int			 identities;	/* peers may have an identity */
	int			 plain;		/* close() ends a stream whole */
	int			 no_half_close;	/* shutdown ends both ways */
	int			 tls;		/* its handshakes count as TLS ones */
	const struct endpoint_option *options;	/* its own ,name=value */
	size_t			 noptions;
	/* A transport whose options it takes too, its state first in ep->t. */
	const struct transport	*options_of;

	/*
	 * The endpoint.  parse takes the address after the prefix and makes
	 * ep->t; check looks at options that only make sense together;
	 * clear frees ep->t; set_name writes ep->name.  At start-up:
	 * auto_role decides a role none was given, resolve looks names up,
	 * exposure says who can reach a listener, prepare loads what
	 * connections will need (TLS contexts) and release drops it.  On
	 * SIGHUP reload makes that state anew (NULL and a reason on
	 * failure), to be committed by reload_commit or thrown away by
	 * reload_free.  describe adds to the start-up line, howto logs how
	 * a runtime or a tool uses the endpoint, given the route's other
	 * one (transport_serves() says which come to a listener);
	 * runtime_address writes what a runtime of this host puts in
	 * DOTNET_DiagnosticPorts to dial it (-1 where none can).
	 * runtime_port says whether it names a runtime's default diagnostic
	 * port, file_owner who owns
	 * its socket file, granted_ids the owner= and group= it gives one.
	 *
	 * parse, clear, set_name, auto_role and every socket and stream
	 * operation but unlisten, pending and unsent are required (the unit
	 * test test_transport holds every transport to that); the others
	 * may be NULL where a transport has nothing to do.
	 */
	int	 (*parse)(struct endpoint *, const char *, char *, size_t);
	int	 (*check)(const struct endpoint *, char *, size_t);
	void	 (*clear)(struct endpoint *);
	void	 (*set_name)(struct endpoint *);
	void	 (*auto_role)(struct endpoint *);
	int	 (*resolve)(struct endpoint *, char *, size_t);
	enum exposure (*exposure)(const struct endpoint *);
	int	 (*prepare)(struct endpoint *, char *, size_t);
	void	 (*release)(struct endpoint *);
	void	*(*reload)(struct endpoint *, char *, size_t);
	void	 (*reload_commit)(struct endpoint *, void *);
	void	 (*reload_free)(void *);
	void	 (*describe)(const struct endpoint *, char *, size_t);
	void	 (*howto)(const struct endpoint *, const struct endpoint *);
	int	 (*runtime_address)(const struct endpoint *, char *, size_t);
	int	 (*runtime_port)(const struct endpoint *);
	int	 (*file_owner)(const struct endpoint *, uid_t *);
	void	 (*granted_ids)(const struct endpoint *, struct endpoint_ids *);
	/* Whether peers' identities are verified (verify= is not none). */
	int	 (*verifies_peers)(const struct endpoint *);
	/*
	 * dsroute -n, after prepare: what listen will need that can be
	 * checked without listening (a socket file's directory).
	 */
	int	 (*preflight)(const struct endpoint *, char *, size_t);

	/*
	 * Sockets.  listen returns a listening, non-blocking descriptor or
	 * -1 with a message in err; unlisten undoes what it made (a socket
	 * file).  dial returns a descriptor whose non-blocking connect has
	 * started, with *pending set while it is in progress, or -1 with
	 * errno set.
	 */
	int	 (*listen)(struct endpoint *, char *, size_t);
	void	 (*unlisten)(struct endpoint *);
	int	 (*dial)(struct endpoint *, int *);

	/*
	 * A mirror (router/mirror.c): a transport that has these listens
	 * not once but at one name per runtime.  listen_name listens at
	 * name, writing its full path into path and what it made into the
	 * sockfile, which unlisten_name removes; name_dir is the directory
	 * they are in, the TMPDIR of a process whose socket is there.
	 */
	int	 (*listen_name)(struct endpoint *, const char *, char *, size_t,
		    struct sockfile *, char *, size_t);
	void	 (*unlisten_name)(struct sockfile *);
	const char *(*name_dir)(const struct endpoint *);

	/*
	 * Runtimes found by their sockets (dir:, proc:): find lists the
	 * sockets there now, each with its KEY (the runtime's start time),
	 * passing over what is no runtime's; dial_found dials one of them,
	 * whose listener setup then checks as for dial; watch, where it can,
	 * says when to look again sooner than the next rescan.
	 */
	int	 (*find)(struct endpoint *, struct found_list *);
	int	 (*dial_found)(struct endpoint *, const char *, int *);
	/* A descriptor readable when find may find more or less, or -1. */
	int	 (*watch)(struct endpoint *);

	/*
	 * Streams.  setup runs once the socket is connected (accepted or
	 * dialled): socket options, the peer's credentials or address,
	 * c->tstate.  handshake returns 0 when the stream is ready, having
	 * set c->identity for a verified peer.  read fills the buffer with
	 * as much as is there without blocking; write sends from memory;
	 * write_buffer sends from an evbuffer and drains what it sent.
	 * pending, where a transport buffers (TLS), says whether it holds
	 * input the socket will not signal again.  shutdown ends our
	 * sending direction; IO_WANT_WRITE asks to be called again.
	 * teardown frees c->tstate, without a goodbye: an abrupt end must
	 * look like one.  read_pipe and write_pipe, where a plain stream
	 * is faster moved inside the kernel, read into and write from a
	 * kernel pipe (platform_kpipe_open) as read and write do memory.
	 */
	/*
	 * Descriptors libevent cannot watch (Windows named pipes).  A
	 * transport that sets own_events gets conns whose events have no
	 * descriptor: arm says which of them the conn waits for, and the
	 * transport makes those active itself, from any thread, until it
	 * is armed otherwise or torn down.  accept_start replaces listen
	 * for it: it calls back in the loop's thread with each connected
	 * descriptor, and unlisten stops it.  close ends a descriptor that
	 * no conn holds (transport_close; a socket otherwise).
	 */
	int	 own_events;
	void	 (*arm)(struct stream *, int, int);
	int	 (*accept_start)(struct endpoint *, void (*)(int, void *),
		    void *, char *, size_t);
	void	 (*close)(int);

	int	 (*setup)(struct stream *, int);
	int	 (*handshake)(struct stream *);
	ssize_t	 (*read)(struct stream *, void *, size_t);
	ssize_t	 (*write)(struct stream *, const void *, size_t);
	ssize_t	 (*write_buffer)(struct stream *, struct evbuffer *);
	size_t	 (*pending)(struct stream *);
	long	 (*unsent)(struct stream *);
	int	 (*shutdown)(struct stream *);
	void	 (*teardown)(struct stream *);
	ssize_t	 (*read_pipe)(struct stream *, int, size_t);
	ssize_t	 (*write_pipe)(struct stream *, int, size_t);
};

/*
 * What the daemon gives the transports before any endpoint starts: its
 * loop, for the events a transport keeps of its own (a WebSocket's pings,
 * a named pipe's wake-ups), and the settings they read.
 */
struct transport_env {
	struct event_base	*base;
	int			 ws_ping_interval_ms;
};
extern struct transport_env	 transport_env;

/*
 * local_SYSTEM.c: the system's local transports, NULL-terminated, and
 * the prefixes it has no transport for, with why, ended by a NULL prefix.
 */
struct transport_absent {
	const char	*prefix;
	const char	*why;
};
extern const struct transport *const	 transports_local[];
extern const struct transport_absent	 transports_absent[];

/* transport.c: the transports, by the prefix of an endpoint. */
const struct transport *transport_find(const char *, size_t *);
const struct transport *transport_nth(size_t);
const char	*transport_unavailable(const char *);
void		 transport_close(const struct transport *, int);
int		 transport_option_elsewhere(const char *);
int		 endpoint_set_string(char **, const char *, char *, size_t);
const char	*stream_error(const struct stream *);
void		 transport_serves(const struct endpoint *,
		    const struct endpoint *, int *, int *);
void		 transport_howto_local(const struct endpoint *,
		    const struct endpoint *, const char *,
		    const struct default_name *);
void		 transport_prefixes(char *, size_t);

/*
 * inherit.c: the listening sockets a service manager passed.  The daemon
 * takes them before the routes start, which hand them to the listeners
 * with their addresses, and refuses the start if one is left over.
 */
int		 inherit_open(char *, size_t);
int		 inherit_unclaimed(char *, size_t);
void		 inherit_close(void);

/* What front ends may ask of particular transports. */
int		 tcp_address(const struct endpoint *, char *, size_t, int *);

/*
 * The daemon's metrics over tls: (metrics_http.c): a libevent bufferevent
 * that accepts a TLS client with a prepared listener's context, its
 * socket given later; NULL where the TLS library has none (mbed TLS with
 * libevent 2.1), as tls_server_bufferevents() says beforehand.
 */
struct bufferevent;
const char	*tls_library(void);
int		 tls_server_bufferevents(void);
struct bufferevent *tls_server_bufferevent(const struct endpoint *,
		    struct event_base *);

#endif /* TRANSPORT_H */
