/* SPDX-License-Identifier: ISC */
/*
 * pipeclient.exe: a small Windows peer of the .NET diagnostic IPC protocol on
 * named pipes, for trying the real win-x64 runtime under wine before
 * dsroute.exe exists.  Built static with mingw-w64 (tests/windows/setup.sh).
 *
 *	pipeclient.exe info PIPE
 *	    Connect to PIPE, send ProcessInfo, print
 *	    "processinfo pid=N cookie=HEX cmdline=... os=... arch=..." and
 *	    "timing connect-ms=F roundtrip-ms=F busy-waits=N absent-waits=N"
 *	    (how often ERROR_PIPE_BUSY and ERROR_FILE_NOT_FOUND were retried).
 *	pipeclient.exe relay PORT PIPE
 *	    Listen on 127.0.0.1:PORT (0: any free port) and join each accepted
 *	    TCP connection to a new connection to PIPE, one thread each way.
 *	    Prints "relay port=N pipe=NAME" once listening, and one
 *	    "relay conn=N ..." line (bytes, seconds, MiB/s) per connection.
 *	pipeclient.exe rlisten PIPE PORT
 *	    The other way round: serve PIPE (the runtime dials it with
 *	    DOTNET_DiagnosticPorts=NAME) and join each pipe connection to a new
 *	    TCP connection to 127.0.0.1:PORT.
 *	pipeclient.exe listen PIPE CMD...
 *	    Serve PIPE; for each CMD (processinfo or resume) accept one runtime
 *	    connection, read its ADVR_V1 advertise ("advertise pid=N
 *	    cookie=HEX"), send CMD on it and print the reply.
 *	pipeclient.exe source PIPE MIB
 *	    Serve PIPE; write MIB MiB to the first client, then exit (a bulk
 *	    stream to measure a relay with, no runtime needed).
 *	pipeclient.exe list
 *	    List \\.\pipe\* with FindFirstFile, as tools on Windows find
 *	    runtimes; "list: error N" where that fails (it does under wine 8).
 *	pipeclient.exe sink PIPE
 *	    Connect to PIPE and read it to its end: "sink bytes=N seconds=F
 *	    mib-per-s=F" (the pipe alone, to compare a relay with).
 *
 * PIPE is a bare name (dotnet-diagnostic-32) or a full \\.\pipe\ path.
 * Connecting retries for up to 10 s (PIPECLIENT_TIMEOUT_MS overrides) while the
 * pipe does not exist yet (every 50 ms) or all its instances are busy
 * (ERROR_PIPE_BUSY: every 10 ms, or with WaitNamedPipe(1 s) when
 * PIPECLIENT_WAITNAMEDPIPE=1; under wine 8 that wedges the runtime's
 * diagnostic server when several clients connect at once: README).  Output lines end in LF, not CRLF: stdout is binary.
 * Exit codes: 0 ok, 1 failure (a "pipeclient: ..." line on stderr), 2 usage.
 */

#define __USE_MINGW_ANSI_STDIO 1	/* %zu and %lld in printf */

#include <winsock2.h>
#include <ws2tcpip.h>
#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define IPC_HEADER	20
#define ADVERTISE_LEN	34
#define BUFSZ		(64 * 1024)

static const unsigned char ipc_magic[14] = "DOTNET_IPC_V1";	/* and NUL */
static const unsigned char advr_magic[8] = "ADVR_V1";		/* and NUL */

static wchar_t	 pipe_path[512];
static char	 pipe_name_utf8[512];
static DWORD	 connect_timeout_ms = 10000;
static LONG	 conn_seq;
static int	 busy_waits, absent_waits;
static int	 use_waitnamedpipe;
static double	 qpc_freq;

