/* SPDX-License-Identifier: ISC */

/*
 * What every POSIX system shares (each has its own file beside it,
 * linux.c or darwin.c, behind os.h): socket files made safely, dump and
 * configuration directories others cannot change, descriptor limits,
 * signals, users and the privilege drop, the sockets a service manager
 * passed, and what the front ends ask of the terminal and of TMPDIR.
 *
 * A listening socket file is created safely: in a directory others
 * cannot tamper with, never over anything that is not a socket, over a
 * socket only once a connect probe shows nobody answers (and, in a
 * directory others may write, only over one of our own), with its mode
 * set before any client can connect and checked afterwards, and removed
 * at exit only if it is still the inode we created.  Each step after the
 * directory is opened works relative to it and never follows a symbolic
 * link.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/un.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/util.h"
#include "platform/os.h"
#include "platform/platform.h"

/* What every process of dsroute does first: ignore SIGPIPE. */
void
platform_init(void)
{
	signal(SIGPIPE, SIG_IGN);
}


/* The address of a socket file; -1 if the path does not fit. */
static int
unix_address(const char *path, struct sockaddr_un *sun)
{
	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun->sun_path)) {
		errno = ENAMETOOLONG;
		return (-1);
	}
	memcpy(sun->sun_path, path, strlen(path));
	return (0);
}

