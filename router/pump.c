/* SPDX-License-Identifier: ISC */

/*
 * Moving bytes between the two conns of a session.
 *
 * Every read goes into one scratch buffer (the router has one thread) and
 * is written straight to the peer when nothing is queued for it; only
 * what the peer does not take is copied into its output.  So the fast
 * path allocates nothing, an idle session holds no buffer, and a slow
 * reader costs at most the high water mark per direction: reading from
 * the source stops there and resumes below the low water mark.
 *
 * The same reads feed the session's first-message logic: before the pump
 * starts, the peer is not writable and its output collects the greeting.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/engine.h"
#include "router/metrics.h"
#include "router/settings.h"
#include "transports/transport.h"

static void	 pump_idle_cb(evutil_socket_t, short, void *);
static int	 pump_eof(struct conn *);

/* Large reads are what make a relay fast (see bench/README.md). */
static uint8_t	 scratch[256 * 1024];

/*
 * Once a session's bytes are a stream, not a command's answer, those out
 * of a transport that can (TCP) move to one that can (a Unix socket)
 * inside the kernel: socket, pipe, socket, with splice(2), never copied
 * through the router (bench/README.md).  Only while the router reads
 * none of them (a first answer, a ProcessInfo reply it keeps) and
 * nothing waits in the peer's output: the peer's bytes are in one queue
 * or the other, never both.  The pipe is the peer's, made then; where
 * none can be made (EMFILE, a system without splice) the stream is
 * copied as before.
 */
#define KPIPE_AFTER	(1024 * 1024)	/* bytes copied to a peer first */

struct kpipe {
	int	 fd[2];			/* its read end, its write end */
	size_t	 held;			/* bytes in it */
};

static struct conn *
peer_of(struct conn *c)
{
	return (&c->session->conn[OTHER_SIDE(c->side)]);
}

static size_t
kpipe_held(const struct conn *c)
{
	return (c->kpipe != NULL ? c->kpipe->held : 0);
}

/* What waits to go out on c, in its output or its pipe. */
size_t
pump_queued(const struct conn *c)
{
	return (evbuffer_get_length(c->out) + kpipe_held(c));
}

void
pump_kpipe_free(struct conn *c)
{
	if (c->kpipe == NULL)
		return;
	close(c->kpipe->fd[0]);
	close(c->kpipe->fd[1]);
	free(c->kpipe);
	c->kpipe = NULL;
	limit_pipe_release();
}

/* Whether what c reads should go to p through p's pipe. */
static int
kpipe_wanted(const struct conn *c, const struct conn *p)
{
	const struct session	*s = c->session;

	return (s->state == S_PUMP && !p->no_kpipe &&
	    c->io.transport->read_pipe != NULL &&
	    p->io.transport->write_pipe != NULL &&
	    p->nwritten >= KPIPE_AFTER && conn_is_open(p) && p->writing &&
	    !p->shut && !p->wwant_read && evbuffer_get_length(p->out) == 0 &&
	    s->replay == NULL && !s->awaiting_answer && s->info_version < 0);
}

/* Make p's pipe; -1 if it cannot be had, and the stream stays copied. */
static int
kpipe_make(struct conn *p)
{
	struct kpipe	*k;

	if (p->kpipe != NULL)
		return (0);
	if (limit_pipe_take() == -1) {
		log_debug("session %" PRIu64 ": no descriptors to spare for a "
		    "kernel pipe: its stream is copied", p->session->id);
		p->no_kpipe = 1;
		return (-1);
	}
	if ((k = calloc(1, sizeof(*k))) == NULL ||
	    platform_kpipe_open(k->fd) == -1) {
		log_debug("session %" PRIu64 ": no kernel pipe (%s): its "
		    "stream is copied", p->session->id, strerror(errno));
		free(k);
		limit_pipe_release();
		p->no_kpipe = 1;
		return (-1);
	}
	p->kpipe = k;
	return (0);
}

/*
 * A transport may hold input the socket will not signal again (TLS read
 * ahead, or a record larger than the scratch buffer): read it from the
 * loop.  Only after conn_update: libevent ignores event_add() on an
 * event that is already active.
 */
static void
read_held_input(struct conn *c)
{
	if (c->io.transport->pending != NULL &&
	    c->io.transport->pending(&c->io))
		event_active(&c->rev, EV_READ, 0);
}

static const char *
side_role(const struct session *s, const struct conn *c)
{
	if (s->tool_side == -1)
		return ("peer");
	return (c->side == s->tool_side ? "tool" : "runtime");
}

