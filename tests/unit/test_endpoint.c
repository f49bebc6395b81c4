/* SPDX-License-Identifier: ISC */

/* Unit tests of endpoint parsing and address resolution. */

#include "config.h"

#include <sys/socket.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/identity.h"
#include "router/acl.h"
#include "router/endpoint.h"
#include "transports/socket.h"
#include "transports/tls.h"
#include "transports/transport.h"
#include "transports/uds.h"
#include "tap.h"

static struct endpoint	 ep;
static char		 err[512];

/* Whether the endpoint parsed is of the transport named. */
static int
is(const char *transport)
{
	return (ep.transport != NULL &&
	    strcmp(ep.transport->name, transport) == 0);
}

static int
parses(const char *spec)
{
	endpoint_clear(&ep);
	err[0] = '\0';
	return (endpoint_parse(spec, &ep, err, sizeof(err)) == 0);
}

/* The spec is refused with a message containing want. */
static int
refused(const char *spec, const char *want)
{
	return (!parses(spec) && strstr(err, want) != NULL);
}

static void
test_uds(void)
{
	char	 longpath[300];

	ok(parses("uds:/tmp/a.sock") && is("uds") &&
	    strcmp(UDS(&ep)->path, "/tmp/a.sock") == 0 &&
	    ep.role == ROLE_AUTO && UDS(&ep)->mode == 0600,
	    "uds: path, automatic role, mode 0600");
	ok(parses("unix:/tmp/a,listen,mode=0660,group=adm") &&
	    ep.role == ROLE_LISTEN && UDS(&ep)->mode == 0660 &&
	    strcmp(UDS(&ep)->group, "adm") == 0,
	    "unix: alias, listen, mode, group");
	ok(parses("uds:/tmp/a,connect") && ep.role == ROLE_CONNECT,
	    "connect role");
	ok(refused("uds:/tmp/a,listen,connect", "not both"),
	    "listen and connect together");
	ok(refused("uds:", "empty"), "empty path");
	memset(longpath, 'x', sizeof(longpath));
	memcpy(longpath, "uds:/", 5);
	longpath[4 + 108] = '\0';
	ok(refused(longpath, "at most 107"), "108-byte path is too long");
	longpath[4 + 107] = '\0';
	ok(parses(longpath), "107-byte path fits");
	ok(refused("uds:/tmp/a,mode=0777", "execute"), "mode with x bits");
	ok(refused("uds:/tmp/a,mode=9", "octal"), "mode not octal");
	ok(refused("uds:/tmp/a,mode", "needs a value"), "mode without value");
	ok(refused("uds:/tmp/a,listen=1", "takes no value"), "listen=1");
	ok(refused("uds:/tmp/a,bogus", "unknown option 'bogus'"),
	    "unknown option");
	ok(ep.spec == NULL && ep.t == NULL && ep.transport == NULL,
	    "a refused spec leaves nothing behind");
}

static void
test_tcp(void)
{
	ok(parses("tcp:127.0.0.1:9000") && is("tcp") &&
	    strcmp(TCP(&ep)->host, "127.0.0.1") == 0 &&
	    strcmp(TCP(&ep)->port, "9000") == 0,
	    "tcp: host and port");
	ok(parses("tcp:[::1]:9001") && strcmp(TCP(&ep)->host, "::1") == 0 &&
	    strcmp(TCP(&ep)->port, "9001") == 0, "tcp: bracketed IPv6");
	ok(parses("tcp:9002") && TCP(&ep)->host == NULL &&
	    strcmp(TCP(&ep)->port, "9002") == 0,
	    "tcp: port only means loopback");
	ok(parses("tcp::9003") && TCP(&ep)->host == NULL, "tcp: empty host");
	ok(parses("tcp:*:9004") && TCP(&ep)->wildcard, "tcp: every interface");
	ok(parses("tcp:localhost:0") && strcmp(TCP(&ep)->port, "0") == 0,
	    "tcp: port 0 to listen on");
	ok(refused("tcp:127.0.0.1:65536", "0 to 65535"), "port too large");
	ok(refused("tcp:127.0.0.1:-1", "0 to 65535"), "negative port");
	ok(refused("tcp:127.0.0.1:", "0 to 65535"), "missing port");
	ok(refused("tcp:127.0.0.1:90x", "0 to 65535"), "port not a number");
	ok(refused("tcp:::1:9000", "[ADDRESS]:PORT"), "unbracketed IPv6");
	ok(refused("tcp:[::1:9000", "[ADDRESS]:PORT"), "unclosed bracket");
	ok(refused("tcp:127.0.0.1:0,connect", "other than 0"),
	    "connect to port 0");
	ok(refused("tcp:*:9000,connect", "other than 0"),
	    "connect to every interface");
	ok(refused("tcp:127.0.0.1:1,mode=0600", "does not apply"),
	    "uds option on tcp");
}

