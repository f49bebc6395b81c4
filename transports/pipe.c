/* SPDX-License-Identifier: ISC */

/*
 * Named pipes, the .NET runtime's local diagnostic port on Windows:
 * pipe:NAME, or pipe:\\.\pipe\NAME, the same pipe.
 *
 * libevent cannot wait for a pipe handle, so this transport signals
 * readiness itself (own_events in transport.h).  Every pipe is opened
 * for overlapped I/O and tied to one completion port, and one thread
 * takes the completions: it fills the pipe's buffers and makes the
 * conn's events active, so the engine stays on its one thread and sees
 * a pipe as it sees a socket.  All pipe state is behind one lock, taken
 * by both threads and never held across a wait.
 *
 * A listening pipe keeps PIPE_WAITING instances in ConnectNamedPipe, so
 * that a burst of tools finds one; the first is made with
 * FILE_FLAG_FIRST_PIPE_INSTANCE, so a process already serving the name
 * (a squatter, or another router) stops us at start-up instead of
 * sharing the name with us.  Each instance admits this user and SYSTEM
 * (the equal of a 0600 socket file, which admits its owner and root) and
 * no remote client.
 *
 * A pipe named for a process, a runtime's default port
 * dotnet-diagnostic-PID (or a router's, dotnet-diagnostic-dsrouter-PID),
 * is dialled only when PID serves it: the runtime makes its pipe without
 * FILE_FLAG_FIRST_PIPE_INSTANCE and pids are easy to guess, so another
 * user of the host could make that name first and be sent the tools'
 * commands.  The server is refused before a byte, as on a planted socket
 * (uds.c).
 *
 * A pipe has no half-close: shutdown sends what is held, then closes the
 * handle, so the peer sees the end of the stream (what a tool reading a
 * trace waits for).  The engine never shuts a runtime's pipe
 * (no_half_close): its answer to a tool that half-closed still comes.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/queue.h>

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include <windows.h>
#include <sddl.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/event_struct.h>

#include "common/ipc.h"
#include "common/log.h"
#include "transports/socket.h"
#include "transports/transport.h"

#define PIPE_PREFIX		"\\\\.\\pipe\\"
#define PIPE_NAME_MAX		256	/* after the prefix */
#define PIPE_BUF_SIZE		65536	/* each of the two out */
#define PIPE_IN_SIZE		(256 * 1024)	/* a read: the pump's scratch */
#define PIPE_WAITING		8	/* instances waiting for a client */

struct pipe_endpoint {
	char			 path[sizeof(PIPE_PREFIX) + PIPE_NAME_MAX];
	wchar_t			*wpath;
	struct pipe_server	*server;
};

#define PIPE_EP(ep)	((struct pipe_endpoint *)(ep)->t)

enum op_kind {
	OP_CONNECT,
	OP_READ,
	OP_WRITE
};

struct pipe;

struct pipe_op {
	OVERLAPPED		 ov;	/* first: a completion's OVERLAPPED * */
	enum op_kind		 kind;
	struct pipe		*pipe;
	int			 busy;	/* posted; its completion not taken */
};

/* One pipe handle: an instance of a listening pipe, or one dialled. */
struct pipe {
	HANDLE			 h;
	struct pipe_op		 rop, wop, cop;
	struct pipe_server	*server;	/* waiting or ready, not handed */
	struct stream		*conn;		/* armed for it, or NULL */
	int			 want_read, want_write;
	int			 eof;
	int			 error;		/* an errno */
	int			 shut_wait;	/* shutdown waits for a flush */
	int			 hung;		/* shut: the handle is closing */
	int			 handle_closed;
	int			 closing;	/* torn down: freed when idle */
	int			 skip;		/* no packet for a call done at once */
	size_t			 in_off, in_len;
	size_t			 wbusy_off, wbusy_len, wnext_len;
	char			 in[PIPE_IN_SIZE];
	char			 wbusy[PIPE_BUF_SIZE];	/* being written */
	char			 wnext[PIPE_BUF_SIZE];	/* written next */
	TAILQ_ENTRY(pipe)	 entry;		/* every pipe */
	TAILQ_ENTRY(pipe)	 ready;		/* its server's, connected */
};

TAILQ_HEAD(pipe_list, pipe);

struct pipe_server {
	struct endpoint		*ep;
	PSECURITY_DESCRIPTOR	 sd;
	SECURITY_ATTRIBUTES	 sa;
	int			 waiting;	/* instances in ConnectNamedPipe */
	struct pipe_list	 ready;		/* connected, for the loop */
	struct event		 ev;		/* made active by the thread */
	void			(*accepted)(int, void *);
	void			*arg;
};

