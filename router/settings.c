/* SPDX-License-Identifier: ISC */

/*
 * The settings of the whole process: one table, and what reads it.  A
 * setting is named once here, with its type, default, reload rule and
 * line of --help; the front end's getopt table, the configuration file's
 * keys, the reload's idea of what may change and --help are made from
 * it, so that they cannot drift apart.
 */

#include "config.h"

#include <sys/types.h>

#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/settings.h"

#define S(f)	offsetof(struct settings, f)

const struct setting settings_table[] = {
	{ "verbose", 'v', ST_LEVEL, S(log_level), "info", 1, "LEVEL",
	    "none, critical, error, warning, info, debug, trace" },
	{ "log-format", 0, ST_LOG_FORMAT, S(log_format), "text", 1,
	    "text|json", "text, or one JSON object per line" },
	{ "handshake-timeout", 0, ST_DURATION, S(handshake_timeout_ms), "5",
	    1, "T", "first message deadline from its first byte" },
	{ "silent-timeout", 0, ST_DURATION, S(silent_timeout_ms), "600", 1,
	    "T", "wait for a new connection's first byte" },
	{ "tls-handshake-timeout", 0, ST_DURATION,
	    S(tls_handshake_timeout_ms), "10", 1, "T",
	    "TLS handshake, WebSocket upgrade deadline" },
	{ "ws-ping-interval", 0, ST_DURATION, S(ws_ping_interval_ms), "20", 1,
	    "T", "WebSocket ping after that long quiet" },
	{ "connect-timeout", 0, ST_DURATION, S(connect_timeout_ms), "10", 1,
	    "T", "dialling deadline" },
	{ "backend-wait", 0, ST_DURATION_OFF, S(backend_wait_ms), "30", 1,
	    "T", "wait for a parked runtime" },
	{ "close-timeout", 0, ST_DURATION, S(close_timeout_ms), "60", 1, "T",
	    "tool's grace after the runtime ends" },
	{ "wait-for-runtime", 0, ST_FLAG, S(wait_for_runtime), "no", 1, NULL,
	    "retry a missing runtime until --connect-timeout" },
	{ "offer-timeout", 0, ST_DURATION, S(offer_timeout_ms), "600", 1, "T",
	    "a listening tool's wait for its command" },
	{ "shutdown-timeout", 0, ST_DURATION_OFF, S(shutdown_timeout_ms),
	    "10", 1, "T", "drain deadline on SIGTERM" },
	{ "idle-timeout", 0, ST_DURATION_OFF, S(idle_timeout_ms), "0", 1, "T",
	    "cut a forwarding session quiet that long" },
	{ "resume-after", 0, ST_DURATION_OFF, S(resume_after_ms), "0", 1,
	    "T", "resume a runtime no tool resumed" },
	{ "link-poll", 0, ST_DURATION, S(link_poll_ms), "2", 1, "T",
	    "a mirror's poll of a linked router" },
	{ "link-grace", 0, ST_DURATION_OFF, S(link_grace_ms), "30", 1, "T",
	    "an unlisted runtime keeps its stand-in" },
	{ "buffer-size", 0, ST_BUFFER, S(high_water), "256k", 1, "N",
	    "high water mark per direction" },
	{ "runtime", 0, ST_SIDE, S(runtime_side), "local", 0,
	    "local|remote", "client-client: the runtime's side" },
	{ "max-sessions", 0, ST_COUNT, S(max_sessions), "1024", 1, "N",
	    "accepted connections open at once" },
	{ "max-sessions-per-peer", 0, ST_COUNT, S(max_sessions_per_peer),
	    "64", 1, "N", "of them from one uid, address or cert" },
	{ "max-sessions-per-runtime", 0, ST_COUNT,
	    S(max_sessions_per_runtime), "64", 1, "N",
	    "tools one runtime serves at once" },
	{ "max-runtimes", 0, ST_COUNT, S(max_runtimes), "256", 1, "N",
	    "runtime connections parked at once" },
	{ "max-runtimes-per-peer", 0, ST_COUNT, S(max_runtimes_per_peer),
	    "32", 1, "N", "of them from one peer" },
	{ "unsafe-listen", 0, ST_FLAG, S(unsafe_listen), "no", 0, NULL,
	    "allow plaintext TCP beyond loopback" },
	{ "user", 0, ST_USER, S(user), "", 0, "USER",
	    "drop to this user once listening" },
	{ "group", 0, ST_GROUP, S(group), "", 0, "GROUP",
	    "... and to this group" },
	{ "allow-core-dumps", 0, ST_FLAG, S(allow_core_dumps), "no", 0, NULL,
	    "let the process dump core (it holds TLS keys)" },
	{ "metrics", 0, ST_TEXT, S(metrics), "", 0, "ADDR",
	    "serve /metrics, /healthz, /readyz: [tcp:|tls:]HOST:PORT or PORT" },
	{ NULL, 0, 0, 0, NULL, 0, NULL, NULL }
};

/* settings.given has one bit per setting. */
_Static_assert(sizeof(settings_table) / sizeof(settings_table[0]) - 1 <=
    sizeof(((struct settings *)0)->given) * 8, "too many settings");

