/* SPDX-License-Identifier: ISC */

/*
 * Unix domain sockets: uds:PATH[,mode=0600][,owner=U][,group=G].  A peer
 * is a local process with credentials.  The socket file a listener makes
 * is made safely by the platform (sockfile_listen); a runtime dialled at
 * a default socket name must be the process the name gives.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "common/ipc.h"
#include "common/log.h"
#include "platform/platform.h"
#include "transports/socket.h"
#include "transports/transport.h"
#include "transports/uds.h"

static int	 set_mode(struct endpoint *, const char *, char *, size_t);
static int	 set_owner(struct endpoint *, const char *, char *, size_t);
static int	 set_group(struct endpoint *, const char *, char *, size_t);

static const struct endpoint_option uds_options[] = {
	{ "mode", 1, set_mode },
	{ "owner", 1, set_owner },
	{ "group", 1, set_group },
};

static int	 uds_parse(struct endpoint *, const char *, char *, size_t);
static void	 uds_clear(struct endpoint *);
static void	 uds_set_name(struct endpoint *);
static void	 uds_auto_role(struct endpoint *);
static void	 uds_describe(const struct endpoint *, char *, size_t);
static int	 uds_preflight(const struct endpoint *, char *, size_t);
static void	 uds_howto(const struct endpoint *,
		    const struct endpoint *);
static int	 uds_runtime_address(const struct endpoint *, char *, size_t);
static int	 uds_runtime_port(const struct endpoint *);
static int	 uds_file_owner(const struct endpoint *, uid_t *);
static void	 uds_granted_ids(const struct endpoint *,
		    struct endpoint_ids *);
static int	 uds_listen(struct endpoint *, char *, size_t);
static void	 uds_unlisten(struct endpoint *);
static int	 uds_dial(struct endpoint *, int *);
static int	 uds_setup(struct stream *, int);
static ssize_t	 uds_write(struct stream *, const void *, size_t);
static ssize_t	 uds_write_buffer(struct stream *, struct evbuffer *);
static ssize_t	 uds_write_pipe(struct stream *, int, size_t);

static const char *const uds_prefixes[] = { "uds:", "unix:", NULL };

const struct transport transport_uds = {
	.name = "uds",
	.prefixes = uds_prefixes,
	.example = "uds:/",
	.local = 1,
	.plain = 1,
	.options = uds_options,
	.noptions = sizeof(uds_options) / sizeof(uds_options[0]),
	.parse = uds_parse,
	.clear = uds_clear,
	.set_name = uds_set_name,
	.auto_role = uds_auto_role,
	.describe = uds_describe,
	.howto = uds_howto,
	.preflight = uds_preflight,
	.runtime_address = uds_runtime_address,
	.runtime_port = uds_runtime_port,
	.file_owner = uds_file_owner,
	.granted_ids = uds_granted_ids,
	.listen = uds_listen,
	.unlisten = uds_unlisten,
	.dial = uds_dial,
	.setup = uds_setup,
	.handshake = socket_handshake,
	.read = socket_read,
	.write = uds_write,
	.write_buffer = uds_write_buffer,
	.shutdown = socket_shutdown,
	.unsent = socket_unsent,
	.teardown = socket_teardown,
	.write_pipe = uds_write_pipe,
};

/* Parse the path of a uds endpoint. */
static int
uds_parse(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	struct uds_endpoint	*u;
	size_t			 n = strlen(addr);

	if (n == 0) {
		snprintf(err, len, "the socket path is empty");
		return (-1);
	}
	if (n >= sizeof(u->path)) {
		snprintf(err, len, "the socket path is %zu bytes; a Unix "
		    "socket path holds at most %zu (choose a shorter "
		    "directory, e.g. under /tmp)", n, sizeof(u->path) - 1);
		return (-1);
	}
	if ((u = calloc(1, sizeof(*u))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	memcpy(u->path, addr, n + 1);
	u->mode = 0600;
	ep->t = u;
	return (0);
}

static void
uds_clear(struct endpoint *ep)
{
	struct uds_endpoint	*u = UDS(ep);

	free(u->owner);
	free(u->group);
	free(u);
	ep->t = NULL;
}

static int
set_mode(struct endpoint *ep, const char *v, char *err, size_t len)
{
	char		*end;
	unsigned long	 mode;

	errno = 0;
	mode = strtoul(v, &end, 8);
	if (*v == '\0' || *end != '\0' || errno != 0 || mode > 0777) {
		snprintf(err, len, "mode=%s: give an octal mode such as 0660",
		    v);
		return (-1);
	}
	if (mode & 0111) {
		snprintf(err, len, "mode=%s: execute bits mean nothing on a "
		    "socket; give read and write bits such as 0660", v);
		return (-1);
	}
	UDS(ep)->mode = (mode_t)mode;
	return (0);
}

static int
set_owner(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (endpoint_set_string(&UDS(ep)->owner, v, err, len));
}

static int
set_group(struct endpoint *ep, const char *v, char *err, size_t len)
{
	return (endpoint_set_string(&UDS(ep)->group, v, err, len));
}

static void
uds_set_name(struct endpoint *ep)
{
	snprintf(ep->name, sizeof(ep->name), "uds:%s", UDS(ep)->path);
}

/*
 * Connect when a live listener is at the path (a runtime's default port,
 * or a tool that listens), listen when nothing answers there (the path a
 * runtime dials with DOTNET_DiagnosticPorts) or when the listener there
 * is the socket a service manager passed us.
 */
static void
uds_auto_role(struct endpoint *ep)
{
	if (inherit_has_unix(UDS(ep)->path)) {
		ep->role = ROLE_LISTEN;
		ep->why = "the service manager passed a socket listening at "
		    "the path";
	} else if (sockfile_probe(UDS(ep)->path) == 1) {
		ep->role = ROLE_CONNECT;
		ep->why = "a listener is already at the path";
	} else {
		ep->role = ROLE_LISTEN;
		ep->why = "nothing is listening at the path";
	}
}

static void
uds_describe(const struct endpoint *ep, char *buf, size_t len)
{
	if (ep->role == ROLE_LISTEN && UDS(ep)->inherited)
		snprintf(buf, len, ", its socket file the service manager's");
	else if (ep->role == ROLE_LISTEN)
		snprintf(buf, len, ", mode %04o", (unsigned)UDS(ep)->mode);
}

/* Log the settings a runtime or a tool needs to use the endpoint. */
static void
uds_howto(const struct endpoint *ep, const struct endpoint *other)
{
	const char		*path = UDS(ep)->path;
	struct default_name	 dn;

	transport_howto_local(ep, other, path,
	    ipc_default_socket_parse(path, 0, &dn) ? &dn : NULL);
}

/* A runtime of this host dials a listening socket by its path. */
static int
uds_runtime_address(const struct endpoint *ep, char *buf, size_t len)
{
	if (ep->role != ROLE_LISTEN ||
	    (size_t)snprintf(buf, len, "%s", UDS(ep)->path) >= len)
		return (-1);
	return (0);
}

static int
uds_runtime_port(const struct endpoint *ep)
{
	struct default_name	 dn;

	return (ipc_default_socket_parse(UDS(ep)->path, 0, &dn));
}

/* The owner of the socket file at the path: a runtime's, or ours. */
static int
uds_file_owner(const struct endpoint *ep, uid_t *uid)
{
	struct stat	 st;

	if (lstat(UDS(ep)->path, &st) == -1 || !S_ISSOCK(st.st_mode))
		return (0);
	*uid = st.st_uid;
	return (1);
}

/* The owner= and group= given to the socket file, once it is made. */
static void
uds_granted_ids(const struct endpoint *ep, struct endpoint_ids *ids)
{
	const struct uds_endpoint	*u = UDS(ep);

	memset(ids, 0, sizeof(*ids));
	ids->have_uid = u->owner != NULL && u->file.made;
	ids->uid = u->file.uid;
	ids->have_gid = u->group != NULL && u->file.made;
	ids->gid = u->file.gid;
}

/* -n: a listener's socket file could be made in its directory now. */
static int
uds_preflight(const struct endpoint *ep, char *err, size_t len)
{
	char	 dir[PATH_MAX];
	char	*slash;

	if (ep->role != ROLE_LISTEN)
		return (0);
	snprintf(dir, sizeof(dir), "%s", UDS(ep)->path);
	if ((slash = strrchr(dir, '/')) == NULL)
		snprintf(dir, sizeof(dir), ".");
	else if (slash == dir)
		dir[1] = '\0';
	else
		*slash = '\0';
	return (sockfile_dir_check(dir, err, len));
}

/*
 * Listen at the path: on the socket a service manager passed for it, if
 * any, whose file is not ours to remove; else on a socket file made here.
 */
static int
uds_listen(struct endpoint *ep, char *err, size_t len)
{
	struct uds_endpoint	*u = UDS(ep);
	int			 fd;

	memset(&u->file, 0, sizeof(u->file));
	u->inherited = 0;
	if ((fd = inherit_take_unix(ep, u->path)) != -1) {
		u->inherited = 1;
		return (fd);
	}
	u->file.path = u->path;
	u->file.mode = u->mode;
	u->file.owner = u->owner;
	u->file.group = u->group;
	return (sockfile_listen(&u->file, err, len));
}

/* Remove the socket file, if it is still the one we made. */
static void
uds_unlisten(struct endpoint *ep)
{
	sockfile_remove(&UDS(ep)->file);
}

static int
uds_dial(struct endpoint *ep, int *pending)
{
	return (uds_dial_path(UDS(ep)->path, pending));
}

/* A runtime found at path by dir: or proc:, as their dial_found. */
int
uds_dial_found(struct endpoint *ep, const char *path, int *pending)
{
	(void)ep;
	return (uds_dial_path(path, pending));
}

/* Start connecting to the socket at path (shorter than sun_path). */
int
uds_dial_path(const char *path, int *pending)
{
	struct sockaddr_un	 sun;
	int			 fd, saved;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return (-1);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	*pending = 0;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		if (errno == EINPROGRESS) {
			*pending = 1;
			return (fd);
		}
		saved = errno;
		close(fd);
		errno = saved;
		return (-1);
	}
	return (fd);
}

/* Whether a local process may serve as a runtime without a grant. */
static int
trusted_uid(uid_t uid)
{
	return (uid == 0 || uid == geteuid());
}

/*
 * A runtime dialled at its default socket must be the process the name
 * gives (security.md R7): anyone who may write to /tmp can plant a
 * socket there under another process's name.  As we see it, the process
 * listening must be the name's pid, have started at the name's key
 * (ipc_default_key_matches(): what proc_info_get() says, by the rule of
 * this system and of the name's kind), and own the socket file.  One that has the name's pid only inside a pid
 * namespace of its own (a runtime in a container whose /tmp we share)
 * must also run as us or as root, since anyone may make a pid namespace
 * and choose pids in it.  One in a namespace we cannot see has no pid
 * here (0): only its uid and the file's owner can be checked.  Return
 * NULL, or why the listener is refused.
 */
const char *
uds_named_listener_refusal(const char *path, const struct peer_cred *c,
    const struct default_name *dn)
{
	static char		 why[320];
	const char		*prefix = "the process listening at the "
				    "socket is not the one its name gives";
	struct proc_info	 pi;
	struct stat		 st;
	char			 where[64];
	int			 saved;

	if (lstat(path, &st) == -1) {
		snprintf(why, sizeof(why), "%s: cannot check the socket file: "
		    "%s", prefix, strerror(errno));
		return (why);
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, sizeof(why), "%s: the name is a %s, not the "
		    "socket itself (a planted link?)", prefix,
		    sockfile_kind(st.st_mode));
		return (why);
	}
	if (st.st_uid != c->uid) {
		snprintf(why, sizeof(why), "%s: the file belongs to uid %lu, "
		    "the listener is uid %lu (a planted socket?)", prefix,
		    (unsigned long)st.st_uid, (unsigned long)c->uid);
		return (why);
	}
	if (c->pid == 0) {
		if (trusted_uid(c->uid))
			return (NULL);
		snprintf(why, sizeof(why), "%s: the listener is in a pid "
		    "namespace this router cannot see and runs as uid %lu, "
		    "neither this router's nor root (a planted socket?)",
		    prefix, (unsigned long)c->uid);
		return (why);
	}
	if (proc_info_get(c->pid, c->pid != dn->pid, &pi) == -1) {
		saved = errno;
		platform_proc_where(c->pid, where, sizeof(where));
		snprintf(why, sizeof(why), "%s: cannot read %s: %s", prefix,
		    where, strerror(saved));
		return (why);
	}
	if (c->pid != dn->pid && (pi.own_pid != dn->pid ||
	    !trusted_uid(c->uid))) {
		snprintf(why, sizeof(why), "%s: it names pid %ld, the "
		    "listener is pid %ld (%ld in its own namespace), uid %lu "
		    "(a planted socket?)", prefix, dn->pid, (long)c->pid,
		    (long)pi.own_pid, (unsigned long)c->uid);
		return (why);
	}
	if (!ipc_default_key_matches(dn, pi.starttime, pi.start_epoch)) {
		snprintf(why, sizeof(why), "%s: its key is %llu, the listener "
		    "started at %llu (a planted socket?)", prefix,
		    (unsigned long long)dn->key,
		    (unsigned long long)pi.starttime);
		return (why);
	}
	return (NULL);
}