/* Name the kind of a file that is not a socket, for a refusal. */
const char *
sockfile_kind(mode_t mode)
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
sockfile_probe(const char *path)
{
	struct sockaddr_un	 sun;
	int			 fd, rv;

	if (unix_address(path, &sun) == -1)
		return (-1);
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
open_directory(const struct sockfile *sf, uid_t owner, struct sockdir *d,
    char *err, size_t len)
{
	const char	*slash = strrchr(sf->path, '/');

	d->owner = owner;
	if (slash == NULL) {
		snprintf(d->dir, sizeof(d->dir), ".");
		d->name = sf->path;
	} else {
		snprintf(d->dir, sizeof(d->dir), "%.*s",
		    slash == sf->path ? 1 : (int)(slash - sf->path), sf->path);
		d->name = slash + 1;
	}
	if (*d->name == '\0') {
		snprintf(err, len, "%s names a directory, not a socket",
		    sf->path);
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

/*
 * Whether socket files could be made safely in dir now: a mirror's
 * directory, checked at start-up though its files come later.
 */
int
sockfile_dir_check(const char *dir, char *err, size_t len)
{
	struct sockfile	 sf;
	struct sockdir	 d;
	char		 path[PATH_MAX];

	memset(&sf, 0, sizeof(sf));
	if ((size_t)snprintf(path, sizeof(path), "%s/-", dir) >=
	    sizeof(path)) {
		snprintf(err, len, "directory %s: the path is too long", dir);
		return (-1);
	}
	sf.path = path;
	if (open_directory(&sf, (uid_t)-1, &d, err, len) == -1)
		return (-1);
	close(d.fd);
	return (0);
}

/* Whether uid may own a directory on the way to dumps. */
static int
dump_dir_trusted(uid_t uid, uid_t also)
{
	return (uid == 0 || uid == geteuid() || uid == also);
}

/*
 * One directory on the way to a dump directory, top (the dump directory
 * itself) or above it: a directory, or a link to one, of root's, this
 * router's or also's, writable by its group or others only if sticky.
 * Return 0, 1 if it is not there, or -1 with the reason in err.
 */
static int
dump_dir_step(const char *path, const char *top, uid_t also, char *err,
    size_t len)
{
	struct stat	 st;
	char		 where[PATH_MAX + 16] = "";
	int		 rv;

	if (strcmp(path, top) != 0)
		snprintf(where, sizeof(where), " (above %s)", top);
	if ((rv = lstat(path, &st)) == 0 && S_ISLNK(st.st_mode)) {
		if (!dump_dir_trusted(st.st_uid, also)) {
			snprintf(err, len, "%s%s is a link of uid %lu, who "
			    "could point it elsewhere", path, where,
			    (unsigned long)st.st_uid);
			return (-1);
		}
		rv = stat(path, &st);
	}
	if (rv == -1) {
		if (errno == ENOENT) {
			snprintf(err, len, "there is no directory %s on this "
			    "host", path);
			return (1);
		}
		snprintf(err, len, "cannot check directory %s%s: %s", path,
		    where, strerror(errno));
		return (-1);
	}
	if (!S_ISDIR(st.st_mode)) {
		snprintf(err, len, "%s%s is a %s, not a directory", path,
		    where, sockfile_kind(st.st_mode));
		return (-1);
	}
	if (!dump_dir_trusted(st.st_uid, also)) {
		snprintf(err, len, "directory %s%s belongs to uid %lu, who "
		    "could put a link where a dump goes; use a directory of "
		    "root's or of this router's user", path, where,
		    (unsigned long)st.st_uid);
		return (-1);
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) == 0)
		return (0);
	if ((st.st_mode & S_ISVTX) == 0) {
		snprintf(err, len, "directory %s%s is writable by %s and not "
		    "sticky: anyone who may write it could put a link where a "
		    "dump goes; chmod go-w", path, where,
		    (st.st_mode & S_IWOTH) ? "others" : "its group");
		return (-1);
	}
	/* Above: nobody else may move a name of a sticky directory away. */
	if (*where != '\0')
		return (0);
	return (os_sticky_dir_safe(path, st.st_mode, err, len));
}

/*
 * The directories of path from the root down to path itself, each
 * checked by dump_dir_step: the first that is refused or not there ends
 * the walk.
 */
static int
dump_dir_walk(const char *path, uid_t also, char *err, size_t len)
{
	char	 prefix[PATH_MAX];
	size_t	 n = strlen(path), i;
	int	 rv;

	if (n >= sizeof(prefix)) {
		snprintf(err, len, "directory %s: the path is too long", path);
		return (-1);
	}
	if ((rv = dump_dir_step("/", path, also, err, len)) != 0)
		return (rv);
	for (i = 1; i <= n; i++) {
		if (path[i] != '/' && path[i] != '\0')
			continue;
		if (path[i - 1] == '/')
			continue;	/* "//", or the root again */
		memcpy(prefix, path, i);
		prefix[i] = '\0';
		if ((rv = dump_dir_step(prefix, path, also, err, len)) != 0)
			return (rv);
	}
	return (0);
}

/*
 * Whether the directory a runtime writes dumps to (dump-dir=, an
 * absolute path without ..) is safe from the other users of this host:
 * whoever may write it, or a directory above it, can put a link where
 * the next dump goes and read the dump, or have the runtime overwrite a
 * file of its user's.  So the directory and each one above it must
 * belong to root, to this router's uid or to also (the user it drops
 * to, or -1), and be writable by group or others only if sticky (where
 * nobody else can move a name away; the directory itself then as
 * dump_dir_shared says).  The directories above count because whoever
 * may rename one of them can put a directory of his own in place of the
 * whole; and because only trusted users can change a path that passes,
 * it stays as checked.  Both the path as given and the one its links
 * lead to are walked: a link is as safe as its owner and the directory
 * it is in, its target as the directories above that.  Return 0 if it is safe, -1 with the reason
 * in err if not, and 1 with a note in err when there is no such
 * directory on this host (the runtime may see another filesystem).
 */
int
platform_dump_dir_check(const char *dir, uid_t also, char *err, size_t len)
{
	char	 real[PATH_MAX];
	int	 rv;

	if ((rv = dump_dir_walk(dir, also, err, len)) != 0)
		return (rv);
	if (realpath(dir, real) == NULL) {
		snprintf(err, len, "cannot check directory %s: %s", dir,
		    strerror(errno));
		return (-1);
	}
	if (strcmp(real, dir) == 0)
		return (0);
	return (dump_dir_walk(real, also, err, len));
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
clear_name(const struct sockfile *sf, const struct sockdir *d, char *err,
    size_t len)
{
	struct stat	 st, again;
	int		 live;

	if (fstatat(d->fd, d->name, &st, AT_SYMLINK_NOFOLLOW) == -1) {
		if (errno == ENOENT)
			return (0);
		snprintf(err, len, "%s: %s", sf->path, strerror(errno));
		return (-1);
	}
	if (!S_ISSOCK(st.st_mode)) {
		snprintf(err, len, "%s is a %s; refusing to replace it",
		    sf->path, sockfile_kind(st.st_mode));
		return (-1);
	}
	if (d->shared && !ours(st.st_uid, d->owner)) {
		snprintf(err, len, "%s is a socket of uid %lu in a directory "
		    "others can write; refusing to replace it",
		    sf->path, (unsigned long)st.st_uid);
		return (-1);
	}
	if ((live = sockfile_probe(sf->path)) == 1) {
		snprintf(err, len, "a live listener is already at %s "
		    "(another router, or a runtime?); refusing to replace it",
		    sf->path);
		return (-1);
	}
	if (live == -1) {
		snprintf(err, len, "cannot probe the socket at %s: %s",
		    sf->path, strerror(errno));
		return (-1);
	}
	/* Unlink only the inode we probed. */
	if (fstatat(d->fd, d->name, &again, AT_SYMLINK_NOFOLLOW) == -1 ||
	    again.st_ino != st.st_ino || again.st_dev != st.st_dev ||
	    !S_ISSOCK(again.st_mode) || !same_directory(d)) {
		snprintf(err, len, "%s changed while starting; refusing to "
		    "touch it", sf->path);
		return (-1);
	}
	if (unlinkat(d->fd, d->name, 0) == -1) {
		snprintf(err, len, "cannot remove the stale socket at %s: %s",
		    sf->path, strerror(errno));
		return (-1);
	}
	log_info("uds:%s: removed a stale socket (nothing answered on it)",
	    sf->path);
	return (0);
}

static int
lookup_ids(const struct sockfile *sf, uid_t *uid, gid_t *gid, char *err,
    size_t len)
{
	*uid = (uid_t)-1;
	*gid = (gid_t)-1;
	if (sf->owner != NULL && parse_uid(sf->owner, uid) == -1) {
		snprintf(err, len, "owner=%s: no such user", sf->owner);
		return (-1);
	}
	if (sf->group != NULL && parse_gid(sf->group, gid) == -1) {
		snprintf(err, len, "group=%s: no such group", sf->group);
		return (-1);
	}
	return (0);
}

/*
 * Bind the socket with exactly the requested mode from the moment its
 * file exists: Linux gives the file the socket inode's mode less the
 * umask, so set the one and clear the other; macOS gives it the mode
 * the umask leaves (os_socket_umask(), os_socket_chmod()).
 */
static int
bind_socket(const struct sockfile *sf, int fd, char *err, size_t len)
{
	struct sockaddr_un	 sun;
	mode_t			 old;
	int			 saved;

	if (unix_address(sf->path, &sun) == -1) {
		snprintf(err, len, "%s: %s", sf->path, strerror(errno));
		return (-1);
	}
	old = umask(os_socket_umask(sf->mode));
	if (os_socket_chmod(fd, sf->mode) == -1 ||
	    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		saved = errno;
		umask(old);
		if (saved == EADDRINUSE)
			snprintf(err, len, "%s appeared while starting; "
			    "refusing to replace it", sf->path);
		else
			snprintf(err, len, "bind %s: %s", sf->path,
			    strerror(saved));
		return (-1);
	}
	umask(old);
	return (0);
}

/*
 * Make the socket file sf asks for, bound and listening, and return its
 * non-blocking descriptor; -1 with a reason in err if it cannot be made
 * safely.
 */
int
sockfile_listen(struct sockfile *sf, char *err, size_t len)
{
	struct sockdir	 d;
	struct stat	 st;
	uid_t		 uid, want_uid;
	gid_t		 gid;
	int		 fd;

	if (lookup_ids(sf, &uid, &gid, err, len) == -1 ||
	    open_directory(sf, uid, &d, err, len) == -1)
		return (-1);
	if (clear_name(sf, &d, err, len) == -1)
		goto fail_dir;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) == -1) {
		snprintf(err, len, "socket: %s", strerror(errno));
		goto fail_dir;
	}
	if (bind_socket(sf, fd, err, len) == -1)
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
		snprintf(err, len, "cannot set the owner of %s: %s", sf->path,
		    strerror(errno));
		goto fail_file;
	}
	/* Check what we created, and fail closed if it is not that. */
	want_uid = uid != (uid_t)-1 ? uid : geteuid();
	if (fstatat(d.fd, d.name, &st, AT_SYMLINK_NOFOLLOW) == -1 ||
	    !S_ISSOCK(st.st_mode) || (st.st_mode & 07777) != sf->mode ||
	    st.st_uid != want_uid || (gid != (gid_t)-1 && st.st_gid != gid)) {
		snprintf(err, len, "%s does not have the mode or owner "
		    "requested; refusing to use it", sf->path);
		goto fail_file;
	}
	if (listen(fd, SOMAXCONN) == -1) {
		snprintf(err, len, "listen %s: %s", sf->path, strerror(errno));
		goto fail_file;
	}
	sf->uid = uid;
	sf->gid = gid;
	sf->dev = st.st_dev;
	sf->ino = st.st_ino;
	sf->dirfd = d.fd;
	sf->made = 1;
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
void
sockfile_remove(struct sockfile *sf)
{
	const char	*slash, *name;
	struct stat	 st;

	/* Nothing made (a socket a service manager passed): nothing to do. */
	if (!sf->made)
		return;
	sf->made = 0;
	slash = strrchr(sf->path, '/');
	name = slash != NULL ? slash + 1 : sf->path;
	if (fstatat(sf->dirfd, name, &st, AT_SYMLINK_NOFOLLOW) == 0 &&
	    st.st_dev == sf->dev && st.st_ino == sf->ino &&
	    unlinkat(sf->dirfd, name, 0) == -1)
		log_warning("uds:%s: cannot remove the socket: %s; the next "
		    "start replaces it as a stale socket", sf->path,
		    strerror(errno));
	close(sf->dirfd);
}

/*
 * Make the directory tmpl (its name ending in XXXXXX) of our own, mode
 * 0700, owned by owner when we are to drop to that user: a socket in it
 * is safe whatever its parent is (an emptyDir is 0777 and not sticky).
 */
int
sockfile_private_dir(char *tmpl, const char *owner, char *err, size_t len)
{
	uid_t	 uid = (uid_t)-1;
	int	 e;

	if (owner != NULL && parse_uid(owner, &uid) == -1) {
		snprintf(err, len, "--user %s: no such user", owner);
		return (-1);
	}
	if (mkdtemp(tmpl) == NULL) {
		snprintf(err, len, "cannot make a directory %s: %s", tmpl,
		    strerror(errno));
		return (-1);
	}
	if (owner != NULL && chown(tmpl, uid, (gid_t)-1) == -1) {
		e = errno;
		(void)rmdir(tmpl);
		snprintf(err, len, "%s: cannot give it to %s: %s", tmpl, owner,
		    strerror(e));
		return (-1);
	}
	return (0);
}

/* Remove a directory sockfile_private_dir() made, once it is empty. */
void
sockfile_private_dir_remove(const char *path)
{
	if (rmdir(path) == -1 && errno != ENOENT)
		log_warning("cannot remove the directory %s: %s", path,
		    strerror(errno));
}

/* Make a descriptor non-blocking; -1 on failure. */
int
platform_nonblock(int fd)
{
	int	 flags;

	if ((flags = fcntl(fd, F_GETFL)) == -1 ||
	    fcntl(fd, F_SETFL, flags | O_NONBLOCK) == -1)
		return (-1);
	return (0);
}

/*
 * Raise the soft limit on descriptors to the hard limit, so that the
 * sessions fit; called before anything is opened.
 */
void
platform_raise_nofile(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
}

/*
 * The descriptors the process may open: its soft limit, LONG_MAX for
 * none, -1 if unknown.
 */
long
platform_fd_limit(void)
{
	struct rlimit	 rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1)
		return (-1);
	if (rl.rlim_cur == RLIM_INFINITY || rl.rlim_cur > LONG_MAX)
		return (LONG_MAX);
	return ((long)rl.rlim_cur);
}

