/* SPDX-License-Identifier: ISC */

/*
 * Fuzz the access control: the policy options as text, then a peer and a
 * tool's first message, decided by acl_decide().  The input is
 *
 *	OPTION=VALUE\n...	policy=, allow=, deny=, ROLE=PRINCIPAL,
 *				dump-dir=, max-buffer-mb=, may-stall-app=,
 *				one a line
 *	\0
 *	flags			bit 0 local, 1 have_cred, 2 runtime uid known,
 *				3-4 address (none, v4, v6, v4-mapped v6),
 *				5 a TLS identity follows
 *	uid gid self rtuid	16 bits each
 *	address			4 or 16 bytes, if any
 *	identity		cn (length, bytes), SAN count, per SAN
 *				(type, length, bytes), 32-byte fingerprint
 *	set id payload...	the message, to the end of the input
 *
 * Missing bytes read as zero.  The message is built in a heap buffer of
 * exactly its size, so that AddressSanitizer catches any read past it.
 * The harness asserts, independently of acl.c (security.md 3.1, AC-5):
 * - an unknown (set, id), the server set 0xff included, is never allowed,
 *   and is refused with UNKNOWN_COMMAND;
 * - a command that takes no payload is never allowed with one;
 * - CollectTracing5/6 for a user_events session is never allowed;
 * - a local peer without credentials is never allowed;
 * - an allowed dump's path decodes (iconv's UTF-16) to an absolute path
 *   without .., backslash or UNC form, below the directory of dump-dir=
 *   when there is one; an empty path only without dump-dir=;
 * - with max-buffer-mb=, an allowed trace's circularBufferMB is within it;
 * - a CollectTracing6 streaming session is allowed from a network peer
 *   without may-stall-app= only in Drop mode, its sessionBufferMode found
 *   by the harness's own walk of the providers; and ipc.c's parser of it
 *   (ipc_collect6_buffer_mode) finds what that walk finds, on any bytes;
 * - without any policy, a network peer gets no more than operate, and a
 *   local peer of another uid nothing;
 * - deny=* as the first rule allows nothing;
 * - a grant that gave the peer its role names the peer: a TLS name is in
 *   its identity under the grant's type, exactly or, for uri:PATH/ and a
 *   star, below PATH without dot segments or escapes;
 * - a decision says why, and the same input always gets the same one.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <arpa/inet.h>

#include <iconv.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/identity.h"
#include "common/ipc.h"
#include "router/acl.h"

int	LLVMFuzzerTestOneInput(const uint8_t *, size_t);

#define CMD(set, id)	((set) << 8 | (id))

/*
 * The commands of the protocol (protocol.md section 3), and the routers'
 * own (docs/extension.md), not acl.c's.
 */
static const uint16_t known[] = {
	0x0101, 0x0102, 0x0103,
	0x0201, 0x0202, 0x0203, 0x0204, 0x0205, 0x0206, 0x0207,
	0x0301, 0x0302,
	0x0400, 0x0401, 0x0402, 0x0403, 0x0404, 0x0405, 0x0406, 0x0407,
	0x0408,
	0xd501, 0xd502, 0xd504,
};
static const uint16_t no_payload[] = {
	0x0400, 0x0401, 0x0402, 0x0404, 0x0406, 0x0408,
};
/* What the operate role, a network peer's default, may send. */
static const uint16_t operate_set[] = {
	0x0400, 0x0404, 0x0408, 0x0401,
	0x0201, 0x0202, 0x0203, 0x0204, 0x0205, 0x0206, 0x0207,
	0xd501, 0xd502, 0xd504,
};

struct reader {
	const uint8_t	*p;
	size_t		 n;
};

/* What the harness knows of the policy it built. */
struct built {
	struct acl_policy	*policy;
	int			 accepted;	/* options taken */
	int			 have_dump_dir;
	char			 dump_dir[4096];
	unsigned long		 max_mb;
	int			 may_stall;
	int			 nrules;
	int			 deny_all_first;
};

static int
listed(const uint16_t *list, size_t n, int cmd)
{
	size_t	 i;

	for (i = 0; i < n; i++) {
		if (list[i] == cmd)
			return (1);
	}
	return (0);
}

#define LISTED(list, cmd)	listed(list, sizeof(list) / sizeof(list[0]), cmd)

static uint8_t
take8(struct reader *r)
{
	if (r->n == 0)
		return (0);
	r->n--;
	return (*r->p++);
}

static uint16_t
take16(struct reader *r)
{
	uint16_t	 lo = take8(r);

	return (lo | take8(r) << 8);
}

