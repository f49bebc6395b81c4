/* SPDX-License-Identifier: ISC */

/*
 * Unit tests of metrics_render(): the Prometheus text format as its
 * parsers read it.  Every sample belongs to a family that has one HELP
 * and one TYPE line before it, each counter lands on its own labels,
 * label values are escaped, and no sample is written twice.
 */

#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "common/ipc.h"
#include "router/metrics.h"
#include "tap.h"

static char	*text;

static int
has_line(const char *line)
{
	const char	*p = text;
	size_t		 n = strlen(line);

	while ((p = strstr(p, line)) != NULL) {
		if ((p == text || p[-1] == '\n') && p[n] == '\n')
			return (1);
		p += n;
	}
	return (0);
}

static int
count_prefix(const char *prefix)
{
	const char	*p = text;
	int		 n = 0;

	for (; p != NULL && *p != '\0'; p = strchr(p, '\n'), p = p ? p + 1 :
	    NULL) {
		if (strncmp(p, prefix, strlen(prefix)) == 0)
			n++;
	}
	return (n);
}

/* Every sample's family was declared before it, once, HELP then TYPE. */
static void
check_families(void)
{
	char	*copy = strdup(text), *line, *save = NULL;
	char	 declared[64][64], name[64], *e;
	int	 ndeclared = 0, bad = 0, i, nhelp = 0, ntype = 0, found;
	char	*seen[512];
	int	 nseen = 0, dup = 0, j;

	for (line = strtok_r(copy, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save)) {
		if (strncmp(line, "# HELP ", 7) == 0) {
			nhelp++;
			continue;
		}
		if (strncmp(line, "# TYPE ", 7) == 0) {
			ntype++;
			if (sscanf(line + 7, "%63s", declared[ndeclared]) == 1 &&
			    ndeclared < 63)
				ndeclared++;
			continue;
		}
		snprintf(name, sizeof(name), "%s", line);
		if ((e = strpbrk(name, "{ ")) != NULL)
			*e = '\0';
		for (i = 0, found = 0; i < ndeclared; i++)
			found |= strcmp(declared[i], name) == 0;
		if (!found || strncmp(name, "dsroute_", 8) != 0) {
			bad++;
			printf("# undeclared: %s\n", line);
		}
		e = strrchr(line, ' ');
		if (e == NULL || strspn(e + 1, "0123456789") !=
		    strlen(e + 1) || e[1] == '\0')
			bad++;
		for (j = 0; j < nseen; j++)
			dup += strncmp(seen[j], line, e - line) == 0 &&
			    seen[j][e - line] == ' ';
		if (nseen < 512)
			seen[nseen++] = line;
	}
	ok(bad == 0, "every sample is in a declared dsroute_ family, with a "
	    "whole number");
	ok(dup == 0, "no sample is written twice");
	ok(nhelp == ntype && nhelp == ndeclared && nhelp >= 12,
	    "one HELP and one TYPE per family (%d, %d)", nhelp, ntype);
	free(copy);
}

static void
render(const struct metrics *m, const struct metrics_build *bi)
{
	struct evbuffer	*b = evbuffer_new();
	size_t		 n;

	ok(b != NULL && metrics_render(m, bi, b) == 0, "it renders");
	n = evbuffer_get_length(b);
	free(text);
	text = malloc(n + 1);
	evbuffer_remove(b, text, n);
	text[n] = '\0';
	evbuffer_free(b);
}

int
main(void)
{
	struct metrics		 m;
	struct metrics_build	 bi = { "1.2.3", "openssl", "OpenSSL 3" };
	struct metrics_build	 odd = { "1\"2\\3\n4", "x", "y" };
	int			 i, j;

	memset(&m, 0, sizeof(m));
	render(&m, &bi);
	check_families();
	ok(has_line("dsroute_build_info{version=\"1.2.3\",tls=\"openssl\","
	    "tls_version=\"OpenSSL 3\"} 1"), "build info, always 1");
	ok(has_line("# TYPE dsroute_sessions_total counter") &&
	    has_line("# TYPE dsroute_sessions_open gauge") &&
	    has_line("# TYPE dsroute_build_info gauge"), "types");
	ok(count_prefix("dsroute_sessions_total{") == METRICS_MODES * MO_COUNT,
	    "every mode and outcome, zeros too");
	ok(count_prefix("dsroute_acl_decisions_total{") == MS_COUNT * 2,
	    "every set and decision");
	ok(count_prefix("dsroute_limit_hits_total{") == ML_COUNT,
	    "every limit");

	/* Distinct values, each to be found on its own labels. */
	for (i = 0; i < METRICS_MODES; i++)
		for (j = 0; j < MO_COUNT; j++)
			m.sessions[i][j] = 1000 + i * 10 + j;
	m.acl[MS_EVENTPIPE][1] = 77;
	m.acl[MS_DUMP][0] = 78;
	m.bytes_to_runtime = 12345678901ULL;
	m.bytes_to_tool = 42;
	m.limits[ML_SESSIONS_PER_PEER] = 5;
	m.limits[ML_EMFILE] = 6;
	m.reloads[1] = 3;
	m.reloads[0] = 4;
	m.open[2] = 9;
	m.log_dropped = 11;
	m.tls_failures = 12;
	m.runtimes_parked = 13;
	render(&m, &bi);
	check_families();
	ok(has_line("dsroute_sessions_total{mode=\"server-server\","
	    "outcome=\"denied\"} 1011"), "sessions by mode and outcome");
	ok(has_line("dsroute_sessions_total{mode=\"client-client\","
	    "outcome=\"error\"} 1035"), "... the last of them");
	ok(has_line("dsroute_acl_decisions_total{set=\"eventpipe\","
	    "decision=\"allow\"} 77") &&
	    has_line("dsroute_acl_decisions_total{set=\"dump\","
	    "decision=\"deny\"} 78"), "ACL decisions by set");
	ok(has_line("dsroute_bytes_total{direction=\"to_runtime\"} "
	    "12345678901") &&
	    has_line("dsroute_bytes_total{direction=\"to_tool\"} 42"),
	    "bytes each way, beyond 32 bits");
	ok(has_line("dsroute_limit_hits_total{limit=\"max-sessions-per-peer\"} "
	    "5") && has_line("dsroute_limit_hits_total{limit=\"descriptors\"} "
	    "6"), "limit hits");
	ok(has_line("dsroute_reloads_total{result=\"ok\"} 3") &&
	    has_line("dsroute_reloads_total{result=\"failed\"} 4"), "reloads");
	ok(has_line("dsroute_sessions_open{mode=\"server-client\"} 9"),
	    "sessions open by mode");
	ok(has_line("dsroute_log_lines_dropped_total 11") &&
	    has_line("dsroute_tls_handshake_failures_total 12") &&
	    has_line("dsroute_runtimes_parked 13"), "the rest");

	render(&m, &odd);
	ok(has_line("dsroute_build_info{version=\"1\\\"2\\\\3\\n4\","
	    "tls=\"x\",tls_version=\"y\"} 1"), "label values are escaped");

	ok(metrics_set_of(IPC_SET_DUMP) == MS_DUMP &&
	    metrics_set_of(IPC_SET_EVENTPIPE) == MS_EVENTPIPE &&
	    metrics_set_of(IPC_SET_PROFILER) == MS_PROFILER &&
	    metrics_set_of(IPC_SET_PROCESS) == MS_PROCESS &&
	    metrics_set_of(IPC_SET_SERVER) == MS_OTHER &&
	    metrics_set_of(0x42) == MS_OTHER, "command sets");
	free(text);
	return (tap_done());
}
