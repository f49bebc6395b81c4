/* SPDX-License-Identifier: ISC */

/*
 * TLS over TCP with OpenSSL.  The socket level is tcp's; this file drives
 * an SSL object directly on the connected descriptor.
 *
 * Defaults (Mozilla intermediate without DHE): TLS 1.2 and 1.3, AEAD
 * suites with ECDHE only, no renegotiation, compression, tickets, session
 * cache or early data.  One SSL_CTX per endpoint is built at start-up and
 * on reload; each SSL holds a reference to the SSL_CTX it started with.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>

#include "common/identity.h"
#include "transports/socket.h"
#include "transports/tls.h"
#include "transports/transport.h"

#define TLS12_CIPHERS	"ECDHE-ECDSA-AES128-GCM-SHA256:" \
			"ECDHE-RSA-AES128-GCM-SHA256:" \
			"ECDHE-ECDSA-AES256-GCM-SHA384:" \
			"ECDHE-RSA-AES256-GCM-SHA384:" \
			"ECDHE-ECDSA-CHACHA20-POLY1305:" \
			"ECDHE-RSA-CHACHA20-POLY1305"
#define TLS13_SUITES	"TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:" \
			"TLS_CHACHA20_POLY1305_SHA256"
#define TLS_GROUPS	"X25519:P-256:P-384"

/*
 * The largest certificate list a peer may send, as with mbed TLS, whose
 * handshake messages must fit a record: real chains take a few KiB.
 */
#define CHAIN_MAX	16384

/*
 * With read-ahead, one read(2) takes as many records as this holds
 * instead of two reads (header, then body) per record.  The buffer is
 * given back whenever it is empty (release_buffers), so an idle session
 * holds none of it.
 */
#define READ_BUFFER	(64 * 1024)

struct tls_conn {
	struct tls_shared shared;	/* tls.c's: first */
	SSL		*ssl;
};

/* Why the last operation failed; conn->why points here. */
static char	 why[256];

/* The write side of every SSL: see write_bio(). */
static BIO_METHOD	*write_method;

static int	 verify_peer(int, X509_STORE_CTX *);

const char *
tls_library(void)
{
	return (OpenSSL_version(OPENSSL_VERSION));
}

/* Put the reason of OpenSSL's last error after prefix into err. */
static void
ssl_error(char *err, size_t len, const char *prefix)
{
	unsigned long	 e = ERR_peek_last_error();
	const char	*reason = e != 0 ? ERR_reason_error_string(e) : NULL;

	snprintf(err, len, "%s: %s", prefix, reason != NULL ? reason :
	    "unknown error");
	ERR_clear_error();
}

static int
ctx_fail(SSL_CTX *ctx, char *err, size_t len, const char *what,
    const char *file)
{
	char	 prefix[PATH_MAX + 64];

	snprintf(prefix, sizeof(prefix), "%s %s", what, file);
	ssl_error(err, len, prefix);
	SSL_CTX_free(ctx);
	return (-1);
}

/* Load the certificate, key and CA files of ep into ctx. */
static int
ctx_load(SSL_CTX *ctx, struct endpoint *ep, int server, char *err,
    size_t len)
{
	STACK_OF(X509_NAME)	*names;

	if (TLS(ep)->cert != NULL) {
		if (SSL_CTX_use_certificate_chain_file(ctx, TLS(ep)->cert) != 1)
			return (ctx_fail(ctx, err, len, "cannot load the "
			    "certificate", TLS(ep)->cert));
		if (SSL_CTX_use_PrivateKey_file(ctx, TLS(ep)->key,
		    SSL_FILETYPE_PEM) != 1)
			return (ctx_fail(ctx, err, len, "cannot load the key",
			    TLS(ep)->key));
		if (SSL_CTX_check_private_key(ctx) != 1)
			return (ctx_fail(ctx, err, len, "the key does not "
			    "match the certificate", TLS(ep)->key));
	}
	if (TLS(ep)->ca != NULL) {
		if (SSL_CTX_load_verify_locations(ctx, TLS(ep)->ca, NULL) != 1)
			return (ctx_fail(ctx, err, len, "cannot load the CA "
			    "file", TLS(ep)->ca));
		if (server) {
			/* Tell clients which CAs we take. */
			names = SSL_load_client_CA_file(TLS(ep)->ca);
			if (names == NULL)
				return (ctx_fail(ctx, err, len, "no CA "
				    "certificate in", TLS(ep)->ca));
			SSL_CTX_set_client_CA_list(ctx, names);
		}
	} else if (!server && TLS(ep)->verify != VERIFY_NONE &&
	    SSL_CTX_set_default_verify_paths(ctx) != 1)
		return (ctx_fail(ctx, err, len, "cannot load the system CA "
		    "store", "(no ca= given)"));
	return (0);
}

