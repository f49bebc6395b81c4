/* SPDX-License-Identifier: ISC */

/*
 * Logging to stderr, one line per message.  Levels and prefixes are those
 * of dotnet-dsrouter (Microsoft.Extensions.Logging): tools that launch a
 * router re-colour its output by them.
 *
 * Logging never holds up the event loop.  Lines standard error does not
 * take at once wait in a queue of LOG_QUEUE bytes, written when the loop
 * finds the descriptor writable again; past that, whole lines are dropped
 * and counted, and one line says how many once the queue has drained.
 *
 * Lines are text (the prefixes above, then words and key=value pairs, as
 * tests and users grep them) or, with --log-format json, one JSON object
 * each.  The lines users filter on are records (log_begin ... log_end),
 * built once for either format; every other line is a JSON "message".
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <errno.h>
#include <poll.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"

#define LOG_QUEUE	(256 * 1024)	/* the most that waits */
#define TEXT_MAX	(LOG_LINE - 2)	/* a text line's bytes before \n */
/* What a JSON record keeps free for its end when a field is left out. */
#define JSON_CUT	",\"truncated\":true}\n"
#define JSON_RESERVE	(sizeof(JSON_CUT) - 1)

static enum log_level	 log_level = LL_INFO;
static enum log_format	 log_format = LOG_TEXT;
static int		 log_fd = STDERR_FILENO;
static int		 log_socket;	/* send with MSG_DONTWAIT */
static struct event	*log_ev;	/* log_fd writable, once attached */
static char		*queue;		/* LOG_QUEUE, and room for a line */
static size_t		 qoff, qlen;	/* waiting: queue[qoff, qlen) */
static unsigned long	 dropped;	/* lines since the queue filled */
static unsigned long	 dropped_told;	/* ... and before, said in a line */

static void	 log_vmsg(enum log_level, const char *, va_list)
		    __attribute__((__format__(__printf__, 2, 0)));
static void	 log_put(const char *, size_t);
static void	 json_message(enum log_level, const char *, va_list)
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

/*
 * Write to fd instead of standard error: one that never blocks, which the
 * platform gives where it can (platform_log_fd), a socket if is_socket.
 */
void
log_open(int fd, int is_socket)
{
	if (fd != -1) {
		log_fd = fd;
		log_socket = is_socket;
	}
}

static ssize_t
log_send(const char *p, size_t n)
{
	ssize_t	 w;

	do {
		if (log_socket)
			w = send(log_fd, p, n, MSG_DONTWAIT | MSG_NOSIGNAL);
		else
			w = write(log_fd, p, n);
	} while (w == -1 && errno == EINTR);
	return (w);
}

/* Keep bytes for later; the callers have checked that they fit. */
static void
log_queue(const char *p, size_t n)
{
	if (queue == NULL && (queue = malloc(LOG_QUEUE + LOG_LINE)) == NULL) {
		dropped++;
		return;
	}
	if (qlen + n > LOG_QUEUE + LOG_LINE) {
		memmove(queue, queue + qoff, qlen - qoff);
		qlen -= qoff;
		qoff = 0;
	}
	memcpy(queue + qlen, p, n);
	qlen += n;
}

static void
log_arm(void)
{
	if (log_ev != NULL && qlen > qoff)
		event_add(log_ev, NULL);
}

/*
 * Write what waits.  When all of it has gone, say how many lines were
 * dropped; a reader that went away for good takes the queue with it.
 */
static void
log_drain(void)
{
	struct log_rec	 r;
	unsigned long	 lost;
	ssize_t		 n;

	while (qlen > qoff) {
		if ((n = log_send(queue + qoff, qlen - qoff)) <= 0) {
			if (n == 0 || (errno != EAGAIN && errno != EWOULDBLOCK))
				qoff = qlen = 0;
			break;
		}
		qoff += (size_t)n;
		if (qoff < qlen)
			continue;
		qoff = qlen = 0;
		if ((lost = dropped) > 0) {
			/* Into the empty queue, or out at once. */
			dropped_told += lost;
			dropped = 0;
			if (log_begin(&r, LL_WARNING, "log.dropped")) {
				log_say(&r, "%lu log lines dropped: standard "
				    "error did not take them", lost);
				log_u64(&r, "dropped", lost, LF_JSON);
				log_end(&r);
			}
		}
	}
	log_arm();
}

