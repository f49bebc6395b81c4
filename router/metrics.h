/* SPDX-License-Identifier: ISC */

/*
 * The counters behind /metrics (metrics.c): plain numbers the engine and
 * the daemon bump where a thing happens once (a session ends, a command
 * is judged, a handshake ends, a limit refuses), never per byte, and a
 * pure function that writes them in the Prometheus text format.  The
 * HTTP side that serves them is metrics_http.c, in the daemon.
 */

#ifndef METRICS_H
#define METRICS_H

#include <stdint.h>

struct evbuffer;

/* How a session ended: the outcome label, one per session. */
enum metrics_outcome {
	MO_COMPLETED,		/* forwarded, then ended by a side */
	MO_DENIED,		/* the ACL or an allow-list said no */
	MO_REFUSED,		/* over a limit, or a refused runtime held */
	MO_TIMEOUT,		/* a deadline of its state passed */
	MO_PARKED,		/* a runtime's connection, handed to parking */
	MO_ERROR,		/* anything else: a reset, a failed dial */
	MO_COUNT
};

/* The command set of a judged first message: the set label. */
enum metrics_set {
	MS_DUMP,
	MS_EVENTPIPE,
	MS_PROFILER,
	MS_PROCESS,
	MS_OTHER,		/* unknown sets, 0xFF from a client */
	MS_ADVERTISE,		/* a runtime's advertise */
	MS_COUNT
};

/* The limit label. */
enum metrics_limit {
	ML_SESSIONS,		/* --max-sessions */
	ML_SESSIONS_PER_PEER,	/* --max-sessions-per-peer */
	ML_SESSIONS_PER_RUNTIME, /* --max-sessions-per-runtime */
	ML_RUNTIMES,		/* --max-runtimes */
	ML_RUNTIMES_PER_PEER,	/* --max-runtimes-per-peer */
	ML_EMFILE,		/* a listener paused: out of descriptors */
	ML_COUNT
};

#define METRICS_MODES	4	/* enum route_mode */

struct metrics {
	/* Counters. */
	uint64_t	 sessions[METRICS_MODES][MO_COUNT];
	uint64_t	 bytes_to_runtime;
	uint64_t	 bytes_to_tool;
	uint64_t	 acl[MS_COUNT][2];	/* [set][allowed] */
	uint64_t	 tls_handshakes;	/* completed */
	uint64_t	 tls_failures;		/* failed or timed out */
	uint64_t	 limits[ML_COUNT];
	uint64_t	 reloads[2];		/* [ok] */
	/* Gauges, filled in when rendered. */
	uint64_t	 open[METRICS_MODES];
	uint64_t	 runtimes_known;
	uint64_t	 runtimes_parked;
	uint64_t	 log_dropped;
	uint64_t	 http_open;
};

/* What dsroute_build_info says. */
struct metrics_build {
	const char	*version;
	const char	*tls;		/* "openssl" or "mbedtls" */
	const char	*tls_version;	/* the library's own words */
};

extern struct metrics	 metrics;

enum metrics_set metrics_set_of(uint8_t);
int		 metrics_render(const struct metrics *,
		    const struct metrics_build *, struct evbuffer *);

#endif /* METRICS_H */
