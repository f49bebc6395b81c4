/* SPDX-License-Identifier: ISC */

/*
 * Users and groups as options give them, a number or a name: the number
 * is common/util.c's to parse, the name the system's to look up
 * (platform_user_id, platform_group_id).
 */

#include "config.h"

#include <sys/types.h>

#include "common/util.h"
#include "platform/platform.h"

/* Parse a user given as a number or a name. */
int
parse_uid(const char *s, uid_t *uid)
{
	unsigned long	 v;

	if (parse_id(s, &v) == 0) {
		*uid = (uid_t)v;
		return (0);
	}
	if (*s == '\0')
		return (-1);
	return (platform_user_id(s, uid));
}

/* Parse a group given as a number or a name. */
int
parse_gid(const char *s, gid_t *gid)
{
	unsigned long	 v;

	if (parse_id(s, &v) == 0) {
		*gid = (gid_t)v;
		return (0);
	}
	if (*s == '\0')
		return (-1);
	return (platform_group_id(s, gid));
}
