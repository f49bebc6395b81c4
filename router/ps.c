/* SPDX-License-Identifier: ISC */

/*
 * dsroute ps: the runtimes a router knows, as a table or JSON lines.
 * With an ENDPOINT, ask the router there: dial it with its transport's
 * own operations, send LIST and read ENTRY frames up to the END
 * (docs/extension.md), in one poll() loop under one deadline.  Without
 * one, or with dir:[PATH], list the local mirror in PATH from its socket
 * files and its stand-ins' command lines, and ask the mirror for the
 * apps' own command lines, which no stand-in shows, with a LIST through
 * one of those files; where dir: is not available (Windows) there is no
 * mirror, and an ENDPOINT is needed.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "common/ipc.h"
#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/endpoint.h"
#include "router/ext.h"
#include "router/frontend.h"
#include "transports/transport.h"

#define PS_TIMEOUT_MS	5000
#define PS_RUNTIMES_MAX	10000		/* a listing longer is refused */
#define PS_READ_MAX	(2 * IPC_MESSAGE_MAX)
#define MAXV(a, b)	((a) > (b) ? (a) : (b))

/*
 * A stand-in of the local mirror, as its directory and /proc show it,
 * and its command line as the mirror lists it.
 */
struct standin_row {
	long		 spid;		/* the stand-in's */
	uint64_t	 pid;		/* the runtime's */
	char		 name[64];
	char		 where[160];
	char		 port[1040];	/* --diagnostic-port */
	char		 stable[1024];	/* its dsroute- name, or "" */
	char		 cookie8[9];	/* in that name */
	int		 asked;		/* its mirror was asked */
	char		 cmdline[1024];
};

static int		 json;
static int		 timeout_ms = PS_TIMEOUT_MS;
static uint64_t		 deadline;
static const char	*phase;		/* what a time-out interrupted */
/* Static, so that nothing is left unreachable when die() exits. */
static uint8_t		 rbuf[PS_READ_MAX];
static struct ext_runtime *runtimes;
static struct standin_row *rows;
static char		**files;
static struct endpoint	 router;	/* the one ps dials */
static struct stream	 rconn;
static char		 ps_why[512];	/* why the listing failed */

/* The usage; a system without dir: (Windows) has no mirror to list. */
static void __dead
ps_usage(int status)
{
	int	 mirror = transport_unavailable("dir:") == NULL;

	fprintf(status == 0 ? stdout : stderr,
	    "usage: dsroute ps [--json] [--timeout T] %s\n"
	    "\n"
	    "  ENDPOINT        a router to ask, as a tool dials it: "
	    "tcp:HOST:PORT,\n"
	    "                  tls:HOST:PORT,ca=F[,cert=F,key=F]%s\n"
	    "%s"
	    "  --json          one JSON object per runtime per line\n"
	    "  --timeout T     give up on the router after T (5s)\n"
	    "\n"
	    "See dsroute(1), LISTING RUNTIMES.\n",
	    mirror ? "[ENDPOINT | dir:[PATH]]" : "ENDPOINT",
	    transport_unavailable("uds:") == NULL ? ", uds:PATH" : "",
	    mirror ? "  dir:[PATH]      the local mirror in PATH (the default, "
	    "in $TMPDIR or /tmp)\n" : "");
	exit(status);
}

static void __dead
die(const char *fmt, ...) __attribute__((__format__(__printf__, 1, 2)));

/* One line on standard error, and exit 1. */
static void __dead
die(const char *fmt, ...)
{
	va_list	 ap;

	fprintf(stderr, "dsroute ps: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\n");
	exit(1);
}

static int
fail(const char *fmt, ...) __attribute__((__format__(__printf__, 1, 2)));

/* Say why in ps_why, for the caller to tell or not, and return -1. */
static int
fail(const char *fmt, ...)
{
	va_list	 ap;

	va_start(ap, fmt);
	vsnprintf(ps_why, sizeof(ps_why), fmt, ap);
	va_end(ap);
	return (-1);
}