static void
test_tls(void)
{
	const struct allow_rule	*allow;
	int			 nallow;

	ok(parses("tls:127.0.0.1:9000,cert=s.pem,key=s.key,ca=ca.pem") &&
	    is("tls") && ep.role == ROLE_AUTO &&
	    TLS(&ep)->verify == VERIFY_DEFAULT &&
	    strcmp(TLS(&ep)->cert, "s.pem") == 0 &&
	    strcmp(TLS(&ep)->key, "s.key") == 0 &&
	    strcmp(TLS(&ep)->ca, "ca.pem") == 0 &&
	    strcmp(ep.name, "tls:127.0.0.1:9000") == 0,
	    "tls: listener with cert, key and ca");
	ok(refused("tls:127.0.0.1:9000,cert=s.pem,key=s.key", "give ca="),
	    "a listener needs ca= to verify clients");
	ok(parses("tls:*:9000,cert=s.pem,key=s.key,verify=none") &&
	    TLS(&ep)->verify == VERIFY_NONE, "or an explicit verify=none");
	ok(refused("tls:127.0.0.1:9000,listen,ca=ca.pem", "cert= and key="),
	    "a listener needs a certificate");
	ok(refused("tls:127.0.0.1:9000,cert=s.pem,ca=ca.pem", "together"),
	    "cert= without key=");
	ok(refused("tls:127.0.0.1:9000,cert=a,key=b,ca=c,verify=maybe",
	    "required, optional or none"), "unknown verify mode");
	ok(parses("tls:127.0.0.1:9000,cert=a,key=b,ca=c,verify=optional,"
	    "allow-cn=tool,allow-san=uri:spiffe://x/y,allow-san=ip:::1,"
	    "allow-fp=" "00112233445566778899aabbccddeeff"
	    "00112233445566778899AABBCCDDEEFF") &&
	    TLS(&ep)->verify == VERIFY_OPTIONAL &&
	    (allow = acl_allow_list(ep.policy, &nallow)) != NULL &&
	    nallow == 4 && allow[0].kind == ALLOW_CN &&
	    allow[1].kind == ALLOW_SAN && allow[1].san_type == SAN_URI &&
	    strcmp(allow[2].value, "::1") == 0 &&
	    allow[3].fingerprint[31] == 0xff, "allow-lists, repeatable");
	ok(refused("tls:127.0.0.1:9000,cert=a,key=b,verify=none,allow-cn=x",
	    "verify=none"), "an allow-list needs client certificates");
	ok(refused("tls:127.0.0.1:9000,cert=a,key=b,ca=c,allow-san=x",
	    "dns:NAME"), "allow-san= without a type");
	ok(refused("tls:127.0.0.1:9000,cert=a,key=b,ca=c,allow-fp=abcd",
	    "64 hex digits"), "short fingerprint");
	ok(parses("tls:example.test:443,connect,sni=other.test") &&
	    ep.role == ROLE_CONNECT &&
	    strcmp(TLS(&ep)->sni, "other.test") == 0 &&
	    TLS(&ep)->cert == NULL && TLS(&ep)->ca == NULL,
	    "tls: connect with sni");
	ok(refused("tls:h:1,connect,allow-cn=x", "for listeners"),
	    "no allow-list when connecting");
	ok(refused("tls:h:1,connect,verify=optional", "for listeners"),
	    "no verify=optional when connecting");
	ok(refused("tls:h:1,cert=a,key=b,ca=c,sni=x", "connect endpoints"),
	    "no sni= when listening");
	ok(refused("tls:h:0,connect", "other than 0"),
	    "tls: connect to port 0");
	ok(refused("tcp:127.0.0.1:1,cert=a", "does not apply"),
	    "tls option on tcp");
}