static void __attribute__((noreturn, format(gnu_printf, 1, 2)))
die(const char *fmt, ...)
{
	va_list	ap;

	fflush(stdout);
	fputs("pipeclient: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	exit(1);
}

/* Milliseconds since some fixed point. */
static double
now_ms(void)
{
	LARGE_INTEGER	t;

	QueryPerformanceCounter(&t);
	return ((double)t.QuadPart * 1000.0 / qpc_freq);
}

/* Set pipe_path from a bare name or a \\.\pipe\ path. */
static void
set_pipe(const char *name)
{
	char	full[512];

	if (strncmp(name, "\\\\", 2) == 0)
		snprintf(full, sizeof(full), "%s", name);
	else
		snprintf(full, sizeof(full), "\\\\.\\pipe\\%s", name);
	snprintf(pipe_name_utf8, sizeof(pipe_name_utf8), "%s", full);
	if (MultiByteToWideChar(CP_UTF8, 0, full, -1, pipe_path,
	    (int)(sizeof(pipe_path) / sizeof(pipe_path[0]))) == 0)
		die("bad pipe name %s", name);
}

/* Open the pipe as a client, retrying while it is absent or busy. */
static HANDLE
pipe_connect(void)
{
	HANDLE	h;
	DWORD	err, start = GetTickCount();

	for (;;) {
		h = CreateFileW(pipe_path, GENERIC_READ | GENERIC_WRITE, 0,
		    NULL, OPEN_EXISTING, 0, NULL);
		if (h != INVALID_HANDLE_VALUE)
			return (h);
		err = GetLastError();
		if (GetTickCount() - start > connect_timeout_ms)
			break;
		if (err == ERROR_PIPE_BUSY) {
			/*
			 * Every instance is taken.  Under wine 8, waiting
			 * with WaitNamedPipe while the runtime makes its next
			 * instance wedges its diagnostic server (README), so
			 * the default is a short sleep.
			 */
			busy_waits++;
			if (use_waitnamedpipe)
				WaitNamedPipeW(pipe_path, 1000);
			else
				Sleep(10);
		} else if (err == ERROR_FILE_NOT_FOUND) {
			absent_waits++;
			Sleep(50);	/* not created yet */
		} else
			break;
	}
	SetLastError(err);
	return (INVALID_HANDLE_VALUE);
}

/* Create one server instance of the pipe; the first one must be ours. */
static HANDLE
pipe_create(int first)
{
	HANDLE	h;

	h = CreateNamedPipeW(pipe_path, PIPE_ACCESS_DUPLEX |
	    (first ? FILE_FLAG_FIRST_PIPE_INSTANCE : 0),
	    PIPE_TYPE_BYTE | PIPE_READMODE_BYTE | PIPE_WAIT |
	    PIPE_REJECT_REMOTE_CLIENTS, PIPE_UNLIMITED_INSTANCES, BUFSZ, BUFSZ,
	    0, NULL);
	if (h == INVALID_HANDLE_VALUE)
		die("CreateNamedPipe %s: error %lu", pipe_name_utf8,
		    GetLastError());
	return (h);
}

/* Wait for a client on a server instance. */
static void
pipe_accept(HANDLE h)
{
	if (!ConnectNamedPipe(h, NULL) &&
	    GetLastError() != ERROR_PIPE_CONNECTED)
		die("ConnectNamedPipe %s: error %lu", pipe_name_utf8,
		    GetLastError());
}

/* Read exactly n bytes; 0 on success, -1 on EOF or error. */
static int
read_full(HANDLE h, void *buf, DWORD n)
{
	DWORD	got, off = 0;

	while (off < n) {
		if (!ReadFile(h, (char *)buf + off, n - off, &got, NULL) ||
		    got == 0)
			return (-1);
		off += got;
	}
	return (0);
}

static int
write_full(HANDLE h, const void *buf, DWORD n)
{
	DWORD	put, off = 0;

	while (off < n) {
		if (!WriteFile(h, (const char *)buf + off, n - off, &put, NULL))
			return (-1);
		off += put;
	}
	return (0);
}

static uint16_t
le16(const unsigned char *p)
{
	return ((uint16_t)(p[0] | p[1] << 8));
}

static uint32_t
le32(const unsigned char *p)
{
	return ((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 |
	    (uint32_t)p[3] << 24);
}

static uint64_t
le64(const unsigned char *p)
{
	return ((uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32);
}

static void
print_hex(const unsigned char *p, size_t n)
{
	while (n-- > 0)
		printf("%02x", *p++);
}

/*
 * Print an IPC string at *off in p[0..len) as UTF-8 and move past it;
 * -1 when it runs past the end.
 */
static int
print_ipc_string(const unsigned char *p, size_t len, size_t *off)
{
	uint32_t	 count;
	char		*out;
	int		 n;

	if (*off + 4 > len)
		return (-1);
	count = le32(p + *off);
	*off += 4;
	if (count == 0)
		return (0);
	if (count > (len - *off) / 2)
		return (-1);
	/* count includes the terminating NUL. */
	n = WideCharToMultiByte(CP_UTF8, 0, (const wchar_t *)(p + *off),
	    (int)count - 1, NULL, 0, NULL, NULL);
	if ((out = malloc((size_t)n + 1)) == NULL)
		die("out of memory");
	WideCharToMultiByte(CP_UTF8, 0, (const wchar_t *)(p + *off),
	    (int)count - 1, out, n, NULL, NULL);
	out[n] = '\0';
	fputs(out, stdout);
	free(out);
	*off += (size_t)count * 2;
	return (0);
}

/* Send a payload-less command (set 0x04) and read the whole reply. */
static unsigned char *
command(HANDLE h, unsigned char id, size_t *len)
{
	unsigned char	 req[IPC_HEADER], hdr[IPC_HEADER], *reply;
	size_t		 size;

	memcpy(req, ipc_magic, sizeof(ipc_magic));
	req[14] = IPC_HEADER;
	req[15] = 0;
	req[16] = 0x04;		/* Process */
	req[17] = id;
	req[18] = req[19] = 0;
	if (write_full(h, req, sizeof(req)) == -1)
		die("write to %s: error %lu", pipe_name_utf8, GetLastError());
	if (read_full(h, hdr, sizeof(hdr)) == -1)
		die("no reply header from %s (error %lu)", pipe_name_utf8,
		    GetLastError());
	if (memcmp(hdr, ipc_magic, sizeof(ipc_magic)) != 0)
		die("reply with bad magic");
	size = le16(hdr + 14);
	if (size < IPC_HEADER)
		die("reply size %zu", size);
	if ((reply = malloc(size)) == NULL)
		die("out of memory");
	memcpy(reply, hdr, IPC_HEADER);
	if (read_full(h, reply + IPC_HEADER, (DWORD)(size - IPC_HEADER)) == -1)
		die("short reply from %s", pipe_name_utf8);
	*len = size;
	return (reply);
}

/* Print a reply: ProcessInfo fields, or a status word. */
static void
print_reply(unsigned char id, const unsigned char *r, size_t len)
{
	size_t	off = IPC_HEADER;

	if (r[16] != 0xff)
		die("reply command set 0x%02x", r[16]);
	if (r[17] == 0xff) {
		printf("error hresult=0x%08lx\n", len >= 24 ?
		    (unsigned long)le32(r + 20) : 0UL);
		return;
	}
	if (id != 0x00) {
		printf("ok hresult=0x%08lx\n", len >= 24 ?
		    (unsigned long)le32(r + 20) : 0UL);
		return;
	}
	if (len < IPC_HEADER + 8 + 16)
		die("ProcessInfo reply of %zu bytes", len);
	printf("processinfo pid=%llu cookie=",
	    (unsigned long long)le64(r + off));
	print_hex(r + off + 8, 16);
	off += 24;
	printf(" cmdline=");
	if (print_ipc_string(r, len, &off) == -1)
		die("bad cmdline string");
	printf(" os=");
	if (print_ipc_string(r, len, &off) == -1)
		die("bad os string");
	printf(" arch=");
	if (print_ipc_string(r, len, &off) == -1)
		die("bad arch string");
	printf("\n");
}

/* info PIPE */
static int
do_info(void)
{
	HANDLE		 h;
	unsigned char	*r;
	size_t		 len;
	double		 t0, t1, t2;

	t0 = now_ms();
	if ((h = pipe_connect()) == INVALID_HANDLE_VALUE)
		die("cannot connect to %s: error %lu", pipe_name_utf8,
		    GetLastError());
	t1 = now_ms();
	r = command(h, 0x00, &len);
	t2 = now_ms();
	print_reply(0x00, r, len);
	printf("timing connect-ms=%.3f roundtrip-ms=%.3f busy-waits=%d "
	    "absent-waits=%d\n", t1 - t0, t2 - t1, busy_waits, absent_waits);
	free(r);
	CloseHandle(h);
	return (0);
}

/* listen PIPE CMD...: one runtime connection (advertise, command) each. */
static int
do_listen(int argc, char **argv)
{
	HANDLE		 h;
	unsigned char	 adv[ADVERTISE_LEN], *r, id;
	size_t		 len;
	int		 i;

	for (i = 0; i < argc; i++) {
		if (strcmp(argv[i], "processinfo") == 0)
			id = 0x00;
		else if (strcmp(argv[i], "resume") == 0)
			id = 0x01;
		else
			die("unknown command %s", argv[i]);
		h = pipe_create(i == 0);
		if (i == 0) {
			printf("listening pipe=%s\n", pipe_name_utf8);
			fflush(stdout);
		}
		pipe_accept(h);
		if (read_full(h, adv, sizeof(adv)) == -1)
			die("connection closed before a whole advertise");
		if (memcmp(adv, advr_magic, sizeof(advr_magic)) != 0) {
			printf("bad advertise ");
			print_hex(adv, sizeof(adv));
			printf("\n");
			return (1);
		}
		printf("advertise pid=%llu cookie=",
		    (unsigned long long)le64(adv + 24));
		print_hex(adv + 8, 16);
		printf("\n");
		r = command(h, id, &len);
		printf("%s: ", argv[i]);
		print_reply(id, r, len);
		fflush(stdout);
		free(r);
		DisconnectNamedPipe(h);
		CloseHandle(h);
	}
	return (0);
}

/* source PIPE MIB: a bulk stream for measuring a relay. */
static int
do_source(long mib)
{
	HANDLE	 h;
	char	*buf;
	long	 i;
	double	 t0, t1;

	if ((buf = malloc(BUFSZ)) == NULL)
		die("out of memory");
	for (i = 0; i < BUFSZ; i++)
		buf[i] = (char)(i * 7);
	h = pipe_create(1);
	printf("source pipe=%s mib=%ld\n", pipe_name_utf8, mib);
	fflush(stdout);
	pipe_accept(h);
	t0 = now_ms();
	for (i = 0; i < mib * (1024 * 1024 / BUFSZ); i++)
		if (write_full(h, buf, BUFSZ) == -1)
			die("write: error %lu", GetLastError());
	FlushFileBuffers(h);
	t1 = now_ms();
	printf("source wrote=%ld MiB in %.3f s (%.1f MiB/s)\n", mib,
	    (t1 - t0) / 1000, mib / ((t1 - t0) / 1000));
	DisconnectNamedPipe(h);
	CloseHandle(h);
	return (0);
}

/* list: the pipes FindFirstFile sees. */
static int
do_list(void)
{
	WIN32_FIND_DATAW	 fd;
	HANDLE			 h;
	char			 name[MAX_PATH * 3];
	int			 n = 0;

	h = FindFirstFileW(L"\\\\.\\pipe\\*", &fd);
	if (h == INVALID_HANDLE_VALUE) {
		printf("list: error %lu\n", GetLastError());
		return (1);
	}
	do {
		WideCharToMultiByte(CP_UTF8, 0, fd.cFileName, -1, name,
		    (int)sizeof(name), NULL, NULL);
		printf("pipe %s\n", name);
		n++;
	} while (FindNextFileW(h, &fd));
	FindClose(h);
	printf("list: %d pipes\n", n);
	return (0);
}

/* sink PIPE: read the pipe to its end and time it. */
static int
do_sink(void)
{
	HANDLE		 h;
	char		*buf;
	DWORD		 got;
	long long	 total = 0;
	double		 t0, secs;

	if ((buf = malloc(BUFSZ)) == NULL)
		die("out of memory");
	if ((h = pipe_connect()) == INVALID_HANDLE_VALUE)
		die("cannot connect to %s: error %lu", pipe_name_utf8,
		    GetLastError());
	t0 = now_ms();
	while (ReadFile(h, buf, BUFSZ, &got, NULL) && got > 0)
		total += got;
	secs = (now_ms() - t0) / 1000;
	printf("sink bytes=%lld seconds=%.3f mib-per-s=%.1f\n", total, secs,
	    secs > 0 ? total / 1048576.0 / secs : 0.0);
	CloseHandle(h);
	free(buf);
	return (0);
}

/* One relayed connection: a pipe and a socket, copied both ways. */
struct conn {
	LONG		 id;
	HANDLE		 pipe;
	SOCKET		 sock;
	long long	 to_pipe, to_sock;
	double		 start;
};

/* Pipe to socket; at the pipe's end, half-close the socket. */
static DWORD WINAPI
pipe_to_sock(LPVOID arg)
{
	struct conn	*c = arg;
	char		*buf;
	DWORD		 got;
	int		 off, n;

	if ((buf = malloc(BUFSZ)) == NULL)
		return (1);
	while (ReadFile(c->pipe, buf, BUFSZ, &got, NULL) && got > 0) {
		for (off = 0; off < (int)got; off += n)
			if ((n = send(c->sock, buf + off, (int)got - off,
			    0)) <= 0)
				goto out;
		c->to_sock += got;
	}
out:
	shutdown(c->sock, SD_SEND);
	free(buf);
	return (0);
}

/*
 * Socket to pipe.  A pipe has no half-close, so the TCP peer's EOF ends only
 * this direction; the runtime closes its end after each reply or stream.
 */
static DWORD WINAPI
sock_to_pipe(LPVOID arg)
{
	struct conn	*c = arg;
	char		*buf;
	int		 n;

	if ((buf = malloc(BUFSZ)) == NULL)
		return (1);
	while ((n = recv(c->sock, buf, BUFSZ, 0)) > 0) {
		if (write_full(c->pipe, buf, (DWORD)n) == -1)
			break;
		c->to_pipe += n;
	}
	free(buf);
	return (0);
}

/* Copy both ways until both directions end, then report and close. */
static DWORD WINAPI
conn_run(LPVOID arg)
{
	struct conn	*c = arg;
	HANDLE		 t;
	double		 secs;

	if ((t = CreateThread(NULL, 0, pipe_to_sock, c, 0, NULL)) == NULL) {
		fprintf(stderr, "pipeclient: CreateThread: error %lu\n",
		    GetLastError());
		goto out;
	}
	sock_to_pipe(c);
	WaitForSingleObject(t, INFINITE);
	CloseHandle(t);
	secs = (now_ms() - c->start) / 1000;
	printf("relay conn=%ld to-pipe=%lld to-tcp=%lld seconds=%.3f "
	    "to-tcp-mib-per-s=%.1f\n", c->id, c->to_pipe, c->to_sock, secs,
	    secs > 0 ? c->to_sock / 1048576.0 / secs : 0.0);
	fflush(stdout);
out:
	CloseHandle(c->pipe);
	closesocket(c->sock);
	free(c);
	return (0);
}

static void
start_conn(HANDLE pipe, SOCKET sock)
{
	struct conn	*c;
	HANDLE		 t;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		die("out of memory");
	c->id = InterlockedIncrement(&conn_seq);
	c->pipe = pipe;
	c->sock = sock;
	c->start = now_ms();
	if ((t = CreateThread(NULL, 0, conn_run, c, 0, NULL)) == NULL)
		die("CreateThread: error %lu", GetLastError());
	CloseHandle(t);
}

static void
winsock_init(void)
{
	WSADATA	wsa;

	if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0)
		die("WSAStartup failed");
}

/* relay PORT PIPE: TCP listener on loopback, each connection to the pipe. */
static int
do_relay(int port)
{
	struct sockaddr_in	 sin;
	int			 slen = sizeof(sin), one = 1;
	SOCKET			 ls, s;
	HANDLE			 p;

	winsock_init();
	if ((ls = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)) == INVALID_SOCKET)
		die("socket: %d", WSAGetLastError());
	setsockopt(ls, SOL_SOCKET, SO_EXCLUSIVEADDRUSE, (char *)&one,
	    sizeof(one));
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((u_short)port);
	if (bind(ls, (struct sockaddr *)&sin, sizeof(sin)) == SOCKET_ERROR ||
	    listen(ls, 64) == SOCKET_ERROR ||
	    getsockname(ls, (struct sockaddr *)&sin, &slen) == SOCKET_ERROR)
		die("listen on 127.0.0.1:%d: %d", port, WSAGetLastError());
	printf("relay port=%u pipe=%s\n", ntohs(sin.sin_port), pipe_name_utf8);
	fflush(stdout);
	for (;;) {
		if ((s = accept(ls, NULL, NULL)) == INVALID_SOCKET)
			die("accept: %d", WSAGetLastError());
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, (char *)&one,
		    sizeof(one));
		if ((p = pipe_connect()) == INVALID_HANDLE_VALUE) {
			fprintf(stderr, "pipeclient: cannot connect to %s: "
			    "error %lu\n", pipe_name_utf8, GetLastError());
			closesocket(s);
			continue;
		}
		start_conn(p, s);
	}
}

