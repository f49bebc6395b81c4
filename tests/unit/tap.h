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

/* A minimal TAP producer for the C unit tests. */

#ifndef TAP_H
#define TAP_H

#include <stdarg.h>
#include <stdio.h>

static int	 tap_count;
static int	 tap_failures;

#define ok(cond, ...)	tap_ok(!!(cond), __FILE__, __LINE__, __VA_ARGS__)

static void __attribute__((__format__(__printf__, 4, 5)))
tap_ok(int pass, const char *file, int line, const char *fmt, ...)
{
	va_list	 ap;

	printf("%s %d - ", pass ? "ok" : "not ok", ++tap_count);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	if (!pass) {
		printf("# failed at %s:%d\n", file, line);
		tap_failures++;
	}
}

/* Print the plan; the exit status says whether everything passed. */
static int
tap_done(void)
{
	printf("1..%d\n", tap_count);
	return (tap_failures != 0);
}

#endif /* TAP_H */