/* The signals the daemon watches: stop (TERM, INT) and reload (HUP). */
size_t
platform_signals(const int **sigs)
{
	static const int	 list[] = { SIGTERM, SIGINT, SIGHUP };

	*sigs = list;
	return (sizeof(list) / sizeof(list[0]));
}

/* The uid of a user name, or -1. */
int
platform_user_id(const char *name, uid_t *uid)
{
	struct passwd	*pw;

	if ((pw = getpwnam(name)) == NULL)
		return (-1);
	*uid = pw->pw_uid;
	return (0);
}

/* The gid of a group name, or -1. */
int
platform_group_id(const char *name, gid_t *gid)
{
	struct group	*gr;

	if ((gr = getgrnam(name)) == NULL)
		return (-1);
	*gid = gr->gr_gid;
	return (0);
}

/* Block n signals: an orderly exit must not be cut short by one. */
void
platform_block_signals(const int *sigs, size_t n)
{
	sigset_t	 set;
	size_t		 i;

	sigemptyset(&set);
	for (i = 0; i < n; i++)
		sigaddset(&set, sigs[i]);
	sigprocmask(SIG_BLOCK, &set, NULL);
}

/*
 * Whether what st describes could be changed by a user other than root
 * and the one we run as: its owner, or its write bits for the group or
 * others (a sticky directory's let others write only their own names).
 * Nobody changes anything on a read-only mount.  -1 with err set if so.
 */
