/* SPDX-License-Identifier: ISC */

/*
 * The diagnostic IPC wire format (ipc.c): the header and the advertise,
 * the classifier of a connection's first bytes, the frames dsroute builds
 * itself, and the names of commands and of default sockets.  Pure
 * functions over bytes.  Everything is little-endian; see
 * docs/protocol-notes.md for what the runtime really does.
 */

#ifndef IPC_H
#define IPC_H

#include <stddef.h>
#include <stdint.h>

struct evbuffer;

/* A header: the magic, u16 size (of it all, little-endian), set, id, u16. */
#define IPC_MAGIC_LEN		14	/* "DOTNET_IPC_V1" and a NUL */
#define IPC_HEADER_LEN		20
#define IPC_SIZE_OFFSET		14
#define IPC_SET_OFFSET		16
#define IPC_ID_OFFSET		17
#define IPC_RESERVED_OFFSET	18
#define IPC_MESSAGE_MAX		65535	/* the header's size field is a u16 */
#define ADVR_MAGIC_LEN		8	/* "ADVR_V1" and a NUL */
#define ADVR_LEN		34
#define IPC_COOKIE_LEN		16

#define IPC_SET_DUMP		0x01
#define IPC_SET_EVENTPIPE	0x02
#define IPC_SET_PROFILER	0x03
#define IPC_SET_PROCESS		0x04
#define IPC_SET_DSROUTE		0xd5	/* routers' own: never to a runtime */
#define IPC_SET_SERVER		0xff
#define IPC_ID_OK		0x00
#define IPC_ID_PROCESS_INFO	0x00	/* in IPC_SET_PROCESS */
#define IPC_ID_RESUME_RUNTIME	0x01	/* in IPC_SET_PROCESS */
#define IPC_ID_PROCESS_INFO2	0x04	/* in IPC_SET_PROCESS */
#define IPC_ID_PROCESS_INFO3	0x08	/* in IPC_SET_PROCESS */
#define IPC_ID_ERROR		0xff
#define IPC_ID_COLLECT_TRACING6	0x07	/* in IPC_SET_EVENTPIPE */
#define IPC_BUFFER_MODE_DROP	0	/* CollectTracing6: lossy */
#define IPC_BUFFER_MODE_BLOCK	1	/* ... the app's threads wait */

#define HRESULT_BAD_ENCODING	0x80131384U
#define HRESULT_UNKNOWN_COMMAND	0x80131385U
#define HRESULT_UNKNOWN_MAGIC	0x80131386U
#define HRESULT_ACCESS_DENIED	0x80070005U
#define HRESULT_FILE_NOT_FOUND	0x80070002U	/* no socket at that path */
#define HRESULT_CONN_REFUSED	0x8007274DU	/* WSAECONNREFUSED */
#define HRESULT_BUSY		0x800700AAU	/* ERROR_BUSY: a cap is reached */
#define HRESULT_TIMEOUT		0x800705B4U	/* ERROR_TIMEOUT: none came */
#define HRESULT_CONN_TIMEOUT	0x8007274CU	/* WSAETIMEDOUT */
#define HRESULT_TLS_FAILED	0x80090326U	/* SEC_E_ILLEGAL_MESSAGE */

struct ipc_header {
	uint16_t	 size;		/* whole message, header included */
	uint8_t		 set;
	uint8_t		 id;
	uint16_t	 reserved;
};

struct advertise {
	uint8_t		 cookie[IPC_COOKIE_LEN];
	uint64_t	 pid;
};

/*
 * A runtime's ProcessInfo or ProcessInfo2 answer, its strings as UTF-8
 * with no control characters (ipc_process_info_parse), each cut to fit.
 */
struct process_info {
	uint64_t	 pid;
	uint8_t		 cookie[IPC_COOKIE_LEN];
	char		 cmdline[1024];
	char		 os[32];
	char		 arch[32];
	char		 assembly[256];	/* managed entry point; ProcessInfo2 */
	char		 version[64];	/* CLR product version; ProcessInfo2 */
};

/* A default diagnostic socket's name, parsed. */
struct default_name {
	long		 pid;
	uint64_t	 key;		/* the process's start time */
	int		 router;	/* dotnet-diagnostic-dsrouter-... */
};

/* What the first bytes of a connection turned out to be. */
enum greeting_kind {
	GREETING_MORE,			/* too few bytes to tell yet */
	GREETING_ADVERTISE,		/* a runtime offering itself */
	GREETING_COMMAND,		/* a tool's complete first message */
	GREETING_INVALID
};

/*
 * What the first bytes of a reply say (ipc_reply_classify): an OK, an
 * error frame and its HRESULT, or a stream with no header of ours.
 */
enum reply_kind {
	REPLY_MORE,			/* too few bytes to tell yet */
	REPLY_OK,
	REPLY_ERROR,
	REPLY_OTHER
};

#define REPLY_PEEK		24	/* an error frame, whole */

/* ipc_classify looks at no more than the first GREETING_PEEK bytes. */
#define GREETING_PEEK		ADVR_LEN

struct greeting {
	enum greeting_kind	 kind;
	size_t			 need;	/* bytes the greeting takes, once known */
	struct ipc_header	 header;
	struct advertise	 advertise;
	const char		*error;	/* why it is invalid */
	uint32_t		 hresult; /* error frame for a tool, or 0 */
};

void		 ipc_classify(const uint8_t *, size_t, struct greeting *);
int		 ipc_classify_buffer(struct evbuffer *, struct greeting *);
const char	*ipc_command_name(uint8_t, uint8_t);
const char	*ipc_command_name_at(size_t);
void		 ipc_command_label(uint8_t, uint8_t, char *, size_t);
void		 ipc_error_frame(uint8_t [24], uint32_t);
void		 ipc_ok_frame(uint8_t [24]);
enum reply_kind	 ipc_reply_classify(const uint8_t *, size_t, uint32_t *);
const char	*ipc_hresult_name(uint32_t);
void		 ipc_request(uint8_t [IPC_HEADER_LEN], uint8_t, uint8_t);
size_t		 ipc_size(const uint8_t *);
void		 ipc_advertise_build(uint8_t [ADVR_LEN],
		    const struct advertise *);
int		 ipc_collect6_buffer_mode(const uint8_t *, size_t, uint32_t *);
int		 ipc_info_reply_id(const uint8_t *, size_t, int, uint64_t *,
		    uint8_t [IPC_COOKIE_LEN], uint32_t *);
int		 ipc_processinfo_parse(const uint8_t *, size_t,
		    struct advertise *, uint32_t *);
int		 ipc_process_info_parse(const uint8_t *, size_t, int,
		    struct process_info *, uint32_t *);
void		 ipc_process_info_name(const struct process_info *, char *,
		    size_t);
void		 ipc_cookie_hex(const uint8_t [IPC_COOKIE_LEN], char [33]);
int		 ipc_default_socket_parse(const char *, int,
		    struct default_name *);
int		 ipc_default_key_matches(const struct default_name *, uint64_t,
		    uint64_t);
int		 ipc_default_pipe_parse(const char *, int,
		    struct default_name *);
int		 ipc_pipe_name_plain(const char *);
uint32_t	 ipc_get32(const uint8_t *);
uint16_t	 ipc_get16(const uint8_t *);
uint64_t	 ipc_get64(const uint8_t *);
void		 ipc_put16(uint8_t *, uint16_t);
void		 ipc_put32(uint8_t *, uint32_t);
void		 ipc_put64(uint8_t *, uint64_t);
int		 ipc_magic_prefix(const uint8_t *, size_t);

#endif /* IPC_H */
