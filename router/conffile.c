/* SPDX-License-Identifier: ISC */

/*
 * The configuration file (-f), an ini file in the manner of stunnel,
 * parsed with inih:
 *
 *	verbose = info			; settings, named as the long options
 *	[sidecar]			; a route, named
 *	local = uds:/diag/app.sock	; its endpoints, as on the command line
 *	remote = tcp:127.0.0.1:9000
 *	remote.policy = observe		; ,policy=observe appended to remote
 *
 * The file decides who may do what to every runtime behind the router,
 * and is read by a router that may run as root: it must be a regular
 * file of at most CONFIG_SIZE_MAX bytes that only root or the router's
 * user can change (platform_config_open()).  A NUL byte, and a setting,
 * route or endpoint given twice, are errors: each would let a file say
 * one thing to whoever reads it and another to the router.
 *
 * A file is loaded whole: every error is collected with its line, and
 * the routes are only built when there is none.  A reload (SIGHUP) then
 * changes the access control of the running routes in place; what would
 * need new listeners is reported and waits for a restart.
 */

#include "config.h"

#include <sys/types.h>

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifdef HAVE_INIH
#include <ini.h>
#else
#define ini_parse_stream(reader, stream, handler, user) \
	((void)(reader), (void)(handler), -1)
#endif

#include "platform/platform.h"
#include "router/acl.h"
#include "router/conffile.h"
#include "router/endpoint.h"
#include "router/engine.h"
#include "router/log.h"

#define ROUTE_NAME_MAX		40
#define SYNTAX_ERRORS_MAX	100
#define CONFIG_SIZE_MAX		(1024 * 1024)	/* bytes of a file */

static const char *const side_keys[] = { "local", "remote" };

struct fragment {
	int		 line;
	char		*text;		/* OPTION=VALUE, or OPTION */
};

struct pending_side {
	int		 line;		/* of the endpoint itself */
	char		*endpoint;	/* NULL until given */
	struct fragment	*options;
	size_t		 noptions;
};

struct pending_route {
	char			*name;
	int			 line;	/* of its [name] */
	struct pending_side	 side[2];
};

struct parser {
	struct config		*cfg;
	FILE			*fp;
	char			*buf;	/* the line getline read */
	size_t			 bufsize;
	int			 lineno;
	int			*skip;	/* lines inih refused: blank */
	size_t			 nskip;
	struct pending_route	*routes;
	size_t			 nroutes;
	int			 in_section;
	struct pending_route	*current;	/* NULL in a refused section */
	struct fragment		*settings;	/* names given, and where */
	size_t			 nsettings;
	config_setting_fn	*setting;
	void			*arg;
};

static void	 add_error(struct config *, int, const char *, ...)
		    __attribute__((__format__(__printf__, 3, 4)));

/* Record an error at a line of the file. */
static void
add_error(struct config *cfg, int line, const char *fmt, ...)
{
	struct config_error	*errors;
	va_list			 ap;
	char			*msg;
	int			 rv;

	va_start(ap, fmt);
	rv = vasprintf(&msg, fmt, ap);
	va_end(ap);
	if (rv == -1)
		msg = NULL;
	if ((errors = reallocarray(cfg->errors, cfg->nerrors + 1,
	    sizeof(*errors))) == NULL) {
		free(msg);
		cfg->oom = 1;
		return;
	}
	cfg->errors = errors;
	cfg->errors[cfg->nerrors].line = line;
	cfg->errors[cfg->nerrors].seq = cfg->nerrors;
	cfg->errors[cfg->nerrors].message = msg;
	if (msg == NULL)
		cfg->oom = 1;
	cfg->nerrors++;
}

static void
pending_free(struct parser *ps)
{
	struct pending_route	*pr;
	size_t			 i, j;
	int			 side;

	for (i = 0; i < ps->nroutes; i++) {
		pr = &ps->routes[i];
		free(pr->name);
		for (side = 0; side < 2; side++) {
			free(pr->side[side].endpoint);
			for (j = 0; j < pr->side[side].noptions; j++)
				free(pr->side[side].options[j].text);
			free(pr->side[side].options);
		}
	}
	free(ps->routes);
	ps->routes = NULL;
	ps->nroutes = 0;
	ps->current = NULL;
	ps->in_section = 0;
	for (i = 0; i < ps->nsettings; i++)
		free(ps->settings[i].text);
	free(ps->settings);
	ps->settings = NULL;
	ps->nsettings = 0;
}

