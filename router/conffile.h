/* SPDX-License-Identifier: ISC */

/*
 * The configuration file, dsroute.conf(5) (conffile.c): settings and
 * routes read whole, every error with its line, and a reload that gives
 * the running routes their new access control.
 */

#ifndef CONFFILE_H
#define CONFFILE_H

#include <stddef.h>
#include <stdio.h>

#include "router/engine.h"

struct config_error {
	int		 line;		/* 0: the file as a whole */
	size_t		 seq;		/* keeps errors of a line in order */
	char		*message;
};

struct config {
	char			*path;
	struct route_list	 routes;	/* parsed, not started */
	struct config_error	*errors;
	size_t			 nerrors;
	int			 oom;
};

/* A setting NAME = VALUE: 0, or -1 with a message. */
typedef int	 config_setting_fn(void *, const char *, const char *, char *,
		    size_t);

int		 config_load(struct config *, const char *,
		    config_setting_fn *, void *);
int		 config_parse(struct config *, const char *, FILE *,
		    config_setting_fn *, void *);
void		 config_free(struct config *);
int		 config_apply(struct config *);

#endif /* CONFFILE_H */