static int
others_cannot_change(const char *what, const struct stat *st, int rdonly,
    char *err, size_t len)
{
	int	 dir = S_ISDIR(st->st_mode);

	if (rdonly)
		return (0);
	if (st->st_uid != 0 && st->st_uid != geteuid()) {
		snprintf(err, len, "%s belongs to uid %lu, who could %s; it "
		    "must be root's%s", what, (unsigned long)st->st_uid,
		    dir ? "replace the file" : "change what dsroute does",
		    geteuid() != 0 ? " or this user's" : "");
		return (-1);
	}
	if ((st->st_mode & (S_IWGRP | S_IWOTH)) != 0 &&
	    !(dir && (st->st_mode & S_ISVTX))) {
		snprintf(err, len, "%s is writable by %s (mode %03o): whoever "
		    "can write it could %s; chmod go-w it", what,
		    st->st_mode & S_IWOTH ? "others" : "its group",
		    (unsigned)(st->st_mode & 0777), dir ? "replace the file" :
		    "change what dsroute does");
		return (-1);
	}
	return (0);
}

/* A directory others_cannot_change() lets through, or -1 with err set. */
static int
dir_cannot_change(const char *dir, char *err, size_t len)
{
	struct stat	 st;
	struct statvfs	 vfs;
	char		 what[PATH_MAX + 16];

	if (stat(dir, &st) == -1 || statvfs(dir, &vfs) == -1) {
		snprintf(err, len, "cannot read it: directory %s: %s", dir,
		    strerror(errno));
		return (-1);
	}
	snprintf(what, sizeof(what), "directory %s", dir);
	return (others_cannot_change(what, &st, vfs.f_flag & ST_RDONLY, err,
	    len));
}

/* Cut the last name off an absolute path: its directory ("/" stays). */
static void
path_up(char *dir)
{
	char	*slash = strrchr(dir, '/');

	if (slash == dir)
		dir[1] = '\0';
	else if (slash != NULL)
		*slash = '\0';
}