static int
valid_route_name(const char *name)
{
	size_t	 i, n = strlen(name);

	if (n == 0 || n > ROUTE_NAME_MAX)
		return (0);
	for (i = 0; i < n; i++) {
		if (!isalnum((unsigned char)name[i]) && name[i] != '-' &&
		    name[i] != '_' && name[i] != '.')
			return (0);
	}
	return (1);
}

/* A [name] line: start a route, unless the name is bad or taken. */
static void
section_start(struct parser *ps, const char *line)
{
	struct pending_route	*more, *pr;
	const char		*close;
	char			*name;
	size_t			 i;

	if ((close = strchr(line, ']')) == NULL)
		return;		/* inih reports it */
	ps->in_section = 1;
	ps->current = NULL;
	if ((name = strndup(line + 1, close - line - 1)) == NULL) {
		ps->cfg->oom = 1;
		return;
	}
	if (!valid_route_name(name)) {
		add_error(ps->cfg, ps->lineno, "[%s]: a route name has 1 to %d "
		    "letters, digits, '-', '_' or '.'", name, ROUTE_NAME_MAX);
		free(name);
		return;
	}
	for (i = 0; i < ps->nroutes; i++) {
		if (strcmp(ps->routes[i].name, name) == 0) {
			add_error(ps->cfg, ps->lineno, "route [%s] is defined "
			    "twice (first at line %d)", name,
			    ps->routes[i].line);
			free(name);
			return;
		}
	}
	if ((more = reallocarray(ps->routes, ps->nroutes + 1,
	    sizeof(*more))) == NULL) {
		free(name);
		ps->cfg->oom = 1;
		return;
	}
	ps->routes = more;
	pr = &ps->routes[ps->nroutes++];
	memset(pr, 0, sizeof(*pr));
	pr->name = name;
	pr->line = ps->lineno;
	ps->current = pr;
}

static int
skipped(const struct parser *ps, int line)
{
	size_t	 i;

	for (i = 0; i < ps->nskip; i++) {
		if (ps->skip[i] == line)
			return (1);
	}
	return (0);
}

/*
 * inih's line reader.  Counting lines here gives every handler call its
 * line.  Leading blanks go, so that indenting never makes a line continue
 * the one above; a line inih refused on an earlier pass, or one too long
 * for its buffer, is handed over blank so that the next errors are found.
 */
static char *
read_line(char *str, int num, void *arg)
{
	struct parser	*ps = arg;
	const char	*p;
	ssize_t		 n;

	if ((n = getline(&ps->buf, &ps->bufsize, ps->fp)) == -1)
		return (NULL);
	ps->lineno++;
	str[0] = '\0';
	if (skipped(ps, ps->lineno))
		return (str);
	/* inih would read up to it: what follows would be there unread. */
	if (memchr(ps->buf, '\0', n) != NULL) {
		add_error(ps->cfg, ps->lineno, "a NUL byte: what follows it on "
		    "the line would be ignored");
		return (str);
	}
	p = ps->buf;
	if (ps->lineno == 1 && strncmp(p, "\xef\xbb\xbf", 3) == 0)
		p += 3;		/* a UTF-8 byte order mark */
	while (*p == ' ' || *p == '\t')
		p++;
	n -= p - ps->buf;
	if (n > num - 1) {
		add_error(ps->cfg, ps->lineno, "the line is longer than %d "
		    "characters; split an endpoint with local.OPTION = VALUE "
		    "lines", num - 2);
		return (str);
	}
	memcpy(str, p, n + 1);
	if (*str == '[')
		section_start(ps, str);
	return (str);
}

/* Add OPTION=VALUE to a side of the route being read. */
static void
side_option(struct parser *ps, struct pending_side *sd, const char *key,
    const char *option, const char *value)
{
	struct fragment	*options;
	char		*text;
	int		 rv;

	if (*option == '\0') {
		add_error(ps->cfg, ps->lineno, "%s: name the option, as in "
		    "%spolicy = observe", key, key);
		return;
	}
	if (strchr(value, ',') != NULL) {
		add_error(ps->cfg, ps->lineno, "%s: a value holds one item; "
		    "repeat the key for more", key);
		return;
	}
	if (*value == '\0')
		rv = asprintf(&text, "%s", option);
	else
		rv = asprintf(&text, "%s=%s", option, value);
	if (rv == -1 || (options = reallocarray(sd->options, sd->noptions + 1,
	    sizeof(*options))) == NULL) {
		if (rv != -1)
			free(text);
		ps->cfg->oom = 1;
		return;
	}
	sd->options = options;
	sd->options[sd->noptions].line = ps->lineno;
	sd->options[sd->noptions++].text = text;
}

