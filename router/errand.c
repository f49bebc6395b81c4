/* SPDX-License-Identifier: ISC */

/*
 * The router's own commands to a runtime that dials it: ProcessInfo, so
 * that the mirror can name it, and ResumeRuntime for --resume-after.
 * Each goes on the runtime's parked connection, never on one a tool is
 * using, and takes it: the router sends its command, reads the whole
 * answer, and closes the connection, as a tool does; the runtime dials
 * again at once.  When an errand is due and nothing is parked, it waits
 * for the next connection.  One runs at a time; while it does, tools wait
 * for that runtime as they do while another tool's command is in flight.
 *
 * What to do with an answer is the caller's (resume.c, runtime.c): this
 * file only moves the bytes and keeps the deadline.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "router/engine.h"
#include "router/settings.h"
#include "transports/transport.h"

static void	 errand_send(struct runtime *, enum errand_kind);
static void	 errand_end(struct runtime *, enum errand_result,
		    const uint8_t *, size_t);
static void	 errand_timeout(evutil_socket_t, short, void *);

static const struct {
	uint8_t		 set;
	uint8_t		 id;
} requests[] = {
	[ERRAND_INFO] = { IPC_SET_PROCESS, IPC_ID_PROCESS_INFO2 },
	[ERRAND_INFO1] = { IPC_SET_PROCESS, IPC_ID_PROCESS_INFO },
	[ERRAND_RESUME] = { IPC_SET_PROCESS, IPC_ID_RESUME_RUNTIME },
};

/* The kind of errand now on the parked connection, or ERRAND_NONE. */
int
errand_busy(const struct runtime *rt)
{
	return (rt->errand != ERRAND_NONE);
}

/*
 * Ask for an errand: now if a connection is parked and none runs, else
 * on the next one parked.
 */
void
errand_want(struct runtime *rt, enum errand_kind kind)
{
	rt->errands_due |= 1U << kind;
	if (rt->errand == ERRAND_NONE && rt->parked.io.fd != -1)
		(void)errand_parked(rt);
}

/* Whether an errand of that kind waits for a parked connection. */
int
errand_due(const struct runtime *rt, enum errand_kind kind)
{
	return ((rt->errands_due & (1U << kind)) != 0);
}

/* An errand no longer wanted, e.g. a tool resumed the runtime itself. */
void
errand_cancel(struct runtime *rt, enum errand_kind kind)
{
	rt->errands_due &= ~(1U << kind);
}

/*
 * The runtime parked a connection: an errand that waits for one takes it.
 * Return 1 if it did.
 */
int
errand_parked(struct runtime *rt)
{
	enum errand_kind	 kind;

	if (rt->errand != ERRAND_NONE) {
		/* The connection it went on died: send it again. */
		rt->errands_due |= 1U << rt->errand;
		rt->errand = ERRAND_NONE;
		evbuffer_drain(rt->parked.out,
		    evbuffer_get_length(rt->parked.out));
	}
	/* In the order of the kinds: who the runtime is comes first. */
	for (kind = ERRAND_NONE + 1; kind < ERRAND_KINDS; kind++) {
		if (errand_due(rt, kind)) {
			errand_send(rt, kind);
			return (1);
		}
	}
	return (0);
}

/* Send the request on the parked connection and await the answer. */
static void
errand_send(struct runtime *rt, enum errand_kind kind)
{
	struct timeval	 tv;
	uint8_t		 msg[IPC_HEADER_LEN];
	char		 name[96];

	if (rt->errand_timer == NULL && (rt->errand_timer =
	    evtimer_new(base, errand_timeout, rt)) == NULL)
		goto nomem;
	if (rt->errand_in == NULL && (rt->errand_in = evbuffer_new()) == NULL)
		goto nomem;
	evbuffer_drain(rt->errand_in, evbuffer_get_length(rt->errand_in));
	ipc_request(msg, requests[kind].set, requests[kind].id);
	if (evbuffer_add(rt->parked.out, msg, sizeof(msg)) == -1)
		goto nomem;
	rt->errands_due &= ~(1U << kind);
	rt->errand = kind;
	if (log_enabled(LL_DEBUG)) {
		runtime_name(rt, name, sizeof(name));
		log_debug("%s: the router sends its own %s on the parked "
		    "connection", name, ipc_command_name(requests[kind].set,
		    requests[kind].id));
	}
	timeval_ms(&tv, settings.handshake_timeout_ms);
	evtimer_add(rt->errand_timer, &tv);
	conn_update(&rt->parked);
	if (kind == ERRAND_RESUME)
		resume_sent(rt);
	return;

nomem:
	rt->errands_due &= ~(1U << kind);
	rt->errand = kind;
	errand_end(rt, ERRAND_FAILED, NULL, 0);
}

