/* SPDX-License-Identifier: ISC */

/*
 * The log's JSON escaper with hostile strings (quotes, backslashes,
 * control characters, DEL, every kind of invalid UTF-8), and records in
 * both formats, read back from standard error: the text line as the
 * router always wrote it, the JSON object whole and within LOG_LINE.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "tests/unit/tap.h"

/* escapes(IN, INLEN, WANT): json_escape of IN is WANT, all of IN used. */
static int
escapes(const char *in, size_t inlen, const char *want)
{
	char	 out[256];
	size_t	 n, used;

	n = json_escape(out, sizeof(out), in, inlen, &used);
	if (n != strlen(want) || strcmp(out, want) != 0 || used != inlen) {
		printf("# got \"%s\" (%zu of %zu used)\n", out, used, inlen);
		return (0);
	}
	return (1);
}

#define ESC(in, want, what)	ok(escapes(in, sizeof(in) - 1, want), what)

static void
test_escape(void)
{
	char	 out[8];
	size_t	 n, used;

	ESC("plain text", "plain text", "printable ASCII as it is");
	ESC("", "", "the empty string");
	ESC("a\"b", "a\\\"b", "a quote");
	ESC("a\\b", "a\\\\b", "a backslash");
	ESC("\\\"", "\\\\\\\"", "a backslash before a quote");
	ESC("\b\f\n\r\t", "\\b\\f\\n\\r\\t", "the short escapes");
	ESC("\x01\x1f\x1b[31m", "\\u0001\\u001f\\u001b[31m",
	    "other control characters as \\u00XX");
	ESC("\x7f", "\\u007f", "DEL");
	ESC("a\0b", "a\\u0000b", "a NUL inside the length");
	ESC("\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80", "\xc3\xa9\xe2\x82\xac"
	    "\xf0\x9f\x98\x80", "well-formed UTF-8 of 2, 3 and 4 bytes");
	ESC("\xe2\x80\xa8", "\xe2\x80\xa8", "U+2028 (valid JSON) as it is");
	ESC("\xef\xbf\xbf\xf4\x8f\xbf\xbf", "\xef\xbf\xbf\xf4\x8f\xbf\xbf",
	    "U+FFFF and U+10FFFF as they are");
#define FFFD	"\xef\xbf\xbd"
	ESC("\x80", FFFD, "a lone continuation byte");
	ESC("\xbf\xfe\xff", FFFD FFFD FFFD, "0xbf, 0xfe, 0xff alone");
	ESC("\xc0\xaf", FFFD FFFD, "an overlong '/' of 2 bytes");
	ESC("\xc1\xbf", FFFD FFFD, "an overlong DEL");
	ESC("\xe0\x80\xaf", FFFD FFFD FFFD, "an overlong '/' of 3 bytes");
	ESC("\xf0\x80\x80\xaf", FFFD FFFD FFFD FFFD,
	    "an overlong '/' of 4 bytes");
	ESC("\xed\xa0\x80", FFFD FFFD FFFD, "a high surrogate");
	ESC("\xed\xbf\xbf", FFFD FFFD FFFD, "a low surrogate");
	ESC("\xf4\x90\x80\x80", FFFD FFFD FFFD FFFD, "past U+10FFFF");
	ESC("\xf5\x80\x80\x80", FFFD FFFD FFFD FFFD, "a lead byte 0xf5");
	ESC("\xe2\x82", FFFD FFFD, "a sequence cut by the end");
	ESC("\xe2\x82\"", FFFD FFFD "\\\"",
	    "a sequence cut by a quote, which is kept");
	ESC("\xf0\x9f\x98", FFFD FFFD FFFD, "4 bytes cut to 3");
	ESC("x\xc3", "x" FFFD, "a lead byte last");

	/* The room: whole characters only, and a NUL always. */
	n = json_escape(out, 4, "ab\"c", 4, &used);
	ok(n == 2 && used == 2 && strcmp(out, "ab") == 0,
	    "an escape that does not fit is left out whole");
	n = json_escape(out, 3, "a\xe2\x82\xac", 4, &used);
	ok(n == 1 && used == 1 && strcmp(out, "a") == 0,
	    "so is a UTF-8 sequence");
	n = json_escape(out, 6, "\x01\x02", 2, &used);
	ok(n == 0 && used == 0 && out[0] == '\0',
	    "\\u0001 needs 6 bytes and the NUL");
	n = json_escape(out, 7, "\x01\x02", 2, &used);
	ok(n == 6 && used == 1 && strcmp(out, "\\u0001") == 0,
	    "... and 7 bytes take it");
	n = json_escape(out, 0, "abc", 3, &used);
	ok(n == 0 && used == 0, "no room at all writes nothing");
}

static FILE	*cap;

/* Standard error into a file that the tests read back. */
static void
capture(void)
{
	if ((cap = tmpfile()) == NULL || dup2(fileno(cap), STDERR_FILENO)
	    == -1) {
		perror("capture");
		exit(1);
	}
}

/* What was logged since the last call. */
static const char *
logged(void)
{
	static char	 buf[4 * LOG_LINE];
	size_t		 n;

	rewind(cap);
	n = fread(buf, 1, sizeof(buf) - 1, cap);
	buf[n] = '\0';
	rewind(cap);
	if (ftruncate(fileno(cap), 0) == -1)
		perror("ftruncate");
	return (buf);
}