/*
 * The send buffer a stream toward a local tool grows to.  The default,
 * 208 KiB, takes less than one read of the pump: a trace then goes out in
 * pieces, each a wake-up of the tool and a copy of the rest, and the
 * stream runs at half speed.  Linux doubles the value and caps it at twice
 * net.core.wmem_max (416 KiB on a stock kernel), which is plenty.
 */
#define UDS_STREAM_SNDBUF	(1024 * 1024)

/*
 * Grow the send buffer the first time a write falls short: a small
 * exchange, such as a fresh connection's command and answer, never pays
 * the system call.
 */
static void
uds_write_fell_short(struct stream *c)
{
	int	 size = UDS_STREAM_SNDBUF;

	if (c->sndbuf_grown)
		return;
	c->sndbuf_grown = 1;
	(void)setsockopt(c->fd, SOL_SOCKET, SO_SNDBUF, &size, sizeof(size));
}

static ssize_t
uds_write(struct stream *c, const void *buf, size_t len)
{
	ssize_t	 n = socket_write(c, buf, len);

	if (n == IO_WANT_WRITE || (n >= 0 && (size_t)n < len))
		uds_write_fell_short(c);
	return (n);
}

static ssize_t
uds_write_buffer(struct stream *c, struct evbuffer *buf)
{
	size_t	 len = evbuffer_get_length(buf);
	ssize_t	 n = socket_write_buffer(c, buf);

	if (n == IO_WANT_WRITE || (n >= 0 && (size_t)n < len))
		uds_write_fell_short(c);
	return (n);
}

