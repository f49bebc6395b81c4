/* SPDX-License-Identifier: ISC */

/*
 * WebSocket: ws:HOST:PORT/PATH and wss:HOST:PORT/PATH, listen and connect,
 * for the .NET runtime in a browser, which reaches diagnostics only so.
 * The frames and the HTTP upgrade are pure functions in ws_frame.c; here
 * is the endpoint (the address and path, origin= and, for wss, the
 * options of tls:), the upgrade as a transport handshake and the stream
 * over frames.  A connection rides on the operations of tcp or tls:
 * while one of theirs runs, c->tstate is theirs, so that TLS works the
 * same with both of its backends.
 *
 * From any peer, messages are a byte stream.  Toward a browser runtime
 * (a connection that sent an advertise, or a connect endpoint with
 * peer=runtime) each IPC message goes as one binary message, however
 * the tool's bytes came: the runtime reads each request with a single
 * receive and refuses one that is split.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/ipc.h"
#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "transports/socket.h"
#include "transports/tls.h"
#include "transports/transport.h"
#include "transports/ws_frame.h"

/*
 * Bounds on what a peer sends.  The payload streams through, so they
 * protect nothing in memory; they refuse a peer that lies about sizes.
 */
#define FRAME_MAX	(16 * 1024 * 1024)
#define MESSAGE_MAX	(64 * 1024 * 1024)

/* The most payload one frame of ours carries. */
#define OUT_FRAME_MAX	(64 * 1024)

/* The most a write takes from an evbuffer at once. */
#define WRITE_MAX	(256 * 1024)

/* What a read asks of the socket at a time. */
#define READ_CHUNK	(64 * 1024)

extern const struct transport	 transport_tcp;
extern const struct transport	 transport_tls;

/* What ws keeps of an endpoint, behind ep->t: tls's first, tcp's in it. */
struct ws_endpoint {
	struct tls_endpoint	 tls;
	char			*path;
	char			**origins;	/* origin=, "*" for any */
	size_t			 norigins;
};

#define WS(ep)		((struct ws_endpoint *)(ep)->t)
#define SECURE(ep)	((ep)->transport == &transport_wss)

enum ws_phase {
	PH_LOWER,		/* the TLS handshake, for wss */
	PH_REQUEST,		/* reading the upgrade, or sending ours */
	PH_ANSWER,		/* sending 101, or reading the server's */
	PH_REFUSE,		/* sending an HTTP error, then failing */
	PH_OPEN
};

/* What ws keeps of a connection, behind c->tstate. */
struct ws_conn {
	void			*lower;		/* tls's state, or NULL */
	const struct transport	*lower_ops;
	struct endpoint		*ep;
	int			 fd;
	int			 server;	/* frames come masked */
	enum ws_phase		 phase;
	struct evbuffer		*in;		/* read, not yet unframed */
	struct evbuffer		*pending;	/* framed, not yet sent */
	size_t			 staged;	/* the caller's bytes in it */

	int			 in_frame;	/* a data frame's payload flows */
	struct ws_frame		 f;
	uint64_t		 got;		/* of its payload */
	int			 in_message;	/* a fragmented message goes on */
	uint64_t		 message_len;

	int			 runtime;	/* one IPC message per message */
	size_t			 sniffed;	/* of the advertise magic */
	struct evbuffer		*hold;		/* part of an IPC message */

	uint8_t			 pong[WS_CONTROL_MAX];	/* the latest ping's */
	size_t			 pong_len;
	int			 pong_due;	/* not in w->pending yet */
	uint64_t		 owed_since;	/* a pong unsent since, ms */
	int			 cut;		/* it left our pong unread */

	int			 close_sent;
	int			 close_seen;	/* the peer's close frame */
	int			 read_ended;
	int			 read_result;
	int			 full;		/* a read stopped with input left */
	struct event		*keepalive;
	uint64_t		 last_in;	/* monotonic ms */
	char			 key[WS_KEY_LEN + 1];	/* a dialler's */
	char			 why[160];
};

extern const struct transport	 transport_ws;
extern const struct transport	 transport_wss;

static int	 ws_parse(struct endpoint *, const char *, char *, size_t);
static int	 ws_check(const struct endpoint *, char *, size_t);
static void	 ws_clear(struct endpoint *);
static void	 ws_set_name(struct endpoint *);
static int	 ws_resolve(struct endpoint *, char *, size_t);
static int	 ws_listen(struct endpoint *, char *, size_t);
static enum exposure ws_exposure(const struct endpoint *);
static int	 ws_verifies_peers(const struct endpoint *);
static int	 ws_prepare(struct endpoint *, char *, size_t);
static void	 ws_release(struct endpoint *);
static void	*ws_reload(struct endpoint *, char *, size_t);
static void	 ws_reload_commit(struct endpoint *, void *);
static void	 ws_reload_free(void *);
static void	 ws_describe(const struct endpoint *, char *, size_t);
static void	 ws_howto(const struct endpoint *,
		    const struct endpoint *);
