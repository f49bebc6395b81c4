/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the endpoint grammar.  Parsing never resolves names, so any input
 * is safe to feed.  A spec that parses must describe a usable endpoint,
 * parse again from its own text to the same thing, and leave nothing
 * behind when cleared; one that fails must say why.
 */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "router/endpoint.h"
#include "transports/socket.h"
#include "transports/transport.h"
#include "transports/uds.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

/* What only its transport keeps must be usable too. */
static void
check_address(const struct endpoint *ep)
{
	const char	*tr = ep->transport->name;
	const char	*port;

	if (strcmp(tr, "uds") == 0 && (UDS(ep)->path[0] == '\0' ||
	    UDS(ep)->mode > 0777))
		abort();
	if (strcmp(tr, "tcp") == 0 || strcmp(tr, "tls") == 0) {
		port = TCP(ep)->port;
		if (port[0] == '\0' || atoi(port) > 65535)
			abort();
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct endpoint	 ep, again;
	char		*spec, err[512], said[256], again_said[256];

	if (size > 4096 || (spec = malloc(size + 1)) == NULL)
		return (0);
	memcpy(spec, data, size);
	spec[size] = '\0';

	err[0] = '\0';
	if (endpoint_parse(spec, &ep, err, sizeof(err)) == -1) {
		if (err[0] == '\0' || ep.spec != NULL)
			abort();	/* a refusal says why, holds nothing */
		free(spec);
		return (0);
	}
	if (ep.name[0] == '\0' || ep.transport == NULL || ep.t == NULL)
		abort();
	check_address(&ep);

	/* Its own text must parse to the same: name, role, description. */
	said[0] = again_said[0] = '\0';
	if (ep.transport->describe != NULL)
		ep.transport->describe(&ep, said, sizeof(said));
	if (endpoint_parse(ep.spec, &again, err, sizeof(err)) == -1 ||
	    again.transport != ep.transport || again.role != ep.role ||
	    strcmp(again.name, ep.name) != 0)
		abort();
	if (again.transport->describe != NULL)
		again.transport->describe(&again, again_said,
		    sizeof(again_said));
	if (strcmp(said, again_said) != 0)
		abort();
	endpoint_clear(&again);
	endpoint_clear(&ep);
	if (ep.spec != NULL || ep.t != NULL)
		abort();	/* cleared means nothing held */
	free(spec);
	return (0);
}
