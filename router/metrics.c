/* SPDX-License-Identifier: ISC */

/*
 * The counters behind /metrics, and their text.  The engine bumps a
 * counter where a thing happens once (a session's close, a judgement, a
 * handshake's end, a refusal); the bytes of a session are added at its
 * close from the counts it keeps anyway, so the data path does no work
 * for metrics.  metrics_render() is pure: it writes a snapshot in the
 * Prometheus text exposition format (version 0.0.4), every family with
 * its HELP and TYPE lines, so that the unit test can read it.
 */

#include "config.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/ipc.h"
#include "router/metrics.h"

struct metrics	 metrics;

static const char *const mode_names[METRICS_MODES] = {
	"client-server", "server-server", "server-client", "client-client"
};

static const char *const outcome_names[MO_COUNT] = {
	[MO_COMPLETED] = "completed",
	[MO_DENIED] = "denied",
	[MO_REFUSED] = "refused",
	[MO_TIMEOUT] = "timeout",
	[MO_PARKED] = "parked",
	[MO_ERROR] = "error",
};

static const char *const set_names[MS_COUNT] = {
	[MS_DUMP] = "dump",
	[MS_EVENTPIPE] = "eventpipe",
	[MS_PROFILER] = "profiler",
	[MS_PROCESS] = "process",
	[MS_OTHER] = "other",
	[MS_ADVERTISE] = "advertise",
};

static const char *const limit_names[ML_COUNT] = {
	[ML_SESSIONS] = "max-sessions",
	[ML_SESSIONS_PER_PEER] = "max-sessions-per-peer",
	[ML_SESSIONS_PER_RUNTIME] = "max-sessions-per-runtime",
	[ML_RUNTIMES] = "max-runtimes",
	[ML_RUNTIMES_PER_PEER] = "max-runtimes-per-peer",
	[ML_EMFILE] = "descriptors",
};

/* The set label of a command header's command set. */
enum metrics_set
metrics_set_of(uint8_t set)
{
	switch (set) {
	case IPC_SET_DUMP:
		return (MS_DUMP);
	case IPC_SET_EVENTPIPE:
		return (MS_EVENTPIPE);
	case IPC_SET_PROFILER:
		return (MS_PROFILER);
	case IPC_SET_PROCESS:
		return (MS_PROCESS);
	default:
		return (MS_OTHER);
	}
}

/* The HELP and TYPE lines of a family. */
static void
family(struct evbuffer *b, const char *name, const char *type,
    const char *help)
{
	evbuffer_add_printf(b, "# HELP dsroute_%s %s\n# TYPE dsroute_%s %s\n",
	    name, help, name, type);
}

/* A label value as the format quotes it: \ " and newline escaped. */
static void
label_value(struct evbuffer *b, const char *v)
{
	for (; *v != '\0'; v++) {
		if (*v == '\\' || *v == '"')
			evbuffer_add_printf(b, "\\%c", *v);
		else if (*v == '\n')
			evbuffer_add(b, "\\n", 2);
		else
			evbuffer_add(b, v, 1);
	}
}

/*
 * Write m and the build's facts into b in the Prometheus text format.
 * Return -1 if memory ran out (b then holds a part).
 */
int
metrics_render(const struct metrics *m, const struct metrics_build *bi,
    struct evbuffer *b)
{
	int	 i, j;

	family(b, "build_info", "gauge", "The version and TLS library of "
	    "this dsroute; always 1.");
	evbuffer_add_printf(b, "dsroute_build_info{version=\"");
	label_value(b, bi->version);
	evbuffer_add_printf(b, "\",tls=\"");
	label_value(b, bi->tls);
	evbuffer_add_printf(b, "\",tls_version=\"");
	label_value(b, bi->tls_version);
	evbuffer_add_printf(b, "\"} 1\n");

