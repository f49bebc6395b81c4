/* SPDX-License-Identifier: ISC */

/*
 * Unit tests of the settings table (settings.c): the defaults it writes,
 * each type's values and refusals, what counts as given, and what a
 * reload may change.
 */

#include "config.h"

#include <string.h>

#include "common/log.h"
#include "router/settings.h"
#include "tap.h"

static struct settings	 st;
static char		 err[256];

/* Apply NAME = VALUE to st; 1 if it was taken. */
static int
takes(const char *name, const char *value)
{
	err[0] = '\0';
	return (settings_set(&st, name, value, err, sizeof(err)) == 0);
}

static int
refuses(const char *name, const char *value, const char *want)
{
	return (!takes(name, value) && strstr(err, want) != NULL);
}

static void
test_table(void)
{
	const struct setting	*s, *t;
	int			 named_once = 1, described = 1;

	for (s = settings_table; s->name != NULL; s++) {
		for (t = s + 1; t->name != NULL; t++)
			if (strcmp(s->name, t->name) == 0 ||
			    (s->letter != 0 && s->letter == t->letter))
				named_once = 0;
		if (s->help == NULL || s->help[0] == '\0' ||
		    (s->type != ST_FLAG && s->arg == NULL))
			described = 0;
	}
	ok(named_once, "every setting and letter is named once");
	ok(described, "every setting has a line of help and an argument");
	ok(settings_find("handshake-timeout") != NULL &&
	    settings_find("handshake") == NULL, "settings are found whole");
}

static void
test_defaults(void)
{
	settings_init(&st);
	ok(st.log_level == LL_INFO && st.handshake_timeout_ms == 5000 &&
	    st.tls_handshake_timeout_ms == 10000 &&
	    st.connect_timeout_ms == 10000 && st.backend_wait_ms == 30000 &&
	    st.offer_timeout_ms == 600000 && st.idle_timeout_ms == 0,
	    "default log level and deadlines");
	ok(st.high_water == 256 * 1024 && st.low_water == 64 * 1024,
	    "default buffer: 256k, low water a quarter");
	ok(st.max_sessions == 1024 && st.max_sessions_per_peer == 64 &&
	    st.max_runtimes == 256 && st.max_runtimes_per_peer == 32,
	    "default limits");
	ok(!st.unsafe_listen && !st.allow_core_dumps && st.user[0] == '\0' &&
	    st.runtime_side == 0, "safe defaults");
	ok(st.given == 0 && !settings_given(&st, "verbose"),
	    "nothing counts as given after the defaults");
}

static void
test_values(void)
{
	settings_init(&st);
	ok(takes("handshake-timeout", "0.5") &&
	    st.handshake_timeout_ms == 500, "a duration in seconds");
	ok(takes("handshake-timeout", "250ms") &&
	    st.handshake_timeout_ms == 250, "a duration in milliseconds");
	ok(settings_given(&st, "handshake-timeout") &&
	    !settings_given(&st, "connect-timeout"), "given, by name");
	ok(refuses("handshake-timeout", "0", "give a duration"),
	    "a deadline of 0 is refused");
	ok(takes("idle-timeout", "0") && st.idle_timeout_ms == 0,
	    "0 turns an optional deadline off");
	ok(refuses("connect-timeout", "1e3", "give a duration") &&
	    refuses("connect-timeout", "nan", "give a duration"),
	    "no exponents, no NaN");
	ok(takes("buffer-size", "1m") && st.high_water == 1024 * 1024 &&
	    st.low_water == 256 * 1024, "buffer-size sets both marks");
	ok(refuses("buffer-size", "64k", "128k to 64m") &&
	    refuses("buffer-size", "65m", "128k to 64m"),
	    "a buffer too small for a first message, or too large");
	ok(takes("max-sessions", "1000000") && st.max_sessions == 1000000 &&
	    refuses("max-sessions", "0", "1 to 1000000") &&
	    refuses("max-sessions", "1000001", "1 to 1000000") &&
	    refuses("max-sessions", "-1", "1 to 1000000") &&
	    refuses("max-sessions", "12x", "1 to 1000000"),
	    "counts from 1 to a million");
	ok(takes("unsafe-listen", "yes") && st.unsafe_listen &&
	    takes("unsafe-listen", "no") && !st.unsafe_listen &&
	    refuses("unsafe-listen", "maybe", "yes or no"), "flags");
	ok(settings_apply(&st, settings_find("allow-core-dumps"), NULL, err,
	    sizeof(err)) == 0 && st.allow_core_dumps,
	    "a flag given alone is set");
	ok(refuses("verbose", "loud", "give none") &&
	    takes("verbose", "debug") && st.log_level == LL_DEBUG,
	    "log levels");
	ok(takes("runtime", "remote") && st.runtime_side == 1 &&
	    refuses("runtime", "left", "local or remote"), "the runtime side");
	ok(takes("user", "0") && strcmp(st.user, "0") == 0 &&
	    refuses("user", "no-such-user-here", "no such user"),
	    "users are checked when given");
	ok(refuses("no-such-setting", "1", "unknown setting"),
	    "an unknown setting is named");
}

static void
test_reload(void)
{
	struct settings	 next;

	settings_init(&settings);
	next = settings;
	settings_apply(&next, settings_find("handshake-timeout"), "2", err,
	    sizeof(err));
	settings_apply(&next, settings_find("buffer-size"), "1m", err,
	    sizeof(err));
	settings_apply(&next, settings_find("unsafe-listen"), "yes", err,
	    sizeof(err));
	settings_apply(&next, settings_find("runtime"), "remote", err,
	    sizeof(err));
	log_set_level(LL_NONE);		/* its warnings are expected */
	ok(settings_reload(&next) == 2, "two changes wait for a restart");
	ok(settings.handshake_timeout_ms == 2000 &&
	    settings.high_water == 1024 * 1024,
	    "a reload takes deadlines and buffer sizes");
	ok(!settings.unsafe_listen && settings.runtime_side == 0,
	    "but not what applies at start-up");
}

int
main(void)
{
	test_table();
	test_defaults();
	test_values();
	test_reload();
	return (tap_done());
}