/*
 * Build the SSL_CTX of an endpoint: the defaults above, its files and its
 * verification mode.  Return NULL with a reason in err on failure.
 */
void *
tls_context_new(struct endpoint *ep, char *err, size_t len)
{
	SSL_CTX		*ctx;
	int		 server = ep->role == ROLE_LISTEN, mode;

	ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (ctx == NULL) {
		ssl_error(err, len, "cannot create a TLS context");
		return (NULL);
	}
	if (SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION) != 1 ||
	    SSL_CTX_set_cipher_list(ctx, TLS12_CIPHERS) != 1 ||
	    SSL_CTX_set_ciphersuites(ctx, TLS13_SUITES) != 1 ||
	    SSL_CTX_set1_groups_list(ctx, TLS_GROUPS) != 1) {
		ssl_error(err, len, "cannot set the TLS defaults");
		SSL_CTX_free(ctx);
		return (NULL);
	}
	SSL_CTX_set_options(ctx, SSL_OP_NO_COMPRESSION |
	    SSL_OP_NO_RENEGOTIATION | SSL_OP_NO_TICKET);
	SSL_CTX_set_num_tickets(ctx, 0);
	SSL_CTX_set_max_early_data(ctx, 0);
	SSL_CTX_set_max_cert_list(ctx, CHAIN_MAX);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	SSL_CTX_set_session_id_context(ctx, (const unsigned char *)"dsroute",
	    7);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE |
	    SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER | SSL_MODE_RELEASE_BUFFERS);
	/* tls_pending() tells the pump about what read-ahead holds. */
	SSL_CTX_set_read_ahead(ctx, 1);
	SSL_CTX_set_default_read_buffer_len(ctx, READ_BUFFER);

	/* A client certificate must be for clients, a server's for servers. */
	if (SSL_CTX_set_purpose(ctx, server ? X509_PURPOSE_SSL_CLIENT :
	    X509_PURPOSE_SSL_SERVER) != 1) {
		ssl_error(err, len, "cannot set the certificate purpose");
		SSL_CTX_free(ctx);
		return (NULL);
	}
	X509_VERIFY_PARAM_set_flags(SSL_CTX_get0_param(ctx),
	    X509_V_FLAG_X509_STRICT);

	if (ctx_load(ctx, ep, server, err, len) == -1)
		return (NULL);
	switch (TLS(ep)->verify) {
	case VERIFY_NONE:
		mode = SSL_VERIFY_NONE;
		break;
	case VERIFY_OPTIONAL:
		mode = SSL_VERIFY_PEER;
		break;
	default:
		mode = SSL_VERIFY_PEER;
		if (server)
			mode |= SSL_VERIFY_FAIL_IF_NO_PEER_CERT;
		break;
	}
	SSL_CTX_set_verify(ctx, mode, verify_peer);
	return (ctx);
}

void
tls_context_free(void *ctx)
{
	SSL_CTX_free(ctx);
}

/* Say whether name is an IPv4 or IPv6 address rather than a host name. */
static int
is_ip(const char *name)
{
	struct in6_addr	 a;

	return (inet_pton(AF_INET, name, &a) == 1 ||
	    inet_pton(AF_INET6, name, &a) == 1);
}

/*
 * Set up a dialled connection: send SNI for a name, and check the name
 * or the IP address dialled against the server's certificate.
 */
static int
setup_client(struct stream *c, SSL *ssl)
{
	struct endpoint	*ep = c->endpoint;
	const char	*name;

	name = tls_dial_name(ep);
	if (is_ip(name))
		return (TLS(ep)->verify == VERIFY_NONE ||
		    X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl),
		    name) == 1 ? 0 : -1);
	if (SSL_set_tlsext_host_name(ssl, name) != 1)
		return (-1);
	if (TLS(ep)->verify == VERIFY_NONE)
		return (0);
	SSL_set_hostflags(ssl, X509_CHECK_FLAG_NO_PARTIAL_WILDCARDS);
	return (SSL_set1_host(ssl, name) == 1 ? 0 : -1);
}

