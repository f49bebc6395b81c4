/* SPDX-License-Identifier: ISC */

/*
 * The pairing engine: routes of two endpoints, the sessions that pair a
 * tool's connection with a runtime's, the runtimes known by their
 * cookie, the pump between two connections, the judge of first
 * messages and the session limits.  It sees transports only through
 * their operations table.
 */

#ifndef ENGINE_H
#define ENGINE_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <event2/event_struct.h>

#include <stddef.h>
#include <stdint.h>

#include "common/ipc.h"
#include "common/util.h"
#include "router/endpoint.h"

struct evbuffer;
struct acl_runtime;
struct conn;
struct evconnlistener;
struct exchange;
struct ext_runtime;
struct finding;
struct identity;
struct kpipe;
struct link;
struct mirror;
struct mirror_entry;
struct peer_count;
struct process_info;
struct route;
struct runtime;
struct session;
struct transport;
struct warm_pool;

/* A side of a route: LOCAL is the first endpoint given, REMOTE the other. */
#define SIDE_LOCAL		0
#define SIDE_REMOTE		1
#define OTHER_SIDE(s)		(1 - (s))

/*
 * Whom a conn tells what happened (conn.c): a session, an exchange, or
 * the record of a parked runtime, each with a table of its own.  ready
 * and failed end a connect or a handshake (-1: the owner closed);
 * event is the conn's readiness once it is open.
 */
struct conn_owner {
	int	 (*ready)(struct conn *);
	int	 (*failed)(struct conn *, const char *);
	void	 (*event)(struct conn *, short);
};

/* One side of a session: a socket behind its transport (conn.c). */
struct conn {
	struct stream		 io;		/* what the transport sees */
	const struct conn_owner	*owner;		/* told what happens */
	struct session		*session;	/* NULL while parked */
	struct runtime		*parked_in;	/* the record holding it parked */
	struct exchange		*exchange;	/* the router's own (exchange.c) */
	const char		*path;		/* a found runtime's, to dial */
	int			 side;
	uint32_t		 unsent_seen;	/* at the last idle check */
	struct event		 rev;
	struct event		 wev;
	struct evbuffer		*out;		/* bytes waiting to go out here */
	struct kpipe		*kpipe;		/* ...or in a kernel pipe (pump.c) */

	struct peer_count	*counted;	/* the peer it counts for */

	uint64_t		 nwritten;

	unsigned		 rev_added:1;	/* rev is in the loop */
	unsigned		 wev_added:1;
	unsigned		 connecting:1;	/* non-blocking connect pending */
	unsigned		 handshaking:1;
	unsigned		 reading:1;	/* the session wants its bytes */
	unsigned		 writing:1;	/* writes are let through */
	unsigned		 eof:1;		/* the peer ended its sending side */
	unsigned		 peer_closed:1;	/* ...as the event loop saw */
	unsigned		 throttled:1;	/* the peer's output is full */
	unsigned		 shut:1;	/* we ended our sending side */
	unsigned		 shut_pending:1; /* ...but it waits to be sent */
	unsigned		 rwant_write:1;	/* a read waits for writability */
	unsigned		 wwant_read:1;	/* a write waits for readability */
	unsigned		 no_kpipe:1;	/* a pipe could not be made */
};

/*
 * The states of a session (session.c), each with its deadline; which may
 * follow which is session.c's table of transitions.
 */
enum session_state {
	S_NEW,			/* made, not started */
	S_CLASSIFY,		/* reading the first bytes of an accepted conn */
	S_PROBE,		/* client-client: asking the runtime who it is */
	S_DIAL,			/* connecting the other side */
	S_WAIT_RUNTIME,		/* a tool waits for a parked runtime */
	S_AWAIT_COMMAND,	/* advertise sent; the tool's command pending */
	S_PUMP,			/* forwarding both ways */
	S_DENY,			/* an error frame or our answer, then close */
	S_HOLD			/* a refused runtime, held so it redials late */
};

/*
 * Every open connection costs one of these, so its members are ordered to
 * leave no holes and its flags are bits (bench/README.md, idle memory).
 */
