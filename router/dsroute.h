/*
 * Copyright (c) 2026 The dsroute authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

#ifndef DSROUTE_H
#define DSROUTE_H

#include <sys/types.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/un.h>

#include <event2/event_struct.h>

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "transports/transport.h"

#define __dead		__attribute__((__noreturn__))

struct acl_policy;
struct evbuffer;
struct evconnlistener;
struct peer_count;

/*
 * The wire protocol (ipc.c).  Everything is little-endian; see
 * docs/protocol-notes.md for what the runtime really does.
 */
#define IPC_MAGIC_LEN		14	/* "DOTNET_IPC_V1" and a NUL */
#define IPC_HEADER_LEN		20
#define IPC_MESSAGE_MAX		65535	/* the header's size field is a u16 */
#define ADVR_MAGIC_LEN		8	/* "ADVR_V1" and a NUL */
#define ADVR_LEN		34
#define IPC_COOKIE_LEN		16

#define IPC_SET_DUMP		0x01
#define IPC_SET_EVENTPIPE	0x02
#define IPC_SET_PROFILER	0x03
#define IPC_SET_PROCESS		0x04
#define IPC_SET_SERVER		0xff
#define IPC_ID_OK		0x00
#define IPC_ID_ERROR		0xff

#define HRESULT_BAD_ENCODING	0x80131384U
#define HRESULT_UNKNOWN_COMMAND	0x80131385U
#define HRESULT_UNKNOWN_MAGIC	0x80131386U
#define HRESULT_ACCESS_DENIED	0x80070005U

struct ipc_header {
	uint16_t	 size;		/* whole message, header included */
	uint8_t		 set;
	uint8_t		 id;
	uint16_t	 reserved;
};

struct advertise {
	uint8_t		 cookie[IPC_COOKIE_LEN];
	uint64_t	 pid;
};

/* A default diagnostic socket's name, parsed (ipc.c). */
struct default_name {
	long		 pid;
	uint64_t	 key;		/* the process's start time */
	int		 router;	/* dotnet-diagnostic-dsrouter-... */
};

/* What the first bytes of a connection turned out to be. */
enum greeting_kind {
	GREETING_MORE,			/* too few bytes to tell yet */
	GREETING_ADVERTISE,		/* a runtime offering itself */
	GREETING_COMMAND,		/* a tool's complete first message */
	GREETING_INVALID
};

/* ipc_classify looks at no more than the first GREETING_PEEK bytes. */
#define GREETING_PEEK		ADVR_LEN

struct greeting {
	enum greeting_kind	 kind;
	size_t			 need;	/* bytes the greeting takes, once known */
	struct ipc_header	 header;
	struct advertise	 advertise;
	const char		*error;	/* why it is invalid */
	uint32_t		 hresult; /* error frame for a tool, or 0 */
};

/* One side of a route.  LOCAL is the first endpoint given, REMOTE the second. */
#define SIDE_LOCAL		0
#define SIDE_REMOTE		1
#define OTHER_SIDE(s)		(1 - (s))

enum endpoint_type {
	ENDPOINT_UDS,
	ENDPOINT_TCP,
	ENDPOINT_TLS
};

/* How a TLS endpoint checks its peer's certificate. */
enum tls_verify {
	VERIFY_DEFAULT,		/* required */
	VERIFY_REQUIRED,
	VERIFY_OPTIONAL,	/* listeners: a certificate, if sent, must verify */
	VERIFY_NONE
};

struct allow_rule;
struct verdict;

enum endpoint_role {
	ROLE_AUTO,
	ROLE_LISTEN,
	ROLE_CONNECT
};

/* What a connect endpoint reaches: a runtime, or a tool that listens. */
enum endpoint_peer {
	PEER_AUTO,
	PEER_RUNTIME,
	PEER_TOOL
};

struct endpoint {
	char			*spec;		/* as the user wrote it */
	enum endpoint_type	 type;
	enum endpoint_role	 role;		/* as given, then as decided */
	const char		*why;		/* why this role */
	enum endpoint_peer	 peer;		/* connect: what listens there */
	const char		*peer_why;
	const struct transport	*transport;

