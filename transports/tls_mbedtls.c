/* SPDX-License-Identifier: ISC */

/*
 * TLS over TCP with mbed TLS 2.28 (./configure --with-tls=mbedtls).  The
 * socket level is tcp's; an mbedtls_ssl_context runs over the connected
 * descriptor through two small I/O callbacks (libevent 2.1 has no mbed
 * TLS bufferevent, and the conn layer uses none).
 *
 * The same policy as the OpenSSL backend, as far as 2.28 goes: TLS 1.2
 * only (2.28 has no TLS 1.3), ECDHE AEAD suites, no renegotiation, no
 * tickets or session cache, EKU checked both ways and, as OpenSSL does,
 * on every certificate of the chain, anyExtendedKeyUsage not standing in
 * for the purpose.  The name or address dialled is checked here, by the
 * rule tls_openssl.c applies too, not by 2.28's own (its wildcards and
 * CNs differ from OpenSSL's).  Contexts are reference counted: the
 * certificates of a reloaded endpoint live as long as its connections.
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

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/error.h>
#include <mbedtls/net_sockets.h>
#include <mbedtls/oid.h>
#include <mbedtls/sha256.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>
#include <mbedtls/x509_crt.h>

#include "common/identity.h"
#include "transports/socket.h"
#include "transports/tls.h"
#include "transports/transport.h"

#define SYSTEM_CA_DIR	"/etc/ssl/certs"

/* The SAN tags of RFC 5280's GeneralName. */
#define SAN_TAG_EMAIL	1
#define SAN_TAG_DNS	2
#define SAN_TAG_URI	6
#define SAN_TAG_IP	7

struct tls_context {
	mbedtls_ssl_config	 conf;
	mbedtls_x509_crt	 cert;
	mbedtls_pk_context	 key;
	mbedtls_x509_crt	 ca;
	int			 refs;
};

struct tls_conn {
	struct tls_shared	 shared;	/* tls.c's: first */
	mbedtls_ssl_context	 ssl;
	struct tls_context	*ctx;
	int			 sys_error;	/* errno of the last I/O */
	size_t			 retry_len;	/* a write that wanted I/O */
};

/* Mozilla intermediate for TLS 1.2, without DHE. */
static const int suites[] = {
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
	MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
	MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
	MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
	0
};

static const mbedtls_ecp_group_id curves[] = {
	MBEDTLS_ECP_DP_CURVE25519,
	MBEDTLS_ECP_DP_SECP256R1,
	MBEDTLS_ECP_DP_SECP384R1,
	MBEDTLS_ECP_DP_NONE
};

static mbedtls_entropy_context	 entropy;
static mbedtls_ctr_drbg_context	 drbg;
static int			 drbg_ready;

/* Why the last operation failed; conn->why points here. */
static char	 why[256];

static int	 verify_peer(void *, mbedtls_x509_crt *, int, uint32_t *);

const char *
tls_library(void)
{
	return ("mbed TLS " MBEDTLS_VERSION_STRING);
}

/* Put "prefix: mbed TLS's text for rv" into err. */
static void
mbed_error(char *err, size_t len, const char *prefix, int rv)
{
	char	 text[160];

	mbedtls_strerror(rv, text, sizeof(text));
	snprintf(err, len, "%s: %s", prefix, text);
}

/* Seed the one random generator all contexts share. */
static int
drbg_seed(char *err, size_t len)
{
	int	 rv;

	if (drbg_ready)
		return (0);
	mbedtls_entropy_init(&entropy);
	mbedtls_ctr_drbg_init(&drbg);
	if ((rv = mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy,
	    (const unsigned char *)"dsroute", 7)) != 0) {
		mbed_error(err, len, "cannot seed the random generator", rv);
		mbedtls_ctr_drbg_free(&drbg);
		mbedtls_entropy_free(&entropy);
		return (-1);
	}
	drbg_ready = 1;
	return (0);
}

