/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the advertise path: who may offer itself as a runtime, and the
 * claims it makes.  The input is
 *
 *	OPTION=VALUE\n...	endpoint options of a listener (advertise=,
 *				policy=, ROLE=PRINCIPAL, ...), one a line
 *	\0
 *	flags			bit 0 a Unix socket, 1 have_cred, 2 owner=,
 *				3 group=, 4 a v6 address
 *	uid gid self owner group	16 bits each
 *	pid own_pid		32 bits each
 *	address			4 or 16 bytes
 *	bytes...		what the peer sent first, to the end
 *
 * Missing bytes read as zero.  The options go through the real endpoint
 * parser, the first bytes through the real classifier, the decision
 * through acl_decide_advertise().  The same tail also feeds the pure
 * parsers of a default socket's name and of /proc, which the planted
 * socket check trusts.  The harness asserts, independently of acl.c:
 * - only an advertise of pid 1 to 2^31-1 is ever allowed;
 * - on a Unix socket, never without credentials, and never a pid that
 *   is neither the peer's as we see it nor as it sees itself (when known);
 * - with advertise=none, nothing; on the network, only by advertise=any
 *   or an advertise= grant; a "default" allowance only to the router's
 *   uid, root, or the socket's owner= or group=;
 * - a decision says why, and the same input always gets the same one;
 * - a parsed default socket name has a pid of 1 to 2^31-1 and the form
 *   dotnet-diagnostic-[dsrouter-]PID-KEY-socket;
 * - a start time parsed from a stat line is a number after the last ')';
 * - TMPDIR found in an environment block (proc:) is the value of an entry
 *   TMPDIR=... that starts the block or follows a NUL, whole;
 * - what macOS's KERN_PROCARGS2 parser finds (darwin_parse.c) lies within
 *   the bytes, in whole NUL-terminated words, never more than argc.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/ipc.h"
#include "platform/darwin_parse.h"
#include "platform/platform.h"
#include "router/acl.h"
#include "router/endpoint.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

struct reader {
	const uint8_t	*p;
	size_t		 n;
};

static uint32_t
take(struct reader *r, int bytes)
{
	uint32_t	 v = 0;
	int		 i;

	for (i = 0; i < bytes; i++) {
		v |= (uint32_t)(r->n > 0 ? *r->p : 0) << (8 * i);
		if (r->n > 0) {
			r->p++;
			r->n--;
		}
	}
	return (v);
}

/* Parse the options into a listener of the given type; NULL if refused. */
static struct endpoint *
listener(const char *opts, size_t n, int local, int *any, int *none)
{
	static struct endpoint	 ep;
	char			 spec[2048], *line, *p, err[512];
	size_t			 len;

	*any = *none = 0;
	len = snprintf(spec, sizeof(spec), "%s,", local ?
	    "uds:/x/a.sock,listen" : "tcp:127.0.0.1:9,listen");
	if (n > sizeof(spec) - len - 1 || memchr(opts, ',', n) != NULL)
		return (NULL);
	memcpy(spec + len, opts, n);
	spec[len + n] = '\0';
	/* One option a line becomes one after each comma. */
	for (p = spec + len; *p != '\0'; p++) {
		if (*p == '\n')
			*p = ',';
	}
	for (line = spec + len - 1; line != NULL;
	    line = strchr(line + 1, ',')) {
		if (strncmp(line, ",advertise=any", 14) == 0 &&
		    (line[14] == ',' || line[14] == '\0'))
			*any = 1;
		if (strncmp(line, ",advertise=none", 15) == 0 &&
		    (line[15] == ',' || line[15] == '\0'))
			*none = 1;
	}
	if (endpoint_parse(spec, &ep, err, sizeof(err)) == -1)
		return (NULL);
	return (&ep);
}

static void
check_decision(const struct acl_peer *peer, const struct advertise *adv,
    const struct acl_decision *d, int any, int none)
{
	if (d->rule == NULL || d->reason == NULL || d->role_from == NULL)
		abort();
	if (!d->allow)
		return;
	if (adv->pid == 0 || adv->pid > INT32_MAX)
		abort();
	if (none)
		abort();
	if (peer->local && !peer->have_cred)
		abort();
	if (peer->local && peer->pid != 0 && adv->pid != (uint64_t)peer->pid &&
	    adv->pid != (uint64_t)peer->own_pid)
		abort();
	if (!peer->local && !any && strncmp(d->rule, "advertise=", 10) != 0)
		abort();
	if (strncmp(d->rule, "default", 7) == 0 && !(peer->local &&
	    (peer->uid == peer->self_uid || peer->uid == 0 ||
	    (peer->have_owner && peer->uid == peer->owner_uid) ||
	    (peer->have_group && peer->gid == peer->group_gid))))
		abort();
}

/* The TMPDIR of an environment block, checked against a search of its own. */
static void
environ_checks(const uint8_t *data, size_t n)
{
	char	 value[64];
	size_t	 i, vlen;
	int	 rv, seen = 0;

	rv = proc_environ_find((const char *)data, n, "TMPDIR", value,
	    sizeof(value));
	for (i = 0; i + 7 <= n && !seen; i++) {
		if ((i == 0 || data[i - 1] == '\0') &&
		    memcmp(data + i, "TMPDIR=", 7) == 0)
			seen = 1;
	}
	if (rv == 1) {
		vlen = strlen(value);
		if (!seen || vlen >= sizeof(value) ||
		    memmem(data, n, value, vlen) == NULL)
			abort();
	} else if ((rv == 0 && seen) || rv < -1 || rv > 1)
		abort();
}

