/* SPDX-License-Identifier: ISC */

/*
 * macOS's local transports: socket files and a directory of them.  It
 * has no /proc and no mount namespaces, so no proc:.
 */

#include "config.h"

#include <stddef.h>

#include "transports/transport.h"

extern const struct transport	 transport_uds;
extern const struct transport	 transport_dir;

const struct transport *const transports_local[] = {
	&transport_uds,
	&transport_dir,
	NULL
};

const struct transport_absent transports_absent[] = {
	{ "pipe:", "named pipes exist only on Windows" },
	{ "namedpipe:", "named pipes exist only on Windows" },
	{ "proc:", "macOS has no /proc and no mount namespaces: its runtimes "
	    "make their sockets in their user's TMPDIR, so use "
	    "dir:$TMPDIR" },
	{ NULL, NULL }
};
