/* SPDX-License-Identifier: ISC */

/*
 * Unix domain sockets.  A listening socket file is created safely: in a
 * directory others cannot tamper with, never over anything that is not a
 * socket, over a socket only once a connect probe shows nobody answers
 * (and, in a directory others may write, only over one of our own), with
 * its mode set before any client can connect and checked afterwards, and
 * removed at exit only if it is still the inode we created.  Each step
 * after the directory is opened works relative to it and never follows
 * a symbolic link.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"
#include "router/dsroute.h"

static int	 uds_listen(struct endpoint *, char *, size_t);
static void	 uds_unlisten(struct endpoint *);
static int	 uds_dial(struct endpoint *, int *);
static int	 uds_setup(struct conn *, int);

const struct transport transport_uds = {
	.name = "uds",
	.listen = uds_listen,
	.unlisten = uds_unlisten,
	.dial = uds_dial,
	.setup = uds_setup,
	.handshake = socket_handshake,
	.read = socket_read,
	.write = socket_write,
	.write_buffer = socket_write_buffer,
	.shutdown = socket_shutdown,
	.teardown = socket_teardown,
};

static void
uds_address(const struct endpoint *ep, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	memcpy(sun->sun_path, ep->path, sizeof(sun->sun_path));
}

static const char *
file_kind(mode_t mode)
{
	if (S_ISLNK(mode))
		return ("symbolic link");
	if (S_ISDIR(mode))
		return ("directory");
	if (S_ISREG(mode))
		return ("regular file");
	if (S_ISFIFO(mode))
		return ("FIFO");
	return ("non-socket file");
}

/*
 * Probe the socket at path: return 1 when a listener answers, 0 when it
 * refuses (a stale socket), -1 with errno on other errors.
 */