/*
 * What OpenSSL writes goes through tls_send: to the socket, as with its
 * own socket BIO, or into the batch tls.c is sealing.
 */
static int
write_bio_write(BIO *b, const char *buf, int len)
{
	struct tls_conn	*t = BIO_get_data(b);
	ssize_t		 n;

	BIO_clear_retry_flags(b);
	if ((n = tls_send(&t->shared, buf, len)) >= 0)
		return ((int)n);
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		BIO_set_retry_write(b);
	return (-1);
}

/* Nothing is held here: a flush is done at once; nothing else applies. */
static long
write_bio_ctrl(BIO *b, int cmd, long num, void *ptr)
{
	return (cmd == BIO_CTRL_FLUSH);
}

static int
write_bio_create(BIO *b)
{
	BIO_set_init(b, 1);
	return (1);
}

static BIO *
write_bio(struct tls_conn *t)
{
	BIO	*b;

	if (write_method == NULL) {
		if ((write_method = BIO_meth_new(BIO_get_new_index() |
		    BIO_TYPE_SOURCE_SINK, "dsroute write")) == NULL)
			return (NULL);
		if (BIO_meth_set_write(write_method, write_bio_write) != 1 ||
		    BIO_meth_set_ctrl(write_method, write_bio_ctrl) != 1 ||
		    BIO_meth_set_create(write_method, write_bio_create) != 1) {
			BIO_meth_free(write_method);
			write_method = NULL;
			return (NULL);
		}
	}
	if ((b = BIO_new(write_method)) != NULL)
		BIO_set_data(b, t);
	return (b);
}

/* Create the SSL object of a connected socket. */
int
tls_setup(struct stream *c, int accepted)
{
	struct tls_conn	*t;
	BIO		*wbio;

	(void)tcp_setup(c, accepted);
	if ((t = calloc(1, sizeof(*t))) == NULL ||
	    (t->ssl = SSL_new(TLS(c->endpoint)->ctx)) == NULL) {
		free(t);
		c->why = "cannot create a TLS connection";
		return (-1);
	}
	c->tstate = t;
	t->shared.fd = c->fd;
	if (SSL_set_rfd(t->ssl, c->fd) == 1 && (wbio = write_bio(t)) != NULL)
		SSL_set0_wbio(t->ssl, wbio);
	/* For verify_peer(): the endpoint outlives the handshake. */
	SSL_set_app_data(t->ssl, c->endpoint);
	if (SSL_get_wbio(t->ssl) == NULL ||
	    (!accepted && setup_client(c, t->ssl) == -1)) {
		ssl_error(why, sizeof(why), "TLS set-up failed");
		c->why = why;
		return (-1);
	}
	if (accepted)
		SSL_set_accept_state(t->ssl);
	else
		SSL_set_connect_state(t->ssl);
	return (0);
}

/* The subject CN, only if there is exactly one, or NULL. */
static const ASN1_STRING *
subject_cn(X509 *x, enum cn_string *kind)
{
	X509_NAME		*subject = X509_get_subject_name(x);
	const ASN1_STRING	*cn;
	int			 i;

	i = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
	if (i < 0 || X509_NAME_get_index_by_NID(subject, NID_commonName,
	    i) >= 0)
		return (NULL);
	cn = X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, i));
	switch (ASN1_STRING_type(cn)) {
	case V_ASN1_UTF8STRING:
		*kind = CN_UTF8;
		break;
	case V_ASN1_PRINTABLESTRING:
		*kind = CN_PRINTABLE;
		break;
	case V_ASN1_IA5STRING:
		*kind = CN_IA5;
		break;
	case V_ASN1_T61STRING:
		*kind = CN_T61;
		break;
	case V_ASN1_BMPSTRING:
		*kind = CN_BMP;
		break;
	case V_ASN1_UNIVERSALSTRING:
		*kind = CN_UNIVERSAL;
		break;
	default:
		*kind = CN_OTHER;
		break;
	}
	return (cn);
}