/* Append "/name" to the directory dir, of size len; -1 if it is too long. */
static int
path_append(char *dir, size_t len, const char *name, size_t n)
{
	size_t	 at = strlen(dir);

	if (at > 1)
		dir[at++] = '/';
	if (at + n >= len)
		return (-1);
	memcpy(dir + at, name, n);
	dir[at + n] = '\0';
	return (0);
}

/*
 * Resolve path as the kernel does, checking every directory a name is
 * looked up in: those above the working directory for a relative path,
 * then each one entered, and those symbolic links lead through.  Who
 * can change one of them can make path name another file.  The file
 * reached goes in st.  -1 with err set if one is not safe.
 */
static int
walk_path(const char *path, struct stat *st, char *err, size_t len)
{
	char	 cur[PATH_MAX], todo[2 * PATH_MAX], link[PATH_MAX];
	char	*name, *rest;
	size_t	 n;
	ssize_t	 ln;
	int	 hops = 0;

	if (path[0] == '/')
		snprintf(cur, sizeof(cur), "/");
	else if (getcwd(cur, sizeof(cur)) == NULL)
		goto sys;
	/* The working directory and every one above it. */
	snprintf(todo, sizeof(todo), "%s", cur);
	for (;;) {
		if (dir_cannot_change(todo, err, len) == -1)
			return (-1);
		if (strcmp(todo, "/") == 0)
			break;
		path_up(todo);
	}
	if ((size_t)snprintf(todo, sizeof(todo), "%s", path) >= sizeof(todo))
		goto toolong;
	for (rest = todo; *rest != '\0';) {
		name = rest + strspn(rest, "/");
		n = strcspn(name, "/");
		rest = name + n;
		if (n == 0 || (n == 1 && name[0] == '.'))
			continue;
		if (n == 2 && name[0] == '.' && name[1] == '.') {
			path_up(cur);
			continue;
		}
		if (path_append(cur, sizeof(cur), name, n) == -1)
			goto toolong;
		if (lstat(cur, st) == -1)
			goto sys;
		if (S_ISLNK(st->st_mode)) {
			if (++hops > 40) {
				errno = ELOOP;
				goto sys;
			}
			if ((ln = readlink(cur, link, sizeof(link))) == -1)
				goto sys;
			if ((size_t)ln == sizeof(link) ||
			    (size_t)ln + strlen(rest) >= sizeof(todo))
				goto toolong;
			/* The link's target, then what was left after it. */
			memmove(todo + ln, rest, strlen(rest) + 1);
			memcpy(todo, link, ln);
			rest = todo;
			path_up(cur);
			if (link[0] == '/')
				snprintf(cur, sizeof(cur), "/");
			continue;
		}
		if (S_ISDIR(st->st_mode)) {
			if (dir_cannot_change(cur, err, len) == -1)
				return (-1);
		} else if (rest[strspn(rest, "/")] != '\0') {
			errno = ENOTDIR;
			goto sys;
		}
	}
	return (0);

sys:
	snprintf(err, len, "cannot read it: %s", strerror(errno));
	return (-1);
toolong:
	snprintf(err, len, "cannot read it: %s", strerror(ENAMETOOLONG));
	return (-1);
}

/*
 * Open a configuration file to read, or -1 with a one-line reason in
 * err.  It must be a regular file of at most max bytes (not a FIFO that
 * blocks, nor a device without end), which neither it nor a directory
 * on the way to it, symbolic links followed, lets a user other than
 * root or ours change, as sshd's StrictModes would have it.
 */
int
platform_config_open(const char *path, off_t max, char *err, size_t len)
{
	struct stat	 st, walked;
	struct statvfs	 vfs;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY |
	    O_CLOEXEC)) == -1 || fstat(fd, &st) == -1 ||
	    fstatvfs(fd, &vfs) == -1) {
		snprintf(err, len, "cannot read it: %s", strerror(errno));
		goto fail;
	}
	if (S_ISDIR(st.st_mode)) {
		snprintf(err, len, "cannot read it: %s", strerror(EISDIR));
		goto fail;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, len, "cannot read it: it is a %s, not a file",
		    S_ISFIFO(st.st_mode) ? "FIFO" : S_ISCHR(st.st_mode) ?
		    "character device" : S_ISBLK(st.st_mode) ? "block device" :
		    S_ISSOCK(st.st_mode) ? "socket" : "special file");
		goto fail;
	}
	if (st.st_size > max) {
		snprintf(err, len, "cannot read it: it is larger than %lld "
		    "bytes", (long long)max);
		goto fail;
	}
	if (others_cannot_change("it", &st, vfs.f_flag & ST_RDONLY, err,
	    len) == -1 || walk_path(path, &walked, err, len) == -1)
		goto fail;
	/* Only a checked directory could change it meanwhile: ours. */
	if (walked.st_dev != st.st_dev || walked.st_ino != st.st_ino) {
		snprintf(err, len, "cannot read it: it changed while it was "
		    "opened");
		goto fail;
	}
	if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) == -1) {
		snprintf(err, len, "cannot read it: %s", strerror(errno));
		goto fail;
	}
	return (fd);

