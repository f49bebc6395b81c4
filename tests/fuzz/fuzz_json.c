/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the log's JSON escaper.  The input is
 *
 *	room	one byte: 0 gives all the room any input needs, else the
 *		output buffer's size (1 to 255), to cut the output short
 *	bytes	the string to escape, any bytes, NULs included
 *
 * Checked, with a UTF-8 decoder and a JSON string reader of this file's
 * own (not log.c's):
 * - the output is NUL-terminated within its room, with no NUL before;
 * - it is valid UTF-8 and holds no raw control character or DEL;
 * - it reads as the inside of a JSON string: a quote only escaped, and
 *   every escape one of \" \\ \/ \b \f \n \r \t \uXXXX;
 * - read back, it is the bytes it stands for: the input's first *used
 *   bytes where they are UTF-8, each byte that is not replaced by U+FFFD;
 * - given all the room, all of the input is used; cut short, the output
 *   is a prefix of the whole escape, and the next character did not fit.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CHECK(cond, what) do {						\
	if (!(cond)) {							\
		fprintf(stderr, "fuzz_json: %s\n", what);		\
		abort();						\
	}								\
} while (0)

/*
 * The length of the UTF-8 character at p (n bytes there), decoding its
 * code point and refusing overlong forms, surrogates and anything past
 * U+10FFFF; 0 if it is not one.
 */
static size_t
utf8_char(const uint8_t *p, size_t n)
{
	static const unsigned long	 least[] = { 0, 0, 0x80, 0x800,
					    0x10000 };
	unsigned long			 cp;
	size_t				 len, i;

	if (p[0] < 0x80)
		return (1);
	if ((p[0] & 0xe0) == 0xc0) {
		len = 2;
		cp = p[0] & 0x1f;
	} else if ((p[0] & 0xf0) == 0xe0) {
		len = 3;
		cp = p[0] & 0x0f;
	} else if ((p[0] & 0xf8) == 0xf0) {
		len = 4;
		cp = p[0] & 0x07;
	} else
		return (0);
	if (len > n)
		return (0);
	for (i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return (0);
		cp = cp << 6 | (p[i] & 0x3f);
	}
	if (cp < least[len] || cp > 0x10ffff || (cp >= 0xd800 &&
	    cp <= 0xdfff))
		return (0);
	return (len);
}

static int
hexval(uint8_t c)
{
	if (c >= '0' && c <= '9')
		return (c - '0');
	if (c >= 'a' && c <= 'f')
		return (c - 'a' + 10);
	if (c >= 'A' && c <= 'F')
		return (c - 'A' + 10);
	return (-1);
}

/*
 * Read s (n bytes) as the inside of a JSON string into out; abort if it
 * is not one.  Return the bytes written.  Only \u00XX is expected: the
 * escaper writes everything else as UTF-8.
 */
static size_t
json_read(const uint8_t *s, size_t n, uint8_t *out)
{
	size_t	 i = 0, o = 0, len;
	int	 hi, lo;

	while (i < n) {
		CHECK(s[i] >= 0x20 && s[i] != 0x7f, "a raw control character");
		CHECK(s[i] != '"', "an unescaped quote");
		if (s[i] != '\\') {
			len = utf8_char(s + i, n - i);
			CHECK(len > 0, "output that is not UTF-8");
			memcpy(out + o, s + i, len);
			o += len;
			i += len;
			continue;
		}
		CHECK(i + 1 < n, "a backslash at the end");
		switch (s[i + 1]) {
		case '"': case '\\': case '/':
			out[o++] = s[i + 1];
			break;
		case 'b':
			out[o++] = '\b';
			break;
		case 'f':
			out[o++] = '\f';
			break;
		case 'n':
			out[o++] = '\n';
			break;
		case 'r':
			out[o++] = '\r';
			break;
		case 't':
			out[o++] = '\t';
			break;
		case 'u':
			CHECK(i + 5 < n, "a \\u escape cut short");
			CHECK(s[i + 2] == '0' && s[i + 3] == '0',
			    "a \\u escape past U+00FF");
			hi = hexval(s[i + 4]);
			lo = hexval(s[i + 5]);
			CHECK(hi >= 0 && lo >= 0,
			    "a \\u escape that is not hex");
			out[o++] = (uint8_t)(hi << 4 | lo);
			CHECK(out[o - 1] < 0x20 || out[o - 1] == 0x7f,
			    "a \\u escape for a character that needs none");
			i += 4;
			break;
		default:
			CHECK(0, "an escape JSON does not have");
		}
		i += 2;
	}
	return (o);
}

/* What src (n bytes) should read back as: U+FFFD for each bad byte. */
static size_t
expected(const uint8_t *src, size_t n, uint8_t *out)
{
	size_t	 i = 0, o = 0, len;

	while (i < n) {
		if ((len = utf8_char(src + i, n - i)) == 0) {
			memcpy(out + o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
		} else {
			memcpy(out + o, src + i, len);
			o += len;
			i += len;
		}
	}
	return (o);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char	*src = (const char *)data + 1;
	char		*full, *cut;
	uint8_t		*back, *want;
	size_t		 len, room, n, fulln, used, backn, wantn;

	if (size == 0)
		return (0);
	len = size - 1;
	room = 6 * len + 1;	/* \u00XX is the longest form of a byte */
	full = malloc(room);
	cut = malloc(256);
	back = malloc(3 * len + 1);
	want = malloc(3 * len + 1);
	CHECK(full != NULL && cut != NULL && back != NULL && want != NULL,
	    "out of memory");

	fulln = json_escape(full, room, src, len, &used);
	CHECK(used == len, "all the room, and not all the input used");
	CHECK(fulln < room && full[fulln] == '\0' && strlen(full) == fulln,
	    "the output is not one NUL-terminated string");
	backn = json_read((const uint8_t *)full, fulln, back);
	wantn = expected(data + 1, len, want);
	CHECK(backn == wantn && memcmp(back, want, wantn) == 0,
	    "the output does not read back as the input");

	if (data[0] != 0) {
		n = json_escape(cut, data[0], src, len, &used);
		CHECK(n < data[0] && cut[n] == '\0' && strlen(cut) == n,
		    "cut short: not one NUL-terminated string in its room");
		CHECK(n <= fulln && memcmp(cut, full, n) == 0,
		    "cut short: not a prefix of the whole escape");
		backn = json_read((const uint8_t *)cut, n, back);
		wantn = expected(data + 1, used, want);
		CHECK(backn == wantn && memcmp(back, want, wantn) == 0,
		    "cut short: does not read back as the bytes used");
		CHECK(used == len || n + 7 > data[0],
		    "cut short: the next character would have fitted");
	}
	free(full);
	free(cut);
	free(back);
	free(want);
	return (0);
}