/* Close the session because reading from or writing to c failed. */
static int
io_failed(struct session *s, struct conn *c, int writing)
{
	const char	*role = side_role(s, c);
	char		 reason[160];

	if (s->state == S_PUMP && c->side != s->tool_side &&
	    session_runtime_lost(s))
		return (-1);
	if (c->io.error == ECONNRESET || c->io.error == EPIPE) {
		/* Writing to a peer that already ended is how it closes. */
		snprintf(reason, sizeof(reason), c->eof ? "%s closed" :
		    "%s reset the connection", role);
	} else
		snprintf(reason, sizeof(reason), "%s %s: %s",
		    writing ? "writing to" : "reading from", role,
		    conn_error(c));
	session_close(s, reason);
	return (-1);
}

/*
 * Hand n bytes read from the peer of p to p: write them at once when
 * nothing is waiting, queue the rest.  Return -1 if the session closed.
 */
static int
deliver(struct conn *p, const uint8_t *buf, size_t n)
{
	ssize_t	 w = 0;

	if (p->writing && conn_is_open(p) && !p->wwant_read &&
	    evbuffer_get_length(p->out) == 0) {
		w = p->io.transport->write(&p->io, buf, n);
		if (w == IO_ERROR)
			return (io_failed(p->session, p, 1));
		if (w == IO_WANT_READ)
			p->wwant_read = 1;
		if (w < 0)
			w = 0;
		p->nwritten += w;
	}
	if ((size_t)w < n && evbuffer_add(p->out, buf + w, n - w) == -1) {
		session_close(p->session, "out of memory");
		return (-1);
	}
	conn_update(p);
	return (0);
}

/*
 * Write what p's pipe holds to p, as much as it takes in one call.
 * Return -1 if the session closed.
 */
static int
kpipe_drain(struct conn *p)
{
	struct kpipe	*k = p->kpipe;
	ssize_t		 w;

	w = p->io.transport->write_pipe(&p->io, k->fd[0], k->held);
	if (w == IO_ERROR)
		return (io_failed(p->session, p, 1));
	if (w > 0) {
		k->held -= w;
		p->nwritten += w;
		if (settings.idle_timeout_ms > 0)
			p->session->last_io = now_ms();
	}
	return (0);
}

/*
 * Move what c has into its peer's pipe and on to the peer; the rest of
 * what the peer does not take waits there, and c with it.  Return -1
 * if the session closed.
 */
static int
pump_kpipe(struct conn *c, struct conn *p)
{
	struct session	*s = c->session;
	ssize_t		 n;

	n = c->io.transport->read_pipe(&c->io, p->kpipe->fd[1],
	    sizeof(scratch));
	if (n == IO_WANT_READ) {
		conn_update(c);
		return (0);
	}
	if (n == IO_ERROR && (c->io.error == EINVAL ||
	    c->io.error == ENOSYS)) {
		/* This socket will not splice: nothing moved, copy it. */
		c->io.error = 0;
		pump_kpipe_free(p);
		p->no_kpipe = 1;
		return (pump_read(c));
	}
	if (n == IO_ERROR)
		return (io_failed(s, c, 0));
	if (n == 0)
		return (pump_eof(c));
	p->kpipe->held = n;
	if (settings.idle_timeout_ms > 0)
		s->last_io = now_ms();
	if (kpipe_drain(p) == -1)
		return (-1);
	if (kpipe_held(p) > 0)
		c->throttled = 1;
	conn_update(p);
	conn_update(c);
	return (0);
}

/*
 * End our sending direction on c.  A TLS close_notify that the socket
 * cannot take yet is sent when it becomes writable; any other failure
 * shows up on the next read or write.
 */
static void
end_sending(struct conn *c)
{
	c->shut = 1;
	c->shut_pending = c->io.transport->shutdown(&c->io) == IO_WANT_WRITE;
}

/* End our sending direction on c once its source ended and c's queue is out. */
static void
maybe_shutdown(struct conn *c)
{
	struct conn	*src = peer_of(c);

	if (c->shut || !conn_is_open(c) || !c->writing ||
	    c->session->state != S_PUMP || !src->eof || pump_queued(c) != 0)
		return;
	/*
	 * Both directions are over and the session closes at once.  On a
	 * plain socket (no transport state, such as a TLS close_notify to
	 * send) close() sends the same FIN: spare the system call.
	 */
	if (c->eof && src->shut && c->io.transport->plain) {
		c->shut = 1;
		return;
	}
	/*
	 * A transport without a half-close (a named pipe) ends both ways
	 * on shutdown.  Toward a tool whose runtime ended, that is how the
	 * tool learns of the end; toward a runtime whose tool half-closed
	 * after its command, it would cut off the runtime's answer.  A
	 * runtime reads nothing after the command: leave its pipe open.
	 */
	if (c->io.transport->no_half_close && c->session->tool_side != -1 &&
	    c->side != c->session->tool_side) {
		c->shut = 1;
		return;
	}
	end_sending(c);
}

