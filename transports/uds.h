/* SPDX-License-Identifier: ISC */

/*
 * What the uds transport keeps of an endpoint (uds.c), behind ep->t.
 * Only uds.c and the tests of its parsing read it.
 */

#ifndef UDS_H
#define UDS_H

#include <sys/types.h>
#include <sys/un.h>

#include "platform/platform.h"

struct uds_endpoint {
	char		 path[sizeof(((struct sockaddr_un *)0)->sun_path)];
	mode_t		 mode;
	char		*owner;		/* owner=, or NULL */
	char		*group;		/* group=, or NULL */
	struct sockfile	 file;		/* the socket file made to listen */
	int		 inherited;	/* listening on a passed socket */
};

#define UDS(ep)		((struct uds_endpoint *)(ep)->t)

#endif /* UDS_H */