static int	 ws_setup(struct stream *, int);
static int	 ws_handshake(struct stream *);
static ssize_t	 ws_read(struct stream *, void *, size_t);
static ssize_t	 ws_write(struct stream *, const void *, size_t);
static ssize_t	 ws_write_buffer(struct stream *, struct evbuffer *);
static size_t	 ws_pending(struct stream *);
static int	 ws_shutdown(struct stream *);
static void	 ws_teardown(struct stream *);

static int	 set_origin(struct endpoint *, const char *, char *, size_t);

static const struct endpoint_option ws_options[] = {
	{ "origin", 1, set_origin },
};

static const char *const ws_prefixes[] = { "ws:", NULL };
static const char *const wss_prefixes[] = { "wss:", NULL };

#define WS_OPS							\
	.parse = ws_parse,					\
	.check = ws_check,					\
	.clear = ws_clear,					\
	.set_name = ws_set_name,				\
	.auto_role = tcp_auto_role,				\
	.resolve = ws_resolve,					\
	.exposure = ws_exposure,				\
	.verifies_peers = ws_verifies_peers,			\
	.prepare = ws_prepare,					\
	.release = ws_release,					\
	.reload = ws_reload,					\
	.reload_commit = ws_reload_commit,			\
	.reload_free = ws_reload_free,				\
	.describe = ws_describe,				\
	.howto = ws_howto,					\
	.listen = ws_listen,					\
	.dial = tcp_dial,					\
	.setup = ws_setup,					\
	.handshake = ws_handshake,				\
	.read = ws_read,					\
	.write = ws_write,					\
	.write_buffer = ws_write_buffer,			\
	.pending = ws_pending,					\
	.unsent = socket_unsent,				\
	.shutdown = ws_shutdown,				\
	.teardown = ws_teardown

const struct transport transport_ws = {
	.name = "ws",
	.prefixes = ws_prefixes,
	.example = "ws:127.0.0.1:1/",
	.options = ws_options,
	.noptions = sizeof(ws_options) / sizeof(ws_options[0]),
	WS_OPS
};

const struct transport transport_wss = {
	.name = "wss",
	.prefixes = wss_prefixes,
	.example = "wss:127.0.0.1:1/",
	.identities = 1,
	.tls = 1,
	.options = ws_options,
	.noptions = sizeof(ws_options) / sizeof(ws_options[0]),
	.options_of = &transport_tls,	/* cert=, key=, ca=, sni=, verify= */
	WS_OPS
};

