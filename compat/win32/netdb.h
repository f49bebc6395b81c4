/* SPDX-License-Identifier: ISC */
/* Windows: the BSD socket names come from Winsock (see compat.h). */
#ifndef COMPAT_NETDB_H
#define COMPAT_NETDB_H
#include <winsock2.h>
#include <ws2tcpip.h>
#endif
