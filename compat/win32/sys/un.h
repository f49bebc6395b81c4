/* SPDX-License-Identifier: ISC */
/* Windows 10 1803 and later: AF_UNIX, and its struct sockaddr_un. */
#ifndef COMPAT_SYS_UN_H
#define COMPAT_SYS_UN_H
#include <winsock2.h>
#include <afunix.h>
#endif