/* A key of a route: local, remote, local.OPTION or remote.OPTION. */
static void
route_key(struct parser *ps, const char *name, const char *value)
{
	struct pending_route	*pr = ps->current;
	struct pending_side	*sd;
	size_t			 n;
	int			 side;

	for (side = 0; side < 2; side++) {
		n = strlen(side_keys[side]);
		if (strncmp(name, side_keys[side], n) == 0 &&
		    (name[n] == '\0' || name[n] == '.'))
			break;
	}
	if (side == 2) {
		add_error(ps->cfg, ps->lineno, "unknown key '%s' in route [%s]: "
		    "give local, remote, local.OPTION or remote.OPTION", name,
		    pr->name);
		return;
	}
	sd = &pr->side[side];
	if (name[n] == '.') {
		side_option(ps, sd, name, name + n + 1, value);
		return;
	}
	if (sd->endpoint != NULL) {
		add_error(ps->cfg, ps->lineno, "%s is given twice in route [%s] "
		    "(first at line %d)", name, pr->name, sd->line);
		return;
	}
	if (*value == '\0') {
		add_error(ps->cfg, ps->lineno, "%s: give an endpoint, such as "
		    "uds:/tmp/app.sock or tcp:127.0.0.1:9000", name);
		return;
	}
	if ((sd->endpoint = strdup(value)) == NULL)
		ps->cfg->oom = 1;
	sd->line = ps->lineno;
}

/*
 * A setting before the first section, once: a second one would win
 * unseen by whoever reads the first.
 */
static void
setting_key(struct parser *ps, const char *name, const char *value)
{
	struct fragment	*more;
	char		 err[256], *text;
	size_t		 i;

	for (i = 0; i < ps->nsettings; i++) {
		if (strcmp(ps->settings[i].text, name) == 0) {
			add_error(ps->cfg, ps->lineno, "%s is given twice "
			    "(first at line %d)", name, ps->settings[i].line);
			return;
		}
	}
	if ((text = strdup(name)) == NULL || (more = reallocarray(ps->settings,
	    ps->nsettings + 1, sizeof(*more))) == NULL) {
		free(text);
		ps->cfg->oom = 1;
		return;
	}
	ps->settings = more;
	ps->settings[ps->nsettings].line = ps->lineno;
	ps->settings[ps->nsettings++].text = text;
	if (ps->setting(ps->arg, name, value, err, sizeof(err)) == -1)
		add_error(ps->cfg, ps->lineno, "%s", err);
}

/* inih's handler: a setting before the first section, or a route's key. */
static int
handle(void *arg, const char *section, const char *name, const char *value)
{
	struct parser	*ps = arg;

	if (!ps->in_section)
		setting_key(ps, name, value);
	else if (ps->current != NULL)
		route_key(ps, name, value);
	/* Errors are collected, never reported to inih, so it goes on. */
	return (1);
}

/*
 * Assemble the specification of one side, checking the endpoint and
 * then each option in turn so that an error points at its own line, and
 * last the whole, whose errors (options that only make sense together,
 * such as a TLS listener's cert= and key=) point at the endpoint's line.
 * Return NULL if any part is wrong.
 */
