/* SPDX-License-Identifier: ISC */

/*
 * Stand-ins (standin.c): for each remote runtime, a local process that
 * does nothing but exist, so that the .NET diagnostic tools, which look
 * for a local pid and its socket dotnet-diagnostic-PID-KEY-socket, find
 * the remote app under its name.  A stand-in is dsroute run again, held
 * by a lifeline: it ends when its end of the lifeline reads EOF.  Its
 * TMPDIR is the directory of its socket, where tools that read it look.
 */

#ifndef STANDIN_H
#define STANDIN_H

#include <sys/types.h>

#include <stddef.h>

struct standin {
	pid_t			 pid;		/* -1 when none */
	int			 fd;		/* our end of its lifeline, -1
						   when none; EOF when it ended */
	unsigned long long	 starttime;	/* clock ticks after boot, 0 if
						   unknown */
};

/* standin.c */
int		 standin_init(char *, size_t);
int		 standin_start(struct standin *, const char *, const char *,
		    const char *, char *, size_t);
void		 standin_stop(struct standin *);
unsigned long long standin_start_time(const struct standin *);
int		 standin_main(int, char *[]);

#endif /* STANDIN_H */
