/* SPDX-License-Identifier: ISC */

/*
 * Windows: what the front ends (dsrouter.c, preset.c, ps.c) ask of the
 * platform, the twins of the functions at the end of posix.c.  Kept
 * apart from win32.c until the two are merged.
 *
 * What dotnet-dsrouter does on Windows, and so dsroute.exe: its IPC
 * side is a named pipe, taken by its bare name or as \\.\pipe\NAME
 * (IpcWindowsNamedPipeServerTransport drops that prefix), and its
 * default IPC server is the pipe dotnet-diagnostic-dsrouter-PID, with no
 * key, which is the name tools look for with -p PID before the runtime's
 * own dotnet-diagnostic-PID.  adb and iproxy are found as on Linux: in
 * the Android SDK's platform-tools, or in PATH, as adb.exe and
 * iproxy.exe.
 *
 * Signals: the C runtime has SIGINT and SIGTERM, and no SIGQUIT or
 * SIGTTIN.  A console sends control events instead (Ctrl-C, Ctrl-Break,
 * close, logoff, shutdown), which platform_init() turns into the
 * daemon's stop.  .NET's PosixSignalRegistration, which dotnet-dsrouter's
 * --block-signals uses, takes Ctrl-C for SIGINT, Ctrl-Break for SIGQUIT
 * and a shutdown for SIGTERM.  Each function below says what it makes of
 * the POSIX behaviour it stands for.
 */

#include "config.h"

#include <windows.h>
#include <tlhelp32.h>

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "platform/platform.h"

/* The namespace of local pipes, as a full pipe name starts. */
static const char	 pipe_root[] = "\\\\.\\pipe\\";
#define PIPE_ROOT_LEN	(sizeof(pipe_root) - 1)

/*
 * The name the program was run by, without its directory and its .exe,
 * in lower case: Windows finds DOTNET-DSROUTER.EXE as dotnet-dsrouter.
 */
void
platform_program_name(const char *argv0, char *buf, size_t len)
{
	const char	*p, *base = argv0;
	size_t		 n, i;

	if (len == 0)
		return;
	for (p = argv0; *p != '\0'; p++) {
		if (*p == '\\' || *p == '/' || *p == ':')
			base = p + 1;
	}
	n = strlen(base);
	if (n >= 4 && _stricmp(base + n - 4, ".exe") == 0)
		n -= 4;
	if (n >= len)
		n = len - 1;
	for (i = 0; i < n; i++)
		buf[i] = (char)tolower((unsigned char)base[i]);
	buf[n] = '\0';
}

/*
 * The local endpoint of a diagnostic IPC name as dotnet-dsrouter takes
 * it on Windows: a named pipe, pipe:NAME.  A full \\.\pipe\NAME loses
 * its prefix, as dotnet-dsrouter's IPC server drops it; the bare name
 * is what a tool takes with --diagnostic-port (it takes both).  For an
 * IPC client (-ipcc) dotnet-dsrouter passes the name to the pipe client
 * as it is, where a full path cannot work: here it names the same pipe
 * as the bare name.  Return the name within buf.
 */
const char *
platform_ipc_spec(const char *name, char *buf, size_t len)
{
	if (_strnicmp(name, pipe_root, PIPE_ROOT_LEN) == 0)
		name += PIPE_ROOT_LEN;
	snprintf(buf, len, "pipe:%s", name);
	return (buf + 5);
}

/*
 * dotnet-dsrouter's default IPC server on Windows, the pipe
 * dotnet-diagnostic-dsrouter-PID, and the runtime-style
 * dotnet-diagnostic-PID next to it (what `dotnet-trace ps` lists).
 * Tools find them by the pid alone, so they carry no key: return 0.
 */
int
platform_ipc_default_names(long pid, unsigned long long key, char *path,
    size_t len, char *sibling, size_t slen)
{
	(void)key;
	snprintf(path, len, "dotnet-diagnostic-dsrouter-%ld", pid);
	snprintf(sibling, slen, "dotnet-diagnostic-%ld", pid);
	return (0);
}

/* The default IPC server, as the usage gives it. */
const char *
platform_ipc_default_help(void)
{
	return ("dotnet-diagnostic-dsrouter-PID");
}

/*
 * What is at a local IPC name (bare, or \\.\pipe\NAME): 1 when a pipe
 * of that name is served, -1 when none is (or it cannot be told).  There
 * is nothing else a pipe name could be, so never 0.  WaitNamedPipe asks
 * without connecting: the server sees no client come and go.
 */
