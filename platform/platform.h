/* SPDX-License-Identifier: ISC */

/*
 * What differs between operating systems, behind one small interface:
 * what the kernel says about a process.  The engine and the transports
 * call these and never read /proc themselves.
 */

#ifndef PLATFORM_H
#define PLATFORM_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

/* What the router knows of a local process, seen from its own namespace. */
struct proc_info {
	pid_t		 pid;		/* as we see it */
	pid_t		 own_pid;	/* as it sees itself (innermost NSpid) */
	uint64_t	 starttime;	/* clock ticks after boot (stat field 22) */
	uint64_t	 start_epoch;	/* the same, in seconds since 1970 */
};

/* posix.c */
int	 proc_info_get(pid_t, int, struct proc_info *);
int	 proc_stat_starttime(const char *, size_t, uint64_t *);
pid_t	 proc_status_own_pid(const char *, size_t, pid_t);

#endif /* PLATFORM_H */
