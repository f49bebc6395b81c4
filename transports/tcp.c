/* SPDX-License-Identifier: ISC */

/*
 * TCP over IPv4 and IPv6: tcp:HOST:PORT, [V6]:PORT, *:PORT, :PORT or PORT
 * alone (loopback).  A peer is an address.  Plaintext beyond loopback is
 * refused at start-up unless --unsafe-listen.  The socket level here is
 * tls's too.
 */

#include "config.h"

#include <sys/types.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>

#include <errno.h>
#include <netdb.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/util.h>

#include "common/log.h"
#include "common/util.h"
#include "transports/socket.h"
#include "transports/transport.h"

static int	 tcp_parse(struct endpoint *, const char *, char *, size_t);
static void	 tcp_clear(struct endpoint *);
static enum exposure tcp_exposure(const struct endpoint *);
static void	 tcp_howto(const struct endpoint *,
		    const struct endpoint *);
static void	 tcp_msbuild(const char *, const char *);

static const char *const tcp_prefixes[] = { "tcp:", NULL };

const struct transport transport_tcp = {
	.name = "tcp",
	.prefixes = tcp_prefixes,
	.example = "tcp:127.0.0.1:1",
	.plain = 1,
	.parse = tcp_parse,
	.check = tcp_check,
	.clear = tcp_clear,
	.set_name = tcp_set_name,
	.auto_role = tcp_auto_role,
	.resolve = tcp_resolve,
	.exposure = tcp_exposure,
	.howto = tcp_howto,
	.listen = tcp_listen,
	.dial = tcp_dial,
	.setup = tcp_setup,
	.handshake = socket_handshake,
	.read = socket_read,
	.write = socket_write,
	.write_buffer = socket_write_buffer,
	.shutdown = socket_shutdown,
	.unsent = socket_unsent,
	.teardown = socket_teardown,
	/* Out of TCP, splice(2) is faster than copies; into TCP it is not. */
	.read_pipe = socket_read_pipe,
};

/* Parse HOST:PORT, [V6]:PORT, *:PORT, :PORT or PORT into t. */
int
tcp_parse_address(struct tcp_endpoint *t, const char *addr, char *err,
    size_t len)
{
	const char	*host = NULL, *port, *colon, *close;
	size_t		 hostlen = 0;
	char		*end;
	unsigned long	 v;

	if (addr[0] == '[') {
		if ((close = strchr(addr, ']')) == NULL || close[1] != ':') {
			snprintf(err, len, "write an IPv6 address as "
			    "[ADDRESS]:PORT");
			return (-1);
		}
		host = addr + 1;
		hostlen = close - host;
		port = close + 2;
	} else if ((colon = strrchr(addr, ':')) != NULL) {
		if (memchr(addr, ':', colon - addr) != NULL) {
			snprintf(err, len, "write an IPv6 address as "
			    "[ADDRESS]:PORT");
			return (-1);
		}
		host = addr;
		hostlen = colon - addr;
		port = colon + 1;
	} else
		port = addr;

	/* A bare host, such as tcp:127.0.0.1: say what is missing. */
	if (host == NULL && port[strcspn(port, ".abcdefghijklmnopqrstuvwxyz"
	    "ABCDEFGHIJKLMNOPQRSTUVWXYZ")] != '\0') {
		snprintf(err, len, "'%s' has no port: write HOST:PORT, such "
		    "as %s:9000", port, port);
		return (-1);
	}
	errno = 0;
	v = strtoul(port, &end, 10);
	if (*port == '\0' || *end != '\0' || errno != 0 || v > 65535 ||
	    *port == '-' || *port == '+') {
		snprintf(err, len, "port '%s' is not a number from 0 to 65535",
		    port);
		return (-1);
	}
	snprintf(t->port, sizeof(t->port), "%lu", v);

	if (hostlen == 1 && host[0] == '*')
		t->wildcard = 1;
	else if (hostlen > 0) {
		if (hostlen > 255) {
			snprintf(err, len, "host name too long");
			return (-1);
		}
		if ((t->host = strndup(host, hostlen)) == NULL) {
			snprintf(err, len, "out of memory");
			return (-1);
		}
	}
	return (0);
}