	family(b, "sessions_open", "gauge", "Sessions open now, by the mode "
	    "of their route.");
	for (i = 0; i < METRICS_MODES; i++)
		evbuffer_add_printf(b, "dsroute_sessions_open{mode=\"%s\"} "
		    "%" PRIu64 "\n", mode_names[i], m->open[i]);

	family(b, "sessions_total", "counter", "Sessions ended, by the mode "
	    "of their route and how they ended.");
	for (i = 0; i < METRICS_MODES; i++) {
		for (j = 0; j < MO_COUNT; j++)
			evbuffer_add_printf(b, "dsroute_sessions_total{mode="
			    "\"%s\",outcome=\"%s\"} %" PRIu64 "\n",
			    mode_names[i], outcome_names[j],
			    m->sessions[i][j]);
	}

	family(b, "bytes_total", "counter", "Bytes forwarded by sessions "
	    "that ended, by direction.");
	evbuffer_add_printf(b, "dsroute_bytes_total{direction=\"to_runtime\"} "
	    "%" PRIu64 "\n", m->bytes_to_runtime);
	evbuffer_add_printf(b, "dsroute_bytes_total{direction=\"to_tool\"} "
	    "%" PRIu64 "\n", m->bytes_to_tool);

	family(b, "runtimes_known", "gauge", "Runtimes known by their "
	    "cookie.");
	evbuffer_add_printf(b, "dsroute_runtimes_known %" PRIu64 "\n",
	    m->runtimes_known);
	family(b, "runtimes_parked", "gauge", "Runtime connections parked, "
	    "waiting for a tool.");
	evbuffer_add_printf(b, "dsroute_runtimes_parked %" PRIu64 "\n",
	    m->runtimes_parked);

	family(b, "acl_decisions_total", "counter", "First messages judged, "
	    "by command set and decision.");
	for (i = 0; i < MS_COUNT; i++) {
		for (j = 1; j >= 0; j--)
			evbuffer_add_printf(b, "dsroute_acl_decisions_total{"
			    "set=\"%s\",decision=\"%s\"} %" PRIu64 "\n",
			    set_names[i], j ? "allow" : "deny", m->acl[i][j]);
	}

	family(b, "tls_handshakes_total", "counter", "TLS handshakes "
	    "completed by sessions.");
	evbuffer_add_printf(b, "dsroute_tls_handshakes_total %" PRIu64 "\n",
	    m->tls_handshakes);
	family(b, "tls_handshake_failures_total", "counter", "TLS "
	    "handshakes of sessions that failed or timed out.");
	evbuffer_add_printf(b, "dsroute_tls_handshake_failures_total "
	    "%" PRIu64 "\n", m->tls_failures);

	family(b, "limit_hits_total", "counter", "Connections refused by a "
	    "limit, and listeners paused for want of descriptors.");
	for (i = 0; i < ML_COUNT; i++)
		evbuffer_add_printf(b, "dsroute_limit_hits_total{limit=\"%s\"} "
		    "%" PRIu64 "\n", limit_names[i], m->limits[i]);

	family(b, "reloads_total", "counter", "SIGHUP reloads, by result.");
	evbuffer_add_printf(b, "dsroute_reloads_total{result=\"ok\"} "
	    "%" PRIu64 "\n", m->reloads[1]);
	evbuffer_add_printf(b, "dsroute_reloads_total{result=\"failed\"} "
	    "%" PRIu64 "\n", m->reloads[0]);

	family(b, "log_lines_dropped_total", "counter", "Log lines dropped "
	    "because standard error did not take them.");
	evbuffer_add_printf(b, "dsroute_log_lines_dropped_total %" PRIu64 "\n",
	    m->log_dropped);

	family(b, "metrics_connections_open", "gauge", "Connections to this "
	    "metrics endpoint open now.");
	return (evbuffer_add_printf(b, "dsroute_metrics_connections_open "
	    "%" PRIu64 "\n", m->http_open) < 0 ? -1 : 0);
}
