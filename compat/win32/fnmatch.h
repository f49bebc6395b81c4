/* SPDX-License-Identifier: ISC */
/* fnmatch(3) with no flags, in compat.c: Windows has none. */
#ifndef COMPAT_FNMATCH_H
#define COMPAT_FNMATCH_H
#define FNM_NOMATCH	1
int	 fnmatch(const char *, const char *, int);
#endif
