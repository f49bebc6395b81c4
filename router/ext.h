/* SPDX-License-Identifier: ISC */

/*
 * The extension command set routers speak to each other (ext.c), never to
 * a runtime: LIST asks a router for the runtimes it knows, answered by
 * ENTRY frames and an END; SELECT names the runtime the tool's command
 * that follows is for; WARM says a connection is a router's spare, made
 * ahead of the tool whose command will follow.  Pure functions over bytes, no allocation, no I/O.
 * docs/extension.md is the wire format.
 */

#ifndef EXT_H
#define EXT_H

#include <stddef.h>
#include <stdint.h>

#include "common/ipc.h"

#define EXT_SET			IPC_SET_DSROUTE	/* "dsroute" */
#define EXT_ID_LIST		0x01
#define EXT_ID_SELECT		0x02
#define EXT_ID_ENTRY		0x03
#define EXT_ID_WARM		0x04
#define EXT_VERSION		1	/* the highest this code speaks */

#define EXT_LIST_LEN		(IPC_HEADER_LEN + 2)
#define EXT_SELECT_LEN		(IPC_HEADER_LEN + 2 + IPC_COOKIE_LEN)
#define EXT_END_LEN		(IPC_HEADER_LEN + 6)
#define EXT_WARM_LEN		(IPC_HEADER_LEN + 2)
#define EXT_WARM_ANSWER_LEN	(IPC_HEADER_LEN + 6)
/* An ENTRY v1 with six empty strings. */
#define EXT_ENTRY_MIN		(IPC_HEADER_LEN + 28 + 6 * 2)

/* How the listing router came to know a runtime. */
enum ext_found {
	EXT_FOUND_ADVERTISE = 1,	/* it dialled in */
	EXT_FOUND_DIR,			/* its socket in a dir: endpoint */
	EXT_FOUND_PROC,			/* its socket found through /proc */
	EXT_FOUND_LINK			/* through another router */
};

/* One runtime of a listing; strings are UTF-8, NUL-terminated. */
struct ext_runtime {
	uint8_t		 cookie[IPC_COOKIE_LEN];
	uint64_t	 pid;		/* the runtime's own */
	uint8_t		 found;		/* enum ext_found, or newer */
	uint8_t		 hops;		/* routers crossed before the lister */
	char		 app[64];
	char		 cmdline[1024];
	char		 os[32];
	char		 arch[32];
	char		 version[64];	/* CLR version */
	char		 where[128];	/* the endpoint it was found on */
};

/* A LIST, SELECT or WARM request. */
struct ext_request {
	uint8_t		 id;		/* EXT_ID_LIST, _SELECT or _WARM */
	uint16_t	 version;	/* the highest the sender speaks */
	uint8_t		 cookie[IPC_COOKIE_LEN]; /* SELECT's; zero for LIST */
};

/* What the first message of a LIST answer is (ext_reply_parse). */
enum ext_reply_kind {
	EXT_REPLY_MORE,			/* too few bytes to tell yet */
	EXT_REPLY_ENTRY,
	EXT_REPLY_END,
	EXT_REPLY_ERROR,		/* refused: an error frame */
	EXT_REPLY_INVALID
};

void		 ext_list_request(uint8_t [EXT_LIST_LEN]);
void		 ext_select_request(uint8_t [EXT_SELECT_LEN],
		    const uint8_t [IPC_COOKIE_LEN]);
int		 ext_request_parse(const uint8_t *, size_t,
		    struct ext_request *);
size_t		 ext_entry_build(uint8_t *, size_t,
		    const struct ext_runtime *);
void		 ext_end_build(uint8_t [EXT_END_LEN], uint32_t);
void		 ext_warm_request(uint8_t [EXT_WARM_LEN]);
void		 ext_warm_answer_build(uint8_t [EXT_WARM_ANSWER_LEN], uint32_t);
int		 ext_warm_answer_parse(const uint8_t *, size_t, uint32_t *,
		    uint32_t *);
enum ext_reply_kind ext_reply_parse(const uint8_t *, size_t, size_t *,
		    struct ext_runtime *, uint32_t *, uint32_t *);
const char	*ext_found_name(uint8_t);
void		 ext_text(char *, size_t, const uint8_t *, size_t);

#endif /* EXT_H */