static void
context_unref(struct tls_context *ctx)
{
	if (--ctx->refs > 0)
		return;
	mbedtls_ssl_config_free(&ctx->conf);
	mbedtls_x509_crt_free(&ctx->cert);
	mbedtls_pk_free(&ctx->key);
	mbedtls_x509_crt_free(&ctx->ca);
	free(ctx);
}

/* Load the certificate, key and CA files of ep into ctx. */
static int
context_load(struct tls_context *ctx, struct endpoint *ep, int server,
    char *err, size_t len)
{
	char	 prefix[PATH_MAX + 64];
	int	 rv;

	if (TLS(ep)->cert != NULL) {
		if ((rv = mbedtls_x509_crt_parse_file(&ctx->cert,
		    TLS(ep)->cert)) != 0) {
			snprintf(prefix, sizeof(prefix), "cannot load the "
			    "certificate %s", TLS(ep)->cert);
			mbed_error(err, len, prefix, rv < 0 ? rv :
			    MBEDTLS_ERR_X509_INVALID_FORMAT);
			return (-1);
		}
		if ((rv = mbedtls_pk_parse_keyfile(&ctx->key, TLS(ep)->key,
		    NULL)) != 0) {
			snprintf(prefix, sizeof(prefix), "cannot load the key "
			    "%s", TLS(ep)->key);
			mbed_error(err, len, prefix, rv);
			return (-1);
		}
		if (mbedtls_pk_check_pair(&ctx->cert.pk, &ctx->key) != 0) {
			snprintf(err, len, "the key %s does not match the "
			    "certificate %s", TLS(ep)->key, TLS(ep)->cert);
			return (-1);
		}
		if ((rv = mbedtls_ssl_conf_own_cert(&ctx->conf, &ctx->cert,
		    &ctx->key)) != 0) {
			mbed_error(err, len, "cannot use the certificate", rv);
			return (-1);
		}
	}
	if (TLS(ep)->ca != NULL)
		rv = mbedtls_x509_crt_parse_file(&ctx->ca, TLS(ep)->ca);
	else if (!server && TLS(ep)->verify != VERIFY_NONE)
		rv = mbedtls_x509_crt_parse_path(&ctx->ca, SYSTEM_CA_DIR);
	else
		return (0);
	if (rv < 0 || ctx->ca.raw.p == NULL) {
		snprintf(prefix, sizeof(prefix), "cannot load the CA file %s",
		    TLS(ep)->ca != NULL ? TLS(ep)->ca : SYSTEM_CA_DIR);
		mbed_error(err, len, prefix, rv < 0 ? rv :
		    MBEDTLS_ERR_X509_INVALID_FORMAT);
		return (-1);
	}
	mbedtls_ssl_conf_ca_chain(&ctx->conf, &ctx->ca, NULL);
	return (0);
}

/*
 * Build the configuration of an endpoint: the defaults above, its files
 * and its verification mode.  Return NULL with a reason in err.
 */