int
platform_ipc_stat(const char *name)
{
	char	 full[PIPE_ROOT_LEN + 260];
	int	 n;

	if (_strnicmp(name, pipe_root, PIPE_ROOT_LEN) == 0)
		n = snprintf(full, sizeof(full), "%s", name);
	else
		n = snprintf(full, sizeof(full), "%s%s", pipe_root, name);
	if (n < 0 || (size_t)n >= sizeof(full))
		return (-1);
	if (WaitNamedPipeA(full, NMPWAIT_NOWAIT))
		return (1);
	switch (GetLastError()) {
	case ERROR_SEM_TIMEOUT:		/* there, every instance busy */
	case ERROR_PIPE_BUSY:
		return (1);
	default:			/* ERROR_FILE_NOT_FOUND */
		return (-1);
	}
}

/* Ctrl-Break goes no further: --block-signals SIGQUIT. */
static BOOL WINAPI
break_blocked(DWORD type)
{
	return (type == CTRL_BREAK_EVENT);
}

/*
 * dotnet-dsrouter's --block-signals on Windows, as .NET maps the names:
 *
 * SIGINT is Ctrl-C.  The process ignores it, and so do the programs it
 * runs, as SetConsoleCtrlHandler(NULL, TRUE) makes it: no handler sees
 * it then, platform_init()'s included.
 *
 * SIGQUIT is Ctrl-Break: a handler that takes it and does nothing.
 * Handlers run last added first, and this one comes after
 * platform_init()'s, so the daemon never sees Ctrl-Break.
 *
 * SIGTERM is accepted and changes nothing.  What stands for it (a
 * shutdown, a closed console, TerminateProcess) ends the process
 * whatever a handler does, and the daemon had better use the time it is
 * given to drain.
 *
 * dotnet-trace passes "SIGINT;SIGQUIT" to the router it starts.  Either
 * call fails only without a console, where there is nothing to ignore,
 * so a failure is not one.  -1 with EINVAL for any other name.
 */
int
platform_block_signal(const char *name)
{
	if (strcmp(name, "SIGINT") == 0)
		(void)SetConsoleCtrlHandler(NULL, TRUE);
	else if (strcmp(name, "SIGQUIT") == 0)
		(void)SetConsoleCtrlHandler(break_blocked, TRUE);
	else if (strcmp(name, "SIGTERM") != 0) {
		errno = EINVAL;
		return (-1);
	}
	return (0);
}

/*
 * No signal asks a dotnet-dsrouter to quit on Windows: the C runtime has
 * no SIGQUIT, so there is none to watch.  Ctrl-Break, which .NET maps to
 * SIGQUIT and on which dotnet-dsrouter quits, is a console event that
 * platform_init()'s handler already makes the daemon's stop.
 */
int
platform_quit_signal(void)
{
	return (-1);
}

/*
 * Whether process pid runs: 1, with *hp a handle to ask it more (NULL
 * when it exists but is not ours to open), or 0.  A process that has
 * ended is gone though a handle may keep its object: its pid may be
 * given to another process as soon as the last handle closes.
 */
static int
process_open(DWORD pid, HANDLE *hp)
{
	HANDLE	 h;
	DWORD	 code;
	int	 alive;

	*hp = NULL;
	if ((h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION | SYNCHRONIZE,
	    FALSE, pid)) != NULL)
		alive = WaitForSingleObject(h, 0) == WAIT_TIMEOUT;
	else if (GetLastError() != ERROR_ACCESS_DENIED)
		return (0);		/* ERROR_INVALID_PARAMETER: no such pid */
	else if ((h = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, FALSE,
	    pid)) == NULL)
		return (GetLastError() == ERROR_ACCESS_DENIED);
	else
		alive = GetExitCodeProcess(h, &code) && code == STILL_ACTIVE;
	if (!alive) {
		CloseHandle(h);
		return (0);
	}
	*hp = h;
	return (1);
}

/*
 * Our parent's pid, from a snapshot of the processes.  Windows never
 * changes it when the parent ends, and may give the pid to a new
 * process, so once the parent that started us is gone (ended, or its
 * pid now a process younger than us) the answer is 0, which is no
 * parent's pid: that is what getppid() changing means on POSIX.  -1 if
 * it cannot be told.
 */