static char *
side_spec(struct parser *ps, const struct pending_side *sd, const char *key)
{
	struct endpoint	 ep;
	const char	*endpoint = sd->endpoint;
	char		 err[320], *spec, *next;
	size_t		 i;
	int		 ok = 1;

	if (endpoint_parse_part(endpoint, &ep, err, sizeof(err)) == -1) {
		add_error(ps->cfg, sd->line, "%s: %s", key, err);
		/* Check the options all the same, on a stand-in of its type. */
		if ((endpoint = endpoint_stand_in(endpoint)) == NULL)
			return (NULL);
		ok = 0;
	} else
		endpoint_clear(&ep);
	if ((spec = strdup(endpoint)) == NULL) {
		ps->cfg->oom = 1;
		return (NULL);
	}
	for (i = 0; i < sd->noptions; i++) {
		if (asprintf(&next, "%s,%s", spec, sd->options[i].text) == -1) {
			ps->cfg->oom = 1;
			ok = 0;
			break;
		}
		if (endpoint_parse_part(next, &ep, err, sizeof(err)) == -1) {
			add_error(ps->cfg, sd->options[i].line, "%s: %s", key,
			    err);
			free(next);
			ok = 0;
			continue;
		}
		endpoint_clear(&ep);
		free(spec);
		spec = next;
	}
	if (ok && endpoint_parse(spec, &ep, err, sizeof(err)) == -1) {
		add_error(ps->cfg, sd->line, "%s: %s", key, err);
		ok = 0;
	} else if (ok)
		endpoint_clear(&ep);
	if (!ok) {
		free(spec);
		return (NULL);
	}
	return (spec);
}

/* Turn the routes read into routes, or into errors. */
static void
build_routes(struct parser *ps)
{
	struct pending_route	*pr;
	struct route		*r;
	char			*spec[2], err[512];
	size_t			 i;
	int			 side;

	for (i = 0; i < ps->nroutes; i++) {
		pr = &ps->routes[i];
		for (side = 0; side < 2; side++) {
			spec[side] = NULL;
			if (pr->side[side].endpoint == NULL)
				add_error(ps->cfg, pr->line, "route [%s] has "
				    "no %s endpoint: add %s = ...", pr->name,
				    side_keys[side], side_keys[side]);
			else
				spec[side] = side_spec(ps, &pr->side[side],
				    side_keys[side]);
		}
		if (spec[0] != NULL && spec[1] != NULL) {
			if ((r = route_new(pr->name, spec[0], spec[1], err,
			    sizeof(err))) == NULL)
				add_error(ps->cfg, pr->line, "%s", err);
			else
				TAILQ_INSERT_TAIL(&ps->cfg->routes, r, entry);
		}
		free(spec[0]);
		free(spec[1]);
	}
	if (ps->nroutes == 0)
		add_error(ps->cfg, ps->lineno > 0 ? ps->lineno : 1, "no route: "
		    "add a [name] section with local = and remote =");
}

static void
routes_free(struct config *cfg)
{
	struct route	*r;

	while ((r = TAILQ_FIRST(&cfg->routes)) != NULL) {
		TAILQ_REMOVE(&cfg->routes, r, entry);
		route_free(r);
	}
}

static int
error_order(const void *a, const void *b)
{
	const struct config_error	*x = a, *y = b;

	if (x->line != y->line)
		return (x->line < y->line ? -1 : 1);
	return (x->seq < y->seq ? -1 : x->seq > y->seq);
}

/*
 * Load a configuration file into cfg: its settings through setting(arg,
 * name, value, err, len), which returns -1 with a message for a bad one,
 * and its routes, not started.  Return 0, or -1 with every error in
 * cfg->errors, in the order of their lines.
 */
int
config_load(struct config *cfg, const char *path, config_setting_fn *setting,
    void *arg)
{
	FILE	*fp = NULL;
	char	 err[PATH_MAX + 256];
	int	 fd, rv;

	if ((fd = platform_config_open(path, CONFIG_SIZE_MAX, err,
	    sizeof(err))) == -1 || (fp = fdopen(fd, "r")) == NULL) {
		if (fd != -1) {
			snprintf(err, sizeof(err), "cannot read it: %s",
			    strerror(errno));
			close(fd);
		}
		memset(cfg, 0, sizeof(*cfg));
		TAILQ_INIT(&cfg->routes);
		cfg->path = strdup(path);
		add_error(cfg, 0, "%s", err);
		return (-1);
	}
	rv = config_parse(cfg, path, fp, setting, arg);
	fclose(fp);
	return (rv);
}

/*
 * Parse an open configuration file from its start, as config_load does;
 * path names it in cfg.  The caller closes fp.
 */