/* The process's settings, the defaults until a front end applies more. */
struct settings		 settings;

static int *
int_field(struct settings *st, const struct setting *s)
{
	return ((int *)(void *)((char *)st + s->offset));
}

static int
set_duration(struct settings *st, const struct setting *s, const char *v,
    char *err, size_t len)
{
	int	 ms;

	if (parse_ms(v, &ms) == -1 || (ms == 0 && s->type == ST_DURATION)) {
		snprintf(err, len, "give a duration such as 5, 0.5 or 500ms");
		return (-1);
	}
	*int_field(st, s) = ms;
	return (0);
}

/* A count from 1 to 1,000,000. */
static int
set_count(struct settings *st, const struct setting *s, const char *v,
    char *err, size_t len)
{
	long	 n = 0;

	if (*v < '1' || *v > '9' || strlen(v) > 7)
		goto bad;
	for (; *v >= '0' && *v <= '9'; v++)
		n = n * 10 + (*v - '0');
	if (*v != '\0' || n > 1000000)
		goto bad;
	*int_field(st, s) = (int)n;
	return (0);
bad:
	snprintf(err, len, "give a number from 1 to 1000000");
	return (-1);
}

/* A flag: given alone on the command line (v NULL), or yes or no. */
static int
set_flag(struct settings *st, const struct setting *s, const char *v,
    char *err, size_t len)
{
	if (v == NULL || strcmp(v, "yes") == 0 || strcmp(v, "true") == 0 ||
	    strcmp(v, "1") == 0)
		*int_field(st, s) = 1;
	else if (strcmp(v, "no") == 0 || strcmp(v, "false") == 0 ||
	    strcmp(v, "0") == 0)
		*int_field(st, s) = 0;
	else {
		snprintf(err, len, "give yes or no");
		return (-1);
	}
	return (0);
}

/* A user or group name or number, checked now, used after start-up. */
static int
set_id(struct settings *st, const struct setting *s, const char *v,
    char *err, size_t len)
{
	char	*dst = (char *)st + s->offset;
	uid_t	 uid;
	gid_t	 gid;

	if (*v != '\0' && (strlen(v) >= sizeof(st->user) ||
	    (s->type == ST_USER ? parse_uid(v, &uid) : parse_gid(v, &gid)) ==
	    -1)) {
		snprintf(err, len, "no such %s", s->type == ST_USER ? "user" :
		    "group");
		return (-1);
	}
	snprintf(dst, sizeof(st->user), "%s", v);
	return (0);
}

/*
 * Apply one setting to st from its text, v (NULL for a flag given alone
 * on the command line).  Return -1 with a reason in err if it is wrong.
 */
int
settings_apply(struct settings *st, const struct setting *s, const char *v,
    char *err, size_t len)
{
	enum log_level	 level;
	enum log_format	 format;
	int		 rv = 0;

	if (v == NULL && s->type != ST_FLAG) {
		snprintf(err, len, "give a value");
		return (-1);
	}
	switch (s->type) {
	case ST_LEVEL:
		if (log_level_parse(v, &level) == -1) {
			snprintf(err, len, "give none, critical, error, "
			    "warning, info, debug or trace");
			return (-1);
		}
		*int_field(st, s) = level;
		break;
	case ST_LOG_FORMAT:
		if (log_format_parse(v, &format) == -1) {
			snprintf(err, len, "give text or json");
			return (-1);
		}
		*int_field(st, s) = format;
		break;
	case ST_DURATION:
	case ST_DURATION_OFF:
		rv = set_duration(st, s, v, err, len);
		break;
	case ST_BUFFER:
		/* The first message (up to 64 KiB) must fit. */
		if (parse_size(v, &st->high_water) == -1 ||
		    st->high_water < 128 * 1024 ||
		    st->high_water > 64 * 1024 * 1024) {
			snprintf(err, len, "give a size from 128k to 64m");
			return (-1);
		}
		st->low_water = st->high_water / 4;
		break;
	case ST_COUNT:
		rv = set_count(st, s, v, err, len);
		break;
	case ST_FLAG:
		rv = set_flag(st, s, v, err, len);
		break;
	case ST_SIDE:
		if (strcmp(v, "local") == 0)
			*int_field(st, s) = 0;
		else if (strcmp(v, "remote") == 0)
			*int_field(st, s) = 1;
		else {
			snprintf(err, len, "give local or remote");
			return (-1);
		}
		break;
	case ST_USER:
	case ST_GROUP:
		rv = set_id(st, s, v, err, len);
		break;
	case ST_TEXT:
		if (strlen(v) >= sizeof(st->metrics)) {
			snprintf(err, len, "longer than %zu characters",
			    sizeof(st->metrics) - 1);
			return (-1);
		}
		snprintf((char *)st + s->offset, sizeof(st->metrics), "%s", v);
		break;
	}
	if (rv == 0)
		st->given |= 1ULL << (s - settings_table);
	return (rv);
}