struct session {
	uint64_t		 id;
	struct route		*route;
	enum session_state	 state;
	int			 tool_side;	/* -1 until classified */
	struct conn		 conn[2];	/* indexed by side */
	struct runtime		*runtime;	/* record of the paired runtime */
	struct event		*timer;		/* the deadline of the state;
						   none while pumping */
	struct event		*idle;		/* --idle-timeout, made if set */
	uint64_t		 last_io;	/* monotonic ms of the last byte */
	struct advertise	 advertise;	/* the runtime's, when known */
	char			 command[40];	/* name of the first command */
	struct timeval		 started;
	struct conn		*dialing;	/* the conn being connected */
	uint64_t		 dial_deadline;	/* monotonic ms */
	uint64_t		 offer_deadline; /* a listening tool's, or 0 */
	int			 dial_attempts;
	int			 info_version;	/* of a ProcessInfo command, or
						   -1: its reply to keep */
	uint8_t			 bound_cookie[IPC_COOKIE_LEN];
	const char		*deny_reason;
	char			*end_reason;	/* a hold's or a deny's, made */
	char			*rule;		/* the rule that decided */
	enum reply_kind		 answer;	/* how the runtime side answered */
	uint32_t		 answer_hresult;
	uint8_t			 answer_peek[REPLY_PEEK];
	size_t			 answer_len;
	struct evbuffer		*info_reply;	/* ... as it came so far */
	uint8_t			*replay;	/* first message, until answered */
	size_t			 replay_len;
	TAILQ_ENTRY(session)	 entry;		/* all sessions */
	TAILQ_ENTRY(session)	 wait_entry;	/* the route's waiting tools */

	unsigned		 have_advertise:1;
	unsigned		 timer_at_deadline:1; /* it fires at dial_deadline */
	unsigned		 command_begun:1; /* its first byte came */
	unsigned		 spoke:1;	/* an accepted conn sent a byte */
	unsigned		 bound:1;	/* to the runtime of bound_cookie */
	unsigned		 counts_dialled:1; /* counted in route->dialled */
	unsigned		 offer:1;	/* a client-client offer */
	unsigned		 quiet:1;	/* end at debug level, not info */
	unsigned		 runtime_ended_first:1;
	unsigned		 timed_out:1;	/* a deadline ended it */
	unsigned		 judged:1;	/* the first command was judged */
	unsigned		 warm:1;	/* a router's spare (WarmConnection) */
	unsigned		 spare:1;	/* its runtime side was one of ours */
	unsigned		 allowed:1;
	unsigned		 asked:1;	/* the command went on */
	unsigned		 awaiting_answer:1; /* asked, not answered yet */
	unsigned		 from_record:1;	/* the router answered it */
	unsigned		 waiting:1;	/* in the route's waiting tools */
};

TAILQ_HEAD(session_list, session);

/* A peer as the limits count it, kept by value (limit.c). */
struct peer_key {
	int			 kind;		/* 0: none */
	uint8_t			 key[32];
	size_t			 len;
};

/* The router's own commands on a parked connection (errand.c). */
enum errand_kind {
	ERRAND_NONE,
	ERRAND_INFO,		/* ProcessInfo2: who the runtime is */
	ERRAND_INFO1,		/* ProcessInfo, from a runtime older than 6 */
	ERRAND_RESUME,		/* ResumeRuntime, for --resume-after */
	ERRAND_KINDS
};

enum errand_result {
	ERRAND_ANSWERED,	/* a whole reply came */
	ERRAND_TIMEOUT,		/* none within the handshake deadline */
	ERRAND_CLOSED,		/* the connection ended first */
	ERRAND_FAILED		/* out of memory */
};

/* ProcessInfo, ProcessInfo2, ProcessInfo3: the replies kept of each. */
#define INFO_VERSIONS		3

/* A runtime known by its cookie, with at most one parked connection. */
struct runtime {
	struct route		*route;
	int			 side;		/* the endpoint it dials */
	struct advertise	 advertise;
	struct peer_key		 owner;		/* who first claimed the cookie */
	pid_t			 owner_pid;	/* ... a local peer's pid, or 0 */
	struct conn		 parked;	/* fd -1 when none is parked */
	int			 active;	/* sessions paired with it */
	int			 gone;		/* its parked conn died */
	uint64_t		 last_used;	/* monotonic ms */
	struct event		*resume;	/* --resume-after, made if set */
	int			 resumed;	/* ResumeRuntime answered OK */
	enum errand_kind	 errand;	/* ours on the parked conn */
	unsigned		 errands_due;	/* bits of kinds waiting */
	struct event		*errand_timer;
	struct evbuffer		*errand_in;	/* its answer so far */
	struct process_info	*info;		/* its ProcessInfo, once known */
	char			 app[64];	/* its name, from that */
	int			 info_tries;
	struct mirror_entry	*mirrored;	/* as the mirror shows it */
	int			 standins_ended; /* ... killed under it */
	uint8_t			 found;		/* how: enum ext_found */
	int			 linked;	/* another router's (link.c) */
	char			*path;		/* its socket, if found (found.c) */
	uint64_t		 key;		/* ... and its start time */
	uint8_t			 hops;		/* routers between, if linked */
	char			*where;		/* where that router found it */
	uint64_t		 seen;		/* the link's last listing of it */
	uint64_t		 unlisted;	/* since (ms) the link lists it
						   not, or 0 */
	uint8_t			*replies[INFO_VERSIONS]; /* infocache.c */
	size_t			 reply_len[INFO_VERSIONS];
	TAILQ_ENTRY(runtime)	 entry;
};

