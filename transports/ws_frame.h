/* SPDX-License-Identifier: ISC */

/*
 * WebSocket (RFC 6455) as pure functions of their input, so that they can
 * be fuzzed and tested alone: the frame header, masking, the HTTP upgrade
 * request a listener reads and the answer a dialler reads, and the
 * Sec-WebSocket-Accept digest.  No I/O and no allocation here; ws.c does
 * the rest.
 */

#ifndef WS_FRAME_H
#define WS_FRAME_H

#include <stddef.h>
#include <stdint.h>

#define WS_OP_CONT		0x0
#define WS_OP_TEXT		0x1
#define WS_OP_BINARY		0x2
#define WS_OP_CLOSE		0x8
#define WS_OP_PING		0x9
#define WS_OP_PONG		0xa

#define WS_HEAD_MAX		14	/* 2, 8 of length, 4 of mask */
#define WS_CONTROL_MAX		125

#define WS_CLOSE_NORMAL		1000
#define WS_CLOSE_PROTOCOL	1002
#define WS_CLOSE_POLICY		1008
#define WS_CLOSE_TOO_BIG	1009

/* The HTTP head of an upgrade: what a listener reads at most. */
#define WS_HEAD_BYTES_MAX	8192
#define WS_LINE_MAX		2048
#define WS_HEADERS_MAX		64

#define WS_KEY_LEN		24	/* base64 of 16 bytes */
#define WS_ACCEPT_LEN		28	/* base64 of a SHA-1 */

/* A frame header as read. */
struct ws_frame {
	int		 fin;
	int		 opcode;
	int		 masked;
	uint8_t		 mask[4];
	uint64_t	 len;		/* of the payload */
	size_t		 head_len;	/* of the header */
};

/*
 * ws_frame_parse: 0 when more bytes are needed, the header's length, or
 * -1 with a close code in *code and the reason in *why.  It checks what
 * a header alone can show: reserved bits, opcodes, control frames short
 * and whole, lengths in their shortest form, the mask as the receiver's
 * role requires (masked_expected), and the payload under max.
 */
int		 ws_frame_parse(const uint8_t *, size_t, int, uint64_t,
		    struct ws_frame *, int *, const char **);
size_t		 ws_frame_head(uint8_t [WS_HEAD_MAX], int, int, uint64_t,
		    const uint8_t *);
void		 ws_mask(uint8_t *, size_t, const uint8_t [4], uint64_t);

/* What a listener learnt from an upgrade request. */
struct ws_request {
	int		 status;	/* 0, or the HTTP error to answer */
	const char	*why;		/* for the log, with status */
	char		 path[256];
	char		 host[256];
	char		 origin[256];
	int		 have_origin;
	char		 key[WS_KEY_LEN + 1];
};

int		 ws_request_parse(const char *, size_t, const char *,
		    struct ws_request *);
int		 ws_response_parse(const char *, size_t, const char *,
		    const char **);
void		 ws_accept_key(const char *, char [WS_ACCEPT_LEN + 1]);
void		 ws_base64(const uint8_t *, size_t, char *);
const char	*ws_status_text(int);
int		 ws_origin_host(const char *, char *, size_t);

#endif /* WS_FRAME_H */
