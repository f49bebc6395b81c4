/* SPDX-License-Identifier: ISC */

/*
 * TLS over TCP: tls:HOST:PORT with cert=, key=, ca=, sni= and verify=.
 * The part that does not depend on the library: the endpoint and its
 * options, the transport table, writes cut into records and sent a batch
 * at a time, the identity a handshake verified, and the context of each
 * endpoint, built at start-up and rebuilt on SIGHUP.  Connections keep a
 * reference to the context they started with, so a reload never disturbs
 * a session in flight.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/identity.h"
#include "common/log.h"
#include "transports/socket.h"
#include "transports/tls.h"
#include "transports/transport.h"

/* One record's worth of plaintext: the most one record carries. */
#define RECORD_MAX	16384

/*
 * Records sent with one write(2): a write per record costs a system call
 * and a wake-up of the reader per 16 KiB.  A batch waits whole when the
 * socket is full, so this bounds what a session holds beyond the pump.
 */
#define BATCH_MAX	(4 * RECORD_MAX)

static int	 set_cert(struct endpoint *, const char *, char *, size_t);
static int	 set_key(struct endpoint *, const char *, char *, size_t);
static int	 set_ca(struct endpoint *, const char *, char *, size_t);
static int	 set_sni(struct endpoint *, const char *, char *, size_t);
static int	 set_verify(struct endpoint *, const char *, char *, size_t);

static const struct endpoint_option tls_options[] = {
	{ "cert", 1, set_cert },
	{ "key", 1, set_key },
	{ "ca", 1, set_ca },
	{ "sni", 1, set_sni },
	{ "verify", 1, set_verify },
};

static int	 tls_parse(struct endpoint *, const char *, char *, size_t);
static int	 tls_check(const struct endpoint *, char *, size_t);
static void	 tls_clear(struct endpoint *);
static int	 tls_verifies_peers(const struct endpoint *);
static enum exposure tls_exposure(const struct endpoint *);
static int	 tls_prepare(struct endpoint *, char *, size_t);
static void	 tls_release(struct endpoint *);
static void	*tls_reload(struct endpoint *, char *, size_t);
static void	 tls_reload_commit(struct endpoint *, void *);
static void	 tls_describe(const struct endpoint *, char *, size_t);
static void	 tls_howto(const struct endpoint *,
		    const struct endpoint *);
static ssize_t	 tls_read(struct stream *, void *, size_t);
static ssize_t	 tls_write(struct stream *, const void *, size_t);
static ssize_t	 tls_write_buffer(struct stream *, struct evbuffer *);
static size_t	 tls_pending(struct stream *);
static void	 tls_conn_teardown(struct stream *);

static const char *const tls_prefixes[] = { "tls:", NULL };

const struct transport transport_tls = {
	.name = "tls",
	.prefixes = tls_prefixes,
	.example = "tls:127.0.0.1:1",
	.identities = 1,
	.tls = 1,
	.options = tls_options,
	.noptions = sizeof(tls_options) / sizeof(tls_options[0]),
	.parse = tls_parse,
	.check = tls_check,
	.clear = tls_clear,
	.set_name = tcp_set_name,
	.auto_role = tcp_auto_role,
	.resolve = tcp_resolve,
	.exposure = tls_exposure,
	.verifies_peers = tls_verifies_peers,
	.prepare = tls_prepare,
	.release = tls_release,
	.reload = tls_reload,
	.reload_commit = tls_reload_commit,
	.reload_free = tls_context_free,
	.describe = tls_describe,
	.howto = tls_howto,
	.listen = tcp_listen,
	.dial = tcp_dial,
	.setup = tls_setup,
	.handshake = tls_handshake,
	.read = tls_read,
	.write = tls_write,
	.write_buffer = tls_write_buffer,
	.pending = tls_pending,
	.shutdown = tls_shutdown,
	.unsent = socket_unsent,
	.teardown = tls_conn_teardown,
};

static int
tls_parse(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	struct tls_endpoint	*t;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	ep->t = t;
	return (tcp_parse_address(&t->tcp, addr, err, len));
}

