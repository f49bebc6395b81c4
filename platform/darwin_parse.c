/* SPDX-License-Identifier: ISC */

/*
 * The pure half of darwin.c: reading a KERN_PROCARGS2 buffer, and a
 * process's start time as the .NET runtime keys its default socket by
 * it.  Built on every system (darwin_parse.h), so that the unit tests
 * (tests/unit/test_darwin.c) run where no macOS is.
 */

#include "config.h"

#include <sys/types.h>

#include <stdint.h>
#include <string.h>

#include "platform/darwin_parse.h"
#include "platform/platform.h"

/*
 * Parse what sysctl KERN_PROCARGS2 gives of a process: its argc (an
 * int, in the machine's order), the path of its program, NUL bytes up
 * to the first argument, argc arguments each ending in NUL, then its
 * environment, entries ending in NUL up to an empty one or the end.
 * The buffer is the process's to write: nothing is read beyond len, and
 * a buffer cut short gives the whole words it holds (nargs).  An empty
 * first argument cannot be told from the padding: the arguments then
 * start one word late, as every reader of this buffer has it.  Return
 * -1 if there is no argc or no path ending in NUL.
 */
int
darwin_procargs_parse(const char *buf, size_t len, struct darwin_procargs *pa)
{
	const char	*p, *end = buf + len, *nul;
	int32_t		 argc;

	memset(pa, 0, sizeof(*pa));
	if (len < sizeof(argc))
		return (-1);
	memcpy(&argc, buf, sizeof(argc));
	if (argc < 0)
		return (-1);
	pa->argc = argc;
	p = buf + sizeof(argc);
	if ((nul = memchr(p, '\0', end - p)) == NULL)
		return (-1);
	pa->exec_path = p;
	for (p = nul + 1; p < end && *p == '\0'; p++)
		;
	pa->args = p;
	while (pa->nargs < argc && p < end &&
	    (nul = memchr(p, '\0', end - p)) != NULL) {
		p = nul + 1;
		pa->nargs++;
	}
	pa->args_len = p - pa->args;
	if (pa->nargs < argc)
		return (0);
	pa->env = p;
	while (p < end && *p != '\0' &&
	    (nul = memchr(p, '\0', end - p)) != NULL)
		p = nul + 1;
	pa->env_len = p - pa->env;
	return (0);
}

/*
 * The key of a process's default socket, dotnet-diagnostic-PID-KEY-socket,
 * from its start time (kp_proc.p_starttime, or proc_bsdinfo's
 * pbi_start_tvsec and pbi_start_tvusec): the runtime's
 * GetProcessIdDisambiguationKey takes the seconds since 1970 and drops
 * the microseconds.  A time before 1970 is none the runtime could have.
 */
uint64_t
darwin_start_key(int64_t sec, int64_t usec)
{
	(void)usec;
	return (sec < 0 ? 0 : (uint64_t)sec);
}

/*
 * What the router knows of process pid from its start time: one pid
 * (macOS has no pid namespaces), its key (proc_info's starttime, which
 * on Linux is clock ticks after boot) and the same seconds since 1970.
 */
void
darwin_proc_info_fill(pid_t pid, int64_t sec, int64_t usec,
    struct proc_info *pi)
{
	memset(pi, 0, sizeof(*pi));
	pi->pid = pi->own_pid = pid;
	pi->starttime = darwin_start_key(sec, usec);
	pi->start_epoch = pi->starttime;
}
