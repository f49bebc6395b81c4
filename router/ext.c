/* SPDX-License-Identifier: ISC */

/*
 * The extension command set between routers (docs/extension.md): build
 * and parse LIST, SELECT, ENTRY and END.  Pure functions over bytes, so
 * that a peer router's bytes can be unit tested and fuzzed here alone.
 */

#include "config.h"

#include <string.h>

#include "common/ipc.h"
#include "common/log.h"
#include "router/ext.h"

/* The fixed part of an ENTRY payload: version, cookie, pid, found, hops. */
#define ENTRY_FIXED	(2 + IPC_COOKIE_LEN + 8 + 1 + 1)
#define ENTRY_STRINGS	6

/* Write a header for a message of size bytes. */
static void
header(uint8_t *buf, uint16_t size, uint8_t set, uint8_t id)
{
	ipc_request(buf, set, id);
	ipc_put16(buf + IPC_SIZE_OFFSET, size);
}

/* Build LIST, offering the highest version we speak. */
void
ext_list_request(uint8_t msg[EXT_LIST_LEN])
{
	header(msg, EXT_LIST_LEN, EXT_SET, EXT_ID_LIST);
	ipc_put16(msg + IPC_HEADER_LEN, EXT_VERSION);
}

/* Build SELECT for the runtime with the given cookie. */
void
ext_select_request(uint8_t msg[EXT_SELECT_LEN],
    const uint8_t cookie[IPC_COOKIE_LEN])
{
	header(msg, EXT_SELECT_LEN, EXT_SET, EXT_ID_SELECT);
	ipc_put16(msg + IPC_HEADER_LEN, EXT_VERSION);
	memcpy(msg + IPC_HEADER_LEN + 2, cookie, IPC_COOKIE_LEN);
}

/*
 * Parse a whole first message of set EXT_SET (len bytes, at least its
 * size).  Bytes after the fields we know belong to a later version and
 * are ignored.  Return -1 if it is malformed, of version 0 or of an id we
 * do not know.
 */
int
ext_request_parse(const uint8_t *buf, size_t len, struct ext_request *req)
{
	size_t	 size, need;

	memset(req, 0, sizeof(*req));
	if (len < IPC_HEADER_LEN || !ipc_magic_prefix(buf, IPC_MAGIC_LEN))
		return (-1);
	size = ipc_size(buf);
	if (size < IPC_HEADER_LEN || size > len ||
	    buf[IPC_SET_OFFSET] != EXT_SET ||
	    ipc_get16(buf + IPC_RESERVED_OFFSET) != 0)
		return (-1);
	switch (buf[IPC_ID_OFFSET]) {
	case EXT_ID_LIST:
		need = EXT_LIST_LEN;
		break;
	case EXT_ID_SELECT:
		need = EXT_SELECT_LEN;
		break;
	case EXT_ID_WARM:
		need = EXT_WARM_LEN;
		break;
	default:
		return (-1);
	}
	if (size < need || ipc_get16(buf + IPC_HEADER_LEN) == 0)
		return (-1);
	req->id = buf[IPC_ID_OFFSET];
	req->version = ipc_get16(buf + IPC_HEADER_LEN);
	if (req->id == EXT_ID_SELECT)
		memcpy(req->cookie, buf + IPC_HEADER_LEN + 2, IPC_COOKIE_LEN);
	return (0);
}

/* Write a string as its u16 length and bytes; return where it ends. */
static size_t
put_string(uint8_t *buf, size_t off, const char *s, size_t n)
{
	ipc_put16(buf + off, (uint16_t)n);
	memcpy(buf + off + 2, s, n);
	return (off + 2 + n);
}

/*
 * Build an ENTRY v1 for er into buf (len bytes).  The message must fit
 * both its u16 size and buf: the command line, the one field that can be
 * long, is cut at a UTF-8 character boundary until it does.  Return the
 * bytes written, or 0 if the entry does not fit even without a command
 * line.
 */