static void
tls_clear(struct endpoint *ep)
{
	struct tls_endpoint	*t = TLS(ep);

	tcp_clear_address(&t->tcp);
	free(t->cert);
	free(t->key);
	free(t->ca);
	free(t->sni);
	free(t);
	ep->t = NULL;
}

static int
set_cert(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (endpoint_set_string(&TLS(ep)->cert, v, err, len));
}

static int
set_key(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (endpoint_set_string(&TLS(ep)->key, v, err, len));
}

static int
set_ca(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (endpoint_set_string(&TLS(ep)->ca, v, err, len));
}

static int
set_sni(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (endpoint_set_string(&TLS(ep)->sni, v, err, len));
}

static int
set_verify(struct endpoint *ep, const char *v, char *err, size_t len)
{
	struct tls_endpoint	*t = TLS(ep);

	if (strcmp(v, "required") == 0)
		t->verify = VERIFY_REQUIRED;
	else if (strcmp(v, "optional") == 0)
		t->verify = VERIFY_OPTIONAL;
	else if (strcmp(v, "none") == 0)
		t->verify = VERIFY_NONE;
	else {
		snprintf(err, len, "verify=%s: give required, optional or "
		    "none", v);
		return (-1);
	}
	return (0);
}

/* Check the options that only make sense together. */
static int
tls_check(const struct endpoint *ep, char *err, size_t len)
{
	const struct tls_endpoint	*t = TLS(ep);

	if (tcp_check(ep, err, len) == -1)
		return (-1);
	if ((t->cert == NULL) != (t->key == NULL)) {
		snprintf(err, len, "give cert= and key= together");
		return (-1);
	}
	if (ep->role == ROLE_CONNECT) {
		if (t->verify == VERIFY_OPTIONAL) {
			snprintf(err, len, "verify=optional is for listeners; "
			    "a connect endpoint verifies the server or, with "
			    "verify=none, does not");
			return (-1);
		}
		return (0);
	}
	if (t->sni != NULL) {
		snprintf(err, len, "sni= is for connect endpoints");
		return (-1);
	}
	if (t->cert == NULL) {
		snprintf(err, len, "a TLS listener needs cert= and key=");
		return (-1);
	}
	if (t->ca == NULL && t->verify != VERIFY_NONE) {
		snprintf(err, len, "a TLS listener verifies client "
		    "certificates against ca=FILE; give ca=, or verify=none "
		    "to accept any client");
		return (-1);
	}
	return (0);
}

/* Whether a listener asks its peers for certificates it verifies. */
static int
tls_verifies_peers(const struct endpoint *ep)
{
	return (TLS(ep)->verify != VERIFY_NONE);
}

/* verify=none beyond loopback: anyone who reaches it is admitted. */
static enum exposure
tls_exposure(const struct endpoint *ep)
{
	return (ep->role == ROLE_LISTEN && TLS(ep)->verify == VERIFY_NONE &&
	    !tcp_loopback(ep) ? EXPOSURE_WARN : EXPOSURE_NONE);
}

static void
tls_describe(const struct endpoint *ep, char *buf, size_t len)
{
	static const char *const verify_names[] = { "required", "required",
	    "optional", "none" };

	snprintf(buf, len, ", %s, verify %s", tls_library(),
	    verify_names[TLS(ep)->verify]);
}

/* Log the settings a tool on another host needs to use the endpoint. */
static void
tls_howto(const struct endpoint *ep, const struct endpoint *other)
{
	int	 runtimes, tools;

	transport_serves(ep, other, &runtimes, &tools);
	if (ep->role == ROLE_LISTEN && !tools)
		log_info("  a runtime or a router dialling over TLS, with a "
		    "certificate this listener's ca= signed");
	else if (ep->role == ROLE_LISTEN)
		log_info("  tools on another host: dsroute "
		    "uds:/tmp/dsroute.sock tls:THIS-HOST:%s,connect,peer=router,ca=CA,"
		    "cert=CERT,key=KEY, then dotnet-trace collect "
		    "--diagnostic-port /tmp/dsroute.sock,connect",
		    strrchr(ep->name, ':') + 1);
	else
		log_info("  another dsroute listening for TLS there");
}

