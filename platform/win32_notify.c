/* SPDX-License-Identifier: ISC */

/*
 * Windows has no sd_notify(3): a service there is told apart by the
 * Service Control Manager, which dsroute does not speak yet, so there is
 * nobody to tell that it is ready, reloading or stopping.
 */

#include "config.h"

#include "platform/notify.h"

void
notify_open(void)
{
}

void
notify_ready(const char *fmt, ...)
{
}

void
notify_reloading(void)
{
}

void
notify_stopping(const char *fmt, ...)
{
}

void
notify_close(void)
{
}
