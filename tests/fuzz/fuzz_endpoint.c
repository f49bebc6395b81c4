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

#include "router/dsroute.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct endpoint	 ep, again;
	char		*spec, err[512];

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
	if (ep.name[0] == '\0' || ep.transport == NULL ||
	    strlen(ep.path) >= sizeof(ep.path))
		abort();
	if (ep.type == ENDPOINT_UDS && (ep.path[0] == '\0' || ep.mode > 0777))
		abort();
	if (ep.type == ENDPOINT_TCP && (ep.port[0] == '\0' ||
	    atoi(ep.port) > 65535))
		abort();
	if (endpoint_parse(ep.spec, &again, err, sizeof(err)) == -1 ||
	    again.type != ep.type || again.role != ep.role ||
	    strcmp(again.name, ep.name) != 0 || again.mode != ep.mode)
		abort();	/* its own text must parse the same */
	endpoint_clear(&again);
	endpoint_clear(&ep);
	free(spec);
	return (0);
}