/* The endpoint: HOST:PORT as tcp: has it, then /PATH ("/" if none). */
static int
ws_parse(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	struct ws_endpoint	*w;
	const char		*slash, *start;
	char			*hostport;
	size_t			 i;
	int			 rv;

	if ((w = calloc(1, sizeof(*w))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	ep->t = w;
	if (strncmp(addr, "//", 2) == 0) {
		snprintf(err, len, "write %sHOST:PORT/PATH, without the // "
		    "of a URL", ep->transport->prefixes[0]);
		return (-1);
	}
	start = addr[0] == '[' && strchr(addr, ']') != NULL ?
	    strchr(addr, ']') : addr;
	if ((slash = strchr(start, '/')) == NULL)
		slash = addr + strlen(addr);
	w->path = strdup(*slash == '/' ? slash : "/");
	hostport = strndup(addr, slash - addr);
	if (w->path == NULL || hostport == NULL) {
		free(hostport);
		snprintf(err, len, "out of memory");
		return (-1);
	}
	for (i = 0; w->path[i] != '\0'; i++) {
		if ((unsigned char)w->path[i] <= ' ' || w->path[i] == '?' ||
		    w->path[i] == '#' || w->path[i] == 0x7f) {
			free(hostport);
			snprintf(err, len, "path '%s': no spaces, controls, "
			    "? or # in a WebSocket path", w->path);
			return (-1);
		}
	}
	if (i >= 200) {
		free(hostport);
		snprintf(err, len, "path too long");
		return (-1);
	}
	rv = tcp_parse_address(&w->tls.tcp, hostport, err, len);
	free(hostport);
	return (rv);
}

static void
ws_clear(struct endpoint *ep)
{
	struct ws_endpoint	*w = WS(ep);
	size_t			 i;

	for (i = 0; i < w->norigins; i++)
		free(w->origins[i]);
	free(w->origins);
	free(w->path);
	/* tls's clear frees the rest and w itself, its first member. */
	transport_tls.clear(ep);
}

static int
set_origin(struct endpoint *ep, const char *v, char *err, size_t len)
{
	struct ws_endpoint	*w = WS(ep);
	char			**o, host[256];

	if (strcmp(v, "*") != 0 && strncmp(v, "http://", 7) != 0 &&
	    strncmp(v, "https://", 8) != 0) {
		snprintf(err, len, "origin=%s: give a page's origin, as "
		    "https://HOST[:PORT], or * for any", v);
		return (-1);
	}
	if (strchr(strstr(v, "//") != NULL ? strstr(v, "//") + 2 : v,
	    '/') != NULL) {
		snprintf(err, len, "origin=%s: an origin has no path", v);
		return (-1);
	}
	if (strcmp(v, "*") != 0 &&
	    ws_origin_host(v, host, sizeof(host)) == -1) {
		snprintf(err, len, "origin=%s: give a page's origin, as "
		    "https://HOST[:PORT], or * for any", v);
		return (-1);
	}
	if ((o = reallocarray(w->origins, w->norigins + 1,
	    sizeof(*o))) == NULL || (o[w->norigins] = strdup(v)) == NULL) {
		if (o != NULL)
			w->origins = o;
		snprintf(err, len, "out of memory");
		return (-1);
	}
	w->origins = o;
	w->norigins++;
	return (0);
}

static int
ws_check(const struct endpoint *ep, char *err, size_t len)
{
	if (ep->role == ROLE_CONNECT && WS(ep)->norigins > 0) {
		snprintf(err, len, "origin= is for listeners");
		return (-1);
	}
	if (SECURE(ep))
		return (transport_tls.check(ep, err, len));
	return (tcp_check(ep, err, len));
}

static void
ws_set_name(struct endpoint *ep)
{
	size_t	 n;

	tcp_set_name(ep);
	n = strlen(ep->name);
	snprintf(ep->name + n, sizeof(ep->name) - n, "%s", WS(ep)->path);
}

/* tcp's resolve and listen name the endpoint: add the path again. */
static int
ws_resolve(struct endpoint *ep, char *err, size_t len)
{
	int	 rv = tcp_resolve(ep, err, len);

	ws_set_name(ep);
	return (rv);
}

static int
ws_listen(struct endpoint *ep, char *err, size_t len)
{
	int	 fd = tcp_listen(ep, err, len);

	ws_set_name(ep);
	return (fd);
}

static enum exposure
ws_exposure(const struct endpoint *ep)
{
	if (SECURE(ep))
		return (transport_tls.exposure(ep));
	return (ep->role == ROLE_LISTEN && !tcp_loopback(ep) ?
	    EXPOSURE_REFUSE : EXPOSURE_NONE);
}

static int
ws_verifies_peers(const struct endpoint *ep)
{
	return (SECURE(ep) && transport_tls.verifies_peers(ep));
}

static int
ws_prepare(struct endpoint *ep, char *err, size_t len)
{
	return (SECURE(ep) ? transport_tls.prepare(ep, err, len) : 0);
}

static void
ws_release(struct endpoint *ep)
{
	if (SECURE(ep))
		transport_tls.release(ep);
}

static void *
ws_reload(struct endpoint *ep, char *err, size_t len)
{
	return (SECURE(ep) ? transport_tls.reload(ep, err, len) : NULL);
}

static void
ws_reload_commit(struct endpoint *ep, void *ctx)
{
	if (SECURE(ep))
		transport_tls.reload_commit(ep, ctx);
}

static void
ws_reload_free(void *ctx)
{
	transport_tls.reload_free(ctx);
}

static void
ws_describe(const struct endpoint *ep, char *buf, size_t len)
{
	const struct ws_endpoint	*w = WS(ep);
	size_t				 n;

	if (SECURE(ep))
		transport_tls.describe(ep, buf, len);
	else
		buf[0] = '\0';
	n = strlen(buf);
	if (ep->role == ROLE_LISTEN)
		snprintf(buf + n, len - n, ", origins: same host%s",
		    w->norigins > 0 ? " and origin=" : " only");
}

static void
ws_howto(const struct endpoint *ep, const struct endpoint *other)
{
	const char	*addr = strchr(ep->name, ':') + 1;

	if (ep->role == ROLE_LISTEN)
		log_info("  a browser runtime: "
		    "DOTNET_DiagnosticPorts=%s://%s", ep->transport->name,
		    addr);
	else
		log_info("  a WebSocket server there: another dsroute "
		    "listening on %s", ep->name);
}

/*
 * Run one of the lower transport's stream operations on c: its state
 * stands in c->tstate while it runs.
 */
#define LOWER(c, w, call) do {						\
	(c)->tstate = (w)->lower;					\
	call;								\
	(w)->lower = (c)->tstate;					\
	(c)->tstate = (w);						\
} while (0)

static ssize_t
lower_read(struct stream *c, void *buf, size_t len)
{
	struct ws_conn	*w = c->tstate;
	ssize_t		 n;

	LOWER(c, w, n = w->lower_ops->read(c, buf, len));
	return (n);
}

static int	 add_frame(struct ws_conn *, int, const uint8_t *, size_t);

/*
 * Send what is framed, then the pong owed, if any, once nothing is
 * before it: 0 once all went, or IO_WANT_* or IO_ERROR.
 */
static ssize_t
flush(struct stream *c)
{
	struct ws_conn	*w = c->tstate;
	ssize_t		 n;

	for (;;) {
		if (evbuffer_get_length(w->pending) == 0) {
			if (!w->pong_due) {
				w->owed_since = 0;
				return (0);
			}
			w->pong_due = 0;
			if (add_frame(w, WS_OP_PONG, w->pong, w->pong_len) ==
			    -1) {
				c->error = ENOMEM;
				return (IO_ERROR);
			}
		}
		LOWER(c, w, n = w->lower_ops->write_buffer(c, w->pending));
		if (n < 0)
			return (n);
		if (n == 0)
			return (IO_WANT_WRITE);
	}
}

/*
 * A ping: only the latest is answered (RFC 6455, 5.5.3), once what is
 * framed before it went, so that a peer that pings and never reads makes
 * us hold one pong, not one per ping.  Until it went, ws_read reads
 * nothing more, and past the deadline keepalive_cb cuts the peer.
 */
static void
ping_seen(struct stream *c, const uint8_t *p, size_t n)
{
	struct ws_conn	*w = c->tstate;

	if (w->close_sent)
		return;
	memcpy(w->pong, p, n);
	w->pong_len = n;
	w->pong_due = 1;
	if (w->owed_since == 0)
		w->owed_since = now_ms();
	(void)flush(c);
}

/* Add a frame to what is to be sent; a client masks it. */
static int
add_frame(struct ws_conn *w, int opcode, const uint8_t *p, size_t len)
{
	uint8_t			 head[WS_HEAD_MAX], key[4];
	struct evbuffer_iovec	 v;
	size_t			 n;

	if (w->server) {
		n = ws_frame_head(head, 1, opcode, len, NULL);
		if (evbuffer_add(w->pending, head, n) == -1 ||
		    (len > 0 && evbuffer_add(w->pending, p, len) == -1))
			return (-1);
		return (0);
	}
	if (platform_random(key, sizeof(key)) == -1)
		return (-1);
	n = ws_frame_head(head, 1, opcode, len, key);
	if (evbuffer_add(w->pending, head, n) == -1)
		return (-1);
	if (len == 0)
		return (0);
	if (evbuffer_reserve_space(w->pending, len, &v, 1) != 1)
		return (-1);
	memcpy(v.iov_base, p, len);
	ws_mask(v.iov_base, len, key, 0);
	v.iov_len = len;
	return (evbuffer_commit_space(w->pending, &v, 1));
}

/* Queue a close frame with code, once. */
static void
add_close(struct ws_conn *w, int code)
{
	uint8_t	 p[2];

	if (w->close_sent)
		return;
	w->close_sent = 1;
	p[0] = (uint8_t)(code >> 8);
	p[1] = (uint8_t)code;
	(void)add_frame(w, WS_OP_CLOSE, p, code == 0 ? 0 : 2);
}

/* Refuse the peer's frames with a close code; the session ends. */
static ssize_t
fail(struct stream *c, int code, const char *why)
{
	struct ws_conn	*w = c->tstate;

	snprintf(w->why, sizeof(w->why), "WebSocket protocol error: %s "
	    "(closed with %d)", why, code);
	add_close(w, code);
	(void)flush(c);
	c->why = w->why;
	return (IO_ERROR);
}

/*
 * --ws-ping-interval: a ping when the peer was quiet, on every WebSocket
 * connection, parked ones above all.  A browser runtime never dials again
 * once its connection is cut, and proxies and NATs cut quiet ones; it
 * answers a ping itself, the browser's WebSocket does.
 */
static void
keepalive_cb(evutil_socket_t fd, short what, void *arg)
{
	struct ws_conn	*w = arg;
	struct stream	 c;
	uint64_t	 now = now_ms();

	if (w->cut)
		return;
	/*
	 * A peer that left our pong unread for a whole interval reads
	 * nothing: cut it.  The shutdown wakes its conn, whose next read
	 * or write fails with the reason.
	 */
	if (w->owed_since != 0 && now - w->owed_since >=
	    (uint64_t)transport_env.ws_ping_interval_ms) {
		w->cut = 1;
		snprintf(w->why, sizeof(w->why), "WebSocket peer left our "
		    "pong unread for %.1fs; cut", (now - w->owed_since) /
		    1000.0);
		(void)shutdown(w->fd, SHUT_RDWR);
		return;
	}
	if (w->phase != PH_OPEN || w->close_sent ||
	    now - w->last_in <
	    (uint64_t)transport_env.ws_ping_interval_ms / 2 ||
	    evbuffer_get_length(w->pending) > 0)
		return;
	/* Not tied to a conn, which may move: one stands in to send. */
	memset(&c, 0, sizeof(c));
	c.fd = w->fd;
	c.endpoint = w->ep;
	c.transport = w->ep->transport;
	c.tstate = w;
	if (add_frame(w, WS_OP_PING, NULL, 0) == 0)
		(void)flush(&c);
}

static int
ws_setup(struct stream *c, int accepted)
{
	struct ws_conn	*w;
	struct timeval	 tv;
	int		 rv = 0;

	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    (w->in = evbuffer_new()) == NULL ||
	    (w->pending = evbuffer_new()) == NULL) {
		if (w != NULL && w->in != NULL)
			evbuffer_free(w->in);
		free(w);
		c->error = ENOMEM;
		return (-1);
	}
	w->ep = c->endpoint;
	w->fd = c->fd;
	w->server = accepted;
	w->lower_ops = SECURE(c->endpoint) ? &transport_tls : &transport_tcp;
	w->phase = SECURE(c->endpoint) ? PH_LOWER : PH_REQUEST;
	w->runtime = !accepted && c->endpoint->peer == PEER_RUNTIME;
	w->last_in = now_ms();
	c->tstate = w;
	LOWER(c, w, rv = w->lower_ops->setup(c, accepted));
	if (rv == -1)
		return (-1);
	if ((w->keepalive = event_new(transport_env.base, -1, EV_PERSIST,
	    keepalive_cb, w)) == NULL) {
		c->error = ENOMEM;
		return (-1);
	}
	timeval_ms(&tv, transport_env.ws_ping_interval_ms);
	event_add(w->keepalive, &tv);
	return (0);
}

