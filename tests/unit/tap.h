/* SPDX-License-Identifier: ISC */

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