fail:
	if (fd != -1)
		close(fd);
	return (-1);
}

/* Check that ids are the ones asked for, none root, with no way back. */
static int
check_dropped(uid_t uid, gid_t gid, char *err, size_t len)
{
	uid_t	 u[3];
	gid_t	 g[3];
	int	 i;

	if (os_ids(u, g) == -1) {
		snprintf(err, len, "cannot read the ids after dropping "
		    "privileges: %s", strerror(errno));
		return (-1);
	}
	for (i = 0; i < 3; i++) {
		if (u[i] == uid && g[i] == gid && u[i] != 0 && g[i] != 0)
			continue;
		snprintf(err, len, "after dropping privileges the ids are uid "
		    "%lu/%lu/%lu gid %lu/%lu/%lu, not %lu and %lu without root; "
		    "stopping", (unsigned long)u[0], (unsigned long)u[1],
		    (unsigned long)u[2], (unsigned long)g[0],
		    (unsigned long)g[1], (unsigned long)g[2],
		    (unsigned long)uid, (unsigned long)gid);
		return (-1);
	}
	if (setuid(0) != -1 || setgid(0) != -1) {
		snprintf(err, len, "after dropping privileges root could be "
		    "regained; stopping");
		return (-1);
	}
	return (0);
}

/*
 * Drop to user and group (--user, --group), if given, in hitch's order
 * (groups, gid, uid), and check that no id is root and there is no way
 * back.  Return -1 with a one-line reason in err if that fails: the
 * caller stops.
 */
int
platform_drop(const char *user, const char *group, int allow_core, char *err,
    size_t len)
{
	struct passwd	*pw = NULL;
	uid_t		 uid;
	gid_t		 gid;

	if (user[0] == '\0') {
		if (group[0] == '\0')
			return (0);
		snprintf(err, len, "--group needs --user");
		return (-1);
	}
	if (parse_uid(user, &uid) == -1) {
		snprintf(err, len, "--user %s: no such user", user);
		return (-1);
	}
	pw = getpwuid(uid);
	if (group[0] != '\0') {
		if (parse_gid(group, &gid) == -1) {
			snprintf(err, len, "--group %s: no such group",
			    group);
			return (-1);
		}
	} else if (pw != NULL)
		gid = pw->pw_gid;
	else {
		snprintf(err, len, "--user %s has no entry in the user "
		    "database: give --group too", user);
		return (-1);
	}

	/* The user's own groups, or only the group given. */
	if ((pw != NULL ? initgroups(pw->pw_name, gid) :
	    setgroups(1, &gid)) == -1 || setgid(gid) == -1 ||
	    setuid(uid) == -1) {
		snprintf(err, len, "cannot drop privileges to user %s: %s%s",
		    user, strerror(errno), errno == EPERM ?
		    " (--user needs dsroute to start as root)" : "");
		return (-1);
	}
	if (check_dropped(uid, gid, err, len) == -1 ||
	    os_after_drop(allow_core, err, len) == -1)
		return (-1);
	log_info("running as uid %lu, gid %lu (--user %s)",
	    (unsigned long)uid, (unsigned long)gid, user);
	return (0);
}

/* The most descriptors a service manager may pass: far more than routes. */
#define INHERITED_MAX	4096

/* A copy of an environment variable, or NULL; the variable is removed. */
static char *
env_take(const char *name)
{
	const char	*v = getenv(name);
	char		*copy = v != NULL ? xstrdup(v) : NULL;

	unsetenv(name);
	return (copy);
}

/* A decimal value of the environment, at most max; -1 if it is not one. */
static int
env_number(const char *s, unsigned long max, unsigned long *v)
{
	char	*end;

	if (s == NULL || *s < '0' || *s > '9')
		return (-1);
	errno = 0;
	*v = strtoul(s, &end, 10);
	if (*end != '\0' || errno != 0 || *v > max)
		return (-1);
	return (0);
}

/* Describe an inherited descriptor as the kernel sees it. */
static int
describe_fd(struct inherited_fd *f, char *err, size_t len)
{
	socklen_t	 olen;
	int		 v;

	if (fcntl(f->fd, F_SETFD, FD_CLOEXEC) == -1) {
		snprintf(err, len, "fd %d (\"%s\"): LISTEN_FDS passes it, but "
		    "it is not open", f->fd, f->name);
		return (-1);
	}
	olen = sizeof(v);
	if (getsockopt(f->fd, SOL_SOCKET, SO_TYPE, &v, &olen) == -1) {
		if (errno == ENOTSOCK)
			return (0);
		snprintf(err, len, "fd %d (\"%s\"): %s", f->fd, f->name,
		    strerror(errno));
		return (-1);
	}
	f->is_socket = 1;
	f->type = v;
	olen = sizeof(v);
	if (getsockopt(f->fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &olen) == 0)
		f->listening = v != 0;
	f->addrlen = sizeof(f->addr);
	if (getsockname(f->fd, (struct sockaddr *)&f->addr, &f->addrlen) == -1)
		f->addrlen = 0;
	f->family = f->addrlen != 0 ? f->addr.ss_family : AF_UNSPEC;
	return (0);
}

