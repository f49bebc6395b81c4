/* SPDX-License-Identifier: ISC */

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
	 * it sent.  pending, where a transport buffers (TLS), says whether
	 * it holds input the socket will not signal again.  shutdown ends
	 * our sending direction; IO_WANT_WRITE asks to be called again.
	 */
	int		 (*setup)(struct conn *, int);
	int		 (*handshake)(struct conn *);
	ssize_t		 (*read)(struct conn *, void *, size_t);
	ssize_t		 (*write)(struct conn *, const void *, size_t);
	ssize_t		 (*write_buffer)(struct conn *, struct evbuffer *);
	size_t		 (*pending)(struct conn *);
	int		 (*shutdown)(struct conn *);
	void		 (*teardown)(struct conn *);
};

extern const struct transport transport_uds;
extern const struct transport transport_tcp;
extern const struct transport transport_tls;

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

/* tcp.c: the socket level of tcp, which tls shares. */
int	 tcp_listen(struct endpoint *, char *, size_t);
void	 tcp_unlisten(struct endpoint *);
int	 tcp_dial(struct endpoint *, int *);
int	 tcp_setup(struct conn *, int);

/*
 * tls.c: the backend-neutral part of tls.  A TLS endpoint's context
 * (certificate, key, CA, settings) is built once at start-up and again on
 * reload; a connection keeps the context it started with.
 */
int	 tls_prepare(struct endpoint *, char *, size_t);
void	 tls_release(struct endpoint *);

/*
 * What tls.c keeps of a TLS connection: the first member of each
 * backend's state, to which conn->tls points.
 */
struct tls_shared {
	int	 fd;		/* the socket: conns move, this stays */
	int	 read_ended;	/* read_result waits for the next read */
	int	 read_result;	/* an end or error seen after bytes */
	struct evbuffer *sealed; /* records made, not yet sent */
	size_t	 staged;	/* the caller's bytes that made them */
	int	 sealing;	/* records go to sealed, not the socket */
};

/*
 * tls_openssl.c or tls_mbedtls.c: build a context for an endpoint (NULL
 * and a one-line reason in err on failure), drop the endpoint's reference
 * to one, and name the library.  The stream operations of the transport
 * table; read_some decrypts what one library call gives, buffered says
 * whether the library holds input the socket will not signal again,
 * write_record writes at most one record, write_end follows a write that
 * sent everything.  A backend sends what its library writes with
 * tls_send (tls.c), which keeps records for one write while sealing.
 */
void	*tls_context_new(struct endpoint *, char *, size_t);
void	 tls_context_free(void *);
const char *tls_library(void);
int	 tls_setup(struct conn *, int);
int	 tls_handshake(struct conn *);
ssize_t	 tls_read_some(struct conn *, void *, size_t);
int	 tls_buffered(struct conn *);
ssize_t	 tls_write_record(struct conn *, const void *, size_t);
void	 tls_write_end(struct conn *);
ssize_t	 tls_send(struct tls_shared *, const void *, size_t);
int	 tls_shutdown(struct conn *);
void	 tls_teardown(struct conn *);

/* tls_openssl.c: the identity of a certificate (struct x509_st is X509). */
struct identity;
struct x509_st;
struct identity	*tls_openssl_identity(struct x509_st *);

#endif /* TRANSPORT_H */