static int	 pipe_parse(struct endpoint *, const char *, char *, size_t);
static void	 pipe_clear(struct endpoint *);
static void	 pipe_set_name(struct endpoint *);
static void	 pipe_auto_role(struct endpoint *);
static void	 pipe_howto(const struct endpoint *,
		    const struct endpoint *);
static int	 pipe_runtime_port(const struct endpoint *);
static int	 pipe_listen(struct endpoint *, char *, size_t);
static int	 pipe_accept_start(struct endpoint *, void (*)(int, void *),
		    void *, char *, size_t);
static void	 pipe_unlisten(struct endpoint *);
static int	 pipe_dial(struct endpoint *, int *);
static void	 pipe_arm(struct stream *, int, int);
static void	 pipe_close(int);
static int	 pipe_setup(struct stream *, int);
static ssize_t	 pipe_read(struct stream *, void *, size_t);
static ssize_t	 pipe_write(struct stream *, const void *, size_t);
static ssize_t	 pipe_write_buffer(struct stream *, struct evbuffer *);
static size_t	 pipe_pending(struct stream *);
static long	 pipe_unsent(struct stream *);
static int	 pipe_shutdown(struct stream *);
static void	 pipe_teardown(struct stream *);

static const char *const pipe_prefixes[] = { "pipe:", "namedpipe:", NULL };

const struct transport transport_pipe = {
	.name = "pipe",
	.prefixes = pipe_prefixes,
	.example = "pipe:dsroute",
	.local = 1,
	.plain = 1,
	.no_half_close = 1,
	.own_events = 1,
	.parse = pipe_parse,
	.clear = pipe_clear,
	.set_name = pipe_set_name,
	.auto_role = pipe_auto_role,
	.howto = pipe_howto,
	.runtime_port = pipe_runtime_port,
	.listen = pipe_listen,
	.accept_start = pipe_accept_start,
	.unlisten = pipe_unlisten,
	.dial = pipe_dial,
	.arm = pipe_arm,
	.close = pipe_close,
	.setup = pipe_setup,
	.handshake = socket_handshake,
	.read = pipe_read,
	.write = pipe_write,
	.write_buffer = pipe_write_buffer,
	.pending = pipe_pending,
	.unsent = pipe_unsent,
	.shutdown = pipe_shutdown,
	.teardown = pipe_teardown,
};

static SRWLOCK		 lock = SRWLOCK_INIT;
static HANDLE		 port;		/* the completion port */
static struct pipe_list	 pipes = TAILQ_HEAD_INITIALIZER(pipes);

static struct pipe *close_locked(struct pipe *);
static void	 free_pipe(struct pipe *);
static void	 hang_up(struct pipe *);
static void	 pipe_wake(struct pipe *);
static void	 post_read(struct pipe *);
static void	 post_write(struct pipe *);
static void	 instance_connected(struct pipe *);

static void
lock_pipes(void)
{
	AcquireSRWLockExclusive(&lock);
}

static void
unlock_pipes(void)
{
	ReleaseSRWLockExclusive(&lock);
}

/* The errno for a failed pipe operation. */
static int
pipe_errno(DWORD error)
{
	switch (error) {
	case ERROR_FILE_NOT_FOUND:
	case ERROR_PATH_NOT_FOUND:
		return (ENOENT);
	case ERROR_ACCESS_DENIED:
		return (EACCES);
	case ERROR_PIPE_BUSY:
		return (EBUSY);
	case ERROR_BROKEN_PIPE:
	case ERROR_NO_DATA:
	case ERROR_PIPE_NOT_CONNECTED:
		return (EPIPE);
	case ERROR_NOT_ENOUGH_MEMORY:
	case ERROR_OUTOFMEMORY:
		return (ENOMEM);
	default:
		return (EIO);
	}
}

/* The UTF-16 form of a UTF-8 string, to free, or NULL. */
static wchar_t *
wide(const char *s)
{
	wchar_t	*w;
	int	 n;

	if ((n = MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1,
	    NULL, 0)) <= 0)
		return (NULL);
	if ((w = calloc((size_t)n, sizeof(*w))) == NULL)
		return (NULL);
	if (MultiByteToWideChar(CP_UTF8, MB_ERR_INVALID_CHARS, s, -1, w,
	    n) != n) {
		free(w);
		return (NULL);
	}
	return (w);
}

static int
fd_of(const struct pipe *p)
{
	return ((int)(intptr_t)p->h);
}

/* The pipe of a descriptor, under the lock. */
static struct pipe *
pipe_of(int fd)
{
	struct pipe	*p;

	/* A closed handle's value may be a new pipe's already. */
	TAILQ_FOREACH(p, &pipes, entry) {
		if (fd_of(p) == fd && !p->closing && !p->hung)
			return (p);
	}
	return (NULL);
}

