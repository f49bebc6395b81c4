/* SPDX-License-Identifier: ISC */

/*
 * Session limits.  Every accepted connection counts, from accept until
 * its socket closes (classifying, waiting, forwarding, or parked as a
 * runtime's), against --max-sessions and against the count of its peer:
 * a local peer's uid, a network peer's address, a TLS peer's certificate
 * once the handshake verified it.  A connection over a limit is closed
 * before a byte of it is read; the check is one lookup in a small hash
 * table, whatever the number of sessions.  The descriptor budget that the
 * limit needs is checked at start-up.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>

#include <netinet/in.h>
#include <arpa/inet.h>

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/util.h>

#include "common/identity.h"
#include "common/log.h"
#include "common/util.h"
#include "platform/platform.h"
#include "router/engine.h"
#include "router/metrics.h"
#include "router/settings.h"

#define PEER_BUCKETS		1024
#define FD_RESERVE		16	/* probes, reloads, a helper's pipes */
#define FDS_PER_SESSION		2

enum peer_kind {
	PEER_UID,
	PEER_ADDR,
	PEER_CERT
};

/* One peer with connections open. */
struct peer_count {
	enum peer_kind		 kind;
	uint8_t			 key[32];	/* uid, address or SHA-256 */
	size_t			 keylen;
	unsigned int		 open;
	struct peer_count	*next;		/* in its bucket */
};

static struct peer_count *buckets[PEER_BUCKETS];
static uint32_t		 hash_seed;
static int		 seeded;
static unsigned int	 open_total;

static struct log_throttle refusals;

/* FNV-1a over a per-process random seed and the key. */
static size_t
peer_hash(enum peer_kind kind, const uint8_t *key, size_t len)
{
	uint32_t	 h = 2166136261U ^ hash_seed;
	size_t		 i;

	h = (h ^ (uint8_t)kind) * 16777619U;
	for (i = 0; i < len; i++)
		h = (h ^ key[i]) * 16777619U;
	return (h % PEER_BUCKETS);
}

/* Find the count of a peer, creating it at zero; NULL if out of memory. */
static struct peer_count *
peer_get(enum peer_kind kind, const uint8_t *key, size_t len)
{
	struct peer_count	*p;
	size_t			 b;

	if (!seeded) {
		evutil_secure_rng_get_bytes(&hash_seed, sizeof(hash_seed));
		seeded = 1;
	}
	b = peer_hash(kind, key, len);
	for (p = buckets[b]; p != NULL; p = p->next) {
		if (p->kind == kind && p->keylen == len &&
		    memcmp(p->key, key, len) == 0)
			return (p);
	}
	if ((p = calloc(1, sizeof(*p))) == NULL)
		return (NULL);
	p->kind = kind;
	memcpy(p->key, key, len);
	p->keylen = len;
	p->next = buckets[b];
	buckets[b] = p;
	return (p);
}

/* Forget a peer with no connection left. */
static void
peer_put(struct peer_count *p)
{
	struct peer_count	**pp;

	if (p->open > 0)
		return;
	pp = &buckets[peer_hash(p->kind, p->key, p->keylen)];
	while (*pp != p)
		pp = &(*pp)->next;
	*pp = p->next;
	free(p);
}

/*
 * The peer of an accepted conn: its uid, or its address, all of loopback
 * as one (sockaddr_peer).
 */
static struct peer_count *
peer_of_conn(const struct conn *c, const struct sockaddr *sa)
{
	uint8_t		 key[16];
	size_t		 len;
	uint32_t	 uid;

	if (sockaddr_peer(sa, key, &len) == 0)
		return (peer_get(PEER_ADDR, key, len));
	/* A local peer whose uid is unknown counts as uid -1. */
	uid = c->io.have_cred ? (uint32_t)c->io.uid : UINT32_MAX;
	return (peer_get(PEER_UID, (const uint8_t *)&uid, sizeof(uid)));
}

/* Name a peer for the log. */
static void
peer_describe(const struct peer_count *p, char *buf, size_t len)
{
	uint32_t	 uid;

	switch (p->kind) {
	case PEER_UID:
		memcpy(&uid, p->key, sizeof(uid));
		snprintf(buf, len, "uid %" PRIu32, uid);
		break;
	case PEER_ADDR:
		if (p->keylen == 4 && p->key[0] == 127)
			snprintf(buf, len, "loopback");
		else if (inet_ntop(p->keylen == 4 ? AF_INET : AF_INET6,
		    p->key, buf, len) == NULL)
			snprintf(buf, len, "?");
		break;
	case PEER_CERT:
		snprintf(buf, len, "certificate sha256:%02x%02x%02x%02x"
		    "%02x%02x%02x%02x", p->key[0], p->key[1], p->key[2],
		    p->key[3], p->key[4], p->key[5], p->key[6], p->key[7]);
		break;
	}
}

/* Log a refusal, at most one line a second. */
static void
log_refusal(const struct conn *c, const char *peer, const char *why)
{
	if (log_throttle_pass(&refusals, "refused connections"))
		log_warning("%s: refused a connection from %s: %s",
		    c->io.endpoint->name, peer, why);
}

/* Refuse c, over the limit in all or over that of its peer p. */
static int
refuse(const struct conn *c, struct peer_count *p, int in_all)
{
	char	 peer[96], why[128];

	metrics.limits[in_all ? ML_SESSIONS : ML_SESSIONS_PER_PEER]++;
	peer_describe(p, peer, sizeof(peer));
	if (in_all)
		snprintf(why, sizeof(why), "%u sessions are open "
		    "(--max-sessions)", open_total);
	else
		snprintf(why, sizeof(why), "%u sessions of this peer are open "
		    "(--max-sessions-per-peer)", p->open);
	peer_put(p);
	log_refusal(c, peer, why);
	return (-1);
}