void *
tls_context_new(struct endpoint *ep, char *err, size_t len)
{
	struct tls_context	*ctx;
	int			 server = ep->role == ROLE_LISTEN, rv, mode;

	if (drbg_seed(err, len) == -1)
		return (NULL);
	if ((ctx = calloc(1, sizeof(*ctx))) == NULL) {
		snprintf(err, len, "out of memory");
		return (NULL);
	}
	ctx->refs = 1;
	mbedtls_ssl_config_init(&ctx->conf);
	mbedtls_x509_crt_init(&ctx->cert);
	mbedtls_pk_init(&ctx->key);
	mbedtls_x509_crt_init(&ctx->ca);
	if ((rv = mbedtls_ssl_config_defaults(&ctx->conf, server ?
	    MBEDTLS_SSL_IS_SERVER : MBEDTLS_SSL_IS_CLIENT,
	    MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT)) != 0) {
		mbed_error(err, len, "cannot set the TLS defaults", rv);
		context_unref(ctx);
		return (NULL);
	}
	mbedtls_ssl_conf_rng(&ctx->conf, mbedtls_ctr_drbg_random, &drbg);
	mbedtls_ssl_conf_min_version(&ctx->conf, MBEDTLS_SSL_MAJOR_VERSION_3,
	    MBEDTLS_SSL_MINOR_VERSION_3);
	mbedtls_ssl_conf_ciphersuites(&ctx->conf, suites);
	mbedtls_ssl_conf_curves(&ctx->conf, curves);
	mbedtls_ssl_conf_renegotiation(&ctx->conf,
	    MBEDTLS_SSL_RENEGOTIATION_DISABLED);
	mbedtls_ssl_conf_legacy_renegotiation(&ctx->conf,
	    MBEDTLS_SSL_LEGACY_NO_RENEGOTIATION);
	mbedtls_ssl_conf_session_tickets(&ctx->conf,
	    MBEDTLS_SSL_SESSION_TICKETS_DISABLED);

	/* A server's default is VERIFY_NONE: always say what we want. */
	switch (TLS(ep)->verify) {
	case VERIFY_NONE:
		mode = MBEDTLS_SSL_VERIFY_NONE;
		break;
	case VERIFY_OPTIONAL:
		/* A certificate sent must verify: see handshake_done(). */
		mode = MBEDTLS_SSL_VERIFY_OPTIONAL;
		break;
	default:
		mode = MBEDTLS_SSL_VERIFY_REQUIRED;
		break;
	}
	mbedtls_ssl_conf_authmode(&ctx->conf, mode);
	if (context_load(ctx, ep, server, err, len) == -1) {
		context_unref(ctx);
		return (NULL);
	}
	return (ctx);
}

void
tls_context_free(void *ctx)
{
	context_unref(ctx);
}

static int
bio_send(void *arg, const unsigned char *buf, size_t len)
{
	struct tls_conn	*t = arg;
	ssize_t		 n;

	if ((n = tls_send(&t->shared, buf, len)) >= 0)
		return ((int)n);
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return (MBEDTLS_ERR_SSL_WANT_WRITE);
	t->sys_error = errno;
	return (MBEDTLS_ERR_NET_SEND_FAILED);
}

static int
bio_recv(void *arg, unsigned char *buf, size_t len)
{
	struct tls_conn	*t = arg;
	ssize_t		 n;

	if ((n = recv(t->shared.fd, buf, len, 0)) >= 0)
		return ((int)n);
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR)
		return (MBEDTLS_ERR_SSL_WANT_READ);
	t->sys_error = errno;
	return (MBEDTLS_ERR_NET_RECV_FAILED);
}

/* Whether a name dialled is an IP address: its bytes in ip, *iplen. */
static int
dial_name_ip(const char *name, uint8_t ip[16], size_t *iplen)
{
	*iplen = 0;
	if (inet_pton(AF_INET, name, ip) == 1)
		*iplen = 4;
	else if (inet_pton(AF_INET6, name, ip) == 1)
		*iplen = 16;
	return (*iplen != 0);
}

/* Create the mbed TLS context of a connected socket. */
int
tls_setup(struct stream *c, int accepted)
{
	struct tls_context	*ctx = TLS(c->endpoint)->ctx;
	struct tls_conn		*t;
	const char		*name;
	uint8_t			 ip[16];
	size_t			 iplen;
	int			 rv;

	(void)tcp_setup(c, accepted);
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		c->why = "out of memory";
		return (-1);
	}
	mbedtls_ssl_init(&t->ssl);
	t->shared.fd = c->fd;
	t->ctx = ctx;
	ctx->refs++;
	c->tstate = t;
	if ((rv = mbedtls_ssl_setup(&t->ssl, &ctx->conf)) != 0) {
		mbed_error(why, sizeof(why), "TLS set-up failed", rv);
		c->why = why;
		return (-1);
	}
	mbedtls_ssl_set_bio(&t->ssl, t, bio_send, bio_recv, NULL);
	/* The endpoint outlives the handshake. */
	mbedtls_ssl_set_verify(&t->ssl, verify_peer, c->endpoint);
	if (!accepted) {
		/* A name is sent; verify_peer() checks a name or an address. */
		name = tls_dial_name(c->endpoint);
		if (!dial_name_ip(name, ip, &iplen) &&
		    (rv = mbedtls_ssl_set_hostname(&t->ssl, name)) != 0) {
			mbed_error(why, sizeof(why), "TLS set-up failed", rv);
			c->why = why;
			return (-1);
		}
	}
	return (0);
}