/* The defaults of every setting, as the table writes them. */
void
settings_init(struct settings *st)
{
	const struct setting	*s;
	char			 err[128];

	memset(st, 0, sizeof(*st));
	for (s = settings_table; s->name != NULL; s++) {
		if (settings_apply(st, s, s->dflt, err, sizeof(err)) == -1)
			fatalx("the default of %s, %s: %s", s->name, s->dflt,
			    err);
	}
	st->given = 0;
}

const struct setting *
settings_find(const char *name)
{
	const struct setting	*s;

	for (s = settings_table; s->name != NULL; s++) {
		if (strcmp(s->name, name) == 0)
			return (s);
	}
	return (NULL);
}

/*
 * A setting of a configuration file, NAME = VALUE, into the struct
 * settings at arg: config_load's callback.
 */
int
settings_set(void *arg, const char *name, const char *value, char *err,
    size_t len)
{
	const struct setting	*s;
	char			 why[128];

	if ((s = settings_find(name)) == NULL) {
		snprintf(err, len, "unknown setting '%s'", name);
		return (-1);
	}
	if (settings_apply(arg, s, value, why, sizeof(why)) == -1) {
		snprintf(err, len, "%s = %s: %s", name, value, why);
		return (-1);
	}
	return (0);
}

/* Whether a setting was given rather than left at its default. */
int
settings_given(const struct settings *st, const char *name)
{
	const struct setting	*s = settings_find(name);

	return (s != NULL && (st->given & 1ULL << (s - settings_table)));
}

#define USAGE_WIDTH	79	/* --help fits a terminal of 80 columns */
#define USAGE_OPT_WIDTH	25	/* an option and its argument */
#define USAGE_HELP_COL	32	/* what precedes the words about it */

/*
 * One option's line of --help: -letter (0: none), the option with its
 * argument, and the words about it, wrapped at spaces so that no line
 * passes USAGE_WIDTH; the lines it adds begin at USAGE_HELP_COL.
 */
void
usage_option(FILE *fp, int letter, const char *opt, const char *words)
{
	const char	*w = words;
	int		 col, n;

	if (letter != 0)
		col = fprintf(fp, "  -%c, %-*s ", letter, USAGE_OPT_WIDTH, opt);
	else
		col = fprintf(fp, "      %-*s ", USAGE_OPT_WIDTH, opt);
	while (*w != '\0') {
		n = (int)strcspn(w, " ");
		if (w != words && col + 1 + n > USAGE_WIDTH) {
			fprintf(fp, "\n%*s", USAGE_HELP_COL, "");
			col = USAGE_HELP_COL;
		} else if (w != words)
			col += fprintf(fp, " ");
		col += fprintf(fp, "%.*s", n, w);
		w += n + strspn(w + n, " ");
	}
	fputc('\n', fp);
}

/* The lines of --help for the settings, with their defaults. */
void
settings_usage(FILE *fp)
{
	const struct setting	*s;
	char			 opt[64], dflt[32], words[256];

	for (s = settings_table; s->name != NULL; s++) {
		snprintf(opt, sizeof(opt), "--%s%s%s", s->name,
		    s->arg != NULL ? " " : "", s->arg != NULL ? s->arg : "");
		if (s->type == ST_FLAG || s->dflt[0] == '\0')
			dflt[0] = '\0';
		else if (s->type == ST_DURATION_OFF &&
		    strcmp(s->dflt, "0") == 0)
			snprintf(dflt, sizeof(dflt), " (off)");
		else
			snprintf(dflt, sizeof(dflt), " (%s%s)", s->dflt,
			    s->type == ST_DURATION || s->type ==
			    ST_DURATION_OFF ? "s" : "");
		snprintf(words, sizeof(words), "%s%s", s->help, dflt);
		usage_option(fp, s->letter, opt, words);
	}
}

/* The size of the field of s in struct settings. */
static size_t
field_size(const struct setting *s)
{
	switch (s->type) {
	case ST_USER:
	case ST_GROUP:
		return (sizeof(((struct settings *)0)->user));
	case ST_BUFFER:
		return (sizeof(((struct settings *)0)->high_water));
	case ST_TEXT:
		return (sizeof(((struct settings *)0)->metrics));
	default:
		return (sizeof(int));
	}
}

/* Whether two settings structs differ in the field of s. */
static int
differs(const struct settings *a, const struct settings *b,
    const struct setting *s)
{
	return (memcmp((const char *)a + s->offset,
	    (const char *)b + s->offset, field_size(s)) != 0);
}

/*
 * SIGHUP: take the settings of next, but those that only apply when the
 * routes start or at start-up, which keep their value, with a warning
 * each.  Return how many changes wait for a restart.
 */
int
settings_reload(const struct settings *next)
{
	const struct setting	*s;
	struct settings		 kept = *next;
	int			 waiting = 0;

	for (s = settings_table; s->name != NULL; s++) {
		if (s->reloads || !differs(&settings, next, s))
			continue;
		log_warning("reload: %s applies at start-up; that takes a "
		    "restart", s->name);
		memcpy((char *)&kept + s->offset,
		    (const char *)&settings + s->offset, field_size(s));
		waiting++;
	}
	settings = kept;
	log_set_level(settings.log_level);
	log_set_format(settings.log_format);
	return (waiting);
}