static void
log_writable(evutil_socket_t fd, short what, void *arg)
{
	log_drain();
}

/*
 * Write a line now if nothing waits before it, else queue it (whole, or
 * not at all); the rest of a line cut short always waits.
 */
static void
log_put(const char *line, size_t len)
{
	ssize_t	 n;

	if (qlen == qoff) {
		if ((n = log_send(line, len)) == (ssize_t)len)
			return;
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				return;
			n = 0;
		}
		log_queue(line + n, len - (size_t)n);
	} else if (qlen - qoff + len <= LOG_QUEUE)
		log_queue(line, len);
	else
		dropped++;
	log_arm();
}

/*
 * From now on the loop writes what waits.  A descriptor that never
 * blocks is all it can watch: a regular file or a standard error that
 * could not be reopened is written as before.
 */
void
log_attach(struct event_base *b)
{
	if (log_fd == STDERR_FILENO && !log_socket)
		return;
	log_ev = event_new(b, log_fd, EV_WRITE, log_writable, NULL);
	log_arm();
}

void
log_detach(void)
{
	if (log_ev != NULL)
		event_free(log_ev);
	log_ev = NULL;
}

/* Before exit: give what waits up to ms milliseconds to go. */
void
log_flush(int ms)
{
	struct pollfd	 pfd;
	uint64_t	 deadline = now_ms() + (uint64_t)ms, now;

	for (;;) {
		log_drain();
		if (qlen == qoff || (now = now_ms()) >= deadline)
			return;
		pfd.fd = log_fd;
		pfd.events = POLLOUT;
		(void)poll(&pfd, 1, (int)(deadline - now));
	}
}

