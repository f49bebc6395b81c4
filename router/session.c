/* SPDX-License-Identifier: ISC */

/*
 * The pairing engine.  A session pairs one tool connection with one
 * runtime connection; how it starts depends only on the endpoint roles:
 *
 *  - an accepted connection is classified by its first bytes, under the
 *    handshake deadline from the first of them (a silent one waits under
 *    --silent-timeout): ADVR_V1 is a runtime, DOTNET_IPC_V1 a tool;
 *  - a runtime whose other endpoint connects: dial it and forward the
 *    advertise; the tool's command comes back through the judge;
 *  - a runtime whose other endpoint listens: park it (runtime.c);
 *  - a tool: read and judge its whole first message, then dial the
 *    runtime, or take a parked runtime connection;
 *  - client-client: ask the runtime who it is, dial the tool as a runtime
 *    would, wait for the tool's command, judge it, dial the runtime.
 *
 * Nothing reaches a runtime before a complete, judged first message: the
 * runtime serves one command at a time and blocks on a silent client.
 * Every session ends in session_close(), and only there.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/ipc.h"
#include "common/log.h"
#include "common/util.h"
#include "router/engine.h"
#include "router/ext.h"
#include "router/metrics.h"
#include "router/settings.h"
#include "transports/transport.h"

struct session_list	 sessions = TAILQ_HEAD_INITIALIZER(sessions);
static int	 session_conn_ready(struct conn *);
static int	 session_conn_failed(struct conn *, const char *);

/* What a session's conns tell it: their dial, handshake, readiness. */
const struct conn_owner session_conn_owner = {
	session_conn_ready, session_conn_failed, pump_event
};

static uint64_t		 next_id = 1;

#define ST(s)		(1U << (s))

/*
 * The states of a session, and which may follow each: any may end in
 * session_close().  A runtime lost in S_PUMP with the command unanswered
 * makes the session wait for, or take, the next runtime.
 */
static const struct {
	const char	*name;
	unsigned	 next;
} states[] = {
	[S_NEW] = { "new", ST(S_CLASSIFY) | ST(S_PROBE) },
	[S_CLASSIFY] = { "classify", ST(S_DIAL) | ST(S_WAIT_RUNTIME) |
	    ST(S_PUMP) | ST(S_DENY) | ST(S_HOLD) },
	[S_PROBE] = { "probe", ST(S_DIAL) },
	[S_DIAL] = { "dial", ST(S_AWAIT_COMMAND) | ST(S_PUMP) | ST(S_DENY) },
	[S_WAIT_RUNTIME] = { "wait-runtime", ST(S_PUMP) | ST(S_DENY) },
	[S_AWAIT_COMMAND] = { "await-command", ST(S_DIAL) | ST(S_PUMP) |
	    ST(S_DENY) },
	[S_PUMP] = { "pump", ST(S_WAIT_RUNTIME) | ST(S_PUMP) | ST(S_DENY) },
	[S_DENY] = { "deny", 0 },
	[S_HOLD] = { "hold", 0 },
};

static void	 session_timeout(evutil_socket_t, short, void *);
static int	 dial(struct session *, enum session_state, int);
static int	 dial_attempt(struct session *, struct conn *);
static int	 take_runtime(struct session *);
static int	 classify(struct session *, struct conn *);
static int	 warm_command(struct session *, struct conn *, size_t);
static int	 fail_tool(struct session *, uint32_t, const char *);
static int	 answer_tool(struct session *, const uint8_t [24],
		    const char *);
static int	 router_command(struct session *, struct conn *,
		    const uint8_t *, size_t);
static int	 linked_command(struct session *);
static void	 keep_reason(struct session *, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));

static struct conn *
tool_conn(struct session *s)
{
	return (&s->conn[s->tool_side]);
}

static struct conn *
runtime_conn(struct session *s)
{
	return (&s->conn[OTHER_SIDE(s->tool_side)]);
}

/*
 * The state's deadline.  Made with the session and dropped when it starts
 * to pump, so an open session holds no timer (bench/README.md, idle
 * memory); made again for the two deadlines a pumping session can meet:
 * the tool's while to close after the runtime ended (pump_eof) and a
 * deadline of the states after a runtime was lost (session_runtime_lost).
 * Return -1 if it cannot be made: the session closed.
 */
int
session_timer_make(struct session *s)
{
	if (s->timer == NULL &&
	    (s->timer = evtimer_new(base, session_timeout, s)) == NULL) {
		session_close(s, "out of memory");
		return (-1);
	}
	return (0);
}

void
session_timer_drop(struct session *s)
{
	if (s->timer != NULL) {
		event_free(s->timer);
		s->timer = NULL;
	}
}

static void
disarm_timer(struct session *s)
{
	if (s->timer != NULL)
		evtimer_del(s->timer);
}

static void
arm_timer(struct session *s, int ms)
{
	struct timeval	 tv;

	if (s->timer == NULL) {
		/* A state was entered without session_timer_make(). */
#ifdef DSROUTE_DEBUG
		fatalx("session %" PRIu64 ": no timer in %s", s->id,
		    states[s->state].name);
#else
		log_error("session %" PRIu64 ": no timer in %s", s->id,
		    states[s->state].name);
		return;
#endif
	}
	timeval_ms(&tv, ms);
	evtimer_add(s->timer, &tv);
}

/* Arm the timer for a deadline on the monotonic clock. */
static void
arm_until(struct session *s, uint64_t deadline)
{
	uint64_t	 now = now_ms();

	arm_timer(s, deadline > now ? (int)(deadline - now) : 0);
}

/*
 * Move a session to its next state.  A move the table does not allow is
 * a bug: debug builds stop on it, others log it and go on.
 */
void
session_set_state(struct session *s, enum session_state next)
{
	if (!(states[s->state].next & ST(next))) {
#ifdef DSROUTE_DEBUG
		fatalx("session %" PRIu64 ": %s -> %s is not a transition",
		    s->id, states[s->state].name, states[next].name);
#else
		log_error("session %" PRIu64 ": %s -> %s is not a transition",
		    s->id, states[s->state].name, states[next].name);
#endif
	}
	log_debug("session %" PRIu64 ": %s -> %s", s->id,
	    states[s->state].name, states[next].name);
	s->state = next;
}

/* Create a session with two unconnected conns. */
static struct session *
session_new(struct route *r)
{
	struct session	*s;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return (NULL);
	if (conn_init(&s->conn[SIDE_LOCAL], &session_conn_owner, SIDE_LOCAL,
	    &r->endpoint[SIDE_LOCAL]) == -1 ||
	    conn_init(&s->conn[SIDE_REMOTE], &session_conn_owner, SIDE_REMOTE,
	    &r->endpoint[SIDE_REMOTE]) == -1) {
		conn_free(&s->conn[SIDE_LOCAL]);
		conn_free(&s->conn[SIDE_REMOTE]);
		free(s);
		return (NULL);
	}
	s->conn[SIDE_LOCAL].session = s->conn[SIDE_REMOTE].session = s;
	s->id = next_id++;
	s->route = r;
	s->tool_side = -1;
	s->info_version = -1;
	if ((s->timer = evtimer_new(base, session_timeout, s)) == NULL) {
		conn_free(&s->conn[SIDE_LOCAL]);
		conn_free(&s->conn[SIDE_REMOTE]);
		free(s);
		return (NULL);
	}
	gettimeofday(&s->started, NULL);
	TAILQ_INSERT_TAIL(&sessions, s, entry);
	return (s);
}