/* Print s, cut to room characters (UTF-8) when room is not 0. */
static void
print_cut(const char *s, size_t room)
{
	size_t	 i, chars = 0;

	if (room == 0) {
		printf("%s\n", s);
		return;
	}
	for (i = 0; s[i] != '\0'; i++) {
		if (((unsigned char)s[i] & 0xc0) != 0x80 && chars++ == room)
			break;
	}
	printf("%.*s\n", (int)i, s);
}

/* Print "key":"value" escaped for JSON, after a comma unless first. */
static void
json_field(const char *key, const char *value, int first)
{
	static char	 buf[6 * 1024 + 1];
	size_t		 used, n;

	n = json_escape(buf, sizeof(buf), value, strlen(value), &used);
	printf("%s\"%s\":\"%.*s\"", first ? "" : ",", key, (int)n, buf);
}

/* Wait until fd is ready for events, within the deadline. */
static int
ps_wait(int fd, short events)
{
	struct pollfd	 pfd;
	uint64_t	 now;
	int		 rv;

	pfd.fd = fd;
	pfd.events = events;
	for (;;) {
		if ((now = now_ms()) >= deadline)
			return (fail("no answer within %d ms while %s",
			    timeout_ms, phase));
		rv = poll(&pfd, 1, (int)(deadline - now));
		if (rv > 0)
			return (0);
		if (rv == -1 && errno != EINTR)
			return (fail("poll: %s", strerror(errno)));
	}
}

/* Wait as a stream operation that returned want asks. */
static int
ps_want(struct stream *c, ssize_t want)
{
	return (ps_wait(c->fd, want == IO_WANT_WRITE ? POLLOUT : POLLIN));
}

/* Dial the router and run the transport's handshake. */
static int
ps_connect(struct endpoint *ep, struct stream *c)
{
	char		 why[256];
	socklen_t	 len;
	int		 fd, pending, error, rv;

	phase = "resolving";
	if (ep->transport->resolve != NULL &&
	    ep->transport->resolve(ep, why, sizeof(why)) == -1)
		return (fail("%s: %s", ep->spec, why));
	if (ep->transport->prepare != NULL &&
	    ep->transport->prepare(ep, why, sizeof(why)) == -1)
		return (fail("%s: %s", ep->spec, why));
	memset(c, 0, sizeof(*c));
	c->endpoint = ep;
	c->transport = ep->transport;
	c->fd = -1;

	phase = "connecting";
	if ((fd = ep->transport->dial(ep, &pending)) == -1)
		return (fail("%s: connect: %s", ep->spec, strerror(errno)));
	c->fd = fd;
	if (pending) {
		if (ps_wait(fd, POLLOUT) == -1)
			return (-1);
		len = sizeof(error);
		if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &error, &len) == -1)
			error = errno;
		if (error != 0)
			return (fail("%s: connect: %s", ep->spec,
			    strerror(error)));
	}
	if (ep->transport->setup(c, 0) == -1)
		return (fail("%s: %s", ep->spec, stream_error(c)));

	phase = "in the handshake";
	while ((rv = ep->transport->handshake(c)) != 0) {
		if (rv != IO_WANT_READ && rv != IO_WANT_WRITE)
			return (fail("%s: handshake: %s", ep->spec,
			    stream_error(c)));
		if (ps_want(c, rv) == -1)
			return (-1);
	}
	return (0);
}

/* Send all of buf. */
static int
ps_send(struct stream *c, const uint8_t *buf, size_t len)
{
	ssize_t	 n;

	phase = "sending the request";
	while (len > 0) {
		n = c->transport->write(c, buf, len);
		if (n > 0) {
			buf += n;
			len -= n;
		} else if (n != IO_WANT_READ && n != IO_WANT_WRITE)
			return (fail("%s: send: %s", c->endpoint->spec,
			    stream_error(c)));
		else if (ps_want(c, n) == -1)
			return (-1);
	}
	return (0);
}