void
tcp_clear_address(struct tcp_endpoint *t)
{
	free(t->host);
}

static int
tcp_parse(struct endpoint *ep, const char *addr, char *err, size_t len)
{
	struct tcp_endpoint	*t;

	if ((t = calloc(1, sizeof(*t))) == NULL) {
		snprintf(err, len, "out of memory");
		return (-1);
	}
	ep->t = t;
	return (tcp_parse_address(t, addr, err, len));
}

/* A connect endpoint needs somewhere to go. */
int
tcp_check(const struct endpoint *ep, char *err, size_t len)
{
	const struct tcp_endpoint	*t = TCP(ep);

	if (ep->role == ROLE_CONNECT && (strcmp(t->port, "0") == 0 ||
	    t->wildcard)) {
		snprintf(err, len, "a connect endpoint needs a host and a "
		    "port other than 0");
		return (-1);
	}
	return (0);
}

static void
tcp_clear(struct endpoint *ep)
{
	tcp_clear_address(TCP(ep));
	free(ep->t);
	ep->t = NULL;
}

/* The printable name: the address with the bound port, once known. */
void
tcp_set_name(struct endpoint *ep)
{
	const struct tcp_endpoint	*t = TCP(ep);
	const char			*type = ep->transport->name;
	char				 addr[INET6_ADDRSTRLEN + 16];

	if (t->addrlen != 0) {
		sockaddr_name((const struct sockaddr *)&t->addr, t->addrlen,
		    addr, sizeof(addr));
		snprintf(ep->name, sizeof(ep->name), "%s:%s", type, addr);
	} else if (t->wildcard)
		snprintf(ep->name, sizeof(ep->name), "%s:*:%s", type,
		    t->port);
	else
		snprintf(ep->name, sizeof(ep->name), "%s:%s:%s", type,
		    t->host != NULL ? t->host : "127.0.0.1", t->port);
}

/* Network endpoints listen unless told to connect. */
void
tcp_auto_role(struct endpoint *ep)
{
	ep->role = ROLE_LISTEN;
	ep->why = "network endpoints listen unless ,connect is given";
}

/* Resolve the address; a name resolves to its first address. */
int
tcp_resolve(struct endpoint *ep, char *err, size_t len)
{
	struct tcp_endpoint	*t = TCP(ep);
	struct addrinfo		 hints, *res;
	const char		*host;
	int			 rv;

	memset(&hints, 0, sizeof(hints));
	hints.ai_socktype = SOCK_STREAM;
	hints.ai_flags = AI_NUMERICSERV;
	if (t->wildcard) {
		host = "::";
		hints.ai_flags |= AI_PASSIVE | AI_NUMERICHOST;
	} else
		host = t->host != NULL ? t->host : "127.0.0.1";
	if ((rv = getaddrinfo(host, t->port, &hints, &res)) != 0) {
		snprintf(err, len, "cannot resolve '%s': %s", host,
		    gai_strerror(rv));
		return (-1);
	}
	memcpy(&t->addr, res->ai_addr, res->ai_addrlen);
	t->addrlen = res->ai_addrlen;
	freeaddrinfo(res);
	tcp_set_name(ep);
	return (0);
}

/* Whether a resolved address is on the loopback interface. */
int
tcp_loopback(const struct endpoint *ep)
{
	const struct tcp_endpoint	*t = TCP(ep);
	const struct sockaddr_in	*sin;
	const struct sockaddr_in6	*sin6;
	const uint8_t			*a;

	switch (t->addr.ss_family) {
	case AF_INET:
		sin = (const struct sockaddr_in *)&t->addr;
		return ((ntohl(sin->sin_addr.s_addr) >> 24) == 127);
	case AF_INET6:
		sin6 = (const struct sockaddr_in6 *)&t->addr;
		if (IN6_IS_ADDR_LOOPBACK(&sin6->sin6_addr))
			return (1);
		a = sin6->sin6_addr.s6_addr;
		return (IN6_IS_ADDR_V4MAPPED(&sin6->sin6_addr) && a[12] == 127);
	}
	return (0);
}

