/* SPDX-License-Identifier: ISC */

/*
 * What each system's own file (linux.c, darwin.c) gives posix.c, the
 * part every POSIX system shares; not for the layers above, which see
 * platform.h.
 */

#ifndef OS_H
#define OS_H

#include <sys/types.h>

#include <stddef.h>

int		 os_ids(uid_t [3], gid_t [3]);
int		 os_after_drop(int, char *, size_t);
int		 os_sticky_dir_safe(const char *, mode_t, char *, size_t);
void		 os_dies_with_parent(int);
mode_t		 os_socket_umask(mode_t);
int		 os_socket_chmod(int, mode_t);

/* Where helper programs are looked for after PATH; NULL-terminated. */
extern const char *const os_program_dirs[];
/* How the stand-ins name their own program's file when it will not open. */
extern const char os_self_exe[];

#endif /* OS_H */