/* Close the session when both directions have finished. */
static int
check_done(struct session *s)
{
	struct conn	*a = &s->conn[0], *b = &s->conn[1];

	if (s->state != S_PUMP)
		return (0);
	if (a->eof && b->eof && a->shut && b->shut && !a->shut_pending &&
	    !b->shut_pending && pump_queued(a) == 0 && pump_queued(b) == 0) {
		session_close(s, s->runtime_ended_first ? "runtime closed" :
		    "tool closed");
		return (-1);
	}
	return (0);
}

/* The source c reached EOF: pass it on as a half-close. */
static int
pump_eof(struct conn *c)
{
	struct session	*s = c->session;
	struct conn	*p = peer_of(c);
	struct timeval	 tv;

	c->eof = 1;
	if (s->state != S_PUMP)
		return (session_eof(c));
	if (c->side != s->tool_side && session_runtime_lost(s))
		return (-1);
	if (c->side != s->tool_side && !p->eof) {
		/* The runtime is done: the tool gets a while to close. */
		if (session_timer_make(s) == -1)
			return (-1);
		s->runtime_ended_first = 1;
		timeval_ms(&tv, settings.close_timeout_ms);
		evtimer_add(s->timer, &tv);
	}
	maybe_shutdown(p);
	conn_update(c);
	conn_update(p);
	return (check_done(s));
}

/*
 * Read what c has to say into its peer: one read per call.  Reading on
 * until the socket would block costs a system call that finds nothing;
 * instead the loop calls again while the socket stays readable, and for
 * input a transport holds (TLS) read_held_input wakes it.  A full peer
 * queue throttles c instead.  Return -1 if the session closed.
 */
int
pump_read(struct conn *c)
{
	struct session	*s = c->session;
	struct conn	*p = peer_of(c);
	size_t		 queued, room;
	ssize_t		 n;

	if (!c->reading || c->eof || !conn_is_open(c)) {
		conn_update(c);
		return (0);
	}
	if (kpipe_held(p) > 0) {
		/* The peer has not taken the last of them. */
		c->throttled = 1;
		conn_update(c);
		return (0);
	}
	if (kpipe_wanted(c, p) && kpipe_make(p) == 0)
		return (pump_kpipe(c, p));
	queued = evbuffer_get_length(p->out);
	if (queued >= settings.high_water) {
		c->throttled = 1;
		conn_update(c);
		return (0);
	}
	room = settings.high_water - queued;
	if (room > sizeof(scratch))
		room = sizeof(scratch);

	n = c->io.transport->read(&c->io, scratch, room);
	if (n == IO_WANT_READ) {
		conn_update(c);
		return (0);
	}
	if (n == IO_WANT_WRITE) {
		c->rwant_write = 1;
		conn_update(c);
		return (0);
	}
	if (n == IO_ERROR)
		return (io_failed(s, c, 0));
	if (n == 0)
		return (pump_eof(c));

	if (settings.idle_timeout_ms > 0)
		s->last_io = now_ms();
	if (s->awaiting_answer && s->state == S_PUMP &&
	    c->side != s->tool_side)
		session_answer(s, scratch, n);
	if (s->info_version >= 0 && s->state == S_PUMP &&
	    c->side != s->tool_side)
		session_info_reply(s, scratch, n);
	if (deliver(p, scratch, n) == -1)
		return (-1);
	if (evbuffer_get_length(p->out) >= settings.high_water)
		c->throttled = 1;
	conn_update(c);
	if (!c->throttled)
		read_held_input(c);
	if (session_input(c) == -1)
		return (-1);
	/*
	 * The peer closed after these bytes: take its EOF now rather than
	 * after another turn of the loop (pump_read checks that c still
	 * reads).
	 */
	if (c->peer_closed && (size_t)n < room)
		return (pump_read(c));
	return (0);
}

/*
 * Write what is queued for c; once the queue falls below the low water
 * mark, let its throttled source read again.  When the queue is empty,
 * pass on a half-close (or, after an error frame, end our side).  Return
 * -1 if the session closed.
 */
