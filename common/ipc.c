/* SPDX-License-Identifier: ISC */

/*
 * The diagnostic IPC wire format: pure functions over byte buffers, no I/O,
 * so that the classifier can be unit tested and fuzzed on its own.
 */

#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <event2/buffer.h>

#include "common/ipc.h"

static const uint8_t ipc_magic[IPC_MAGIC_LEN] = "DOTNET_IPC_V1";
static const uint8_t advr_magic[ADVR_MAGIC_LEN] = "ADVR_V1";

static const struct {
	uint8_t		 set;
	uint8_t		 id;
	const char	*name;
} commands[] = {
	{ IPC_SET_DUMP, 0x01, "GenerateCoreDump" },
	{ IPC_SET_DUMP, 0x02, "GenerateCoreDump2" },
	{ IPC_SET_DUMP, 0x03, "GenerateCoreDump3" },
	{ IPC_SET_EVENTPIPE, 0x01, "StopTracing" },
	{ IPC_SET_EVENTPIPE, 0x02, "CollectTracing" },
	{ IPC_SET_EVENTPIPE, 0x03, "CollectTracing2" },
	{ IPC_SET_EVENTPIPE, 0x04, "CollectTracing3" },
	{ IPC_SET_EVENTPIPE, 0x05, "CollectTracing4" },
	{ IPC_SET_EVENTPIPE, 0x06, "CollectTracing5" },
	{ IPC_SET_EVENTPIPE, 0x07, "CollectTracing6" },
	{ IPC_SET_PROFILER, 0x01, "AttachProfiler" },
	{ IPC_SET_PROFILER, 0x02, "StartupProfiler" },
	{ IPC_SET_PROCESS, 0x00, "ProcessInfo" },
	{ IPC_SET_PROCESS, 0x01, "ResumeRuntime" },
	{ IPC_SET_PROCESS, 0x02, "ProcessEnvironment" },
	{ IPC_SET_PROCESS, 0x03, "SetEnvironmentVariable" },
	{ IPC_SET_PROCESS, 0x04, "ProcessInfo2" },
	{ IPC_SET_PROCESS, 0x05, "EnablePerfMap" },
	{ IPC_SET_PROCESS, 0x06, "DisablePerfMap" },
	{ IPC_SET_PROCESS, 0x07, "ApplyStartupHook" },
	{ IPC_SET_PROCESS, 0x08, "ProcessInfo3" },
	/* dsroute's own, between routers (docs/extension.md). */
	{ IPC_SET_DSROUTE, 0x01, "ListRuntimes" },
	{ IPC_SET_DSROUTE, 0x02, "SelectRuntime" },
	{ IPC_SET_DSROUTE, 0x04, "WarmConnection" },
};

static uint16_t
le16(const uint8_t *p)
{
	return ((uint16_t)(p[0] | p[1] << 8));
}