/* Read what is there into buf after *have bytes; EOF is a failure. */
static int
ps_receive(struct stream *c, uint8_t *buf, size_t *have, size_t room)
{
	ssize_t	 n;

	for (;;) {
		n = c->transport->read(c, buf + *have, room - *have);
		if (n > 0) {
			*have += n;
			return (0);
		}
		if (n == IO_EOF)
			return (fail("%s: the connection closed before the "
			    "end of the listing", c->endpoint->spec));
		if (n != IO_WANT_READ && n != IO_WANT_WRITE)
			return (fail("%s: receive: %s", c->endpoint->spec,
			    stream_error(c)));
		if (ps_want(c, n) == -1)
			return (-1);
	}
}

/* Explain a refusal of the listing. */
static int
ps_refused(const char *spec, uint32_t hresult)
{
	const char	*name = ipc_hresult_name(hresult);
	char		 what[96];

	snprintf(what, sizeof(what), "0x%08" PRIx32 "%s%s", hresult,
	    name != NULL ? " " : "", name != NULL ? name : "");
	if (hresult == HRESULT_UNKNOWN_COMMAND)
		return (fail("%s is not a dsroute router, or one too old to "
		    "list its runtimes (%s)", spec, what));
	if (hresult == HRESULT_ACCESS_DENIED)
		return (fail("the router refused the listing (%s): the "
		    "listing needs the observe role", what));
	return (fail("the router refused the listing (%s)", what));
}

/* Order runtimes by pid, then by where they were found. */
static int
runtime_cmp(const void *a, const void *b)
{
	const struct ext_runtime	*x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid < y->pid ? -1 : 1);
	return (strcmp(x->where, y->where));
}

/* The FOUND column: how, and how many routers away. */
static void
found_label(const struct ext_runtime *er, char *buf, size_t len)
{
	const char	*name = ext_found_name(er->found);
	char		 how[16];

	if (name == NULL) {
		snprintf(how, sizeof(how), "?%u", er->found);
		name = how;
	}
	if (er->hops > 0)
		snprintf(buf, len, "%s+%u", name, er->hops);
	else
		snprintf(buf, len, "%s", name);
}

static void
print_runtimes(struct ext_runtime *rt, size_t n)
{
	char	 pid[24], found[32], cookie[33];
	size_t	 i, wpid = 3, wname = 4, wfound = 5, wver = 7, used, room;

	if (n > 0)
		qsort(rt, n, sizeof(*rt), runtime_cmp);
	if (json) {
		for (i = 0; i < n; i++) {
			ipc_cookie_hex(rt[i].cookie, cookie);
			printf("{\"pid\":%" PRIu64, rt[i].pid);
			json_field("name", rt[i].app, 0);
			json_field("found", ext_found_name(rt[i].found) != NULL ?
			    ext_found_name(rt[i].found) : "unknown", 0);
			printf(",\"hops\":%u", rt[i].hops);
			json_field("version", rt[i].version, 0);
			json_field("os", rt[i].os, 0);
			json_field("arch", rt[i].arch, 0);
			json_field("where", rt[i].where, 0);
			json_field("cookie", cookie, 0);
			json_field("cmdline", rt[i].cmdline, 0);
			printf("}\n");
		}
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(pid, sizeof(pid), "%" PRIu64, rt[i].pid);
		found_label(&rt[i], found, sizeof(found));
		wpid = MAXV(wpid, strlen(pid));
		wname = MAXV(wname, strlen(rt[i].app));
		wfound = MAXV(wfound, strlen(found));
		wver = MAXV(wver, strlen(rt[i].version));
	}
	used = wpid + wname + wfound + wver + 8;
	room = platform_term_columns();
	room = room == 0 ? 0 : room > used + 8 ? room - used : 8;
	printf("%*s  %-*s  %-*s  %-*s  ", (int)wpid, "PID", (int)wname, "NAME",
	    (int)wfound, "FOUND", (int)wver, "VERSION");
	print_cut("COMMAND LINE", room);
	for (i = 0; i < n; i++) {
		found_label(&rt[i], found, sizeof(found));
		printf("%*" PRIu64 "  %-*s  %-*s  %-*s  ", (int)wpid, rt[i].pid,
		    (int)wname, rt[i].app, (int)wfound, found, (int)wver,
		    rt[i].version);
		print_cut(rt[i].cmdline, room);
	}
}

