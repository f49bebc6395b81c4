/* SPDX-License-Identifier: ISC */
/*
 * launch.exe: start a self-contained win-x64 .NET app published without an
 * apphost (there is no apphost pack on the feed here), for the Windows tests
 * under wine.
 *
 *	launch.exe APPDIR\APP.dll [APP-ARGS...]
 *
 * It loads hostfxr.dll from APPDIR and calls hostfxr_main as the apphost
 * would: argv[0] is APPDIR\APP.exe (which need not exist), so hostfxr takes
 * APPDIR as the runtime's root and APP.dll as the app.  The runtime runs in
 * this process, so the pid it puts in \\.\pipe\dotnet-diagnostic-<pid> is
 * this process's.  Before the runtime starts, one line goes to stdout:
 *
 *	launch pid=N runtime-pid=N
 *
 * Then it waits for the app to end and exits with its exit code (or 127 if
 * hostfxr cannot be loaded).
 */

#include <windows.h>
#include <fcntl.h>
#include <io.h>
#include <stdio.h>
#include <wchar.h>

typedef int (__cdecl *hostfxr_main_fn)(int, const wchar_t **);

int
wmain(int argc, wchar_t **argv)
{
	wchar_t		 dll[MAX_PATH], dir[MAX_PATH], fxr[MAX_PATH], exe[MAX_PATH];
	wchar_t		*slash, *dot;
	const wchar_t	**av;
	HMODULE		 h;
	hostfxr_main_fn	 fn;
	DWORD		 pid;
	int		 i, rc;

	if (argc < 2) {
		fwprintf(stderr, L"usage: launch.exe APPDIR\\APP.dll [ARGS...]\n");
		return (2);
	}
	if (GetFullPathNameW(argv[1], MAX_PATH, dll, NULL) == 0) {
		fwprintf(stderr, L"launch: bad path %ls\n", argv[1]);
		return (2);
	}
	wcscpy(dir, dll);
	if ((slash = wcsrchr(dir, L'\\')) == NULL) {
		fwprintf(stderr, L"launch: no directory in %ls\n", dll);
		return (2);
	}
	*slash = L'\0';

	/* The app's own hostfxr, not one from a global install. */
	if (_snwprintf(fxr, MAX_PATH, L"%ls\\hostfxr.dll", dir) < 0 ||
	    (h = LoadLibraryW(fxr)) == NULL) {
		fwprintf(stderr, L"launch: cannot load %ls (error %lu)\n", fxr,
		    GetLastError());
		return (127);
	}
	fn = (hostfxr_main_fn)(void *)GetProcAddress(h, "hostfxr_main");
	if (fn == NULL) {
		fwprintf(stderr, L"launch: no hostfxr_main in %ls\n", fxr);
		return (127);
	}

	/* APPDIR\APP.exe stands for the apphost that would have run APP.dll. */
	wcscpy(exe, dll);
	if ((dot = wcsrchr(exe, L'.')) == NULL || dot < wcsrchr(exe, L'\\') ||
	    _wcsicmp(dot, L".dll") != 0) {
		fwprintf(stderr, L"launch: %ls is not a .dll\n", dll);
		return (2);
	}
	wcscpy(dot, L".exe");

	if ((av = calloc(argc + 1, sizeof(*av))) == NULL)
		return (1);
	av[0] = argv[0];
	av[1] = dll;
	for (i = 2; i < argc; i++)
		av[i] = argv[i];

	_setmode(_fileno(stdout), _O_BINARY);	/* LF, not CRLF */
	pid = GetCurrentProcessId();
	printf("launch pid=%lu runtime-pid=%lu\n", pid, pid);
	fflush(stdout);

	rc = fn(argc, av);
	fflush(stdout);
	return (rc);
}