/* The subject CN, only if there is exactly one, or NULL. */
static const mbedtls_x509_buf *
subject_cn(const mbedtls_x509_crt *crt, enum cn_string *kind)
{
	const mbedtls_x509_name	*n, *cn = NULL;

	for (n = &crt->subject; n != NULL; n = n->next) {
		if (n->oid.p == NULL || MBEDTLS_OID_CMP(MBEDTLS_OID_AT_CN,
		    &n->oid) != 0)
			continue;
		if (cn != NULL)
			return (NULL);
		cn = n;
	}
	if (cn == NULL)
		return (NULL);
	switch (cn->val.tag) {
	case MBEDTLS_ASN1_UTF8_STRING:
		*kind = CN_UTF8;
		break;
	case MBEDTLS_ASN1_PRINTABLE_STRING:
		*kind = CN_PRINTABLE;
		break;
	case MBEDTLS_ASN1_IA5_STRING:
		*kind = CN_IA5;
		break;
	case MBEDTLS_ASN1_T61_STRING:
		*kind = CN_T61;
		break;
	case MBEDTLS_ASN1_BMP_STRING:
		*kind = CN_BMP;
		break;
	case MBEDTLS_ASN1_UNIVERSAL_STRING:
		*kind = CN_UNIVERSAL;
		break;
	default:
		*kind = CN_OTHER;
		break;
	}
	return (&cn->val);
}

/* The subject CN, read as identity.c reads every backend's. */
static void
identity_cn(struct identity_draft *d, const mbedtls_x509_crt *crt)
{
	const mbedtls_x509_buf	*cn;
	enum cn_string		 kind;

	if ((cn = subject_cn(crt, &kind)) != NULL)
		(void)identity_draft_cn_string(d, kind, cn->p, cn->len);
}

/* The DNS, URI, IP and e-mail SANs, each with its type. */
static void
identity_sans(struct identity_draft *d, const mbedtls_x509_crt *crt)
{
	const mbedtls_x509_sequence	*s;
	enum san_type			 type;

	for (s = &crt->subject_alt_names; s != NULL && s->buf.p != NULL;
	    s = s->next) {
		if ((s->buf.tag & MBEDTLS_ASN1_TAG_CLASS_MASK) !=
		    MBEDTLS_ASN1_CONTEXT_SPECIFIC ||
		    (s->buf.tag & MBEDTLS_ASN1_CONSTRUCTED))
			continue;
		switch (s->buf.tag & MBEDTLS_ASN1_TAG_VALUE_MASK) {
		case SAN_TAG_DNS:
			type = SAN_DNS;
			break;
		case SAN_TAG_URI:
			type = SAN_URI;
			break;
		case SAN_TAG_EMAIL:
			type = SAN_EMAIL;
			break;
		case SAN_TAG_IP:
			type = SAN_IP;
			break;
		default:
			continue;
		}
		(void)identity_draft_san(d, type, s->buf.p, s->buf.len);
	}
}

/*
 * Whether the server's certificate names the host dialled, by the rule
 * both backends share (tls_openssl.c's names_host()): an address only by
 * an iPAddress SAN; a name by a dNSName (identity_dns_match()), or by
 * the CN only in a certificate with no subjectAltName at all.  This
 * stands in for 2.28's own check, whose wildcards and CN differ.
 */