size_t
ext_entry_build(uint8_t *buf, size_t len, const struct ext_runtime *er)
{
	const char	*s[ENTRY_STRINGS];
	size_t		 n[ENTRY_STRINGS], max, total, off;
	int		 i;

	s[0] = er->app;
	n[0] = strnlen(er->app, sizeof(er->app));
	s[1] = er->cmdline;
	n[1] = strnlen(er->cmdline, sizeof(er->cmdline));
	s[2] = er->os;
	n[2] = strnlen(er->os, sizeof(er->os));
	s[3] = er->arch;
	n[3] = strnlen(er->arch, sizeof(er->arch));
	s[4] = er->version;
	n[4] = strnlen(er->version, sizeof(er->version));
	s[5] = er->where;
	n[5] = strnlen(er->where, sizeof(er->where));

	max = len < IPC_MESSAGE_MAX ? len : IPC_MESSAGE_MAX;
	total = IPC_HEADER_LEN + ENTRY_FIXED;
	for (i = 0; i < ENTRY_STRINGS; i++)
		total += 2 + n[i];
	if (total > max) {
		if (total - max > n[1])
			return (0);
		n[1] -= total - max;
		total = max;
		/* Back to the start of the character cut in two. */
		while (n[1] > 0 && ((uint8_t)s[1][n[1]] & 0xc0) == 0x80) {
			n[1]--;
			total--;
		}
	}

	header(buf, (uint16_t)total, EXT_SET, EXT_ID_ENTRY);
	off = IPC_HEADER_LEN;
	ipc_put16(buf + off, EXT_VERSION);
	memcpy(buf + off + 2, er->cookie, IPC_COOKIE_LEN);
	ipc_put64(buf + off + 2 + IPC_COOKIE_LEN, er->pid);
	buf[off + 2 + IPC_COOKIE_LEN + 8] = er->found;
	buf[off + 2 + IPC_COOKIE_LEN + 9] = er->hops;
	off += ENTRY_FIXED;
	for (i = 0; i < ENTRY_STRINGS; i++)
		off = put_string(buf, off, s[i], n[i]);
	return (off);
}

/* Build the END of a listing: an OK with our version and the count. */
void
ext_end_build(uint8_t msg[EXT_END_LEN], uint32_t count)
{
	header(msg, EXT_END_LEN, IPC_SET_SERVER, IPC_ID_OK);
	ipc_put16(msg + IPC_HEADER_LEN, EXT_VERSION);
	ipc_put32(msg + IPC_HEADER_LEN + 2, count);
}

/* Build WARM, offering the highest version we speak. */
void
ext_warm_request(uint8_t msg[EXT_WARM_LEN])
{
	header(msg, EXT_WARM_LEN, EXT_SET, EXT_ID_WARM);
	ipc_put16(msg + IPC_HEADER_LEN, EXT_VERSION);
}

/*
 * The answer to WARM: an OK with our version and how long, in ms, the
 * connection may wait for its tool's command (0: as long as it likes).
 */
void
ext_warm_answer_build(uint8_t msg[EXT_WARM_ANSWER_LEN], uint32_t keep_ms)
{
	header(msg, EXT_WARM_ANSWER_LEN, IPC_SET_SERVER, IPC_ID_OK);
	ipc_put16(msg + IPC_HEADER_LEN, EXT_VERSION);
	ipc_put32(msg + IPC_HEADER_LEN + 2, keep_ms);
}

/*
 * Read the answer to WARM from the len bytes at buf: return 0 while more
 * are needed, its size once whole with *keep_ms set, or -1 if it is no
 * such answer, with *hresult set (else 0) when it was an error frame (an
 * older router, or a runtime, that does not take WARM).
 */
int
ext_warm_answer_parse(const uint8_t *buf, size_t len, uint32_t *keep_ms,
    uint32_t *hresult)
{
	size_t	 size;

	*hresult = 0;
	if (len == 0)
		return (0);
	if (!ipc_magic_prefix(buf, len))
		return (-1);
	if (len < IPC_HEADER_LEN)
		return (0);
	size = ipc_size(buf);
	if (size < IPC_HEADER_LEN || buf[IPC_SET_OFFSET] != IPC_SET_SERVER ||
	    ipc_get16(buf + IPC_RESERVED_OFFSET) != 0)
		return (-1);
	if (buf[IPC_ID_OFFSET] == IPC_ID_ERROR) {
		if (size < IPC_HEADER_LEN + 4)
			return (-1);
		if (len < IPC_HEADER_LEN + 4)
			return (0);
		*hresult = ipc_get32(buf + IPC_HEADER_LEN);
		return (-1);
	}
	if (buf[IPC_ID_OFFSET] != IPC_ID_OK || size < EXT_WARM_ANSWER_LEN)
		return (-1);
	if (len < size)
		return (0);
	if (ipc_get16(buf + IPC_HEADER_LEN) == 0)
		return (-1);
	*keep_ms = ipc_get32(buf + IPC_HEADER_LEN + 2);
	return ((int)size);
}

/*
 * Copy n bytes of a peer's text into dst (size bytes, NUL-terminated), for
 * logs and terminals: each byte that is not part of well-formed UTF-8
 * becomes '?', and so does each control character (C0, DEL, C1) whole.
 * Text too long is cut before the first character that does not fit.
 */
void
ext_text(char *dst, size_t size, const uint8_t *p, size_t n)
{
	size_t	 i, k, o = 0;

	if (size == 0)
		return;
	for (i = 0; i < n; i += k) {
		if ((k = utf8_len(p + i, n - i)) == 0 ||
		    p[i] < 0x20 || p[i] == 0x7f ||
		    (p[i] == 0xc2 && p[i + 1] < 0xa0)) {
			if (o + 1 >= size)
				break;
			dst[o++] = '?';
			if (k == 0)
				k = 1;
			continue;
		}
		if (o + k >= size)
			break;
		memcpy(dst + o, p + i, k);
		o += k;
	}
	dst[o] = '\0';
}

