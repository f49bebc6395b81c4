/* SPDX-License-Identifier: ISC */

/*
 * sha256.h: SHA-256 for the test fakes (fakert.c, faketool.c and their
 * Windows twins, beside it), which checksum the EventPipe streams they
 * send and receive.  It comes from the TLS library the build has, so that
 * the mbed TLS build needs no OpenSSL: mbed TLS 2.28 with
 * -DTESTS_SHA256_MBEDTLS, OpenSSL's EVP with -DTESTS_SHA256_OPENSSL or no
 * define (tests/fakes.mk).  The Windows fakes take it from the CryptoAPI
 * (advapi32) with -DTESTS_SHA256_CRYPTOAPI, or no define on Windows.
 * Makefile.am sets the define.  Header-only, and shares nothing with the
 * router's code.
 */

#ifndef TESTS_SHA256_H
#define TESTS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_LEN	32

#if !defined(TESTS_SHA256_MBEDTLS) && !defined(TESTS_SHA256_OPENSSL) && \
    !defined(TESTS_SHA256_CRYPTOAPI) && defined(_WIN32)
#define TESTS_SHA256_CRYPTOAPI
#endif

#if defined(TESTS_SHA256_MBEDTLS) + defined(TESTS_SHA256_OPENSSL) + \
    defined(TESTS_SHA256_CRYPTOAPI) > 1
#error "define one of TESTS_SHA256_MBEDTLS, _OPENSSL and _CRYPTOAPI"
#endif

#ifdef TESTS_SHA256_MBEDTLS

#include <mbedtls/sha256.h>

struct sha256 {
	mbedtls_sha256_context	ctx;
	int			failed;
};

/* Start a digest: 0, or -1 with nothing left to free. */
static inline int
sha256_init(struct sha256 *h)
{
	mbedtls_sha256_init(&h->ctx);
	h->failed = 0;
	if (mbedtls_sha256_starts_ret(&h->ctx, 0) != 0) {
		mbedtls_sha256_free(&h->ctx);
		return (-1);
	}
	return (0);
}

static inline void
sha256_update(struct sha256 *h, const void *buf, size_t len)
{
	if (len > 0 && mbedtls_sha256_update_ret(&h->ctx, buf, len) != 0)
		h->failed = 1;
}

/* The digest into out, and the context freed: 0, or -1 on any failure. */
static inline int
sha256_final(struct sha256 *h, uint8_t out[SHA256_LEN])
{
	if (mbedtls_sha256_finish_ret(&h->ctx, out) != 0)
		h->failed = 1;
	mbedtls_sha256_free(&h->ctx);
	return (h->failed ? -1 : 0);
}

#elif defined(TESTS_SHA256_CRYPTOAPI)

#include <windows.h>
#include <wincrypt.h>

struct sha256 {
	HCRYPTPROV	prov;
	HCRYPTHASH	hash;
	int		failed;
};

static inline int
sha256_init(struct sha256 *h)
{
	h->failed = 0;
	if (!CryptAcquireContextW(&h->prov, NULL, NULL, PROV_RSA_AES,
	    CRYPT_VERIFYCONTEXT))
		return (-1);
	if (!CryptCreateHash(h->prov, CALG_SHA_256, 0, 0, &h->hash)) {
		CryptReleaseContext(h->prov, 0);
		return (-1);
	}
	return (0);
}

static inline void
sha256_update(struct sha256 *h, const void *buf, size_t len)
{
	if (len > 0 && !CryptHashData(h->hash, buf, (DWORD)len, 0))
		h->failed = 1;
}

static inline int
sha256_final(struct sha256 *h, uint8_t out[SHA256_LEN])
{
	DWORD	n = SHA256_LEN;

	if (!CryptGetHashParam(h->hash, HP_HASHVAL, out, &n, 0) ||
	    n != SHA256_LEN)
		h->failed = 1;
	CryptDestroyHash(h->hash);
	CryptReleaseContext(h->prov, 0);
	return (h->failed ? -1 : 0);
}

#else	/* OpenSSL */

#include <openssl/evp.h>

struct sha256 {
	EVP_MD_CTX	*md;
	int		 failed;
};

static inline int
sha256_init(struct sha256 *h)
{
	h->failed = 0;
	if ((h->md = EVP_MD_CTX_new()) == NULL)
		return (-1);
	if (EVP_DigestInit_ex(h->md, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(h->md);
		h->md = NULL;
		return (-1);
	}
	return (0);
}

static inline void
sha256_update(struct sha256 *h, const void *buf, size_t len)
{
	if (len > 0 && EVP_DigestUpdate(h->md, buf, len) != 1)
		h->failed = 1;
}

static inline int
sha256_final(struct sha256 *h, uint8_t out[SHA256_LEN])
{
	unsigned int	len = 0;

	if (EVP_DigestFinal_ex(h->md, out, &len) != 1 || len != SHA256_LEN)
		h->failed = 1;
	EVP_MD_CTX_free(h->md);
	h->md = NULL;
	return (h->failed ? -1 : 0);
}

#endif

#endif	/* TESTS_SHA256_H */
