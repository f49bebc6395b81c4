/* SPDX-License-Identifier: ISC */

/*
 * Runtimes in every container of a Linux node: proc:[/proc][,connect].
 * A runtime in a container that shares no /tmp with us still makes its
 * default socket in its own TMPDIR, and /proc/PID/root reaches it there.  Its name
 * carries the pid the runtime has in its own namespace (the last of NSpid)
 * and its start time, so for each process the one name it would have is
 * known: /proc/PID/root$TMPDIR/dotnet-diagnostic-OWNPID-START-socket, one
 * lstat a process, no directory read.  Which runtime found serves a tool
 * is finder.c's rule, as for dir:.
 *
 * The listener must be process PID itself, as SO_PEERCRED sees it from
 * here, and own the socket file; so nothing is taken on trust from inside
 * a container.
 *
 * Reading another process's environment and reaching its root take
 * ptrace access (its uid, or CAP_SYS_PTRACE), and connecting to its 0600
 * socket its uid or CAP_DAC_OVERRIDE: in practice root, as a node agent
 * runs.  Without them other users' runtimes are not found: one line says
 * so, once, and debug names each process.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/stat.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "platform/platform.h"
#include "transports/socket.h"
#include "transports/transport.h"

struct proc_endpoint {
	struct finder	 finder;
	int		 said_privileges;	/* the line without them */
};

#define PROCS(ep)	((struct proc_endpoint *)(ep)->t)

/* A scan of /proc: where the runtimes found go, what was refused. */
struct proc_scan {
	struct endpoint		*ep;
	struct found_list	 found;
	int			 denied;	/* processes we may not inspect */
	int			 nomem;
};

static int	 proc_parse(struct endpoint *, const char *, char *, size_t);
static int	 proc_check(const struct endpoint *, char *, size_t);
static void	 proc_clear(struct endpoint *);
static void	 proc_set_name(struct endpoint *);
static void	 proc_auto_role(struct endpoint *);
static void	 proc_howto(const struct endpoint *,
		    const struct endpoint *);
static int	 proc_runtime_port(const struct endpoint *);
static int	 proc_listen(struct endpoint *, char *, size_t);
static int	 proc_dial(struct endpoint *, int *);
static int	 proc_find(struct endpoint *, struct found_list *);
static int	 proc_setup(struct stream *, int);

static const char *const proc_prefixes[] = { "proc:", NULL };

const struct transport transport_proc = {
	.name = "proc",
	.prefixes = proc_prefixes,
	.example = "proc:",
	.local = 1,
	.plain = 1,
	.parse = proc_parse,
	.check = proc_check,
	.clear = proc_clear,
	.set_name = proc_set_name,
	.auto_role = proc_auto_role,
	.howto = proc_howto,
	.runtime_port = proc_runtime_port,
	.listen = proc_listen,
	.dial = proc_dial,
	.find = proc_find,
	.dial_found = uds_dial_found,
	.setup = proc_setup,
	.handshake = socket_handshake,
	.read = socket_read,
	.write = socket_write,
	.write_buffer = socket_write_buffer,
	.shutdown = socket_shutdown,
	.unsent = socket_unsent,
	.teardown = socket_teardown,
};

