/* SPDX-License-Identifier: ISC */

/*
 * What darwin.c decides from the data macOS gives, as pure functions
 * (darwin_parse.c), built on every system so that the unit tests reach
 * them on Linux, where nothing else of darwin.c builds.
 */

#ifndef DARWIN_PARSE_H
#define DARWIN_PARSE_H

#include <sys/types.h>

#include <stddef.h>
#include <stdint.h>

#include "platform/platform.h"

/* A process's arguments and environment, as sysctl KERN_PROCARGS2 gives. */
struct darwin_procargs {
	int		 argc;		/* as the buffer says */
	const char	*exec_path;	/* the program, NUL-terminated */
	const char	*args;		/* the arguments, each NUL-terminated */
	size_t		 args_len;	/* their bytes, the NULs included */
	int		 nargs;		/* how many of argc are there whole */
	const char	*env;		/* NAME=VALUE entries, NUL-separated */
	size_t		 env_len;
};

int		 darwin_procargs_parse(const char *, size_t,
		    struct darwin_procargs *);
uint64_t	 darwin_start_key(int64_t, int64_t);
void		 darwin_proc_info_fill(pid_t, int64_t, int64_t,
		    struct proc_info *);

#endif /* DARWIN_PARSE_H */