/*
 * Count a connection just accepted on c (its transport set up, not a byte
 * read), or refuse it.  Return -1 if it is over a limit.
 */
int
limit_admit(struct conn *c, const struct sockaddr *sa)
{
	struct peer_count	*p;

	if ((p = peer_of_conn(c, sa)) == NULL) {
		log_refusal(c, "a peer", "out of memory");
		return (-1);
	}
	if (open_total >= (unsigned int)settings.max_sessions)
		return (refuse(c, p, 1));
	if (p->open >= (unsigned int)settings.max_sessions_per_peer)
		return (refuse(c, p, 0));
	p->open++;
	open_total++;
	c->counted = p;
	return (0);
}

/*
 * A TLS handshake verified c's certificate: from now on c counts for that
 * certificate rather than for its address.  Return -1 if that peer is
 * over its limit.
 */
int
limit_identified(struct conn *c)
{
	struct peer_count	*was = c->counted, *p;

	if (was == NULL || c->io.identity == NULL)
		return (0);
	if ((p = peer_get(PEER_CERT, c->io.identity->fingerprint,
	    sizeof(c->io.identity->fingerprint))) == NULL) {
		log_refusal(c, "a TLS peer", "out of memory");
		return (-1);
	}
	if (p->open >= (unsigned int)settings.max_sessions_per_peer)
		return (refuse(c, p, 0));
	p->open++;
	c->counted = p;
	was->open--;
	peer_put(was);
	return (0);
}

/*
 * --max-sessions-per-runtime: whether one more tool may use a runtime that
 * held tools' sessions already serve.  A runtime runs at most 64 EventPipe
 * sessions of its own; the cap keeps one busy runtime from taking every
 * session of the router.  Return -1 with the reason in *why if not.
 */
int
limit_runtime_admit(int held, const char **why)
{
	static char	 reason[128];

	if (held < settings.max_sessions_per_runtime)
		return (0);
	metrics.limits[ML_SESSIONS_PER_RUNTIME]++;
	snprintf(reason, sizeof(reason), "refused: %d sessions use this "
	    "runtime (--max-sessions-per-runtime)", held);
	*why = reason;
	return (-1);
}

/* The socket of a counted conn closed. */
void
limit_release(struct conn *c)
{
	struct peer_count	*p = c->counted;

	c->counted = NULL;
	open_total--;
	p->open--;
	peer_put(p);
}

/* The peer c counts for, by value: it outlives the count itself. */
void
limit_peer_key(const struct conn *c, struct peer_key *k)
{
	memset(k, 0, sizeof(*k));
	if (c->counted == NULL)
		return;
	k->kind = c->counted->kind + 1;
	k->len = c->counted->keylen;
	memcpy(k->key, c->counted->key, k->len);
}

/* Name the peer c counts for, as the limits' log lines do. */
void
limit_peer_name(const struct conn *c, char *buf, size_t len)
{
	if (c->counted == NULL)
		snprintf(buf, len, "an uncounted peer");
	else
		peer_describe(c->counted, buf, len);
}

/* Whether two conns count for the same peer. */
int
limit_same_peer(const struct conn *a, const struct conn *b)
{
	return (a->counted != NULL && a->counted == b->counted);
}

/* Descriptors kept for something else, --metrics's connections. */
static int	 reserved;

/*
 * Descriptors beyond the budget of --max-sessions (-1: no budget known),
 * and those of them kernel pipes hold: a pipe never takes one a session
 * would need.
 */
static long	 spare = -1;
static long	 pipe_fds;

void
limit_reserve(int fds)
{
	reserved = fds;
}

/*
 * Check that --max-sessions fits in the descriptors left once the routes
 * are open (counted at start-up, not again on a reload), two per session;
 * log the budget.  A default that does not fit is lowered; a value given
 * is kept, with a warning.
 */
void
limit_budget(void)
{
	static long	 used = -1;
	long		 limit, room, fit;

	if (used == -1)
		used = platform_fds_in_use();
	if ((limit = platform_fd_limit()) == -1 || used == -1)
		return;
	room = limit == LONG_MAX ? LONG_MAX :
	    limit - used - FD_RESERVE - reserved;
	fit = room > 0 ? room / FDS_PER_SESSION : 0;
	if (fit >= settings.max_sessions) {
		spare = room == LONG_MAX ? LONG_MAX :
		    room - (long)settings.max_sessions * FDS_PER_SESSION;
		log_info("descriptors: limit %ld, %ld open; up to %d sessions "
		    "(--max-sessions) of %d each, %d per peer",
		    limit, used, settings.max_sessions,
		    FDS_PER_SESSION, settings.max_sessions_per_peer);
		return;
	}
	spare = 0;
	if (settings_given(&settings, "max-sessions")) {
		log_warning("descriptors: limit %ld, %ld open: room for %ld "
		    "sessions, not the %d of --max-sessions; accepting "
		    "pauses when descriptors run out", limit,
		    used, fit, settings.max_sessions);
		return;
	}
	log_warning("descriptors: limit %ld, %ld open: room for %ld sessions; "
	    "--max-sessions lowered from %d to %ld", limit, used,
	    fit, settings.max_sessions, fit > 1 ? fit : 1);
	settings.max_sessions = fit > 1 ? (int)fit : 1;
}

/* Take the two descriptors of a kernel pipe from the spare ones, or -1. */
int
limit_pipe_take(void)
{
	if (spare != -1 && spare != LONG_MAX && pipe_fds + 2 > spare)
		return (-1);
	pipe_fds += 2;
	return (0);
}

void
limit_pipe_release(void)
{
	pipe_fds -= 2;
}
