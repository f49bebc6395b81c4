/* SPDX-License-Identifier: ISC */

/*
 * The one place where first messages are judged, in every mode, before
 * any byte of them goes on: a tool's command before it reaches a
 * runtime, a runtime's advertise before it is parked or sent to a tool.
 * The message is complete and well formed by the time it gets here
 * (ipc_classify saw to that).  Every decision is audited.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/identity.h"
#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/acl.h"
#include "router/engine.h"
#include "router/metrics.h"
#include "transports/transport.h"

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

	if (rt->io.fd != -1 && rt->io.have_cred) {
		*uid = rt->io.uid;
		return (1);
	}
	return (ep->transport->file_owner != NULL &&
	    ep->transport->file_owner(ep, uid));
}

/* Describe the peer for the audit line: credentials, address or identity. */
static void
principal_fields(struct log_rec *r, const struct conn *c,
    const struct acl_peer *peer)
{
	const struct identity	*id = peer->identity;
	char			 addr[128], fp[65];
	int			 i;

	if (peer->local) {
		if (peer->have_cred) {
			log_u64(r, "uid", peer->uid, 0);
			log_u64(r, "gid", peer->gid, 0);
			log_u64(r, "pid", (uint64_t)c->io.pid, 0);
		} else
			log_str(r, "uid", NULL, 0);
		return;
	}
	if (peer->addr.ss_family != 0)
		sockaddr_name((const struct sockaddr *)&peer->addr,
		    sizeof(peer->addr), addr, sizeof(addr));
	log_str(r, "addr", peer->addr.ss_family != 0 ? addr : NULL, 0);
	if (id == NULL)
		return;
	log_str(r, "cn", id->cn, LF_QUOTE | LF_ESCAPE);
	/* The first SAN is enough to tell peers apart; the pin is exact. */
	log_str(r, "san", id->nsan > 0 ? id->san[0].value : NULL,
	    LF_QUOTE | LF_ESCAPE);
	for (i = 0; i < 32; i++)
		snprintf(fp + 2 * i, 3, "%02x", id->fingerprint[i]);
	log_str(r, "sha256", fp, 0);
}

/*
 * Log the decision: at info when the command is refused, at debug when it
 * is allowed (the session's end line then carries the rule).  Never a
 * payload byte.
 */
static void
audit(struct session *s, const struct conn *c, const struct acl_peer *peer,
    const char *command, const struct acl_decision *d)
{
	struct log_rec	 r;
	char		 cookie[33], name[256];

	/* What is let through, or answered OK here, is no alarm. */
	if (!log_begin(&r, d->allow || d->answer_ok ? LL_DEBUG : LL_INFO,
	    "audit"))
		return;
	conn_peer_name(c, name, sizeof(name));
	log_words(&r, "audit:");
	log_time(&r, "time", LF_TEXT);
	log_u64(&r, "session", s->id, 0);
	log_str(&r, "route", s->route->name, 0);
	log_str(&r, "peer", name, LF_QUOTE);
	principal_fields(&r, c, peer);
	if (s->have_advertise) {
		ipc_cookie_hex(s->advertise.cookie, cookie);
		log_u64(&r, "runtime_pid", s->advertise.pid, 0);
		log_str(&r, "cookie", cookie, 0);
	} else if (s->bound) {
		/* A mirror's name, or SelectRuntime: the one it is for. */
		ipc_cookie_hex(s->bound_cookie, cookie);
		log_str(&r, "runtime_pid", NULL, 0);
		log_str(&r, "cookie", cookie, 0);
	} else {
		log_str(&r, "runtime_pid", NULL, 0);
		log_str(&r, "cookie", NULL, 0);
	}
	log_str(&r, "command", command, 0);
	log_str(&r, "decision", d->allow ? "allow" : "deny", 0);
	log_str(&r, "role", acl_role_name(d->role), 0);
	log_str(&r, "role_from", d->role_from, LF_QUOTE);
	log_str(&r, "rule", d->rule, LF_QUOTE);
	log_str(&r, "reason", d->reason, LF_QUOTE);
	log_end(&r);
}