TAILQ_HEAD(runtime_list, runtime);

enum route_mode {
	MODE_CLIENT_SERVER,	/* local connects, remote listens */
	MODE_SERVER_SERVER,
	MODE_SERVER_CLIENT,
	MODE_CLIENT_CLIENT
};

struct listener {
	struct route		*route;
	int			 side;
	struct evconnlistener	*evl;
	int			 own;		/* accepts by its transport */
	struct event		 backoff;	/* re-enable after EMFILE */
	int			 paused;
};

struct route {
	char			*name;
	struct endpoint		 endpoint[2];
	struct listener		 listener[2];
	enum route_mode		 mode;
	int			 started;	/* route_start() ran */
	int			 tool_missing;	/* logged that none listens */
	int			 runtime_side;	/* client-client: who is the runtime */
	struct runtime_list	 runtimes;
	struct runtime		*current;	/* the runtime tools are served by */
	struct mirror		*mirror;	/* dir:...,listen (mirror.c) */
	struct link		*link;		/* its peer=router side (link.c) */
	struct finding		*finding;	/* its dir: or proc: (found.c) */
	struct warm_pool	*warm[2];	/* spares of a side (warm.c) */
	int			 listed;	/* ListRuntimes came: learn each */
	TAILQ_HEAD(, session)	 waiting;	/* tools waiting for a runtime */
	struct session		*offer;		/* client-client: the open offer */
	struct event		 offer_timer;
	struct event		 recheck_timer;	/* waiting tools look again */
	struct event		 away_timer;	/* runtimes that did not dial
						   again are forgotten */
	int			 offer_backoff_ms;
	int			 dialled;	/* tools' sessions on the runtime
						   we dial for them */
	/* A front end's hook: a runtime advertised, or answered a dial. */
	void			(*runtime_seen)(struct route *);
	const char		*helper;	/* a front end's helper route:
						   what it is for, in one line */
	int			 own_howto;	/* a front end says how to reach
						   it, not the transports */
	TAILQ_ENTRY(route)	 entry;
};

TAILQ_HEAD(route_list, route);

/* The judge's word on a first message (judge.c). */
struct verdict {
	int		 allow;
	uint32_t	 hresult;	/* error frame for a denial */
	const char	*rule;		/* which rule decided */
	const char	*reason;
	int		 answer_ok;	/* denied, the router answers OK */
};

/* The engine's event loop and lists; the daemon fills and runs them. */
extern struct event_base *base;
extern struct route_list routes;
extern struct session_list sessions;
extern int		 draining;

/* route.c */
struct route	*route_new(const char *, const char *, const char *, char *,
		    size_t);
int		 route_start(struct route *, char *, size_t);
int		 route_preflight(struct route *, char *, size_t);
void		 route_describe(struct route *);
void		 route_stop_listening(struct route *);
void		 route_free(struct route *);
int		 route_reload_transports(void);
int		 route_reload_check(struct route_list *, char *, size_t);
void		 route_listener_freed(void);
void		 route_offer_schedule(struct route *, int);
void		 route_recheck(struct route *, int);

/* session.c */
void		 session_accepted(struct route *, int, int, struct sockaddr *,
		    socklen_t, const uint8_t *);
void		 session_offer(struct route *);
void		 session_close(struct session *, const char *);
int		 session_input(struct conn *);
int		 session_eof(struct conn *);
extern const struct conn_owner session_conn_owner;
int		 session_runtime_lost(struct session *);
int		 session_timer_make(struct session *);
void		 session_timer_drop(struct session *);
void		 session_runtime_available(struct route *);
void		 session_set_state(struct session *, enum session_state);
void		 session_answer(struct session *, const uint8_t *, size_t);
void		 session_drain_all(void);
void		 session_close_all(const char *);

/* runtime.c */
int		 runtime_park(struct session *, const char **);
int		 runtime_take(struct session *, const char **, uint32_t *);
void		 runtime_release(struct session *);
void		 runtime_lost(struct session *);
void		 runtime_away(struct runtime *);
void		 runtime_away_sweep(evutil_socket_t, short, void *);
extern const struct conn_owner parked_conn_owner;
void		 runtime_drop_all(struct route *);
void		 runtime_name(const struct runtime *, char *, size_t);
void		 runtime_info_answer(struct runtime *, enum errand_kind,
		    enum errand_result, const uint8_t *, size_t);
int		 runtime_list(struct route *, int, struct evbuffer *);
int		 runtime_reachable(const struct runtime *, int);
const struct acl_runtime *runtime_acl(struct route *, const uint8_t *,
		    struct acl_runtime *);
int		 runtime_take_linked(struct session *, const char **,
		    uint32_t *);
