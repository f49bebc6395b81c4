/* SPDX-License-Identifier: ISC */

/*
 * The settings of the whole process (settings.c).  One table names each
 * of them once, with its type, its default, whether SIGHUP may change it
 * and its line of --help; the command line, the configuration file, the
 * reload and --help all go by it.  Every layer reads the values.
 */

#ifndef SETTINGS_H
#define SETTINGS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct settings {
	int		 log_level;	/* enum log_level */
	int		 log_format;	/* enum log_format */
	int		 handshake_timeout_ms;
	int		 silent_timeout_ms; /* an accepted conn's first byte */
	int		 tls_handshake_timeout_ms;
	int		 ws_ping_interval_ms; /* keepalive */
	int		 connect_timeout_ms;
	int		 backend_wait_ms;
	int		 close_timeout_ms;
	int		 offer_timeout_ms; /* a listening tool's command */
	int		 shutdown_timeout_ms;
	int		 idle_timeout_ms; /* 0: none */
	int		 resume_after_ms; /* 0: never resume for tools */
	int		 link_poll_ms;	/* a mirror's listing of a link */
	int		 link_grace_ms;	/* a runtime it stops listing stays */
	size_t		 high_water;
	size_t		 low_water;
	int		 runtime_side;	/* client-client default */
	int		 unsafe_listen;
	int		 wait_for_runtime; /* retry a runtime that is not there */
	int		 max_sessions;
	int		 max_sessions_per_peer;
	int		 max_sessions_per_runtime;
	int		 max_runtimes;	/* parked at once, all routes */
	int		 max_runtimes_per_peer;
	char		 user[64];	/* drop to them after start-up */
	char		 group[64];
	int		 allow_core_dumps;
	char		 metrics[256];	/* an endpoint, or "" for none */
	uint64_t	 given;		/* the settings given, by index */
};

enum setting_type {
	ST_LEVEL,		/* a log level */
	ST_LOG_FORMAT,		/* text or json */
	ST_DURATION,		/* more than 0 ms */
	ST_DURATION_OFF,	/* 0 for none */
	ST_BUFFER,		/* the high water mark; low is a quarter */
	ST_COUNT,		/* 1 to 1,000,000 */
	ST_FLAG,		/* given alone, or yes/no in a file */
	ST_SIDE,		/* local or remote */
	ST_USER,		/* a user name or number */
	ST_GROUP,		/* a group name or number */
	ST_TEXT			/* kept as given, checked at start-up */
};

struct setting {
	const char		*name;		/* --name, and the file's key */
	int			 letter;	/* -v, or 0 */
	enum setting_type	 type;
	size_t			 offset;	/* in struct settings */
	const char		*dflt;		/* as a user would write it */
	int			 reloads;	/* SIGHUP may change it */
	const char		*arg;		/* in --help: T, N, LEVEL */
	const char		*help;		/* one line of --help */
};

extern struct settings		 settings;
extern const struct setting	 settings_table[];

void		 settings_init(struct settings *);
const struct setting *settings_find(const char *);
int		 settings_apply(struct settings *, const struct setting *,
		    const char *, char *, size_t);
int		 settings_set(void *, const char *, const char *, char *,
		    size_t);
int		 settings_given(const struct settings *, const char *);
void		 settings_usage(FILE *);
void		 usage_option(FILE *, int, const char *, const char *);
int		 settings_reload(const struct settings *);

#endif /* SETTINGS_H */
