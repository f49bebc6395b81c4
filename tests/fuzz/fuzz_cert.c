/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the way a TLS peer's certificate becomes its identity (OpenSSL):
 * the input is a DER certificate, parsed with d2i_X509 and handed to
 * tls_openssl_identity(), then matched with allow-list rules made from
 * its own names (security.md FZ-5).  The harness walks the certificate
 * itself, entry by entry, and checks:
 * - the SANs are the certificate's DNS, URI, e-mail and IP names, in its
 *   order, each with its own type and its exact bytes, at most 16; a
 *   name with a NUL, an empty or overlong one, and every SAN of a
 *   certificate with two SAN extensions are left out;
 * - the CN is the subject's only CN, as UTF-8, or empty;
 * - the fingerprint is the SHA-256 of the DER, when the input is DER;
 * - a rule made from each name matches, and the same value under any
 *   other type matches only if the certificate has it under that type;
 * - no rule made from either side of a NUL in a name matches through it;
 * - a fingerprint rule matches the fingerprint, and not with a bit off.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/identity.h"
#include "router/acl.h"
#include "transports/tls.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

static const char *const san_prefixes[] = { "dns:", "uri:", "ip:", "email:" };

/* Return whether the identity holds a SAN of this type and value. */
static int
has_san(const struct identity *id, enum san_type type, const char *value)
{
	int	 i;

	for (i = 0; i < id->nsan; i++) {
		if (id->san[i].type == type &&
		    strcmp(id->san[i].value, value) == 0)
			return (1);
	}
	return (0);
}

/* Parse a rule that must parse. */
static void
rule(enum allow_kind kind, const char *prefix, const char *value,
    struct allow_rule *r)
{
	char	 text[300], err[512];

	snprintf(text, sizeof(text), "%s%s", prefix, value);
	if (identity_rule_parse(kind, text, r, err, sizeof(err)) == -1)
		abort();
}

/*
 * A name with NULs is in no SAN: a rule for any piece of it matches only
 * through another name that is that piece.
 */
static void
check_nul_name(const struct identity *id, enum san_type type,
    const char *name, int len)
{
	struct allow_rule	 r;
	const char		*piece;

	for (piece = name; piece < name + len; piece += strlen(piece) + 1) {
		if (*piece == '\0')
			continue;
		rule(ALLOW_SAN, san_prefixes[type], piece, &r);
		if (identity_match(id, &r, 1) == 0 &&
		    !has_san(id, type, piece))
			abort();
	}
}

/* The SAN extension's names, or NULL when there is none or more than one. */
static GENERAL_NAMES *
san_extension(X509 *x)
{
	X509_EXTENSION	*ext, *found = NULL;
	int		 i;

	for (i = 0; i < X509_get_ext_count(x); i++) {
		ext = X509_get_ext(x, i);
		if (OBJ_obj2nid(X509_EXTENSION_get_object(ext)) !=
		    NID_subject_alt_name)
			continue;
		if (found != NULL)
			return (NULL);
		found = ext;
	}
	return (found != NULL ? X509V3_EXT_d2i(found) : NULL);
}

/*
 * Compare the identity's SANs with the certificate's, in order, and
 * check that a name with a NUL matches on neither side of it.
 */
static void
check_sans(X509 *x, const struct identity *id)
{
	GENERAL_NAMES		*names;
	const GENERAL_NAME	*gn;
	const unsigned char	*bytes;
	char			 want[256];
	int			 i, n = 0, len, type;

	if ((names = san_extension(x)) == NULL) {
		if (id->nsan != 0)
			abort();
		return;
	}
	for (i = 0; i < sk_GENERAL_NAME_num(names); i++) {
		gn = sk_GENERAL_NAME_value(names, i);
		switch (gn->type) {
		case GEN_DNS:
			type = SAN_DNS;
			break;
		case GEN_URI:
			type = SAN_URI;
			break;
		case GEN_EMAIL:
			type = SAN_EMAIL;
			break;
		case GEN_IPADD:
			type = SAN_IP;
			break;
		default:
			continue;
		}
		bytes = ASN1_STRING_get0_data(gn->d.ia5);
		len = ASN1_STRING_length(gn->d.ia5);
		if (type == SAN_IP) {
			if ((len != 4 && len != 16) || inet_ntop(len == 4 ?
			    AF_INET : AF_INET6, bytes, want, sizeof(want)) ==
			    NULL)
				continue;
		} else {
			if (len <= 0 || len >= (int)sizeof(want))
				continue;
			memcpy(want, bytes, len);
			want[len] = '\0';
			if (strlen(want) != (size_t)len) {
				check_nul_name(id, type, want, len);
				continue;
			}
		}
		if (n == IDENTITY_MAX_SANS)
			break;
		if (n >= id->nsan || (int)id->san[n].type != type ||
		    strcmp(id->san[n].value, want) != 0)
			abort();	/* another name, type or order */
		n++;
	}
	if (n != id->nsan)
		abort();
	GENERAL_NAMES_free(names);
}