/* Copy up to len bytes as a name; one with a NUL is left out, as TLS does. */
static void
take_name(struct reader *r, char *dst, size_t size)
{
	size_t	 i, len = take8(r);

	dst[0] = '\0';
	for (i = 0; i < len && i + 1 < size; i++)
		dst[i] = (char)take8(r);
	dst[i] = '\0';
	if (strlen(dst) != i)
		dst[0] = '\0';
}

static uint32_t
le32(const uint8_t *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

/* Apply one OPTION=VALUE line to the policy, as an endpoint option would. */
static void
apply_option(struct built *b, char *line)
{
	char		*value, err[512];
	enum acl_role	 role;
	size_t		 n;
	int		 rv;

	if ((value = strchr(line, '=')) == NULL)
		return;
	*value++ = '\0';
	err[0] = '\0';
	if (strcmp(line, "policy") == 0)
		rv = acl_set_policy(&b->policy, value, err, sizeof(err));
	else if (strcmp(line, "allow") == 0 || strcmp(line, "deny") == 0) {
		rv = acl_add_rule(&b->policy, line[0] == 'a', value, err,
		    sizeof(err));
		if (rv == 0 && b->nrules++ == 0 && line[0] == 'd' &&
		    strcmp(value, "*") == 0)
			b->deny_all_first = 1;
	} else if (strcmp(line, "dump-dir") == 0) {
		rv = acl_set_dump_dir(&b->policy, value, err, sizeof(err));
		if (rv == 0) {
			b->have_dump_dir = 1;
			n = strlen(value);
			while (n > 0 && value[n - 1] == '/')
				n--;
			snprintf(b->dump_dir, sizeof(b->dump_dir), "%.*s",
			    (int)n, value);
		}
	} else if (strcmp(line, "max-buffer-mb") == 0) {
		rv = acl_set_max_buffer(&b->policy, value, err, sizeof(err));
		if (rv == 0)
			b->max_mb = strtoul(value, NULL, 10);
	} else if (strcmp(line, "may-stall-app") == 0) {
		rv = acl_set_may_stall_app(&b->policy, err, sizeof(err));
		if (rv == 0)
			b->may_stall = 1;
	} else if (strcmp(line, "app") == 0 || strcmp(line, "cmdline") == 0 ||
	    strcmp(line, "found") == 0) {
		rv = acl_add_runtime_rule(&b->policy, line, value, err,
		    sizeof(err));
		/* A runtime not known yet is reached only without them. */
		if (acl_runtime_allowed(b->policy, NULL) ==
		    acl_names_runtimes(b->policy))
			abort();
	} else if (acl_role_parse(line, &role) == 0)
		rv = acl_add_grant(&b->policy, role, value, err, sizeof(err));
	else
		return;
	if (rv == -1 && err[0] == '\0')
		abort();	/* a refusal says why */
	if (rv == 0)
		b->accepted++;
}

/*
 * Decode a dump command's path with iconv, not acl.c's decoder, and check
 * that it is a plain absolute path, below dir if dir is not NULL.  Return
 * 0 if it is, -1 if not.
 */
static int
dump_path_allowed(const uint8_t *payload, size_t plen, const char *dir)
{
	static iconv_t	 cd = (iconv_t)-1;
	char		 path[4 * 4096 + 1], *in, *out;
	size_t		 count, inleft, outleft, n;

	if (cd == (iconv_t)-1 &&
	    (cd = iconv_open("UTF-8", "UTF-16LE")) == (iconv_t)-1)
		abort();
	if (plen >= 4 && le32(payload) == 0)
		return (dir == NULL ? 0 : -1);	/* the runtime's own place */
	if (plen < 4 || (count = le32(payload)) == 0 ||
	    count > (plen - 4) / 2 || count - 1 > 4096)
		return (-1);
	if (payload[4 + 2 * (count - 1)] != 0 ||
	    payload[4 + 2 * (count - 1) + 1] != 0)
		return (-1);	/* no NUL at the end */
	iconv(cd, NULL, NULL, NULL, NULL);
	in = (char *)(uintptr_t)(payload + 4);
	inleft = 2 * (count - 1);
	out = path;
	outleft = sizeof(path) - 1;
	if (iconv(cd, &in, &inleft, &out, &outleft) == (size_t)-1 ||
	    inleft != 0)
		return (-1);	/* not UTF-16 */
	*out = '\0';
	if (path[0] == '\0' && out == path)
		return (dir == NULL ? 0 : -1);	/* "" is no path either */
	if (strlen(path) != (size_t)(out - path) || path[0] != '/' ||
	    path[1] == '/' || strchr(path, '\\') != NULL ||
	    strstr(path, "/../") != NULL ||
	    (strlen(path) >= 3 && strcmp(path + strlen(path) - 3, "/..") == 0))
		return (-1);
	if (dir == NULL)
		return (0);
	n = strlen(dir);
	if (strncmp(path, dir, n) != 0 || path[n] != '/' || path[n + 1] == '\0')
		return (-1);
	return (0);
}

/* Take n bytes from a bounded reader; 0 if there are not so many. */
static int
take_n(struct reader *r, uint64_t n)
{
	if (n > r->n)
		return (0);
	r->p += n;
	r->n -= n;
	return (1);
}

static int
take_u32(struct reader *r, uint32_t *v)
{
	if (r->n < 4)
		return (0);
	*v = le32(r->p);
	return (take_n(r, 4));
}

/*
 * The sessionBufferMode of a CollectTracing6 payload, walked as
 * ipc-protocol.md lays it out (not with ipc.c's code): 1 and the mode,
 * 0 for a user_events session, -1 if it ends first.
 */
static int
walk_mode(const uint8_t *payload, size_t plen, uint32_t *mode)
{
	struct reader	 r = { payload, plen };
	uint32_t	 type, n, i, count, ids;

	if (!take_u32(&r, &type))
		return (-1);
	if (type != 0)
		return (0);
	/* circularBufferMB, format, rundownKeyword, requestStackwalk */
	if (!take_n(&r, 4 + 4 + 8 + 1) || !take_u32(&r, &n))
		return (-1);
	for (i = 0; i < n; i++) {
		/* keywords, logLevel, name, arguments, filter, ids */
		if (!take_n(&r, 8 + 4) || !take_u32(&r, &count) ||
		    !take_n(&r, (uint64_t)count * 2) || !take_u32(&r, &count) ||
		    !take_n(&r, (uint64_t)count * 2) || !take_n(&r, 1) ||
		    !take_u32(&r, &ids) || !take_n(&r, (uint64_t)ids * 4))
			return (-1);
	}
	return (take_u32(&r, mode) ? 1 : -1);
}

static void
read_peer(struct reader *r, struct acl_peer *peer)
{
	struct identity_draft	 d;
	struct sockaddr_in	*sin = (struct sockaddr_in *)&peer->addr;
	struct sockaddr_in6	*sin6 = (struct sockaddr_in6 *)&peer->addr;
	uint8_t			 flags = take8(r);
	size_t			 i;
	int			 nsan;

	memset(peer, 0, sizeof(*peer));
	peer->local = flags & 1;
	peer->have_cred = (flags >> 1) & 1;
	peer->have_runtime_uid = (flags >> 2) & 1;
	peer->uid = take16(r);
	peer->gid = take16(r);
	peer->self_uid = take16(r);
	peer->runtime_uid = take16(r);
	switch ((flags >> 3) & 3) {
	case 1:
		sin->sin_family = AF_INET;
		for (i = 0; i < 4; i++)
			((uint8_t *)&sin->sin_addr)[i] = take8(r);
		break;
	case 2:
	case 3:
		sin6->sin6_family = AF_INET6;
		for (i = 0; i < 16; i++)
			sin6->sin6_addr.s6_addr[i] = take8(r);
		if (((flags >> 3) & 3) == 3) {
			memset(sin6->sin6_addr.s6_addr, 0, 10);
			memset(sin6->sin6_addr.s6_addr + 10, 0xff, 2);
		}
		break;
	}
	if (!(flags & 0x20))
		return;
	/* Names as any bytes: a draft, not one a transport has cleaned. */
	memset(&d, 0, sizeof(d));
	take_name(r, d.cn, sizeof(d.cn));
	nsan = take8(r) % (IDENTITY_MAX_SANS + 1);
	for (i = 0; i < (size_t)nsan; i++) {
		d.san[d.nsan].type = take8(r) % 4;
		take_name(r, d.san[d.nsan].value, sizeof(d.san[0].value));
		if (d.san[d.nsan].value[0] != '\0')
			d.nsan++;
	}
	for (i = 0; i < sizeof(d.fingerprint); i++)
		d.fingerprint[i] = take8(r);
	if ((peer->identity = identity_pack(&d)) == NULL)
		abort();
}

/* Return whether some SAN of the type is the name, byte for byte. */
static int
has_san(const struct identity *id, enum san_type type, const char *name)
{
	int	 i;

	for (i = 0; i < id->nsan; i++) {
		if (id->san[i].type == type && strcmp(id->san[i].value,
		    name) == 0)
			return (1);
	}
	return (0);
}

/* Return whether a URI is below prefix, with no dot segment or escape. */
static int
has_uri_below(const struct identity *id, const char *prefix)
{
	const char	*rest, *seg, *end;
	size_t		 n = strlen(prefix), len;
	int		 i, clean;

	for (i = 0; i < id->nsan; i++) {
		if (id->san[i].type != SAN_URI ||
		    strncmp(id->san[i].value, prefix, n) != 0)
			continue;
		rest = id->san[i].value + n;
		clean = *rest != '\0' && strchr(rest, '%') == NULL;
		for (seg = rest; clean && seg != NULL; seg = end) {
			end = strchr(seg, '/');
			len = end != NULL ? (size_t)(end++ - seg) : strlen(seg);
			if ((len == 1 && seg[0] == '.') ||
			    (len == 2 && seg[0] == '.' && seg[1] == '.'))
				clean = 0;
		}
		if (clean)
			return (1);
	}
	return (0);
}

/*
 * When a grant gave the peer its role, the peer is of the grant's kind,
 * and a TLS name is in its identity under that type: exactly, or for a
 * uri: ending in a slash and a star, below that path.
 */
static void
check_role_from(const struct acl_peer *peer, const char *from)
{
	const struct identity	*id = peer->identity;
	const char		*v;
	char			 prefix[256];
	uint8_t			 a[16], b[16];
	size_t			 n;
	int			 i;

	if ((v = strchr(from, '=')) == NULL)
		return;		/* a default or policy=, not a grant */
	v++;
	if (strncmp(v, "cn:", 3) == 0) {
		if (id == NULL || id->cn[0] == '\0' || strcmp(id->cn, v + 3))
			abort();
	} else if (strncmp(v, "dns:", 4) == 0) {
		if (id == NULL || !has_san(id, SAN_DNS, v + 4))
			abort();
	} else if (strncmp(v, "email:", 6) == 0) {
		if (id == NULL || !has_san(id, SAN_EMAIL, v + 6))
			abort();
	} else if (strncmp(v, "uri:", 4) == 0) {
		v += 4;
		n = strlen(v);
		if (id == NULL)
			abort();
		if (n >= 2 && strcmp(v + n - 2, "/*") == 0) {
			snprintf(prefix, sizeof(prefix), "%.*s", (int)n - 1, v);
			if (!has_uri_below(id, prefix))
				abort();
		} else if (!has_san(id, SAN_URI, v))
			abort();
	} else if (strncmp(v, "ip:", 3) == 0) {
		if (id == NULL)
			abort();
		n = strchr(v + 3, ':') != NULL ? 16 : 4;
		if (inet_pton(n == 16 ? AF_INET6 : AF_INET, v + 3, a) != 1)
			abort();
		for (i = 0; i < id->nsan; i++) {
			if (id->san[i].type == SAN_IP && inet_pton(n == 16 ?
			    AF_INET6 : AF_INET, id->san[i].value, b) == 1 &&
			    memcmp(a, b, n) == 0)
				break;
		}
		if (i == id->nsan)
			abort();
	} else if (strncmp(v, "sha256:", 7) == 0) {
		if (id == NULL)
			abort();
	} else if (strncmp(v, "uid:", 4) == 0 || strncmp(v, "gid:", 4) == 0) {
		if (!peer->local)
			abort();
	} else if (strncmp(v, "addr:", 5) == 0) {
		if (peer->local)
			abort();
	}
}

static void
check_decision(const struct built *b, const struct acl_peer *peer,
    const uint8_t *msg, size_t len, const struct acl_decision *d)
{
	const uint8_t	*payload = msg + IPC_HEADER_LEN;
	size_t		 plen = len - IPC_HEADER_LEN;
	uint32_t	 mode = 0;
	int		 cmd = CMD(msg[16], msg[17]);

	if (d->rule == NULL || d->reason == NULL || d->role_from == NULL)
		abort();	/* every decision says why */
	check_role_from(peer, d->role_from);
	if (!d->allow && d->answer_ok) {
		/* observe answers ResumeRuntime OK itself, and only that */
		if (d->hresult != 0 || cmd != 0x0401 ||
		    d->role != ACL_OBSERVE)
			abort();
		return;
	}
	if (d->answer_ok)
		abort();
	if (!d->allow) {
		if (d->hresult != HRESULT_UNKNOWN_COMMAND &&
		    d->hresult != HRESULT_BAD_ENCODING &&
		    d->hresult != HRESULT_ACCESS_DENIED)
			abort();
		if (!LISTED(known, cmd) &&
		    d->hresult != HRESULT_UNKNOWN_COMMAND)
			abort();
		return;
	}
	if (d->hresult != 0 || !LISTED(known, cmd) ||
	    msg[16] == IPC_SET_SERVER)
		abort();
	if (LISTED(no_payload, cmd) && len != IPC_HEADER_LEN)
		abort();
	if ((cmd == 0x0206 || cmd == 0x0207) &&
	    (plen < 4 || le32(payload) == 1))
		abort();	/* user_events: no fd crosses a pump */
	if (peer->local && !peer->have_cred)
		abort();
	if ((cmd == 0x0101 || cmd == 0x0102 || cmd == 0x0103) &&
	    dump_path_allowed(payload, plen, b->have_dump_dir ? b->dump_dir :
	    NULL) == -1)
		abort();
	if (b->max_mb != 0 && cmd >= 0x0202 && cmd <= 0x0205 &&
	    (plen < 4 || le32(payload) > b->max_mb))
		abort();
	if (b->max_mb != 0 && (cmd == 0x0206 || cmd == 0x0207) &&
	    (plen < 8 || le32(payload + 4) > b->max_mb))
		abort();
	if (cmd == 0x0207 && !peer->local && !b->may_stall &&
	    plen >= 4 && le32(payload) == 0 &&
	    (walk_mode(payload, plen, &mode) != 1 || mode != 0))
		abort();	/* Block, or no mode, from the network */
	if (b->policy == NULL && !peer->local && !LISTED(operate_set, cmd))
		abort();	/* a network peer's default is operate */
	if (b->policy == NULL && peer->local && peer->uid != 0 &&
	    peer->uid != peer->self_uid && (!peer->have_runtime_uid ||
	    peer->uid != peer->runtime_uid))
		abort();	/* another local uid's default is none */
	if (b->deny_all_first)
		abort();
}

/* ipc.c's parser of the mode finds what the walk finds, on any payload. */
static void
check_mode_parser(const uint8_t *payload, size_t plen)
{
	uint32_t	 a = 0, b = 0;
	int		 ra, rb;

	ra = ipc_collect6_buffer_mode(payload, plen, &a);
	rb = walk_mode(payload, plen, &b);
	if (ra != rb || (ra == 1 && a != b))
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct built		 b;
	struct reader		 r;
	struct acl_peer		 peer;
	struct acl_decision	 d, again;
	const uint8_t		*nul;
	char			*text, *line, *next;
	uint8_t			*msg, *copy;
	size_t			 plen, len;

	if ((nul = memchr(data, '\0', size)) == NULL)
		return (0);
	memset(&b, 0, sizeof(b));
	if ((text = strdup((const char *)data)) == NULL)
		return (0);
	for (line = text; line != NULL; line = next) {
		if ((next = strchr(line, '\n')) != NULL)
			*next++ = '\0';
		apply_option(&b, line);
	}
	free(text);
	if ((b.policy == NULL) != (b.accepted == 0))
		abort();	/* only an accepted option makes a policy */

	r.p = nul + 1;
	r.n = size - (nul + 1 - data);
	read_peer(&r, &peer);

	/* The message: a header that the classifier passed, then the rest. */
	plen = r.n > 2 ? r.n - 2 : 0;
	if (plen > IPC_MESSAGE_MAX - IPC_HEADER_LEN)
		plen = IPC_MESSAGE_MAX - IPC_HEADER_LEN;
	len = IPC_HEADER_LEN + plen;
	if ((msg = malloc(len)) == NULL || (copy = malloc(len)) == NULL)
		abort();
	memcpy(msg, "DOTNET_IPC_V1", IPC_MAGIC_LEN);
	msg[14] = len & 0xff;
	msg[15] = len >> 8;
	msg[16] = take8(&r);
	msg[17] = take8(&r);
	msg[18] = msg[19] = 0;
	memcpy(msg + IPC_HEADER_LEN, r.p, plen);
	memcpy(copy, msg, len);

	acl_decide(b.policy, &peer, msg, len, &d);
	check_decision(&b, &peer, msg, len, &d);
	check_mode_parser(msg + IPC_HEADER_LEN, plen);
	acl_decide(b.policy, &peer, copy, len, &again);
	if (again.allow != d.allow || again.hresult != d.hresult ||
	    again.role != d.role || strcmp(again.rule, d.rule) != 0 ||
	    strcmp(again.reason, d.reason) != 0 ||
	    strcmp(again.role_from, d.role_from) != 0)
		abort();	/* the same input, another decision */
	if (memcmp(msg, copy, len) != 0)
		abort();	/* deciding changed the message */

	free(copy);
	free(msg);
	free((struct identity *)peer.identity);
	acl_policy_free(b.policy);
	return (0);
}