/*
 * The descriptors a service manager passed, by the protocol of systemd's
 * sd_listen_fds(3): LISTEN_PID is this process, LISTEN_FDS descriptors
 * from 3 on, LISTEN_FDNAMES their names separated by colons.  The three
 * variables are removed whatever they say, so that no program we run
 * takes them for its own, and each descriptor is closed on exec.
 * Describe each in *fds (the caller frees it), *n of them: none when the
 * variables are not there or are meant for another process.  Return -1
 * with a one-line reason in err when they are malformed or pass a
 * descriptor that is not open.
 */
int
platform_inherited_fds(struct inherited_fd **fds, size_t *n, char *err,
    size_t len)
{
	char		*pid_s, *count_s, *names;
	const char	*p, *colon;
	unsigned long	 pid, count, i;
	size_t		 nnames;
	int		 rv = -1;

	*fds = NULL;
	*n = 0;
	pid_s = env_take("LISTEN_PID");
	count_s = env_take("LISTEN_FDS");
	names = env_take("LISTEN_FDNAMES");

	if (count_s == NULL || pid_s == NULL ||
	    env_number(pid_s, LONG_MAX, &pid) == -1 ||
	    (pid_t)pid != getpid()) {
		rv = 0;
		goto out;
	}
	if (env_number(count_s, INHERITED_MAX, &count) == -1) {
		snprintf(err, len, "LISTEN_FDS=%.32s: not a number of "
		    "descriptors from 0 to %d", count_s, INHERITED_MAX);
		goto out;
	}
	if (count == 0) {
		rv = 0;
		goto out;
	}
	if (names != NULL) {
		for (nnames = 1, p = names; *p != '\0'; p++)
			nnames += *p == ':';
		if (nnames != count) {
			snprintf(err, len, "LISTEN_FDNAMES names %zu "
			    "descriptor%s, LISTEN_FDS passes %lu", nnames,
			    nnames == 1 ? "" : "s", count);
			goto out;
		}
	}
	*fds = xcalloc(count, sizeof(**fds));
	for (i = 0, p = names; i < count; i++) {
		(*fds)[i].fd = 3 + (int)i;
		if (p != NULL) {
			if ((colon = strchr(p, ':')) == NULL)
				colon = p + strlen(p);
			log_escape((*fds)[i].name, sizeof((*fds)[i].name), p,
			    colon - p);
			p = *colon == ':' ? colon + 1 : colon;
		} else
			snprintf((*fds)[i].name, sizeof((*fds)[i].name),
			    "unknown");
		if (describe_fd(&(*fds)[i], err, len) == -1) {
			free(*fds);
			*fds = NULL;
			goto out;
		}
	}
	*n = count;
	rv = 0;
out:
	free(pid_s);
	free(count_s);
	free(names);
	return (rv);
}

/*
 * The name the program was run by, without its directory: what tells
 * dsroute to take dotnet-dsrouter's command line.
 */
void
platform_program_name(const char *argv0, char *buf, size_t len)
{
	const char	*slash = strrchr(argv0, '/');

	snprintf(buf, len, "%s", slash != NULL ? slash + 1 : argv0);
}

/*
 * The local endpoint of a diagnostic IPC name as dotnet-dsrouter takes it
 * (-ipcs, -ipcc): a socket file, uds:PATH.  Return the name within buf,
 * as a tool takes it with --diagnostic-port.
 */
const char *
platform_ipc_spec(const char *name, char *buf, size_t len)
{
	snprintf(buf, len, "uds:%s", name);
	return (buf + 4);
}

/*
 * dotnet-dsrouter's default IPC server, and the runtime-style name next
 * to it, in $TMPDIR: dotnet-diagnostic-dsrouter-PID-KEY-socket and
 * dotnet-diagnostic-PID-KEY-socket.  Return 1: the names carry the key,
 * so that another key makes other names.
 */
int
platform_ipc_default_names(long pid, unsigned long long key, char *path,
    size_t len, char *sibling, size_t slen)
{
	const char	*tmp = getenv("TMPDIR");
	const char	*slash;

	if (tmp == NULL || *tmp == '\0')
		tmp = "/tmp";
	slash = tmp[strlen(tmp) - 1] == '/' ? "" : "/";
	snprintf(path, len, "%s%sdotnet-diagnostic-dsrouter-%ld-%llu-socket",
	    tmp, slash, pid, key);
	snprintf(sibling, slen, "%s%sdotnet-diagnostic-%ld-%llu-socket", tmp,
	    slash, pid, key);
	return (1);
}

/* The default IPC server, as the usage gives it. */
const char *
platform_ipc_default_help(void)
{
	return ("$TMPDIR/dotnet-diagnostic-dsrouter-PID-KEY-socket");
}

