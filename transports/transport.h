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
 * The transport operations table.  Sessions and the pump see a connection
 * only through these operations: they never call a socket option, a TLS
 * library or a credential lookup themselves.  Each transport lives in its
 * own file; uds and tcp share the plain socket stream in socket.c.
 */

#ifndef TRANSPORT_H
#define TRANSPORT_H

#include <sys/types.h>
#include <stddef.h>

struct conn;
struct endpoint;
struct evbuffer;

/* Results of stream operations besides a byte count. */
#define IO_EOF		0	/* orderly end of stream */
#define IO_ERROR	(-1)	/* reset or failure: errno or conn->error says */
#define IO_WANT_READ	(-2)	/* retry when the socket is readable */
#define IO_WANT_WRITE	(-3)	/* retry when the socket is writable */

struct transport {
	const char	*name;

	/*
	 * Socket level.  listen returns a listening, non-blocking descriptor
	 * or -1 with a message in err; dial returns a descriptor whose
	 * non-blocking connect has started, with *pending set while it is in
	 * progress, or -1 with errno set.
	 */
	int		 (*listen)(struct endpoint *, char *, size_t);
	void		 (*unlisten)(struct endpoint *);
	int		 (*dial)(struct endpoint *, int *);

	/*
	 * Stream level.  setup runs once the socket is connected (accepted
	 * or dialled): socket options, peer credentials, TLS state.
	 * handshake returns 0 when the stream is ready.  read fills the
	 * buffer with as much as is available without blocking; write sends
	 * from memory; write_buffer sends from an evbuffer and drains what
	 * it sent.  shutdown ends our sending direction.
	 */
	int		 (*setup)(struct conn *, int);
	int		 (*handshake)(struct conn *);
	ssize_t		 (*read)(struct conn *, void *, size_t);
	ssize_t		 (*write)(struct conn *, const void *, size_t);
	ssize_t		 (*write_buffer)(struct conn *, struct evbuffer *);
	int		 (*shutdown)(struct conn *);
	void		 (*teardown)(struct conn *);
};

extern const struct transport transport_uds;
extern const struct transport transport_tcp;

/* socket.c: the plain stream shared by uds and tcp. */
ssize_t	 socket_read(struct conn *, void *, size_t);
ssize_t	 socket_write(struct conn *, const void *, size_t);
ssize_t	 socket_write_buffer(struct conn *, struct evbuffer *);
int	 socket_shutdown(struct conn *);
int	 socket_handshake(struct conn *);
void	 socket_teardown(struct conn *);
int	 socket_nonblock(int);

/* uds.c */
int	 uds_probe(const char *);

#endif /* TRANSPORT_H */
