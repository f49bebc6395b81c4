/* SPDX-License-Identifier: ISC */

/*
 * Runtimes found in a directory: dir:[PATH],connect.  A runtime listens at
 * its default diagnostic port, PATH/dotnet-diagnostic-PID-KEY-socket (PATH
 * is the runtime's $TMPDIR, /tmp by default), so a sidecar that shares the
 * directory with an app need not know the app's pid, nor learn the new
 * one when the app restarts.
 *
 * Each time a tool needs a runtime the directory is read, so a runtime
 * that started a moment ago is found and one that exited is not.  The
 * one serving is dialled while it lasts, then the newest (the greatest
 * KEY, its start time) that accepts (finder.c); a file left by a process
 * that is gone refuses it and is passed over.  The listener is then
 * checked as uds: checks a runtime dialled at its default name.  A name
 * that is not a socket, and a socket of another user while we are not
 * root, are passed over with a line.
 *
 * dir:PATH,listen is the mirror of many runtimes for the tools of a
 * workstation (router/mirror.c): it listens with listen_name, at one
 * set of names per runtime.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/ipc.h"
#include "common/log.h"
#include "platform/platform.h"
#include "transports/socket.h"
#include "transports/transport.h"

#define SUN_PATH_LEN	sizeof(((struct sockaddr_un *)0)->sun_path)
/* "/dotnet-diagnostic-" INT32_MAX "-" UINT64_MAX "-socket" */
#define NAME_MAX_LEN	(19 + 10 + 1 + 20 + 7)

struct dir_endpoint {
	char		 path[SUN_PATH_LEN - NAME_MAX_LEN];
	struct finder	 finder;
};

#define DIRECTORY(ep)	((struct dir_endpoint *)(ep)->t)

static int	 dir_parse(struct endpoint *, const char *, char *, size_t);
static void	 dir_clear(struct endpoint *);
static void	 dir_set_name(struct endpoint *);
static void	 dir_auto_role(struct endpoint *);
static void	 dir_howto(const struct endpoint *,
		    const struct endpoint *);
static int	 dir_runtime_port(const struct endpoint *);
static int	 dir_prepare(struct endpoint *, char *, size_t);
static int	 dir_listen(struct endpoint *, char *, size_t);
static const char *dir_name_dir(const struct endpoint *);
static int	 dir_listen_name(struct endpoint *, const char *, char *,
		    size_t, struct sockfile *, char *, size_t);
static int	 dir_dial(struct endpoint *, int *);
static int	 dir_find(struct endpoint *, struct found_list *);
static int	 dir_watch(struct endpoint *);
static int	 dir_setup(struct stream *, int);

static const char *const dir_prefixes[] = { "dir:", NULL };

const struct transport transport_dir = {
	.name = "dir",
	.prefixes = dir_prefixes,
	.example = "dir:/tmp",
	.local = 1,
	.plain = 1,
	.parse = dir_parse,
	.clear = dir_clear,
	.set_name = dir_set_name,
	.auto_role = dir_auto_role,
	.howto = dir_howto,
	.runtime_port = dir_runtime_port,
	.prepare = dir_prepare,
	.listen = dir_listen,
	.dial = dir_dial,
	.listen_name = dir_listen_name,
	.unlisten_name = sockfile_remove,
	.name_dir = dir_name_dir,
	.find = dir_find,
	.watch = dir_watch,
	.dial_found = uds_dial_found,
	.setup = dir_setup,
	.handshake = socket_handshake,
	.read = socket_read,
	.write = socket_write,
	.write_buffer = socket_write_buffer,
	.shutdown = socket_shutdown,
	.unsent = socket_unsent,
	.teardown = socket_teardown,
};