/* Make router the endpoint spec, to dial.  Return -1 with ps_why. */
static int
ps_router(const char *spec)
{
	char	 err[256];

	memset(&rconn, 0, sizeof(rconn));
	rconn.fd = -1;
	/* Its role is connect before the checks of its options run. */
	memset(&router, 0, sizeof(router));
	if (endpoint_parse_part(spec, &router, err, sizeof(err)) == -1)
		return (fail("%s", err));
	if (router.role == ROLE_LISTEN)
		return (fail("%s: ps dials the router; leave out listen",
		    spec));
	/* ps waits with poll(), which a pipe: handle is not for. */
	if (router.transport->own_events)
		return (fail("%s: ps cannot dial a %s: router yet; give one of "
		    "its tcp: or tls: endpoints", spec,
		    router.transport->name));
	router.role = ROLE_CONNECT;
	if ((router.transport->check != NULL &&
	    router.transport->check(&router, err, sizeof(err)) == -1) ||
	    endpoint_check_role(&router, err, sizeof(err)) == -1)
		return (fail("%s: %s", spec, err));
	return (0);
}

/*
 * Ask router for its runtimes, into runtimes[0] to runtimes[*np - 1],
 * within the deadline.  Return -1 with the reason in ps_why.
 */
static int
ps_list(const char *spec, size_t *np)
{
	struct ext_runtime	 er;
	enum ext_reply_kind	 kind;
	uint8_t			 req[EXT_LIST_LEN], *buf = rbuf;
	size_t			 have = 0, used, n = 0, cap = 0;
	uint32_t		 count = 0, hresult = 0;
	void			*p;

	*np = 0;
	if (ps_connect(&router, &rconn) == -1)
		return (-1);
	ext_list_request(req);
	if (ps_send(&rconn, req, sizeof(req)) == -1)
		return (-1);

	phase = "waiting for the listing";
	for (;;) {
		kind = ext_reply_parse(buf, have, &used, &er, &count, &hresult);
		if (kind == EXT_REPLY_MORE) {
			if (ps_receive(&rconn, buf, &have, PS_READ_MAX) == -1)
				return (-1);
			continue;
		}
		if (kind == EXT_REPLY_INVALID && !ipc_magic_prefix(buf, have))
			return (fail("%s does not speak the diagnostic "
			    "protocol: it answered with other bytes", spec));
		if (kind == EXT_REPLY_INVALID)
			return (fail("%s did not answer as a dsroute router: "
			    "not a listing", spec));
		if (kind == EXT_REPLY_ERROR)
			return (ps_refused(spec, hresult));
		if (kind == EXT_REPLY_END)
			break;
		if (n == PS_RUNTIMES_MAX)
			return (fail("%s: more than %d runtimes listed", spec,
			    PS_RUNTIMES_MAX));
		if (n == cap) {
			cap = cap == 0 ? 16 : cap * 2;
			if ((p = reallocarray(runtimes, cap,
			    sizeof(*runtimes))) == NULL)
				return (fail("out of memory"));
			runtimes = p;
		}
		runtimes[n++] = er;
		memmove(buf, buf + used, have - used);
		have -= used;
	}
	if (count != n)
		return (fail("%s: the listing ended after %zu of its %" PRIu32
		    " runtimes", spec, n, count));
	*np = n;
	return (0);
}

/* Hang up on the router and forget it. */
static void
ps_hangup(void)
{
	if (rconn.fd != -1) {
		rconn.transport->teardown(&rconn);
		transport_close(rconn.transport, rconn.fd);
		rconn.fd = -1;
	}
	if (router.transport != NULL && router.transport->release != NULL)
		router.transport->release(&router);
	endpoint_clear(&router);
}