	/* uds */
	char			 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	mode_t			 mode;
	char			*owner;
	char			*group;
	uid_t			 owner_uid;	/* owner=, once listening */
	gid_t			 group_gid;	/* group=, once listening */
	dev_t			 sock_dev;	/* the socket file we created */
	ino_t			 sock_ino;
	int			 sock_dirfd;	/* its directory, kept open */
	int			 sock_created;

	/* tcp and tls */
	char			*host;		/* NULL: loopback */
	char			 port[8];
	int			 wildcard;	/* "*": every interface */
	struct sockaddr_storage	 addr;		/* resolved at start-up */
	socklen_t		 addrlen;

	/* tls */
	char			*cert;		/* file names */
	char			*key;
	char			*ca;
	char			*sni;		/* name to send and verify */
	enum tls_verify		 verify;
	struct allow_rule	*allow;		/* identity allow-list */
	int			 nallow;
	void			*tls_ctx;	/* the backend's, built at start */

	char			 name[160];	/* printable, with the bound port */

	/* access control: NULL means the defaults */
	struct acl_policy	*policy;
	char			*transport_spec; /* spec less its policy options */
};

/*
 * A TLS peer's verified certificate, filled in by a TLS transport and
 * matched by the allow-lists and the ACL.  Allocated only for TLS conns,
 * in one block that holds exactly the names present: free() frees it.
 * The transports fill an identity_draft, and identity_pack() makes one.
 */
#define IDENTITY_MAX_SANS	16
#define IDENTITY_NAME_MAX	255	/* longest CN or SAN kept, in bytes */

enum san_type {
	SAN_DNS,
	SAN_URI,
	SAN_IP,
	SAN_EMAIL
};

struct identity_san {
	enum san_type	 type;
	const char	*value;			/* IP as text */
};

struct identity {
	const char		*cn;		/* subject CN, "" if none */
	int			 nsan;
	uint8_t			 fingerprint[32]; /* SHA-256 of the DER leaf */
	struct identity_san	 san[];		/* nsan, then the names */
};

/* An identity being read from a certificate (identity.c). */
struct identity_draft {
	char		 cn[IDENTITY_NAME_MAX + 1];
	struct {
		enum san_type	 type;
		char		 value[IDENTITY_NAME_MAX + 1];
	}		 san[IDENTITY_MAX_SANS];
	int		 nsan;
	uint8_t		 fingerprint[32];
};

/* One entry of a TLS listener's allow-list (identity.c). */
enum allow_kind {
	ALLOW_CN,
	ALLOW_SAN,
	ALLOW_FP
};

struct allow_rule {
	enum allow_kind	 kind;
	enum san_type	 san_type;		/* ALLOW_SAN */
	char		 value[IDENTITY_NAME_MAX + 1];	/* CN or SAN */
	uint8_t		 fingerprint[32];	/* ALLOW_FP */
};

/* Connections (conn.c). */
struct session;
struct runtime;

struct conn {
	struct session		*session;	/* NULL while parked */
	struct runtime		*parked_in;	/* the record holding it parked */
	struct endpoint		*endpoint;
	const struct transport	*transport;
	void			*tls;		/* transport state */
	int			 fd;
	int			 side;
	struct event		 rev;
	struct event		 wev;
	int			 rev_added;
	int			 wev_added;
	struct evbuffer		*out;		/* bytes waiting to be written here */

	char			 peer[224];	/* printable peer */
	int			 have_cred;	/* SO_PEERCRED of a uds peer */
	pid_t			 pid;
	uid_t			 uid;
	gid_t			 gid;
	struct identity		*identity;	/* verified TLS peer, if any */
	struct peer_count	*counted;	/* the peer it counts for */

	uint64_t		 nwritten;
	int			 error;		/* errno of the last failure */
	const char		*why;		/* transport's reason for failure */

	unsigned		 connecting:1;	/* non-blocking connect pending */
	unsigned		 handshaking:1;
	unsigned		 reading:1;	/* the session wants its bytes */
	unsigned		 writing:1;	/* writes are let through */
	unsigned		 eof:1;		/* the peer ended its sending side */
	unsigned		 throttled:1;	/* the peer's output is full */
	unsigned		 shut:1;	/* we ended our sending side */
	unsigned		 shut_pending:1; /* ...but it waits to be sent */
	unsigned		 rwant_write:1;	/* a read waits for writability */
	unsigned		 wwant_read:1;	/* a write waits for readability */
};