static int
names_host(const mbedtls_x509_crt *crt, const char *name)
{
	const mbedtls_x509_sequence	*s;
	const mbedtls_x509_buf		*cn;
	enum cn_string			 kind;
	uint8_t				 ip[16];
	size_t				 iplen;
	char				 utf8[IDENTITY_NAME_MAX + 1];
	int				 n;

	(void)dial_name_ip(name, ip, &iplen);
	if (crt->ext_types & MBEDTLS_X509_EXT_SUBJECT_ALT_NAME) {
		for (s = &crt->subject_alt_names; s != NULL &&
		    s->buf.p != NULL; s = s->next) {
			if (iplen != 0 && s->buf.tag ==
			    (MBEDTLS_ASN1_CONTEXT_SPECIFIC | SAN_TAG_IP) &&
			    s->buf.len == iplen &&
			    memcmp(s->buf.p, ip, iplen) == 0)
				return (1);
			if (iplen == 0 && s->buf.tag ==
			    (MBEDTLS_ASN1_CONTEXT_SPECIFIC | SAN_TAG_DNS) &&
			    identity_dns_match(s->buf.p, s->buf.len, name))
				return (1);
		}
		return (0);
	}
	if (iplen != 0 || (cn = subject_cn(crt, &kind)) == NULL ||
	    (n = identity_cn_decode(kind, cn->p, cn->len, utf8,
	    sizeof(utf8))) <= 0)
		return (0);
	return (identity_dns_match(utf8, n, name));
}

/*
 * Whether a certificate may be used for purpose (the OID of clientAuth
 * or serverAuth): with an extendedKeyUsage, only if it lists that very
 * purpose.  2.28 also takes anyExtendedKeyUsage, and checks only the
 * peer's own certificate; OpenSSL takes neither, for any certificate of
 * the chain.
 */
static int
usage_allows(const mbedtls_x509_crt *crt, const char *oid, size_t len)
{
	const mbedtls_x509_sequence	*s;

	if (!(crt->ext_types & MBEDTLS_X509_EXT_EXTENDED_KEY_USAGE))
		return (1);
	for (s = &crt->ext_key_usage; s != NULL && s->buf.p != NULL;
	    s = s->next) {
		if (s->buf.len == len && memcmp(s->buf.p, oid, len) == 0)
			return (1);
	}
	return (0);
}

/*
 * 2.28 calls this for each certificate of a verified chain, with what it
 * found wrong in flags: hold each to the peer's purpose, and check the
 * server's own against the name dialled, as OpenSSL does.
 */
static int
verify_peer(void *arg, mbedtls_x509_crt *crt, int depth, uint32_t *flags)
{
	const struct endpoint	*ep = arg;

	if (ep->role == ROLE_LISTEN ? !usage_allows(crt,
	    MBEDTLS_OID_CLIENT_AUTH, MBEDTLS_OID_SIZE(MBEDTLS_OID_CLIENT_AUTH)) :
	    !usage_allows(crt, MBEDTLS_OID_SERVER_AUTH,
	    MBEDTLS_OID_SIZE(MBEDTLS_OID_SERVER_AUTH)))
		*flags |= MBEDTLS_X509_BADCERT_EXT_KEY_USAGE;
	if (depth == 0 && ep->role != ROLE_LISTEN) {
		*flags &= ~MBEDTLS_X509_BADCERT_CN_MISMATCH;
		if (!names_host(crt, tls_dial_name(ep)))
			*flags |= MBEDTLS_X509_BADCERT_CN_MISMATCH;
	}
	return (0);
}

/* Name the most telling of a verification's failure flags. */
static const char *
verify_text(uint32_t flags)
{
	if (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED)
		return ("unable to get local issuer certificate (not signed "
		    "by a trusted CA)");
	if (flags & MBEDTLS_X509_BADCERT_EXPIRED)
		return ("certificate has expired");
	if (flags & MBEDTLS_X509_BADCERT_FUTURE)
		return ("certificate is not yet valid");
	if (flags & (MBEDTLS_X509_BADCERT_EXT_KEY_USAGE |
	    MBEDTLS_X509_BADCERT_KEY_USAGE))
		return ("unsuitable certificate purpose");
	if (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH)
		return ("hostname mismatch");
	if (flags & MBEDTLS_X509_BADCERT_REVOKED)
		return ("certificate revoked");
	return ("certificate rejected");
}

