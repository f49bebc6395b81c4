/* SPDX-License-Identifier: ISC */

/*
 * Linux's local transports: socket files, a directory of them, and
 * proc:, which reaches other mount namespaces through /proc.
 */

#include "config.h"

#include <stddef.h>

#include "transports/transport.h"

extern const struct transport	 transport_uds;
extern const struct transport	 transport_dir;
extern const struct transport	 transport_proc;

const struct transport *const transports_local[] = {
	&transport_uds,
	&transport_dir,
	&transport_proc,
	NULL
};

const struct transport_absent transports_absent[] = {
	{ "pipe:", "named pipes exist only on Windows" },
	{ "namedpipe:", "named pipes exist only on Windows" },
	{ NULL, NULL }
};