static void
test_types(void)
{
	char	 want[128];

	ok(refused("pipe:dotnet", "Windows"), "pipe: Windows only");
	ok(refused("namedpipe:dotnet", "Windows"), "namedpipe: Windows only");
	/* proc: is Linux's (macOS refuses it, naming dir:). */
	snprintf(want, sizeof(want), "starts with uds:, dir:, %stcp:, tls:, "
	    "ws: or wss:", transport_unavailable("proc:") == NULL ?
	    "proc:, " : "");
	ok(refused("/tmp/a.sock", want), "no type");
	ok(parses("dir:/run/app/") && is("dir") &&
	    strcmp(ep.name, "dir:/run/app") == 0, "dir: without its final /");
	ok(parses("dir:,connect") && is("dir") && ep.role == ROLE_CONNECT,
	    "dir: with the default directory");
	ok(refused("dir:/a/very/long/directory/name/that/leaves/no/room/for/"
	    "a/runtime/socket/name/in/a/unix/socket/address/x", "at most"),
	    "dir: too long for a socket name in it");
	if (transport_unavailable("proc:") != NULL) {
		ok(refused("proc:", "dir:$TMPDIR"),
		    "proc: refused where there is no /proc, naming dir:");
		return;
	}
	ok(parses("proc:,connect") && is("proc") &&
	    strcmp(ep.name, "proc:/proc") == 0, "proc:");
	ok(parses("proc:/proc") && is("proc"), "proc:/proc");
	ok(refused("proc:/tmp", "takes no address"), "proc: with an address");
}

static int
resolved(void)
{
	return (ep.transport->resolve(&ep, err, sizeof(err)) == 0);
}

static void
test_resolve(void)
{
	ok(parses("tcp:127.0.0.1:0") && resolved() &&
	    TCP(&ep)->addr.ss_family == AF_INET && tcp_loopback(&ep),
	    "127.0.0.1 is loopback");
	ok(parses("tcp:127.9.9.9:1") && resolved() && tcp_loopback(&ep),
	    "127.9.9.9 is loopback");
	ok(parses("tcp:[::1]:1") && resolved() &&
	    TCP(&ep)->addr.ss_family == AF_INET6 && tcp_loopback(&ep),
	    "::1 is loopback");
	ok(parses("tcp:9000") && resolved() && tcp_loopback(&ep) &&
	    strcmp(ep.name, "tcp:127.0.0.1:9000") == 0,
	    "port only resolves to 127.0.0.1");
	ok(parses("tcp:*:1") && resolved() && !tcp_loopback(&ep),
	    "every interface is not loopback");
	ok(parses("tcp:10.1.2.3:1") && resolved() && !tcp_loopback(&ep),
	    "10.1.2.3 is not loopback");
	ok(parses("tcp:[::ffff:127.0.0.1]:1") && resolved() &&
	    tcp_loopback(&ep), "v4-mapped 127.0.0.1 is loopback");
	ok(parses("tcp:[::1]:7") && resolved() &&
	    strcmp(ep.name, "tcp:[::1]:7") == 0, "IPv6 name in brackets");
}

int
main(void)
{
	test_uds();
	test_tcp();
	test_tls();
	test_types();
	test_resolve();
	endpoint_clear(&ep);
	return (tap_done());
}