int
config_parse(struct config *cfg, const char *path, FILE *fp,
    config_setting_fn *setting, void *arg)
{
	struct parser	 ps;
	size_t		 i;
	int		*skip, rv;

	memset(cfg, 0, sizeof(*cfg));
	TAILQ_INIT(&cfg->routes);
#ifndef HAVE_INIH
	/* A Windows build whose deps.sh found no inih source to build. */
	cfg->path = strdup(path);
	add_error(cfg, 0, "this dsroute was built without inih, so it reads "
	    "no configuration file: give the settings on the command line");
	return (-1);
#endif
	memset(&ps, 0, sizeof(ps));
	ps.cfg = cfg;
	ps.setting = setting;
	ps.arg = arg;
	ps.fp = fp;
	if ((cfg->path = strdup(path)) == NULL) {
		add_error(cfg, 0, "out of memory");
		return (-1);
	}

	/*
	 * inih names only the first line it cannot parse: blank that line
	 * and parse again, until the file parses.  The other errors are
	 * those of the last pass, which sees every line but the blanked.
	 */
	for (;;) {
		pending_free(&ps);
		while (cfg->nerrors > 0)
			free(cfg->errors[--cfg->nerrors].message);
		rewind(ps.fp);
		ps.lineno = 0;
		if ((rv = ini_parse_stream(read_line, &ps, handle, &ps)) <= 0 ||
		    ps.nskip == SYNTAX_ERRORS_MAX)
			break;
		if ((skip = reallocarray(ps.skip, ps.nskip + 1,
		    sizeof(*skip))) == NULL) {
			cfg->oom = 1;
			break;
		}
		ps.skip = skip;
		ps.skip[ps.nskip++] = rv;
	}
	for (i = 0; i < ps.nskip; i++)
		add_error(cfg, ps.skip[i], "not a setting, a [route] or a "
		    "comment: write key = value");
	if (ferror(ps.fp))
		add_error(cfg, 0, "cannot read it: %s", strerror(errno));
	else if (rv != 0)
		add_error(cfg, rv > 0 ? rv : ps.lineno, "too many errors; "
		    "stopped here");
	else
		build_routes(&ps);
	pending_free(&ps);
	free(ps.skip);
	free(ps.buf);
	if (cfg->oom)
		add_error(cfg, 0, "out of memory");
	/* The routes that were right go too: a file loads whole or not. */
	if (cfg->nerrors > 0)
		routes_free(cfg);
	if (cfg->nerrors > 1)
		qsort(cfg->errors, cfg->nerrors, sizeof(*cfg->errors),
		    error_order);
	return (cfg->nerrors == 0 ? 0 : -1);
}

void
config_free(struct config *cfg)
{
	size_t	 i;

	routes_free(cfg);
	for (i = 0; i < cfg->nerrors; i++)
		free(cfg->errors[i].message);
	free(cfg->errors);
	free(cfg->path);
	memset(cfg, 0, sizeof(*cfg));
}

static struct route *
route_named(struct route_list *list, const char *name)
{
	struct route	*r;

	TAILQ_FOREACH(r, list, entry) {
		if (strcmp(r->name, name) == 0)
			return (r);
	}
	return (NULL);
}

/*
 * Reload: give the running routes the policies of the new file, which
 * loaded without error: their access control, who may advertise, the
 * identity allow-lists.  Routes added, removed or with other endpoints
 * need new listeners; they are logged and wait for a restart.  Return
 * the number of changes that wait.
 */
int
config_apply(struct config *cfg)
{
	struct route	*r, *nr;
	struct endpoint	*ep, *nep;
	int		 side, waiting = 0;

	TAILQ_FOREACH(r, &routes, entry) {
		if ((nr = route_named(&cfg->routes, r->name)) == NULL) {
			log_warning("reload: route [%s] is gone from %s; it "
			    "runs until dsroute restarts", r->name, cfg->path);
			waiting++;
			continue;
		}
		for (side = 0; side < 2; side++) {
			ep = &r->endpoint[side];
			nep = &nr->endpoint[side];
			if (strcmp(ep->transport_spec,
			    nep->transport_spec) != 0) {
				log_warning("reload: route [%s]: %s changed "
				    "from %s to %s; that takes a restart",
				    r->name, side_keys[side],
				    ep->transport_spec, nep->transport_spec);
				waiting++;
			}
			/* Sessions judged already keep going; new ones see this. */
			acl_policy_free(ep->policy);
			ep->policy = nep->policy;
			nep->policy = NULL;
		}
	}
	TAILQ_FOREACH(nr, &cfg->routes, entry) {
		if (route_named(&routes, nr->name) == NULL) {
			log_warning("reload: route [%s] is new in %s; it starts "
			    "when dsroute restarts", nr->name, cfg->path);
			waiting++;
		}
	}
	return (waiting);
}