/* Ask the router at spec for its runtimes and print them. */
static int
ps_remote(const char *spec)
{
	size_t	 n;

	if (ps_router(spec) == -1)
		die("%s", ps_why);
	deadline = now_ms() + timeout_ms;
	if (ps_list(spec, &n) == -1)
		die("%s", ps_why);
	ps_hangup();

	if (n == 0 && !json)
		fprintf(stderr, "dsroute ps: %s knows no runtime: none has "
		    "dialled it, and it finds none with dir: or proc:\n",
		    spec);
	else
		print_runtimes(runtimes, n);
	free(runtimes);
	runtimes = NULL;
	return (0);
}

/*
 * Read a stand-in's command line: the app's name, then "[dsroute
 * stand-in for pid N on ENDPOINT]".  Return -1 if spid is no stand-in of
 * ours (gone, or a dotnet-dsrouter's socket).
 */
static int
standin_read(long spid, struct standin_row *r)
{
	static char	 args[8192];
	static const char *const marks[] = {
		"[dsroute", "stand-in", "for", "pid"
	};
	char		*w[8], *p, *end, where[sizeof(r->where)];
	ssize_t		 len;
	size_t		 i, o;
	int		 last;

	if (!platform_pid_alive((pid_t)spid))
		return (-1);
	if ((len = proc_cmdline_get((pid_t)spid, args, sizeof(args))) <= 0)
		return (-1);
	end = args + len;
	for (p = args, i = 0; i < 7 && p < end; i++) {
		w[i] = p;
		p += strlen(p) + 1;
	}
	if (i < 7)
		return (-1);
	for (i = 0; i < 4; i++) {
		if (strcmp(w[i + 1], marks[i]) != 0)
			return (-1);
	}
	r->pid = strtoull(w[5], &end, 10);
	if (w[5][0] < '0' || w[5][0] > '9' || *end != '\0' ||
	    strcmp(w[6], "on") != 0)
		return (-1);
	end = args + len;
	ext_text(r->name, sizeof(r->name), (uint8_t *)w[0], strlen(w[0]));

	/* The endpoint, up to the word that ends in ']'. */
	o = 0;
	while (p < end) {
		i = strlen(p);
		last = i > 0 && p[i - 1] == ']';
		if (last)
			i--;
		if (o > 0 && o < sizeof(where))
			where[o++] = ' ';
		if (i > sizeof(where) - o)
			i = sizeof(where) - o;
		memcpy(where + o, p, i);
		o += i;
		p += strlen(p) + 1;
		if (last)
			break;
	}
	ext_text(r->where, sizeof(r->where), (uint8_t *)where, o);
	return (0);
}

/* Order stand-ins by the runtime's pid, then by their own. */
static int
standin_cmp(const void *a, const void *b)
{
	const struct standin_row	*x = a, *y = b;

	if (x->pid != y->pid)
		return (x->pid < y->pid ? -1 : 1);
	return (x->spid < y->spid ? -1 : x->spid > y->spid);
}

/* Is file the dsroute-NAME-PID-COOKIE8-socket of r? */
static int
port_name_of(const char *file, const struct standin_row *r)
{
	char	 prefix[128];
	size_t	 n, i;

	n = (size_t)snprintf(prefix, sizeof(prefix), "dsroute-%s-%" PRIu64 "-",
	    r->name, r->pid);
	if (n >= sizeof(prefix) || strncmp(file, prefix, n) != 0 ||
	    strlen(file) != n + 8 + 7 || strcmp(file + n + 8, "-socket") != 0)
		return (0);
	for (i = 0; i < 8; i++) {
		if (strchr("0123456789abcdef", file[n + i]) == NULL)
			return (0);
	}
	return (1);
}

/* Is er the runtime r stands for: its pid, its cookie's first 8 digits? */
static int
row_of(const struct standin_row *r, const struct ext_runtime *er)
{
	char	 cookie[33];

	ipc_cookie_hex(er->cookie, cookie);
	return (r->cookie8[0] != '\0' && er->pid == r->pid &&
	    strncmp(cookie, r->cookie8, 8) == 0);
}

