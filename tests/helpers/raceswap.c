/* SPDX-License-Identifier: ISC */

/*
 * raceswap: the attacker of the socket-file race test (security.md LS-4).
 *
 *	raceswap DIR NAME TARGET
 *
 * In DIR, a shared sticky directory, it keeps putting three objects of
 * its own at NAME, as fast as it can, one after the other: a stale
 * socket, a symbolic link to TARGET and a regular file; between two, NAME
 * is free for a moment.  It moves them with rename, never removes one, so
 * an object that vanishes, or comes back changed, was removed or changed
 * by someone else: the router under test.  On SIGTERM it reports
 *
 *	raceswap: rounds=N busy=B vanished=S,L,F changed=C
 *
 * (busy: NAME was taken, by the router's own socket) and exits 1 if an
 * object vanished or changed.  Like the fakes, it shares no code with
 * the router.
 */

#define _GNU_SOURCE	1

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef RENAME_NOREPLACE
#define RENAME_NOREPLACE	(1 << 0)
#endif

enum { OBJ_SOCK, OBJ_LINK, OBJ_FILE, NOBJ };

static const char *const obj_names[NOBJ] = { "sock", "link", "file" };

static volatile sig_atomic_t	 stop;
static int			 dirfd_shared;
static int			 dirfd_hold;
static const char		*target;
static struct stat		 made[NOBJ];
static unsigned long		 vanished[NOBJ], changed, busy, rounds;

static void
on_term(int sig)
{
	stop = 1;
}

static void __attribute__((noreturn))
die(const char *what)
{
	fprintf(stderr, "raceswap: %s: %s\n", what, strerror(errno));
	exit(2);
}

/* A rename that never replaces: renameat2's flag, or macOS's RENAME_EXCL. */
static int
rename_noreplace(int from_dir, const char *from, int to_dir, const char *to)
{
#ifdef RENAME_EXCL
	return (renameatx_np(from_dir, from, to_dir, to, RENAME_EXCL));
#else
	return (renameat2(from_dir, from, to_dir, to, RENAME_NOREPLACE));
#endif
}

/* Make an object in the holding directory and remember what it is. */
static void
make(int obj, const char *hold)
{
	struct sockaddr_un	 sun;
	int			 fd;

	(void)unlinkat(dirfd_hold, obj_names[obj], 0);
	switch (obj) {
	case OBJ_SOCK:
		/* Bound and closed: a stale socket nobody answers on. */
		memset(&sun, 0, sizeof(sun));
		sun.sun_family = AF_UNIX;
		if ((size_t)snprintf(sun.sun_path, sizeof(sun.sun_path),
		    "%s/%s", hold, obj_names[obj]) >= sizeof(sun.sun_path))
			die("socket path");
		if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) == -1 ||
		    bind(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1)
			die("socket");
		close(fd);
		break;
	case OBJ_LINK:
		if (symlinkat(target, dirfd_hold, obj_names[obj]) == -1)
			die("symlink");
		break;
	case OBJ_FILE:
		if ((fd = openat(dirfd_hold, obj_names[obj], O_WRONLY |
		    O_CREAT | O_EXCL, 0644)) == -1 ||
		    write(fd, "attacker\n", 9) != 9)
			die("file");
		close(fd);
		break;
	}
	if (fstatat(dirfd_hold, obj_names[obj], &made[obj],
	    AT_SYMLINK_NOFOLLOW) == -1)
		die("fstatat");
}

/* Check an object that came back: the same inode, mode and owner. */
static void
check(int obj)
{
	struct stat	 st;

	if (fstatat(dirfd_hold, obj_names[obj], &st, AT_SYMLINK_NOFOLLOW) ==
	    -1 || st.st_ino != made[obj].st_ino ||
	    st.st_mode != made[obj].st_mode ||
	    st.st_uid != made[obj].st_uid || st.st_gid != made[obj].st_gid ||
	    st.st_size != made[obj].st_size)
		changed++;
}

int
main(int argc, char *argv[])
{
	char		 hold[sizeof(((struct sockaddr_un *)0)->sun_path)];
	const char	*name;
	int		 obj, i;

	if (argc != 4) {
		fprintf(stderr, "usage: raceswap DIR NAME TARGET\n");
		return (64);
	}
	name = argv[2];
	target = argv[3];
	signal(SIGTERM, on_term);
	if ((size_t)snprintf(hold, sizeof(hold), "%s/.raceswap-%ld", argv[1],
	    (long)getpid()) >= sizeof(hold) - 8)
		die("directory name");
	if (mkdir(hold, 0755) == -1)
		die("mkdir");
	if ((dirfd_shared = open(argv[1], O_DIRECTORY | O_RDONLY)) == -1 ||
	    (dirfd_hold = open(hold, O_DIRECTORY | O_RDONLY)) == -1)
		die("open");
	for (obj = 0; obj < NOBJ; obj++)
		make(obj, hold);
	printf("raceswap: ready\n");
	fflush(stdout);

	while (!stop) {
		rounds++;
		for (obj = 0; obj < NOBJ && !stop; obj++) {
			if (rename_noreplace(dirfd_hold, obj_names[obj],
			    dirfd_shared, name) == -1) {
				if (errno != EEXIST)
					die("rename in");
				busy++;
				continue;
			}
			/* Leave it there for a moment. */
			for (i = 0; i < 3; i++)
				(void)getppid();
			if (rename_noreplace(dirfd_shared, name, dirfd_hold,
			    obj_names[obj]) == -1) {
				/* Gone from NAME: someone removed it. */
				vanished[obj]++;
				make(obj, hold);
				continue;
			}
			check(obj);
		}
	}

	for (obj = 0; obj < NOBJ; obj++)
		(void)unlinkat(dirfd_hold, obj_names[obj], 0);
	(void)rmdir(hold);
	printf("raceswap: rounds=%lu busy=%lu vanished=%lu,%lu,%lu "
	    "changed=%lu\n", rounds, busy, vanished[OBJ_SOCK],
	    vanished[OBJ_LINK], vanished[OBJ_FILE], changed);
	return (vanished[OBJ_SOCK] + vanished[OBJ_LINK] + vanished[OBJ_FILE] +
	    changed > 0 ? 1 : 0);
}