/*
 * A listener accepted fd on one side of a route: classify what it sends.
 * A mirror's listener binds the session to its runtime's cookie.
 */
void
session_accepted(struct route *r, int side, int fd, struct sockaddr *sa,
    socklen_t salen, const uint8_t *cookie)
{
	struct session	*s;
	struct conn	*c;
	char		 peer[256];

	if ((s = session_new(r)) == NULL) {
		log_error("%s: out of memory; connection refused",
		    r->endpoint[side].name);
		transport_close(r->endpoint[side].transport, fd);
		return;
	}
	c = &s->conn[side];
	if (cookie != NULL) {
		s->bound = 1;
		memcpy(s->bound_cookie, cookie, IPC_COOKIE_LEN);
	}
	if ((sa->sa_family == AF_INET || sa->sa_family == AF_INET6) &&
	    (size_t)salen <= sizeof(c->io.addr))
		memcpy(&c->io.addr, sa, salen);
	session_set_state(s, S_CLASSIFY);
	if (log_enabled(LL_DEBUG)) {
		conn_peer_name(c, peer, sizeof(peer));
		log_debug("session %" PRIu64 ": accepted %s on %s", s->id,
		    peer, r->endpoint[side].name);
	}
	if (conn_attach(c, fd, 1) == -1) {
		session_close(s, conn_error(c));
		return;
	}
	/* Over a limit: closed before a byte is read; limit.c logs it. */
	if (limit_admit(c, sa) == -1) {
		s->quiet = 1;
		session_close(s, "refused: over a session limit");
		return;
	}
	/* The first message's deadline starts once the handshake is done. */
	arm_timer(s, settings.tls_handshake_timeout_ms);
	(void)conn_start(c);
}

/*
 * What decided and why a session ends are kept only when there is one:
 * an idle session carries no room for them.  Without memory they read
 * as "-" and the reason of the state.
 */
static void
keep_rule(struct session *s, const char *rule)
{
	free(s->rule);
	s->rule = strdup(rule);
}

static void
keep_reason(struct session *s, const char *fmt, ...)
{
	va_list	 ap;

	free(s->end_reason);
	va_start(ap, fmt);
	if (vasprintf(&s->end_reason, fmt, ap) == -1)
		s->end_reason = NULL;
	va_end(ap);
}

static const char *
end_reason(struct session *s)
{
	return (s->end_reason != NULL ? s->end_reason : "refused");
}

/*
 * Refuse the tool's command: no byte reaches the runtime, and the tool
 * gets an IPC error frame so that it fails instead of hanging.
 */
static int
deny(struct session *s, uint32_t hresult, const char *reason)
{
	uint8_t		 frame[24];

	ipc_error_frame(frame, hresult);
	return (answer_tool(s, frame, reason));
}

/*
 * Answer the tool's command with frame (24 bytes: an error frame, or the
 * OK the router gives itself), send nothing to the runtime side, and end.
 */
static int
answer_tool(struct session *s, const uint8_t frame[24], const char *reason)
{
	struct conn	*tool = tool_conn(s), *rt = runtime_conn(s);

	conn_close(rt);
	evbuffer_drain(rt->out, evbuffer_get_length(rt->out));
	s->deny_reason = reason;
	session_set_state(s, S_DENY);
	/*
	 * After what is queued for the tool already: a dialled tool may not
	 * have its advertise yet, and a TLS write may wait to be retried
	 * with the same bytes.
	 */
	if (evbuffer_add(tool->out, frame, 24) == -1) {
		session_close(s, "out of memory");
		return (-1);
	}
	tool->writing = 1;
	tool->reading = 1;
	arm_timer(s, settings.handshake_timeout_ms);
	return (pump_write(tool));
}

/* An accepted conn sent bytes that are neither greeting: close it. */
static int
invalid(struct session *s, struct conn *c, const struct greeting *g)
{
	char	 reason[128];

	snprintf(reason, sizeof(reason), "protocol error: %s", g->error);
	if (g->hresult != 0) {
		/* It spoke the protocol: answer like the runtime would. */
		s->tool_side = c->side;
		s->deny_reason = NULL;
		return (deny(s, g->hresult, g->error));
	}
	session_close(s, reason);
	return (-1);
}

/*
 * The reply the router keeps (infocache.c) to the session's ProcessInfo,
 * for the runtime the tool would reach, in *rtp; NULL if it has none or
 * a runtime connection is already made for the command.
 */
static const uint8_t *
recorded_reply(struct session *s, struct runtime **rtp, size_t *len)
{
	if (s->info_version < 0 || conn_is_open(runtime_conn(s)) ||
	    (*rtp = runtime_serving(s)) == NULL)
		return (NULL);
	return (infocache_get(*rtp, s->info_version, len));
}

/*
 * A ProcessInfo whose answer the router keeps: send that, and nothing
 * reaches the runtime.  Return 1 if it did, with what pump_write said in
 * *rv (-1: the session closed), or 0 if the command must go on to the
 * runtime.
 */
static int
from_record(struct session *s, int *rv)
{
	struct conn	*tool = tool_conn(s), *rtc = runtime_conn(s);
	struct runtime	*rt;
	const uint8_t	*reply;
	size_t		 len;
	char		 name[96];

	if ((reply = recorded_reply(s, &rt, &len)) == NULL)
		return (0);
	evbuffer_drain(rtc->out, evbuffer_get_length(rtc->out));
	if (evbuffer_add(tool->out, reply, len) == -1) {
		session_close(s, "out of memory");
		*rv = -1;
		return (1);
	}
	s->info_version = -1;
	s->from_record = 1;
	s->advertise = rt->advertise;
	s->have_advertise = 1;
	s->asked = 1;
	s->awaiting_answer = 0;
	s->answer = ipc_reply_classify(reply, len, &s->answer_hresult);
	runtime_name(rt, name, sizeof(name));
	keep_reason(s, "answered from the router's record of %s", name);
	s->deny_reason = s->end_reason;
	session_set_state(s, S_DENY);
	tool->writing = 1;
	tool->reading = 1;
	arm_timer(s, settings.handshake_timeout_ms);
	*rv = pump_write(tool);
	return (1);
}

/*
 * The runtime's first bytes after a tool's ProcessInfo that the router
 * has no reply of yet, for that runtime: once the reply is whole, hand it
 * to the record (infocache.c), which keeps it if it is the runtime's own.
 */