pid_t
platform_parent_pid(void)
{
	PROCESSENTRY32	 pe;
	FILETIME	 theirs, ours, t1, t2, t3;
	HANDLE		 snap, h;
	DWORD		 self = GetCurrentProcessId(), ppid = 0;
	int		 found = 0, younger;

	if ((snap = CreateToolhelp32Snapshot(TH32CS_SNAPPROCESS, 0)) ==
	    INVALID_HANDLE_VALUE)
		return (-1);
	pe.dwSize = sizeof(pe);
	if (Process32First(snap, &pe)) {
		do {
			if (pe.th32ProcessID == self) {
				ppid = pe.th32ParentProcessID;
				found = 1;
				break;
			}
		} while (Process32Next(snap, &pe));
	}
	CloseHandle(snap);
	if (!found)
		return (-1);
	if (!process_open(ppid, &h))
		return (0);
	if (h == NULL)
		return ((pid_t)ppid);	/* there; its age cannot be read */
	younger = GetProcessTimes(h, &theirs, &t1, &t2, &t3) &&
	    GetProcessTimes(GetCurrentProcess(), &ours, &t1, &t2, &t3) &&
	    CompareFileTime(&theirs, &ours) > 0;
	CloseHandle(h);
	return (younger ? 0 : (pid_t)ppid);
}

/* Whether the process pid exists (ours to open or not). */
int
platform_pid_alive(pid_t pid)
{
	HANDLE	 h;

	if (pid <= 0 || (unsigned long long)pid > MAXDWORD)
		return (0);
	if (!process_open((DWORD)pid, &h))
		return (0);
	if (h != NULL)
		CloseHandle(h);
	return (1);
}

/*
 * Whether standard input is a console; not the NUL device, a character
 * device that isatty() takes for a terminal.
 */
int
platform_stdin_terminal(void)
{
	DWORD	 mode;

	return (GetConsoleMode(GetStdHandle(STD_INPUT_HANDLE), &mode) != 0);
}

/* Whether standard input is a pipe (a launching tool's) or a socket. */
int
platform_stdin_pipe(void)
{
	HANDLE	 h = GetStdHandle(STD_INPUT_HANDLE);

	return (h != NULL && h != INVALID_HANDLE_VALUE &&
	    GetFileType(h) == FILE_TYPE_PIPE);
}

/*
 * Standard input cannot be watched by the event loop here (libevent's
 * select() takes sockets only, and a console or an anonymous pipe is
 * not one): -1, poll platform_stdin_read() on a timer.  There is no job
 * control, so no SIGTTIN to ignore.
 */
int
platform_stdin_event_fd(void)
{
	return (-1);
}

/*
 * The characters of the keys pressed on the console, without waiting.
 * The wait of no time first is for wine, whose console reads its
 * terminal only while someone waits on the input: the count stays 0
 * without it.
 */
static ssize_t
console_read(HANDLE h, char *buf, size_t len)
{
	INPUT_RECORD	 rec[16];
	DWORD		 n, got, i;
	size_t		 o = 0;

	(void)WaitForSingleObject(h, 0);
	if (!GetNumberOfConsoleInputEvents(h, &n)) {
		errno = EIO;
		return (-1);
	}
	if (n == 0) {
		errno = EAGAIN;
		return (-1);
	}
	if (n > sizeof(rec) / sizeof(rec[0]))
		n = sizeof(rec) / sizeof(rec[0]);
	if (!ReadConsoleInputA(h, rec, n, &got)) {
		errno = EIO;
		return (-1);
	}
	for (i = 0; i < got && o < len; i++) {
		if (rec[i].EventType == KEY_EVENT &&
		    rec[i].Event.KeyEvent.bKeyDown &&
		    rec[i].Event.KeyEvent.uChar.AsciiChar != 0)
			buf[o++] = rec[i].Event.KeyEvent.uChar.AsciiChar;
	}
	if (o == 0) {
		errno = EAGAIN;
		return (-1);
	}
	return ((ssize_t)o);
}

/*
 * Read what standard input holds without waiting: a byte count, 0 at its
 * end, -1 with errno set (EAGAIN: nothing yet).  A console gives the
 * keys pressed, so q quits at once, as dotnet-dsrouter's ReadKey does;
 * a pipe is read only as far as PeekNamedPipe says it holds.
 */