/*
 * The completion thread: take each finished operation, update its pipe
 * and wake the loop where a conn or a server waits for it.
 */
static DWORD WINAPI
completion_thread(void *arg)
{
	struct pipe_op	*op;
	struct pipe	*p, *done;
	OVERLAPPED	*ov;
	ULONG_PTR	 key;
	DWORD		 n, error;
	BOOL		 ok;

	for (;;) {
		ok = GetQueuedCompletionStatus(port, &n, &key, &ov, INFINITE);
		if (ov == NULL)
			continue;	/* no packet taken */
		error = ok ? 0 : GetLastError();
		op = (struct pipe_op *)ov;
		p = op->pipe;
		done = NULL;
		lock_pipes();
		op->busy = 0;
		switch (op->kind) {
		case OP_CONNECT:
			if (error == 0 || error == ERROR_PIPE_CONNECTED)
				instance_connected(p);
			else if (p->server != NULL) {
				/* Given up: the loop makes another. */
				p->server->waiting--;
				event_active(&p->server->ev, EV_READ, 0);
				p->server = NULL;
				p->closing = 1;
			}
			break;
		case OP_READ:
			if (error == 0)
				p->in_len = n;
			else if (error == ERROR_BROKEN_PIPE ||
			    error == ERROR_PIPE_NOT_CONNECTED)
				p->eof = 1;
			else if (error != ERROR_OPERATION_ABORTED)
				p->error = pipe_errno(error);
			break;
		case OP_WRITE:
			if (error == 0)
				p->wbusy_off += n;
			else if (error != ERROR_OPERATION_ABORTED)
				p->error = pipe_errno(error);
			break;
		}
		if (p->closing)
			done = close_locked(p);
		else if (p->hung) {
			hang_up(p);
			pipe_wake(p);
		}
		else if (op->kind == OP_WRITE)
			post_write(p);	/* the rest, and wake a writer */
		else {
			post_read(p);	/* after an empty read, read again */
			pipe_wake(p);
		}
		unlock_pipes();
		free_pipe(done);
	}
	return (0);
}

/*
 * Mark a pipe closing, under the lock: cancel what is posted, and return
 * the pipe if nothing is, for free_pipe() once the lock is let go.  The
 * thread frees it when the last cancelled operation comes back.
 */
static struct pipe *
close_locked(struct pipe *p)
{
	p->closing = 1;
	p->conn = NULL;
	p->server = NULL;
	if (p->rop.busy || p->wop.busy || p->cop.busy) {
		if (!p->handle_closed)
			(void)CancelIoEx(p->h, NULL);
		return (NULL);
	}
	TAILQ_REMOVE(&pipes, p, entry);
	return (p);
}

/* Close and free a pipe that close_locked() gave back, or nothing. */
static void
free_pipe(struct pipe *p)
{
	if (p == NULL)
		return;
	if (!p->handle_closed)
		CloseHandle(p->h);
	free(p);
}

/*
 * End the pipe for its peer, under the lock: close the handle once no
 * operation is posted on it (cancelling a read that waits), and read no
 * more.  The pipe stays, for its conn, until torn down.
 */
static void
hang_up(struct pipe *p)
{
	p->hung = 1;
	p->eof = 1;
	if (p->rop.busy)
		(void)CancelIoEx(p->h, &p->rop.ov);
	if (p->handle_closed || p->rop.busy || p->wop.busy || p->cop.busy)
		return;
	CloseHandle(p->h);
	p->handle_closed = 1;
}

/*
 * Wake the loop for what the pipe's conn waits for and can now do: read
 * what is buffered (or learn the end), or write into free room.
 */
static void
pipe_wake(struct pipe *p)
{
	if (p->conn == NULL || p->closing)
		return;
	if (p->want_read && (p->in_len > 0 || p->eof || p->error))
		event_active(p->conn->rev, EV_READ, 0);
	/* A shutdown waits for the last write, not for room. */
	if (p->want_write && (p->error || (p->shut_wait ?
	    !p->wop.busy && p->wnext_len == 0 :
	    p->wnext_len < sizeof(p->wnext))))
		event_active(p->conn->wev, EV_WRITE, 0);
}

/* Start the completion port and its thread, once. */
static int
pipe_start(void)
{
	HANDLE	 t;

	if (port != NULL)
		return (0);
	if ((port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0,
	    1)) == NULL)
		return (-1);
	if ((t = CreateThread(NULL, 0, completion_thread, NULL, 0,
	    NULL)) == NULL) {
		CloseHandle(port);
		port = NULL;
		return (-1);
	}
	CloseHandle(t);
	return (0);
}