static int
verify_failed(struct stream *c, uint32_t flags)
{
	uint8_t		 ip[16];
	size_t		 iplen;
	const char	*text = verify_text(flags);

	if ((flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) &&
	    strcmp(text, "hostname mismatch") == 0 &&
	    dial_name_ip(tls_dial_name(c->endpoint), ip, &iplen))
		text = "IP address mismatch";
	snprintf(why, sizeof(why), "TLS handshake failed: %s certificate "
	    "verify failed: %s", c->endpoint->role == ROLE_LISTEN ? "client" :
	    "server", text);
	c->why = why;
	return (IO_ERROR);
}

/*
 * The handshake is done: finish what 2.28 leaves to us (an optional
 * client certificate that was sent must verify), then keep the verified
 * certificate as the peer's identity and name it in the printable peer.
 * mbed TLS keeps the parsed certificate as long as the connection lives
 * unless it was built without MBEDTLS_SSL_KEEP_PEER_CERTIFICATE.
 */
static int
handshake_done(struct stream *c, struct tls_conn *t)
{
	const mbedtls_x509_crt	*crt = mbedtls_ssl_get_peer_cert(&t->ssl);
	struct identity_draft	 draft;
	uint32_t		 flags;

	if (TLS(c->endpoint)->verify == VERIFY_NONE || crt == NULL)
		return (0);
	if ((flags = mbedtls_ssl_get_verify_result(&t->ssl)) != 0)
		return (verify_failed(c, flags));
	identity_draft_init(&draft);
	identity_cn(&draft, crt);
	identity_sans(&draft, crt);
	if (mbedtls_sha256_ret(crt->raw.p, crt->raw.len, draft.fingerprint,
	    0) != 0) {
		c->why = "cannot hash the peer's certificate";
		return (IO_ERROR);
	}
	return (tls_attach_identity(c, &draft));
}

/* Describe why the handshake failed, in words a user can act on. */
static int
handshake_error(struct stream *c, struct tls_conn *t, int rv)
{
	uint32_t	 flags = mbedtls_ssl_get_verify_result(&t->ssl);

	switch (rv) {
	case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED:
	case MBEDTLS_ERR_SSL_BAD_HS_CERTIFICATE:
		/* The latter for a wrong key usage or EKU. */
		if (flags != 0 && flags != (uint32_t)-1)
			return (verify_failed(c, flags));
		break;
	case MBEDTLS_ERR_SSL_NO_CLIENT_CERTIFICATE:
		c->why = "TLS handshake failed: peer did not return a "
		    "certificate";
		return (IO_ERROR);
	case MBEDTLS_ERR_SSL_BAD_HS_PROTOCOL_VERSION:
		c->why = "TLS handshake failed: unsupported protocol";
		return (IO_ERROR);
	case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE:
		snprintf(why, sizeof(why), "TLS handshake failed: the peer "
		    "sent fatal alert %u", t->ssl.in_msg != NULL ?
		    t->ssl.in_msg[1] : 0);
		c->why = why;
		return (IO_ERROR);
	case MBEDTLS_ERR_SSL_CONN_EOF:
		c->why = "TLS handshake failed: the peer closed the connection";
		return (IO_ERROR);
	case MBEDTLS_ERR_NET_SEND_FAILED:
	case MBEDTLS_ERR_NET_RECV_FAILED:
		snprintf(why, sizeof(why), "TLS handshake failed: %s",
		    strerror(t->sys_error));
		c->why = why;
		return (IO_ERROR);
	}
	mbed_error(why, sizeof(why), "TLS handshake failed", rv);
	c->why = why;
	return (IO_ERROR);
}

