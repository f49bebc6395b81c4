/* SPDX-License-Identifier: ISC */

/*
 * Unit tests of the option value parsers of util.c: durations, the only
 * numbers users type that are not whole, must refuse everything strtod()
 * would take beyond plain decimals (nan, inf, hex floats, exponents,
 * signs, blanks), since a NaN passes every range check.
 */

#include "config.h"

#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

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

/* The peer an address is: loopback as one, v4-mapped as the v4 one. */
static void
peer(const char *addr, const char *want)
{
	union sockaddr_inet	 a, w;
	uint8_t			 key[16], wkey[16];
	size_t			 len = 0, wlen = 0;

	memset(&a, 0, sizeof(a));
	memset(&w, 0, sizeof(w));
	if (inet_pton(AF_INET, addr, &a.sin.sin_addr) == 1)
		a.sin.sin_family = AF_INET;
	else if (inet_pton(AF_INET6, addr, &a.sin6.sin6_addr) == 1)
		a.sin6.sin6_family = AF_INET6;
	if (inet_pton(AF_INET, want, &w.sin.sin_addr) == 1)
		w.sin.sin_family = AF_INET;
	else if (inet_pton(AF_INET6, want, &w.sin6.sin6_addr) == 1)
		w.sin6.sin6_family = AF_INET6;
	ok(sockaddr_peer(&a.sa, key, &len) == 0 &&
	    sockaddr_peer(&w.sa, wkey, &wlen) == 0 && len == wlen &&
	    memcmp(key, wkey, len) == 0, "%s is the peer %s", addr, want);
}

int
main(void)
{
	union sockaddr_inet	 a, b;
	uint8_t			 ka[16], kb[16];
	size_t			 la, lb;

	static const char *const refused[] = {
		"", "s", "ms", ".", ".s", "nan", "NaN", "nans", "-nan", "inf",
		"INF", "infinity", "-inf", "1e3", "1E3", "1e309", "0x10",
		"0x1p3", "-0", "-0.0", "-1", "+1", " 1", "1 ", "1s ", "1m",
		"1sec", "1..2", "1.2.3", "1ss", "1msms", "1e-3", "5,5", "٣",
		"2147484", "2147483.648", "2147483648ms", "99999999999999999999",
		"9223372036854775808", "4294967296ms",
	};
	size_t	 i;

	peer("127.0.0.1", "127.0.0.1");
	peer("127.3.4.5", "127.0.0.1");
	peer("::1", "127.0.0.1");
	peer("::ffff:127.9.9.9", "127.0.0.1");
	peer("::ffff:10.1.2.3", "10.1.2.3");
	peer("2001:db8::1", "2001:db8::1");
	memset(&a, 0, sizeof(a));
	memset(&b, 0, sizeof(b));
	a.sin.sin_family = b.sin.sin_family = AF_INET;
	inet_pton(AF_INET, "10.0.0.1", &a.sin.sin_addr);
	inet_pton(AF_INET, "10.0.0.2", &b.sin.sin_addr);
	ok(sockaddr_peer(&a.sa, ka, &la) == 0 &&
	    sockaddr_peer(&b.sa, kb, &lb) == 0 && memcmp(ka, kb, 4) != 0,
	    "10.0.0.1 and 10.0.0.2 are two peers");
	a.sa.sa_family = AF_UNIX;
	ok(sockaddr_peer(&a.sa, ka, &la) == -1, "AF_UNIX is no address peer");

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
