/* SPDX-License-Identifier: ISC */

/*
 * --resume-after: a runtime started suspended (DOTNET_DiagnosticPorts=
 * ...,suspend) waits at start-up until a tool sends ResumeRuntime.  A node
 * agent gives tools that long to attach, then resumes it itself, so that
 * no app is left hung because nobody came.
 *
 * The router cannot tell a suspended runtime from a running one (the
 * protocol has no question for it), so every runtime parked here that no
 * tool has resumed through the router by then gets one ResumeRuntime.  A
 * running runtime answers it OK and goes on; the cost is one of its
 * connections, which it dials again at once, as after any command.
 *
 * The command is an errand (errand.c): it goes on the runtime's parked
 * connection, never on one a tool is using; when the deadline finds none
 * parked, it goes on the next.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "common/util.h"
#include "router/engine.h"
#include "router/settings.h"
#include "transports/transport.h"

static void	 resume_line(const struct runtime *, enum log_level,
		    const char *, const char *, ...)
		    __attribute__((__format__(__printf__, 4, 5)));
static void	 resume_due(evutil_socket_t, short, void *);

/*
 * One line of what the router did for a runtime: "runtime pid N (cookie
 * C)" and the words, or a runtime.resume record with the outcome.
 */
static void
resume_line(const struct runtime *rt, enum log_level level,
    const char *outcome, const char *fmt, ...)
{
	struct log_rec	 r;
	va_list		 ap;
	char		 name[96], cookie[33], words[256];

	if (!log_begin(&r, level, "runtime.resume"))
		return;
	va_start(ap, fmt);
	vsnprintf(words, sizeof(words), fmt, ap);
	va_end(ap);
	runtime_name(rt, name, sizeof(name));
	ipc_cookie_hex(rt->advertise.cookie, cookie);
	log_say(&r, "%s%s", name, words);
	log_str(&r, "route", rt->route->name, LF_JSON);
	log_u64(&r, "runtime_pid", rt->advertise.pid, LF_JSON);
	log_str(&r, "cookie", cookie, LF_JSON);
	log_str(&r, "outcome", outcome, LF_JSON);
	log_end(&r);
}

/* A new runtime record: start its clock, if --resume-after is set. */
void
resume_watch(struct runtime *rt)
{
	struct timeval	 tv;

	if (settings.resume_after_ms == 0)
		return;
	if ((rt->resume = evtimer_new(base, resume_due, rt)) == NULL) {
		log_error("out of memory: --resume-after does not watch a "
		    "runtime");
		return;
	}
	timeval_ms(&tv, settings.resume_after_ms);
	evtimer_add(rt->resume, &tv);
}

/* A tool's ResumeRuntime reached the runtime and it answered OK. */
void
resume_done_by_tool(struct runtime *rt)
{
	rt->resumed = 1;
	/* Paused, it gave the host's command line alone: ask again. */
	infocache_forget(rt);
	errand_cancel(rt, ERRAND_RESUME);
	if (rt->resume != NULL)
		evtimer_del(rt->resume);
}

/* The record goes away. */
void
resume_forget(struct runtime *rt)
{
	if (rt->resume != NULL)
		event_free(rt->resume);
	rt->resume = NULL;
}

static void
resume_due(evutil_socket_t fd, short what, void *arg)
{
	struct runtime	*rt = arg;

	(void)fd;
	(void)what;
	if (rt->resumed || rt->gone)
		return;
	if (rt->parked.io.fd == -1 || errand_busy(rt))
		resume_line(rt, LL_DEBUG, "waiting", ": no tool resumed it; "
		    "ResumeRuntime waits for its next connection");
	errand_want(rt, ERRAND_RESUME);
}

/* The router's ResumeRuntime went on a parked connection. */
void
resume_sent(struct runtime *rt)
{
	resume_line(rt, LL_INFO, "sent", ": no tool resumed it within %.3fs "
	    "(--resume-after); the router sends ResumeRuntime",
	    settings.resume_after_ms / 1000.0);
}

/* The router's ResumeRuntime came back, or did not (errand.c). */
void
resume_answer(struct runtime *rt, enum errand_result result,
    const uint8_t *reply, size_t len)
{
	uint32_t	 hresult;

	switch (result) {
	case ERRAND_TIMEOUT:
		resume_line(rt, LL_WARNING, "no-answer", " did not answer the "
		    "router's ResumeRuntime within %.3fs; its connection is "
		    "closed", settings.handshake_timeout_ms / 1000.0);
		return;
	case ERRAND_CLOSED:
		resume_line(rt, LL_WARNING, "closed", " closed before it "
		    "answered the router's ResumeRuntime");
		return;
	case ERRAND_FAILED:
		resume_line(rt, LL_ERROR, "error", ": out of memory; not "
		    "resumed");
		return;
	case ERRAND_ANSWERED:
		break;
	}
	switch (ipc_reply_classify(reply, len, &hresult)) {
	case REPLY_OK:
		resume_line(rt, LL_INFO, "ok", " answered the router's "
		    "ResumeRuntime: ok");
		rt->resumed = 1;
		infocache_forget(rt);
		break;
	case REPLY_ERROR:
		resume_line(rt, LL_WARNING, "error", " answered the router's "
		    "ResumeRuntime with error 0x%08" PRIx32, hresult);
		break;
	default:
		resume_line(rt, LL_WARNING, "error", " answered the router's "
		    "ResumeRuntime with bytes that are no reply");
		break;
	}
}