/* The directory, $TMPDIR or /tmp when none is given, without a final /. */
static int
dir_parse(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	struct dir_endpoint	*d;
	const char		*tmp = getenv("TMPDIR");
	size_t			 n;

	if (*addr == '\0')
		addr = tmp != NULL && *tmp != '\0' ? tmp : "/tmp";
	n = strlen(addr);
	while (n > 1 && addr[n - 1] == '/')
		n--;
	if (n >= sizeof(d->path)) {
		snprintf(err, len, "the directory is %zu bytes; with a "
		    "runtime's socket name in it, a Unix socket path holds at "
		    "most %zu", n, sizeof(d->path) - 1);
		return (-1);
	}
	if ((d = calloc(1, sizeof(*d))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	memcpy(d->path, addr, n);
	ep->t = d;
	return (0);
}

static void
dir_clear(struct endpoint *ep)
{
	free(ep->t);
	ep->t = NULL;
}

static void
dir_set_name(struct endpoint *ep)
{
	snprintf(ep->name, sizeof(ep->name), "dir:%s", DIRECTORY(ep)->path);
}

static void
dir_auto_role(struct endpoint *ep)
{
	ep->role = ROLE_CONNECT;
	ep->why = "the runtimes in a directory are dialled";
}

static void
dir_howto(const struct endpoint *ep, const struct endpoint *other)
{
	if (ep->role == ROLE_LISTEN) {
		log_info("  each runtime of the other endpoint appears in %s "
		    "as a local process: with TMPDIR=%s, dotnet-trace ps "
		    "lists it and collect -p PID or -n NAME reach it",
		    DIRECTORY(ep)->path, DIRECTORY(ep)->path);
		return;
	}
	log_info("  a runtime whose $TMPDIR is %s is found there by its "
	    "default socket; the one serving keeps the tools while it "
	    "lives, then the newest serves", DIRECTORY(ep)->path);
}

/* It holds runtimes' default ports: never an advertise, nor a tool. */
static int
dir_runtime_port(const struct endpoint *ep)
{
	(void)ep;
	return (1);
}

/*
 * A mirror makes its files as runtimes come: refuse a directory where
 * that could not be done safely at start-up, not later, once for each.
 */
static int
dir_prepare(struct endpoint *ep, char *err, size_t len)
{
	if (ep->role != ROLE_LISTEN)
		return (0);
	return (sockfile_dir_check(DIRECTORY(ep)->path, err, len));
}

/* The directory of the mirror's names. */
static const char *
dir_name_dir(const struct endpoint *ep)
{
	return (DIRECTORY(ep)->path);
}

/* The mirror listens with listen_name, at one name per runtime. */
static int
dir_listen(struct endpoint *ep, char *err, size_t len)
{
	(void)ep;
	snprintf(err, len, "a mirror listens at one name per runtime");
	return (-1);
}

/*
 * One of a mirrored runtime's names in the directory: a socket file made
 * as uds: makes one, 0600: the tools run as the router's user.
 */
static int
dir_listen_name(struct endpoint *ep, const char *name, char *path,
    size_t pathlen, struct sockfile *sf, char *err, size_t len)
{
	struct dir_endpoint	*d = DIRECTORY(ep);

	if ((size_t)snprintf(path, pathlen, "%s/%s", d->path, name) >=
	    pathlen) {
		snprintf(err, len, "%s/%s: the path is too long for a Unix "
		    "socket", d->path, name);
		return (-1);
	}
	memset(sf, 0, sizeof(*sf));
	sf->path = path;
	sf->mode = 0600;
	return (sockfile_listen(sf, err, len));
}

/*
 * The runtimes' sockets in the directory into l; -1 with errno set if it
 * cannot be read.
 */
static int
read_candidates(struct endpoint *ep, struct found_list *l)
{
	struct dir_endpoint	*d = DIRECTORY(ep);
	struct default_name	 dn;
	struct dirent		*de;
	struct stat		 st;
	DIR			*dp;
	char			 why[96], path[SUN_PATH_LEN];
	int			 saved;

	if ((dp = opendir(d->path)) == NULL)
		return (-1);
	while ((errno = 0, de = readdir(dp)) != NULL) {
		if (strlen(de->d_name) >= NAME_MAX_LEN ||
		    !ipc_default_socket_parse(de->d_name, 0, &dn))
			continue;
		if (fstatat(dirfd(dp), de->d_name, &st,
		    AT_SYMLINK_NOFOLLOW) == -1)
			continue;	/* gone since */
		if (!S_ISSOCK(st.st_mode)) {
			snprintf(why, sizeof(why), "a %s, not a socket",
			    sockfile_kind(st.st_mode));
			finder_passed_over(ep, &d->finder, de->d_name, why);
			continue;
		}
		if (st.st_uid != geteuid() && geteuid() != 0) {
			snprintf(why, sizeof(why), "the socket is uid %lu's",
			    (unsigned long)st.st_uid);
			finder_passed_over(ep, &d->finder, de->d_name, why);
			continue;
		}
		if (snprintf(path, sizeof(path), "%s/%s", d->path,
		    de->d_name) >= (int)sizeof(path))
			continue;	/* cannot be: the name is short */
		if (found_add(l, dn.key, path) == -1)
			break;
	}
	saved = errno;
	closedir(dp);
	errno = saved;
	return (saved != 0 ? -1 : 0);
}

/*
 * Whether the process listening on fd, just connected at path, is the
 * runtime the name gives: NULL, or why not.  A planted socket is passed
 * over, so that it cannot keep the tools from the runtimes beside it.
 */
static const char *
listener_refusal(const struct endpoint *ep, int fd, const char *path)
{
	struct default_name	 dn;
	struct peer_cred	 cred;

	(void)ep;
	if (peer_cred_get(fd, &cred) == -1)
		return ("cannot read the listener's credentials");
	if (!ipc_default_socket_parse(path, 0, &dn))
		return ("not a runtime's socket name");
	return (uds_named_listener_refusal(path, &cred, &dn));
}

/* The runtimes' sockets in the directory now. */
static int
dir_find(struct endpoint *ep, struct found_list *l)
{
	finder_scan(&DIRECTORY(ep)->finder);
	return (read_candidates(ep, l));
}

static int
dir_watch(struct endpoint *ep)
{
	return (platform_dir_watch(DIRECTORY(ep)->path));
}

/* Dial the newest runtime in the directory that accepts and holds up. */
static int
dir_dial(struct endpoint *ep, int *pending)
{
	struct found_list	 l;
	int			 saved;

	memset(&l, 0, sizeof(l));
	if (dir_find(ep, &l) == -1) {
		saved = errno;
		found_free(&l);
		errno = saved;
		return (-1);
	}
	return (finder_dial(ep, &DIRECTORY(ep)->finder, &l, listener_refusal,
	    pending));
}

/*
 * The socket dialled is the name the listener bound: it must be a
 * runtime's default name in the directory, and the listener the process
 * that name gives.
 */
static int
dir_setup(struct stream *c, int accepted)
{
	struct default_name	 dn;
	char			 name[SUN_PATH_LEN];
	char			 path[SUN_PATH_LEN + NAME_MAX_LEN];

	/* A tool of the mirror: its credentials, as on uds:. */
	if (accepted)
		return (uds_conn_setup(c, accepted, NULL));
	if (uds_peer_bound_name(c, name, sizeof(name)) == -1)
		return (-1);
	if (!ipc_default_socket_parse(name, 0, &dn)) {
		c->why = "the listener is not bound at a runtime's default "
		    "socket name";
		return (-1);
	}
	snprintf(path, sizeof(path), "%s/%s", DIRECTORY(c->endpoint)->path,
	    name);
	return (uds_conn_setup(c, accepted, path));
}
