/* SPDX-License-Identifier: ISC */

/*
 * Unit tests of the option value parsers of util.c: durations, the only
 * numbers users type that are not whole, must refuse everything strtod()
 * would take beyond plain decimals (nan, inf, hex floats, exponents,
 * signs, blanks), since a NaN passes every range check.
 */

#include "config.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "router/util.h"
#include "tap.h"

static void
good(const char *s, int want)
{
	int	 ms = -1;

	ok(parse_ms(s, &ms) == 0 && ms == want, "\"%s\" is %d ms (got %d)", s,
	    want, ms);
}

static void
bad(const char *s)
{
	int	 ms = 12345;

	ok(parse_ms(s, &ms) == -1 && ms == 12345, "\"%s\" is refused", s);
}

int
main(void)
{
	static const char *const refused[] = {
		"", "s", "ms", ".", ".s", "nan", "NaN", "nans", "-nan", "inf",
		"INF", "infinity", "-inf", "1e3", "1E3", "1e309", "0x10",
		"0x1p3", "-0", "-0.0", "-1", "+1", " 1", "1 ", "1s ", "1m",
		"1sec", "1..2", "1.2.3", "1ss", "1msms", "1e-3", "5,5", "٣",
		"2147484", "2147483.648", "2147483648ms", "99999999999999999999",
		"9223372036854775808", "4294967296ms",
	};
	size_t	 i;

	good("0", 0);
	good("0s", 0);
	good("0ms", 0);
	good("5", 5000);
	good("5s", 5000);
	good("0.5", 500);
	good(".5", 500);
	good("5.", 5000);
	good("0.25s", 250);
	good("500ms", 500);
	good("1.5ms", 2);		/* rounded to the nearest */
	good("0.4ms", 0);
	good("0.0005", 1);
	good("0.0004", 0);
	good("0.123456789", 123);	/* digits past a tenth of a ms go */
	good("007", 7000);
	good("2147483.647", INT_MAX);
	good("2147483647ms", INT_MAX);
	for (i = 0; i < sizeof(refused) / sizeof(refused[0]); i++)
		bad(refused[i]);
	return (tap_done());
}
