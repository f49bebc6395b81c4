/* SPDX-License-Identifier: ISC */

/*
 * What platform/darwin.c decides from macOS's data, tested where no macOS
 * is (darwin_parse.c builds on every system): a KERN_PROCARGS2 buffer
 * read into the arguments /proc's cmdline would give, and a process's
 * start time made into the key of its default socket, which must accept
 * the socket the real runtime names and nothing else.
 */

#include "config.h"

#include <stdint.h>
#include <string.h>

#include "common/ipc.h"
#include "platform/darwin_parse.h"
#include "platform/platform.h"
#include "tap.h"

/* A KERN_PROCARGS2 buffer: argc, then the strings as macOS lays them. */
static size_t
procargs(char *buf, int32_t argc, const char *strings, size_t n)
{
	memcpy(buf, &argc, sizeof(argc));
	memcpy(buf + sizeof(argc), strings, n);
	return (sizeof(argc) + n);
}

static void
test_procargs(void)
{
	/* A stand-in, as posix_standin.c runs it: its name, then our words. */
	static const char	 s[] =
	    "/usr/local/bin/dsroute\0\0\0\0\0\0"
	    "MyApp\0[dsroute\0stand-in\0for\0pid\0"
	    "DSROUTE_STANDIN=3:501\0HOME=/Users/me\0\0"
	    "executable_path=/usr/local/bin/dsroute\0ptr_munge=\0";
	static const char	 args[] =
	    "MyApp\0[dsroute\0stand-in\0for\0pid\0";
	struct darwin_procargs	 pa;
	char			 buf[512];
	size_t			 n;

	n = procargs(buf, 5, s, sizeof(s) - 1);
	ok(darwin_procargs_parse(buf, n, &pa) == 0 && pa.argc == 5 &&
	    pa.nargs == 5, "procargs: argc and the five arguments");
	ok(strcmp(pa.exec_path, "/usr/local/bin/dsroute") == 0,
	    "procargs: the program's path");
	ok(pa.args_len == sizeof(args) - 1 &&
	    memcmp(pa.args, args, pa.args_len) == 0,
	    "procargs: the arguments NUL-separated, as /proc's cmdline has "
	    "them (the padding after the path skipped)");
	ok(pa.env_len == strlen("DSROUTE_STANDIN=3:501") + 1 +
	    strlen("HOME=/Users/me") + 1 &&
	    memcmp(pa.env, "DSROUTE_STANDIN=3:501", 21) == 0,
	    "procargs: the environment ends at the empty entry, before the "
	    "system's own strings");

	/* Cut inside the third argument: two whole words, no environment. */
	n = procargs(buf, 5, s, strlen("/usr/local/bin/dsroute") + 6 + 6 +
	    9 + 4);
	ok(darwin_procargs_parse(buf, n, &pa) == 0 && pa.nargs == 2 &&
	    pa.args_len == 6 + 9 && pa.env == NULL,
	    "procargs: a buffer cut short gives its whole words only");

	/* More arguments claimed than there are. */
	n = procargs(buf, 40, s, sizeof(s) - 1);
	ok(darwin_procargs_parse(buf, n, &pa) == 0 && pa.nargs < 40 &&
	    pa.args_len <= n, "procargs: an argc past the buffer reads "
	    "within it");

	n = procargs(buf, -1, s, sizeof(s) - 1);
	ok(darwin_procargs_parse(buf, n, &pa) == -1,
	    "procargs: a negative argc is refused");
	ok(darwin_procargs_parse(buf, 3, &pa) == -1,
	    "procargs: too short for argc");
	n = procargs(buf, 1, "/no/nul/here", 12);
	ok(darwin_procargs_parse(buf, n, &pa) == -1,
	    "procargs: a path without its NUL is refused");

	/* A program whose environment was blanked in place (a stand-in's). */
	n = procargs(buf, 1, "/bin/x\0\0app\0\0\0\0\0", 16);
	ok(darwin_procargs_parse(buf, n, &pa) == 0 && pa.nargs == 1 &&
	    pa.args_len == 4 && pa.env_len == 0,
	    "procargs: a blanked environment is empty");
}

static void
test_key(void)
{
	struct default_name	 dn;
	struct proc_info	 pi;
	const char		*tmpdir = "/var/folders/zz/"
				    "zyxvpxvq6csfxvn_n0000000000000/T/";
	char			 path[200];

	ok(darwin_start_key(1700000000, 999999) == 1700000000,
	    "key: the start's seconds since 1970, its microseconds dropped, "
	    "as the runtime's GetProcessIdDisambiguationKey");
	ok(darwin_start_key(-5, 0) == 0, "key: no time before 1970");

	darwin_proc_info_fill(4242, 1700000000, 999999, &pi);
	ok(pi.pid == 4242 && pi.own_pid == 4242,
	    "proc_info: one pid (no pid namespaces)");
	ok(pi.starttime == 1700000000 && pi.start_epoch == 1700000000,
	    "proc_info: the key, which is already seconds since 1970");

	/* The runtime's own socket, in the per-user TMPDIR, is accepted. */
	snprintf(path, sizeof(path), "%sdotnet-diagnostic-4242-%llu-socket",
	    tmpdir, (unsigned long long)darwin_start_key(1700000000, 999999));
	ok(strlen(path) < 104, "the default socket in a per-user TMPDIR fits "
	    "macOS's 104-byte sun_path (%zu bytes)", strlen(path));
	ok(ipc_default_socket_parse(path, 1, &dn) == 1 && dn.pid == 4242 &&
	    ipc_default_key_matches(&dn, pi.starttime, pi.start_epoch),
	    "the runtime's own socket name matches the process");

	/* Another process with its pid (the pid reused) is refused. */
	darwin_proc_info_fill(4242, 1700000001, 0, &pi);
	ok(!ipc_default_key_matches(&dn, pi.starttime, pi.start_epoch),
	    "a process of the same pid started a second later does not");
	/* A socket planted with another key is refused. */
	darwin_proc_info_fill(4242, 1700000000, 0, &pi);
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-4242-1699999999-"
	    "socket", 1, &dn) == 1 &&
	    !ipc_default_key_matches(&dn, pi.starttime, pi.start_epoch),
	    "a name with another key does not match the process");
	/* A key in Linux's clock ticks never matches a macOS process. */
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-4242-23456-socket",
	    1, &dn) == 1 &&
	    !ipc_default_key_matches(&dn, pi.starttime, pi.start_epoch),
	    "a key in clock ticks after boot does not");

	/* dotnet-dsrouter's own key may be a second off either way. */
	ok(ipc_default_socket_parse("dotnet-diagnostic-dsrouter-4242-"
	    "1700000001-socket", 1, &dn) == 1 &&
	    ipc_default_key_matches(&dn, pi.starttime, pi.start_epoch),
	    "a router's name a second later matches");
	ok(ipc_default_socket_parse("dotnet-diagnostic-dsrouter-4242-"
	    "1700000003-socket", 1, &dn) == 1 &&
	    !ipc_default_key_matches(&dn, pi.starttime, pi.start_epoch),
	    "a router's name three seconds later does not");
	ok(ipc_default_socket_parse("dotnet-diagnostic-4242-1700000001-socket",
	    1, &dn) == 1 &&
	    !ipc_default_key_matches(&dn, pi.starttime, pi.start_epoch),
	    "a runtime's name gets no such second");
}

int
main(void)
{
	test_procargs();
	test_key();
	return (tap_done());
}