/*
 * macOS's KERN_PROCARGS2 parser (darwin_parse.c): what it finds is
 * within the bytes, whole words only, never more than argc of them.
 */
static void
procargs_checks(const uint8_t *data, size_t n)
{
	struct darwin_procargs	 pa;
	const char		*b = (const char *)data, *end = b + n;

	if (darwin_procargs_parse(b, n, &pa) == -1)
		return;
	if (pa.argc < 0 || pa.nargs < 0 || pa.nargs > pa.argc ||
	    pa.exec_path < b || pa.exec_path >= end ||
	    memchr(pa.exec_path, '\0', end - pa.exec_path) == NULL ||
	    pa.args < b || pa.args > end || pa.args_len > (size_t)(end -
	    pa.args) || (pa.args_len > 0 && pa.args[pa.args_len - 1] != '\0'))
		abort();
	if (pa.env != NULL && (pa.env < pa.args + pa.args_len ||
	    pa.env_len > (size_t)(end - pa.env) ||
	    (pa.env_len > 0 && pa.env[pa.env_len - 1] != '\0')))
		abort();
}

/* The name and /proc parsers on the same bytes. */
static void
check_parsers(const uint8_t *data, size_t n)
{
	struct default_name	 dn;
	char			*s, *file;
	uint64_t		 start;
	const char		*close;
	pid_t			 own;

	if ((s = malloc(n + 1)) == NULL)
		return;
	memcpy(s, data, n);
	s[n] = '\0';
	if (ipc_default_socket_parse(s, 1, &dn)) {
		file = strrchr(s, '/') != NULL ? strrchr(s, '/') + 1 : s;
		if (dn.pid < 1 || dn.pid > INT32_MAX ||
		    strncmp(file, "dotnet-diagnostic-", 18) != 0 ||
		    strlen(file) < 26 || strcmp(file + strlen(file) - 7,
		    "-socket") != 0 || dn.router != (strncmp(file + 18,
		    "dsrouter-", 9) == 0))
			abort();
	}
	free(s);
	if (proc_stat_starttime((const char *)data, n, &start) == 0) {
		for (close = (const char *)data + n; close > (const char *)data &&
		    close[-1] != ')'; close--)
			;
		if (close == (const char *)data)
			abort();
	}
	own = proc_status_own_pid((const char *)data, n, 4242);
	if (own < 0)
		abort();
	environ_checks(data, n);
	procargs_checks(data, n);
}

int
LLVMFuzzerTestOneInput(const uint8_t *input, size_t size)
{
	struct reader		 r;
	struct endpoint		*ep;
	struct acl_peer		 peer;
	struct sockaddr_in	*sin;
	struct sockaddr_in6	*sin6;
	struct greeting		 g;
	struct acl_decision	 d, again;
	const uint8_t		*nul;
	uint32_t		 flags;
	int			 any, none;

	if ((nul = memchr(input, '\0', size)) == NULL)
		return (0);
	r.p = nul + 1;
	r.n = size - (nul + 1 - input);
	flags = take(&r, 1);
	memset(&peer, 0, sizeof(peer));
	peer.local = flags & 1;
	peer.have_cred = (flags >> 1) & 1;
	peer.have_owner = (flags >> 2) & 1;
	peer.have_group = (flags >> 3) & 1;
	peer.uid = take(&r, 2);
	peer.gid = take(&r, 2);
	peer.self_uid = take(&r, 2);
	peer.owner_uid = take(&r, 2);
	peer.group_gid = take(&r, 2);
	peer.pid = (pid_t)(take(&r, 4) & 0x7fffffff);
	peer.own_pid = (pid_t)(take(&r, 4) & 0x7fffffff);
	if (!peer.local && (flags >> 4) & 1) {
		sin6 = (struct sockaddr_in6 *)&peer.addr;
		sin6->sin6_family = AF_INET6;
		memcpy(&sin6->sin6_addr, r.p, r.n < 16 ? r.n : 16);
		(void)take(&r, 4), (void)take(&r, 4), (void)take(&r, 4),
		    (void)take(&r, 4);
	} else if (!peer.local) {
		sin = (struct sockaddr_in *)&peer.addr;
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(take(&r, 4));
	}
	check_parsers(r.p, r.n);

	ipc_classify(r.p, r.n, &g);
	if (g.kind != GREETING_ADVERTISE)
		return (0);
	if ((ep = listener((const char *)input, nul - input, peer.local, &any,
	    &none)) == NULL)
		return (0);
	acl_decide_advertise(ep->policy, &peer, &g.advertise, &d);
	check_decision(&peer, &g.advertise, &d, any, none);
	acl_decide_advertise(ep->policy, &peer, &g.advertise, &again);
	if (again.allow != d.allow || strcmp(again.rule, d.rule) != 0)
		abort();
	endpoint_clear(ep);
	return (0);
}
