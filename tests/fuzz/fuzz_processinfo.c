/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the ProcessInfo and ProcessInfo2 parser and the app's name made
 * from it.  The input is
 *
 *	flags		bit 0: parse as ProcessInfo2; bits 1-7: the size of
 *			a small name buffer, 2 to 129
 *	bytes...	a reply, header included, to the end
 *
 * The harness asserts, independently of ipc.c:
 * - the parser reads no byte past the reply's length (ASan, on an exact
 *   copy), and none past its header's size: the same reply cut to that
 *   size parses the same;
 * - on success every string is NUL-terminated in its field, valid UTF-8
 *   (shortest form, no surrogates, nothing past U+10FFFF) with no byte
 *   below 0x20 nor 0x7f, and the pid and cookie are the reply's bytes;
 *   on an error frame, the HRESULT is;
 * - the same input parses the same twice;
 * - the name, in a buffer of any size from 2, is non-empty, of
 *   [A-Za-z0-9._+-] only, and starts with neither '-' nor '.'; the same
 *   holds for a struct filled with raw bytes the parser never saw;
 * - ipc_info_reply_id(), which a router uses to keep a reply byte for
 *   byte (bit 1 of flags: as ProcessInfo3), takes only a whole reply whose
 *   header's size is its length, and gives the pid and cookie at their
 *   offsets, or the error frame's HRESULT of a 24-byte error; where the
 *   ProcessInfo parser takes the same whole reply, both give one pid
 *   and one cookie.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "common/ipc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* Abort unless s, of at most size bytes, ends with a NUL and is clean. */
static void
check_string(const char *s, size_t size)
{
	const unsigned char	*p = (const unsigned char *)s;
	const unsigned char	*end;
	unsigned int		 cp, min, n, i;

	if ((end = memchr(p, '\0', size)) == NULL)
		abort();
	while (p < end) {
		if (*p < 0x20 || *p == 0x7f)
			abort();
		if (*p < 0x80) {
			p++;
			continue;
		}
		if (*p >= 0xc2 && *p <= 0xdf) {
			n = 1;
			cp = *p & 0x1f;
			min = 0x80;
		} else if (*p >= 0xe0 && *p <= 0xef) {
			n = 2;
			cp = *p & 0x0f;
			min = 0x800;
		} else if (*p >= 0xf0 && *p <= 0xf4) {
			n = 3;
			cp = *p & 0x07;
			min = 0x10000;
		} else
			abort();	/* a stray continuation or 0xf5.. */
		if ((size_t)(end - p) <= n)
			abort();	/* cut inside a character */
		for (i = 1; i <= n; i++) {
			if ((p[i] & 0xc0) != 0x80)
				abort();
			cp = cp << 6 | (p[i] & 0x3f);
		}
		if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			abort();
		p += n + 1;
	}
}

/* Abort unless name is a name ipc_process_info_name may give. */
static void
check_name(const char *name, size_t size)
{
	size_t	 i;
	char	 c;

	if (memchr(name, '\0', size) == NULL || name[0] == '\0' ||
	    name[0] == '-' || name[0] == '.')
		abort();
	for (i = 0; (c = name[i]) != '\0'; i++) {
		if (!(c >= 'A' && c <= 'Z') && !(c >= 'a' && c <= 'z') &&
		    !(c >= '0' && c <= '9') && c != '.' && c != '_' &&
		    c != '+' && c != '-')
			abort();
	}
}

/* Check the name in a buffer of size bytes and in a large one. */
static void
check_names(const struct process_info *pi, size_t size)
{
	char	 small[130], large[512];

	memset(small, 'x', sizeof(small));
	ipc_process_info_name(pi, small, size);
	check_name(small, size);
	ipc_process_info_name(pi, large, sizeof(large));
	check_name(large, sizeof(large));
	if (strlen(small) != (strlen(large) < size - 1 ? strlen(large) :
	    size - 1) || strncmp(small, large, size - 1) != 0)
		abort();		/* a small buffer cuts, nothing else */
}

/* Fill a string field from raw bytes, NUL-terminated, as a caller may. */
static void
raw_field(char *dst, size_t size, const uint8_t *data, size_t len,
    size_t *off)
{
	size_t	 n = len - *off < size - 1 ? len - *off : size - 1;

	memcpy(dst, data + *off, n);
	dst[n] = '\0';
	*off += n;
}

