/* SPDX-License-Identifier: ISC */

/*
 * What posix_child.c and win32_child.c share: the daemon's loop, and what
 * a child prints: its standard error logged line by line, its standard
 * output logged at debug level and kept for the caller, up to
 * CHILD_OUTPUT_MAX (both fill c->in[] with what they read).  And a
 * child's end: its report to the caller, and waiting for it.
 */

#include "config.h"

#include <stdlib.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "common/log.h"
#include "platform/child.h"

struct event_base	*child_base;

#define CHILD_OUTPUT_MAX	(64 * 1024)	/* stdout kept for the caller */
#define CHILD_LINE_MAX		4096

/* The daemon's loop: children are watched on it.  Before the first. */
void
child_init(struct event_base *b)
{
	child_base = b;
}

/*
 * Log the complete lines of one of a child's streams; at EOF, or past
 * CHILD_LINE_MAX without a newline, what is left too.
 */
void
child_lines(struct child *c, int stream, int eof)
{
	struct evbuffer	*in = c->in[stream];
	char		*line, safe[512];
	size_t		 len, left;

	for (;;) {
		line = evbuffer_readln(in, &len, EVBUFFER_EOL_CRLF);
		left = evbuffer_get_length(in);
		if (line == NULL && left > 0 &&
		    (eof || left > CHILD_LINE_MAX)) {
			len = left;
			if ((line = malloc(len + 1)) == NULL)
				return;
			evbuffer_remove(in, line, len);
			line[len] = '\0';
		}
		if (line == NULL)
			return;
		log_escape(safe, sizeof(safe), line, len);
		if (stream == 1)
			log_msg(c->quiet ? LL_DEBUG : LL_ERROR, "%s: %s",
			    c->name, safe);
		else {
			log_debug("%s: %s", c->name, safe);
			if (evbuffer_get_length(c->output) < CHILD_OUTPUT_MAX) {
				evbuffer_add(c->output, line, len);
				evbuffer_add(c->output, "\n", 1);
			}
		}
		free(line);
	}
}

/*
 * The child c ended with result (its exit status, or -1): free what it
 * read and give its output to the caller.  The callback may start the
 * next command in the same struct.
 */
void
child_report(struct child *c, int result)
{
	struct evbuffer	*output = c->output;

	evbuffer_free(c->in[0]);
	evbuffer_free(c->in[1]);
	c->in[0] = c->in[1] = NULL;
	c->output = NULL;
	if (c->done != NULL)
		c->done(c, result, output);
	evbuffer_free(output);
}

/*
 * Wait for a child to end, running the event loop meanwhile: only at
 * shut-down, once nothing else is left to serve.  Its deadline bounds it.
 */
void
child_wait(struct child *c)
{
	while (child_running(c))
		event_base_loop(child_base, EVLOOP_ONCE);
}