/* Format the line once and hand it to stderr in one write. */
static void
log_vmsg(enum log_level level, const char *fmt, va_list ap)
{
	char	 line[LOG_LINE];
	size_t	 len;
	int	 n, saved_errno = errno;

	if (!log_enabled(level))
		return;
	if (log_format == LOG_JSON) {
		json_message(level, fmt, ap);
		errno = saved_errno;
		return;
	}
	len = strlen(levels[level].prefix);
	memcpy(line, levels[level].prefix, len);
	line[len++] = ':';
	line[len++] = ' ';
	n = vsnprintf(line + len, sizeof(line) - len - 1, fmt, ap);
	if (n > 0)
		len += (size_t)n < sizeof(line) - len - 1 ? (size_t)n :
		    sizeof(line) - len - 2;
	line[len++] = '\n';
	log_put(line, len);
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
	log_flush(1000);
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

int
log_format_parse(const char *name, enum log_format *format)
{
	if (strcmp(name, "text") == 0)
		*format = LOG_TEXT;
	else if (strcmp(name, "json") == 0)
		*format = LOG_JSON;
	else
		return (-1);
	return (0);
}

void
log_set_format(enum log_format format)
{
	log_format = format;
}

/*
 * The length of the well-formed UTF-8 sequence at p (n bytes there), or
 * 0: overlong forms, surrogates, code points past U+10FFFF, stray
 * continuation bytes and sequences cut short are not well-formed.
 * Shared with the codecs that take text from peers (ext.c).
 */
size_t
utf8_len(const unsigned char *p, size_t n)
{
	unsigned char	 lo = 0x80, hi = 0xbf;
	size_t		 len, i;

	if (p[0] < 0x80)
		return (1);
	if (p[0] >= 0xc2 && p[0] <= 0xdf)
		len = 2;
	else if (p[0] >= 0xe0 && p[0] <= 0xef) {
		len = 3;
		if (p[0] == 0xe0)
			lo = 0xa0;	/* overlong */
		else if (p[0] == 0xed)
			hi = 0x9f;	/* surrogates */
	} else if (p[0] >= 0xf0 && p[0] <= 0xf4) {
		len = 4;
		if (p[0] == 0xf0)
			lo = 0x90;	/* overlong */
		else if (p[0] == 0xf4)
			hi = 0x8f;	/* past U+10FFFF */
	} else
		return (0);
	if (n < len || p[1] < lo || p[1] > hi)
		return (0);
	for (i = 2; i < len; i++) {
		if (p[i] < 0x80 || p[i] > 0xbf)
			return (0);
	}
	return (len);
}

/*
 * Escape src (srclen bytes, NULs included) as the inside of a JSON
 * string, into dst (dstlen bytes, NUL-terminated): quote, backslash,
 * control characters and DEL escaped, each byte that is not part of
 * well-formed UTF-8 replaced by U+FFFD, so that the result is always
 * valid JSON and valid UTF-8.  A character whose form does not fit is
 * left out with all after it.  Return the bytes written; *used says how
 * many bytes of src they stand for.
 */
size_t
json_escape(char *dst, size_t dstlen, const char *src, size_t srclen,
    size_t *used)
{
	static const char	 digits[] = "0123456789abcdef";
	const unsigned char	*p = (const unsigned char *)src;
	char			 esc[8];
	const char		*out;
	size_t			 i = 0, o = 0, in, n;

	while (i < srclen) {
		out = esc;
		in = 1;
		switch (p[i]) {
		case '"':
			out = "\\\"";
			break;
		case '\\':
			out = "\\\\";
			break;
		case '\b':
			out = "\\b";
			break;
		case '\f':
			out = "\\f";
			break;
		case '\n':
			out = "\\n";
			break;
		case '\r':
			out = "\\r";
			break;
		case '\t':
			out = "\\t";
			break;
		default:
			if (p[i] < 0x20 || p[i] == 0x7f) {
				memcpy(esc, "\\u00", 4);
				esc[4] = digits[p[i] >> 4];
				esc[5] = digits[p[i] & 0xf];
				esc[6] = '\0';
			} else if ((in = utf8_len(p + i, srclen - i)) == 0) {
				in = 1;
				out = "\xef\xbf\xbd";
			} else {
				memcpy(esc, p + i, in);
				esc[in] = '\0';
			}
			break;
		}
		n = strlen(out);
		if (o + n >= dstlen)
			break;
		memcpy(dst + o, out, n);
		o += n;
		i += in;
	}
	if (dstlen > 0)
		dst[o] = '\0';
	if (used != NULL)
		*used = i;
	return (o);
}

static void
rec_text(struct log_rec *r, const char *p, size_t n)
{
	if (n > TEXT_MAX - r->len)
		n = TEXT_MAX - r->len;
	memcpy(r->line + r->len, p, n);
	r->len += n;
}

/* Add ,"key":value to a JSON record if it fits whole, else mark it cut. */
static void
rec_json(struct log_rec *r, const char *key, const char *value, size_t n)
{
	size_t	 klen = strlen(key);

	if (r->cut || r->len + klen + 4 + n + JSON_RESERVE > LOG_LINE) {
		r->cut = 1;
		return;
	}
	r->line[r->len++] = ',';
	r->line[r->len++] = '"';
	memcpy(r->line + r->len, key, klen);
	r->len += klen;
	r->line[r->len++] = '"';
	r->line[r->len++] = ':';
	memcpy(r->line + r->len, value, n);
	r->len += n;
}

/* Add a JSON string; a value too long for any line leaves it out. */
static void
rec_json_str(struct log_rec *r, const char *key, const char *s)
{
	char	 buf[LOG_LINE];
	size_t	 n, used, len = strlen(s);

	buf[0] = '"';
	n = json_escape(buf + 1, sizeof(buf) - 2, s, len, &used);
	buf[++n] = '"';
	if (used < len)
		r->cut = 1;
	else
		rec_json(r, key, buf, n + 1);
}

/*
 * Add ,"msg":"s" to a JSON record, s cut at a character to the room
 * left: the words of a line matter most, and a text line is cut too.
 */
static void
rec_json_msg(struct log_rec *r, const char *s, size_t len)
{
	size_t	 room, n, used;

	if (r->cut || r->len + 10 + JSON_RESERVE > LOG_LINE) {
		r->cut = 1;
		return;
	}
	memcpy(r->line + r->len, ",\"msg\":\"", 8);
	r->len += 8;
	/* Room for the closing quote, where json_escape ends with a NUL. */
	room = LOG_LINE - JSON_RESERVE - r->len;
	n = json_escape(r->line + r->len, room, s, len, &used);
	r->len += n;
	r->line[r->len++] = '"';
	if (used < len)
		r->cut = 1;
}

/*
 * Begin a record of level about event, a short stable name such as
 * session.end.  Return whether the level is logged: if not, the calls
 * that follow do nothing and the caller may skip building its fields.
 */
int
log_begin(struct log_rec *r, enum log_level level, const char *event)
{
	struct timeval	 tv;
	int		 n;

	r->level = level;
	r->on = log_enabled(level);
	r->cut = 0;
	r->len = 0;
	if (!r->on)
		return (0);
	gettimeofday(&tv, NULL);
	r->sec = (long)tv.tv_sec;
	r->msec = (long)tv.tv_usec / 1000;
	if (log_format == LOG_TEXT) {
		n = snprintf(r->line, sizeof(r->line), "%s: ",
		    levels[level].prefix);
		r->len = (size_t)n;
		return (1);
	}
	memcpy(r->line, "{\"time\":", 8);
	r->len = 8;
	log_time(r, NULL, LF_JSON);
	n = snprintf(r->line + r->len, sizeof(r->line) - r->len,
	    ",\"level\":\"%s\",\"event\":\"%s\"", levels[level].name, event);
	r->len += (size_t)n;
	return (1);
}

/* Words of the text line only: "session 7:", "audit:". */
void
log_words(struct log_rec *r, const char *fmt, ...)
{
	char	 buf[LOG_LINE];
	va_list	 ap;
	int	 n;

	if (!r->on || log_format != LOG_TEXT)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		rec_text(r, buf, (size_t)n < sizeof(buf) ? (size_t)n :
		    sizeof(buf) - 1);
}

/* The words of the line: the text line's, and the JSON record's "msg". */
void
log_say(struct log_rec *r, const char *fmt, ...)
{
	char	 buf[LOG_LINE];
	va_list	 ap;
	size_t	 len;
	int	 n;

	if (!r->on)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	len = (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1;
	if (log_format == LOG_TEXT)
		rec_text(r, buf, len);
	else
		rec_json_msg(r, buf, len);
}

/* Whether the field shows in this format: " key=" starts it in text. */
static int
rec_field(struct log_rec *r, const char *key, int flags)
{
	if (!r->on)
		return (0);
	if (log_format == LOG_JSON)
		return (!(flags & LF_TEXT));
	if (flags & LF_JSON)
		return (0);
	rec_text(r, " ", 1);
	rec_text(r, key, strlen(key));
	rec_text(r, "=", 1);
	return (1);
}

/* A string; NULL is - in text and null in JSON. */
void
log_str(struct log_rec *r, const char *key, const char *v, int flags)
{
	char	 buf[LOG_LINE];

	if (!rec_field(r, key, flags))
		return;
	if (log_format == LOG_JSON) {
		if (v == NULL)
			rec_json(r, key, "null", 4);
		else
			rec_json_str(r, key, v);
		return;
	}
	if (v == NULL)
		v = "-";
	else if (flags & LF_ESCAPE) {
		log_escape(buf, sizeof(buf), v, strlen(v));
		v = buf;
	}
	if (flags & LF_QUOTE)
		rec_text(r, "\"", 1);
	rec_text(r, v, strlen(v));
	if (flags & LF_QUOTE)
		rec_text(r, "\"", 1);
}

static void
rec_value(struct log_rec *r, const char *key, const char *v, size_t n)
{
	if (log_format == LOG_JSON)
		rec_json(r, key, v, n);
	else
		rec_text(r, v, n);
}

void
log_u64(struct log_rec *r, const char *key, uint64_t v, int flags)
{
	char	 buf[24];

	if (rec_field(r, key, flags))
		rec_value(r, key, buf, (size_t)snprintf(buf, sizeof(buf),
		    "%" PRIu64, v));
}

/* A flag: yes or no in text, true or false in JSON. */
void
log_bool(struct log_rec *r, const char *key, int v, int flags)
{
	const char	*s = log_format == LOG_JSON ? (v ? "true" : "false") :
			    (v ? "yes" : "no");

	if (rec_field(r, key, flags))
		rec_value(r, key, s, strlen(s));
}

/* Seconds to the millisecond: 1.500s in text, 1.5 in JSON. */
void
log_secs(struct log_rec *r, const char *key, double v, int flags)
{
	char	 buf[48];
	int	 n;

	if (!rec_field(r, key, flags))
		return;
	n = snprintf(buf, sizeof(buf), log_format == LOG_JSON ? "%.3f" :
	    "%.3fs", v);
	if (n > 0 && (size_t)n < sizeof(buf))
		rec_value(r, key, buf, (size_t)n);
}

/*
 * When the record began, in RFC 3339 UTC with milliseconds.  A JSON
 * record has it first, as "time"; key NULL writes the value alone.
 */
void
log_time(struct log_rec *r, const char *key, int flags)
{
	struct tm	 tm;
	time_t		 t = (time_t)r->sec;
	char		 buf[48];
	size_t		 n;

	if (key != NULL && !rec_field(r, key, flags))
		return;
	gmtime_r(&t, &tm);
	buf[0] = '"';
	n = strftime(buf + 1, sizeof(buf) - 1, "%Y-%m-%dT%H:%M:%S", &tm) + 1;
	n += (size_t)snprintf(buf + n, sizeof(buf) - n, ".%03ldZ\"", r->msec);
	if (key == NULL) {
		memcpy(r->line + r->len, buf, n);
		r->len += n;
	} else if (log_format == LOG_JSON)
		rec_json(r, key, buf, n);
	else
		rec_text(r, buf + 1, n - 2);
}

/* Write the record: a text line, or the JSON object and a newline. */
void
log_end(struct log_rec *r)
{
	int	 saved_errno = errno;

	if (!r->on)
		return;
	if (log_format == LOG_TEXT)
		r->line[r->len++] = '\n';
	else if (r->cut) {
		memcpy(r->line + r->len, JSON_CUT, JSON_RESERVE);
		r->len += JSON_RESERVE;
	} else {
		memcpy(r->line + r->len, "}\n", 2);
		r->len += 2;
	}
	log_put(r->line, r->len);
	errno = saved_errno;
}

/* Any other line as a JSON record: time, level, "message" and msg. */
static void
json_message(enum log_level level, const char *fmt, va_list ap)
{
	struct log_rec	 r;
	char		 buf[LOG_LINE];
	int		 n;

	n = vsnprintf(buf, sizeof(buf), fmt, ap);
	if (n < 0 || !log_begin(&r, level, "message"))
		return;
	rec_json_msg(&r, buf, (size_t)n < sizeof(buf) ? (size_t)n :
	    sizeof(buf) - 1);
	log_end(&r);
}

/* Every line dropped since start-up: the metric. */
unsigned long
log_dropped_total(void)
{
	return (dropped_told + dropped);
}