void
session_info_reply(struct session *s, const uint8_t *buf, size_t n)
{
	const uint8_t	*h;
	size_t		 have, size;

	if (s->runtime == NULL ||
	    infocache_get(s->runtime, s->info_version, &size) != NULL)
		goto done;
	if (s->info_reply == NULL && (s->info_reply = evbuffer_new()) == NULL)
		goto done;
	if (evbuffer_add(s->info_reply, buf, n) == -1)
		goto done;
	if ((have = evbuffer_get_length(s->info_reply)) < IPC_HEADER_LEN)
		return;
	if ((h = evbuffer_pullup(s->info_reply, IPC_HEADER_LEN)) == NULL ||
	    (size = ipc_size(h)) < IPC_HEADER_LEN)
		goto done;
	if (have < size)
		return;
	if ((h = evbuffer_pullup(s->info_reply, size)) != NULL)
		infocache_keep(s->runtime, s->info_version, h, size);
done:
	s->info_version = -1;
	if (s->info_reply != NULL)
		evbuffer_free(s->info_reply);
	s->info_reply = NULL;
}

/* A tool's complete first message: judge it, then find it a runtime. */
static int
tool_command(struct session *s, struct conn *tool, const struct greeting *g)
{
	struct evbuffer	*msg = runtime_conn(s)->out;
	struct verdict	 v;
	const uint8_t	*data;
	const char	*why;
	uint8_t		 ok[24];
	int		 rv;

	ipc_command_label(g->header.set, g->header.id, s->command,
	    sizeof(s->command));
	/* A warm connection's command: its end line is a session's again. */
	if (s->warm && g->header.set != IPC_SET_DSROUTE)
		s->quiet = 0;
	if ((data = evbuffer_pullup(msg, g->need)) == NULL) {
		session_close(s, "out of memory");
		return (-1);
	}
	judge_command(s, data, g->need, &v);
	s->judged = 1;
	s->allowed = v.allow != 0;
	keep_rule(s, v.rule);
	if (!v.allow && v.answer_ok) {
		/* Nothing goes on; the tool is told OK (judge.c says why). */
		s->quiet = 1;
		ipc_ok_frame(ok);
		return (answer_tool(s, ok, v.reason));
	}
	if (!v.allow) {
		/* The audit line said it all; the end line goes to debug. */
		s->quiet = 1;
		return (deny(s, v.hresult, v.reason));
	}
	if (g->header.set == IPC_SET_DSROUTE)
		return (router_command(s, tool, data, g->need));

	disarm_timer(s);
	tool->reading = 1;
	s->asked = s->awaiting_answer = 1;
	s->answer = REPLY_MORE;
	s->info_version = infocache_version(g->header.set, g->header.id);
	if (from_record(s, &rv))
		return (rv);
	/* A runtime that dialled in and whose advertise went to the tool. */
	if (conn_is_open(runtime_conn(s)))
		return (pump_start(s));
	if (s->route->endpoint[runtime_conn(s)->side].role == ROLE_CONNECT) {
		if (s->bound)
			return (linked_command(s));
		/* A connect endpoint reaches one runtime: count its tools. */
		if (limit_runtime_admit(s->route->dialled, &why) == -1)
			return (deny(s, HRESULT_BUSY, why));
		s->route->dialled++;
		s->counts_dialled = 1;
		return (dial(s, S_DIAL, runtime_conn(s)->side));
	}

	/*
	 * The runtime dials us.  Keep a copy of the message until the
	 * runtime answers: a parked connection may belong to a runtime that
	 * is already dead (see session_runtime_lost).
	 */
	if (evbuffer_get_length(msg) == g->need) {
		if ((s->replay = malloc(g->need)) == NULL) {
			session_close(s, "out of memory");
			return (-1);
		}
		memcpy(s->replay, data, g->need);
		s->replay_len = g->need;
	}
	return (take_runtime(s));
}

/*
 * WarmConnection: another router made this connection ahead of a tool.
 * Answer how long it may wait (--silent-timeout, after which it is cut
 * as any silent connection is), then read what comes as an accepted
 * connection's first message.  Its end line is for debug unless a
 * command comes: the other router replaces its spares often.
 */
static int
warm_command(struct session *s, struct conn *tool, size_t len)
{
	struct conn	*rt = runtime_conn(s);
	uint8_t		 answer[EXT_WARM_ANSWER_LEN];

	if (s->warm)
		return (deny(s, HRESULT_BAD_ENCODING, "protocol error: a "
		    "second WarmConnection"));
	s->warm = 1;
	s->quiet = 1;
	s->judged = 0;
	s->tool_side = -1;
	s->spoke = 0;
	evbuffer_drain(rt->out, len);
	ext_warm_answer_build(answer, (uint32_t)settings.silent_timeout_ms);
	if (evbuffer_add(tool->out, answer, sizeof(answer)) == -1) {
		session_close(s, "out of memory");
		return (-1);
	}
	arm_timer(s, settings.silent_timeout_ms);
	tool->writing = 1;
	if (pump_write(tool) == -1)
		return (-1);
	/* The tool's command may have come with it. */
	return (evbuffer_get_length(rt->out) > 0 ? classify(s, tool) : 0);
}

/*
 * dsroute's own commands, from another router (docs/extension.md), judged
 * like any command and never sent on.  ListRuntimes is answered here.
 * SelectRuntime binds the session to a runtime and has no answer: the
 * tool's command that follows it is read, judged and sent on as usual.
 */
static int
router_command(struct session *s, struct conn *tool, const uint8_t *msg,
    size_t len)
{
	struct conn		*rt = runtime_conn(s);
	struct ext_request	 rq;
	int			 n;

	if (ext_request_parse(msg, len, &rq) == -1)
		return (deny(s, HRESULT_BAD_ENCODING, "protocol error: a "
		    "malformed dsroute command"));
	if (rq.id == EXT_ID_WARM)
		return (warm_command(s, tool, len));
	if (rq.id == EXT_ID_SELECT) {
		if (s->bound)
			return (deny(s, HRESULT_BAD_ENCODING, "protocol error: "
			    "a second SelectRuntime"));
		s->bound = 1;
		memcpy(s->bound_cookie, rq.cookie, IPC_COOKIE_LEN);
		evbuffer_drain(rt->out, len);
		s->judged = 0;
		return (classify(s, tool));
	}
	evbuffer_drain(rt->out, evbuffer_get_length(rt->out));
	if ((n = runtime_list(s->route, s->tool_side, tool->out)) == -1) {
		session_close(s, "out of memory");
		return (-1);
	}
	/* A mirror asks every --link-poll: its end line is for debug. */
	keep_reason(s, "listed %d runtimes", n);
	s->deny_reason = s->end_reason;
	s->quiet = 1;
	session_set_state(s, S_DENY);
	tool->writing = 1;
	tool->reading = 1;
	arm_timer(s, settings.handshake_timeout_ms);
	return (pump_write(tool));
}

/*
 * A tool's command for one runtime the router dials (a mirror's name, or
 * SelectRuntime): a linked router's, dialled with SelectRuntime in front
 * of the command, or one found by its socket, dialled there.
 */