/* Plaintext beyond loopback: anyone who reaches it controls the runtime. */
static enum exposure
tcp_exposure(const struct endpoint *ep)
{
	return (ep->role == ROLE_LISTEN && !tcp_loopback(ep) ?
	    EXPOSURE_REFUSE : EXPOSURE_NONE);
}

/*
 * The .NET SDK's MSBuild properties for a mobile runtime at addr.  A
 * port's default is to suspend the runtime until a tool resumes it, so
 * say nosuspend, as the environment variable's line does.
 */
static void
tcp_msbuild(const char *addr, const char *mode)
{
	const char	*colon = strrchr(addr, ':');
	int		 v6 = addr[0] == '[';

	log_info("  ... built with the .NET SDK: -p:DiagnosticAddress=%.*s "
	    "-p:DiagnosticPort=%s -p:DiagnosticSuspend=false "
	    "-p:DiagnosticListenMode=%s",
	    (int)(colon - addr) - 2 * v6, addr + v6, colon + 1, mode);
}

/* Log the settings a runtime or a tool needs to use the endpoint. */
static void
tcp_howto(const struct endpoint *ep, const struct endpoint *other)
{
	const char	*addr = ep->name + 4;	/* past "tcp:" */
	int		 runtimes, tools;

	transport_serves(ep, other, &runtimes, &tools);
	if (tools && tcp_loopback(ep))
		log_info("  tools on this host: dsroute uds:/tmp/dsroute.sock "
		    "tcp:%s,connect,peer=router, then dotnet-trace collect "
		    "--diagnostic-port /tmp/dsroute.sock,connect", addr);
	else if (tools)
		log_info("  tools on another host: dsroute "
		    "uds:/tmp/dsroute.sock tcp:THIS-HOST:%s,connect,peer=router,"
		    " then dotnet-trace collect --diagnostic-port "
		    "/tmp/dsroute.sock,connect", strrchr(addr, ':') + 1);
	if (runtimes) {
		log_info("  a mobile runtime: "
		    "DOTNET_DiagnosticPorts=%s,connect,nosuspend (or ,suspend "
		    "to wait for a tool at start-up)", addr);
		tcp_msbuild(addr, "connect");
	}
	if (ep->role != ROLE_LISTEN) {
		log_info("  a runtime listening on TCP "
		    "(DOTNET_DiagnosticPorts=%s,listen,nosuspend on a mobile "
		    "device), or "
		    "another dsroute listening there", addr);
		tcp_msbuild(addr, "listen");
	}
}

/*
 * The address a front end tells applications: the host and port it
 * listens on or dials, once resolved.  Return -1 if it is not TCP.
 */
int
tcp_address(const struct endpoint *ep, char *host, size_t len, int *port)
{
	const struct tcp_endpoint	*t;
	char				 name[INET6_ADDRSTRLEN + 16], *colon;

	if (ep->transport != &transport_tcp)
		return (-1);
	t = TCP(ep);
	sockaddr_name((const struct sockaddr *)&t->addr, t->addrlen, name,
	    sizeof(name));
	if ((colon = strrchr(name, ':')) == NULL) {
		snprintf(host, len, "%s", name);
		*port = 0;
		return (0);
	}
	*colon = '\0';
	*port = atoi(colon + 1);
	if (name[0] == '[') {
		name[strlen(name) - 1] = '\0';
		memmove(name, name + 1, strlen(name));
	}
	snprintf(host, len, "%s", name);
	return (0);
}

static int
tcp_socket(int family)
{
	return (socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0));
}

