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
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <errno.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "platform/platform.h"
#include "router/log.h"
#include "router/util.h"

#define LOG_LINE	2048		/* the longest line */
#define LOG_QUEUE	(256 * 1024)	/* the most that waits */

static enum log_level	 log_level = LL_INFO;
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
 * Use a descriptor for standard error that never blocks, where the
 * platform can give one.  Before platform_harden.
 */
void
log_open(void)
{
	int	 fd, sock;

	if ((fd = platform_log_fd(&sock)) != -1) {
		log_fd = fd;
		log_socket = sock;
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
			log_warning("%lu log lines dropped: standard error did "
			    "not take them", lost);
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

/* Every line dropped since start-up: the metric. */
unsigned long
log_dropped_total(void)
{
	return (dropped_told + dropped);
}
