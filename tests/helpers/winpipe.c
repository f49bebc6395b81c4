/* SPDX-License-Identifier: ISC */

/*
 * winpipe.c: named pipes as both Windows fakes use them (winpipe.h).
 */

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "winpipe.h"

/*
 * Parse a pipe's name: NAME or \\.\pipe\NAME (any case), kept as the full
 * name.  0, or PIPE_REMOTE, PIPE_NOT_PIPE or PIPE_BAD.
 */
int
pipe_name(const char *s, struct pipename *p)
{
	static const char	 prefix[] = PIPE_PREFIX;
	const char		*name = s;

	if (_strnicmp(s, prefix, sizeof(prefix) - 1) == 0)
		name = s + sizeof(prefix) - 1;
	else if (strncmp(s, "\\\\", 2) == 0)
		return (PIPE_REMOTE);
	if (strncmp(s, "tcp:", 4) == 0 || *s == '/')
		return (PIPE_NOT_PIPE);
	if (*name == '\0' || strlen(name) > PIPE_NAME_MAX ||
	    strchr(name, '/') != NULL)
		return (PIPE_BAD);
	snprintf(p->text, sizeof(p->text), "%s%s", prefix, name);
	if (MultiByteToWideChar(CP_UTF8, 0, p->text, -1, p->w,
	    (int)(sizeof(p->w) / sizeof(p->w[0]))) == 0)
		return (PIPE_BAD);
	return (0);
}

/*
 * Close a pipe connection.  Bytes already written stay readable by the
 * peer: closing the server end is not DisconnectNamedPipe, which would
 * drop them (pipeprobe).
 */
void
os_close(struct conn *pc)
{
	if (pc == NULL)
		return;
	CloseHandle(pc->h);
	CloseHandle(pc->ev);
	free(pc);
}