/* The subject CN, read as identity.c reads every backend's. */
static void
identity_cn(struct identity_draft *d, X509 *x)
{
	const ASN1_STRING	*cn;
	enum cn_string		 kind;

	if ((cn = subject_cn(x, &kind)) != NULL)
		(void)identity_draft_cn_string(d, kind,
		    ASN1_STRING_get0_data(cn), ASN1_STRING_length(cn));
}

/*
 * Whether the server's certificate names the host dialled, by the rule
 * both backends share: an address only by an iPAddress SAN; a name by a
 * dNSName (identity_dns_match()), or by the CN only in a certificate
 * with no subjectAltName at all.  OpenSSL's own check (SSL_set1_host)
 * runs too; this one makes mbed TLS and OpenSSL agree.
 */
static int
names_host(X509 *x, const char *name)
{
	GENERAL_NAMES		*names;
	const GENERAL_NAME	*gn;
	const ASN1_STRING	*cn;
	enum cn_string		 kind;
	uint8_t			 ip[16];
	char			 utf8[IDENTITY_NAME_MAX + 1];
	int			 i, iplen = 0, found = 0, n;

	if (inet_pton(AF_INET, name, ip) == 1)
		iplen = 4;
	else if (inet_pton(AF_INET6, name, ip) == 1)
		iplen = 16;
	if (X509_get_ext_by_NID(x, NID_subject_alt_name, -1) >= 0) {
		names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
		for (i = 0; names != NULL && !found &&
		    i < sk_GENERAL_NAME_num(names); i++) {
			gn = sk_GENERAL_NAME_value(names, i);
			if (iplen != 0 && gn->type == GEN_IPADD)
				found = ASN1_STRING_length(gn->d.iPAddress) ==
				    iplen && memcmp(ASN1_STRING_get0_data(
				    gn->d.iPAddress), ip, iplen) == 0;
			else if (iplen == 0 && gn->type == GEN_DNS)
				found = identity_dns_match(
				    ASN1_STRING_get0_data(gn->d.dNSName),
				    ASN1_STRING_length(gn->d.dNSName), name);
		}
		GENERAL_NAMES_free(names);
		return (found);
	}
	if (iplen != 0 || (cn = subject_cn(x, &kind)) == NULL ||
	    (n = identity_cn_decode(kind, ASN1_STRING_get0_data(cn),
	    ASN1_STRING_length(cn), utf8, sizeof(utf8))) <= 0)
		return (0);
	return (identity_dns_match(utf8, n, name));
}

/*
 * OpenSSL's verification calls this for each certificate of the chain;
 * at the server's own, once the rest passed, check the name dialled.
 */
static int
verify_peer(int ok, X509_STORE_CTX *xs)
{
	SSL			*ssl;
	const struct endpoint	*ep;
	const char		*name;

	if (!ok || X509_STORE_CTX_get_error_depth(xs) != 0 ||
	    (ssl = X509_STORE_CTX_get_ex_data(xs,
	    SSL_get_ex_data_X509_STORE_CTX_idx())) == NULL ||
	    SSL_is_server(ssl) || (ep = SSL_get_app_data(ssl)) == NULL)
		return (ok);
	name = tls_dial_name(ep);
	if (names_host(X509_STORE_CTX_get_current_cert(xs), name))
		return (1);
	X509_STORE_CTX_set_error(xs, is_ip(name) ?
	    X509_V_ERR_IP_ADDRESS_MISMATCH : X509_V_ERR_HOSTNAME_MISMATCH);
	return (0);
}

/* The DNS, URI, IP and e-mail SANs, each with its type. */
static void
identity_sans(struct identity_draft *d, X509 *x)
{
	GENERAL_NAMES		*names;
	const GENERAL_NAME	*gn;
	const ASN1_STRING	*value;
	enum san_type		 type;
	int			 i;

	names = X509_get_ext_d2i(x, NID_subject_alt_name, NULL, NULL);
	if (names == NULL)
		return;
	for (i = 0; i < sk_GENERAL_NAME_num(names); i++) {
		gn = sk_GENERAL_NAME_value(names, i);
		switch (gn->type) {
		case GEN_DNS:
			type = SAN_DNS;
			value = gn->d.dNSName;
			break;
		case GEN_URI:
			type = SAN_URI;
			value = gn->d.uniformResourceIdentifier;
			break;
		case GEN_EMAIL:
			type = SAN_EMAIL;
			value = gn->d.rfc822Name;
			break;
		case GEN_IPADD:
			type = SAN_IP;
			value = gn->d.iPAddress;
			break;
		default:
			continue;
		}
		(void)identity_draft_san(d, type, ASN1_STRING_get0_data(value),
		    ASN1_STRING_length(value));
	}
	GENERAL_NAMES_free(names);
}