/* A pipe for handle h, tied to the port, in the list; NULL on failure. */
static struct pipe *
pipe_new(HANDLE h)
{
	struct pipe	*p;

	/* Not the buffers: zeroing 384 KiB would cost every connection. */
	if ((p = malloc(sizeof(*p))) == NULL) {
		errno = ENOMEM;
		return (NULL);
	}
	memset(p, 0, offsetof(struct pipe, in));
	memset(&p->entry, 0, sizeof(*p) - offsetof(struct pipe, entry));
	if (CreateIoCompletionPort(h, port, 0, 0) == NULL) {
		errno = pipe_errno(GetLastError());
		free(p);
		return (NULL);
	}
	p->h = h;
	/*
	 * A call that is done at once is taken where it was made, with no
	 * completion packet: no wake-up of the thread, and then of the loop
	 * through libevent's notify socket, for it.  Under wine each of
	 * those is several wineserver requests.
	 */
	p->skip = SetFileCompletionNotificationModes(h,
	    FILE_SKIP_COMPLETION_PORT_ON_SUCCESS) != 0;
	p->rop.kind = OP_READ;
	p->wop.kind = OP_WRITE;
	p->cop.kind = OP_CONNECT;
	p->rop.pipe = p->wop.pipe = p->cop.pipe = p;
	lock_pipes();
	TAILQ_INSERT_TAIL(&pipes, p, entry);
	unlock_pipes();
	return (p);
}

/* Read into the empty in-buffer; under the lock. */
static void
post_read(struct pipe *p)
{
	DWORD	 error, n;

	if (p->rop.busy || p->in_len > 0 || p->eof || p->error ||
	    p->closing || p->hung)
		return;
again:
	memset(&p->rop.ov, 0, sizeof(p->rop.ov));
	p->in_off = 0;
	p->rop.busy = 1;
	if (ReadFile(p->h, p->in, sizeof(p->in), NULL, &p->rop.ov)) {
		/* Done at once: no packet comes for it (skip). */
		if (p->skip && GetOverlappedResult(p->h, &p->rop.ov, &n,
		    FALSE)) {
			p->rop.busy = 0;
			p->in_len = n;
			if (n == 0)
				goto again;	/* an empty read: read on */
		}
	} else if ((error = GetLastError()) != ERROR_IO_PENDING) {
		p->rop.busy = 0;
		if (error == ERROR_BROKEN_PIPE ||
		    error == ERROR_PIPE_NOT_CONNECTED)
			p->eof = 1;
		else
			p->error = pipe_errno(error);
	}
}

/*
 * Write the rest of the busy buffer, or the next one once it is done;
 * under the lock.  Then wake a writer for the room made.
 */
static void
post_write(struct pipe *p)
{
	DWORD	 error, n;

again:
	if (p->wop.busy || p->error || p->closing || p->hung)
		goto wake;
	if (p->wbusy_off == p->wbusy_len && p->wnext_len > 0) {
		memcpy(p->wbusy, p->wnext, p->wnext_len);
		p->wbusy_len = p->wnext_len;
		p->wbusy_off = p->wnext_len = 0;
	}
	if (p->wbusy_off == p->wbusy_len) {
		p->wbusy_off = p->wbusy_len = 0;
		goto wake;
	}
	memset(&p->wop.ov, 0, sizeof(p->wop.ov));
	p->wop.busy = 1;
	if (WriteFile(p->h, p->wbusy + p->wbusy_off,
	    (DWORD)(p->wbusy_len - p->wbusy_off), NULL, &p->wop.ov)) {
		/* Done at once (skip): on with the rest, if any. */
		if (p->skip && GetOverlappedResult(p->h, &p->wop.ov, &n,
		    FALSE)) {
			p->wop.busy = 0;
			p->wbusy_off += n;
			goto again;
		}
	} else if ((error = GetLastError()) != ERROR_IO_PENDING) {
		p->wop.busy = 0;
		p->error = pipe_errno(error);
	}
wake:
	pipe_wake(p);
}

/*
 * An instance of a listening pipe has its client: hand it to the loop;
 * under the lock.
 */
static void
instance_connected(struct pipe *p)
{
	struct pipe_server	*s = p->server;

	if (s == NULL || p->closing)
		return;
	s->waiting--;
	TAILQ_INSERT_TAIL(&s->ready, p, ready);
	event_active(&s->ev, EV_READ, 0);
}

