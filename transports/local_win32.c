/* SPDX-License-Identifier: ISC */

/*
 * Windows's local transport: the named pipes its runtimes serve.  There
 * are no socket files to dial or find there.
 */

#include "config.h"

#include <stddef.h>

#include "transports/transport.h"

#define NO_SOCKET_FILES	"the .NET runtime on Windows serves a named pipe, " \
	"not a socket file: use pipe:NAME"

extern const struct transport	 transport_pipe;

const struct transport *const transports_local[] = {
	&transport_pipe,
	NULL
};

const struct transport_absent transports_absent[] = {
	{ "uds:", NO_SOCKET_FILES },
	{ "unix:", NO_SOCKET_FILES },
	{ "dir:", "runtimes on Windows make no socket files to find: name "
	    "each pipe:dotnet-diagnostic-PID" },
	{ "proc:", "there is no /proc on Windows: name each "
	    "pipe:dotnet-diagnostic-PID" },
	{ NULL, NULL }
};