/* Sessions (session.c). */
enum session_state {
	S_CLASSIFY,		/* reading the first bytes of an accepted conn */
	S_PROBE,		/* client-client: asking the runtime who it is */
	S_DIAL,			/* connecting the other side */
	S_WAIT_RUNTIME,		/* a tool waits for a parked runtime */
	S_AWAIT_COMMAND,	/* advertise sent; the tool's command pending */
	S_PUMP,			/* forwarding both ways */
	S_DENY,			/* sending an error frame, then closing */
	S_HOLD			/* a refused runtime, held so it redials late */
};

struct session {
	uint64_t		 id;
	struct route		*route;
	enum session_state	 state;
	struct conn		 conn[2];	/* indexed by side */
	int			 tool_side;	/* -1 until classified */
	struct runtime		*runtime;	/* record of the paired runtime */
	struct event		 timer;		/* the deadline of the state */
	struct event		 idle;		/* --idle-timeout, forwarding */
	uint64_t		 last_io;	/* monotonic ms of the last byte */
	struct advertise	 advertise;	/* the runtime's, when known */
	int			 have_advertise;
	char			 command[40];	/* name of the first command */
	struct timeval		 started;
	struct conn		*dialing;	/* the conn being connected */
	int			 dial_attempts;
	uint64_t		 dial_deadline;	/* monotonic ms */
	int			 timer_at_deadline; /* it fires at dial_deadline */
	uint64_t		 offer_deadline; /* a listening tool's, or 0 */
	int			 command_begun;	/* its first byte came */
	int			 offer;		/* a client-client offer */
	int			 quiet;		/* end at debug level, not info */
	int			 runtime_ended_first;
	const char		*deny_reason;
	char			 hold_reason[320];
	int			 judged;	/* the first command was judged */
	int			 allowed;
	char			 rule[96];	/* the rule that decided */
	uint8_t			*replay;	/* first message, until answered */
	size_t			 replay_len;
	TAILQ_ENTRY(session)	 entry;		/* all sessions */
	TAILQ_ENTRY(session)	 wait_entry;	/* the route's waiting tools */
	int			 waiting;
};

TAILQ_HEAD(session_list, session);

/* A peer as the limits count it, kept by value (limit.c). */
struct peer_key {
	int			 kind;		/* 0: none */
	uint8_t			 key[32];
	size_t			 len;
};

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
	TAILQ_HEAD(, session)	 waiting;	/* tools waiting for a runtime */
	struct session		*offer;		/* client-client: the open offer */
	struct event		 offer_timer;
	struct event		 recheck_timer;	/* waiting tools look again */
	int			 offer_backoff_ms;
	/* A front end's hook: a runtime advertised, or answered a dial. */
	void			(*runtime_seen)(struct route *);
	const char		*helper;	/* a front end's helper route:
						   what it is for, in one line */
	TAILQ_ENTRY(route)	 entry;
};

TAILQ_HEAD(route_list, route);

/* Process-wide settings (main.c). */
struct settings {
	int		 handshake_timeout_ms;
	int		 tls_handshake_timeout_ms;
	int		 connect_timeout_ms;
	int		 backend_wait_ms;
	int		 close_timeout_ms;
	int		 shutdown_timeout_ms;
	size_t		 high_water;
	size_t		 low_water;
	int		 unsafe_listen;
	int		 runtime_side;	/* client-client default */
	int		 log_level;	/* enum log_level */
	int		 max_sessions;
	int		 max_sessions_given; /* not the default */
	int		 max_sessions_per_peer;
	int		 max_runtimes;	/* parked at once, all routes */
	int		 max_runtimes_per_peer;
	int		 offer_timeout_ms; /* a listening tool's command */
	int		 idle_timeout_ms; /* 0: none */
	char		 user[64];	/* drop to them after start-up */
	char		 group[64];
	int		 allow_core_dumps;
};

extern struct settings	 settings;
extern struct event_base *base;
extern struct route_list routes;
extern struct session_list sessions;
extern int		 draining;