static uint64_t
le64_at(const uint8_t *p)
{
	uint64_t	 v = 0;
	int		 i;

	for (i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return (v);
}

/*
 * ipc_info_reply_id() on the reply buf (len bytes), as ProcessInfo3 if
 * v3; rv and pi are what ipc_process_info_parse() made of the same.
 */
static void
check_reply_id(const uint8_t *buf, size_t len, int v3, int rv,
    const struct process_info *pi)
{
	uint8_t		 cookie[IPC_COOKIE_LEN];
	uint64_t	 pid = 0;
	uint32_t	 hresult = 0;
	size_t		 off = IPC_HEADER_LEN + (v3 ? 4 : 0);
	int		 id;

	id = ipc_info_reply_id(buf, len, v3, &pid, cookie, &hresult);
	if (id < -1 || id > 1)
		abort();
	if (id != -1 && (len < IPC_HEADER_LEN ||
	    (size_t)(buf[14] | buf[15] << 8) != len ||
	    memcmp(buf, "DOTNET_IPC_V1", IPC_MAGIC_LEN) != 0 ||
	    buf[16] != 0xff))
		abort();	/* only a whole reply */
	if (id == 0 && (buf[17] != 0x00 || len < off + 8 + IPC_COOKIE_LEN ||
	    pid != le64_at(buf + off) ||
	    memcmp(cookie, buf + off + 8, IPC_COOKIE_LEN) != 0))
		abort();
	if (id == 1 && (buf[17] != 0xff || len != 24 || hresult !=
	    (uint32_t)(buf[20] | buf[21] << 8 | buf[22] << 16 |
	    (uint32_t)buf[23] << 24)))
		abort();
	if (!v3 && rv == 0 && (size_t)(buf[14] | buf[15] << 8) == len &&
	    (id != 0 || pid != pi->pid ||
	    memcmp(cookie, pi->cookie, IPC_COOKIE_LEN) != 0))
		abort();	/* one reply, one runtime */
}

int
LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	struct process_info	 pi, again, cut, raw;
	uint32_t		 hresult = 0, hresult2 = 0, hresult3 = 0;
	uint8_t			*buf, *copy;
	size_t			 len, namelen, hsize, off;
	int			 v2, rv, rv2, rv3;

	if (size < 1)
		return (0);
	v2 = input[0] & 1;
	namelen = 2 + (input[0] >> 1);
	len = size - 1;

	/* An exact copy, so that a read past len is ASan's to see. */
	if ((buf = malloc(len == 0 ? 1 : len)) == NULL)
		abort();
	memcpy(buf, input + 1, len);

	rv = ipc_process_info_parse(buf, len, v2, &pi, &hresult);
	if (rv < -1 || rv > 1)
		abort();
	if (rv == 0) {
		check_string(pi.cmdline, sizeof(pi.cmdline));
		check_string(pi.os, sizeof(pi.os));
		check_string(pi.arch, sizeof(pi.arch));
		check_string(pi.assembly, sizeof(pi.assembly));
		check_string(pi.version, sizeof(pi.version));
		if (len < IPC_HEADER_LEN + 8 + IPC_COOKIE_LEN ||
		    buf[16] != 0xff || buf[17] != 0x00 ||
		    (pi.pid & 0xff) != buf[20] || pi.pid >> 56 != buf[27] ||
		    memcmp(pi.cookie, buf + 28, IPC_COOKIE_LEN) != 0)
			abort();
		if (!v2 && (pi.assembly[0] != '\0' || pi.version[0] != '\0'))
			abort();
	}
	if (rv == 1 && (len < 24 || buf[16] != 0xff || buf[17] != 0xff ||
	    hresult != (uint32_t)(buf[20] | buf[21] << 8 | buf[22] << 16 |
	    (uint32_t)buf[23] << 24)))
		abort();
	if (rv == -1 && pi.cmdline[0] != '\0')
		abort();		/* nothing kept from a bad reply */

	rv2 = ipc_process_info_parse(buf, len, v2, &again, &hresult2);
	if (rv2 != rv || memcmp(&pi, &again, sizeof(pi)) != 0 ||
	    (rv == 1 && hresult2 != hresult))
		abort();

	/* Cut to the header's size, the reply parses the same. */
	if (rv != -1) {
		hsize = buf[14] | buf[15] << 8;
		if (hsize > len)
			abort();
		if ((copy = malloc(hsize)) == NULL)
			abort();
		memcpy(copy, buf, hsize);
		rv3 = ipc_process_info_parse(copy, hsize, v2, &cut, &hresult3);
		if (rv3 != rv || memcmp(&pi, &cut, sizeof(pi)) != 0 ||
		    (rv == 1 && hresult3 != hresult))
			abort();
		free(copy);
	}

	check_reply_id(buf, len, input[0] & 2, rv, &pi);
	check_names(&pi, namelen);

	/* A struct of raw bytes: the name must be safe all the same. */
	memset(&raw, 0, sizeof(raw));
	off = 0;
	raw_field(raw.assembly, (input[0] & 2) ? sizeof(raw.assembly) : 1,
	    buf, len, &off);
	raw_field(raw.cmdline, sizeof(raw.cmdline), buf, len, &off);
	check_names(&raw, namelen);

	free(buf);
	return (0);
}
