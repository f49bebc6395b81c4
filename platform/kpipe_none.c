/* SPDX-License-Identifier: ISC */

/*
 * Systems without splice(2) (macOS, Windows): no kernel pipe can carry a
 * stream between two sockets, so the pump copies every stream.
 */

#include "config.h"

#include <sys/types.h>

#include <errno.h>

#include "platform/platform.h"

int
platform_kpipe_open(int fd[2])
{
	(void)fd;
	errno = ENOSYS;
	return (-1);
}

ssize_t
platform_kpipe_fill(int pipe_w, int from, size_t n)
{
	(void)pipe_w;
	(void)from;
	(void)n;
	errno = ENOSYS;
	return (-1);
}

ssize_t
platform_kpipe_drain(int pipe_r, int to, size_t n)
{
	(void)pipe_r;
	(void)to;
	(void)n;
	errno = ENOSYS;
	return (-1);
}