static void
ws_teardown(struct stream *c)
{
	struct ws_conn	*w = c->tstate;

	if (w == NULL)
		return;
	LOWER(c, w, w->lower_ops->teardown(c));
	if (w->keepalive != NULL)
		event_free(w->keepalive);
	evbuffer_free(w->in);
	evbuffer_free(w->pending);
	if (w->hold != NULL)
		evbuffer_free(w->hold);
	free(w);
	c->tstate = NULL;
}

/*
 * Read what the socket has into w->in, up to want bytes in all.  Through
 * one buffer for all connections: w->in gets a chain the size of what
 * came, and an idle connection holds none.
 */
static ssize_t
fill(struct stream *c, size_t want)
{
	static uint8_t	 buf[64 * 1024];
	struct ws_conn	*w = c->tstate;
	size_t		 have = evbuffer_get_length(w->in);
	ssize_t		 n;

	if (have >= want)
		return (IO_WANT_READ);
	n = lower_read(c, buf, want - have < sizeof(buf) ? want - have :
	    sizeof(buf));
	if (n > 0) {
		if (evbuffer_add(w->in, buf, n) == -1) {
			c->error = ENOMEM;
			return (IO_ERROR);
		}
		w->last_in = now_ms();
	}
	return (n);
}

/* Whether the Origin of a request may upgrade on the endpoint. */
static int
origin_allowed(const struct endpoint *ep, const struct ws_request *r)
{
	const struct ws_endpoint	*w = WS(ep);
	char				 name[256];
	struct in_addr			 a4;
	size_t				 i;

	/*
	 * A browser always sends Origin on a WebSocket upgrade, and a page
	 * cannot take it away; what sends none is not a page (Node, tools,
	 * another router), which no browser defence applies to anyway.
	 */
	if (!r->have_origin)
		return (1);
	for (i = 0; i < w->norigins; i++)
		if (strcmp(w->origins[i], "*") == 0 ||
		    strcasecmp(w->origins[i], r->origin) == 0)
			return (1);
	if (ws_origin_host(r->origin, name, sizeof(name)) == -1)
		return (0);
	if (strcasecmp(name, "localhost") == 0 || strcmp(name, "[::1]") == 0 ||
	    (inet_pton(AF_INET, name, &a4) == 1 &&
	    (ntohl(a4.s_addr) >> 24) == 127))
		return (1);
	/* A page from the host the endpoint was given by. */
	if (w->tls.tcp.host != NULL && strcasecmp(name, w->tls.tcp.host) == 0)
		return (1);
	return (0);
}