static int
linked_command(struct session *s)
{
	struct conn	*rt = runtime_conn(s);
	const char	*why;
	uint32_t	 hresult;
	uint8_t		 select[EXT_SELECT_LEN];

	if (runtime_take_linked(s, &why, &hresult) == -1)
		return (deny(s, hresult, why));
	if (s->runtime->path != NULL)
		rt->path = s->runtime->path;
	else {
		ext_select_request(select, s->bound_cookie);
		if (evbuffer_prepend(rt->out, select, sizeof(select)) == -1) {
			session_close(s, "out of memory");
			return (-1);
		}
	}
	return (dial(s, S_DIAL, rt->side));
}

/*
 * Give a tool's session a parked runtime connection, make it wait, or
 * refuse it when that runtime serves as many tools as it may.
 */
static int
take_runtime(struct session *s)
{
	const char	*why;
	uint32_t	 hresult;

	switch (runtime_take(s, &why, &hresult)) {
	case 1:
		return (pump_start(s));
	case -1:
		return (deny(s, hresult, why));
	}
	session_set_state(s, S_WAIT_RUNTIME);
	s->waiting = 1;
	TAILQ_INSERT_TAIL(&s->route->waiting, s, wait_entry);
	arm_timer(s, settings.backend_wait_ms);
	log_debug("session %" PRIu64 ": %s waits for a runtime", s->id,
	    s->command);
	return (0);
}

/*
 * The runtime connection of a forwarding session ended before the
 * runtime sent a byte.  The runtime answers every command, so it died
 * with the command unread: a runtime killed with SIGKILL keeps its
 * parked connection open until the kernel has torn the process down, and
 * a command taken in that window reaches nobody.  Give the command, once,
 * to the next runtime, as if it had just arrived.  Return 1 if the
 * session went on that way (it may have closed since), 0 if it should
 * close.
 */
int
session_runtime_lost(struct session *s)
{
	struct conn	*rt = runtime_conn(s);
	char		 cookie[33];

	if (s->replay == NULL || s->runtime == NULL ||
	    rt->nwritten + evbuffer_get_length(rt->out) != s->replay_len)
		return (0);
	ipc_cookie_hex(s->advertise.cookie, cookie);
	log_info("session %" PRIu64 ": runtime pid %" PRIu64 " (cookie %s) "
	    "closed with %s unanswered; it is gone, the next runtime gets "
	    "the command", s->id, s->advertise.pid, cookie, s->command);
	if (session_timer_make(s) == -1)
		return (1);
	runtime_lost(s);
	s->have_advertise = 0;
	s->runtime_ended_first = 0;
	evtimer_del(s->timer);
	conn_close(rt);
	rt->nwritten = 0;
	evbuffer_drain(rt->out, evbuffer_get_length(rt->out));
	if (evbuffer_add(rt->out, s->replay, s->replay_len) == -1) {
		session_close(s, "out of memory");
		return (1);
	}
	free(s->replay);
	s->replay = NULL;
	(void)take_runtime(s);
	return (1);
}

/*
 * A runtime refused: hold its connection, unread, until it closes or the
 * handshake deadline passes.  A runtime dials again as soon as its
 * connection closes; closed at once, one that is refused for good would
 * redial thousands of times a second.  The audit line said why; the end
 * line goes to debug.
 */
static int
hold_refused(struct session *s, struct conn *rt, const char *why)
{
	s->quiet = 1;
	session_set_state(s, S_HOLD);
	keep_reason(s, "%s", why);
	rt->reading = 1;
	conn_update(rt);
	arm_timer(s, settings.handshake_timeout_ms);
	return (0);
}

/* Tell the route's front end that a runtime showed up. */
static void
runtime_seen(struct route *r)
{
	if (r->runtime_seen != NULL)
		r->runtime_seen(r);
}

/*
 * A runtime's advertise: judge it, then park it for the tools that
 * connect, or dial the tool that listens and send it on.
 */
static int
runtime_advertise(struct session *s, struct conn *rt, const struct greeting *g)
{
	struct route	*r = s->route;
	struct conn	*tool;
	struct verdict	 v;
	const char	*why;
	char		 reason[256];

	s->tool_side = OTHER_SIDE(rt->side);
	tool = tool_conn(s);
	s->advertise = g->advertise;
	s->have_advertise = 1;
	snprintf(s->command, sizeof(s->command), "advertise");
	disarm_timer(s);
	judge_advertise(s, rt, &v);
	s->judged = 1;
	s->allowed = v.allow != 0;
	keep_rule(s, v.rule);
	if (!v.allow) {
		snprintf(reason, sizeof(reason), "advertise refused: %s",
		    v.reason);
		return (hold_refused(s, rt, reason));
	}
	runtime_seen(r);

	if (r->endpoint[s->tool_side].role == ROLE_LISTEN) {
		/* Tools connect to us and expect no advertise: park it. */
		if (evbuffer_get_length(tool->out) != ADVR_LEN) {
			session_close(s, "protocol error: runtime sent bytes "
			    "after its advertise");
			return (-1);
		}
		evbuffer_drain(tool->out, ADVR_LEN);
		if (runtime_park(s, &why) == -1)
			return (hold_refused(s, rt, why));
		s->quiet = 1;
		session_close(s, "runtime connection parked");
		session_runtime_available(r);
		return (-1);
	}
	/*
	 * The tool listens (the judge saw to it that no runtime does):
	 * dial it; the advertise goes first, unchanged.
	 */
	rt->reading = 1;
	return (dial(s, S_DIAL, s->tool_side));
}

/* Classify the bytes collected in buf.  Return -1 if the session closed. */
static int
read_greeting(struct session *s, struct evbuffer *buf, struct greeting *g)
{
	if (ipc_classify_buffer(buf, g) == -1) {
		session_close(s, "out of memory");
		return (-1);
	}
	return (0);
}

/* Classify the first bytes an accepted conn sent. */
static int
classify(struct session *s, struct conn *c)
{
	struct evbuffer	*buf = s->conn[OTHER_SIDE(c->side)].out;
	struct greeting	 g;

	if (!s->spoke && evbuffer_get_length(buf) > 0) {
		s->spoke = 1;
		arm_timer(s, settings.handshake_timeout_ms);
	}
	if (read_greeting(s, buf, &g) == -1)
		return (-1);
	switch (g.kind) {
	case GREETING_MORE:
		return (0);
	case GREETING_INVALID:
		return (invalid(s, c, &g));
	case GREETING_ADVERTISE:
		if (s->bound) {
			/* A mirror's name, or after SelectRuntime: a tool's. */
			g.error = "an advertise where a tool's command belongs";
			g.hresult = 0;
			return (invalid(s, c, &g));
		}
		return (runtime_advertise(s, c, &g));
	case GREETING_COMMAND:
		s->tool_side = c->side;
		return (tool_command(s, c, &g));
	}
	return (0);
}