/* Give the rows from r on the command lines of the nrt runtimes listed. */
static void
fill_cmdlines(struct standin_row *r, size_t n, size_t nrt)
{
	size_t	 i, k;

	for (i = 0; i < n; i++) {
		for (k = 0; k < nrt && !r[i].asked; k++) {
			if (!row_of(&r[i], &runtimes[k]))
				continue;
			snprintf(r[i].cmdline, sizeof(r[i].cmdline), "%s",
			    runtimes[k].cmdline);
			r[i].asked = 1;
		}
	}
}

/*
 * The apps' command lines, which no stand-in shows (mirror.c), from the
 * mirrors: one LIST through a row's dsroute- name answers for every
 * runtime of its mirror.  That name is 0600 and the mirror's ACL judges
 * the LIST, so a user who may not see a command line is not shown it; a
 * row whose mirror cannot be asked, for that or any reason, has none.
 */
static void
ask_cmdlines(struct standin_row *r, size_t n)
{
	char	 spec[sizeof(r->stable) + 8];
	size_t	 i, nrt;

	for (i = 0; i < n; i++) {
		if (r[i].asked || r[i].stable[0] == '\0')
			continue;
		snprintf(spec, sizeof(spec), "uds:%s", r[i].stable);
		if (ps_router(spec) == 0 && ps_list(spec, &nrt) == 0)
			fill_cmdlines(r + i, n - i, nrt);
		r[i].asked = 1;
		ps_hangup();
		free(runtimes);
		runtimes = NULL;
	}
}

static void
print_standins(struct standin_row *r, size_t n)
{
	char	 spid[24], pid[24];
	size_t	 i, ws = 8, wp = 3, wn = 4, ww = 5, wd = 15, used, room;

	if (n > 0)
		qsort(r, n, sizeof(*r), standin_cmp);
	if (json) {
		for (i = 0; i < n; i++) {
			printf("{\"standin_pid\":%ld,\"pid\":%" PRIu64,
			    r[i].spid, r[i].pid);
			json_field("name", r[i].name, 0);
			json_field("where", r[i].where, 0);
			json_field("diagnostic_port", r[i].port, 0);
			json_field("cmdline", r[i].cmdline, 0);
			printf("}\n");
		}
		return;
	}
	for (i = 0; i < n; i++) {
		snprintf(spid, sizeof(spid), "%ld", r[i].spid);
		snprintf(pid, sizeof(pid), "%" PRIu64, r[i].pid);
		ws = MAXV(ws, strlen(spid));
		wp = MAXV(wp, strlen(pid));
		wn = MAXV(wn, strlen(r[i].name));
		ww = MAXV(ww, strlen(r[i].where));
		wd = MAXV(wd, strlen(r[i].port));
	}
	used = ws + wp + wn + ww + wd + 10;
	room = platform_term_columns();
	room = room == 0 ? 0 : room > used + 8 ? room - used : 8;
	printf("%*s  %*s  %-*s  %-*s  %-*s  ", (int)ws, "STAND-IN", (int)wp,
	    "PID", (int)wn, "NAME", (int)ww, "WHERE", (int)wd,
	    "DIAGNOSTIC-PORT");
	print_cut("COMMAND LINE", room);
	for (i = 0; i < n; i++) {
		printf("%*ld  %*" PRIu64 "  %-*s  %-*s  %-*s  ", (int)ws,
		    r[i].spid, (int)wp, r[i].pid, (int)wn, r[i].name, (int)ww,
		    r[i].where, (int)wd, r[i].port);
		print_cut(r[i].cmdline, room);
	}
}