/* Answer an upgrade request that cannot be served, then fail. */
static void
refuse(struct stream *c, int status, const char *why)
{
	struct ws_conn	*w = c->tstate;

	snprintf(w->why, sizeof(w->why), "WebSocket upgrade refused: %d %s",
	    status, why);
	evbuffer_add_printf(w->pending, "HTTP/1.1 %d %s\r\n"
	    "Connection: close\r\nContent-Length: 0\r\n%s%s\r\n", status,
	    ws_status_text(status),
	    status == 405 ? "Allow: GET\r\n" : "",
	    status == 426 ? "Sec-WebSocket-Version: 13\r\n" : "");
	w->phase = PH_REFUSE;
}

/*
 * Before closing on a refused request, read what the client sent beyond
 * what was parsed, within a bound: closing with unread input sends a
 * reset, which may destroy the answer before the client reads it.
 */
static void
discard_input(struct stream *c)
{
	uint8_t		 buf[4096];
	size_t		 total = 0;
	ssize_t		 n;

	while (total < 1024 * 1024 && (n = lower_read(c, buf,
	    sizeof(buf))) > 0)
		total += n;
}

/* A listener reads the upgrade request and answers it. */
static int
read_request(struct stream *c)
{
	struct ws_conn		*w = c->tstate;
	struct ws_request	 r;
	char			 accept[WS_ACCEPT_LEN + 1];
	ssize_t			 n;
	int			 head;

	for (;;) {
		n = fill(c, WS_HEAD_BYTES_MAX);
		if (n == IO_ERROR || n == 0) {
			c->why = n == 0 ? "closed before the WebSocket "
			    "upgrade" : NULL;
			return (IO_ERROR);
		}
		head = ws_request_parse((const char *)evbuffer_pullup(w->in,
		    -1), evbuffer_get_length(w->in), WS(w->ep)->path, &r);
		if (head != 0 || n < 0)
			break;
	}
	if (head == 0)
		return (n);
	if (head < 0) {
		refuse(c, r.status, r.why);
		return (0);
	}
	if (!origin_allowed(w->ep, &r)) {
		refuse(c, 403, "Origin not allowed (see origin=)");
		return (0);
	}
	evbuffer_drain(w->in, head);
	ws_accept_key(r.key, accept);
	/* permessage-deflate and subprotocols offered are declined. */
	evbuffer_add_printf(w->pending, "HTTP/1.1 101 Switching Protocols\r\n"
	    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
	    "Sec-WebSocket-Accept: %s\r\n"
	    "Cross-Origin-Embedder-Policy: require-corp\r\n"
	    "Cross-Origin-Opener-Policy: same-origin\r\n\r\n", accept);
	w->phase = PH_ANSWER;
	return (0);
}