/* The name a dialled connection sends and checks. */
const char *
tls_dial_name(const struct endpoint *ep)
{
	const struct tls_endpoint	*t = TLS(ep);

	return (t->sni != NULL ? t->sni : t->tcp.host != NULL ? t->tcp.host :
	    "127.0.0.1");
}

/*
 * The handshake verified the peer's certificate, read into draft: keep
 * it as the peer's identity and name it in the printable peer.  Return
 * IO_ERROR if out of memory.
 */
int
tls_attach_identity(struct stream *c, struct identity_draft *draft)
{
	struct identity	*id;

	if ((id = identity_pack(draft)) == NULL) {
		c->why = "cannot take the peer's identity (out of memory)";
		return (IO_ERROR);
	}
	free(c->identity);
	c->identity = id;
	return (0);
}

/*
 * Decrypt into buf until it is full or the socket has no more: large
 * reads make a fast relay.  An end or error after some bytes is kept for
 * the next call.
 */
static ssize_t
tls_read(struct stream *c, void *buf, size_t len)
{
	struct tls_shared	*t = c->tstate;
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
tls_pending(struct stream *c)
{
	struct tls_shared	*t = c->tstate;

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
send_sealed(struct stream *c)
{
	struct tls_shared	*t = c->tstate;
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
write_records(struct stream *c, const uint8_t *flat, struct evbuffer *buf,
    size_t len)
{
	static uint8_t		 tmp[RECORD_MAX];
	struct tls_shared	*t = c->tstate;
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
tls_write(struct stream *c, const void *buf, size_t len)
{
	return (write_records(c, buf, NULL, len));
}

static ssize_t
tls_write_buffer(struct stream *c, struct evbuffer *buf)
{
	ssize_t	 n;

	n = write_records(c, NULL, buf, evbuffer_get_length(buf));
	if (n > 0)
		evbuffer_drain(buf, n);
	return (n);
}

static void
tls_conn_teardown(struct stream *c)
{
	struct tls_shared	*t = c->tstate;

	if (t != NULL && t->sealed != NULL) {
		evbuffer_free(t->sealed);
		t->sealed = NULL;
	}
	tls_teardown(c);
}

/* Build the context of a TLS endpoint whose role is decided. */
/*
 * Each file of cert=, key= and ca= can be read: say which cannot, and
 * why, in errno's words (the TLS libraries say "system lib" or "-0x3E00").
 */
static int
tls_files_readable(const struct endpoint *ep, char *err, size_t len)
{
	const struct tls_endpoint	*t = TLS(ep);
	const char			*name[] = { "cert", "key", "ca" };
	const char			*path[] = { t->cert, t->key, t->ca };
	size_t				 i;
	FILE				*f;

	for (i = 0; i < sizeof(path) / sizeof(path[0]); i++) {
		if (path[i] == NULL)
			continue;
		if ((f = fopen(path[i], "r")) == NULL) {
			snprintf(err, len, "%s=%s: %s", name[i], path[i],
			    strerror(errno));
			return (-1);
		}
		fclose(f);
	}
	return (0);
}

static int
tls_prepare(struct endpoint *ep, char *err, size_t len)
{
	if (tls_files_readable(ep, err, len) == -1 ||
	    (TLS(ep)->ctx = tls_context_new(ep, err, len)) == NULL)
		return (-1);
	return (0);
}

/* Drop the endpoint's context; live connections keep their reference. */
static void
tls_release(struct endpoint *ep)
{
	if (TLS(ep)->ctx != NULL)
		tls_context_free(TLS(ep)->ctx);
	TLS(ep)->ctx = NULL;
}

/* SIGHUP: a new context from the files, not yet in use. */
static void *
tls_reload(struct endpoint *ep, char *err, size_t len)
{
	if (TLS(ep)->ctx == NULL || tls_files_readable(ep, err, len) == -1)
		return (NULL);
	return (tls_context_new(ep, err, len));
}

/* Put a reloaded context in use; sessions in flight keep theirs. */
static void
tls_reload_commit(struct endpoint *ep, void *ctx)
{
	tls_release(ep);
	TLS(ep)->ctx = ctx;
}