/*
 * The tool we dialled (as a runtime would) sends its command.  A tool
 * may hold the offer quiet for a long while, as it may a runtime's own
 * connection (--offer-timeout); once its command begins, it has the
 * handshake deadline to finish it.
 */
static int
await_command(struct session *s, struct conn *tool)
{
	struct evbuffer	*buf = runtime_conn(s)->out;
	struct greeting	 g;

	if (evbuffer_get_length(buf) == 0)
		return (0);
	if (!s->command_begun) {
		s->command_begun = 1;
		arm_timer(s, settings.handshake_timeout_ms);
	}
	if (read_greeting(s, buf, &g) == -1)
		return (-1);
	switch (g.kind) {
	case GREETING_MORE:
		return (0);
	case GREETING_ADVERTISE:
		g.error = "tool sent an advertise";
		g.hresult = 0;
		/* FALLTHROUGH */
	case GREETING_INVALID:
		return (invalid(s, tool, &g));
	case GREETING_COMMAND:
		break;
	}
	if (s->offer) {
		/* The tool took our offer: offer it the next connection. */
		s->route->offer = NULL;
		s->quiet = 0;
		route_offer_schedule(s->route, 0);
	}
	return (tool_command(s, tool, &g));
}

/* The runtime answered our ProcessInfo: offer its identity to the tool. */
static int
probe_reply(struct session *s)
{
	struct conn	*tool = tool_conn(s), *rt = runtime_conn(s);
	struct evbuffer	*buf = tool->out;
	size_t		 len = evbuffer_get_length(buf);
	const uint8_t	*data;
	uint8_t		 adv[ADVR_LEN];
	uint32_t	 hresult;
	char		 reason[96];
	int		 rv;

	if (len < IPC_HEADER_LEN)
		return (0);
	if ((data = evbuffer_pullup(buf, len)) == NULL) {
		session_close(s, "out of memory");
		return (-1);
	}
	if (ipc_size(data) > len)
		return (0);	/* the reply is not complete yet */
	rv = ipc_processinfo_parse(data, len, &s->advertise, &hresult);
	if (rv != 0) {
		if (rv == 1)
			snprintf(reason, sizeof(reason), "runtime refused "
			    "ProcessInfo (0x%08x)", hresult);
		session_close(s, rv == 1 ? reason :
		    "runtime sent a malformed ProcessInfo reply");
		return (-1);
	}
	s->have_advertise = 1;
	evbuffer_drain(buf, len);
	conn_close(rt);
	rt->nwritten = 0;
	ipc_advertise_build(adv, &s->advertise);
	if (evbuffer_add(buf, adv, sizeof(adv)) == -1) {
		session_close(s, "out of memory");
		return (-1);
	}
	return (dial(s, S_DIAL, s->tool_side));
}

/*
 * Bytes arrived on c (they are in its peer's output): move the session
 * along.  Return -1 if it closed.
 */
int
session_input(struct conn *c)
{
	struct session	*s = c->session;

	switch (s->state) {
	case S_CLASSIFY:
		return (classify(s, c));
	case S_AWAIT_COMMAND:
		if (c->side == s->tool_side)
			return (await_command(s, c));
		return (0);
	case S_PROBE:
		return (probe_reply(s));
	case S_HOLD:
		/* A refused runtime's bytes go nowhere. */
		evbuffer_drain(s->conn[OTHER_SIDE(c->side)].out,
		    evbuffer_get_length(s->conn[OTHER_SIDE(c->side)].out));
		return (0);
	case S_PUMP:
		if (c->side != s->tool_side && s->replay != NULL) {
			/* The runtime answers: it is alive. */
			free(s->replay);
			s->replay = NULL;
		}
		return (0);
	default:
		return (0);
	}
}

/*
 * The first bytes from the runtime side after the tool's command: its
 * answer.  An error frame there means the runtime, or a router further
 * on, refused the command; the tool's user learns only the HRESULT, and
 * the router that refused is on another host.  Say so here too.
 */
void
session_answer(struct session *s, const uint8_t *buf, size_t n)
{
	size_t		 take = REPLY_PEEK - s->answer_len;
	const char	*name;

	if (take > n)
		take = n;
	memcpy(s->answer_peek + s->answer_len, buf, take);
	s->answer_len += take;
	s->answer = ipc_reply_classify(s->answer_peek, s->answer_len,
	    &s->answer_hresult);
	if (s->answer == REPLY_MORE)
		return;
	s->awaiting_answer = 0;
	if (s->answer == REPLY_OK && s->runtime != NULL &&
	    strcmp(s->command, "ResumeRuntime") == 0)
		resume_done_by_tool(s->runtime);	/* forgets its replies */
	if (s->answer != REPLY_ERROR)
		return;
	name = ipc_hresult_name(s->answer_hresult);
	/* How tools learn what a runtime supports: they try an older one. */
	log_msg(s->answer_hresult == HRESULT_UNKNOWN_COMMAND ? LL_DEBUG :
	    LL_INFO, "session %" PRIu64 ": the runtime side answered %s with "
	    "error 0x%08" PRIx32 "%s%s%s%s", s->id, s->command,
	    s->answer_hresult, name != NULL ? " (" : "",
	    name != NULL ? name : "", name != NULL ? ")" : "",
	    s->answer_hresult != HRESULT_ACCESS_DENIED ? "" :
	    strcmp(s->command, "ResumeRuntime") == 0 ? ": a router on the "
	    "way refused it (dotnet-trace and dotnet-counters send it unless "
	    "given --resume-runtime:false), and its audit line says why" :
	    ": a router on the way refused it, and its audit line says why");
}

/* The answer field of the session's end line. */
static void
answer_label(const struct session *s, char *buf, size_t len)
{
	switch (s->answer) {
	case REPLY_MORE:
		snprintf(buf, len, "none");
		break;
	case REPLY_OK:
		snprintf(buf, len, "ok");
		break;
	case REPLY_ERROR:
		snprintf(buf, len, "error:0x%08" PRIx32, s->answer_hresult);
		break;
	case REPLY_OTHER:
		snprintf(buf, len, "other");
		break;
	}
}

/* A conn ended its sending side before the pump started. */
int
session_eof(struct conn *c)
{
	struct session	*s = c->session;
	const char	*reason;
	int		 is_tool = c->side == s->tool_side;

	c->reading = 0;
	conn_update(c);
	switch (s->state) {
	case S_CLASSIFY:
		reason = evbuffer_get_length(s->conn[OTHER_SIDE(c->side)].out) ?
		    "closed before a complete first message" : s->warm ?
		    "a warm connection closed unused" :
		    "closed without sending anything";
		break;
	case S_DIAL:
	case S_WAIT_RUNTIME:
		/* A tool that half-closed after its command still waits. */
		if (is_tool)
			return (0);
		reason = "runtime closed while the tool was dialled";
		break;
	case S_AWAIT_COMMAND:
		reason = is_tool ? "tool closed without a command" :
		    "runtime closed its connection";
		break;
	case S_PROBE:
		reason = "runtime closed before answering ProcessInfo";
		break;
	case S_DENY:
		reason = s->deny_reason != NULL ? s->deny_reason : "denied";
		break;
	case S_HOLD:
		reason = end_reason(s);
		break;
	default:
		reason = "closed";
		break;
	}
	session_close(s, reason);
	return (-1);
}