/* A dialler sends its upgrade request.  Return -1 without a key. */
static int
send_request(struct ws_conn *w)
{
	const struct tcp_endpoint	*t = &WS(w->ep)->tls.tcp;
	const char			*host = tls_dial_name(w->ep);
	uint8_t				 raw[16];

	if (platform_random(raw, sizeof(raw)) == -1)
		return (-1);
	ws_base64(raw, sizeof(raw), w->key);
	evbuffer_add_printf(w->pending, "GET %s HTTP/1.1\r\n"
	    "Host: %s%s%s:%s\r\nUpgrade: websocket\r\n"
	    "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\n"
	    "Sec-WebSocket-Version: 13\r\n\r\n", WS(w->ep)->path,
	    strchr(host, ':') != NULL ? "[" : "", host,
	    strchr(host, ':') != NULL ? "]" : "", t->port, w->key);
	w->phase = PH_ANSWER;
	return (0);
}

/* A dialler reads the server's answer. */
static int
read_answer(struct stream *c)
{
	struct ws_conn	*w = c->tstate;
	const char	*why = NULL;
	ssize_t		 n;
	int		 head;

	for (;;) {
		n = fill(c, WS_HEAD_BYTES_MAX);
		if (n == IO_ERROR || n == 0) {
			c->why = n == 0 ? "the server closed before the "
			    "WebSocket upgrade" : NULL;
			return (IO_ERROR);
		}
		head = ws_response_parse((const char *)evbuffer_pullup(w->in,
		    -1), evbuffer_get_length(w->in), w->key, &why);
		if (head != 0 || n < 0)
			break;
	}
	if (head == 0)
		return (n);
	if (head < 0) {
		snprintf(w->why, sizeof(w->why), "WebSocket upgrade: %s", why);
		c->why = w->why;
		return (IO_ERROR);
	}
	evbuffer_drain(w->in, head);
	w->phase = PH_OPEN;
	/* Frames that came with the answer: ws_pending tells the pump. */
	w->full = evbuffer_get_length(w->in) > 0;
	return (0);
}

static int
ws_handshake(struct stream *c)
{
	struct ws_conn	*w = c->tstate;
	ssize_t		 rv;

	if (w->phase == PH_LOWER) {
		LOWER(c, w, rv = w->lower_ops->handshake(c));
		if (rv != 0)
			return (rv);
		w->phase = PH_REQUEST;
	}
	if (w->phase == PH_REQUEST) {
		if (!w->server) {
			if (send_request(w) == -1) {
				c->why = "no random bytes for a WebSocket key";
				return (IO_ERROR);
			}
		}
		else if ((rv = read_request(c)) != 0)
			return (rv);
	}
	if ((rv = flush(c)) != 0)
		return (rv);
	if (w->phase == PH_REFUSE) {
		discard_input(c);
		c->why = w->why;
		return (IO_ERROR);
	}
	if (w->phase == PH_ANSWER && !w->server)
		return (read_answer(c));
	w->phase = PH_OPEN;
	w->full = evbuffer_get_length(w->in) > 0;
	return (0);
}

/* A close frame's payload: answer it, or refuse a bad code. */
static ssize_t
peer_closed(struct stream *c, const uint8_t *p, size_t n)
{
	struct ws_conn	*w = c->tstate;
	int		 code;

	if (n == 1)
		return (fail(c, WS_CLOSE_PROTOCOL, "close frame of 1 byte"));
	if (n >= 2) {
		code = p[0] << 8 | p[1];
		if (code < 1000 || code > 4999 || code == 1004 ||
		    code == 1005 || code == 1006 || code == 1015 ||
		    (code > 1014 && code < 3000))
			return (fail(c, WS_CLOSE_PROTOCOL,
			    "close code not allowed on the wire"));
	}
	w->close_seen = 1;
	add_close(w, WS_CLOSE_NORMAL);
	(void)flush(c);
	return (0);
}

/* Notice an advertise among the first bytes from the peer. */
static void
sniff(struct ws_conn *w, const uint8_t *p, size_t n)
{
	static const uint8_t	 magic[ADVR_MAGIC_LEN] = "ADVR_V1";

	while (n > 0 && w->sniffed < ADVR_MAGIC_LEN) {
		if (*p != magic[w->sniffed]) {
			w->sniffed = ADVR_MAGIC_LEN + 1;
			return;
		}
		p++;
		n--;
		if (++w->sniffed == ADVR_MAGIC_LEN)
			w->runtime = 1;
	}
}

