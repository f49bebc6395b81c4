/* SPDX-License-Identifier: ISC */

/*
 * pipeprobe.exe: what wine does with the named-pipe calls that the planned
 * transports/pipe.c and platform/win32.c stand on (docs/windows-port.md,
 * sections 4.2 and 4.3).  contrib/windows/pipeprobe.sh builds it and runs
 * it under wine.  Each fact is one line, "name: value".
 *
 * All server-side I/O is overlapped, and every completion is taken by one
 * thread that loops on GetQueuedCompletionStatus; the main thread issues
 * the operations and waits for that thread to hand each result over,
 * which is the shape pipe.c plans for.  The cross-process facts (peer
 * pids, throughput, latency) use a child: this program run again as
 * "pipeprobe.exe client PIPE".
 *
 * Facts the design needs are checked: a miss prints "pipeprobe: FAIL ..."
 * and the exit status is 1.  The squat check passes when a second
 * FIRST_PIPE_INSTANCE is refused (Windows) or can at least be seen
 * (wine 8 creates it: see probe_instances).  Others (is a DACL enforced, is a packet
 * queued after ERROR_PIPE_CONNECTED, what a zero-byte read does) are
 * reported as they are.  The last line is "pipeprobe: ok" when every
 * check held.
 */

#include <windows.h>
#include <sddl.h>
#include <aclapi.h>

#include <fcntl.h>
#include <io.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#define BUFSZ		(64 * 1024)
#define BULK_BYTES	(64ULL * 1024 * 1024)
#define PINGS		2000
#define WAIT_MS		5000	/* a completion that should come */
#define QUIET_MS	200	/* a completion that should not come */
#define KEY_QUIT	((ULONG_PTR)-1)
#define KEY_PIPE	1

/* One overlapped operation; the OVERLAPPED comes first. */
struct op {
	OVERLAPPED	 ov;
	HANDLE		 done;		/* auto-reset, set by the thread */
	void		(*cb)(struct op *);
	void		*arg;
	BOOL		 ok;
	DWORD		 bytes;
	DWORD		 err;
};

/* A bulk transfer driven from the completion thread. */
struct bulk {
	CRITICAL_SECTION lock;
	HANDLE		 h;
	struct op	 ops[2];
	DWORD		 want[2];
	char		*buf[2];
	uint64_t	 total;
	uint64_t	 issued;
	uint64_t	 moved;
	int		 writing;
	int		 failed;
	DWORD		 err;
	HANDLE		 finished;	/* manual-reset */
};

static HANDLE		 port;
static HANDLE		 cthread;
static volatile LONG	 packets;
static double		 qpc_freq;
static int		 failures;
static unsigned		 pipe_seq;

static void	fact(const char *, const char *, ...)
		    __attribute__((format(gnu_printf, 2, 3)));
static void	fail(const char *, ...)
		    __attribute__((format(gnu_printf, 1, 2)));

static void
fact(const char *name, const char *fmt, ...)
{
	va_list	ap;

	printf("%s: ", name);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
}