static ssize_t
uds_write_pipe(struct stream *c, int pipe_r, size_t len)
{
	ssize_t	 n = socket_write_pipe(c, pipe_r, len);

	if (n == IO_WANT_WRITE || (n >= 0 && (size_t)n < len))
		uds_write_fell_short(c);
	return (n);
}

static int
uds_setup(struct stream *c, int accepted)
{
	return (uds_conn_setup(c, accepted, UDS(c->endpoint)->path));
}

/*
 * Learn the peer's credentials into c and *cred; without them the peer
 * gets nothing.
 */
int
uds_peer_cred(struct stream *c, struct peer_cred *cred)
{
	if (peer_cred_get(c->fd, cred) == -1) {
		c->error = errno;
		c->why = "cannot read the peer's credentials";
		return (-1);
	}
	c->have_cred = 1;
	c->pid = cred->pid;
	c->uid = cred->uid;
	c->gid = cred->gid;
	return (0);
}

/*
 * The file name the listener on c bound its socket at, without its
 * directory (it may see the directory elsewhere, from a container).
 */
int
uds_peer_bound_name(struct stream *c, char *name, size_t len)
{
	struct sockaddr_un	 sun;
	socklen_t		 slen = sizeof(sun);
	const char		*file;

	memset(&sun, 0, sizeof(sun));
	if (getpeername(c->fd, (struct sockaddr *)&sun, &slen) == -1) {
		c->error = errno;
		c->why = "cannot learn the socket dialled";
		return (-1);
	}
	sun.sun_path[sizeof(sun.sun_path) - 1] = '\0';
	file = strrchr(sun.sun_path, '/');
	snprintf(name, len, "%s", file != NULL ? file + 1 : sun.sun_path);
	return (0);
}

/*
 * Learn the peer's credentials.  A runtime dialled at a default socket
 * name, path, must be the process the name gives.
 */
int
uds_conn_setup(struct stream *c, int accepted, const char *path)
{
	struct peer_cred	 cred;
	struct default_name	 dn;

	if (uds_peer_cred(c, &cred) == -1)
		return (-1);
	if (!accepted && ipc_default_socket_parse(path, 1, &dn) &&
	    (c->why = uds_named_listener_refusal(path, &cred, &dn)) != NULL)
		return (-1);
	return (0);
}