/*
 * Unframe what w->in holds into buf: data payloads as a byte stream,
 * control frames answered.  Return the bytes made, or IO_ERROR; *ended
 * is set when the peer's close came.
 */
static ssize_t
unframe(struct stream *c, uint8_t *buf, size_t len)
{
	struct ws_conn	*w = c->tstate;
	uint8_t		 ctl[WS_CONTROL_MAX];
	size_t		 have, take, done = 0;
	const char	*why;
	int		 head, code;

	while (!w->close_seen) {
		have = evbuffer_get_length(w->in);
		if (!w->in_frame) {
			head = ws_frame_parse(evbuffer_pullup(w->in,
			    have < WS_HEAD_MAX ? (ssize_t)have : WS_HEAD_MAX),
			    have, w->server, FRAME_MAX, &w->f, &code, &why);
			if (head == 0)
				break;
			if (head < 0)
				return (fail(c, code, why));
			if (w->f.opcode >= WS_OP_CLOSE) {
				if (have < w->f.head_len + w->f.len)
					break;
				evbuffer_drain(w->in, head);
				evbuffer_remove(w->in, ctl, w->f.len);
				if (w->f.masked)
					ws_mask(ctl, w->f.len, w->f.mask, 0);
				if (w->f.opcode == WS_OP_CLOSE) {
					if (peer_closed(c, ctl, w->f.len) < 0)
						return (IO_ERROR);
				} else if (w->f.opcode == WS_OP_PING)
					ping_seen(c, ctl, w->f.len);
				if (w->owed_since != 0)
					break;
				continue;
			}
			if (w->f.opcode == WS_OP_TEXT)
				return (fail(c, 1003, "text message on a "
				    "binary stream"));
			if ((w->f.opcode == WS_OP_CONT) != w->in_message)
				return (fail(c, WS_CLOSE_PROTOCOL,
				    w->in_message ? "new message inside a "
				    "fragmented one" : "continuation of no "
				    "message"));
			if (w->f.opcode != WS_OP_CONT)
				w->message_len = 0;
			w->message_len += w->f.len;
			if (w->message_len > MESSAGE_MAX)
				return (fail(c, WS_CLOSE_TOO_BIG,
				    "message larger than the router takes"));
			w->in_message = !w->f.fin;
			evbuffer_drain(w->in, head);
			w->in_frame = 1;
			w->got = 0;
			continue;
		}
		take = w->f.len - w->got;
		if (take > len - done)
			take = len - done;
		if (take > evbuffer_get_length(w->in))
			take = evbuffer_get_length(w->in);
		if (take > 0) {
			evbuffer_remove(w->in, buf + done, take);
			if (w->f.masked)
				ws_mask(buf + done, take, w->f.mask, w->got);
			if (w->sniffed < ADVR_MAGIC_LEN)
				sniff(w, buf + done, take);
			w->got += take;
			done += take;
		}
		if (w->got == w->f.len)
			w->in_frame = 0;
		else if (take == 0)
			break;
	}
	return (done);
}

/*
 * Fill buf with payload until it is full or the socket has no more.  An
 * end or error after some bytes is kept for the next call.
 */
static ssize_t
ws_read(struct stream *c, void *buf, size_t len)
{
	struct ws_conn	*w = c->tstate;
	size_t		 done = 0;
	ssize_t		 n;

	w->full = 0;
	if (w->cut) {
		c->why = w->why;
		return (IO_ERROR);
	}
	if (w->read_ended)
		return (w->read_result);
	/* Nothing more is read while our pong waits for the peer. */
	if (w->owed_since != 0 && (n = flush(c)) != 0)
		return (n);
	for (;;) {
		if ((n = unframe(c, (uint8_t *)buf + done, len - done)) < 0)
			break;
		done += n;
		if (w->close_seen) {
			n = IO_EOF;
			break;
		}
		if (w->owed_since != 0) {
			/* The pong did not go: the caller comes back. */
			if (done > 0) {
				w->full = 1;
				return (done);
			}
			return (IO_WANT_WRITE);
		}
		if (done == len) {
			/* The rest waits in w->in: ws_pending says so. */
			w->full = 1;
			return (done);
		}
		n = fill(c, evbuffer_get_length(w->in) + READ_CHUNK);
		if (n > 0)
			continue;
		if (n == IO_WANT_READ || n == IO_WANT_WRITE)
			return (done > 0 ? (ssize_t)done : n);
		break;
	}
	if (done == 0)
		return (n);
	w->read_ended = 1;
	w->read_result = (int)n;
	return (done);
}

/* Input the socket will not signal again: ours, or TLS's. */
static size_t
ws_pending(struct stream *c)
{
	struct ws_conn	*w = c->tstate;
	size_t		 n = 0;

	if (w == NULL)
		return (0);
	if (w->read_ended || w->full)
		return (1);
	if (w->lower_ops->pending != NULL)
		LOWER(c, w, n = w->lower_ops->pending(c));
	return (n);
}