/* Parse NAME or \\.\pipe\NAME. */
static int
pipe_parse(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	struct pipe_endpoint	*pe;
	const char		*name = addr;

	if (strncasecmp(name, PIPE_PREFIX, strlen(PIPE_PREFIX)) == 0)
		name += strlen(PIPE_PREFIX);
	if (*name == '\0') {
		snprintf(err, len, "the pipe name is empty");
		return (-1);
	}
	if (strlen(name) > PIPE_NAME_MAX) {
		snprintf(err, len, "the pipe name is %zu bytes; Windows takes "
		    "at most %d", strlen(name), PIPE_NAME_MAX);
		return (-1);
	}
	if (strchr(name, '/') != NULL) {
		snprintf(err, len, "%s: a pipe name has no '/'; give NAME or "
		    "\\\\.\\pipe\\NAME", addr);
		return (-1);
	}
	if (!ipc_pipe_name_plain(name)) {
		snprintf(err, len, "%s: Windows would open another pipe than "
		    "this name says (a part that is empty or ends in a dot or a "
		    "space, . or ..); give the pipe's own name", addr);
		return (-1);
	}
	if ((pe = calloc(1, sizeof(*pe))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	snprintf(pe->path, sizeof(pe->path), "%s%s", PIPE_PREFIX, name);
	if ((pe->wpath = wide(pe->path)) == NULL) {
		snprintf(err, len, "%s: not UTF-8", addr);
		free(pe);
		return (-1);
	}
	ep->t = pe;
	return (0);
}

static void
pipe_clear(struct endpoint *ep)
{
	struct pipe_endpoint	*pe = PIPE_EP(ep);

	free(pe->wpath);
	free(pe);
	ep->t = NULL;
}

static void
pipe_set_name(struct endpoint *ep)
{
	snprintf(ep->name, sizeof(ep->name), "pipe:%s",
	    PIPE_EP(ep)->path + strlen(PIPE_PREFIX));
}

/* Open the pipe as a client; INVALID_HANDLE_VALUE with *error set. */
static HANDLE
pipe_open(const wchar_t *path, DWORD *error)
{
	HANDLE	 h;

	/* The server learns who we are, and may not act as us. */
	h = CreateFileW(path, GENERIC_READ | GENERIC_WRITE, 0, NULL,
	    OPEN_EXISTING, FILE_FLAG_OVERLAPPED | SECURITY_SQOS_PRESENT |
	    SECURITY_IDENTIFICATION, NULL);
	*error = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
	return (h);
}

/*
 * Connect when a server is at the pipe (a runtime's default port, or a
 * tool that listens), listen when none is (the name a runtime dials
 * with DOTNET_DiagnosticPorts).
 */
static void
pipe_auto_role(struct endpoint *ep)
{
	HANDLE	 h;
	DWORD	 error;

	h = pipe_open(PIPE_EP(ep)->wpath, &error);
	if (h != INVALID_HANDLE_VALUE || error == ERROR_PIPE_BUSY) {
		if (h != INVALID_HANDLE_VALUE)
			CloseHandle(h);
		ep->role = ROLE_CONNECT;
		ep->why = "a server is already at the pipe";
	} else {
		ep->role = ROLE_LISTEN;
		ep->why = "nothing serves the pipe";
	}
}

/* Log the settings a runtime or a tool needs to use the endpoint. */
static void
pipe_howto(const struct endpoint *ep, const struct endpoint *other)
{
	const char		*name = PIPE_EP(ep)->path + strlen(PIPE_PREFIX);
	struct default_name	 dn;

	transport_howto_local(ep, other, name,
	    ipc_default_pipe_parse(name, 0, &dn) ? &dn : NULL);
}

/* Whether the pipe is a runtime's default one: dotnet-diagnostic-PID. */
static int
pipe_runtime_port(const struct endpoint *ep)
{
	struct default_name	 dn;

	return (ipc_default_pipe_parse(PIPE_EP(ep)->path, 0, &dn));
}

/* A pipe listens only through accept_start: not as --metrics. */
static int
pipe_listen(struct endpoint *ep, char *err, size_t len)
{
	snprintf(err, len, "%s: a pipe cannot serve this; give tcp:",
	    ep->name);
	return (-1);
}

/*
 * Admit this user and SYSTEM, and no network logon.  SYSTEM because a
 * 0600 socket file admits root too, and a .NET service running as
 * LocalSystem could not reach the pipe otherwise; not Administrators.
 */
static int
server_security(struct pipe_server *s, char *err, size_t len)
{
	HANDLE		 token;
	TOKEN_USER	*user = NULL;
	DWORD		 n = 0;
	wchar_t		*sid = NULL, sddl[256];
	int		 rv = -1;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &token)) {
		snprintf(err, len, "cannot read this process's token "
		    "(error %lu)", GetLastError());
		return (-1);
	}
	(void)GetTokenInformation(token, TokenUser, NULL, 0, &n);
	if (n == 0 || (user = malloc(n)) == NULL ||
	    !GetTokenInformation(token, TokenUser, user, n, &n) ||
	    !ConvertSidToStringSidW(user->User.Sid, &sid)) {
		snprintf(err, len, "cannot learn this process's user "
		    "(error %lu)", GetLastError());
		goto done;
	}
	swprintf(sddl, sizeof(sddl) / sizeof(sddl[0]),
	    L"D:P(D;;GA;;;NU)(A;;GA;;;SY)(A;;GA;;;%ls)", sid);
	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl,
	    SDDL_REVISION_1, &s->sd, NULL)) {
		snprintf(err, len, "cannot make the pipe's security "
		    "descriptor (error %lu)", GetLastError());
		goto done;
	}
	s->sa.nLength = sizeof(s->sa);
	s->sa.lpSecurityDescriptor = s->sd;
	s->sa.bInheritHandle = FALSE;
	rv = 0;