/* ipc.c */
void		 ipc_classify(const uint8_t *, size_t, struct greeting *);
int		 ipc_classify_buffer(struct evbuffer *, struct greeting *);
const char	*ipc_command_name(uint8_t, uint8_t);
const char	*ipc_command_name_at(size_t);
void		 ipc_command_label(uint8_t, uint8_t, char *, size_t);
void		 ipc_error_frame(uint8_t [24], uint32_t);
void		 ipc_request(uint8_t [IPC_HEADER_LEN], uint8_t, uint8_t);
void		 ipc_advertise_build(uint8_t [ADVR_LEN], const struct advertise *);
int		 ipc_processinfo_parse(const uint8_t *, size_t,
		    struct advertise *, uint32_t *);
void		 ipc_cookie_hex(const uint8_t [IPC_COOKIE_LEN], char [33]);
int		 ipc_default_socket_parse(const char *, int,
		    struct default_name *);
uint32_t	 ipc_get32(const uint8_t *);

/*
 * Access control (acl.c): the policy of an endpoint and the decision on
 * a tool's first command.  Pure: unit tested and fuzzed on its own.
 */
enum acl_role {
	ACL_NONE,
	ACL_OBSERVE,
	ACL_OPERATE,
	ACL_DUMP,
	ACL_FULL
};

/* Who sent the command, as far as the transport could tell. */
struct acl_peer {
	int			 local;		/* a uds peer */
	int			 have_cred;	/* SO_PEERCRED worked */
	uid_t			 uid;
	gid_t			 gid;
	struct sockaddr_storage	 addr;		/* a network peer's address */
	const struct identity	*identity;	/* a verified TLS peer */
	uid_t			 self_uid;	/* dsroute's effective uid */
	int			 have_runtime_uid;
	uid_t			 runtime_uid;	/* owner of the runtime's end */
	pid_t			 pid;		/* a uds peer's, or 0 */
	pid_t			 own_pid;	/* ... in its pid namespace */
	int			 have_owner;	/* the socket's owner= */
	uid_t			 owner_uid;
	int			 have_group;	/* the socket's group= */
	gid_t			 group_gid;
};

struct acl_decision {
	int			 allow;
	uint32_t		 hresult;	/* of the error frame if denied */
	enum acl_role		 role;
	const char		*role_from;	/* what gave the peer its role */
	const char		*rule;		/* what decided */
	const char		*reason;	/* why, for the log */
};

int		 acl_role_parse(const char *, enum acl_role *);
const char	*acl_role_name(enum acl_role);
int		 acl_set_policy(struct acl_policy **, const char *, char *,
		    size_t);
int		 acl_add_rule(struct acl_policy **, int, const char *, char *,
		    size_t);
int		 acl_add_grant(struct acl_policy **, enum acl_role,
		    const char *, char *, size_t);
int		 acl_set_dump_dir(struct acl_policy **, const char *, char *,
		    size_t);
int		 acl_set_max_buffer(struct acl_policy **, const char *, char *,
		    size_t);
void		 acl_policy_free(struct acl_policy *);
int		 acl_add_advertiser(struct acl_policy **, const char *, char *,
		    size_t);
int		 acl_has_advertisers(const struct acl_policy *);
void		 acl_decide(const struct acl_policy *, const struct acl_peer *,
		    const uint8_t *, size_t, struct acl_decision *);
void		 acl_decide_advertise(const struct acl_policy *,
		    const struct acl_peer *, const struct advertise *,
		    struct acl_decision *);

/* endpoint.c */
int		 endpoint_parse(const char *, struct endpoint *, char *, size_t);
int		 endpoint_parse_part(const char *, struct endpoint *, char *,
		    size_t);
void		 endpoint_clear(struct endpoint *);
int		 endpoint_check_role(const struct endpoint *, char *, size_t);
int		 endpoint_resolve(struct endpoint *, char *, size_t);
int		 endpoint_is_loopback(const struct endpoint *);
void		 endpoint_set_name(struct endpoint *);

/* config.c */
struct config_error {
	int		 line;		/* 0: the file as a whole */
	size_t		 seq;		/* keeps errors of a line in order */
	char		*message;
};

struct config {
	char			*path;
	struct route_list	 routes;	/* parsed, not started */
	struct config_error	*errors;
	size_t			 nerrors;
	int			 oom;
};

