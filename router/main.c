/* SPDX-License-Identifier: ISC */

/*
 * dsroute: route the .NET diagnostic IPC protocol between a local endpoint
 * and the network.  main() picks a front end, dotnet-dsrouter's command
 * line (by the program's name or its first argument) or dsroute's own,
 * lets it make the routes, and hands them to the daemon.  "dsroute ps"
 * is a client of a router, and runs no daemon (ps.c).
 */

#include "config.h"

#include <string.h>

#include "platform/platform.h"
#include "platform/standin.h"
#include "router/daemon.h"
#include "router/frontend.h"
#include "router/settings.h"

int
main(int argc, char *argv[])
{
	const struct frontend	*fe;

	/* A stand-in (standin.c) is nothing else: before anything starts. */
	(void)standin_main(argc, argv);
	platform_init();
	if (argc > 1 && strcmp(argv[1], "ps") == 0)
		return (ps_main(argc - 1, argv + 1));
	settings_init(&settings);
	if (dsrouter_wanted(argc, argv))
		fe = dsrouter_frontend(argc, argv);
	else
		fe = cli_frontend(argc, argv);
	return (daemon_run(fe));
}