/*
 * Whether identity.c leaves out a CN that OpenSSL reads: one of another
 * string type (NumericString, VisibleString, ...; mbed TLS does not take
 * them), or a byte string with a byte beyond ASCII, which OpenSSL reads
 * as Latin-1.
 */
static int
left_out(const ASN1_STRING *s)
{
	const unsigned char	*p = ASN1_STRING_get0_data(s);
	int			 i;

	switch (ASN1_STRING_type(s)) {
	case V_ASN1_PRINTABLESTRING:
	case V_ASN1_IA5STRING:
	case V_ASN1_T61STRING:
		break;
	case V_ASN1_UTF8STRING:
	case V_ASN1_BMPSTRING:
	case V_ASN1_UNIVERSALSTRING:
		return (0);
	default:
		return (1);
	}
	for (i = 0; i < ASN1_STRING_length(s); i++) {
		if (p[i] >= 0x80)
			return (1);
	}
	return (0);
}

/* The subject's only CN, as UTF-8 without a NUL, else nothing. */
static void
check_cn(X509 *x, const struct identity *id)
{
	X509_NAME	*subject = X509_get_subject_name(x);
	X509_NAME_ENTRY	*e, *cn = NULL;
	unsigned char	*utf8;
	int		 i, n, count = 0;

	for (i = 0; i < X509_NAME_entry_count(subject); i++) {
		e = X509_NAME_get_entry(subject, i);
		if (OBJ_obj2nid(X509_NAME_ENTRY_get_object(e)) ==
		    NID_commonName) {
			cn = e;
			count++;
		}
	}
	if (strnlen(id->cn, IDENTITY_NAME_MAX + 1) > IDENTITY_NAME_MAX)
		abort();
	if (count != 1) {
		if (id->cn[0] != '\0')
			abort();
		return;
	}
	/*
	 * OpenSSL's reading is the oracle, but for what identity.c leaves
	 * out on purpose (left_out()): a CN kept is OpenSSL's.
	 */
	n = ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(cn));
	if (n <= 0 || n > IDENTITY_NAME_MAX ||
	    memchr(utf8, '\0', n) != NULL) {
		if (id->cn[0] != '\0')
			abort();
	} else if (id->cn[0] != '\0' && (strlen(id->cn) != (size_t)n ||
	    memcmp(id->cn, utf8, n) != 0))
		abort();
	else if (id->cn[0] == '\0' && !left_out(X509_NAME_ENTRY_get_data(cn)))
		abort();
	if (n >= 0)
		OPENSSL_free(utf8);
}

/* Rules made from the identity's own names match it, and only so. */
static void
check_matching(const struct identity *id)
{
	struct allow_rule	 r;
	char			 hex[65], text[300], err[512];
	int			 i, t;

	for (i = 0; i < id->nsan; i++) {
		for (t = SAN_DNS; t <= SAN_EMAIL; t++) {
			snprintf(text, sizeof(text), "%s%s", san_prefixes[t],
			    id->san[i].value);
			if (identity_rule_parse(ALLOW_SAN, text, &r, err,
			    sizeof(err)) == -1) {
				if (t == (int)id->san[i].type || t != SAN_IP)
					abort();
				continue;	/* not an address */
			}
			if ((identity_match(id, &r, 1) == 0) !=
			    has_san(id, t, r.value))
				abort();	/* type confusion */
		}
	}
	if (id->cn[0] != '\0') {
		rule(ALLOW_CN, "", id->cn, &r);
		if (identity_match(id, &r, 1) != 0)
			abort();
		for (t = SAN_DNS; t <= SAN_EMAIL; t++) {
			if (t == SAN_IP)
				continue;
			rule(ALLOW_SAN, san_prefixes[t], id->cn, &r);
			if ((identity_match(id, &r, 1) == 0) !=
			    has_san(id, t, id->cn))
				abort();	/* the CN is not a SAN */
		}
	}
	for (i = 0; i < 32; i++)
		snprintf(hex + 2 * i, 3, "%02x", id->fingerprint[i]);
	rule(ALLOW_FP, "", hex, &r);
	if (identity_match(id, &r, 1) != 0)
		abort();
	r.fingerprint[31] ^= 0x80;
	if (identity_match(id, &r, 1) != -1)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct identity		*id;
	const unsigned char	*p = data;
	unsigned char		*der = NULL, sha[SHA256_DIGEST_LENGTH];
	X509			*x;
	int			 len;

	if ((x = d2i_X509(NULL, &p, size)) == NULL)
		return (0);
	if ((id = tls_openssl_identity(x)) == NULL) {
		X509_free(x);
		return (0);
	}
	if (id->nsan < 0 || id->nsan > IDENTITY_MAX_SANS)
		abort();
	check_sans(x, id);
	check_cn(x, id);
	/* For a certificate in DER, the fingerprint is the input's. */
	len = i2d_X509(x, &der);
	if (len == p - data && memcmp(der, data, len) == 0) {
		SHA256(data, len, sha);
		if (memcmp(sha, id->fingerprint, sizeof(sha)) != 0)
			abort();
	}
	OPENSSL_free(der);
	check_matching(id);
	free(id);
	X509_free(x);
	return (0);
}