/* The dial (or probe) on conn c succeeded, or an accepted conn is ready. */
static int
session_conn_ready(struct conn *c)
{
	struct session	*s = c->session;

	switch (s->state) {
	case S_CLASSIFY:
		if (limit_identified(c) == -1) {
			s->quiet = 1;
			session_close(s, "refused: over a session limit");
			return (-1);
		}
		/*
		 * A connection may stay silent for long: dotnet-dsrouter's
		 * client-client mode opens one and sends nothing until a
		 * tool comes.  It holds no runtime meanwhile, only its place
		 * in the session limits; its first byte starts the
		 * handshake deadline (classify()).
		 */
		arm_timer(s, settings.silent_timeout_ms);
		/*
		 * A client usually writes right after connecting: read now
		 * rather than after a trip through the event loop.
		 */
		c->reading = 1;
		return (pump_read(c));
	case S_PROBE:
		runtime_seen(s->route);
		c->reading = c->writing = 1;
		return (pump_write(c));
	case S_DIAL:
		disarm_timer(s);
		if (c->side != s->tool_side) {
			runtime_seen(s->route);
			return (pump_start(s));
		}
		if (s->route->tool_missing) {
			s->route->tool_missing = 0;
			log_info("%s: a tool is listening again",
			    c->io.endpoint->name);
		}
		/* We dialled a listening tool: our advertise goes first. */
		session_set_state(s, S_AWAIT_COMMAND);
		arm_until(s, s->offer_deadline);
		log_debug("session %" PRIu64 ": %s has the advertise; its "
		    "command is awaited", s->id, c->io.endpoint->name);
		c->reading = c->writing = 1;
		return (pump_write(c));
	default:
		return (0);
	}
}

/* EBUSY: a named pipe whose every instance has its client (Windows). */
static int
retryable(int error)
{
	return (error == ECONNREFUSED || error == ENOENT || error == EAGAIN ||
	    error == EBUSY || error == ECONNRESET || error == ETIMEDOUT ||
	    error == EHOSTUNREACH || error == ENETUNREACH);
}

/*
 * The error frame for a tool whose runtime is not there: nothing listens
 * on its port, or no socket is at its path; 0 for other failures, which
 * may pass (a network that is down, a runtime slow to accept).
 */
static uint32_t
absent_runtime(int error)
{
	if (error == ECONNREFUSED)
		return (HRESULT_CONN_REFUSED);
	if (error == ENOENT)
		return (HRESULT_FILE_NOT_FOUND);
	return (0);
}

/*
 * Connecting or handshaking on c failed: retry the dial, or give up.  A
 * tool whose runtime is not there gets an error frame at once, as it
 * would from a direct connection that fails, unless --wait-for-runtime
 * says to wait for the runtime to come (within --connect-timeout).
 */
static int
session_conn_failed(struct conn *c, const char *what)
{
	struct session	*s = c->session;
	char		 reason[320];
	int		 delay;
	uint32_t	 hresult;
	uint64_t	 now = now_ms();

	if (s->state == S_DIAL && c->side != s->tool_side &&
	    strcmp(what, "connect") == 0 && !settings.wait_for_runtime &&
	    (hresult = absent_runtime(c->io.error)) != 0) {
		keep_reason(s, "connect to %s failed: %s; the tool got error "
		    "0x%08" PRIx32, c->io.endpoint->name, conn_error(c),
		    hresult);
		s->asked = s->awaiting_answer = 0;
		return (deny(s, hresult, end_reason(s)));
	}
	if ((s->state == S_DIAL || s->state == S_PROBE) &&
	    strcmp(what, "connect") == 0 && retryable(c->io.error) &&
	    now < s->dial_deadline) {
		if (c->side == s->tool_side && conn_is_open(runtime_conn(s)) &&
		    !s->route->tool_missing) {
			s->route->tool_missing = 1;
			log_info("%s: no tool is listening (%s); the runtime's "
			    "connection waits for one", c->io.endpoint->name,
			    conn_error(c));
		}
		conn_close(c);
		/* 10 ms, doubling to 500 ms, as a restarting peer needs. */
		delay = s->dial_attempts < 6 ? 10 << s->dial_attempts : 500;
		s->timer_at_deadline = now + delay >= s->dial_deadline;
		if (s->timer_at_deadline)
			delay = (int)(s->dial_deadline - now);
		s->dial_attempts++;
		log_debug("session %" PRIu64 ": connect to %s: %s; again in "
		    "%d ms", s->id, c->io.endpoint->name, conn_error(c), delay);
		arm_timer(s, delay);
		return (0);
	}
	if (s->state == S_CLASSIFY)	/* an accepted conn's handshake */
		snprintf(reason, sizeof(reason), "%s", conn_error(c));
	else
		snprintf(reason, sizeof(reason), "%s to %s failed: %s", what,
		    c->io.endpoint->name, conn_error(c));
	/* A tool waiting on the runtime side: tell it, not EOF. */
	if (s->state == S_DIAL && c->side != s->tool_side)
		return (fail_tool(s, strcmp(what, "handshake") == 0 &&
		    c->io.transport->tls ? HRESULT_TLS_FAILED :
		    c->io.error == ETIMEDOUT ? HRESULT_CONN_TIMEOUT :
		    HRESULT_CONN_REFUSED, reason));
	session_close(s, reason);
	return (-1);
}

/*
 * The runtime side of a tool's judged command cannot be had: the tool
 * gets an error frame with the HRESULT that says why (and, through a
 * router in front of it, that router's log says it too), not an EOF.
 */
static int
fail_tool(struct session *s, uint32_t hresult, const char *reason)
{
	keep_reason(s, "%s; the tool got error 0x%08" PRIx32, reason,
	    hresult);
	s->asked = s->awaiting_answer = 0;
	return (deny(s, hresult, end_reason(s)));
}

/*
 * Enter state (S_DIAL, or S_PROBE for the runtime's identity) and start
 * connecting the conn on side, within the connect timeout.  A listening
 * tool dialled for a runtime that is connected to us is the exception:
 * like the runtime itself, keep trying while the offer lasts
 * (--offer-timeout); the runtime dials again after that.
 */
static int
dial(struct session *s, enum session_state state, int side)
{
	session_set_state(s, state);
	s->dial_attempts = 0;
	if (state == S_DIAL && side == s->tool_side && s->offer_deadline == 0)
		s->offer_deadline = now_ms() + settings.offer_timeout_ms;
	if (state == S_DIAL && side == s->tool_side &&
	    conn_is_open(runtime_conn(s)))
		s->dial_deadline = s->offer_deadline;
	else
		s->dial_deadline = now_ms() + settings.connect_timeout_ms;
	s->dialing = &s->conn[side];
	return (dial_attempt(s, s->dialing));
}

