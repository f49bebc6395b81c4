/* SPDX-License-Identifier: ISC */

/*
 * Logging to stderr, one line per message.  Levels and prefixes are those
 * of dotnet-dsrouter (Microsoft.Extensions.Logging): tools that launch a
 * router re-colour its output by them.
 */

#include "config.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "router/log.h"
#include "router/util.h"

static enum log_level	 log_level = LL_INFO;

static void	 log_vmsg(enum log_level, const char *, va_list)
		    __attribute__((__format__(__printf__, 2, 0)));

static const struct {
	const char	*name;
	const char	*prefix;
} levels[] = {
	[LL_NONE] = { "none", "" },
	[LL_CRITICAL] = { "critical", "crit" },
	[LL_ERROR] = { "error", "fail" },
	[LL_WARNING] = { "warning", "warn" },
	[LL_INFO] = { "info", "info" },
	[LL_DEBUG] = { "debug", "dbug" },
	[LL_TRACE] = { "trace", "trce" },
};

/* Parse a level name as dotnet-dsrouter's --verbose takes it. */
int
log_level_parse(const char *name, enum log_level *level)
{
	size_t	 i;

	for (i = 0; i < sizeof(levels) / sizeof(levels[0]); i++) {
		if (strcasecmp(name, levels[i].name) == 0) {
			*level = i;
			return (0);
		}
	}
	return (-1);
}

void
log_set_level(enum log_level level)
{
	log_level = level;
}

int
log_enabled(enum log_level level)
{
	return (level != LL_NONE && level <= log_level);
}

/* Format the line once and hand it to stderr in one write. */
static void
log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char	 line[2048];
	size_t	 len;
	int	 n, saved_errno = errno;

	if (!log_enabled(level))
		return;
	len = strlen(levels[level].prefix);
	memcpy(line, levels[level].prefix, len);
	line[len++] = ':';
	line[len++] = ' ';
	n = vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
	if (n > 0)
		len += (size_t)n < sizeof(line) - len - 1 ? (size_t)n :
		    sizeof(line) - len - 2;
	line[len++] = '\n';
	fwrite(line, 1, len, stderr);
	errno = saved_errno;
}

void
log_msg(enum log_level level, const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	log_vmsg(level, fmt, ap);
	va_end(ap);
}

/* Log a critical message and exit non-zero: start-up errors only. */
void
fatalx(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	if (log_level == LL_NONE)
		log_level = LL_CRITICAL;
	log_vmsg(LL_CRITICAL, fmt, ap);
	va_end(ap);
	exit(1);
}

/*
 * Copy src into dst for a log line, replacing bytes that are not printable
 * ASCII with \xNN, so that a peer cannot forge log lines.
 */
void
log_escape(char *dst, size_t dstlen, const char *src, size_t srclen)
{
	static const char	 digits[] = "0123456789abcdef";
	size_t			 i, o = 0;
	unsigned char		 ch;

	if (dstlen == 0)
		return;
	for (i = 0; i < srclen && src[i] != '\0'; i++) {
		ch = (unsigned char)src[i];
		if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
			if (o + 1 >= dstlen)
				break;
			dst[o++] = ch;
		} else {
			if (o + 4 >= dstlen)
				break;
			dst[o++] = '\\';
			dst[o++] = 'x';
			dst[o++] = digits[ch >> 4];
			dst[o++] = digits[ch & 0xf];
		}
	}
	dst[o] = '\0';
}

/*
 * A line that a peer can make the router write again and again passes
 * at most once a second; the first to pass after a pause says how many
 * were held back.  Return whether the caller may log its line now.
 */
int
log_throttle_pass(struct log_throttle *t, const char *what)
{
	uint64_t	 now = now_ms();

	if (t->last != 0 && now - t->last < LOG_THROTTLE_MS) {
		t->held++;
		return (0);
	}
	if (t->held > 0)
		log_info("%lu more %s not logged in the last %.1fs", t->held,
		    what, (now - t->last) / 1000.0);
	t->last = now;
	t->held = 0;
	return (1);
}