/*
 * Read the string at *off, which must end no later than end, into dst
 * (size bytes) through ext_text().  Return -1 if it runs past end.
 */
static int
get_string(const uint8_t *buf, size_t end, size_t *off, char *dst,
    size_t size)
{
	size_t	 n;

	dst[0] = '\0';
	if (end - *off < 2)
		return (-1);
	n = ipc_get16(buf + *off);
	*off += 2;
	if (n > end - *off)
		return (-1);
	ext_text(dst, size, buf + *off, n);
	*off += n;
	return (0);
}

/* Parse the payload of an ENTRY of size bytes.  Return -1 if malformed. */
static int
entry_parse(const uint8_t *buf, size_t size, struct ext_runtime *er)
{
	size_t	 off = IPC_HEADER_LEN;

	if (size < IPC_HEADER_LEN + ENTRY_FIXED ||
	    ipc_get16(buf + off) == 0)
		return (-1);
	off += 2;
	memcpy(er->cookie, buf + off, IPC_COOKIE_LEN);
	off += IPC_COOKIE_LEN;
	er->pid = ipc_get64(buf + off);
	off += 8;
	er->found = buf[off++];
	er->hops = buf[off++];
	/* What follows the strings belongs to a later version. */
	if (get_string(buf, size, &off, er->app, sizeof(er->app)) == -1 ||
	    get_string(buf, size, &off, er->cmdline,
	    sizeof(er->cmdline)) == -1 ||
	    get_string(buf, size, &off, er->os, sizeof(er->os)) == -1 ||
	    get_string(buf, size, &off, er->arch, sizeof(er->arch)) == -1 ||
	    get_string(buf, size, &off, er->version,
	    sizeof(er->version)) == -1 ||
	    get_string(buf, size, &off, er->where, sizeof(er->where)) == -1)
		return (-1);
	return (0);
}

/*
 * Parse the first message of the len bytes of a LIST answer: an ENTRY
 * (into *er), the END (its count in *count), or an error frame (its
 * HRESULT in *hresult).  When the kind is not MORE, *used is the whole
 * message's length.  Only the message's own size bytes are read; a size
 * too small for what its version must carry is INVALID, as is any other
 * message.  *er is zeroed unless an ENTRY is returned.
 */
enum ext_reply_kind
ext_reply_parse(const uint8_t *buf, size_t len, size_t *used,
    struct ext_runtime *er, uint32_t *count, uint32_t *hresult)
{
	size_t	 size;
	uint8_t	 set, id;

	*used = 0;
	memset(er, 0, sizeof(*er));
	if (!ipc_magic_prefix(buf, len))
		return (EXT_REPLY_INVALID);
	if (len < IPC_HEADER_LEN)
		return (EXT_REPLY_MORE);
	size = ipc_size(buf);
	set = buf[IPC_SET_OFFSET];
	id = buf[IPC_ID_OFFSET];
	if (size < IPC_HEADER_LEN || ipc_get16(buf + IPC_RESERVED_OFFSET) != 0)
		return (EXT_REPLY_INVALID);
	if (set == EXT_SET && id == EXT_ID_ENTRY) {
		if (size < EXT_ENTRY_MIN)
			return (EXT_REPLY_INVALID);
	} else if (set == IPC_SET_SERVER && id == IPC_ID_OK) {
		if (size < EXT_END_LEN)
			return (EXT_REPLY_INVALID);
	} else if (set == IPC_SET_SERVER && id == IPC_ID_ERROR) {
		if (size < REPLY_PEEK)
			return (EXT_REPLY_INVALID);
	} else
		return (EXT_REPLY_INVALID);
	if (len < size)
		return (EXT_REPLY_MORE);

	if (set == EXT_SET) {
		if (entry_parse(buf, size, er) == -1) {
			memset(er, 0, sizeof(*er));
			return (EXT_REPLY_INVALID);
		}
		*used = size;
		return (EXT_REPLY_ENTRY);
	}
	if (id == IPC_ID_ERROR) {
		*hresult = ipc_get32(buf + IPC_HEADER_LEN);
		*used = size;
		return (EXT_REPLY_ERROR);
	}
	if (ipc_get16(buf + IPC_HEADER_LEN) == 0)
		return (EXT_REPLY_INVALID);
	*count = ipc_get32(buf + IPC_HEADER_LEN + 2);
	*used = size;
	return (EXT_REPLY_END);
}

/* The name of how a runtime was found, or NULL for one we do not know. */
const char *
ext_found_name(uint8_t found)
{
	switch (found) {
	case EXT_FOUND_ADVERTISE:
		return ("advertise");
	case EXT_FOUND_DIR:
		return ("dir");
	case EXT_FOUND_PROC:
		return ("proc");
	case EXT_FOUND_LINK:
		return ("link");
	}
	return (NULL);
}
