/* SPDX-License-Identifier: ISC */

/*
 * What the tls transport keeps private, shared by tls.c and its two
 * backends, tls_openssl.c and tls_mbedtls.c (one is built).  tls.c holds
 * what does not depend on the library: the endpoint and its options, the
 * transport table, records written a batch at a time, and the identity a
 * handshake verified.  A backend holds what does: contexts, handshakes,
 * records.
 */

#ifndef TLS_H
#define TLS_H

#include <sys/types.h>

#include <stddef.h>

#include "transports/socket.h"

struct stream;
struct endpoint;
struct evbuffer;
struct identity;
struct identity_draft;

/* How a TLS endpoint checks its peer's certificate. */
enum tls_verify {
	VERIFY_DEFAULT,		/* required */
	VERIFY_REQUIRED,
	VERIFY_OPTIONAL,	/* listeners: a certificate, if sent, must verify */
	VERIFY_NONE
};

/* What tls keeps of an endpoint, behind ep->t: tcp's first. */
struct tls_endpoint {
	struct tcp_endpoint	 tcp;
	char			*cert;		/* file names */
	char			*key;
	char			*ca;
	char			*sni;		/* name to send and verify */
	enum tls_verify		 verify;
	void			*ctx;		/* the backend's, built at start */
};

#define TLS(ep)		((struct tls_endpoint *)(ep)->t)

/*
 * What tls.c keeps of a connection: the first member of each backend's
 * state, to which conn->tstate points.
 */
struct tls_shared {
	int		 fd;		/* the socket: conns move, this stays */
	int		 read_ended;	/* read_result waits for the next read */
	int		 read_result;	/* an end or error seen after bytes */
	struct evbuffer	*sealed;	/* records made, not yet sent */
	size_t		 staged;	/* the caller's bytes that made them */
	int		 sealing;	/* records go to sealed, not the socket */
};

/* tls.c */
ssize_t		 tls_send(struct tls_shared *, const void *, size_t);
int		 tls_attach_identity(struct stream *, struct identity_draft *);
const char	*tls_dial_name(const struct endpoint *);

/*
 * tls_openssl.c or tls_mbedtls.c: build a context for an endpoint (NULL
 * and a one-line reason in err on failure), drop the endpoint's reference
 * to one, and name the library.  The stream operations of the transport
 * table; read_some decrypts what one library call gives, buffered says
 * whether the library holds input the socket will not signal again,
 * write_record writes at most one record, write_end follows a write that
 * sent everything.  A backend sends what its library writes with
 * tls_send, which keeps records for one write while sealing.
 */
void		*tls_context_new(struct endpoint *, char *, size_t);
void		 tls_context_free(void *);
const char	*tls_library(void);
int		 tls_setup(struct stream *, int);
int		 tls_handshake(struct stream *);
ssize_t		 tls_read_some(struct stream *, void *, size_t);
int		 tls_buffered(struct stream *);
ssize_t		 tls_write_record(struct stream *, const void *, size_t);
void		 tls_write_end(struct stream *);
int		 tls_shutdown(struct stream *);
void		 tls_teardown(struct stream *);

/* tls_openssl.c: the identity of a certificate (struct x509_st is X509). */
struct x509_st;
struct identity	*tls_openssl_identity(struct x509_st *);

#endif /* TLS_H */