/* Read a certificate's CN, typed SANs and SHA-256 into d. */
static int
read_identity(struct identity_draft *d, X509 *x)
{
	unsigned int	 n;

	identity_draft_init(d);
	identity_cn(d, x);
	identity_sans(d, x);
	if (X509_digest(x, EVP_sha256(), d->fingerprint, &n) != 1 ||
	    n != sizeof(d->fingerprint))
		return (-1);
	return (0);
}

/*
 * A certificate's identity, packed in one allocation; NULL if out of
 * memory.  A function of its own so that the fuzzer can reach it.
 */
struct identity *
tls_openssl_identity(X509 *x)
{
	struct identity_draft	 draft;

	if (read_identity(&draft, x) == -1)
		return (NULL);
	return (identity_pack(&draft));
}

/*
 * The handshake is done: keep the peer's verified certificate as its
 * identity.  OpenSSL keeps the certificate itself in the session as long
 * as the connection lives; there is no call to drop it.
 */
static int
handshake_done(struct stream *c, SSL *ssl)
{
	struct identity_draft	 draft;
	X509			*x;
	int			 rv;

	if (TLS(c->endpoint)->verify == VERIFY_NONE ||
	    SSL_get_verify_result(ssl) != X509_V_OK ||
	    (x = SSL_get_peer_certificate(ssl)) == NULL)
		return (0);
	rv = read_identity(&draft, x);
	X509_free(x);
	if (rv == -1) {
		c->why = "cannot hash the peer's certificate";
		return (IO_ERROR);
	}
	return (tls_attach_identity(c, &draft));
}

/* Describe why the handshake failed, in words a user can act on. */
static void
handshake_error(struct stream *c, SSL *ssl, int err)
{
	unsigned long	 e = ERR_peek_last_error();
	long		 verify = SSL_get_verify_result(ssl);
	const char	*whose = SSL_is_server(ssl) ? "client" : "server";

	if (ERR_GET_REASON(e) == SSL_R_CERTIFICATE_VERIFY_FAILED &&
	    verify != X509_V_OK)
		snprintf(why, sizeof(why), "TLS handshake failed: %s "
		    "certificate verify failed: %s", whose,
		    X509_verify_cert_error_string(verify));
	else if (err == SSL_ERROR_SYSCALL && e == 0)
		snprintf(why, sizeof(why), "TLS handshake failed: %s",
		    errno != 0 ? strerror(errno) : "the peer closed the "
		    "connection");
	else
		ssl_error(why, sizeof(why), "TLS handshake failed");
	ERR_clear_error();
	c->why = why;
}

int
tls_handshake(struct stream *c)
{
	struct tls_conn	*t = c->tstate;
	int		 rv, err;

	ERR_clear_error();
	errno = 0;
	if ((rv = SSL_do_handshake(t->ssl)) == 1)
		return (handshake_done(c, t->ssl));
	switch ((err = SSL_get_error(t->ssl, rv))) {
	case SSL_ERROR_WANT_READ:
		return (IO_WANT_READ);
	case SSL_ERROR_WANT_WRITE:
		return (IO_WANT_WRITE);
	}
	handshake_error(c, t->ssl, err);
	return (IO_ERROR);
}

/* Map a failed SSL_read or SSL_write to a transport result. */
static int
io_result(struct stream *c, SSL *ssl, int rv, int reading)
{
	unsigned long	 e;

	switch (SSL_get_error(ssl, rv)) {
	case SSL_ERROR_WANT_READ:
		return (IO_WANT_READ);
	case SSL_ERROR_WANT_WRITE:
		return (IO_WANT_WRITE);
	case SSL_ERROR_ZERO_RETURN:
		return (reading ? IO_EOF : IO_ERROR);
	case SSL_ERROR_SYSCALL:
		if (errno != 0) {
			c->error = errno;
			ERR_clear_error();
			return (IO_ERROR);
		}
		/* FALLTHROUGH */
	default:
		e = ERR_peek_last_error();
		if (reading && (e == 0 || ERR_GET_REASON(e) ==
		    SSL_R_UNEXPECTED_EOF_WHILE_READING)) {
			ERR_clear_error();
			c->why = "truncated: the peer closed without a TLS "
			    "close_notify";
			return (IO_ERROR);
		}
		ssl_error(why, sizeof(why), "TLS");
		c->why = why;
		return (IO_ERROR);
	}
}

