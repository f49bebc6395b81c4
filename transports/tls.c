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

/*
 * The part of tls that does not depend on the library: the transport
 * table, writes cut into records, and the context of each TLS endpoint,
 * built at start-up and rebuilt on SIGHUP (route_reload_tls).  Connections
 * keep a reference to the context they started with, so a reload never
 * disturbs a session in flight.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "router/dsroute.h"

/* One record's worth of plaintext: the largest write TLS makes at once. */
#define RECORD_MAX	16384

static ssize_t	 tls_read(struct conn *, void *, size_t);
static ssize_t	 tls_write(struct conn *, const void *, size_t);
static ssize_t	 tls_write_buffer(struct conn *, struct evbuffer *);
static size_t	 tls_pending(struct conn *);

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
	.teardown = tls_teardown,
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
 * Write in records.  A record that wanted I/O is retried by the next call
 * with the same bytes at the head of what it passes, as many or more: the
 * pump keeps unsent bytes, and a record is never cut shorter than
 * RECORD_MAX while more are waiting.  Bytes already sent count even when
 * a later record waits; an error loses them only when nothing was sent.
 */
static ssize_t
tls_write(struct conn *c, const void *buf, size_t len)
{
	size_t	 done = 0;
	ssize_t	 n;

	while (done < len) {
		n = tls_write_record(c, (const uint8_t *)buf + done,
		    len - done < RECORD_MAX ? len - done : RECORD_MAX);
		if (n < 0)
			return (done > 0 && n != IO_ERROR ? (ssize_t)done : n);
		done += n;
	}
	tls_write_end(c);
	return (done);
}

/* Write whole records from the buffer, joining chains where needed. */
static ssize_t
tls_write_buffer(struct conn *c, struct evbuffer *buf)
{
	size_t		 done = 0, avail, want;
	const uint8_t	*p;
	ssize_t		 n;

	while ((avail = evbuffer_get_length(buf)) > 0) {
		want = avail < RECORD_MAX ? avail : RECORD_MAX;
		if ((p = evbuffer_pullup(buf, want)) == NULL) {
			c->error = ENOMEM;
			return (IO_ERROR);
		}
		n = tls_write_record(c, p, want);
		if (n < 0)
			return (done > 0 && n != IO_ERROR ? (ssize_t)done : n);
		evbuffer_drain(buf, n);
		done += n;
	}
	tls_write_end(c);
	return (done);
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
