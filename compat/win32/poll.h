/* SPDX-License-Identifier: ISC */
/* Windows: poll() on sockets is Winsock's WSAPoll(). */
#ifndef COMPAT_POLL_H
#define COMPAT_POLL_H
#include <winsock2.h>
#define poll(fds, n, ms)	WSAPoll((fds), (n), (ms))
#endif