ssize_t
platform_stdin_read(void *buf, size_t len)
{
	HANDLE	 h = GetStdHandle(STD_INPUT_HANDLE);
	DWORD	 mode, avail, n;

	if (h == NULL || h == INVALID_HANDLE_VALUE)
		return (0);
	if (GetConsoleMode(h, &mode))
		return (console_read(h, buf, len));
	if (GetFileType(h) == FILE_TYPE_PIPE) {
		/*
		 * Wine refuses to peek into a Unix pipe it was given as
		 * standard input (ERROR_NOT_SUPPORTED): that is an error
		 * too, rather than a read that could block the loop.
		 */
		if (!PeekNamedPipe(h, NULL, 0, NULL, &avail, NULL)) {
			if (GetLastError() == ERROR_BROKEN_PIPE)
				return (0);
			errno = EIO;
			return (-1);
		}
		if (avail == 0) {
			errno = EAGAIN;
			return (-1);
		}
		if (len > avail)
			len = avail;
	}
	if (len > MAXDWORD)
		len = MAXDWORD;
	if (!ReadFile(h, buf, (DWORD)len, &n, NULL)) {
		if (GetLastError() == ERROR_BROKEN_PIPE ||
		    GetLastError() == ERROR_HANDLE_EOF)
			return (0);
		errno = EIO;
		return (-1);
	}
	return ((ssize_t)n);
}

/*
 * The columns of the console window standard output writes to, or 0 if
 * it is no console (a file, a pipe, a terminal emulator's pty).
 */
size_t
platform_term_columns(void)
{
	CONSOLE_SCREEN_BUFFER_INFO	 info;
	HANDLE				 h = GetStdHandle(STD_OUTPUT_HANDLE);
	DWORD				 mode;
	int				 cols;

	if (h == NULL || h == INVALID_HANDLE_VALUE || !GetConsoleMode(h, &mode))
		return (0);
	if (GetConsoleScreenBufferInfo(h, &info) &&
	    (cols = info.srWindow.Right - info.srWindow.Left + 1) > 0)
		return ((size_t)cols);
	return (80);
}

/*
 * DIR\NAME.exe into buf (the first n bytes of dir; a '/' in name becomes
 * '\'), and whether a file, not a directory, is there.
 */
static int
program_at(const char *dir, size_t n, const char *name, char *buf,
    size_t len)
{
	const char	*sep;
	char		*p;
	DWORD		 attr;
	int		 w;

	sep = n > 0 && (dir[n - 1] == '\\' || dir[n - 1] == '/') ? "" : "\\";
	w = snprintf(buf, len, "%.*s%s%s.exe", (int)n, dir, sep, name);
	if (w < 0 || (size_t)w >= len)
		return (-1);
	for (p = buf + n; *p != '\0'; p++) {
		if (*p == '/')
			*p = '\\';
	}
	attr = GetFileAttributesA(buf);
	return (attr != INVALID_FILE_ATTRIBUTES &&
	    !(attr & FILE_ATTRIBUTE_DIRECTORY) ? 0 : -1);
}

/*
 * Find the program name (adb, iproxy: its .exe is added; it may start
 * with directories below dir) into buf: in dir when it is not NULL,
 * else in each directory of PATH, separated by ';' and perhaps quoted.
 * Empty entries, and an unset PATH, name no directory: Windows has no
 * /usr/bin to fall back on.  Return -1 if no such file is there; buf
 * then holds the last place looked.
 */
int
platform_find_program(const char *dir, const char *name, char *buf,
    size_t len)
{
	const char	*path = getenv("PATH"), *p, *end, *s, *e;

	if (len > 0)
		buf[0] = '\0';
	if (dir != NULL)
		return (program_at(dir, strlen(dir), name, buf, len));
	if (path == NULL)
		return (-1);
	for (p = path; *p != '\0'; p = *end != '\0' ? end + 1 : end) {
		if ((end = strchr(p, ';')) == NULL)
			end = p + strlen(p);
		for (s = p, e = end; s < e && *s == '"'; s++)
			;
		while (e > s && e[-1] == '"')
			e--;
		if (e > s && program_at(s, (size_t)(e - s), name, buf,
		    len) == 0)
			return (0);
	}
	return (-1);
}

/* Where platform_find_program() looks, for a message. */
const char *
platform_program_places(void)
{
	return ("PATH");
}

/* Where an iOS device's iproxy comes from. */
const char *
platform_iproxy_package(void)
{
	return ("on Debian and Ubuntu: libusbmuxd-tools");
}