static uint32_t
le32(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 |
	    (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

static uint64_t
le64(const uint8_t *p)
{
	return ((uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32);
}

static void
put16(uint8_t *p, uint16_t v)
{
	p[0] = v & 0xff;
	p[1] = v >> 8;
}

static void
put32(uint8_t *p, uint32_t v)
{
	put16(p, v & 0xffff);
	put16(p + 2, v >> 16);
}

static void
put64(uint8_t *p, uint64_t v)
{
	put32(p, v & 0xffffffff);
	put32(p + 4, v >> 32);
}

/* Return non-zero if the first len bytes of buf are a prefix of magic. */
static int
prefix_of(const uint8_t *buf, size_t len, const uint8_t *magic, size_t mlen)
{
	return (memcmp(buf, magic, len < mlen ? len : mlen) == 0);
}

/*
 * Classify the first bytes a connection sent.  A runtime announces itself
 * with ADVR_V1; a tool sends a command.  Anything else, and any header the
 * runtime could misread, is invalid.  The runtime itself checks neither
 * reserved nor the command set; being stricter than it is safe because no
 * real client sends either.  Only the first GREETING_PEEK bytes of buf are
 * read; len says how many have arrived in all.
 */
void
ipc_classify(const uint8_t *buf, size_t len, struct greeting *g)
{
	memset(g, 0, sizeof(*g));
	g->kind = GREETING_MORE;

	if (len > 0 && prefix_of(buf, len, advr_magic, ADVR_MAGIC_LEN)) {
		g->need = ADVR_LEN;
		if (len < ADVR_LEN)
			return;
		memcpy(g->advertise.cookie, buf + ADVR_MAGIC_LEN,
		    IPC_COOKIE_LEN);
		g->advertise.pid = le64(buf + ADVR_MAGIC_LEN + IPC_COOKIE_LEN);
		g->kind = GREETING_ADVERTISE;
		return;
	}
	if (!prefix_of(buf, len, ipc_magic, IPC_MAGIC_LEN)) {
		/* The runtime answers a wrong magic so; so do we. */
		g->kind = GREETING_INVALID;
		g->error = "not a diagnostic IPC message or advertise";
		g->hresult = HRESULT_UNKNOWN_MAGIC;
		return;
	}

	g->need = IPC_HEADER_LEN;
	if (len < IPC_HEADER_LEN)
		return;
	g->header.size = ipc_size(buf);
	g->header.set = buf[IPC_SET_OFFSET];
	g->header.id = buf[IPC_ID_OFFSET];
	g->header.reserved = le16(buf + IPC_RESERVED_OFFSET);
	if (g->header.size < IPC_HEADER_LEN) {
		g->kind = GREETING_INVALID;
		g->error = "header size below 20";
		g->hresult = HRESULT_BAD_ENCODING;
		return;
	}
	if (g->header.reserved != 0) {
		g->kind = GREETING_INVALID;
		g->error = "reserved header field not zero";
		g->hresult = HRESULT_BAD_ENCODING;
		return;
	}
	if (g->header.set == IPC_SET_SERVER) {
		g->kind = GREETING_INVALID;
		g->error = "a client sent a server response";
		g->hresult = HRESULT_BAD_ENCODING;
		return;
	}
	g->need = g->header.size;
	if (len < g->need)
		return;
	g->kind = GREETING_COMMAND;
}

/*
 * Classify the bytes collected in an evbuffer, which may span several
 * chains: only the part ipc_classify reads is made contiguous.  Return -1
 * if out of memory.
 */
int
ipc_classify_buffer(struct evbuffer *buf, struct greeting *g)
{
	size_t		 len = evbuffer_get_length(buf);
	const uint8_t	*data;

	data = evbuffer_pullup(buf, len < GREETING_PEEK ? len : GREETING_PEEK);
	if (data == NULL && len > 0)
		return (-1);
	ipc_classify(data, len, g);
	return (0);
}

/* Return the name of a command, or NULL if the protocol does not know it. */
const char *
ipc_command_name(uint8_t set, uint8_t id)
{
	size_t	 i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (commands[i].set == set && commands[i].id == id)
			return (commands[i].name);
	}
	return (NULL);
}

/* Return the name of the i-th command the protocol defines, or NULL. */
const char *
ipc_command_name_at(size_t i)
{
	if (i >= sizeof(commands) / sizeof(commands[0]))
		return (NULL);
	return (commands[i].name);
}

/* Write a command's name, or its numbers when it is unknown, into buf. */
void
ipc_command_label(uint8_t set, uint8_t id, char *buf, size_t len)
{
	const char	*name;

	if ((name = ipc_command_name(set, id)) != NULL)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "unknown(0x%02x,0x%02x)", set, id);
}

/* Build the 24-byte error frame the runtime sends: set 0xFF, id 0xFF. */
void
ipc_error_frame(uint8_t frame[24], uint32_t hresult)
{
	memcpy(frame, ipc_magic, IPC_MAGIC_LEN);
	put16(frame + IPC_SIZE_OFFSET, 24);
	frame[IPC_SET_OFFSET] = IPC_SET_SERVER;
	frame[IPC_ID_OFFSET] = IPC_ID_ERROR;
	put16(frame + IPC_RESERVED_OFFSET, 0);
	put32(frame + 20, hresult);
}

/* The 24-byte OK of a command with no payload to answer: an i32 0. */
void
ipc_ok_frame(uint8_t frame[24])
{
	ipc_error_frame(frame, 0);
	frame[IPC_ID_OFFSET] = IPC_ID_OK;
}

/*
 * Classify the first len bytes of a reply to a command.  Only its header
 * is read: an OK needs 20 bytes, an error frame 24, with its HRESULT put
 * in *hresult.  A reply that is not one of ours (a runtime streams no
 * header after some commands' OK) is REPLY_OTHER.
 */
enum reply_kind
ipc_reply_classify(const uint8_t *buf, size_t len, uint32_t *hresult)
{
	size_t	 n = len < IPC_MAGIC_LEN ? len : IPC_MAGIC_LEN;

	if (memcmp(buf, ipc_magic, n) != 0)
		return (REPLY_OTHER);
	if (len < IPC_HEADER_LEN)
		return (REPLY_MORE);
	if (buf[IPC_SET_OFFSET] != IPC_SET_SERVER ||
	    ipc_size(buf) < IPC_HEADER_LEN)
		return (REPLY_OTHER);
	if (buf[IPC_ID_OFFSET] == IPC_ID_OK)
		return (REPLY_OK);
	if (buf[IPC_ID_OFFSET] != IPC_ID_ERROR || ipc_size(buf) < REPLY_PEEK)
		return (REPLY_OTHER);
	if (len < REPLY_PEEK)
		return (REPLY_MORE);
	*hresult = le32(buf + 20);
	return (REPLY_ERROR);
}

/* What an HRESULT of the protocol means, or NULL for another. */
const char *
ipc_hresult_name(uint32_t hresult)
{
	switch (hresult) {
	case HRESULT_ACCESS_DENIED:
		return ("access denied");
	case HRESULT_BAD_ENCODING:
		return ("bad encoding");
	case HRESULT_UNKNOWN_COMMAND:
		return ("unknown command");
	case HRESULT_UNKNOWN_MAGIC:
		return ("unknown magic");
	case HRESULT_FILE_NOT_FOUND:
		return ("file not found: no runtime's socket there");
	case HRESULT_CONN_REFUSED:
		return ("connection refused: no runtime listens there");
	case HRESULT_BUSY:
		return ("busy: a router's session cap for the runtime");
	case HRESULT_TIMEOUT:
		return ("timeout: no runtime came to a router within its wait");
	case HRESULT_CONN_TIMEOUT:
		return ("connect timed out: a router could not reach the next "
		    "hop");
	case HRESULT_TLS_FAILED:
		return ("TLS handshake failed between two routers; the one "
		    "that dialled logs why");
	}
	return (NULL);
}

/* Build a command with no payload, such as ProcessInfo. */
void
ipc_request(uint8_t msg[IPC_HEADER_LEN], uint8_t set, uint8_t id)
{
	memcpy(msg, ipc_magic, IPC_MAGIC_LEN);
	put16(msg + IPC_SIZE_OFFSET, IPC_HEADER_LEN);
	msg[IPC_SET_OFFSET] = set;
	msg[IPC_ID_OFFSET] = id;
	put16(msg + IPC_RESERVED_OFFSET, 0);
}

/* Build the advertise a runtime sends on each connection it opens. */
void
ipc_advertise_build(uint8_t msg[ADVR_LEN], const struct advertise *adv)
{
	memcpy(msg, advr_magic, ADVR_MAGIC_LEN);
	memcpy(msg + ADVR_MAGIC_LEN, adv->cookie, IPC_COOKIE_LEN);
	put64(msg + ADVR_MAGIC_LEN + IPC_COOKIE_LEN, adv->pid);
	put16(msg + ADVR_LEN - 2, 0);
}

/*
 * Check the header of a complete reply: the magic, the server set, and a
 * size of at least a header but no more than len, in *size.  Return 0 for
 * an OK, 1 for an error frame (its HRESULT in *hresult), -1 when the
 * bytes are not a reply at all.
 */
static int
reply_header(const uint8_t *buf, size_t len, size_t *size, uint32_t *hresult)
{
	if (len < IPC_HEADER_LEN || memcmp(buf, ipc_magic, IPC_MAGIC_LEN) != 0)
		return (-1);
	*size = ipc_size(buf);
	if (*size < IPC_HEADER_LEN || *size > len ||
	    buf[IPC_SET_OFFSET] != IPC_SET_SERVER)
		return (-1);
	if (buf[IPC_ID_OFFSET] == IPC_ID_ERROR) {
		if (*size < 24)
			return (-1);
		*hresult = le32(buf + 20);
		return (1);
	}
	if (buf[IPC_ID_OFFSET] != IPC_ID_OK)
		return (-1);
	return (0);
}

/*
 * Who a ProcessInfo, ProcessInfo2 or ProcessInfo3 reply (v3: its u32
 * version first) says it is, for a router that keeps the reply to check
 * it against the runtime it came from: the reply must be whole, its
 * header's size len exactly.  Return 0 for an OK, with its pid and
 * cookie; 1 for an error frame, with its HRESULT; -1 otherwise.
 */
int
ipc_info_reply_id(const uint8_t *buf, size_t len, int v3, uint64_t *pid,
    uint8_t cookie[IPC_COOKIE_LEN], uint32_t *hresult)
{
	size_t	 size, off = IPC_HEADER_LEN + (v3 ? 4 : 0);
	int	 rv;

	if ((rv = reply_header(buf, len, &size, hresult)) == -1 ||
	    size != len)
		return (-1);
	if (rv == 1)
		return (size == 24 ? 1 : -1);
	if (size < off + 8 + IPC_COOKIE_LEN)
		return (-1);
	*pid = le64(buf + off);
	memcpy(cookie, buf + off + 8, IPC_COOKIE_LEN);
	return (0);
}

/* Take n bytes of what is left at *off, or say there are not so many. */
static int
skip(size_t len, size_t *off, uint64_t n)
{
	if (n > len - *off)
		return (-1);
	*off += (size_t)n;
	return (0);
}

/* Skip a string: a u32 count of UTF-16 units, then 2 bytes each. */
static int
skip_string(const uint8_t *p, size_t len, size_t *off)
{
	uint64_t	 count;

	if (len - *off < 4)
		return (-1);
	count = ipc_get32(p + *off);
	*off += 4;
	return (skip(len, off, 2 * count));
}

/*
 * Find the sessionBufferMode of a CollectTracing6 payload (plen bytes
 * after the header), which a streaming session has last, after its
 * providers (documentation/design-docs/ipc-protocol.md of
 * dotnet/diagnostics, and its client's SerializeV6): u32 session_type
 * (0), u32 circularBufferMB, u32 format, u64 rundownKeyword, bool
 * requestStackwalk, then array<provider> of u64 keywords, u32 logLevel,
 * string name, string arguments and an event filter (bool enable,
 * array<u32> ids), then u32 sessionBufferMode: 0 Drop, 1 Block.  Return
 * 1 with the mode in *mode, 0 for a user_events session (which has no
 * mode), -1 if the payload ends before the mode.  Never reads past plen.
 */
int
ipc_collect6_buffer_mode(const uint8_t *p, size_t plen, uint32_t *mode)
{
	uint64_t	 n, i, ids;
	size_t		 off = 0;

	if (plen < 4)
		return (-1);
	if (ipc_get32(p) != 0)
		return (0);
	off = 4;
	if (skip(plen, &off, 4 + 4 + 8 + 1) == -1 || plen - off < 4)
		return (-1);
	n = ipc_get32(p + off);
	off += 4;
	for (i = 0; i < n; i++) {
		if (skip(plen, &off, 8 + 4) == -1 ||
		    skip_string(p, plen, &off) == -1 ||
		    skip_string(p, plen, &off) == -1 ||
		    skip(plen, &off, 1) == -1 || plen - off < 4)
			return (-1);
		ids = ipc_get32(p + off);
		off += 4;
		if (skip(plen, &off, 4 * ids) == -1)
			return (-1);
	}
	if (plen - off < 4)
		return (-1);
	*mode = ipc_get32(p + off);
	return (1);
}

/*
 * Parse a complete ProcessInfo reply: u64 pid, then the 16-byte cookie.
 * Return 0 on success, 1 for an error frame (its HRESULT in *hresult), -1
 * when the bytes are not a reply at all.
 */
int
ipc_processinfo_parse(const uint8_t *buf, size_t len, struct advertise *adv,
    uint32_t *hresult)
{
	size_t	 size;
	int	 rv;

	if ((rv = reply_header(buf, len, &size, hresult)) != 0)
		return (rv);
	if (size < IPC_HEADER_LEN + 8 + IPC_COOKIE_LEN)
		return (-1);
	adv->pid = le64(buf + 20);
	memcpy(adv->cookie, buf + 28, IPC_COOKIE_LEN);
	return (0);
}

/* Write cp as UTF-8 into out; return how many bytes it took. */
static size_t
utf8_encode(uint32_t cp, uint8_t out[4])
{
	if (cp < 0x80) {
		out[0] = cp;
		return (1);
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | cp >> 6;
		out[1] = 0x80 | (cp & 0x3f);
		return (2);
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | cp >> 12;
		out[1] = 0x80 | (cp >> 6 & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return (3);
	}
	out[0] = 0xf0 | cp >> 18;
	out[1] = 0x80 | (cp >> 12 & 0x3f);
	out[2] = 0x80 | (cp >> 6 & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return (4);
}

/*
 * Read the protocol string at *off, which ends no later than end: a u32
 * count of UTF-16LE units, the terminating NUL included (0 for none), then
 * the units.  *off moves past it.  Its text goes into dst as UTF-8 for logs
 * and process names, so the peer can put no control byte there: an
 * unpaired surrogate and a control character (C0, DEL and C1) become '?'.
 * An embedded NUL ends the text; text too long for dst is cut before the
 * first character that does not fit.  Return -1 if the count runs past
 * end or the last unit is not a NUL.
 */
static int
get_string(const uint8_t *buf, size_t end, size_t *off, char *dst,
    size_t size)
{
	const uint8_t	*p;
	uint32_t	 count, cp, lo;
	size_t		 i, n, o = 0;
	uint8_t		 enc[4];

	dst[0] = '\0';
	if (end - *off < 4)
		return (-1);
	count = le32(buf + *off);
	*off += 4;
	if (count == 0)
		return (0);
	if (count > (end - *off) / 2)
		return (-1);
	p = buf + *off;
	*off += (size_t)count * 2;
	if (le16(p + 2 * ((size_t)count - 1)) != 0)
		return (-1);
	for (i = 0; i + 1 < count; i++) {
		if ((cp = le16(p + 2 * i)) == 0)
			break;
		if (cp >= 0xd800 && cp <= 0xdbff && i + 2 < count &&
		    (lo = le16(p + 2 * i + 2)) >= 0xdc00 && lo <= 0xdfff) {
			cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
			i++;
		} else if ((cp >= 0xd800 && cp <= 0xdfff) || cp < 0x20 ||
		    (cp >= 0x7f && cp < 0xa0))
			cp = '?';
		n = utf8_encode(cp, enc);
		if (o + n >= size)
			break;
		memcpy(dst + o, enc, n);
		o += n;
	}
	dst[o] = '\0';
	return (0);
}

/*
 * Parse a whole ProcessInfo reply, or with v2 non-zero a ProcessInfo2
 * reply: u64 pid, the 16-byte cookie, then the command line, OS and
 * architecture, and for ProcessInfo2 the entry assembly and the runtime
 * version, as protocol strings.  Only the header's size bytes are read,
 * which may be fewer than len; the strings must fill them exactly, so the
 * wrong layout is not taken for the right one.  Return 0 on success, 1
 * for an error frame (its HRESULT in *hresult), -1 when malformed.  *pi
 * is zeroed unless 0 is returned.
 */
int
ipc_process_info_parse(const uint8_t *buf, size_t len, int v2,
    struct process_info *pi, uint32_t *hresult)
{
	size_t	 size, off;
	int	 rv;

	memset(pi, 0, sizeof(*pi));
	if ((rv = reply_header(buf, len, &size, hresult)) != 0)
		return (rv);
	off = IPC_HEADER_LEN + 8 + IPC_COOKIE_LEN;
	if (size < off)
		return (-1);
	pi->pid = le64(buf + IPC_HEADER_LEN);
	memcpy(pi->cookie, buf + IPC_HEADER_LEN + 8, IPC_COOKIE_LEN);
	if (get_string(buf, size, &off, pi->cmdline,
	    sizeof(pi->cmdline)) == -1 ||
	    get_string(buf, size, &off, pi->os, sizeof(pi->os)) == -1 ||
	    get_string(buf, size, &off, pi->arch, sizeof(pi->arch)) == -1 ||
	    (v2 && get_string(buf, size, &off, pi->assembly,
	    sizeof(pi->assembly)) == -1) ||
	    (v2 && get_string(buf, size, &off, pi->version,
	    sizeof(pi->version)) == -1) ||
	    off != size) {
		memset(pi, 0, sizeof(*pi));
		return (-1);
	}
	return (0);
}

/*
 * Find the next word of a command line after *p: words are split on
 * spaces, and one that starts with a double quote runs to the next (a
 * path with spaces).  Set *word and *n to it, quotes left out, and move *p
 * past it.  Return 0 when there are no more.
 */
static int
next_word(const char **p, const char **word, size_t *n)
{
	const char	*s = *p, *e;

	while (*s == ' ')
		s++;
	if (*s == '\0')
		return (0);
	if (*s == '"') {
		s++;
		e = s + strcspn(s, "\"");
		*p = *e == '"' ? e + 1 : e;
	} else {
		e = s + strcspn(s, " ");
		*p = e;
	}
	*word = s;
	*n = e - s;
	return (1);
}

/* Trim a word to its last path component (either separator). */
static void
word_base(const char **word, size_t *n)
{
	size_t	 i;

	for (i = *n; i > 0; i--) {
		if ((*word)[i - 1] == '/' || (*word)[i - 1] == '\\')
			break;
	}
	*word += i;
	*n -= i;
}

/* Return non-zero if a word of n bytes ends with suffix, in any case. */
static int
word_ends(const char *word, size_t n, const char *suffix)
{
	size_t	 slen = strlen(suffix);

	return (n >= slen && strncasecmp(word + n - slen, suffix, slen) == 0);
}

/*
 * Write a name for the app into buf, for people and for process names:
 * the entry assembly if known, else the file name of the command line's
 * first word without ".dll" or ".exe".  When that is the dotnet host
 * ("dotnet app.dll", "dotnet exec ... app.dll"), the app is the first
 * later word ending in ".dll", and the name stays "dotnet" if there is
 * none.  Only [A-Za-z0-9._+-] is kept, one '_' standing for anything else
 * (a whole UTF-8 character); the name never starts with '-' or '.', so it
 * is never taken for an option or a hidden file, and is never empty,
 * "dotnet" standing in.  It is cut to len - 1 bytes.
 */
void
ipc_process_info_name(const struct process_info *pi, char *buf, size_t len)
{
	const char	*src, *p, *w;
	size_t		 n, wn, i, o = 0;
	unsigned char	 c;

	if (len == 0)
		return;
	src = "";
	n = 0;
	if (pi->assembly[0] != '\0') {
		src = pi->assembly;
		n = strnlen(src, sizeof(pi->assembly));
	} else {
		p = pi->cmdline;
		if (next_word(&p, &src, &n)) {
			word_base(&src, &n);
			if (word_ends(src, n, ".exe"))
				n -= 4;
			if (n == 6 && strncasecmp(src, "dotnet", 6) == 0) {
				while (next_word(&p, &w, &wn)) {
					if (word_ends(w, wn, ".dll")) {
						src = w;
						n = wn;
						word_base(&src, &n);
						break;
					}
				}
			}
			if (word_ends(src, n, ".dll") ||
			    word_ends(src, n, ".exe"))
				n -= 4;
		}
	}
	for (i = 0; i < n && src[i] != '\0' && o + 1 < len; i++) {
		c = src[i];
		if ((c & 0xc0) == 0x80)
			continue;	/* the rest of a UTF-8 character */
		if (!(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') &&
		    !(c >= '0' && c <= '9') && c != '.' && c != '_' &&
		    c != '+' && c != '-')
			c = '_';
		if (o == 0 && (c == '-' || c == '.'))
			c = '_';
		buf[o++] = c;
	}
	buf[o] = '\0';
	if (o == 0)
		snprintf(buf, len, "dotnet");
}

/* Format a cookie as the 32 hex digits of its bytes, in wire order. */
void
ipc_cookie_hex(const uint8_t cookie[IPC_COOKIE_LEN], char hex[33])
{
	static const char	 digits[] = "0123456789abcdef";
	int			 i;

	for (i = 0; i < IPC_COOKIE_LEN; i++) {
		hex[2 * i] = digits[cookie[i] >> 4];
		hex[2 * i + 1] = digits[cookie[i] & 0xf];
	}
	hex[32] = '\0';
}

/*
 * If path names a runtime's default diagnostic port,
 * dotnet-diagnostic-<pid>-<key>-socket, or with routers non-zero also a
 * router's, dotnet-diagnostic-dsrouter-<pid>-<key>-socket, fill name and
 * return 1.  The key is the start time of the process: clock ticks after
 * boot for a runtime on Linux, seconds since 1970 for a runtime on macOS
 * and for dotnet-dsrouter.
 */
int
ipc_default_socket_parse(const char *path, int routers,
    struct default_name *name)
{
	const char		*file, *p;
	char			*end;
	long			 v;
	unsigned long long	 key;

	file = (p = strrchr(path, '/')) != NULL ? p + 1 : path;
	if (strncmp(file, "dotnet-diagnostic-", 18) != 0)
		return (0);
	p = file + 18;
	name->router = 0;
	if (routers && strncmp(p, "dsrouter-", 9) == 0) {
		p += 9;
		name->router = 1;
	}
	if (*p < '1' || *p > '9')
		return (0);
	errno = 0;
	v = strtol(p, &end, 10);
	if (*end != '-' || errno != 0 || v > INT32_MAX)
		return (0);
	p = end + 1;
	if (*p < '0' || *p > '9')
		return (0);
	key = strtoull(p, &end, 10);
	if (errno != 0 || strcmp(end, "-socket") != 0)
		return (0);
	name->pid = v;
	name->key = key;
	return (1);
}

/*
 * Whether a process that started at starttime (the runtime's key: what
 * proc_info_get() says) and start_epoch (the same in seconds since 1970,
 * 0 if unknown) is the one the default socket name dn gives.  A
 * router's key may be dotnet-dsrouter's, seconds since 1970, whose
 * rounding we do not know to the second.
 */
int
ipc_default_key_matches(const struct default_name *dn, uint64_t starttime,
    uint64_t start_epoch)
{
	if (dn->key == starttime)
		return (1);
	return (dn->router && start_epoch != 0 &&
	    dn->key + 1 >= start_epoch && dn->key <= start_epoch + 1);
}

/*
 * If name, a pipe's, NAME or \\.\pipe\NAME, is a runtime's default
 * diagnostic port on Windows, dotnet-diagnostic-<pid>, or with routers
 * non-zero also a router's, dotnet-diagnostic-dsrouter-<pid>, fill dn
 * (its key is 0: the name has none) and return 1.  Windows compares the
 * names of pipes without case, so this does too.
 */
int
ipc_default_pipe_parse(const char *name, int routers, struct default_name *dn)
{
	const char	*p = name;
	char		*end;
	long		 v;

	if (strncasecmp(p, "\\\\.\\pipe\\", 9) == 0)
		p += 9;
	if (strncasecmp(p, "dotnet-diagnostic-", 18) != 0)
		return (0);
	p += 18;
	dn->router = 0;
	if (routers && strncasecmp(p, "dsrouter-", 9) == 0) {
		p += 9;
		dn->router = 1;
	}
	if (*p < '1' || *p > '9')
		return (0);
	errno = 0;
	v = strtol(p, &end, 10);
	if (*end != '\0' || errno != 0 || v > INT32_MAX)
		return (0);
	dn->pid = v;
	dn->key = 0;
	return (1);
}

/*
 * Whether Windows opens the pipe NAME (after \\.\pipe\) as it is
 * written.  It makes a path of it first: a "." part goes, a ".." part
 * takes the one before it along, dots and spaces at the end go, so that
 * dotnet-diagnostic-12. is the pipe dotnet-diagnostic-12 (wine does the
 * same).  A name with a part that ends in a dot or a space, or an empty
 * part (no pipe needs one), is not plain: refused, so that the name
 * dsroute checks (ipc_default_pipe_parse) is the pipe it opens.
 */
int
ipc_pipe_name_plain(const char *name)
{
	const char	*part = name, *end;
	size_t		 n;

	for (;;) {
		if ((end = strchr(part, '\\')) == NULL)
			end = part + strlen(part);
		n = (size_t)(end - part);
		if (n == 0 || part[n - 1] == '.' || part[n - 1] == ' ')
			return (0);	/* and so "." and ".." */
		if (*end == '\0')
			return (1);
		part = end + 1;
	}
}

/* Read a little-endian u32, as payload fields are. */
uint32_t
ipc_get32(const uint8_t *p)
{
	return (le32(p));
}

/* The little-endian integers of the wire, for the other codecs (ext.c). */
uint16_t
ipc_get16(const uint8_t *p)
{
	return (le16(p));
}

uint64_t
ipc_get64(const uint8_t *p)
{
	return (le64(p));
}

void
ipc_put16(uint8_t *p, uint16_t v)
{
	put16(p, v);
}

void
ipc_put32(uint8_t *p, uint32_t v)
{
	put32(p, v);
}

void
ipc_put64(uint8_t *p, uint64_t v)
{
	put64(p, v);
}

/* Return non-zero if the first len bytes of buf could start a message. */
int
ipc_magic_prefix(const uint8_t *buf, size_t len)
{
	return (prefix_of(buf, len, ipc_magic, IPC_MAGIC_LEN));
}

/* The size field of the header at p, IPC_HEADER_LEN bytes there. */
size_t
ipc_size(const uint8_t *p)
{
	return (le16(p + IPC_SIZE_OFFSET));
}