/*
 * Frame the next of the len bytes at p into w->pending: return how many
 * it took, with *framed set if a frame was made; 0 and *framed unset
 * when they went into w->hold, part of an IPC message for a runtime.
 */
static ssize_t
frame_next(struct stream *c, const uint8_t *p, size_t len, int *framed)
{
	struct ws_conn	*w = c->tstate;
	uint8_t		 head[IPC_HEADER_LEN];
	size_t		 have, take, size;

	*framed = 0;
	if (!w->runtime) {
		take = len < OUT_FRAME_MAX ? len : OUT_FRAME_MAX;
		if (add_frame(w, WS_OP_BINARY, p, take) == -1)
			goto nomem;
		*framed = 1;
		return (take);
	}
	have = w->hold != NULL ? evbuffer_get_length(w->hold) : 0;
	if (have == 0 && len >= IPC_HEADER_LEN &&
	    (size = ipc_size(p)) >= IPC_HEADER_LEN && len >= size) {
		/* Whole in what came: frame it from there. */
		if (add_frame(w, WS_OP_BINARY, p, size) == -1)
			goto nomem;
		*framed = 1;
		return (size);
	}
	if (w->hold == NULL && (w->hold = evbuffer_new()) == NULL)
		goto nomem;
	take = 0;
	if (have < IPC_HEADER_LEN) {
		take = IPC_HEADER_LEN - have < len ? IPC_HEADER_LEN - have : len;
		if (evbuffer_add(w->hold, p, take) == -1)
			goto nomem;
		have += take;
		if (have < IPC_HEADER_LEN)
			return (take);
	}
	evbuffer_copyout(w->hold, head, IPC_HEADER_LEN);
	if ((size = ipc_size(head)) < IPC_HEADER_LEN) {
		c->why = "a message toward a browser runtime is not IPC";
		return (IO_ERROR);
	}
	if (size - have > 0) {
		size = size - have < len - take ? size - have : len - take;
		if (evbuffer_add(w->hold, p + take, size) == -1)
			goto nomem;
		take += size;
		have += size;
		if (have < ipc_size(head))
			return (take);
	}
	if (add_frame(w, WS_OP_BINARY, evbuffer_pullup(w->hold, -1),
	    have) == -1)
		goto nomem;
	evbuffer_drain(w->hold, have);
	*framed = 1;
	return (take);
nomem:
	c->error = ENOMEM;
	return (IO_ERROR);
}

/*
 * Write len bytes as frames.  As tls.c does: a frame the socket did not
 * take whole is sent by the next call before anything else, and the
 * caller's bytes in it count only then, the caller keeping them at the
 * head of what it passes.  Bytes held for an incomplete IPC message
 * count at once: they wait for the tool, not the socket.
 */
static ssize_t
ws_write(struct stream *c, const void *buf, size_t len)
{
	struct ws_conn	*w = c->tstate;
	const uint8_t	*p = buf;
	size_t		 done;
	ssize_t		 n, rv;
	int		 framed;

	if (w->cut) {
		c->why = w->why;
		return (IO_ERROR);
	}
	if (w->close_seen || w->close_sent) {
		c->error = EPIPE;
		return (IO_ERROR);
	}
	if ((rv = flush(c)) < 0)
		return (rv);
	if (w->staged > len) {		/* the caller broke its promise */
		c->error = EINVAL;
		return (IO_ERROR);
	}
	done = w->staged;
	w->staged = 0;
	while (done < len) {
		if ((n = frame_next(c, p + done, len - done, &framed)) < 0)
			return (done > 0 ? (ssize_t)done : n);
		if (framed && (rv = flush(c)) < 0) {
			if (rv == IO_ERROR)
				return (done > 0 ? (ssize_t)done : rv);
			w->staged = n;
			return (done > 0 ? (ssize_t)done : rv);
		}
		done += n;
	}
	return (done);
}

static ssize_t
ws_write_buffer(struct stream *c, struct evbuffer *buf)
{
	size_t		 len = evbuffer_get_length(buf);
	ssize_t		 n;
	uint8_t		*p;

	if (len > WRITE_MAX)
		len = WRITE_MAX;
	if ((p = evbuffer_pullup(buf, len)) == NULL) {
		c->error = ENOMEM;
		return (IO_ERROR);
	}
	if ((n = ws_write(c, p, len)) > 0)
		evbuffer_drain(buf, n);
	return (n);
}

/*
 * End our sending direction: a close frame (1000), and the lower
 * transport's end once it went.
 */
static int
ws_shutdown(struct stream *c)
{
	struct ws_conn	*w = c->tstate;
	ssize_t		 rv;

	add_close(w, WS_CLOSE_NORMAL);
	if ((rv = flush(c)) < 0)
		return (rv == IO_WANT_READ ? IO_WANT_WRITE : (int)rv);
	LOWER(c, w, rv = w->lower_ops->shutdown(c));
	return ((int)rv);
}