/*
 * Listen on the endpoint's address, or on the socket a service manager
 * passed with that address; report the port chosen for port 0.
 */
int
tcp_listen(struct endpoint *ep, char *err, size_t len)
{
	struct tcp_endpoint	*t = TCP(ep);
	struct sockaddr_in	*sin;
	socklen_t		 alen;
	int			 fd, on = 1;

	/* A service manager passed a socket with this address: use it. */
	if ((fd = inherit_take_inet(ep, (struct sockaddr *)&t->addr)) != -1) {
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
		return (fd);
	}
	fd = tcp_socket(t->addr.ss_family);
	if (fd == -1 && t->wildcard && errno == EAFNOSUPPORT) {
		/* No IPv6 here: every interface means 0.0.0.0. */
		sin = (struct sockaddr_in *)&t->addr;
		memset(sin, 0, sizeof(*sin));
		sin->sin_family = AF_INET;
		sin->sin_addr.s_addr = htonl(INADDR_ANY);
		sin->sin_port = htons((uint16_t)atoi(t->port));
		t->addrlen = sizeof(*sin);
		fd = tcp_socket(AF_INET);
	}
	if (fd == -1) {
		snprintf(err, len, "socket: %s", strerror(errno));
		return (-1);
	}
	/* Accepted sockets inherit TCP_NODELAY: no setsockopt per session. */
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof(on)) == -1 ||
	    bind(fd, (struct sockaddr *)&t->addr, t->addrlen) == -1 ||
	    listen(fd, SOMAXCONN) == -1) {
		snprintf(err, len, "cannot listen on %s: %s", ep->name,
		    strerror(errno));
		evutil_closesocket(fd);
		return (-1);
	}
	/* Learn the port the kernel chose for port 0. */
	alen = sizeof(t->addr);
	if (getsockname(fd, (struct sockaddr *)&t->addr, &alen) == 0)
		t->addrlen = alen;
	tcp_set_name(ep);
	return (fd);
}

/*
 * A connect to a nearby peer, loopback above all, has usually finished
 * by the time connect() says EINPROGRESS: look once, without waiting, to
 * spare a trip through the event loop.  Return 1 if it has finished,
 * with *error set (0 when connected).
 */
static int
connect_finished(int fd, int *error)
{
	struct pollfd	 pfd;
	socklen_t	 len = sizeof(*error);

	pfd.fd = fd;
	pfd.events = POLLOUT;
	pfd.revents = 0;
	if (poll(&pfd, 1, 0) != 1)
		return (0);
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, error, &len) == -1)
		*error = errno;
	return (1);
}

/* Start a non-blocking connect to the endpoint's address. */
int
tcp_dial(struct endpoint *ep, int *pending)
{
	struct tcp_endpoint	*t = TCP(ep);
	int			 fd, error, on = 1;

	if ((fd = tcp_socket(t->addr.ss_family)) == -1)
		return (-1);
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &on, sizeof(on));
	*pending = 0;
	if (connect(fd, (struct sockaddr *)&t->addr, t->addrlen) == 0)
		return (fd);
	error = errno;
	if (error == EINPROGRESS) {
		if (!connect_finished(fd, &error)) {
			*pending = 1;
			return (fd);
		}
		if (error == 0)
			return (fd);
	}
	evutil_closesocket(fd);
	errno = error;
	return (-1);
}

/*
 * A connected socket.  It forwards each write at once, the router adding
 * no delay of its own: a dialled socket got TCP_NODELAY in tcp_dial, an
 * accepted one from its listener (Linux and the BSDs copy it to accepted
 * sockets).  The peer's address is the one dialled; the engine kept an
 * accepted peer's from accept.
 */
int
tcp_setup(struct stream *c, int accepted)
{
	const struct tcp_endpoint	*t = TCP(c->endpoint);

	if (!accepted && (size_t)t->addrlen <= sizeof(c->addr))
		memcpy(&c->addr, &t->addr, t->addrlen);
	return (0);
}
