/* SPDX-License-Identifier: ISC */

/*
 * What Linux says about a process, from /proc: its pid as it sees itself
 * in its own pid namespace, and its start time, which the runtime uses as
 * the key of its default socket name.  The parsers are pure, so that the
 * unit tests and the fuzzers reach them without a /proc.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "platform/platform.h"

/* Read a small /proc file whole into buf; return its length or -1. */
static ssize_t
read_file(const char *path, char *buf, size_t len)
{
	ssize_t	 n, got = 0;
	int	 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return (-1);
	while ((size_t)got < len - 1) {
		if ((n = read(fd, buf + got, len - 1 - got)) == -1) {
			if (errno == EINTR)
				continue;
			close(fd);
			return (-1);
		}
		if (n == 0)
			break;
		got += n;
	}
	close(fd);
	buf[got] = '\0';
	return (got);
}

/* Parse a decimal u64 at *p, within end; advance *p.  Return -1 if none. */
static int
parse_u64(const char **p, const char *end, uint64_t *v)
{
	const char	*s = *p;

	*v = 0;
	if (s == end || *s < '0' || *s > '9')
		return (-1);
	for (; s < end && *s >= '0' && *s <= '9'; s++) {
		if (*v > (UINT64_MAX - (uint64_t)(*s - '0')) / 10)
			return (-1);
		*v = *v * 10 + (uint64_t)(*s - '0');
	}
	*p = s;
	return (0);
}

/*
 * The start time of a process, field 22 of its /proc/PID/stat, counted
 * after the last ')': the command name before it may hold spaces and
 * parentheses of its own.  Return -1 if buf has no such field.
 */
int
proc_stat_starttime(const char *buf, size_t len, uint64_t *starttime)
{
	const char	*p, *end = buf + len;
	int		 field;

	for (p = end; p > buf && p[-1] != ')'; p--)
		;
	if (p == buf)
		return (-1);
	/* p is past ')'; fields 3 to 21 come before the start time. */
	for (field = 3; field <= 22; field++) {
		if (p == end || *p != ' ')
			return (-1);
		p++;
		if (field == 22)
			return (parse_u64(&p, end, starttime));
		while (p < end && *p != ' ')
			p++;
	}
	return (-1);
}

/*
 * The pid of a process as it knows itself: the last entry of the NSpid
 * line of its status.  dflt when there is no such line.
 */
pid_t
proc_status_own_pid(const char *buf, size_t len, pid_t dflt)
{
	const char	*p, *end = buf + len, *line;
	uint64_t	 v;
	pid_t		 own = dflt;

	for (line = buf; line < end; line = p + 1) {
		for (p = line; p < end && *p != '\n'; p++)
			;
		if ((size_t)(p - line) < 6 || memcmp(line, "NSpid:", 6) != 0)
			continue;
		for (line += 6; line < p; ) {
			while (line < p && (*line == ' ' || *line == '\t'))
				line++;
			if (line == p)
				break;
			if (parse_u64(&line, p, &v) == -1 || v > INT32_MAX)
				return (dflt);
			own = (pid_t)v;
		}
		break;
	}
	return (own);
}

/* The boot time, in seconds since 1970, from /proc/stat; 0 if unknown. */
static uint64_t
boot_time(void)
{
	static uint64_t	 btime;
	FILE		*f;
	char		*line = NULL;
	const char	*p;
	size_t		 size = 0;
	ssize_t		 n;

	if (btime != 0 || (f = fopen("/proc/stat", "re")) == NULL)
		return (btime);
	/* The interrupt counts before it can fill many pages. */
	while ((n = getline(&line, &size, f)) != -1) {
		if (strncmp(line, "btime ", 6) != 0)
			continue;
		p = line + 6;
		if (parse_u64(&p, line + n, &btime) == -1)
			btime = 0;
		break;
	}
	free(line);
	fclose(f);
	return (btime);
}

/*
 * Fill pi for the process pid, as this process sees it: its start time,
 * and with own non-zero also the pid it knows itself by.  Return -1
 * with errno set if it cannot be read (gone, or hidden by hidepid=).
 */
int
proc_info_get(pid_t pid, int own, struct proc_info *pi)
{
	char		 path[64], buf[4096];
	ssize_t		 n;
	long		 hz;

	memset(pi, 0, sizeof(*pi));
	pi->pid = pi->own_pid = pid;
	snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((n = read_file(path, buf, sizeof(buf))) == -1)
		return (-1);
	if (proc_stat_starttime(buf, n, &pi->starttime) == -1) {
		errno = EINVAL;
		return (-1);
	}
	if ((hz = sysconf(_SC_CLK_TCK)) > 0 && boot_time() != 0)
		pi->start_epoch = boot_time() + pi->starttime / (uint64_t)hz;
	if (!own)
		return (0);
	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((n = read_file(path, buf, sizeof(buf))) != -1)
		pi->own_pid = proc_status_own_pid(buf, n, pid);
	return (0);
}