done:
	if (sid != NULL)
		LocalFree(sid);
	free(user);
	CloseHandle(token);
	return (rv);
}

/*
 * Make one more instance and wait for its client.  The first is made
 * FIRST_PIPE_INSTANCE: if another process has the name, it fails.  Wine
 * (8.0) ignores that flag and joins the other's pipe, so the first is
 * also refused when it is not the only instance.
 */
static int
server_instance(struct pipe_server *s, int first, char *err, size_t len)
{
	struct pipe_endpoint	*pe = PIPE_EP(s->ep);
	struct pipe		*p;
	HANDLE			 h;
	DWORD			 error, instances;

	h = CreateNamedPipeW(pe->wpath, PIPE_ACCESS_DUPLEX |
	    FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
	    PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
	    PIPE_REJECT_REMOTE_CLIENTS, PIPE_UNLIMITED_INSTANCES,
	    PIPE_BUF_SIZE, PIPE_BUF_SIZE, 0, &s->sa);
	if (h == INVALID_HANDLE_VALUE) {
		error = GetLastError();
		if (first && error == ERROR_ACCESS_DENIED)
			snprintf(err, len, "%s: another process serves this "
			    "pipe already; not sharing its name (another "
			    "router, or a squatter?)", s->ep->name);
		else
			snprintf(err, len, "%s: cannot make the pipe "
			    "(error %lu)", s->ep->name, error);
		return (-1);
	}
	if (first && GetNamedPipeHandleStateW(h, NULL, &instances, NULL, NULL,
	    NULL, 0) && instances > 1) {
		CloseHandle(h);
		snprintf(err, len, "%s: another process serves this pipe "
		    "already; not sharing its name (another router, or a "
		    "squatter?)", s->ep->name);
		return (-1);
	}
	if ((p = pipe_new(h)) == NULL) {
		snprintf(err, len, "%s: %s", s->ep->name, strerror(errno));
		CloseHandle(h);
		return (-1);
	}
	lock_pipes();
	p->server = s;
	s->waiting++;
	p->cop.busy = 1;
	if (ConnectNamedPipe(h, &p->cop.ov)) {
		if (p->skip) {
			/* Connected at once, and no packet comes for it. */
			p->cop.busy = 0;
			instance_connected(p);
		}
	} else {
		error = GetLastError();
		if (error == ERROR_PIPE_CONNECTED) {
			/* Connected in between: no completion will come. */
			p->cop.busy = 0;
			instance_connected(p);
		} else if (error != ERROR_IO_PENDING) {
			p->cop.busy = 0;
			s->waiting--;
			p = close_locked(p);
			unlock_pipes();
			free_pipe(p);
			snprintf(err, len, "%s: cannot wait for a client "
			    "(error %lu)", s->ep->name, error);
			return (-1);
		}
	}
	unlock_pipes();
	return (0);
}

/* The thread saw clients connect: hand them over, and wait for more. */
static void
server_event(evutil_socket_t fd, short what, void *arg)
{
	struct pipe_server	*s = arg;
	struct pipe_list	 ready;
	struct pipe		*p;
	char			 err[256];
	int			 waiting;

	TAILQ_INIT(&ready);
	lock_pipes();
	while ((p = TAILQ_FIRST(&s->ready)) != NULL) {
		TAILQ_REMOVE(&s->ready, p, ready);
		p->server = NULL;
		TAILQ_INSERT_TAIL(&ready, p, ready);
	}
	waiting = s->waiting;
	unlock_pipes();
	for (; waiting < PIPE_WAITING; waiting++) {
		if (server_instance(s, 0, err, sizeof(err)) == -1) {
			log_warning("%s", err);
			break;
		}
	}
	while ((p = TAILQ_FIRST(&ready)) != NULL) {
		TAILQ_REMOVE(&ready, p, ready);
		s->accepted(fd_of(p), s->arg);
	}
}

