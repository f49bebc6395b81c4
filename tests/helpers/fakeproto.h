/* SPDX-License-Identifier: ISC */

/*
 * fakeproto.h: the diagnostic IPC protocol as the test fakes speak it,
 * shared by all four: fakert and faketool (Linux) and their Windows twins
 * winfakert and winfaketool.  The wire's constants, message headers,
 * payloads built and read, ProcessInfo, the environment block, the
 * advertise, the CollectTracing2 request, the deterministic EventPipe
 * stream and its SHA-256, hex and numbers.
 *
 * Portable C: no sockets, pipes, threads or other OS calls; those stay in
 * each fake.  Like le.h and sha256.h it shares nothing with the router's
 * code, on purpose: a fake that read the wire the router's way would agree
 * with the router's mistakes.
 */

#ifndef TESTS_FAKEPROTO_H
#define TESTS_FAKEPROTO_H

#include <stddef.h>
#include <stdint.h>

#include "sha256.h"

#define IPC_MAGIC		"DOTNET_IPC_V1"	/* 13 chars + NUL = 14 */
#define IPC_MAGIC_LEN		14
#define IPC_HDR_LEN		20
#define IPC_MAX_MSG		65535
#define IPC_MAX_PAYLOAD		(IPC_MAX_MSG - IPC_HDR_LEN)
#define ADVR_MAGIC		"ADVR_V1"	/* 7 chars + NUL = 8 */
#define ADVR_LEN		34
#define COOKIE_LEN		16

#define SET_DUMP		0x01
#define SET_EVENTPIPE		0x02
#define SET_PROFILER		0x03
#define SET_PROCESS		0x04
#define SET_SERVER		0xFF
#define ID_OK			0x00
#define ID_ERROR		0xFF

#define HR_BAD_ENCODING		0x80131384U
#define HR_UNKNOWN_COMMAND	0x80131385U
#define HR_UNKNOWN_MAGIC	0x80131386U
#define HR_E_FAIL		0x80004005U
#define HR_INVALIDARG		0x80070057U

/* printf-like functions: mingw-w64's own printf with the Windows fakes. */
#if defined(__GNUC__) && defined(_WIN32)
#define FP_PRINTFLIKE(f, a)	__attribute__((format(gnu_printf, f, a)))
#define FP_NORETURN		__attribute__((noreturn))
#elif defined(__GNUC__)
#define FP_PRINTFLIKE(f, a)	__attribute__((format(printf, f, a)))
#define FP_NORETURN		__attribute__((noreturn))
#else
#define FP_PRINTFLIKE(f, a)
#define FP_NORETURN
#endif

/* A protocol string as UTF-8: at most 3 bytes a UTF-16 unit, and NUL. */
#define STRING_MAX		(3 * IPC_MAX_PAYLOAD + 1)
#define SHA256_HEX_LEN		(2 * SHA256_LEN + 1)

/* A payload under construction; an overflow is remembered, not written. */
struct fp_buf {
	uint8_t			 data[IPC_MAX_PAYLOAD];
	size_t			 len;
	int			 overflow;
};

/* A payload being read; any short read sets bad and yields zeros. */
struct fp_cursor {
	const uint8_t		*p;
	size_t			 left;
	int			 bad;
};

/* The fixed header of a message, as read off the wire. */
struct fp_header {
	int			 magic_ok;
	uint16_t		 size;		/* header included */
	uint8_t			 set;
	uint8_t			 id;
};

/*
 * ProcessInfo (id 0x00), ProcessInfo2 (0x04) and ProcessInfo3 (0x08), as
 * a tool reads them.  About 1.2 MB: keep it static.
 */
struct fp_processinfo {
	uint32_t		 version;	/* ProcessInfo3's */
	uint64_t		 pid;
	char			 cookie[2 * COOKIE_LEN + 1];
	char			 cmdline[STRING_MAX];
	char			 os[STRING_MAX];
	char			 arch[STRING_MAX];
	char			 entrypoint[STRING_MAX];	/* 2 and 3 */
	char			 clrversion[STRING_MAX];	/* 2 and 3 */
	char			 rid[STRING_MAX];		/* 3, v1 */
};

/* The EventPipe stream of one session and the digest of what was sent. */
struct fp_stream {
	uint64_t		 state;
	uint64_t		 word;
	uint64_t		 total;		/* bytes sent */
	struct sha256		 md;
};

size_t	 fp_message(uint8_t *, uint8_t, uint8_t, const void *, size_t);
void	 fp_header(const uint8_t *, struct fp_header *);

void	 fp_cursor_init(struct fp_cursor *, const uint8_t *, size_t);
uint32_t fp_cur_u32(struct fp_cursor *);
uint64_t fp_cur_u64(struct fp_cursor *);
void	 fp_cur_string(struct fp_cursor *, char *);

void	 fp_processinfo_put(struct fp_buf *, uint8_t, uint64_t,
	    const uint8_t *, const char *, const char *, const char *,
	    const char *, const char *);
int	 fp_processinfo_get(struct fp_processinfo *, uint8_t, const uint8_t *,
	    size_t);
void	 fp_environment_put(struct fp_buf *, struct fp_buf *,
	    const char *const *, size_t);
int	 fp_environment_get(const uint8_t *, size_t, uint32_t *);
void	 fp_advertise_put(uint8_t *, const uint8_t *, uint64_t);
int	 fp_advertise_get(const uint8_t *, uint8_t *, uint64_t *);
size_t	 fp_collect2_payload(uint8_t *);

int	 fp_stream_init(struct fp_stream *, uint64_t);
void	 fp_stream_fill(struct fp_stream *, uint8_t *, size_t);
void	 fp_stream_sent(struct fp_stream *, const uint8_t *, size_t);
int	 fp_sha256_hex(struct sha256 *, char *);

void	 fp_hex_string(char *, const uint8_t *, size_t);
int	 fp_hex_decode(const char *, uint8_t *, size_t, size_t *);
int	 fp_parse_u64(const char *, uint64_t *);
int	 fp_parse_cookie(const char *, uint8_t *);
void	 fp_cmdline(char *, size_t, const char *, int, char *[]);

#endif /* TESTS_FAKEPROTO_H */