int		 config_load(struct config *, const char *,
		    int (*)(void *, const char *, const char *, char *, size_t),
		    void *);
int		 config_parse(struct config *, const char *, FILE *,
		    int (*)(void *, const char *, const char *, char *, size_t),
		    void *);
void		 config_free(struct config *);
int		 config_apply(struct config *);
/* A front end's own events around the loop of dsroute_run() (main.c). */
struct frontend {
	void		(*start)(void);	/* the routes listen */
	void		(*stop)(void);	/* the loop ended: undo start */
};

/* A helper program running (child.c). */
struct child {
	char			 name[96];	/* for the log */
	int			 timeout_ms;	/* 0: none */
	int			 quiet;		/* its stderr at debug level */
	void			(*done)(struct child *, int,
				    struct evbuffer *);
	void			*arg;
	pid_t			 pid;
	int			 fd[2];		/* its stdout and stderr */
	struct event		 ev[2];
	struct evbuffer		*in[2];
	struct evbuffer		*output;	/* its stdout */
	struct event		 deadline;
	int			 timed_out;
	TAILQ_ENTRY(child)	 entry;
};

/* Port forwarding to a phone (preset.c). */
enum forward_kind {
	FORWARD_NONE,
	FORWARD_ADB_REVERSE,	/* the device dials us: adb reverse */
	FORWARD_ADB_FORWARD,	/* we dial the device: adb forward */
	FORWARD_IPROXY		/* we dial an iOS device through iproxy */
};

enum forward_state {
	FWD_UNKNOWN,
	FWD_IN_PLACE,
	FWD_FAILING,
	FWD_CONFLICT
};

struct forward {
	enum forward_kind	 kind;
	const char		*serial;	/* -s: the device, or NULL */
	int			 host_port;	/* on 127.0.0.1 here */
	int			 device_port;
	char			 program[1024];
	struct child		 child;
	struct event		 timer;		/* adb: check the rule */
	enum forward_state	 state;
	int			 owned;		/* we added the adb rule */
	int			 stopping;
	int			 failed;	/* iproxy ended: exit 1 */
};

/* identity.c */
void		 identity_draft_init(struct identity_draft *);
int		 identity_draft_cn(struct identity_draft *, const void *,
		    size_t);
int		 identity_draft_san(struct identity_draft *, enum san_type,
		    const void *, size_t);
struct identity	*identity_pack(const struct identity_draft *);
int		 identity_rule_parse(enum allow_kind, const char *,
		    struct allow_rule *, char *, size_t);
int		 identity_match(const struct identity *,
		    const struct allow_rule *, int);
void		 identity_describe(const struct identity *, char *, size_t);
int		 identity_judge(const struct conn *, struct verdict *);

/* main.c */
extern const struct frontend *frontend;
int		 dsroute_run(void);
void		 dsroute_shutdown(void);

/* dsrouter.c */
int		 dsrouter_is_command(const char *);
int		 dsrouter_main(int, char *[]);

/* child.c */
int		 child_spawn(struct child *, char *const []);
int		 child_running(const struct child *);
void		 child_stop(struct child *, int);
void		 child_wait(struct child *);
void		 child_cleanup(void);

/* preset.c */
int		 forward_prepare(struct forward *, char *, size_t);
void		 forward_start(struct forward *);
void		 forward_stop(struct forward *);
void		 preset_howto(FILE *, const char *, const char *, int, int,
		    const char *);

/* route.c */
struct route	*route_new(const char *, const char *, const char *, char *,
		    size_t);
int		 route_start(struct route *, char *, size_t);
void		 route_describe(struct route *);
void		 route_stop_listening(struct route *);
void		 route_free(struct route *);
int		 route_reload_tls(void);
const char	*route_mode_name(enum route_mode);
void		 route_listener_freed(void);
void		 route_offer_schedule(struct route *, int);
void		 route_recheck(struct route *, int);

/* session.c */
struct session	*session_new(struct route *);
void		 session_accepted(struct route *, int, int, struct sockaddr *,
		    socklen_t);
void		 session_offer(struct route *);
void		 session_close(struct session *, const char *);
int		 session_conn_ready(struct conn *);
int		 session_input(struct conn *);
int		 session_eof(struct conn *);
int		 session_conn_failed(struct conn *, const char *);
int		 session_runtime_lost(struct session *);
void		 session_runtime_available(struct route *);
void		 session_drain_all(void);
void		 session_close_all(const char *);

