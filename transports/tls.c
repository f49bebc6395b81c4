/* SPDX-License-Identifier: ISC */

/*
 * The part of tls that does not depend on the library: the transport
 * table, writes cut into records and sent a batch at a time, and the
 * context of each TLS endpoint, built at start-up and rebuilt on SIGHUP
 * (route_reload_tls).  Connections keep a reference to the context they
 * started with, so a reload never disturbs a session in flight.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "router/dsroute.h"

/* One record's worth of plaintext: the most one record carries. */
#define RECORD_MAX	16384

/*
 * Records sent with one write(2): a write per record costs a system call
 * and a wake-up of the reader per 16 KiB.  A batch waits whole when the
 * socket is full, so this bounds what a session holds beyond the pump.
 */
#define BATCH_MAX	(4 * RECORD_MAX)

static ssize_t	 tls_read(struct conn *, void *, size_t);
static ssize_t	 tls_write(struct conn *, const void *, size_t);
static ssize_t	 tls_write_buffer(struct conn *, struct evbuffer *);
static size_t	 tls_pending(struct conn *);
static void	 tls_conn_teardown(struct conn *);

const struct transport transport_tls = {
	.name = "tls",
	.listen = tcp_listen,
	.unlisten = tcp_unlisten,
	.dial = tcp_dial,
	.setup = tls_setup,
	.handshake = tls_handshake,
	.read = tls_read,
	.write = tls_write,
	.write_buffer = tls_write_buffer,
	.pending = tls_pending,
	.shutdown = tls_shutdown,
	.teardown = tls_conn_teardown,
};

/*
 * Decrypt into buf until it is full or the socket has no more: large
 * reads make a fast relay.  An end or error after some bytes is kept for
 * the next call.
 */
static ssize_t
tls_read(struct conn *c, void *buf, size_t len)
{
	struct tls_shared	*t = c->tls;
	size_t			 done = 0;
	ssize_t			 n;

	if (t->read_ended)
		return (t->read_result);
	while (done < len) {
		n = tls_read_some(c, (uint8_t *)buf + done, len - done);
		if (n > 0) {
			done += n;
			continue;
		}
		if (done == 0)
			return (n);
		if (n != IO_WANT_READ && n != IO_WANT_WRITE) {
			t->read_ended = 1;
			t->read_result = (int)n;
		}
		break;
	}
	return (done);
}

/* Input, or its end, that the socket will not signal again. */
static size_t
tls_pending(struct conn *c)
{
	struct tls_shared	*t = c->tls;

	return (t != NULL && (t->read_ended || tls_buffered(c)));
}

/*
 * Send what a backend's library writes, as send(2) does: to the socket,
 * or, while write_records seals a batch, into the batch for one write.
 */
ssize_t
tls_send(struct tls_shared *t, const void *buf, size_t len)
{
	if (!t->sealing)
		return (send(t->fd, buf, len, MSG_NOSIGNAL));
	if ((t->sealed == NULL && (t->sealed = evbuffer_new()) == NULL) ||
	    evbuffer_add(t->sealed, buf, len) == -1) {
		errno = ENOMEM;
		return (-1);
	}
	return (len);
}

/*
 * Send the sealed records: 0 once all went (the buffer is given back), or
 * IO_WANT_WRITE or IO_ERROR.
 */
static ssize_t
send_sealed(struct conn *c)
{
	struct tls_shared	*t = c->tls;
	ssize_t			 n;

	if (t->sealed == NULL)
		return (0);
	while (evbuffer_get_length(t->sealed) > 0)
		if ((n = socket_write_buffer(c, t->sealed)) < 0)
			return (n);
	evbuffer_free(t->sealed);
	t->sealed = NULL;
	return (0);
}

/* The len bytes at off in buf, contiguous: in place, or copied to tmp. */
static const uint8_t *
record_at(struct evbuffer *buf, size_t off, size_t len, uint8_t *tmp)
{
	struct evbuffer_ptr	 pos;
	struct evbuffer_iovec	 v;

	if (evbuffer_ptr_set(buf, &pos, off, EVBUFFER_PTR_SET) == -1)
		return (NULL);
	if (evbuffer_peek(buf, len, &pos, &v, 1) == 1 && v.iov_len >= len)
		return (v.iov_base);
	if (evbuffer_copyout_from(buf, &pos, tmp, len) != (ssize_t)len)
		return (NULL);
	return (tmp);
}

/*
 * Write len bytes, from flat or from the head of buf, as records sent
 * BATCH_MAX at a time.  A batch the socket did not take whole is sent by
 * the next call before anything else, and its bytes count only then: the
 * caller keeps them at the head of what it passes, as many or more.  A
 * record that wanted I/O is retried the same way.  Bytes sent count even
 * when a later batch waits; an error loses them only when none were sent.
 */
static ssize_t
write_records(struct conn *c, const uint8_t *flat, struct evbuffer *buf,
    size_t len)
{
	static uint8_t		 tmp[RECORD_MAX];
	struct tls_shared	*t = c->tls;
	const uint8_t		*p;
	size_t			 done, off, want;
	ssize_t			 n = 0, rv;

	if ((rv = send_sealed(c)) < 0)
		return (rv);
	if (t->staged > len) {		/* the caller broke its promise */
		c->error = EINVAL;
		return (IO_ERROR);
	}
	done = t->staged;
	t->staged = 0;
	while (done < len) {
		t->sealing = 1;
		while ((off = done + t->staged) < len &&
		    t->staged < BATCH_MAX) {
			want = len - off < RECORD_MAX ? len - off : RECORD_MAX;
			p = flat != NULL ? flat + off :
			    record_at(buf, off, want, tmp);
			if (p == NULL) {
				c->error = ENOMEM;
				n = IO_ERROR;
				break;
			}
			if ((n = tls_write_record(c, p, want)) < 0)
				break;
			t->staged += n;
		}
		t->sealing = 0;
		if ((rv = send_sealed(c)) < 0)
			return (done > 0 && rv != IO_ERROR ? (ssize_t)done : rv);
		done += t->staged;
		t->staged = 0;
		if (n < 0)
			return (done > 0 && n != IO_ERROR ? (ssize_t)done : n);
	}
	tls_write_end(c);
	return (done);
}

static ssize_t
tls_write(struct conn *c, const void *buf, size_t len)
{
	return (write_records(c, buf, NULL, len));
}

static ssize_t
tls_write_buffer(struct conn *c, struct evbuffer *buf)
{
	ssize_t	 n;

	n = write_records(c, NULL, buf, evbuffer_get_length(buf));
	if (n > 0)
		evbuffer_drain(buf, n);
	return (n);
}

static void
tls_conn_teardown(struct conn *c)
{
	struct tls_shared	*t = c->tls;

	if (t != NULL && t->sealed != NULL) {
		evbuffer_free(t->sealed);
		t->sealed = NULL;
	}
	tls_teardown(c);
}

/* Build the context of a TLS endpoint whose role is decided. */
int
tls_prepare(struct endpoint *ep, char *err, size_t len)
{
	if ((ep->tls_ctx = tls_context_new(ep, err, len)) == NULL)
		return (-1);
	return (0);
}

/* Drop the endpoint's context; live connections keep their reference. */
void
tls_release(struct endpoint *ep)
{
	if (ep->tls_ctx != NULL)
		tls_context_free(ep->tls_ctx);
	ep->tls_ctx = NULL;
}