/* List the local mirror in dir from its files and its stand-ins. */
static int
ps_local(const char *dir)
{
	struct default_name	 dn;
	struct standin_row	*r;
	struct dirent		*de;
	DIR			*dp;
	char			 path[1024];
	size_t			 nfiles = 0, nrows = 0, i, j;
	void			*p;

	if ((dp = opendir(dir)) == NULL)
		die("%s: %s", dir, strerror(errno));
	while ((errno = 0, de = readdir(dp)) != NULL) {
		if (strncmp(de->d_name, "dotnet-diagnostic-", 18) != 0 &&
		    strncmp(de->d_name, "dsroute-", 8) != 0)
			continue;
		if ((p = reallocarray(files, nfiles + 1,
		    sizeof(*files))) == NULL)
			die("out of memory");
		files = p;
		if ((files[nfiles++] = strdup(de->d_name)) == NULL)
			die("out of memory");
	}
	if (errno != 0)
		die("%s: %s", dir, strerror(errno));
	closedir(dp);

	for (i = 0; i < nfiles; i++) {
		if (!ipc_default_socket_parse(files[i], 1, &dn) || !dn.router)
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, files[i]);
		if (platform_ipc_stat(path) != 1)
			continue;
		if ((p = reallocarray(rows, nrows + 1, sizeof(*rows))) == NULL)
			die("out of memory");
		rows = p;
		r = &rows[nrows];
		memset(r, 0, sizeof(*r));
		r->spid = dn.pid;
		if (standin_read(dn.pid, r) == -1)
			continue;
		/* The name tools dial with --diagnostic-port, if there. */
		snprintf(r->port, sizeof(r->port), "%s,connect", path);
		for (j = 0; j < nfiles; j++) {
			if (port_name_of(files[j], r)) {
				snprintf(r->stable, sizeof(r->stable), "%s/%s",
				    dir, files[j]);
				snprintf(r->port, sizeof(r->port), "%s,connect",
				    r->stable);
				/* COOKIE8, before "-socket". */
				memcpy(r->cookie8, files[j] +
				    strlen(files[j]) - 15, 8);
				break;
			}
		}
		nrows++;
	}
	for (i = 0; i < nfiles; i++)
		free(files[i]);
	free(files);

	if (nrows == 0 && !json)
		fprintf(stderr, "dsroute ps: no runtime is mirrored in %s: "
		    "no mirror runs there, or it has none yet.  A mirror is a "
		    "router with a dir:,listen endpoint, such as dsroute "
		    "dir:,listen tcp:HOST:PORT,connect,peer=router (dsroute(1), "
		    "MIRROR); or ask a router itself: dsroute ps "
		    "tcp:HOST:PORT\n", dir);
	else {
		deadline = now_ms() + timeout_ms;
		ask_cmdlines(rows, nrows);
		print_standins(rows, nrows);
	}
	free(rows);
	return (0);
}

/*
 * dsroute ps [--json] [--timeout T] [ENDPOINT | dir:[PATH]], argv[0]
 * being "ps".  Return the exit status.
 */
int
ps_main(int argc, char *argv[])
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "json", no_argument, NULL, 'j' },
		{ "timeout", required_argument, NULL, 't' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*dir;
	int		 ch;

	while ((ch = getopt_long(argc, argv, "+hjt:", opts, NULL)) != -1) {
		switch (ch) {
		case 'h':
			ps_usage(0);
		case 'j':
			json = 1;
			break;
		case 't':
			if (parse_ms(optarg, &timeout_ms) == -1 ||
			    timeout_ms <= 0)
				die("--timeout %s: give a duration such as 5 "
				    "or 500ms", optarg);
			break;
		default:
			ps_usage(1);
		}
	}
	argc -= optind;
	argv += optind;
	if (argc > 1)
		ps_usage(1);
	if (argc == 0 || strncmp(argv[0], "dir:", 4) == 0) {
		if (transport_unavailable("dir:") != NULL)
			die("there is no local mirror to list on this system "
			    "(no dir:); give the router to ask: dsroute ps "
			    "tcp:HOST:PORT, or tls:HOST:PORT,ca=FILE");
		if (argc == 1 && argv[0][4] != '\0')
			dir = argv[0] + 4;
		else if ((dir = getenv("TMPDIR")) == NULL || *dir == '\0')
			dir = "/tmp";
		return (ps_local(dir));
	}
	return (ps_remote(argv[0]));
}