void		 runtime_link_seen(struct route *, int,
		    const struct ext_runtime *, uint64_t);
void		 runtime_link_sweep(struct route *, uint64_t);
struct runtime	*runtime_found_known(struct route *, const char *, uint64_t);
struct runtime	*runtime_found_seen(struct route *, int, uint8_t, const char *,
		    uint64_t, const struct process_info *, uint64_t);
struct runtime	*runtime_serving(struct session *);
void		 runtime_found_sweep(struct route *, uint64_t);

/* found.c */
int		 found_start(struct route *, int, int, char *, size_t);
void		 found_scan(struct route *);
void		 found_stop(struct route *);

/* link.c; a runtime listed through that many routers is a loop's */
#define LINK_HOPS_MAX	8
int		 link_start(struct route *, int, char *, size_t);
void		 link_stop(struct route *);

/* infocache.c */
int		 infocache_version(uint8_t, uint8_t);
void		 infocache_keep(struct runtime *, int, const uint8_t *, size_t);
const uint8_t	*infocache_get(const struct runtime *, int, size_t *);
void		 infocache_forget(struct runtime *);

/* exchange.c: a request of the router's own, on a connection it dials. */
struct exchange {
	struct conn		 conn;
	struct event		 timer;		/* the handshake deadline */
	struct evbuffer		*in;		/* the answer so far */
	int			 busy;
	int			 keep;		/* done takes the conn (conn_move) */
	/* 1 when x->in holds the whole answer, 0 for more, -1 and why. */
	int			(*parse)(struct exchange *, const char **);
	void			(*done)(struct exchange *, const char *);
	void			*arg;
};
int		 exchange_init(struct exchange *, struct route *, int);
void		 exchange_start(struct exchange *, const char *,
		    const uint8_t *, size_t);
void		 exchange_free(struct exchange *);
extern const struct conn_owner exchange_conn_owner;

/* warm.c */
int		 warm_start(struct route *, int, char *, size_t);
int		 warm_take(struct route *, struct conn *);
void		 warm_stop(struct route *);

/* mirror.c */
int		 mirror_start(struct route *, int, char *, size_t);
void		 mirror_runtime_known(struct runtime *);
void		 mirror_runtime_gone(struct runtime *);
void		 mirror_stop(struct route *);

/* resume.c */
void		 resume_watch(struct runtime *);
void		 resume_done_by_tool(struct runtime *);
void		 resume_sent(struct runtime *);
void		 resume_answer(struct runtime *, enum errand_result,
		    const uint8_t *, size_t);
void		 resume_forget(struct runtime *);

/* errand.c */
int		 errand_busy(const struct runtime *);
void		 errand_want(struct runtime *, enum errand_kind);
int		 errand_due(const struct runtime *, enum errand_kind);
void		 errand_cancel(struct runtime *, enum errand_kind);
int		 errand_parked(struct runtime *);
void		 errand_event(struct runtime *);
void		 errand_forget(struct runtime *);

/* session.c, for the pump: a ProcessInfo reply's bytes as they come */
void		 session_info_reply(struct session *, const uint8_t *, size_t);

/* pump.c */
int		 pump_read(struct conn *);
int		 pump_write(struct conn *);
int		 pump_start(struct session *);
void		 pump_event(struct conn *, short);
size_t		 pump_queued(const struct conn *);
void		 pump_kpipe_free(struct conn *);

/* judge.c */
void		 judge_command(struct session *, const uint8_t *, size_t,
		    struct verdict *);
void		 judge_advertise(struct session *, struct conn *,
		    struct verdict *);

/* conn.c */
int		 conn_init(struct conn *, const struct conn_owner *, int,
		    struct endpoint *);
int		 conn_attach(struct conn *, int, int);
int		 conn_start(struct conn *);
ssize_t		 conn_read_parked(struct conn *, void *, size_t);
void		 conn_move(struct conn *, struct conn *);
void		 conn_close(struct conn *);
void		 conn_free(struct conn *);
void		 conn_update(struct conn *);
int		 conn_dial(struct conn *);
int		 conn_is_open(const struct conn *);
void		 conn_peer_name(const struct conn *, char *, size_t);
const char	*conn_error(const struct conn *);

/* limit.c */
int		 limit_admit(struct conn *, const struct sockaddr *);
int		 limit_identified(struct conn *);
int		 limit_runtime_admit(int, const char **);
void		 limit_release(struct conn *);
void		 limit_peer_key(const struct conn *, struct peer_key *);
void		 limit_peer_name(const struct conn *, char *, size_t);
int		 limit_same_peer(const struct conn *, const struct conn *);
void		 limit_reserve(int);
void		 limit_budget(void);
int		 limit_pipe_take(void);
void		 limit_pipe_release(void);

#endif /* ENGINE_H */