/* Describe the peer of conn c, on its side of the session's route. */
static void
peer_of(struct session *s, struct conn *c, struct acl_peer *peer)
{
	struct endpoint		*ep = &s->route->endpoint[c->side];
	struct endpoint_ids	 ids;

	memset(peer, 0, sizeof(*peer));
	peer->local = ep->transport->local;
	peer->have_cred = c->io.have_cred;
	peer->uid = c->io.uid;
	peer->gid = c->io.gid;
	peer->identity = c->io.identity;
	peer->self_uid = self_uid();
	if (!peer->local) {
		/* Kept from accept, or from the transport's dial. */
		memcpy(&peer->addr, &c->io.addr, sizeof(c->io.addr));
		return;
	}
	peer->pid = peer->own_pid = c->io.pid;
	if (ep->transport->granted_ids != NULL) {
		ep->transport->granted_ids(ep, &ids);
		peer->have_owner = ids.have_uid;
		peer->owner_uid = ids.uid;
		peer->have_group = ids.have_gid;
		peer->group_gid = ids.gid;
	}
}

/* A listener's allow-list comes first: off it, nothing goes. */
static int
off_allow_list(struct session *s, struct conn *c, struct acl_decision *d)
{
	return (acl_check_allow_list(s->route->endpoint[c->side].policy,
	    c->io.identity, d));
}

static void
verdict_of(const struct acl_decision *d, struct verdict *v)
{
	v->allow = d->allow;
	v->hresult = d->hresult;
	v->rule = d->rule;
	v->reason = d->reason;
	v->answer_ok = d->answer_ok;
}

/* Decide on the first message of the session's tool, and audit it. */
void
judge_command(struct session *s, const uint8_t *msg, size_t len,
    struct verdict *v)
{
	struct conn		*tool = &s->conn[s->tool_side];
	struct endpoint		*ep = &s->route->endpoint[s->tool_side];
	struct endpoint		*other = &s->route->endpoint[
				    OTHER_SIDE(s->tool_side)];
	struct acl_peer		 peer;
	struct acl_decision	 d;
	struct acl_runtime	 ar;

	peer_of(s, tool, &peer);
	/* Only a local peer's role can depend on the runtime's uid. */
	if (peer.local)
		peer.have_runtime_uid = runtime_uid(s, &peer.runtime_uid);
	if (off_allow_list(s, tool, &d))
		;
	else if (other->role == ROLE_CONNECT && other->peer == PEER_TOOL) {
		/* The other side is a tool that listens: no runtime there. */
		memset(&d, 0, sizeof(d));
		d.hresult = HRESULT_ACCESS_DENIED;
		d.role_from = "-";
		d.rule = "peer=tool";
		d.reason = "the other side reaches a tool, not a runtime";
	} else {
		acl_decide(ep->policy, &peer, msg, len, &d);
		if (d.allow && s->bound && !acl_runtime_allowed(ep->policy,
		    runtime_acl(s->route, s->bound_cookie, &ar))) {
			/* A mirror's name, or SelectRuntime, for another. */
			d.allow = 0;
			d.hresult = HRESULT_ACCESS_DENIED;
			d.rule = "app=, cmdline=, found=";
			d.reason = "the endpoint's app=, cmdline= or found= "
			    "does not name this runtime";
		}
	}
	metrics.acl[len > IPC_SET_OFFSET ? metrics_set_of(msg[IPC_SET_OFFSET]) :
	    MS_OTHER][d.allow != 0]++;
	audit(s, tool, &peer, s->command, &d);
	verdict_of(&d, v);
}

/*
 * Decide whether a runtime's advertise on conn rt may go on: to be parked
 * for tools, or sent to a tool that listens.  Never to a runtime, which
 * would read it as a command header and stall.  Audit the decision; the
 * refusals of a flood of advertises are logged at most once a second.
 */
void
judge_advertise(struct session *s, struct conn *rt, struct verdict *v)
{
	static struct log_throttle	 throttle;
	struct endpoint			*ep = &s->route->endpoint[rt->side];
	struct endpoint			*other = &s->route->endpoint[
					    OTHER_SIDE(rt->side)];
	struct acl_peer			 peer;
	struct acl_decision		 d;
	struct proc_info		 pi;

	peer_of(s, rt, &peer);
	/* The pid the peer knows itself by, to compare with its claim. */
	if (peer.pid != 0 && proc_info_get(peer.pid, 1, &pi) == 0)
		peer.own_pid = pi.own_pid;
	if (off_allow_list(s, rt, &d))
		;
	else if (other->role == ROLE_CONNECT && other->peer != PEER_TOOL) {
		memset(&d, 0, sizeof(d));
		d.role_from = "-";
		d.rule = "peer=runtime";
		d.reason = "the other side reaches a runtime, which must "
		    "never get an advertise";
	} else
		acl_decide_advertise(ep->policy, &peer, &s->advertise, &d);
	metrics.acl[MS_ADVERTISE][d.allow != 0]++;
	if (d.allow || log_throttle_pass(&throttle, "advertise refusals"))
		audit(s, rt, &peer, "advertise", &d);
	verdict_of(&d, v);
}