int
uds_probe(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, rv;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	strcpy(sun.sun_path, path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return (-1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == 0)
		rv = 1;
	else if (errno == ECONNREFUSED)
		rv = 0;
	else if (errno == EAGAIN)
		rv = 1;		/* a listener with a full backlog */
	else
		rv = -1;
	close(fd);
	return (rv);
}

/*
 * The socket's directory and name.  Everything but bind() is done
 * relative to the directory opened once and checked, so that what was
 * checked is what is used.
 */
struct sockdir {
	int		 fd;
	struct stat	 st;
	char		 dir[PATH_MAX];
	const char	*name;
	uid_t		 owner;		/* owner= of the endpoint, or -1 */
	int		 shared;	/* others may create names in it */
};

/* Whether uid is this router's: its own, or the socket's owner=. */
static int
ours(uid_t uid, uid_t owner)
{
	return (uid == geteuid() || uid == owner);
}

/*
 * Open the directory of the socket and refuse one where others could
 * replace the socket: it must be this router's or root's, and others may
 * write it only if it is sticky.
 */
static int
open_directory(const struct endpoint *ep, uid_t owner, struct sockdir *d,
    char *err, size_t len)
{
	const char	*slash = strrchr(ep->path, '/');

	d->owner = owner;
	if (slash == NULL) {
		snprintf(d->dir, sizeof(d->dir), ".");
		d->name = ep->path;
	} else {
		snprintf(d->dir, sizeof(d->dir), "%.*s",
		    slash == ep->path ? 1 : (int)(slash - ep->path), ep->path);
		d->name = slash + 1;
	}
	if (*d->name == '\0') {
		snprintf(err, len, "%s names a directory, not a socket",
		    ep->path);
		return (-1);
	}
	if ((d->fd = open(d->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1 ||
	    fstat(d->fd, &d->st) == -1) {
		snprintf(err, len, "directory %s: %s", d->dir, strerror(errno));
		if (d->fd != -1)
			close(d->fd);
		return (-1);
	}
	if (d->st.st_uid != 0 && !ours(d->st.st_uid, owner)) {
		snprintf(err, len, "directory %s belongs to uid %lu, who could "
		    "replace the socket; use a directory of this user or of "
		    "root", d->dir, (unsigned long)d->st.st_uid);
		goto fail;
	}
	d->shared = (d->st.st_mode & (S_IWGRP | S_IWOTH)) != 0;
	if (d->shared && !(d->st.st_mode & S_ISVTX)) {
		snprintf(err, len, "directory %s is writable by others and "
		    "not sticky: anyone could replace the socket; use a "
		    "private directory", d->dir);
		goto fail;
	}
	return (0);

fail:
	close(d->fd);
	return (-1);
}

/* Whether the directory's path still leads to the directory checked. */
static int
same_directory(const struct sockdir *d)
{
	struct stat	 st;

	return (stat(d->dir, &st) == 0 && st.st_dev == d->st.st_dev &&
	    st.st_ino == d->st.st_ino);
}

/*
 * Remove a stale socket at the name, or refuse whatever else is there.
 * In a directory others may write, only a socket of this router's is
 * removed: the sticky bit keeps anyone else from swapping it between the
 * checks and the unlink.
 */
static int
clear_name(const struct endpoint *ep, const struct sockdir *d, char *err,
    size_t len)
{
	struct stat	 st, again;
	int		 live;

	if (fstatat(d->fd, d->name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return (0);
		snprintf(err, len, "%s: %s", ep->path, strerror(errno));
		return (-1);
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "%s is a %s; refusing to replace it",
		    ep->path, file_kind(st.st_mode));
		return (-1);
	}
	if (d->shared && !ours(st.st_uid, d->owner)) {
		snprintf(err, len, "%s is a socket of uid %lu in a directory "
		    "others can write; refusing to replace it",
		    ep->path, (unsigned long)st.st_uid);
		return (-1);
	}
	if ((live = uds_probe(ep->path)) == 1) {
		snprintf(err, len, "a live listener is already at %s "
		    "(another router, or a runtime?); refusing to replace it",
		    ep->path);
		return (-1);
	}
	if (live == -1) {
		snprintf(err, len, "cannot probe the socket at %s: %s",
		    ep->path, strerror(errno));
		return (-1);
	}
	/* Unlink only the inode we probed. */
	if (fstatat(d->fd, d->name, &again, AT_SYMLINK_NOFOLLOW) == -1 ||
	    again.st_ino != st.st_ino || again.st_dev != st.st_dev ||
	    !S_ISSOCK(again.st_mode) || !same_directory(d)) {
		snprintf(err, len, "%s changed while starting; refusing to "
		    "touch it", ep->path);
		return (-1);
	}
	if (unlinkat(d->fd, d->name, 0) == -1) {
		snprintf(err, len, "cannot remove the stale socket at %s: %s",
		    ep->path, strerror(errno));
		return (-1);
	}
	log_info("%s: removed a stale socket (nothing answered on it)",
	    ep->name);
	return (0);
}

static int
lookup_ids(const struct endpoint *ep, uid_t *uid, gid_t *gid, char *err,
    size_t len)
{
	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (ep->owner != NULL && parse_uid(ep->owner, uid) == -1) {
		snprintf(err, len, "owner=%s: no such user", ep->owner);
		return (-1);
	}
	if (ep->group != NULL && parse_gid(ep->group, gid) == -1) {
		snprintf(err, len, "group=%s: no such group", ep->group);
		return (-1);
	}
	return (0);
}

/*
 * Bind the socket with exactly the requested mode from the moment its
 * file exists: Linux gives the file the socket inode's mode less the
 * umask, so set the one and clear the other.
 */
static int
bind_socket(const struct endpoint *ep, int fd, char *err, size_t len)
{
	struct sockaddr_un	 sun;
	mode_t			 old;
	int			 saved;

	uds_address(ep, &sun);
	old = umask(0);
	if (fchmod(fd, ep->mode) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		umask(old);
		if (saved == EADDRINUSE)
			snprintf(err, len, "%s appeared while starting; "
			    "refusing to replace it", ep->path);
		else
			snprintf(err, len, "bind %s: %s", ep->path,
			    strerror(saved));
		return (-1);
	}
	umask(old);
	return (0);
}

static int
uds_listen(struct endpoint *ep, char *err, size_t len)
{
	struct sockdir	 d;
	struct stat	 st;
	uid_t		 uid, want_uid;
	gid_t		 gid;
	int		 fd;

	if (lookup_ids(ep, &uid, &gid, err, len) == -1 ||
	    open_directory(ep, uid, &d, err, len) == -1)
		return (-1);
	if (clear_name(ep, &d, err, len) == -1)
		goto fail_dir;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, len, "socket: %s", strerror(errno));
		goto fail_dir;
	}
	if (bind_socket(ep, fd, err, len) == -1)
		goto fail_sock;
	/*
	 * bind() goes by the path: make sure it led to the directory we
	 * checked, where the name now is our socket, which nobody else may
	 * replace.  Otherwise leave the file where it landed, untouched.
	 */
	if (!same_directory(&d)) {
		snprintf(err, len, "directory %s changed while starting; "
		    "refusing to use it", d.dir);
		goto fail_sock;
	}

	/* Owner and group before listen(): nobody can connect yet. */
	if ((uid != (uid_t)-1 || gid != (gid_t)-1) &&
	    fchownat(d.fd, d.name, uid, gid, AT_SYMLINK_NOFOLLOW) == -1) {
		snprintf(err, len, "cannot set the owner of %s: %s", ep->path,
		    strerror(errno));
		goto fail_file;
	}
	/* Check what we created, and fail closed if it is not that. */
	want_uid = uid != (uid_t)-1 ? uid : geteuid();
	if (fstatat(d.fd, d.name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISSOCK(st.st_mode) || (st.st_mode & 07777) != ep->mode ||
	    st.st_uid != want_uid || (gid != (gid_t)-1 && st.st_gid != gid)) {
		snprintf(err, len, "%s does not have the mode or owner "
		    "requested; refusing to use it", ep->path);
		goto fail_file;
	}
	if (listen(fd, SOMAXCONN) == -1) {
		snprintf(err, len, "listen %s: %s", ep->path, strerror(errno));
		goto fail_file;
	}
	ep->owner_uid = uid;
	ep->group_gid = gid;
	ep->sock_dev = st.st_dev;
	ep->sock_ino = st.st_ino;
	ep->sock_dirfd = d.fd;
	ep->sock_created = 1;
	return (fd);

fail_file:
	(void)unlinkat(d.fd, d.name, 0);
fail_sock:
	close(fd);
fail_dir:
	close(d.fd);
	return (-1);
}

/*
 * Remove the socket file, if it is still the one we created, through the
 * directory opened at start-up.
 */
static void
uds_unlisten(struct endpoint *ep)
{
	const char	*slash = strrchr(ep->path, '/');
	const char	*name = slash != NULL ? slash + 1 : ep->path;
	struct stat	 st;

	if (!ep->sock_created)
		return;
	ep->sock_created = 0;
	if (fstatat(ep->sock_dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == ep->sock_dev && st.st_ino == ep->sock_ino &&
	    unlinkat(ep->sock_dirfd, name, 0) == -1)
		log_warning("%s: cannot remove the socket: %s; the next start "
		    "replaces it as a stale socket", ep->name, strerror(errno));
	close(ep->sock_dirfd);
}

static int
uds_dial(struct endpoint *ep, int *pending)
{
	struct sockaddr_un	 sun;
	int			 fd, saved;

	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1)
		return (-1);
	uds_address(ep, &sun);
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
 * Whether the process pi, listening at the default socket name dn, is the
 * one the name gives: the pid, and the key its start time by the rule of
 * the name's kind.  A router's key may be dotnet-dsrouter's, seconds
 * since 1970, whose rounding we do not know to the second.
 */
static int
key_matches(const struct default_name *dn, const struct proc_info *pi)
{
	if (dn->key == pi->starttime)
		return (1);
	return (dn->router && pi->start_epoch != 0 &&
	    dn->key + 1 >= pi->start_epoch && dn->key <= pi->start_epoch + 1);
}

/*
 * A runtime dialled at its default socket must be the process the name
 * gives (security.md R7): anyone who may write to /tmp can plant a
 * socket there under another process's name.  As we see it, the process
 * listening must be the name's pid, have started at the name's key, and
 * own the socket file.  One that has the name's pid only inside a pid
 * namespace of its own (a runtime in a container whose /tmp we share)
 * must also run as us or as root, since anyone may make a pid namespace
 * and choose pids in it.  One in a namespace we cannot see has no pid
 * here (0): only its uid and the file's owner can be checked.  Return
 * NULL, or why the listener is refused.
 */
static const char *
check_named_listener(const struct conn *c, const struct default_name *dn)
{
	static char		 why[320];
	const char		*prefix = "the process listening at the "
				    "socket is not the one its name gives";
	struct proc_info	 pi;
	struct stat		 st;

	if (lstat(c->endpoint->path, &st) == -1) {
		snprintf(why, sizeof(why), "%s: cannot check the socket file: "
		    "%s", prefix, strerror(errno));
		return (why);
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(why, sizeof(why), "%s: the name is a %s, not the "
		    "socket itself (a planted link?)", prefix,
		    file_kind(st.st_mode));
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
		snprintf(why, sizeof(why), "%s: cannot read /proc/%ld: %s",
		    prefix, (long)c->pid, strerror(errno));
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
	if (!key_matches(dn, &pi)) {
		snprintf(why, sizeof(why), "%s: its key is %llu, the listener "
		    "started at %llu (a planted socket?)", prefix,
		    (unsigned long long)dn->key,
		    (unsigned long long)pi.starttime);
		return (why);
	}
	return (NULL);
}

/*
 * Learn the peer's credentials; without them the peer gets nothing.  A
 * runtime dialled at a default socket name must be the process the name
 * gives.
 */
static int
uds_setup(struct conn *c, int accepted)
{
	struct ucred		 cred;
	struct default_name	 dn;
	socklen_t		 len = sizeof(cred);

	if (getsockopt(c->fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == -1 ||
	    len != sizeof(cred)) {
		c->error = errno;
		c->why = "cannot read the peer's credentials";
		return (-1);
	}
	c->have_cred = 1;
	c->pid = cred.pid;
	c->uid = cred.uid;
	c->gid = cred.gid;
	snprintf(c->peer, sizeof(c->peer), "%s(pid %ld uid %lu)",
	    c->endpoint->name, (long)cred.pid, (unsigned long)cred.uid);
	if (!accepted && ipc_default_socket_parse(c->endpoint->path, 1, &dn) &&
	    (c->why = check_named_listener(c, &dn)) != NULL)
		return (-1);
	return (0);
}