static int
pipe_accept_start(struct endpoint *ep, void (*accepted)(int, void *),
    void *arg, char *err, size_t len)
{
	struct pipe_endpoint	*pe = PIPE_EP(ep);
	struct pipe_server	*s;
	int			 i;

	if (pipe_start() == -1) {
		snprintf(err, len, "%s: cannot start the pipes' completion "
		    "port (error %lu)", ep->name, GetLastError());
		return (-1);
	}
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	s->ep = ep;
	s->accepted = accepted;
	s->arg = arg;
	TAILQ_INIT(&s->ready);
	event_assign(&s->ev, transport_env.base, -1, EV_PERSIST, server_event,
	    s);
	pe->server = s;
	if (server_security(s, err, len) == -1)
		goto fail;
	for (i = 0; i < PIPE_WAITING; i++) {
		if (server_instance(s, i == 0, err, len) == -1)
			goto fail;
	}
	return (0);
fail:
	pipe_unlisten(ep);
	return (-1);
}

/* Close the instances still waiting or not handed over. */
static void
pipe_unlisten(struct endpoint *ep)
{
	struct pipe_endpoint	*pe = PIPE_EP(ep);
	struct pipe_server	*s = pe->server;
	struct pipe_list	 done;
	struct pipe		*p, *next;

	if (s == NULL)
		return;
	TAILQ_INIT(&done);
	lock_pipes();
	for (p = TAILQ_FIRST(&pipes); p != NULL; p = next) {
		next = TAILQ_NEXT(p, entry);
		if (p->server == s && (p = close_locked(p)) != NULL)
			TAILQ_INSERT_TAIL(&done, p, ready);
	}
	unlock_pipes();
	/* No instance names the server now: the thread leaves it be. */
	event_del(&s->ev);
	while ((p = TAILQ_FIRST(&done)) != NULL) {
		TAILQ_REMOVE(&done, p, ready);
		free_pipe(p);
	}
	if (s->sd != NULL)
		LocalFree(s->sd);
	free(s);
	pe->server = NULL;
}

/*
 * Open the pipe, once.  While every instance is busy this fails with
 * EBUSY, which the session retries on its timer (10 ms, then longer,
 * within --connect-timeout): the runtime's server makes the next
 * instance soon after it takes a client.  Never wait here: the loop
 * serves every other session meanwhile.  (Nor WaitNamedPipe: under wine
 * a burst of waiters wedged the runtime's diagnostic server.)
 */
static int
pipe_dial(struct endpoint *ep, int *pending)
{
	struct pipe	*p;
	HANDLE		 h;
	DWORD		 error;

	if (pipe_start() == -1) {
		errno = pipe_errno(GetLastError());
		return (-1);
	}
	if ((h = pipe_open(PIPE_EP(ep)->wpath, &error)) ==
	    INVALID_HANDLE_VALUE) {
		errno = pipe_errno(error);
		return (-1);
	}
	if ((p = pipe_new(h)) == NULL) {
		CloseHandle(h);
		return (-1);
	}
	*pending = 0;
	return (fd_of(p));
}

/* What the conn waits for; wake it at once for what is there already. */
static void
pipe_arm(struct stream *c, int want_read, int want_write)
{
	struct pipe	*p = c->tstate;

	if (p == NULL)
		return;
	lock_pipes();
	p->conn = want_read || want_write ? c : NULL;
	p->want_read = want_read;
	p->want_write = want_write;
	if (want_read)
		post_read(p);
	pipe_wake(p);
	unlock_pipes();
}

/*
 * Close a pipe no conn holds (accepted and refused, or dialled and given
 * up); a conn's pipe closes at its teardown.
 */
static void
pipe_close(int fd)
{
	struct pipe	*p;

	lock_pipes();
	if ((p = pipe_of(fd)) != NULL)
		p = close_locked(p);
	unlock_pipes();
	free_pipe(p);
}

/*
 * Why the server of a pipe named for a process, dn, is refused, or NULL
 * when that process serves it.  The pid is what Windows recorded for the
 * process that made the instance we are connected to.  That process's
 * token says nothing more: if it is PID, its user is PID's user by
 * definition (and Windows has no uid rules for the ACL to apply, see
 * geteuid() in compat.h).  What a SID could add, the pipe's owner
 * against PID's user, for an instance its maker handed to another
 * process before its pid went to PID, is not checked: wine reports no
 * owner for a pipe, so that check could not be tested here.
 */
static const char *
named_server_refusal(HANDLE h, const struct default_name *dn, ULONG *pid)
{
	static char	 why[256];

	if (!GetNamedPipeServerProcessId(h, pid)) {
		snprintf(why, sizeof(why), "cannot learn which process serves "
		    "the pipe (error %lu), so not whether it is process %ld, "
		    "the one its name gives", GetLastError(), dn->pid);
		return (why);
	}
	if ((long)*pid != dn->pid) {
		snprintf(why, sizeof(why), "the process serving the pipe is "
		    "not the one its name gives: it names pid %ld, the server "
		    "is pid %lu (a squatter?)", dn->pid, *pid);
		return (why);
	}
	return (NULL);
}

