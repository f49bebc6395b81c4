/* SPDX-License-Identifier: ISC */

/*
 * TLS peer identities (identity.c): what a verified certificate says
 * (its CN, its typed SANs, its SHA-256), kept in one compact allocation,
 * and the rules of the identity allow-lists that name them.  Pure: the
 * TLS backends fill a draft, the access control matches the rules.
 */

#ifndef IDENTITY_H
#define IDENTITY_H

#include <stddef.h>
#include <stdint.h>

#define IDENTITY_MAX_SANS	16
#define IDENTITY_NAME_MAX	255	/* longest CN or SAN kept, in bytes */

enum san_type {
	SAN_DNS,
	SAN_URI,
	SAN_IP,
	SAN_EMAIL
};

struct identity_san {
	enum san_type	 type;
	const char	*value;			/* IP as text */
};

/* A verified peer: free() frees it, names included. */
struct identity {
	const char		*cn;		/* subject CN, "" if none */
	int			 nsan;
	uint8_t			 fingerprint[32]; /* SHA-256 of the DER leaf */
	struct identity_san	 san[];		/* nsan, then the names */
};

/* An identity being read from a certificate. */
struct identity_draft {
	char		 cn[IDENTITY_NAME_MAX + 1];
	struct {
		enum san_type	 type;
		char		 value[IDENTITY_NAME_MAX + 1];
	}		 san[IDENTITY_MAX_SANS];
	int		 nsan;
	uint8_t		 fingerprint[32];
};

/* The ASN.1 string types a subject CN is written in. */
enum cn_string {
	CN_UTF8,
	CN_PRINTABLE,
	CN_IA5,
	CN_T61,
	CN_BMP,
	CN_UNIVERSAL,
	CN_OTHER
};

/* One entry of an allow-list: allow-cn=, allow-san=, allow-fp=. */
enum allow_kind {
	ALLOW_CN,
	ALLOW_SAN,
	ALLOW_FP
};

struct allow_rule {
	enum allow_kind	 kind;
	enum san_type	 san_type;		/* ALLOW_SAN */
	char		 value[IDENTITY_NAME_MAX + 1];	/* CN or SAN */
	uint8_t		 fingerprint[32];	/* ALLOW_FP */
};

void		 identity_draft_init(struct identity_draft *);
int		 identity_draft_cn(struct identity_draft *, const void *,
		    size_t);
int		 identity_draft_cn_string(struct identity_draft *,
		    enum cn_string, const void *, size_t);
int		 identity_draft_san(struct identity_draft *, enum san_type,
		    const void *, size_t);
int		 identity_cn_decode(enum cn_string, const void *, size_t,
		    char *, size_t);
int		 identity_dns_match(const void *, size_t, const char *);
struct identity	*identity_pack(const struct identity_draft *);
int		 identity_rule_parse(enum allow_kind, const char *,
		    struct allow_rule *, char *, size_t);
int		 identity_match(const struct identity *,
		    const struct allow_rule *, int);
void		 identity_describe(const struct identity *, char *, size_t);
int		 identity_fingerprint_parse(const char *, uint8_t [32]);

#endif /* IDENTITY_H */
