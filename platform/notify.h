/* SPDX-License-Identifier: ISC */

/*
 * Telling a service manager how the daemon is doing (notify.c): systemd's
 * sd_notify(3) protocol, written to NOTIFY_SOCKET without libsystemd.
 * Nothing is sent when the variable is not set.
 */

#ifndef NOTIFY_H
#define NOTIFY_H

void		 notify_open(void);
void		 notify_ready(const char *, ...)
		    __attribute__((__format__(__printf__, 1, 2)));
void		 notify_reloading(void);
void		 notify_stopping(const char *, ...)
		    __attribute__((__format__(__printf__, 1, 2)));
void		 notify_close(void);

#endif /* NOTIFY_H */