/* runtime.c */
int		 runtime_park(struct session *, const char **);
int		 runtime_take(struct session *);
void		 runtime_release(struct session *);
void		 runtime_lost(struct session *);
void		 runtime_parked_event(struct conn *);
void		 runtime_drop_all(struct route *);
struct runtime	*runtime_find(struct route *, const uint8_t *);

/* privilege.c */
int		 privilege_harden(char *, size_t);
int		 privilege_drop(char *, size_t);

/* pump.c */
int		 pump_read(struct conn *);
int		 pump_write(struct conn *);
int		 pump_start(struct session *);
void		 pump_update(struct session *);
void		 pump_idle_cb(evutil_socket_t, short, void *);

/* judge.c */
struct verdict {
	int		 allow;
	uint32_t	 hresult;	/* error frame for a denial */
	const char	*rule;		/* which rule decided */
	const char	*reason;
};
void		 judge_command(struct session *, const uint8_t *, size_t,
		    const struct greeting *, struct verdict *);
void		 judge_advertise(struct session *, struct conn *,
		    struct verdict *);

/* conn.c */
int		 conn_init(struct conn *, struct session *, int, struct endpoint *);
int		 conn_attach(struct conn *, int, int);
int		 conn_start(struct conn *);
void		 conn_move(struct conn *, struct conn *);
void		 conn_close(struct conn *);
void		 conn_free(struct conn *);
void		 conn_update(struct conn *);
int		 conn_dial(struct conn *);
int		 conn_is_open(const struct conn *);
const char	*conn_error(const struct conn *);

/* limit.c */
int		 limit_admit(struct conn *, const struct sockaddr *);
int		 limit_identified(struct conn *);
void		 limit_release(struct conn *);
void		 limit_raise_nofile(void);
void		 limit_peer_key(const struct conn *, struct peer_key *);
void		 limit_peer_name(const struct conn *, char *, size_t);
int		 limit_same_peer(const struct conn *, const struct conn *);
void		 limit_budget(void);

/* log.c */
enum log_level {
	LL_NONE,
	LL_CRITICAL,
	LL_ERROR,
	LL_WARNING,
	LL_INFO,
	LL_DEBUG,
	LL_TRACE
};

int		 log_level_parse(const char *, enum log_level *);
void		 log_set_level(enum log_level);
int		 log_enabled(enum log_level);
void		 log_msg(enum log_level, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));
void		 log_vmsg(enum log_level, const char *, va_list)
		    __attribute__((__format__(__printf__, 2, 0)));
void		 fatalx(const char *, ...)
		    __attribute__((__format__(__printf__, 1, 2))) __dead;
void		 log_escape(char *, size_t, const char *, size_t);

/* Lines a peer can repeat at will: at most one a second (log.c). */
#define LOG_THROTTLE_MS	1000
struct log_throttle {
	uint64_t	 last;		/* monotonic ms of the last line */
	unsigned long	 held;		/* lines held back since */
};
int		 log_throttle_pass(struct log_throttle *, const char *);

#define log_critical(...)	log_msg(LL_CRITICAL, __VA_ARGS__)
#define log_error(...)		log_msg(LL_ERROR, __VA_ARGS__)
#define log_warning(...)	log_msg(LL_WARNING, __VA_ARGS__)
#define log_info(...)		log_msg(LL_INFO, __VA_ARGS__)
#define log_debug(...)		log_msg(LL_DEBUG, __VA_ARGS__)
#define log_trace(...)		log_msg(LL_TRACE, __VA_ARGS__)

/* util.c */
uint64_t	 now_ms(void);
void		 timeval_ms(struct timeval *, int);
double		 elapsed_s(const struct timeval *);
void		 sockaddr_name(const struct sockaddr *, socklen_t, char *,
		    size_t);
int		 parse_ms(const char *, int *);
int		 parse_size(const char *, size_t *);
int		 parse_uid(const char *, uid_t *);
int		 parse_gid(const char *, gid_t *);
void		*xcalloc(size_t, size_t);
char		*xstrdup(const char *);

#endif /* DSROUTE_H */
