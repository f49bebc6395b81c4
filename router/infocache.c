/* SPDX-License-Identifier: ISC */

/*
 * ProcessInfo, ProcessInfo2 and ProcessInfo3 answered from the router's
 * records.  Tools and agents (dotnet-counters, IDEs, node agents) ask
 * every runtime for its ProcessInfo again and again, and each ask takes
 * the runtime's single diagnostic thread and, for a runtime that dials
 * in, its parked connection.  So for a runtime the router keeps a record
 * of, each version is asked of it once: the router's own errand or probe
 * (ProcessInfo2, or ProcessInfo before .NET 6), or the first tool's
 * command, whose reply the session hands here (session.c); the reply is
 * kept byte for byte and the next tool gets those bytes, once the judge
 * let its command through, as the runtime would have sent them.
 *
 * A reply is kept only when it is whole and names the record's runtime
 * (its pid and cookie), or when it is the runtime's UNKNOWN_COMMAND for a
 * version it does not have, which it will not learn.  A runtime paused at
 * start-up reports the host's command line alone until it is resumed: a
 * ResumeRuntime answered OK through this router forgets what was kept,
 * as does a linked router listing another command line.  The kept
 * replies go with the record.
 */

#include "config.h"

#include <sys/types.h>

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/ipc.h"
#include "common/log.h"
#include "router/engine.h"

/* The version of a ProcessInfo command, 0 to 2, or -1 for another. */
int
infocache_version(uint8_t set, uint8_t id)
{
	if (set != IPC_SET_PROCESS)
		return (-1);
	switch (id) {
	case IPC_ID_PROCESS_INFO:
		return (0);
	case IPC_ID_PROCESS_INFO2:
		return (1);
	case IPC_ID_PROCESS_INFO3:
		return (2);
	}
	return (-1);
}

/*
 * The runtime rt answered ProcessInfo of that version with the len bytes
 * of reply: keep them if they are whole and its own, and none are kept.
 */
void
infocache_keep(struct runtime *rt, int version, const uint8_t *reply,
    size_t len)
{
	uint8_t		 cookie[IPC_COOKIE_LEN], *copy;
	uint64_t	 pid;
	uint32_t	 hresult;
	char		 name[96];

	if (version < 0 || version >= INFO_VERSIONS ||
	    rt->replies[version] != NULL)
		return;
	switch (ipc_info_reply_id(reply, len, version == 2, &pid, cookie,
	    &hresult)) {
	case 0:
		if (pid != rt->advertise.pid || memcmp(cookie,
		    rt->advertise.cookie, IPC_COOKIE_LEN) != 0)
			return;
		break;
	case 1:
		if (hresult != HRESULT_UNKNOWN_COMMAND)
			return;
		break;
	default:
		return;
	}
	if ((copy = malloc(len)) == NULL)
		return;		/* then the next tool asks the runtime */
	memcpy(copy, reply, len);
	rt->replies[version] = copy;
	rt->reply_len[version] = len;
	if (log_enabled(LL_DEBUG)) {
		runtime_name(rt, name, sizeof(name));
		log_debug("%s: its ProcessInfo%s reply (%zu bytes) is kept; "
		    "tools get it from the router", name, version == 0 ? "" :
		    version == 1 ? "2" : "3", len);
	}
}

/* The reply kept for that version, or NULL. */
const uint8_t *
infocache_get(const struct runtime *rt, int version, size_t *len)
{
	if (version < 0 || version >= INFO_VERSIONS ||
	    rt->replies[version] == NULL)
		return (NULL);
	*len = rt->reply_len[version];
	return (rt->replies[version]);
}

/* Forget what was kept: it may no longer be what the runtime says. */
void
infocache_forget(struct runtime *rt)
{
	int	 i;

	for (i = 0; i < INFO_VERSIONS; i++) {
		free(rt->replies[i]);
		rt->replies[i] = NULL;
		rt->reply_len[i] = 0;
	}
}
