/* SPDX-License-Identifier: ISC */

/*
 * winpipe.h: what the two Windows fakes (winfakert, winfaketool) share of
 * named pipes: a pipe's name, given as NAME or \\.\pipe\NAME, and one
 * connection on a pipe handle, closed by os_close() (winpipe.c), which is
 * what fakertcore.c and faketoolcore.c call.
 */

#ifndef TESTS_WINPIPE_H
#define TESTS_WINPIPE_H

#include <windows.h>

#define PIPE_PREFIX		"\\\\.\\pipe\\"
#define PIPE_NAME_MAX		256

/* pipe_name()'s failures. */
#define PIPE_REMOTE		(-1)	/* \\SERVER\...: not a local pipe */
#define PIPE_NOT_PIPE		(-2)	/* tcp:... or /path */
#define PIPE_BAD		(-3)	/* empty, too long, '/', not UTF-8 */

/* One pipe handle and the event of its one operation at a time. */
struct conn {
	HANDLE			 h;
	HANDLE			 ev;
	OVERLAPPED		 ov;
};

/* A pipe's full name, \\.\pipe\NAME, as text and for the W calls. */
struct pipename {
	wchar_t			 w[PIPE_NAME_MAX + 16];
	char			 text[3 * (PIPE_NAME_MAX + 16)];
};

int	pipe_name(const char *, struct pipename *);
void	os_close(struct conn *);

#endif /* TESTS_WINPIPE_H */