/*
 * Try to connect once.  The timer bounds the attempt by the deadline, or
 * by the connect timeout when there is none; it also bounds a probe's
 * answer, and a TLS handshake, after a connect that succeeds at once.
 */
static int
dial_attempt(struct session *s, struct conn *c)
{
	uint64_t	 now, left;

	now = now_ms();
	left = now < s->dial_deadline ? s->dial_deadline - now : 0;
	s->timer_at_deadline = left <= (uint64_t)settings.connect_timeout_ms;
	if (!s->timer_at_deadline)
		left = settings.connect_timeout_ms;
	arm_timer(s, (int)left);
	/* A spare to another router (warm.c): made and handshaken already. */
	if (c->side != s->tool_side && c->path == NULL &&
	    warm_take(s->route, c)) {
		s->spare = 1;
		return (session_conn_ready(c));
	}
	switch (conn_dial(c)) {
	case 0:
		return (conn_start(c));
	case 1:
		return (0);
	default:
		return (session_conn_failed(c, "connect"));
	}
}

/*
 * Why a tool waited for a runtime in vain: none came to the endpoint its
 * runtimes dial, and, when a runtime is parked on the tool's own side
 * (tool and runtime given the same listener), where it is.
 */
static void
wait_reason(struct session *s, char *buf, size_t len)
{
	struct route	*r = s->route;
	struct runtime	*rt;
	size_t		 n;

	snprintf(buf, len, "no runtime connection on %s within %.1fs",
	    r->endpoint[OTHER_SIDE(s->tool_side)].name,
	    settings.backend_wait_ms / 1000.0);
	TAILQ_FOREACH(rt, &r->runtimes, entry) {
		if (rt->side != s->tool_side || rt->parked.io.fd == -1)
			continue;
		n = strlen(buf);
		snprintf(buf + n, len - n, "; runtime pid %" PRIu64 " is "
		    "parked on %s, the tool's own side: a tool meets the "
		    "runtimes of the other endpoint", rt->advertise.pid,
		    r->endpoint[s->tool_side].name);
		return;
	}
}

/* The deadline of the session's current state passed. */
static void
session_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct session	*s = arg;
	struct conn	*c;
	char		 reason[320];

	switch (s->state) {
	case S_NEW:
		snprintf(reason, sizeof(reason), "never started");
		break;
	case S_CLASSIFY:
		c = s->conn[SIDE_LOCAL].io.fd != -1 ? &s->conn[SIDE_LOCAL] :
		    &s->conn[SIDE_REMOTE];
		if (c->handshaking && c->io.transport->tls)
			metrics.tls_failures++;
		if (c->handshaking)
			snprintf(reason, sizeof(reason), "%s handshake not "
			    "complete within %.1fs", c->io.transport->name,
			    settings.tls_handshake_timeout_ms / 1000.0);
		else if (!s->spoke)
			snprintf(reason, sizeof(reason), "sent nothing within "
			    "%.1fs (--silent-timeout)",
			    settings.silent_timeout_ms / 1000.0);
		else
			snprintf(reason, sizeof(reason), "no complete first "
			    "message within %.1fs",
			    settings.handshake_timeout_ms / 1000.0);
		break;
	case S_PROBE:
	case S_DIAL:
		c = s->dialing;
		/*
		 * Whether the deadline passed is what the timer was armed
		 * for: libevent's clock is not now_ms(), and asking it again
		 * can find a millisecond left.
		 */
		if (c->io.fd == -1 && !s->timer_at_deadline) {
			/* The back-off after a refused connect is over. */
			(void)dial_attempt(s, c);
			return;
		}
		if (c->connecting && !s->timer_at_deadline) {
			/* This attempt hangs; there is time for another. */
			c->io.error = ETIMEDOUT;
			(void)session_conn_failed(c, "connect");
			return;
		}
		if (c->handshaking && c->io.transport->tls)
			metrics.tls_failures++;
		if (c->handshaking)
			snprintf(reason, sizeof(reason), "handshake with %s "
			    "timed out", c->io.endpoint->name);
		else if (c->io.fd != -1 && !c->connecting)
			snprintf(reason, sizeof(reason), "runtime did not "
			    "answer ProcessInfo within %.1fs",
			    settings.connect_timeout_ms / 1000.0);
		else
			snprintf(reason, sizeof(reason), "connect to %s timed "
			    "out after %.1fs%s%s", c->io.endpoint->name,
			    settings.connect_timeout_ms / 1000.0,
			    c->io.error ? ": " : "",
			    c->io.error ? conn_error(c) : "");
		if (s->state == S_DIAL && c->side != s->tool_side) {
			s->timed_out = 1;
			(void)fail_tool(s, c->handshaking &&
			    c->io.transport->tls ? HRESULT_TLS_FAILED :
			    HRESULT_CONN_TIMEOUT, reason);
			return;
		}
		break;
	case S_WAIT_RUNTIME:
		wait_reason(s, reason, sizeof(reason));
		s->timed_out = 1;
		(void)fail_tool(s, HRESULT_TIMEOUT, reason);
		return;
	case S_AWAIT_COMMAND:
		if (s->command_begun)
			snprintf(reason, sizeof(reason), "incomplete command "
			    "within %.1fs", settings.handshake_timeout_ms /
			    1000.0);
		else
			snprintf(reason, sizeof(reason), "the tool sent no "
			    "command within %.1fs (--offer-timeout)",
			    settings.offer_timeout_ms / 1000.0);
		break;
	case S_PUMP:
		snprintf(reason, sizeof(reason), "tool did not close within "
		    "%.1fs after the runtime ended",
		    settings.close_timeout_ms / 1000.0);
		break;
	case S_DENY:
		snprintf(reason, sizeof(reason), "%s",
		    s->deny_reason != NULL ? s->deny_reason : "denied");
		break;
	case S_HOLD:
		snprintf(reason, sizeof(reason), "%s", end_reason(s));
		break;
	}
	s->timed_out = 1;
	session_close(s, reason);
}

/* client-client: open an offer, starting with the runtime's identity. */
void
session_offer(struct route *r)
{
	struct session	*s;
	struct conn	*rt;
	uint8_t		 req[IPC_HEADER_LEN];

	if ((s = session_new(r)) == NULL) {
		log_error("out of memory");
		route_offer_schedule(r, 500);
		return;
	}
	r->offer = s;
	s->offer = 1;
	s->quiet = 1;
	s->tool_side = OTHER_SIDE(r->runtime_side);
	rt = runtime_conn(s);
	ipc_request(req, IPC_SET_PROCESS, 0x00);
	if (evbuffer_add(rt->out, req, sizeof(req)) == -1) {
		session_close(s, "out of memory");
		return;
	}
	(void)dial(s, S_PROBE, r->runtime_side);
}