static void
errand_timeout(evutil_socket_t fd, short what, void *arg)
{
	errand_end(arg, ERRAND_TIMEOUT, NULL, 0);
}

/*
 * The parked connection of an errand is ready: send the rest of the
 * request, or read the answer until it is whole.
 */
void
errand_event(struct runtime *rt)
{
	struct conn	*c = &rt->parked;
	uint8_t		 buf[4096];
	const uint8_t	*reply;
	size_t		 have, need;
	ssize_t		 n;

	if (evbuffer_get_length(c->out) > 0) {
		n = c->io.transport->write_buffer(&c->io, c->out);
		if (n == IO_ERROR) {
			errand_end(rt, ERRAND_CLOSED, NULL, 0);
			return;
		}
		conn_update(c);
		if (evbuffer_get_length(c->out) > 0)
			return;
	}
	n = conn_read_parked(c, buf, sizeof(buf));
	if (n == IO_WANT_READ || n == IO_WANT_WRITE)
		return;
	if (n <= 0) {
		errand_end(rt, ERRAND_CLOSED, NULL, 0);
		return;
	}
	if (evbuffer_add(rt->errand_in, buf, (size_t)n) == -1) {
		errand_end(rt, ERRAND_FAILED, NULL, 0);
		return;
	}
	have = evbuffer_get_length(rt->errand_in);
	if (have < IPC_HEADER_LEN)
		return;
	reply = evbuffer_pullup(rt->errand_in, IPC_HEADER_LEN);
	need = ipc_size(reply);
	if (need < IPC_HEADER_LEN)
		need = have;	/* not a header: let the caller say so */
	if (have < need)
		return;
	if ((reply = evbuffer_pullup(rt->errand_in, have)) == NULL) {
		errand_end(rt, ERRAND_FAILED, NULL, 0);
		return;
	}
	errand_end(rt, ERRAND_ANSWERED, reply, have);
}

/*
 * The errand is over, however it went: close the connection (the
 * runtime dials again), then tell its owner.  Tools that waited meanwhile
 * take the next connection parked.
 */
static void
errand_end(struct runtime *rt, enum errand_result result,
    const uint8_t *reply, size_t len)
{
	enum errand_kind	 kind = rt->errand;

	rt->errand = ERRAND_NONE;
	if (rt->errand_timer != NULL)
		evtimer_del(rt->errand_timer);
	evbuffer_drain(rt->parked.out, evbuffer_get_length(rt->parked.out));
	conn_close(&rt->parked);
	/* An errand is a command too: the backend wait runs from its end. */
	rt->last_used = now_ms();
	runtime_away(rt);
	/* The owner may free the record: nothing of it is touched after. */
	switch (kind) {
	case ERRAND_INFO:
	case ERRAND_INFO1:
		runtime_info_answer(rt, kind, result, reply, len);
		break;
	case ERRAND_RESUME:
		resume_answer(rt, result, reply, len);
		break;
	default:
		break;
	}
}

/* The record goes away. */
void
errand_forget(struct runtime *rt)
{
	if (rt->errand_timer != NULL)
		event_free(rt->errand_timer);
	if (rt->errand_in != NULL)
		evbuffer_free(rt->errand_in);
	rt->errand_timer = NULL;
	rt->errand_in = NULL;
	rt->errand = ERRAND_NONE;
	rt->errands_due = 0;
}
