/* SPDX-License-Identifier: ISC */

/*
 * What the transports that find runtimes share (dir:, proc:): a list of
 * runtimes' default sockets with their start times, dialled until one
 * accepts and its listener holds up, and the lines about files
 * passed over, each said once and a few a scan at most, since anyone who
 * may write where runtimes are looked for may fill it with junk.
 *
 * The runtime that served the last tool is tried first, and the newest
 * only once it is gone, as runtime.c keeps one current runtime: a tool's
 * StopTracing must reach the process its CollectTracing went to, though a
 * newer runtime has appeared since.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "transports/socket.h"
#include "transports/transport.h"

/* Lines a scan may write about files passed over; the rest are counted. */
#define SAY_PER_SCAN	8

static int
newest_first(const void *a, const void *b)
{
	const struct found	*x = a, *y = b;

	return (x->key < y->key ? 1 : x->key > y->key ? -1 : 0);
}

/* FNV-1a over what was passed over and why. */
static uint64_t
said_hash(const char *what, const char *why)
{
	uint64_t	 h = 0xcbf29ce484222325ULL;
	const char	*p;

	for (p = what; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
	h = (h ^ '\n') * 0x100000001b3ULL;
	for (p = why; *p != '\0'; p++)
		h = (h ^ (uint8_t)*p) * 0x100000001b3ULL;
	return (h);
}

/* A new scan: its own budget of lines. */
void
finder_scan(struct finder *f)
{
	f->scan_said = f->scan_held = 0;
}

/* Say why what (a file, a process) was passed over, once. */
void
finder_passed_over(const struct endpoint *ep, struct finder *f,
    const char *what, const char *why)
{
	uint64_t	 h = said_hash(what, why);
	unsigned int	 i;

	for (i = 0; i < f->nsaid && i < FINDER_SAID; i++)
		if (f->said[i] == h) {
			log_debug("%s: %s passed over: %s", ep->name, what,
			    why);
			return;
		}
	if (f->scan_said >= SAY_PER_SCAN) {
		f->scan_held++;
		return;
	}
	f->said[f->nsaid++ % FINDER_SAID] = h;
	f->scan_said++;
	log_warning("%s: %s passed over: %s", ep->name, what, why);
}

/* Put the runtime serving first, then the newest first. */
static void
order(struct finder *f, struct found_list *l)
{
	struct found	 t;
	int		 i;

	if (l->n > 1)
		qsort(l->v, l->n, sizeof(l->v[0]), newest_first);
	for (i = 0; i < l->n && f->current[0] != '\0'; i++) {
		if (strcmp(l->v[i].path, f->current) != 0)
			continue;
		t = l->v[i];
		memmove(&l->v[1], &l->v[0], i * sizeof(l->v[0]));
		l->v[0] = t;
		break;
	}
}

/*
 * Dial the runtime serving, else the newest, on the list that accepts and
 * whose listener holds up (holds returns NULL, or why not), and free the
 * list.  A socket file whose process is gone refuses the connection; with
 * none left the tool hears that no runtime's socket is there (ENOENT).
 */
int
finder_dial(const struct endpoint *ep, struct finder *f, struct found_list *l,
    const char *(*holds)(const struct endpoint *, int, const char *),
    int *pending)
{
	const char	*why, *name;
	int		 i, fd = -1, saved;

	order(f, l);
	for (i = 0; i < l->n; i++) {
		name = l->v[i].path;
		if ((fd = uds_dial_path(l->v[i].path, pending)) != -1) {
			/* One still connecting is checked by setup. */
			if (*pending || (why = holds(ep, fd, name)) == NULL)
				break;
			finder_passed_over(ep, f, name, why);
			close(fd);
			fd = -1;
			continue;
		}
		if (errno != ECONNREFUSED && errno != ENOENT)
			break;		/* a live runtime that is busy */
		log_debug("%s: %s: %s (its process is gone); the next is "
		    "tried", ep->name, name, strerror(errno));
	}
	saved = fd == -1 && i == l->n ? ENOENT : errno;
	if (fd != -1 && strcmp(f->current, l->v[i].path) != 0) {
		log_info("%s: %s now serves the tools", ep->name,
		    l->v[i].path);
		memcpy(f->current, l->v[i].path, strlen(l->v[i].path) + 1);
	}
	if (f->scan_held > 0)
		log_warning("%s: %u more passed over, not said", ep->name,
		    f->scan_held);
	found_free(l);
	errno = saved;
	return (fd);
}