int
pump_write(struct conn *c)
{
	struct session	*s = c->session;
	struct conn	*src = peer_of(c);
	ssize_t		 n;
	int		 resume = 0;

	if (!c->writing || !conn_is_open(c)) {
		conn_update(c);
		return (0);
	}
	if (c->shut_pending)
		c->shut_pending = c->io.transport->shutdown(&c->io) ==
		    IO_WANT_WRITE;
	if (kpipe_held(c) > 0 && kpipe_drain(c) == -1)
		return (-1);
	if (evbuffer_get_length(c->out) > 0) {
		n = c->io.transport->write_buffer(&c->io, c->out);
		if (n == IO_ERROR)
			return (io_failed(s, c, 1));
		if (n == IO_WANT_READ)
			c->wwant_read = 1;
		if (n > 0) {
			c->nwritten += n;
			if (settings.idle_timeout_ms > 0)
				s->last_io = now_ms();
		}
	}
	if (src->throttled && kpipe_held(c) == 0 &&
	    evbuffer_get_length(c->out) < settings.low_water) {
		src->throttled = 0;
		resume = conn_is_open(src) && src->reading && !src->eof;
	}
	if (pump_queued(c) == 0) {
		if (s->state == S_DENY && !c->shut) {
			end_sending(c);
			/* A tool that ended its side already: nothing is due. */
			if (c->eof && !c->shut_pending) {
				session_close(s, s->deny_reason != NULL ?
				    s->deny_reason : "denied");
				return (-1);
			}
		} else
			maybe_shutdown(c);
	}
	conn_update(c);
	conn_update(src);
	/*
	 * A transport may hold bytes the socket no longer signals: read
	 * once now.  Only after conn_update: libevent ignores event_add()
	 * on an event that is already active.
	 */
	if (resume)
		event_active(&src->rev, EV_READ, 0);
	return (check_done(s));
}

/* A session's conn is ready to read or to write (its conn_owner event). */
void
pump_event(struct conn *c, short what)
{
	if (what & EV_CLOSED)
		c->peer_closed = 1;
	if (what & EV_WRITE) {
		if (c->rwant_write) {
			c->rwant_write = 0;
			if (pump_read(c) == -1)
				return;
		}
		(void)pump_write(c);
	} else {
		if (c->wwant_read) {
			c->wwant_read = 0;
			if (pump_write(c) == -1)
				return;
		}
		(void)pump_read(c);
	}
}

/*
 * Both sides are connected and the first message may go: forward both
 * ways from now on.  Return -1 if the session closed.
 */
int
pump_start(struct session *s)
{
	struct conn	*tool = &s->conn[s->tool_side];
	struct conn	*rt = &s->conn[OTHER_SIDE(s->tool_side)];
	struct timeval	 tv;

	session_set_state(s, S_PUMP);
	session_timer_drop(s);
	if (settings.idle_timeout_ms > 0) {
		if (s->idle == NULL &&
		    (s->idle = evtimer_new(base, pump_idle_cb, s)) == NULL) {
			session_close(s, "out of memory");
			return (-1);
		}
		s->last_io = now_ms();
		timeval_ms(&tv, settings.idle_timeout_ms);
		evtimer_add(s->idle, &tv);
	}
	tool->reading = rt->reading = 1;
	tool->writing = rt->writing = 1;
	if (pump_write(rt) == -1 || pump_write(tool) == -1)
		return (-1);
	/* A tool that half-closed after its command: pass that on too. */
	maybe_shutdown(rt);
	conn_update(tool);
	conn_update(rt);
	/* A handshake may have read ahead. */
	read_held_input(rt);
	read_held_input(tool);
	return (check_done(s));
}

/*
 * Whether the peer of c took bytes since the last check: a slow tool
 * draining a large socket buffer is at work, though the router had
 * nothing to write to it for a while.  A stalled one is not.
 */
static int
drained_since(struct conn *c)
{
	long	 n;
	int	 moved;

	if (!conn_is_open(c) || c->io.transport->unsent == NULL ||
	    (n = c->io.transport->unsent(&c->io)) < 0)
		return (0);
	moved = (uint32_t)n != c->unsent_seen;
	c->unsent_seen = n;
	return (moved);
}

/*
 * --idle-timeout: close a forwarding session in which no byte moved
 * either way for that long, counting what the kernel still held for a
 * peer that took it since.  The timer is not pushed back on every byte:
 * when it fires early it waits for the rest.
 */
static void
pump_idle_cb(evutil_socket_t fd, short what, void *arg)
{
	struct session	*s = arg;
	struct timeval	 tv;
	uint64_t	 quiet = now_ms() - s->last_io;
	int		 moved;
	char		 reason[96];

	/* Off since a reload, or the session waits for a runtime again. */
	if (settings.idle_timeout_ms == 0 || s->state != S_PUMP)
		return;
	if (quiet >= (uint64_t)settings.idle_timeout_ms) {
		/* Both asked: each keeps what it saw for the next check. */
		moved = drained_since(&s->conn[SIDE_LOCAL]);
		moved |= drained_since(&s->conn[SIDE_REMOTE]);
		if (moved) {
			s->last_io = now_ms();
			quiet = 0;
		}
	}
	if (quiet < (uint64_t)settings.idle_timeout_ms) {
		timeval_ms(&tv, settings.idle_timeout_ms - (int)quiet);
		evtimer_add(s->idle, &tv);
		return;
	}
	snprintf(reason, sizeof(reason), "idle: no byte either way for %.1fs "
	    "(--idle-timeout)", settings.idle_timeout_ms / 1000.0);
	s->timed_out = 1;
	session_close(s, reason);
}
