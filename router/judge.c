/*
 * Copyright (c) 2026 The dsroute authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * The one place where a tool's first message is judged, in every mode,
 * before any byte of it reaches a runtime.  The message is complete and
 * well formed by the time it gets here (ipc_classify saw to that).
 */

#include "config.h"

#include <sys/types.h>

#include "dsroute.h"

void
judge_command(struct session *s, const uint8_t *msg, size_t len,
    const struct greeting *g, struct verdict *v)
{
	v->allow = 1;
	v->hresult = 0;
	v->rule = "default";
	v->reason = NULL;
	if (identity_judge(&s->conn[s->tool_side], v))
		return;
}