/* rlisten PIPE PORT: serve the pipe, each connection to 127.0.0.1:PORT. */
static int
do_rlisten(int port)
{
	struct sockaddr_in	 sin;
	int			 first = 1, one = 1;
	SOCKET			 s;
	HANDLE			 p;

	winsock_init();
	for (;;) {
		p = pipe_create(first);
		if (first) {
			printf("rlisten pipe=%s port=%d\n", pipe_name_utf8,
			    port);
			fflush(stdout);
		}
		first = 0;
		pipe_accept(p);
		if ((s = socket(AF_INET, SOCK_STREAM, IPPROTO_TCP)) ==
		    INVALID_SOCKET)
			die("socket: %d", WSAGetLastError());
		memset(&sin, 0, sizeof(sin));
		sin.sin_family = AF_INET;
		sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		sin.sin_port = htons((u_short)port);
		if (connect(s, (struct sockaddr *)&sin, sizeof(sin)) ==
		    SOCKET_ERROR) {
			fprintf(stderr, "pipeclient: connect 127.0.0.1:%d: "
			    "%d\n", port, WSAGetLastError());
			closesocket(s);
			DisconnectNamedPipe(p);
			CloseHandle(p);
			continue;
		}
		setsockopt(s, IPPROTO_TCP, TCP_NODELAY, (char *)&one,
		    sizeof(one));
		start_conn(p, s);
	}
}