/* A record with every kind of field. */
static void
session_record(enum log_level level)
{
	struct log_rec	 r;

	if (!log_begin(&r, level, "session.end"))
		return;
	log_words(&r, "session %d:", 7);
	log_u64(&r, "session", 7, LF_JSON);
	log_str(&r, "route", "r\"1", 0);
	log_str(&r, "command", NULL, 0);
	log_u64(&r, "to_tool", 170, 0);
	log_secs(&r, "duration", 1.5, 0);
	log_bool(&r, "fresh", 1, 0);
	log_str(&r, "cn", "a\nb\xff", LF_QUOTE | LF_ESCAPE);
	log_str(&r, "rule", NULL, LF_QUOTE);
	log_str(&r, "hidden", "x", LF_TEXT);
	log_end(&r);
}

/* Whether s holds no raw control byte. */
static int
no_controls(const char *s, size_t n)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return (0);
	}
	return (1);
}

static void
test_records(void)
{
	struct log_rec	 r;
	const char	*got, *p;
	char		 big[3000], key[8];
	size_t		 n;
	int		 i;

	capture();
	log_set_level(LL_INFO);
	log_set_format(LOG_TEXT);
	session_record(LL_INFO);
	got = logged();
	ok(strcmp(got, "info: session 7: route=r\"1 command=- to_tool=170 "
	    "duration=1.500s fresh=yes cn=\"a\\x0ab\\xff\" rule=\"-\" "
	    "hidden=x\n") == 0, "text: the words, then key=value");
	if (strncmp(got, "info: ", 6) != 0 || strlen(got) < 10)
		printf("# got %s", got);
	session_record(LL_DEBUG);
	ok(*logged() == '\0', "a level not logged writes nothing");

	log_set_format(LOG_JSON);
	session_record(LL_INFO);
	got = logged();
	p = strstr(got, "\"level\"");
	ok(strncmp(got, "{\"time\":\"20", 11) == 0 && p != NULL &&
	    strcmp(p, "\"level\":\"info\",\"event\":\"session.end\","
	    "\"session\":7,\"route\":\"r\\\"1\",\"command\":null,"
	    "\"to_tool\":170,\"duration\":1.500,\"fresh\":true,"
	    "\"cn\":\"a\\nb\xef\xbf\xbd\",\"rule\":null}\n") == 0,
	    "JSON: typed fields, escaped, text-only ones left out");
	if (p == NULL || strlen(p) < 40)
		printf("# got %s", got);
	ok(strlen(got) > 36 && got[8] == '"' && got[32] == 'Z' &&
	    got[28] == '.', "JSON: time is RFC 3339 UTC with milliseconds");

	/* A message of control characters, longer than a line. */
	memset(big, 1, sizeof(big) - 1);
	big[sizeof(big) - 1] = '\0';
	log_msg(LL_WARNING, "%s", big);
	got = logged();
	n = strlen(got);
	p = strstr(got, "\"msg\":\"");
	ok(n <= LOG_LINE && n > LOG_LINE - 40 && no_controls(got, n - 1) &&
	    got[n - 1] == '\n' && p != NULL &&
	    strcmp(got + n - 20, "\",\"truncated\":true}\n") == 0,
	    "a long message is cut to LOG_LINE and says so");
	ok(p != NULL && (n - 20 - (size_t)(p + 7 - got)) % 6 == 0,
	    "... at a whole escape");

	/* Fields past the line are left out whole. */
	memset(big, 'x', 500);
	big[500] = '\0';
	log_begin(&r, LL_INFO, "many");
	for (i = 0; i < 8; i++) {
		snprintf(key, sizeof(key), "k%d", i);
		log_str(&r, key, big, 0);
	}
	log_u64(&r, "after", 1, 0);
	log_end(&r);
	got = logged();
	n = strlen(got);
	ok(n <= LOG_LINE && strstr(got, "\"k2\":") != NULL &&
	    strstr(got, "\"k3\":") == NULL && strstr(got, "\"after\"") ==
	    NULL && strcmp(got + n - 19, ",\"truncated\":true}\n") == 0,
	    "fields that do not fit are left out, and the record says so");

	memset(big, 'y', sizeof(big) - 1);
	log_begin(&r, LL_INFO, "huge");
	log_str(&r, "huge", big, 0);
	log_u64(&r, "n", 5, 0);
	log_end(&r);
	got = logged();
	ok(strstr(got, "\"huge\":") == NULL && strstr(got, "\"n\"") == NULL &&
	    strstr(got, "\"event\":\"huge\",\"truncated\":true}\n") != NULL,
	    "a string longer than any line is left out");
	log_set_format(LOG_TEXT);
	log_msg(LL_INFO, "plain %d", 1);
	ok(strcmp(logged(), "info: plain 1\n") == 0,
	    "back to text: the prefix and the words");
}

int
main(void)
{
	enum log_format	 f;

	test_escape();
	ok(log_format_parse("json", &f) == 0 && f == LOG_JSON &&
	    log_format_parse("text", &f) == 0 && f == LOG_TEXT &&
	    log_format_parse("JSON", &f) == -1 &&
	    log_format_parse("", &f) == -1, "log formats: text and json");
	test_records();
	return (tap_done());
}