/*
 * Give the record buffers (16 KiB or so each) back while nothing is in
 * flight.  SSL_MODE_RELEASE_BUFFERS does so after ordinary records, but
 * not around a TLS 1.3 KeyUpdate: without this, a connection whose peer
 * asked for new keys keeps one or two buffers as long as it lives.
 * OpenSSL refuses, harmlessly, while a record is partly read or written.
 */
static void
release_buffers(struct tls_conn *t)
{
	if (!SSL_has_pending(t->ssl))
		(void)SSL_free_buffers(t->ssl);
}

/* Decrypt what one SSL_read gives; between records, give buffers back. */
ssize_t
tls_read_some(struct stream *c, void *buf, size_t len)
{
	struct tls_conn	*t = c->tstate;
	int		 n, rv;

	ERR_clear_error();
	errno = 0;
	if ((n = SSL_read(t->ssl, buf, len > INT_MAX ? INT_MAX :
	    (int)len)) > 0)
		return (n);
	rv = io_result(c, t->ssl, n, 1);
	if (rv == IO_WANT_READ)
		release_buffers(t);
	return (rv);
}

/*
 * Write one record from buf.  After a write that wanted I/O, OpenSSL
 * needs the same bytes again, at least as many: tls.c keeps them at the
 * head of what it passes.
 */
ssize_t
tls_write_record(struct stream *c, const void *buf, size_t len)
{
	struct tls_conn	*t = c->tstate;
	int		 n;

	ERR_clear_error();
	errno = 0;
	if ((n = SSL_write(t->ssl, buf, (int)len)) > 0)
		return (n);
	return (io_result(c, t->ssl, n, 0));
}

/* All was written: give the record buffers back. */
void
tls_write_end(struct stream *c)
{
	release_buffers(c->tstate);
}

/* Input read ahead or decrypted and not yet taken. */
int
tls_buffered(struct stream *c)
{
	struct tls_conn	*t = c->tstate;

	return (SSL_has_pending(t->ssl));
}

/* Send close_notify, then FIN; the peer may go on sending. */
int
tls_shutdown(struct stream *c)
{
	struct tls_conn	*t = c->tstate;
	int		 rv;

	ERR_clear_error();
	errno = 0;
	if ((rv = SSL_shutdown(t->ssl)) < 0) {
		rv = io_result(c, t->ssl, rv, 0);
		if (rv == IO_WANT_WRITE || rv == IO_WANT_READ)
			return (rv);
		return (IO_ERROR);
	}
	return (socket_shutdown(c));
}

/* Free the SSL without close_notify: an abrupt end must look like one. */
void
tls_teardown(struct stream *c)
{
	struct tls_conn	*t = c->tstate;

	if (t == NULL)
		return;
	SSL_free(t->ssl);
	free(t);
	c->tstate = NULL;
}

int
tls_server_bufferevents(void)
{
	return (1);
}

/*
 * A bufferevent that accepts a TLS client with the context of ep, a
 * prepared listener; the socket is set later (evhttp does).  The SSL is
 * the bufferevent's, freed with it.
 */
struct bufferevent *
tls_server_bufferevent(const struct endpoint *ep, struct event_base *b)
{
	struct bufferevent	*bev;
	SSL			*ssl;

	if ((ssl = SSL_new(TLS(ep)->ctx)) == NULL) {
		ERR_clear_error();
		return (NULL);
	}
	/*
	 * libevent 2.1 reads after a handshake only when the socket says
	 * so: a request that came with the client's Finished must still be
	 * in the socket, not in OpenSSL's read-ahead.
	 */
	SSL_set_read_ahead(ssl, 0);
	bev = bufferevent_openssl_socket_new(b, -1, ssl,
	    BUFFEREVENT_SSL_ACCEPTING, BEV_OPT_CLOSE_ON_FREE);
	if (bev == NULL)
		SSL_free(ssl);
	return (bev);
}
