/* SPDX-License-Identifier: ISC */

/*
 * Access control (acl.c): the policy of an endpoint and the decisions it
 * makes, on a tool's first command, on a runtime's advertise, and on a
 * TLS peer's identity against the listener's allow-list.  Deciding is
 * pure, so that it can be unit tested and fuzzed; parsing only looks up
 * user and group names.
 */

#ifndef ACL_H
#define ACL_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

#include "common/identity.h"

struct acl_policy;
struct advertise;

enum acl_role {
	ACL_NONE,
	ACL_OBSERVE,
	ACL_OPERATE,
	ACL_DUMP,
	ACL_FULL
};

/* Who sent the message, as far as the transport could tell. */
struct acl_peer {
	int			 local;		/* a process of this host */
	int			 have_cred;	/* its credentials were read */
	uid_t			 uid;
	gid_t			 gid;
	struct sockaddr_storage	 addr;		/* a network peer's address */
	const struct identity	*identity;	/* a verified TLS peer */
	uid_t			 self_uid;	/* dsroute's effective uid */
	int			 have_runtime_uid;
	uid_t			 runtime_uid;	/* owner of the runtime's end */
	pid_t			 pid;		/* a local peer's, or 0 */
	pid_t			 own_pid;	/* ... in its pid namespace */
	int			 have_owner;	/* the socket's owner= */
	uid_t			 owner_uid;
	int			 have_group;	/* the socket's group= */
	gid_t			 group_gid;
};

/* How the router knows a runtime (the values of ext.h's ext_found). */
enum acl_found {
	ACL_FOUND_ADVERTISE = 1,
	ACL_FOUND_DIR,
	ACL_FOUND_PROC,
	ACL_FOUND_LINK,
	ACL_FOUND_KINDS
};

/* A runtime as app=, cmdline= and found= judge it. */
struct acl_runtime {
	const char		*app;
	const char		*cmdline;
	int			 found;		/* enum acl_found */
};

struct acl_decision {
	int			 allow;
	uint32_t		 hresult;	/* of the error frame if denied */
	enum acl_role		 role;
	const char		*role_from;	/* what gave the peer its role */
	const char		*rule;		/* what decided */
	const char		*reason;	/* why, for the log */
	int			 answer_ok;	/* denied: the router says OK */
};

int		 acl_role_parse(const char *, enum acl_role *);
const char	*acl_role_name(enum acl_role);
int		 acl_set_policy(struct acl_policy **, const char *, char *,
		    size_t);
int		 acl_add_rule(struct acl_policy **, int, const char *, char *,
		    size_t);
int		 acl_add_grant(struct acl_policy **, enum acl_role,
		    const char *, char *, size_t);
int		 acl_add_advertiser(struct acl_policy **, const char *, char *,
		    size_t);
int		 acl_add_allow(struct acl_policy **, enum allow_kind,
		    const char *, char *, size_t);
int		 acl_add_runtime_rule(struct acl_policy **, const char *,
		    const char *, char *, size_t);
int		 acl_names_runtimes(const struct acl_policy *);
int		 acl_runtime_allowed(const struct acl_policy *,
		    const struct acl_runtime *);
int		 acl_set_dump_dir(struct acl_policy **, const char *, char *,
		    size_t);
const char	*acl_dump_dir(const struct acl_policy *);
int		 acl_set_max_buffer(struct acl_policy **, const char *, char *,
		    size_t);
int		 acl_set_may_stall_app(struct acl_policy **, char *, size_t);
void		 acl_policy_free(struct acl_policy *);
int		 acl_has_advertisers(const struct acl_policy *);
const struct allow_rule *acl_allow_list(const struct acl_policy *, int *);
void		 acl_decide(const struct acl_policy *, const struct acl_peer *,
		    const uint8_t *, size_t, struct acl_decision *);
void		 acl_decide_advertise(const struct acl_policy *,
		    const struct acl_peer *, const struct advertise *,
		    struct acl_decision *);
int		 acl_check_allow_list(const struct acl_policy *,
		    const struct identity *, struct acl_decision *);

#endif /* ACL_H */