/* A runtime parked: give it to the tools waiting, oldest first. */
void
session_runtime_available(struct route *r)
{
	struct session	*s, *next;
	struct runtime	*rt;
	const char	*why;
	uint32_t	 hresult;
	size_t		 len;
	int		 taken;

	/* A tool bound to another runtime (the mirror's) goes on waiting. */
	for (s = TAILQ_FIRST(&r->waiting); s != NULL; s = next) {
		next = TAILQ_NEXT(s, wait_entry);
		/* A ProcessInfo answered meanwhile, by another tool's ask. */
		if (recorded_reply(s, &rt, &len) != NULL) {
			TAILQ_REMOVE(&r->waiting, s, wait_entry);
			s->waiting = 0;
			(void)from_record(s, &taken);
			continue;
		}
		if ((taken = runtime_take(s, &why, &hresult)) == 0)
			continue;
		TAILQ_REMOVE(&r->waiting, s, wait_entry);
		s->waiting = 0;
		if (taken == 1)
			(void)pump_start(s);
		else
			(void)deny(s, hresult, why);
	}
}

/*
 * The session's end line: who, what, how many bytes each way, how it
 * was judged and answered, and why it ended.  Peers are named only when
 * the line is logged.
 */
static void
end_line(struct session *s, const char *reason)
{
	struct conn	*tool = NULL, *rt = NULL, *c;
	struct log_rec	 r;
	char		 cookie[33], peer[256] = "", answer[40] = "";
	char		 tool_name[256], rt_name[256];

	if (!log_begin(&r, s->quiet ? LL_DEBUG : LL_INFO, "session.end"))
		return;
	if (s->tool_side != -1) {
		tool = tool_conn(s);
		rt = runtime_conn(s);
		conn_peer_name(tool, tool_name, sizeof(tool_name));
		conn_peer_name(rt, rt_name, sizeof(rt_name));
	} else {
		/* Not classified: name whoever connected. */
		c = s->conn[SIDE_LOCAL].io.fd != -1 ? &s->conn[SIDE_LOCAL] :
		    &s->conn[SIDE_REMOTE];
		conn_peer_name(c, peer, sizeof(peer));
	}
	if (s->have_advertise)
		ipc_cookie_hex(s->advertise.cookie, cookie);
	if (s->asked)
		answer_label(s, answer, sizeof(answer));
	log_words(&r, "session %" PRIu64 ":", s->id);
	log_u64(&r, "session", s->id, LF_JSON);
	log_str(&r, "route", s->route->name, 0);
	log_str(&r, "command", s->command[0] != '\0' ? s->command : NULL, 0);
	log_str(&r, "tool", tool != NULL ? tool_name : NULL, 0);
	log_str(&r, "runtime", rt != NULL ? rt_name : NULL, 0);
	if (tool != NULL) {
		log_str(&r, "tool_endpoint", tool->io.endpoint->name, LF_JSON);
		log_str(&r, "runtime_endpoint", rt->io.endpoint->name, LF_JSON);
	}
	if (s->have_advertise) {
		log_u64(&r, "runtime_pid", s->advertise.pid, 0);
		log_str(&r, "cookie", cookie, 0);
	} else {
		log_str(&r, "runtime_pid", NULL, 0);
		log_str(&r, "cookie", NULL, 0);
	}
	log_u64(&r, "to_runtime", rt != NULL ? rt->nwritten : 0, 0);
	log_u64(&r, "to_tool", tool != NULL ? tool->nwritten : 0, 0);
	log_secs(&r, "duration", elapsed_s(&s->started), 0);
	if (tool == NULL)
		log_str(&r, "peer", peer, 0);
	if (s->asked)
		log_str(&r, "answer", answer, 0);
	if (s->judged) {
		log_str(&r, "decision", s->allowed ? "allow" : "deny", 0);
		log_str(&r, "rule", s->rule, LF_QUOTE);
	}
	if (s->warm || s->spare)
		log_str(&r, "warm", s->warm ? "arrived" : "taken", 0);
	log_str(&r, "end", reason, LF_QUOTE);
	log_end(&r);
}

/* How a session ended, for the outcome label of /metrics. */
static enum metrics_outcome
outcome(const struct session *s, const char *reason)
{
	if (strncmp(reason, "refused", 7) == 0)
		return (MO_REFUSED);
	if (s->judged && !s->allowed)
		return (MO_DENIED);
	if (s->state == S_HOLD)
		return (MO_REFUSED);
	if (s->timed_out)
		return (MO_TIMEOUT);
	if (strcmp(reason, "runtime connection parked") == 0)
		return (MO_PARKED);
	if (s->from_record)
		return (MO_COMPLETED);
	if (s->state == S_PUMP)
		return (MO_COMPLETED);
	return (MO_ERROR);
}

/*
 * Add an ending session to the counters: once, so no per-byte work.  A
 * client-client offer no tool took up is the router's own attempt, made
 * again and again while no tool listens: not a session to count.
 */
static void
count_session(const struct session *s, const char *reason)
{
	const struct conn	*tool, *rt;

	if (s->offer && !s->judged)
		return;
	metrics.sessions[s->route->mode][outcome(s, reason)]++;
	if (s->tool_side == -1)
		return;
	tool = &s->conn[s->tool_side];
	rt = &s->conn[OTHER_SIDE(s->tool_side)];
	metrics.bytes_to_runtime += rt->nwritten;
	metrics.bytes_to_tool += tool->nwritten;
}

/* End a session: one log line, then free everything it holds. */
void
session_close(struct session *s, const char *reason)
{
	struct route	*r = s->route;

	end_line(s, reason);
	count_session(s, reason);
	if (s->waiting)
		TAILQ_REMOVE(&r->waiting, s, wait_entry);
	if (r->offer == s) {
		r->offer = NULL;
		if (!draining)
			route_offer_schedule(r, -1);
	}
	if (s->runtime != NULL)
		runtime_release(s);
	if (s->counts_dialled)
		r->dialled--;
	free(s->replay);
	free(s->rule);
	free(s->end_reason);
	if (s->info_reply != NULL)
		evbuffer_free(s->info_reply);
	session_timer_drop(s);
	if (s->idle != NULL)
		event_free(s->idle);
	conn_free(&s->conn[SIDE_LOCAL]);
	conn_free(&s->conn[SIDE_REMOTE]);
	TAILQ_REMOVE(&sessions, s, entry);
	free(s);

	route_listener_freed();
	if (draining && TAILQ_EMPTY(&sessions))
		event_base_loopexit(base, NULL);
}

/* Shutting down: close every session that is not forwarding yet. */
void
session_drain_all(void)
{
	struct session	*s, *next;

	for (s = TAILQ_FIRST(&sessions); s != NULL; s = next) {
		next = TAILQ_NEXT(s, entry);
		if (s->state != S_PUMP)
			session_close(s, "router shutting down");
	}
}

void
session_close_all(const char *reason)
{
	struct session	*s;

	while ((s = TAILQ_FIRST(&sessions)) != NULL)
		session_close(s, reason);
}