/*
 * What is at a local IPC path, not following a symbolic link: 1 a
 * socket, 0 anything else, -1 nothing (or nothing we may see).
 */
int
platform_ipc_stat(const char *path)
{
	struct stat	 st;

	if (lstat(path, &st) == -1)
		return (-1);
	return (S_ISSOCK(st.st_mode) ? 1 : 0);
}

/*
 * dotnet-dsrouter's --block-signals: keep the signal named SIGINT,
 * SIGQUIT or SIGTERM from reaching the process, and the programs it runs.
 * -1 with errno set on failure (EINVAL: another name).
 */
int
platform_block_signal(const char *name)
{
	static const struct {
		const char	*name;
		int		 sig;
	} names[] = {
		{ "SIGINT", SIGINT }, { "SIGQUIT", SIGQUIT },
		{ "SIGTERM", SIGTERM },
	};
	sigset_t	 set;
	size_t		 i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strcmp(name, names[i].name) == 0)
			break;
	}
	if (i == sizeof(names) / sizeof(names[0])) {
		errno = EINVAL;
		return (-1);
	}
	sigemptyset(&set);
	sigaddset(&set, names[i].sig);
	return (sigprocmask(SIG_BLOCK, &set, NULL));
}

/* The signal that asks a dotnet-dsrouter to quit: SIGQUIT. */
int
platform_quit_signal(void)
{
	return (SIGQUIT);
}

/*
 * Our parent's pid: another one once the parent that started us is gone
 * (the process that adopted us).  -1 if it cannot be told.
 */
pid_t
platform_parent_pid(void)
{
	return (getppid());
}

/* Whether the process pid exists (ours to signal or not). */
int
platform_pid_alive(pid_t pid)
{
	return (kill(pid, 0) == 0 || errno == EPERM);
}

/* Whether standard input is a terminal. */
int
platform_stdin_terminal(void)
{
	return (isatty(STDIN_FILENO));
}

/* Whether standard input is a pipe or a socket (a launching tool's). */
int
platform_stdin_pipe(void)
{
	struct stat	 st;

	return (fstat(STDIN_FILENO, &st) == 0 &&
	    (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)));
}

/*
 * Get standard input ready to be read from the event loop, and return
 * the descriptor to watch for it (-1: poll platform_stdin_read() on a
 * timer instead).  A background job of a terminal then reads EIO rather
 * than being stopped by SIGTTIN.
 */
int
platform_stdin_event_fd(void)
{
	signal(SIGTTIN, SIG_IGN);
	return (STDIN_FILENO);
}

/*
 * Read what standard input holds: a byte count, 0 at its end, -1 with
 * errno set (EAGAIN: nothing yet).
 */
ssize_t
platform_stdin_read(void *buf, size_t len)
{
	return (read(STDIN_FILENO, buf, len));
}

/* The columns of the terminal on standard output, or 0 if it is none. */
size_t
platform_term_columns(void)
{
	struct winsize	 ws;

	if (!isatty(STDOUT_FILENO))
		return (0);
	if (ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return (ws.ws_col);
	return (80);
}

/*
 * Find the program name (a helper such as adb or iproxy; it may start
 * with directories below dir) into buf: in dir when it is not NULL,
 * else in each directory of PATH (an empty entry being the current
 * one), then in those the system's packages put helpers in though PATH
 * may not name them (os_program_dirs: Homebrew's on macOS).  Return -1
 * if no executable is there; buf then holds the last place looked.
 */
int
platform_find_program(const char *dir, const char *name, char *buf,
    size_t len)
{
	const char	*path = getenv("PATH"), *p, *end;
	const char *const *d;
	size_t		 n;

	if (dir != NULL) {
		snprintf(buf, len, "%s/%s", dir, name);
		return (access(buf, X_OK) == 0 ? 0 : -1);
	}
	if (path == NULL || *path == '\0')
		path = "/usr/bin:/bin";
	for (p = path; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		if ((end = strchr(p, ':')) == NULL)
			end = p + strlen(p);
		n = end - p;
		if (n == 0)
			snprintf(buf, len, "./%s", name);
		else
			snprintf(buf, len, "%.*s/%s", (int)n, p, name);
		if (access(buf, X_OK) == 0)
			return (0);
	}
	for (d = os_program_dirs; *d != NULL; d++) {
		snprintf(buf, len, "%s/%s", *d, name);
		if (access(buf, X_OK) == 0)
			return (0);
	}
	return (-1);
}

/*
 * Where platform_find_program() looks, for a message: "PATH", and the
 * system's own directories after it.
 */
const char *
platform_program_places(void)
{
	static char		 places[256];
	const char *const	*d;
	size_t			 n;

	if (places[0] != '\0')
		return (places);
	n = (size_t)snprintf(places, sizeof(places), "PATH");
	for (d = os_program_dirs; *d != NULL && n < sizeof(places); d++)
		n += (size_t)snprintf(places + n, sizeof(places) - n, "%s%s",
		    d[1] == NULL ? " or " : ", ", *d);
	return (places);
}