static int
proc_parse(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	if (*addr != '\0' && strcmp(addr, "/proc") != 0) {
		snprintf(err, len, "proc: takes no address but /proc: it looks "
		    "at every process");
		return (-1);
	}
	if ((ep->t = calloc(1, sizeof(struct proc_endpoint))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	return (0);
}

static int
proc_check(const struct endpoint *ep, char *err, size_t len)
{
	if (ep->role != ROLE_LISTEN)
		return (0);
	snprintf(err, len, "proc: finds runtimes to dial; it cannot listen");
	return (-1);
}

static void
proc_clear(struct endpoint *ep)
{
	free(ep->t);
	ep->t = NULL;
}

static void
proc_set_name(struct endpoint *ep)
{
	snprintf(ep->name, sizeof(ep->name), "proc:/proc");
}

static void
proc_auto_role(struct endpoint *ep)
{
	ep->role = ROLE_CONNECT;
	ep->why = "the runtimes of every process are dialled";
}

static void
proc_howto(const struct endpoint *ep, const struct endpoint *other)
{
	(void)ep;
	log_info("  a runtime in any container of this host is found by its "
	    "default socket, through /proc%s; the one serving keeps the "
	    "tools while it lives, then the newest serves",
	    geteuid() == 0 ? "" : " (all as root; now only this user's)");
}

/* It holds runtimes' default ports: never an advertise, nor a tool. */
static int
proc_runtime_port(const struct endpoint *ep)
{
	(void)ep;
	return (1);
}

static int
proc_listen(struct endpoint *ep, char *err, size_t len)
{
	return (proc_check(ep, err, len));
}

/* The default socket name the process pi has if it is a runtime. */
static void
runtime_socket_name(const struct proc_info *pi, char *buf, size_t len)
{
	snprintf(buf, len, "dotnet-diagnostic-%ld-%llu-socket",
	    (long)pi->own_pid, (unsigned long long)pi->starttime);
}

/* Privileges are missing for pid: said at debug, counted for one line. */
static void
denied(struct proc_scan *sc, pid_t pid, const char *what)
{
	sc->denied++;
	log_debug("%s: process %ld: cannot read its %s: %s", sc->ep->name,
	    (long)pid, what, strerror(errno));
}

/* Look for the one socket process pid would have as a runtime. */
static int
look_at(pid_t pid, void *arg)
{
	struct proc_scan	*sc = arg;
	struct proc_info	 pi;
	struct stat		 st;
	char			 tmp[256], name[64];
	char			 path[FOUND_PATH_MAX + 1], what[32];
	size_t			 n;
	int			 set;

	if (proc_info_get(pid, 1, &pi) == -1)
		return (0);		/* gone since */
	if ((set = proc_environ_get(pid, "TMPDIR", tmp, sizeof(tmp))) == -1) {
		if (errno == EACCES || errno == EPERM)
			denied(sc, pid, "environment");
		return (0);
	}
	if (!set || tmp[0] != '/')
		snprintf(tmp, sizeof(tmp), "/tmp");
	n = strlen(tmp);
	while (n > 1 && tmp[n - 1] == '/')
		tmp[--n] = '\0';
	runtime_socket_name(&pi, name, sizeof(name));
	if ((size_t)snprintf(path, sizeof(path), "/proc/%ld/root%s/%s",
	    (long)pid, n > 1 ? tmp : "", name) >= FOUND_PATH_MAX) {
		snprintf(what, sizeof(what), "process %ld", (long)pid);
		finder_passed_over(sc->ep, &PROCS(sc->ep)->finder, what,
		    "the path of its socket is too long for a socket address");
		return (0);
	}
	if (lstat(path, &st) == -1) {
		if (errno == EACCES || errno == EPERM)
			denied(sc, pid, "root");
		return (0);
	}
	if (!S_ISSOCK(st.st_mode))
		return (0);
	if (found_add(&sc->found, pi.starttime, path) == -1) {
		sc->nomem = 1;
		return (-1);
	}
	return (0);
}

/* The pid in /proc/PID/root/...: the process the socket belongs to. */
static pid_t
path_pid(const char *path)
{
	return ((pid_t)strtol(path + strlen("/proc/"), NULL, 10));
}

/*
 * Whether the listener on fd, connected at path, is the process whose
 * root holds the socket, and owns the file: NULL, or why not.
 */
static const char *
listener_refusal(const struct endpoint *ep, int fd, const char *path)
{
	static char		 why[160];
	struct peer_cred	 cred;
	struct stat		 st;

	(void)ep;
	if (peer_cred_get(fd, &cred) == -1)
		return ("cannot read the listener's credentials");
	if (cred.pid != path_pid(path)) {
		snprintf(why, sizeof(why), "the listener is process %ld, not "
		    "the one whose socket it is", (long)cred.pid);
		return (why);
	}
	if (lstat(path, &st) == -1 || st.st_uid != cred.uid) {
		snprintf(why, sizeof(why), "the socket file is not the "
		    "listener's, uid %lu", (unsigned long)cred.uid);
		return (why);
	}
	return (NULL);
}

/*
 * The runtimes' sockets of every process now, into l (which the caller
 * frees); -1 with errno set if /proc cannot be read.
 */
static int
proc_find(struct endpoint *ep, struct found_list *l)
{
	struct proc_endpoint	*p = PROCS(ep);
	struct proc_scan	 sc;
	int			 saved;

	memset(&sc, 0, sizeof(sc));
	sc.ep = ep;
	finder_scan(&p->finder);
	if (proc_each(look_at, &sc) == -1 || sc.nomem) {
		saved = sc.nomem ? ENOMEM : errno;
		found_free(&sc.found);
		errno = saved;
		return (-1);
	}
	if (sc.denied > 0 && !p->said_privileges) {
		p->said_privileges = 1;
		log_warning("%s: %d processes cannot be looked at, so their "
		    "runtimes are not found: that takes their uid, or root "
		    "with CAP_SYS_PTRACE and CAP_DAC_OVERRIDE; -v debug names "
		    "them", ep->name, sc.denied);
	}
	*l = sc.found;
	return (0);
}

static int
proc_dial(struct endpoint *ep, int *pending)
{
	struct found_list	 l;

	memset(&l, 0, sizeof(l));
	if (proc_find(ep, &l) == -1)
		return (-1);
	return (finder_dial(ep, &PROCS(ep)->finder, &l, listener_refusal,
	    pending));
}

/*
 * The listener must be a process whose own default socket name, from its
 * own pid and start time, is the name it bound.
 */
static int
proc_setup(struct stream *c, int accepted)
{
	struct peer_cred	 cred;
	struct proc_info	 pi;
	char			 name[FOUND_PATH_MAX], want[64];

	(void)accepted;
	if (uds_peer_cred(c, &cred) == -1 ||
	    uds_peer_bound_name(c, name, sizeof(name)) == -1)
		return (-1);
	if (cred.pid == 0 || proc_info_get(cred.pid, 1, &pi) == -1) {
		c->why = "the listener is a process this router cannot see";
		return (-1);
	}
	runtime_socket_name(&pi, want, sizeof(want));
	if (strcmp(name, want) != 0) {
		c->why = "the process listening at the socket is not the one "
		    "its name gives";
		return (-1);
	}
	return (0);
}
