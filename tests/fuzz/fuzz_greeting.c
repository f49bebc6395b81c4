/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the first-message classifier the way a connection feeds it: the
 * input's first bytes choose how the rest is split into reads, each read
 * is appended to an evbuffer (so chains split where reads did), and the
 * buffer is classified after every read, as the session does.
 *
 * Beyond "no crash", the harness checks what the router relies on:
 * - the verdict does not depend on how the bytes were split;
 * - once decided, a verdict never changes as more bytes arrive;
 * - "need more" is never the answer once the needed bytes are there;
 * - a command never needs more than 65535 bytes, nor fewer than 20, and
 *   its header fields are the bytes on the wire;
 * - an advertise's cookie and pid are the bytes on the wire.
 *
 * The same bytes, read as the first bytes of a runtime's answer
 * (ipc_reply_classify, which a router reads a prefix at a time up to
 * REPLY_PEEK bytes): it needs no more than REPLY_PEEK, a verdict never
 * changes as the prefix grows, and an error's HRESULT is the bytes.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/ipc.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define MAX_SPLITS	16

static void
check_consistent(const uint8_t *data, size_t len, const struct greeting *g)
{
	if (g->kind == GREETING_MORE && g->need != 0 && len >= g->need)
		abort();
	if (g->kind == GREETING_COMMAND) {
		if (g->need < IPC_HEADER_LEN || g->need > IPC_MESSAGE_MAX ||
		    g->need != g->header.size || len < g->need)
			abort();
		if (g->header.set != data[16] || g->header.id != data[17] ||
		    g->header.reserved != 0 || g->header.set == IPC_SET_SERVER)
			abort();
	}
	if (g->kind == GREETING_ADVERTISE) {
		if (len < ADVR_LEN || memcmp(g->advertise.cookie, data + 8,
		    IPC_COOKIE_LEN) != 0 || (g->advertise.pid & 0xff) !=
		    data[24])
			abort();
	}
}

static void
check_reply(const uint8_t *data, size_t size)
{
	enum reply_kind	 kind, first = REPLY_MORE;
	uint32_t	 hresult, first_hresult = 0;
	size_t		 len;

	for (len = 0; len <= size && len <= REPLY_PEEK + 8; len++) {
		hresult = 0;
		kind = ipc_reply_classify(data, len, &hresult);
		if (kind == REPLY_MORE && len >= REPLY_PEEK)
			abort();	/* a whole peek always decides */
		if (kind == REPLY_ERROR && (len < REPLY_PEEK ||
		    hresult != (uint32_t)(data[20] | data[21] << 8 |
		    data[22] << 16 | (uint32_t)data[23] << 24)))
			abort();
		if (first != REPLY_MORE && (kind != first ||
		    (kind == REPLY_ERROR && hresult != first_hresult)))
			abort();	/* decided, then changed */
		if (first == REPLY_MORE && kind != REPLY_MORE) {
			first = kind;
			first_hresult = hresult;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	struct evbuffer	*buf;
	struct greeting	 whole, g, first;
	size_t		 splits[MAX_SPLITS], nsplits, off, n, i;
	const uint8_t	*data;
	int		 decided = 0;

	if (size < 1)
		return (0);
	/* The first byte says how many split lengths follow. */
	nsplits = input[0] % MAX_SPLITS;
	if (size < 1 + nsplits)
		return (0);
	for (i = 0; i < nsplits; i++)
		splits[i] = input[1 + i] + 1;
	data = input + 1 + nsplits;
	size -= 1 + nsplits;

	ipc_classify(data, size, &whole);
	check_consistent(data, size, &whole);
	check_reply(data, size);

	if ((buf = evbuffer_new()) == NULL)
		abort();
	memset(&first, 0, sizeof(first));
	for (off = 0, i = 0; off < size; off += n, i++) {
		n = nsplits > 0 ? splits[i % nsplits] : size;
		if (n > size - off)
			n = size - off;
		if (evbuffer_add(buf, data + off, n) == -1 ||
		    ipc_classify_buffer(buf, &g) == -1)
			abort();
		check_consistent(data, off + n, &g);
		if (decided && (g.kind != first.kind || g.need != first.need))
			abort();	/* a verdict changed with more bytes */
		if (!decided && g.kind != GREETING_MORE) {
			first = g;
			decided = 1;
		}
	}
	if (size > 0 && (g.kind != whole.kind || g.need != whole.need))
		abort();		/* the split changed the verdict */
	evbuffer_free(buf);
	return (0);
}