int
tls_handshake(struct stream *c)
{
	struct tls_conn	*t = c->tstate;
	int		 rv;

	switch ((rv = mbedtls_ssl_handshake(&t->ssl))) {
	case 0:
		return (handshake_done(c, t));
	case MBEDTLS_ERR_SSL_WANT_READ:
		return (IO_WANT_READ);
	case MBEDTLS_ERR_SSL_WANT_WRITE:
		return (IO_WANT_WRITE);
	}
	return (handshake_error(c, t, rv));
}

/* Map a failed mbedtls_ssl_read or _write to a transport result. */
static int
io_result(struct stream *c, struct tls_conn *t, int rv)
{
	switch (rv) {
	case MBEDTLS_ERR_SSL_WANT_READ:
		return (IO_WANT_READ);
	case MBEDTLS_ERR_SSL_WANT_WRITE:
		return (IO_WANT_WRITE);
	case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY:
		return (IO_EOF);
	case MBEDTLS_ERR_SSL_CONN_EOF:
		c->why = "truncated: the peer closed without a TLS "
		    "close_notify";
		return (IO_ERROR);
	case MBEDTLS_ERR_NET_SEND_FAILED:
	case MBEDTLS_ERR_NET_RECV_FAILED:
		c->error = t->sys_error;
		return (IO_ERROR);
	}
	mbed_error(why, sizeof(why), "TLS", rv);
	c->why = why;
	return (IO_ERROR);
}

/* Decrypt what one mbedtls_ssl_read gives. */
ssize_t
tls_read_some(struct stream *c, void *buf, size_t len)
{
	struct tls_conn	*t = c->tstate;
	int		 n;

	if ((n = mbedtls_ssl_read(&t->ssl, buf, len)) > 0)
		return (n);
	/* 0 is a TCP end without close_notify (CONN_EOF). */
	return (io_result(c, t, n == 0 ? MBEDTLS_ERR_SSL_CONN_EOF : n));
}

/*
 * Write one record from buf.  After a write that wanted I/O, mbed TLS has
 * the record and must be called again with the same length: tls.c keeps
 * those bytes at the head of what it passes.
 */
ssize_t
tls_write_record(struct stream *c, const void *buf, size_t len)
{
	struct tls_conn	*t = c->tstate;
	int		 n, rv;

	if (t->retry_len != 0)
		len = t->retry_len;
	if ((n = mbedtls_ssl_write(&t->ssl, buf, len)) > 0) {
		t->retry_len = 0;
		return (n);
	}
	rv = io_result(c, t, n);
	if (rv == IO_WANT_READ || rv == IO_WANT_WRITE)
		t->retry_len = len;
	else if (rv == IO_EOF)
		rv = IO_ERROR;
	return (rv);
}

/* mbed TLS keeps its record buffers for the life of the connection. */
void
tls_write_end(struct stream *c)
{
	(void)c;
}

/* Input read and not yet taken. */
int
tls_buffered(struct stream *c)
{
	struct tls_conn	*t = c->tstate;

	return (mbedtls_ssl_check_pending(&t->ssl));
}

/* Send close_notify, then FIN; the peer may go on sending. */
int
tls_shutdown(struct stream *c)
{
	struct tls_conn	*t = c->tstate;
	int		 rv;

	if ((rv = mbedtls_ssl_close_notify(&t->ssl)) != 0) {
		rv = io_result(c, t, rv);
		return (rv == IO_WANT_WRITE || rv == IO_WANT_READ ? rv :
		    IO_ERROR);
	}
	return (socket_shutdown(c));
}

/* Free the context without close_notify: an abrupt end must look like one. */
void
tls_teardown(struct stream *c)
{
	struct tls_conn	*t = c->tstate;

	if (t == NULL)
		return;
	mbedtls_ssl_free(&t->ssl);
	context_unref(t->ctx);
	free(t);
	c->tstate = NULL;
}

/*
 * libevent 2.1 has no bufferevent for mbed TLS (2.2 adds one), so
 * --metrics tls: is refused at start-up in this build.
 */
int
tls_server_bufferevents(void)
{
	return (0);
}

struct bufferevent *
tls_server_bufferevent(const struct endpoint *ep, struct event_base *b)
{
	return (NULL);
}