static void __attribute__((noreturn))
usage(void)
{
	fprintf(stderr,
	    "usage: pipeclient.exe info PIPE\n"
	    "       pipeclient.exe relay PORT PIPE\n"
	    "       pipeclient.exe rlisten PIPE PORT\n"
	    "       pipeclient.exe listen PIPE processinfo|resume...\n"
	    "       pipeclient.exe source PIPE MIB\n"
	    "       pipeclient.exe sink PIPE\n"
	    "       pipeclient.exe list\n");
	exit(2);
}

int
main(int argc, char **argv)
{
	LARGE_INTEGER	 f;
	const char	*e;

	_setmode(_fileno(stdout), _O_BINARY);	/* LF, not CRLF */
	QueryPerformanceFrequency(&f);
	qpc_freq = (double)f.QuadPart;
	if ((e = getenv("PIPECLIENT_TIMEOUT_MS")) != NULL)
		connect_timeout_ms = (DWORD)strtoul(e, NULL, 10);
	if ((e = getenv("PIPECLIENT_WAITNAMEDPIPE")) != NULL && *e == '1')
		use_waitnamedpipe = 1;

	if (argc == 3 && strcmp(argv[1], "info") == 0) {
		set_pipe(argv[2]);
		return (do_info());
	}
	if (argc == 4 && strcmp(argv[1], "relay") == 0) {
		set_pipe(argv[3]);
		return (do_relay(atoi(argv[2])));
	}
	if (argc == 4 && strcmp(argv[1], "rlisten") == 0) {
		set_pipe(argv[2]);
		return (do_rlisten(atoi(argv[3])));
	}
	if (argc >= 4 && strcmp(argv[1], "listen") == 0) {
		set_pipe(argv[2]);
		return (do_listen(argc - 3, argv + 3));
	}
	if (argc == 4 && strcmp(argv[1], "source") == 0) {
		set_pipe(argv[2]);
		return (do_source(atol(argv[3])));
	}
	if (argc == 2 && strcmp(argv[1], "list") == 0)
		return (do_list());
	if (argc == 3 && strcmp(argv[1], "sink") == 0) {
		set_pipe(argv[2]);
		return (do_sink());
	}
	usage();
}