/*
 * The peer's process id, for the log and the ACL: a local peer.  A pipe
 * dialled by a name for a process must be served by it.
 */
static int
pipe_setup(struct stream *c, int accepted)
{
	struct default_name	 dn;
	struct pipe		*p;
	ULONG			 pid = 0;
	BOOL			 ok;

	lock_pipes();
	p = pipe_of(c->fd);
	unlock_pipes();
	if (p == NULL) {
		c->error = EBADF;
		return (-1);
	}
	c->tstate = p;
	if (!accepted && ipc_default_pipe_parse(PIPE_EP(c->endpoint)->path, 1,
	    &dn)) {
		if ((c->why = named_server_refusal(p->h, &dn, &pid)) != NULL)
			return (-1);
		ok = 1;
	} else
		ok = accepted ? GetNamedPipeClientProcessId(p->h, &pid) :
		    GetNamedPipeServerProcessId(p->h, &pid);
	if (ok) {
		c->have_cred = 1;
		c->pid = (pid_t)pid;
		c->uid = geteuid();	/* see geteuid() in compat.h */
		c->gid = 0;
	}
	return (0);
}

static ssize_t
pipe_read(struct stream *c, void *buf, size_t len)
{
	struct pipe	*p = c->tstate;
	ssize_t		 n;

	lock_pipes();
	if (p->in_len > 0) {
		n = (ssize_t)(len < p->in_len ? len : p->in_len);
		memcpy(buf, p->in + p->in_off, (size_t)n);
		p->in_off += (size_t)n;
		p->in_len -= (size_t)n;
		post_read(p);	/* the next while the engine works */
	} else if (p->eof)
		n = IO_EOF;
	else if (p->error) {
		c->error = errno = p->error;
		n = IO_ERROR;
	} else {
		post_read(p);
		n = p->eof ? IO_EOF : IO_WANT_READ;
	}
	unlock_pipes();
	return (n);
}

static ssize_t
pipe_write(struct stream *c, const void *buf, size_t len)
{
	struct pipe	*p = c->tstate;
	size_t		 n;

	lock_pipes();
	if (p->error || p->hung) {
		c->error = errno = p->error ? p->error : EPIPE;
		unlock_pipes();
		return (IO_ERROR);
	}
	n = sizeof(p->wnext) - p->wnext_len;
	if (n > len)
		n = len;
	if (n == 0) {
		unlock_pipes();
		return (IO_WANT_WRITE);
	}
	memcpy(p->wnext + p->wnext_len, buf, n);
	p->wnext_len += n;
	post_write(p);
	unlock_pipes();
	return ((ssize_t)n);
}

static ssize_t
pipe_write_buffer(struct stream *c, struct evbuffer *buf)
{
	ssize_t		 n, total = 0;
	size_t		 chunk;
	unsigned char	*data;

	while ((chunk = evbuffer_get_contiguous_space(buf)) > 0) {
		data = evbuffer_pullup(buf, (ssize_t)chunk);
		if ((n = pipe_write(c, data, chunk)) < 0)
			return (total > 0 ? total : n);
		evbuffer_drain(buf, (size_t)n);
		total += n;
		if ((size_t)n < chunk)
			break;
	}
	return (total);
}

static size_t
pipe_pending(struct stream *c)
{
	struct pipe	*p = c->tstate;
	size_t		 n;

	lock_pipes();
	n = p->in_len;
	unlock_pipes();
	return (n);
}

static long
pipe_unsent(struct stream *c)
{
	struct pipe	*p = c->tstate;
	long		 n;

	lock_pipes();
	n = (long)(p->wbusy_len - p->wbusy_off + p->wnext_len);
	unlock_pipes();
	return (n);
}

/*
 * No half-close on a pipe: send what is held, then close the handle so
 * the peer sees the end.
 */
static int
pipe_shutdown(struct stream *c)
{
	struct pipe	*p = c->tstate;
	int		 rv = 0;

	lock_pipes();
	if (p->error || p->hung)
		p->shut_wait = 0;
	else if (p->wop.busy || p->wnext_len > 0) {
		p->shut_wait = 1;
		rv = IO_WANT_WRITE;
	} else {
		p->shut_wait = 0;
		hang_up(p);
	}
	unlock_pipes();
	return (rv);
}

/* The conn is done with its pipe: close it when nothing is posted. */
static void
pipe_teardown(struct stream *c)
{
	struct pipe	*p = c->tstate;

	if (p == NULL)
		return;
	lock_pipes();
	p = close_locked(p);
	unlock_pipes();
	free_pipe(p);
}