static void
fail(const char *fmt, ...)
{
	va_list	ap;

	printf("pipeprobe: FAIL ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	failures++;
}

static void __attribute__((noreturn, format(gnu_printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list	ap;

	fflush(stdout);
	fputs("pipeprobe: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

static double
now_us(void)
{
	LARGE_INTEGER	t;

	QueryPerformanceCounter(&t);
	return ((double)t.QuadPart * 1e6 / qpc_freq);
}

/* Take every completion on the port; hand each to its op. */
static DWORD WINAPI
completion_main(LPVOID arg)
{
	OVERLAPPED	*ov;
	struct op	*o;
	ULONG_PTR	 key;
	DWORD		 n;
	BOOL		 ok;

	(void)arg;
	for (;;) {
		ov = NULL;
		ok = GetQueuedCompletionStatus(port, &n, &key, &ov, INFINITE);
		if (ov == NULL) {
			if (ok && key == KEY_QUIT)
				break;
			continue;
		}
		o = (struct op *)ov;
		o->ok = ok;
		o->bytes = n;
		o->err = ok ? 0 : GetLastError();
		InterlockedIncrement(&packets);
		if (o->cb != NULL)
			o->cb(o);
		else
			SetEvent(o->done);
	}
	return (0);
}

static void
op_init(struct op *o)
{
	memset(o, 0, sizeof(*o));
	if ((o->done = CreateEventW(NULL, FALSE, FALSE, NULL)) == NULL)
		die("CreateEvent: error %lu", GetLastError());
}

/* Clear an op for its next use, keeping its event and callback. */
static void
op_reset(struct op *o)
{
	memset(&o->ov, 0, sizeof(o->ov));
	o->ok = FALSE;
	o->bytes = 0;
	o->err = 0;
}

/* 1 when the thread reported this op within ms, else 0. */
static int
op_wait(struct op *o, DWORD ms)
{
	return (WaitForSingleObject(o->done, ms) == WAIT_OBJECT_0);
}

/* Wait for an op that must complete; die if it does not. */
static void
op_must(struct op *o, const char *what)
{
	if (!op_wait(o, WAIT_MS))
		die("%s: no completion within %d ms", what, WAIT_MS);
}

static void
associate(HANDLE h)
{
	if (CreateIoCompletionPort(h, port, KEY_PIPE, 0) != port)
		die("CreateIoCompletionPort: error %lu", GetLastError());
}

static void
new_name(wchar_t *name, size_t n, const char *tag)
{
	swprintf(name, n, L"\\\\.\\pipe\\dsroute-probe-%lu-%u-%hs",
	    GetCurrentProcessId(), pipe_seq++, tag);
}

/* The server instance pipe.c would create (first: with the squat check). */
static HANDLE
mkpipe(const wchar_t *name, int first, SECURITY_ATTRIBUTES *sa)
{
	return (CreateNamedPipeW(name, PIPE_ACCESS_DUPLEX |
	    FILE_FLAG_OVERLAPPED | (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
	    PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
	    PIPE_REJECT_REMOTE_CLIENTS, PIPE_UNLIMITED_INSTANCES, BUFSZ, BUFSZ,
	    0, sa));
}

/* A plain blocking client, as a tool would open the pipe. */
static HANDLE
client_open(const wchar_t *name, DWORD *err)
{
	HANDLE	h;

	h = CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL,
	    OPEN_EXISTING, 0, NULL);
	*err = h == INVALID_HANDLE_VALUE ? GetLastError() : 0;
	return (h);
}

static int
sync_write(HANDLE h, const void *p, DWORD n)
{
	DWORD	put, off = 0;

	while (off < n) {
		if (!WriteFile(h, (const char *)p + off, n - off, &put, NULL))
			return (-1);
		off += put;
	}
	return (0);
}

static int
sync_read(HANDLE h, void *p, DWORD n)
{
	DWORD	got, off = 0;

	while (off < n) {
		if (!ReadFile(h, (char *)p + off, n - off, &got, NULL) ||
		    got == 0)
			return (-1);
		off += got;
	}
	return (0);
}

/*
 * Issue an overlapped read or write.  Returns "sync" when the call
 * returned TRUE, "pending" on ERROR_IO_PENDING; anything else is an
 * immediate failure, its error in *err.
 */
static const char *
issue(struct op *o, HANDLE h, int write, void *buf, DWORD n, DWORD *err)
{
	BOOL	r;

	op_reset(o);
	r = write ? WriteFile(h, buf, n, NULL, &o->ov) :
	    ReadFile(h, buf, n, NULL, &o->ov);
	*err = r ? 0 : GetLastError();
	if (r)
		return ("sync");
	if (*err == ERROR_IO_PENDING)
		return ("pending");
	return ("failed");
}

static const char *
errname(DWORD e)
{
	switch (e) {
	case 0:
		return ("none");
	case ERROR_FILE_NOT_FOUND:
		return ("ERROR_FILE_NOT_FOUND");
	case ERROR_ACCESS_DENIED:
		return ("ERROR_ACCESS_DENIED");
	case ERROR_BROKEN_PIPE:
		return ("ERROR_BROKEN_PIPE");
	case ERROR_PIPE_BUSY:
		return ("ERROR_PIPE_BUSY");
	case ERROR_NO_DATA:
		return ("ERROR_NO_DATA");
	case ERROR_PIPE_NOT_CONNECTED:
		return ("ERROR_PIPE_NOT_CONNECTED");
	case ERROR_PIPE_CONNECTED:
		return ("ERROR_PIPE_CONNECTED");
	case ERROR_PIPE_LISTENING:
		return ("ERROR_PIPE_LISTENING");
	case ERROR_OPERATION_ABORTED:
		return ("ERROR_OPERATION_ABORTED");
	case ERROR_IO_PENDING:
		return ("ERROR_IO_PENDING");
	case ERROR_NOT_FOUND:
		return ("ERROR_NOT_FOUND");
	case ERROR_INVALID_PARAMETER:
		return ("ERROR_INVALID_PARAMETER");
	default:
		return ("?");
	}
}

/* "error N (NAME)" in a static buffer, two at a time. */
static const char *
errtext(DWORD e)
{
	static char	b[2][64];
	static int	i;

	i = !i;
	snprintf(b[i], sizeof(b[i]), "error %lu (%s)", e, errname(e));
	return (b[i]);
}

/* Issue the next chunk of a bulk transfer; call with the lock held. */
static void
bulk_issue(struct bulk *b, int i)
{
	uint64_t	 left = b->total - b->issued;
	DWORD		 err;

	b->want[i] = left < BUFSZ ? (DWORD)left : BUFSZ;
	b->issued += b->want[i];
	if (strcmp(issue(&b->ops[i], b->h, b->writing, b->buf[i], b->want[i],
	    &err), "failed") == 0) {
		b->failed = 1;
		b->err = err;
		SetEvent(b->finished);
	}
}

/* Completion callback of a bulk op: count it and issue the next. */
static void
bulk_done(struct op *o)
{
	struct bulk	*b = o->arg;
	int		 i = o == &b->ops[1];

	EnterCriticalSection(&b->lock);
	if (!o->ok || o->bytes == 0) {
		b->failed = 1;
		b->err = o->ok ? ERROR_BROKEN_PIPE : o->err;
		SetEvent(b->finished);
	} else {
		/* A short read gives back what it did not get. */
		b->issued -= b->want[i] - o->bytes;
		b->moved += o->bytes;
		if (b->moved >= b->total)
			SetEvent(b->finished);
		else if (b->issued < b->total && !b->failed)
			bulk_issue(b, i);
	}
	LeaveCriticalSection(&b->lock);
}

/*
 * Move total bytes through h with two operations in flight, all of it
 * driven by the completion thread.  Returns seconds, or -1.
 */
static double
bulk_run(HANDLE h, int writing, uint64_t total, DWORD *err)
{
	struct bulk	b;
	double		t0, t1;
	int		i, j;

	memset(&b, 0, sizeof(b));
	InitializeCriticalSection(&b.lock);
	b.h = h;
	b.total = total;
	b.writing = writing;
	if ((b.finished = CreateEventW(NULL, TRUE, FALSE, NULL)) == NULL)
		die("CreateEvent: error %lu", GetLastError());
	for (i = 0; i < 2; i++) {
		op_init(&b.ops[i]);
		b.ops[i].cb = bulk_done;
		b.ops[i].arg = &b;
		if ((b.buf[i] = malloc(BUFSZ)) == NULL)
			die("out of memory");
		for (j = 0; j < BUFSZ; j++)
			b.buf[i][j] = (char)(j * 7 + i);
	}
	t0 = now_us();
	EnterCriticalSection(&b.lock);
	for (i = 0; i < 2 && b.issued < total; i++)
		bulk_issue(&b, i);
	LeaveCriticalSection(&b.lock);
	if (WaitForSingleObject(b.finished, 120000) != WAIT_OBJECT_0)
		die("bulk transfer stalled at %llu of %llu bytes",
		    (unsigned long long)b.moved, (unsigned long long)total);
	t1 = now_us();
	*err = b.failed ? b.err : 0;
	if (b.failed) {
		/* The other op may be in flight: cancel it, let it land. */
		CancelIoEx(h, NULL);
		Sleep(200);
	}
	for (i = 0; i < 2; i++) {
		free(b.buf[i]);
		CloseHandle(b.ops[i].done);
	}
	CloseHandle(b.finished);
	DeleteCriticalSection(&b.lock);
	return (b.failed ? -1.0 : (t1 - t0) / 1e6);
}

/* Build the SDDL of section 4.2: us and SYSTEM, network logons denied. */
static wchar_t *
user_sid(void)
{
	TOKEN_USER	*tu;
	HANDLE		 tok;
	wchar_t		*s;
	DWORD		 n = 0;

	if (!OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &tok))
		die("OpenProcessToken: error %lu", GetLastError());
	GetTokenInformation(tok, TokenUser, NULL, 0, &n);
	if (n == 0 || (tu = malloc(n)) == NULL)
		die("GetTokenInformation: error %lu", GetLastError());
	if (!GetTokenInformation(tok, TokenUser, tu, n, &n))
		die("GetTokenInformation: error %lu", GetLastError());
	if (!ConvertSidToStringSidW(tu->User.Sid, &s))
		die("ConvertSidToStringSid: error %lu", GetLastError());
	CloseHandle(tok);
	free(tu);
	return (s);
}

static char *
utf8(const wchar_t *w)
{
	static char	b[4][1024];
	static int	i;

	i = (i + 1) % 4;
	WideCharToMultiByte(CP_UTF8, 0, w, -1, b[i], sizeof(b[i]), NULL,
	    NULL);
	return (b[i]);
}

/* The DACL the kernel object really has, as SDDL. */
static const char *
dacl_of(HANDLE h)
{
	PSECURITY_DESCRIPTOR	 sd = NULL;
	PACL			 dacl = NULL;
	wchar_t			*s;
	static char		 out[1024];
	DWORD			 e;

	e = GetSecurityInfo(h, SE_KERNEL_OBJECT, DACL_SECURITY_INFORMATION,
	    NULL, NULL, &dacl, NULL, &sd);
	if (e != ERROR_SUCCESS) {
		snprintf(out, sizeof(out), "GetSecurityInfo %s", errtext(e));
		return (out);
	}
	if (!ConvertSecurityDescriptorToStringSecurityDescriptorW(sd,
	    SDDL_REVISION_1, DACL_SECURITY_INFORMATION, &s, NULL)) {
		snprintf(out, sizeof(out), "ConvertSecurityDescriptor %s",
		    errtext(GetLastError()));
		LocalFree(sd);
		return (out);
	}
	snprintf(out, sizeof(out), "%s", utf8(s));
	LocalFree(s);
	LocalFree(sd);
	return (out);
}

/* A pipe with this SDDL, then a client open of it as ourselves. */
static void
acl_case(const char *label, const wchar_t *sddl, int must_open)
{
	SECURITY_ATTRIBUTES	sa;
	PSECURITY_DESCRIPTOR	sd;
	wchar_t			name[128];
	HANDLE			s, c;
	DWORD			err;

	if (!ConvertStringSecurityDescriptorToSecurityDescriptorW(sddl,
	    SDDL_REVISION_1, &sd, NULL)) {
		fail("sddl %s: %s", utf8(sddl), errtext(GetLastError()));
		return;
	}
	sa.nLength = sizeof(sa);
	sa.lpSecurityDescriptor = sd;
	sa.bInheritHandle = FALSE;
	new_name(name, 128, "acl");
	if ((s = mkpipe(name, 1, &sa)) == INVALID_HANDLE_VALUE) {
		fail("create with %s: %s", label, errtext(GetLastError()));
		LocalFree(sd);
		return;
	}
	if (must_open)
		fact("sddl dacl stored", "%s", dacl_of(s));
	c = client_open(name, &err);
	fact(label, "client open as this user: %s", c != INVALID_HANDLE_VALUE ?
	    (must_open ? "opened" : "opened: NOT enforced") : errtext(err));
	if (must_open && c == INVALID_HANDLE_VALUE)
		fail("%s: the owner cannot open its own pipe", label);
	if (c != INVALID_HANDLE_VALUE)
		CloseHandle(c);
	CloseHandle(s);
	LocalFree(sd);
}

static void
probe_security(void)
{
	wchar_t		*sid, sddl[512];

	sid = user_sid();
	fact("token user", "%s", utf8(sid));
	swprintf(sddl, 512, L"D:P(D;;GA;;;NU)(A;;GA;;;%ls)(A;;GA;;;SY)", sid);
	fact("sddl", "%s", utf8(sddl));
	acl_case("sddl user+SY, NU denied", sddl, 1);
	acl_case("dacl SYSTEM only (is a DACL enforced?)", L"D:P(A;;GA;;;SY)",
	    0);
	swprintf(sddl, 512, L"D:P(D;;GA;;;WD)(A;;GA;;;%ls)", sid);
	acl_case("dacl Everyone denied first (is a deny enforced?)", sddl, 0);
	LocalFree(sid);
}

/* The instances of the pipe behind h, or -1. */
static long
instances(HANDLE h)
{
	DWORD	n = 0;

	if (!GetNamedPipeHandleStateW(h, NULL, &n, NULL, NULL, NULL, 0))
		return (-1);
	return ((long)n);
}

/* Instances: first, a second first (the squat check), a later one. */
static void
probe_instances(void)
{
	wchar_t		 name[128];
	HANDLE		 a, b, c, cl1, cl2;
	const char	*how;
	long		 inst_a, inst_b;
	DWORD		 err;

	new_name(name, 128, "inst");
	SetLastError(0);
	a = mkpipe(name, 1, NULL);
	err = GetLastError();
	fact("create FIRST_PIPE_INSTANCE|OVERLAPPED|DUPLEX, BYTE|"
	    "REJECT_REMOTE_CLIENTS, UNLIMITED", "%s",
	    a != INVALID_HANDLE_VALUE ? "ok" : errtext(err));
	if (a == INVALID_HANDLE_VALUE) {
		fail("the first instance cannot be made");
		return;
	}
	fact("after that first create", "GetLastError() %lu (%s), instances "
	    "%ld", err, errname(err), instances(a));

	/*
	 * Windows refuses a second FIRST_PIPE_INSTANCE with
	 * ERROR_ACCESS_DENIED.  Wine's CreateNamedPipeW never looks at the
	 * flag: it always asks for FILE_OPEN_IF.  Later wines answer
	 * ERROR_ALREADY_EXISTS then; wine 8 says nothing, and only the
	 * instance count (GetNamedPipeHandleState) shows the squatter.
	 */
	SetLastError(0);
	b = mkpipe(name, 1, NULL);
	err = GetLastError();
	if (b == INVALID_HANDLE_VALUE)
		fact("second FIRST_PIPE_INSTANCE of the same name", "refused, "
		    "%s", errtext(err));
	else
		fact("second FIRST_PIPE_INSTANCE of the same name", "CREATED "
		    "(the flag is ignored), GetLastError() %lu (%s)", err,
		    errname(err));
	inst_a = instances(a);
	inst_b = b != INVALID_HANDLE_VALUE ? instances(b) : 0;
	fact("GetNamedPipeHandleState instances", "first handle says %ld%s",
	    inst_a, b != INVALID_HANDLE_VALUE ? (inst_b == 2 ?
	    ", the second says 2" : ", the second says otherwise") : "");
	if (b != INVALID_HANDLE_VALUE)
		CloseHandle(b);
	if (b == INVALID_HANDLE_VALUE && err == ERROR_ACCESS_DENIED)
		how = "ERROR_ACCESS_DENIED, as on Windows";
	else if (b != INVALID_HANDLE_VALUE && err == ERROR_ALREADY_EXISTS)
		how = "GetLastError() == ERROR_ALREADY_EXISTS after the create";
	else if (b != INVALID_HANDLE_VALUE && inst_b >= 2)
		how = "only by asking GetNamedPipeHandleState for the "
		    "instances right after the create (more than 1: taken)";
	else
		how = NULL;
	if (how == NULL)
		fail("a squatted name is not seen: second FIRST_PIPE_INSTANCE "
		    "gave %s", errtext(err));
	else
		fact("squat check", "%s", how);
	{
		HANDLE	in = mkpipe(name, 0, NULL);

		CloseHandle(in);
		in = CreateNamedPipeW(name, PIPE_ACCESS_INBOUND |
		    FILE_FLAG_OVERLAPPED, PIPE_TYPE_BYTE | PIPE_READMODE_BYTE,
		    PIPE_UNLIMITED_INSTANCES, BUFSZ, BUFSZ, 0, NULL);
		fact("instance of the same name with another access mode "
		    "(INBOUND)", "%s", in == INVALID_HANDLE_VALUE ?
		    errtext(GetLastError()) : "created");
		if (in != INVALID_HANDLE_VALUE)
			CloseHandle(in);
	}
	c = mkpipe(name, 0, NULL);
	fact("later instance without FIRST_PIPE_INSTANCE", "%s",
	    c != INVALID_HANDLE_VALUE ? "ok" : errtext(GetLastError()));
	if (c == INVALID_HANDLE_VALUE)
		fail("a later instance cannot be made");

	/* Instances listen from creation: two clients, no ConnectNamedPipe. */
	cl1 = client_open(name, &err);
	cl2 = client_open(name, &err);
	fact("clients before any ConnectNamedPipe", "first %s, second %s",
	    cl1 != INVALID_HANDLE_VALUE ? "opened" : "refused",
	    cl2 != INVALID_HANDLE_VALUE ? "opened" : errtext(err));
	{
		HANDLE	cl3 = client_open(name, &err);

		fact("client with every instance taken", "%s",
		    cl3 != INVALID_HANDLE_VALUE ? "opened (?)" : errtext(err));
		if (cl3 != INVALID_HANDLE_VALUE)
			CloseHandle(cl3);
		else if (err != ERROR_PIPE_BUSY)
			fail("a full pipe gave %s, not ERROR_PIPE_BUSY",
			    errtext(err));
	}
	if (cl1 != INVALID_HANDLE_VALUE)
		CloseHandle(cl1);
	if (cl2 != INVALID_HANDLE_VALUE)
		CloseHandle(cl2);
	CloseHandle(a);
	if (c != INVALID_HANDLE_VALUE)
		CloseHandle(c);
	{
		HANDLE	cl4 = client_open(name, &err);

		fact("client after every instance closed", "%s",
		    cl4 != INVALID_HANDLE_VALUE ? "opened (?)" : errtext(err));
		if (cl4 != INVALID_HANDLE_VALUE)
			CloseHandle(cl4);
	}
}

/* Connect, read, write, broken pipe, cancel: all through the port. */
static void
probe_iocp(void)
{
	static char	 big[1024 * 1024], rbig[1024 * 1024];
	wchar_t		 name[128];
	struct op	 o;
	HANDLE		 s, s2, c, c2;
	char		 buf[BUFSZ];
	const char	*how;
	DWORD		 err, got, n;
	double		 t0;
	LONG		 before;
	BOOL		 r;
	int		 got_it;

	op_init(&o);
	new_name(name, 128, "iocp");
	if ((s = mkpipe(name, 1, NULL)) == INVALID_HANDLE_VALUE)
		die("CreateNamedPipe: error %lu", GetLastError());
	associate(s);

	/* ConnectNamedPipe before the client: pending, then a packet. */
	op_reset(&o);
	r = ConnectNamedPipe(s, &o.ov);
	err = r ? 0 : GetLastError();
	t0 = now_us();
	c = client_open(name, &got);
	if (c == INVALID_HANDLE_VALUE)
		die("client open: %s", errtext(got));
	got_it = op_wait(&o, WAIT_MS);
	fact("overlapped ConnectNamedPipe, client later", "returned %s, "
	    "completion %s ok=%d bytes=%lu, %.0f us after the client's "
	    "CreateFile", r ? "TRUE" : errtext(err), got_it ? "taken" :
	    "MISSING", o.ok, o.bytes, now_us() - t0);
	if (r || err != ERROR_IO_PENDING || !got_it || !o.ok)
		fail("overlapped ConnectNamedPipe did not complete through "
		    "the port");

	/* A read with the data already there. */
	if (sync_write(c, "hello", 5) == -1)
		die("client write: error %lu", GetLastError());
	before = packets;
	how = issue(&o, s, 0, buf, sizeof(buf), &err);
	got_it = op_wait(&o, WAIT_MS);
	fact("overlapped ReadFile with data waiting", "returned %s, "
	    "completion %s bytes=%lu (a synchronous success still queues "
	    "its packet: %s)", how, got_it ? "taken" : "MISSING", o.bytes,
	    packets > before ? "yes" : "no");
	if (!got_it || o.bytes != 5)
		fail("read with data waiting");

	/* A read posted first, the data after. */
	how = issue(&o, s, 0, buf, sizeof(buf), &err);
	Sleep(20);
	if (sync_write(c, "abc", 3) == -1)
		die("client write: error %lu", GetLastError());
	got_it = op_wait(&o, WAIT_MS);
	fact("overlapped ReadFile before the data", "returned %s, "
	    "completion %s bytes=%lu", how, got_it ? "taken" : "MISSING",
	    o.bytes);
	if (strcmp(how, "pending") != 0 || !got_it || o.bytes != 3)
		fail("read before data");

	/* A small write. */
	how = issue(&o, s, 1, "world", 5, &err);
	got_it = op_wait(&o, WAIT_MS);
	n = sync_read(c, buf, 5) == 0 ? 5 : 0;
	fact("overlapped WriteFile of 5 bytes", "returned %s, completion %s "
	    "bytes=%lu, client read %lu", how, got_it ? "taken" : "MISSING",
	    o.bytes, n);
	if (!got_it || o.bytes != 5 || n != 5)
		fail("small write");

	/* A write bigger than the buffer waits for the reader. */
	how = issue(&o, s, 1, big, sizeof(big), &err);
	got_it = op_wait(&o, QUIET_MS);
	fact("overlapped WriteFile of 1 MiB, 64 KiB buffer, no reader",
	    "returned %s, completed before any read: %s", how,
	    got_it ? "yes" : "no");
	n = sync_read(c, rbig, sizeof(rbig)) == 0 ? sizeof(rbig) : 0;
	if (!got_it)
		got_it = op_wait(&o, WAIT_MS);
	fact("the same once the client read it", "completion %s bytes=%lu, "
	    "client read %lu", got_it ? "taken" : "MISSING", o.bytes, n);
	if (!got_it || o.bytes != sizeof(big) || n != sizeof(big))
		fail("big write");

	/* A zero-byte read, the runtime's poll for data or hang-up. */
	how = issue(&o, s, 0, buf, 0, &err);
	got_it = op_wait(&o, QUIET_MS);
	if (got_it)
		fact("zero-byte ReadFile, no data", "returned %s, completes at "
		    "once (bytes=%lu ok=%d): it does not wait for data", how,
		    o.bytes, o.ok);
	else {
		if (sync_write(c, "z", 1) == -1)
			die("client write: error %lu", GetLastError());
		got_it = op_wait(&o, QUIET_MS);
		fact("zero-byte ReadFile, no data", "returned %s, pends; "
		    "completes when data arrives: %s%s", how, got_it ? "yes" :
		    "no", got_it ? "" : " (cancelled)");
		if (!got_it) {
			CancelIoEx(s, &o.ov);
			op_wait(&o, WAIT_MS);
		}
		/* Take the byte again. */
		how = issue(&o, s, 0, buf, sizeof(buf), &err);
		op_wait(&o, WAIT_MS);
		fact("zero-byte ReadFile leaves the data", "next read got %lu "
		    "byte(s)", o.bytes);
	}

	/* CancelIoEx with nothing pending. */
	r = CancelIoEx(s, NULL);
	fact("CancelIoEx with nothing pending", "%s", r ? "TRUE (Windows "
	    "says ERROR_NOT_FOUND)" : errtext(GetLastError()));

	/* CancelIoEx of a pending read: an aborted completion. */
	how = issue(&o, s, 0, buf, sizeof(buf), &err);
	Sleep(10);
	r = CancelIoEx(s, &o.ov);
	err = r ? 0 : GetLastError();
	got_it = op_wait(&o, WAIT_MS);
	fact("CancelIoEx of a pending read", "returned %s, completion %s "
	    "ok=%d %s bytes=%lu", r ? "TRUE" : errtext(err), got_it ? "taken" :
	    "MISSING", o.ok, errtext(o.err), o.bytes);
	if (!r || !got_it || o.ok || o.err != ERROR_OPERATION_ABORTED)
		fail("CancelIoEx did not give ERROR_OPERATION_ABORTED");

	/* The client closes under a pending read. */
	how = issue(&o, s, 0, buf, sizeof(buf), &err);
	Sleep(10);
	CloseHandle(c);
	got_it = op_wait(&o, WAIT_MS);
	fact("pending ReadFile, client closes", "completion %s ok=%d %s",
	    got_it ? "taken" : "MISSING", o.ok, errtext(o.err));
	if (!got_it || o.ok || o.err != ERROR_BROKEN_PIPE)
		fail("client close did not give ERROR_BROKEN_PIPE");
	how = issue(&o, s, 0, buf, sizeof(buf), &err);
	fact("ReadFile after the client closed", "returned %s %s", how,
	    errtext(err));
	if (strcmp(how, "pending") == 0) {
		CancelIoEx(s, &o.ov);
		op_wait(&o, WAIT_MS);
	} else if (strcmp(how, "sync") == 0)
		op_wait(&o, WAIT_MS);
	how = issue(&o, s, 1, "x", 1, &err);
	fact("WriteFile after the client closed", "returned %s %s", how,
	    errtext(err));
	if (strcmp(how, "failed") != 0)
		op_wait(&o, WAIT_MS);

	/* Reuse the instance: disconnect, connect again. */
	r = DisconnectNamedPipe(s);
	op_reset(&o);
	if (r && !ConnectNamedPipe(s, &o.ov) &&
	    GetLastError() == ERROR_IO_PENDING) {
		c = client_open(name, &err);
		got_it = op_wait(&o, WAIT_MS);
		fact("instance reused after DisconnectNamedPipe", "%s",
		    got_it && o.ok ? "connected again" : "no");
		if (c != INVALID_HANDLE_VALUE)
			CloseHandle(c);
		DisconnectNamedPipe(s);
	} else
		fact("instance reused after DisconnectNamedPipe", "no (%s)",
		    errtext(GetLastError()));
	CloseHandle(s);

	/* The client comes first: ERROR_PIPE_CONNECTED.  A packet too? */
	new_name(name, 128, "conn");
	if ((s2 = mkpipe(name, 1, NULL)) == INVALID_HANDLE_VALUE)
		die("CreateNamedPipe: error %lu", GetLastError());
	associate(s2);
	c2 = client_open(name, &err);
	if (c2 == INVALID_HANDLE_VALUE)
		die("client open: %s", errtext(err));
	op_reset(&o);
	before = packets;
	r = ConnectNamedPipe(s2, &o.ov);
	err = r ? 0 : GetLastError();
	got_it = op_wait(&o, QUIET_MS);
	fact("overlapped ConnectNamedPipe, client already there", "returned "
	    "%s, completion packet: %s", r ? "TRUE" : errtext(err),
	    got_it ? "queued" : "none");
	if (r || err != ERROR_PIPE_CONNECTED)
		fail("ConnectNamedPipe after the client: not "
		    "ERROR_PIPE_CONNECTED");

	/* Data written, then the server closes: does the client get it? */
	how = issue(&o, s2, 1, big, 1000, &err);
	op_must(&o, "write before close");
	CloseHandle(s2);
	n = 0;
	while (n < 2000 && ReadFile(c2, buf, sizeof(buf), &got, NULL) &&
	    got > 0)
		n += got;
	fact("1000 bytes written, then the server closes its handle",
	    "client read %lu, then %s", n, errtext(GetLastError()));
	if (n != 1000)
		fail("data written before the server's close was lost");
	CloseHandle(c2);

	/* A zero-byte read, then the client closes: does it see the hang-up? */
	new_name(name, 128, "zero");
	if ((s2 = mkpipe(name, 1, NULL)) == INVALID_HANDLE_VALUE)
		die("CreateNamedPipe: error %lu", GetLastError());
	associate(s2);
	c2 = client_open(name, &err);
	how = issue(&o, s2, 0, buf, 0, &err);
	got_it = op_wait(&o, QUIET_MS);
	CloseHandle(c2);
	if (!got_it)
		got_it = op_wait(&o, WAIT_MS);
	fact("zero-byte ReadFile, then the client closes", "returned %s, "
	    "completion %s ok=%d %s", how, got_it ? "taken" : "MISSING", o.ok,
	    errtext(o.err));
	if (!got_it) {
		CancelIoEx(s2, &o.ov);
		op_wait(&o, WAIT_MS);
	}
	CloseHandle(s2);

	/* The same with DisconnectNamedPipe. */
	new_name(name, 128, "disc");
	if ((s2 = mkpipe(name, 1, NULL)) == INVALID_HANDLE_VALUE)
		die("CreateNamedPipe: error %lu", GetLastError());
	associate(s2);
	c2 = client_open(name, &err);
	how = issue(&o, s2, 1, big, 1000, &err);
	op_must(&o, "write before disconnect");
	DisconnectNamedPipe(s2);
	n = 0;
	while (n < 2000 && ReadFile(c2, buf, sizeof(buf), &got, NULL) &&
	    got > 0)
		n += got;
	fact("1000 bytes written, then DisconnectNamedPipe",
	    "client read %lu, then %s", n, errtext(GetLastError()));
	CloseHandle(c2);
	CloseHandle(s2);
	CloseHandle(o.done);
}

/* Run this program again as the client of name. */
static HANDLE
spawn_client(const wchar_t *name, DWORD *pid)
{
	STARTUPINFOW		si;
	PROCESS_INFORMATION	pi;
	wchar_t			self[MAX_PATH], cmd[MAX_PATH + 200];

	if (GetModuleFileNameW(NULL, self, MAX_PATH) == 0)
		die("GetModuleFileName: error %lu", GetLastError());
	swprintf(cmd, MAX_PATH + 200, L"\"%ls\" client %ls", self, name);
	memset(&si, 0, sizeof(si));
	si.cb = sizeof(si);
	if (!CreateProcessW(NULL, cmd, NULL, NULL, FALSE, 0, NULL, NULL, &si,
	    &pi))
		die("CreateProcess: error %lu", GetLastError());
	CloseHandle(pi.hThread);
	*pid = pi.dwProcessId;
	return (pi.hProcess);
}

/* Send the child one command: a letter and a u64. */
static void
order(HANDLE s, struct op *o, char cmd, uint64_t arg)
{
	static char	msg[9];
	DWORD		err;

	msg[0] = cmd;
	memcpy(msg + 1, &arg, 8);
	if (strcmp(issue(o, s, 1, msg, 9, &err), "failed") == 0)
		die("order %c: %s", cmd, errtext(err));
	op_must(o, "order");
	if (!o->ok)
		die("order %c: %s", cmd, errtext(o->err));
}

/* Read exactly n bytes through the port. */
static void
hear(HANDLE s, struct op *o, void *buf, DWORD n)
{
	DWORD	off = 0, err;

	while (off < n) {
		if (strcmp(issue(o, s, 0, (char *)buf + off, n - off, &err),
		    "failed") == 0)
			die("read from the child: %s", errtext(err));
		op_must(o, "read from the child");
		if (!o->ok || o->bytes == 0)
			die("read from the child: %s", errtext(o->err));
		off += o->bytes;
	}
}

static int
cmp_double(const void *a, const void *b)
{
	double	x = *(const double *)a, y = *(const double *)b;

	return (x < y ? -1 : x > y);
}

/* Peer pids, throughput and latency against a child process. */
static void
probe_child(void)
{
	static double	 rtt[PINGS];
	wchar_t		 name[128];
	struct op	 o;
	HANDLE		 s, proc;
	ULONG		 cpid = 0, spid = 0;
	uint32_t	 said[2];
	uint64_t	 ack;
	double		 secs, t0, sum = 0;
	DWORD		 pid, err, code;
	char		 b;
	BOOL		 r;
	int		 i;

	op_init(&o);
	new_name(name, 128, "child");
	if ((s = mkpipe(name, 1, NULL)) == INVALID_HANDLE_VALUE)
		die("CreateNamedPipe: error %lu", GetLastError());
	associate(s);
	op_reset(&o);
	r = ConnectNamedPipe(s, &o.ov);
	err = r ? 0 : GetLastError();
	proc = spawn_client(name, &pid);
	if (err == ERROR_IO_PENDING)
		op_must(&o, "the child's connect");
	else if (err != ERROR_PIPE_CONNECTED)
		die("ConnectNamedPipe: %s", errtext(err));

	r = GetNamedPipeClientProcessId(s, &cpid);
	fact("GetNamedPipeClientProcessId", "%s %lu, the child is %lu: %s",
	    r ? "ok" : errtext(GetLastError()), cpid, pid,
	    r && cpid == pid ? "match" : "MISMATCH");
	if (!r || cpid != pid)
		fail("GetNamedPipeClientProcessId");
	r = GetNamedPipeServerProcessId(s, &spid);
	fact("GetNamedPipeServerProcessId on the server's handle", "%s %lu "
	    "(we are %lu)", r ? "ok" : errtext(GetLastError()), spid,
	    GetCurrentProcessId());
	order(s, &o, 'P', 0);
	hear(s, &o, said, sizeof(said));
	fact("GetNamedPipeServerProcessId in the client", "%lu, we are %lu: "
	    "%s (the child says it is %lu)", (unsigned long)said[1],
	    GetCurrentProcessId(), said[1] == GetCurrentProcessId() ?
	    "match" : "MISMATCH", (unsigned long)said[0]);
	if (said[1] != GetCurrentProcessId())
		fail("GetNamedPipeServerProcessId");

	/* Server to client. */
	order(s, &o, 'S', BULK_BYTES);
	secs = bulk_run(s, 1, BULK_BYTES, &err);
	hear(s, &o, &ack, sizeof(ack));
	if (secs < 0 || ack != BULK_BYTES)
		fail("64 MiB to the client: %s, the client got %llu",
		    errtext(err), (unsigned long long)ack);
	else
		fact("throughput server to client", "%llu MiB in %.3f s, "
		    "%.1f MiB/s (64 KiB overlapped writes, 2 in flight, driven "
		    "by the completion thread)", BULK_BYTES >> 20, secs,
		    (BULK_BYTES >> 20) / secs);

	/* Client to server. */
	order(s, &o, 'W', BULK_BYTES);
	secs = bulk_run(s, 0, BULK_BYTES, &err);
	if (secs < 0)
		fail("64 MiB from the client: %s", errtext(err));
	else
		fact("throughput client to server", "%llu MiB in %.3f s, "
		    "%.1f MiB/s (64 KiB overlapped reads, 2 in flight)",
		    BULK_BYTES >> 20, secs, (BULK_BYTES >> 20) / secs);

	/* Round trips of one byte: write, completion, read, completion. */
	order(s, &o, 'E', PINGS);
	for (i = 0; i < PINGS; i++) {
		b = (char)i;
		t0 = now_us();
		if (strcmp(issue(&o, s, 1, &b, 1, &err), "failed") == 0)
			die("ping: %s", errtext(err));
		op_must(&o, "ping write");
		hear(s, &o, &b, 1);
		rtt[i] = now_us() - t0;
		sum += rtt[i];
	}
	qsort(rtt, PINGS, sizeof(rtt[0]), cmp_double);
	fact("round trip of 1 byte to the child and back", "%d trips: median "
	    "%.0f us, p90 %.0f us, p99 %.0f us, mean %.0f us", PINGS,
	    rtt[PINGS / 2], rtt[PINGS * 9 / 10], rtt[PINGS * 99 / 100],
	    sum / PINGS);

	order(s, &o, 'Q', 0);
	if (WaitForSingleObject(proc, WAIT_MS) != WAIT_OBJECT_0 ||
	    !GetExitCodeProcess(proc, &code) || code != 0)
		fail("the child did not exit 0");
	CloseHandle(proc);
	CloseHandle(s);
	CloseHandle(o.done);
}

/* The child: connect, then obey one-letter commands until Q. */
static int
client_main(const wchar_t *name)
{
	static char	 buf[BUFSZ];
	unsigned char	 cmd[9];
	uint64_t	 arg, n;
	uint32_t	 said[2];
	ULONG		 spid = 0;
	HANDLE		 h;
	DWORD		 got, start = GetTickCount();

	for (;;) {
		h = CreateFileW(name, GENERIC_READ | GENERIC_WRITE, 0, NULL,
		    OPEN_EXISTING, 0, NULL);
		if (h != INVALID_HANDLE_VALUE)
			break;
		if (GetTickCount() - start > 10000 ||
		    GetLastError() != ERROR_PIPE_BUSY)
			die("client: CreateFile: error %lu", GetLastError());
		Sleep(10);
	}
	for (;;) {
		if (sync_read(h, cmd, 9) == -1)
			die("client: read: error %lu", GetLastError());
		memcpy(&arg, cmd + 1, 8);
		switch (cmd[0]) {
		case 'P':
			GetNamedPipeServerProcessId(h, &spid);
			said[0] = GetCurrentProcessId();
			said[1] = spid;
			if (sync_write(h, said, sizeof(said)) == -1)
				die("client: write: error %lu", GetLastError());
			break;
		case 'S':
			for (n = 0; n < arg; n += got)
				if (!ReadFile(h, buf, sizeof(buf), &got, NULL) ||
				    got == 0)
					die("client: sink: error %lu",
					    GetLastError());
			if (sync_write(h, &n, sizeof(n)) == -1)
				die("client: write: error %lu", GetLastError());
			break;
		case 'W':
			memset(buf, 'w', sizeof(buf));
			for (n = 0; n < arg; n += got) {
				got = arg - n < sizeof(buf) ? (DWORD)(arg - n) :
				    sizeof(buf);
				if (sync_write(h, buf, got) == -1)
					die("client: source: error %lu",
					    GetLastError());
			}
			break;
		case 'E':
			for (n = 0; n < arg; n++)
				if (sync_read(h, buf, 1) == -1 ||
				    sync_write(h, buf, 1) == -1)
					die("client: echo: error %lu",
					    GetLastError());
			break;
		case 'Q':
			CloseHandle(h);
			return (0);
		default:
			die("client: command %c", cmd[0]);
		}
	}
}

int
main(void)
{
	const char	*(*wine_version)(void);
	LARGE_INTEGER	 f;
	wchar_t		**argv;
	int		 argc;

	_setmode(_fileno(stdout), _O_BINARY);	/* LF, not CRLF */
	QueryPerformanceFrequency(&f);
	qpc_freq = (double)f.QuadPart;
	argv = CommandLineToArgvW(GetCommandLineW(), &argc);
	if (argv != NULL && argc == 3 && wcscmp(argv[1], L"client") == 0)
		return (client_main(argv[2]));

	wine_version = (const char *(*)(void))(void (*)(void))GetProcAddress(
	    GetModuleHandleW(L"ntdll.dll"), "wine_get_version");
	fact("wine", "%s", wine_version != NULL ? wine_version() :
	    "not wine");
	if ((port = CreateIoCompletionPort(INVALID_HANDLE_VALUE, NULL, 0,
	    1)) == NULL)
		die("CreateIoCompletionPort: error %lu", GetLastError());
	if ((cthread = CreateThread(NULL, 0, completion_main, NULL, 0,
	    NULL)) == NULL)
		die("CreateThread: error %lu", GetLastError());

	probe_instances();
	probe_security();
	probe_iocp();
	probe_child();

	PostQueuedCompletionStatus(port, 0, KEY_QUIT, NULL);
	WaitForSingleObject(cthread, WAIT_MS);
	fact("completion packets taken by the one thread", "%ld",
	    (long)packets);
	if (failures != 0) {
		printf("pipeprobe: %d check(s) failed\n", failures);
		return (1);
	}
	printf("pipeprobe: ok\n");
	return (0);
}
