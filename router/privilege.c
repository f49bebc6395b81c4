/*
 * Copyright (c) 2026 The dsroute authors
 *
 * Permission to use, copy, modify, and distribute this software for any
 * purpose with or without fee is hereby granted, provided that the above
 * copyright notice and this permission notice appear in all copies.
 *
 * THE SOFTWARE IS PROVIDED "AS IS" AND THE AUTHOR DISCLAIMS ALL WARRANTIES
 * WITH REGARD TO THIS SOFTWARE INCLUDING ALL IMPLIED WARRANTIES OF
 * MERCHANTABILITY AND FITNESS. IN NO EVENT SHALL THE AUTHOR BE LIABLE FOR
 * ANY SPECIAL, DIRECT, INDIRECT, OR CONSEQUENTIAL DAMAGES OR ANY DAMAGES
 * WHATSOEVER RESULTING FROM LOSS OF USE, DATA OR PROFITS, WHETHER IN AN
 * ACTION OF CONTRACT, NEGLIGENCE OR OTHER TORTIOUS ACTION, ARISING OUT OF
 * OR IN CONNECTION WITH THE USE OR PERFORMANCE OF THIS SOFTWARE.
 */

/*
 * What the process may do once it runs.  From the start: no program it
 * runs gains privileges, and no core dump or ptrace by the same user
 * reads its memory, which holds TLS keys (unless --allow-core-dumps).
 * With --user, once every listener is bound and every key read: drop to
 * that user and group in hitch's order (groups, gid, uid), then check
 * that no id is root and that there is no way back, or stop.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/prctl.h>
#include <sys/resource.h>

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "dsroute.h"

/* Turn off core dumps and set no-new-privileges.  Return -1 on failure. */
int
privilege_harden(char *err, size_t len)
{
	struct rlimit	 none = { 0, 0 };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		snprintf(err, len, "cannot set no-new-privileges: %s",
		    strerror(errno));
		return (-1);
	}
	if (settings.allow_core_dumps)
		return (0);
	if (setrlimit(RLIMIT_CORE, &none) == -1 ||
	    prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) == -1) {
		snprintf(err, len, "cannot turn core dumps off: %s",
		    strerror(errno));
		return (-1);
	}
	return (0);
}

/* Check that ids are the ones asked for, none root, with no way back. */
static int
check_dropped(uid_t uid, gid_t gid, char *err, size_t len)
{
	uid_t	 ruid, euid, suid;
	gid_t	 rgid, egid, sgid;

	if (getresuid(&ruid, &euid, &suid) == -1 ||
	    getresgid(&rgid, &egid, &sgid) == -1) {
		snprintf(err, len, "cannot read the ids after dropping "
		    "privileges: %s", strerror(errno));
		return (-1);
	}
	if (ruid != uid || euid != uid || suid != uid || rgid != gid ||
	    egid != gid || sgid != gid || ruid == 0 || euid == 0 ||
	    suid == 0 || rgid == 0 || egid == 0 || sgid == 0) {
		snprintf(err, len, "after dropping privileges the ids are uid "
		    "%lu/%lu/%lu gid %lu/%lu/%lu, not %lu and %lu without root; "
		    "stopping", (unsigned long)ruid, (unsigned long)euid,
		    (unsigned long)suid, (unsigned long)rgid,
		    (unsigned long)egid, (unsigned long)sgid,
		    (unsigned long)uid, (unsigned long)gid);
		return (-1);
	}
	if (setuid(0) != -1 || setgid(0) != -1) {
		snprintf(err, len, "after dropping privileges root could be "
		    "regained; stopping");
		return (-1);
	}
	if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) != 1) {
		snprintf(err, len, "no-new-privileges is not set; stopping");
		return (-1);
	}
	return (0);
}

/*
 * Drop to --user and --group, if given, and check the result.  Return -1
 * with a one-line reason in err if that fails: the caller stops.
 */
int
privilege_drop(char *err, size_t len)
{
	struct passwd	*pw = NULL;
	uid_t		 uid;
	gid_t		 gid;

	if (settings.user[0] == '\0') {
		if (settings.group[0] == '\0')
			return (0);
		snprintf(err, len, "--group needs --user");
		return (-1);
	}
	if (parse_uid(settings.user, &uid) == -1) {
		snprintf(err, len, "--user %s: no such user", settings.user);
		return (-1);
	}
	pw = getpwuid(uid);
	if (settings.group[0] != '\0') {
		if (parse_gid(settings.group, &gid) == -1) {
			snprintf(err, len, "--group %s: no such group",
			    settings.group);
			return (-1);
		}
	} else if (pw != NULL)
		gid = pw->pw_gid;
	else {
		snprintf(err, len, "--user %s has no entry in the user "
		    "database: give --group too", settings.user);
		return (-1);
	}

	/* The user's own groups, or only the group given. */
	if ((pw != NULL ? initgroups(pw->pw_name, gid) :
	    setgroups(1, &gid)) == -1 || setgid(gid) == -1 ||
	    setuid(uid) == -1) {
		snprintf(err, len, "cannot drop privileges to user %s: %s%s",
		    settings.user, strerror(errno), errno == EPERM ?
		    " (--user needs dsroute to start as root)" : "");
		return (-1);
	}
	if (check_dropped(uid, gid, err, len) == -1)
		return (-1);
	/* Changing ids made the process undumpable; undo that if asked. */
	if (settings.allow_core_dumps)
		(void)prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
	log_info("running as uid %lu, gid %lu (--user %s)",
	    (unsigned long)uid, (unsigned long)gid, settings.user);
	return (0);
}
