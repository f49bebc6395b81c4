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
 * The one place where a tool's first message is judged, in every mode,
 * before any byte of it reaches a runtime.  The message is complete and
 * well formed by the time it gets here (ipc_classify saw to that).
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "dsroute.h"

/*
 * dsroute's own uid, asked once: sessions start only after any privilege
 * drop, and it does not change after that.
 */
static uid_t
self_uid(void)
{
	static uid_t	 uid = (uid_t)-1;

	if (uid == (uid_t)-1)
		uid = geteuid();
	return (uid);
}

/*
 * The uid of the runtime a tool would reach, when it can be known: the
 * credentials of its connection when one is open, else the owner of the
 * socket file on the runtime's side (its own listen socket, or the one
 * dsroute made for it to dial).
 */
static int
runtime_uid(struct session *s, uid_t *uid)
{
	struct conn	*rt = &s->conn[OTHER_SIDE(s->tool_side)];
	struct endpoint	*ep = &s->route->endpoint[rt->side];
	struct stat	 st;

	if (rt->fd != -1 && rt->have_cred) {
		*uid = rt->uid;
		return (1);
	}
	if (ep->type != ENDPOINT_UDS || lstat(ep->path, &st) == -1 ||
	    !S_ISSOCK(st.st_mode))
		return (0);
	*uid = st.st_uid;
	return (1);
}

/* Describe the peer for the audit line: credentials, address or identity. */
static void
principal_describe(const struct conn *c, const struct acl_peer *peer,
    char *buf, size_t len)
{
	const struct identity	*id = peer->identity;
	char			 addr[128], cn[256], san[128], fp[65];
	int			 i;

	if (peer->local) {
		if (peer->have_cred)
			snprintf(buf, len, "uid=%lu gid=%lu pid=%ld",
			    (unsigned long)peer->uid, (unsigned long)peer->gid,
			    (long)c->pid);
		else
			snprintf(buf, len, "uid=-");
		return;
	}
	if (peer->addr.ss_family != 0)
		sockaddr_name((const struct sockaddr *)&peer->addr,
		    sizeof(peer->addr), addr, sizeof(addr));
	else
		snprintf(addr, sizeof(addr), "-");
	if (id == NULL) {
		snprintf(buf, len, "addr=%s", addr);
		return;
	}
	log_escape(cn, sizeof(cn), id->cn, strlen(id->cn));
	/* The first SAN is enough to tell peers apart; the pin is exact. */
	if (id->nsan > 0)
		log_escape(san, sizeof(san), id->san[0].value,
		    strlen(id->san[0].value));
	else
		snprintf(san, sizeof(san), "-");
	for (i = 0; i < 32; i++)
		snprintf(fp + 2 * i, 3, "%02x", id->fingerprint[i]);
	snprintf(buf, len, "addr=%s cn=\"%s\" san=\"%s\" sha256=%s", addr,
	    cn, san, fp);
}

/*
 * Log the decision: at info when the command is refused, at debug when it
 * is allowed (the session's end line then carries the rule).  Never a
 * payload byte.
 */
static void
audit(struct session *s, const struct conn *tool, const struct acl_peer *peer,
    const struct acl_decision *d)
{
	struct timeval	 tv;
	struct tm	 tm;
	char		 when[32], who[768], pid[24] = "-", cookie[33] = "-";

	gettimeofday(&tv, NULL);
	gmtime_r(&tv.tv_sec, &tm);
	strftime(when, sizeof(when), "%Y-%m-%dT%H:%M:%S", &tm);
	principal_describe(tool, peer, who, sizeof(who));
	if (s->have_advertise) {
		snprintf(pid, sizeof(pid), "%" PRIu64, s->advertise.pid);
		ipc_cookie_hex(s->advertise.cookie, cookie);
	}
	log_msg(d->allow ? LL_DEBUG : LL_INFO, "audit: time=%s.%03ldZ "
	    "session=%" PRIu64 " route=%s peer=\"%s\" %s runtime_pid=%s "
	    "cookie=%s command=%s decision=%s role=%s role_from=\"%s\" "
	    "rule=\"%s\" reason=\"%s\"", when, (long)tv.tv_usec / 1000,
	    s->id, s->route->name, tool->peer, who, pid, cookie, s->command,
	    d->allow ? "allow" : "deny", acl_role_name(d->role), d->role_from,
	    d->rule, d->reason);
}

/* Decide on the first message of the session's tool, and audit it. */
void
judge_command(struct session *s, const uint8_t *msg, size_t len,
    const struct greeting *g, struct verdict *v)
{
	struct conn		*tool = &s->conn[s->tool_side];
	struct endpoint		*ep = &s->route->endpoint[s->tool_side];
	struct acl_peer		 peer;
	struct acl_decision	 d;
	socklen_t		 salen = sizeof(peer.addr);

	memset(&peer, 0, sizeof(peer));
	peer.local = ep->type == ENDPOINT_UDS;
	peer.have_cred = tool->have_cred;
	peer.uid = tool->uid;
	peer.gid = tool->gid;
	peer.identity = tool->identity;
	peer.self_uid = self_uid();
	/* Only a local peer's role can depend on the runtime's uid. */
	if (peer.local)
		peer.have_runtime_uid = runtime_uid(s, &peer.runtime_uid);
	if (!peer.local && getpeername(tool->fd,
	    (struct sockaddr *)&peer.addr, &salen) == -1)
		memset(&peer.addr, 0, sizeof(peer.addr));

	/* A TLS listener's allow-list comes first: off it, nothing goes. */
	if (identity_judge(tool, v)) {
		memset(&d, 0, sizeof(d));
		d.hresult = v->hresult;
		d.role = ACL_NONE;
		d.role_from = "allow-list";
		d.rule = v->rule;
		d.reason = v->reason;
	} else
		acl_decide(ep->policy, &peer, msg, len, &d);
	audit(s, tool, &peer, &d);
	v->allow = d.allow;
	v->hresult = d.hresult;
	v->rule = d.rule;
	v->reason = d.reason;
}
