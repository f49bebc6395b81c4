/* SPDX-License-Identifier: ISC */

/*
 * A smoke test of the Windows libraries that contrib/windows/deps.sh
 * builds, run under wine by contrib/windows/smoke.sh: libevent's default
 * back end, its IOCP back end carrying a few bytes over loopback TCP, and
 * mbed TLS sending a ClientHello.  It prints what it saw and exits 0 when
 * all of it worked.
 */

#include <winsock2.h>
#include <windows.h>

#include <stdio.h>
#include <string.h>

#include <event2/event.h>
#include <event2/listener.h>
#include <event2/bufferevent.h>
#include <event2/buffer.h>
#include <event2/thread.h>

#include <mbedtls/ctr_drbg.h>
#include <mbedtls/entropy.h>
#include <mbedtls/ssl.h>
#include <mbedtls/version.h>

/* Not in libevent's public headers, but exported: the base's IOCP port. */
struct event_iocp_port;
struct event_iocp_port *event_base_get_iocp_(struct event_base *);

static int	 echoed;
static size_t	 hello_len;

/* The server side: answer "ping" with "pong". */
static void
server_read(struct bufferevent *bev, void *arg)
{
	char	 buf[16];
	size_t	 n;

	n = bufferevent_read(bev, buf, sizeof buf);
	if (n == 4 && memcmp(buf, "ping", 4) == 0)
		bufferevent_write(bev, "pong", 4);
}

/* The client side: stop the loop on "pong". */
static void
client_read(struct bufferevent *bev, void *arg)
{
	char	 buf[16];
	size_t	 n;

	n = bufferevent_read(bev, buf, sizeof buf);
	if (n == 4 && memcmp(buf, "pong", 4) == 0) {
		echoed = 1;
		event_base_loopbreak(bufferevent_get_base(bev));
	}
}

static void
client_event(struct bufferevent *bev, short what, void *arg)
{
	if (what & BEV_EVENT_CONNECTED)
		bufferevent_write(bev, "ping", 4);
	else
		event_base_loopbreak(bufferevent_get_base(bev));
}

static void
accepted(struct evconnlistener *l, evutil_socket_t fd, struct sockaddr *sa,
    int salen, void *arg)
{
	struct bufferevent	*bev;

	bev = bufferevent_socket_new(evconnlistener_get_base(l), fd,
	    BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(bev, server_read, NULL, NULL, NULL);
	bufferevent_enable(bev, EV_READ);
	*(struct bufferevent **)arg = bev;
}

/* Send "ping" and get "pong" back over loopback TCP on BASE. */
static int
echo_over(struct event_base *base)
{
	struct sockaddr_in	 sin;
	int			 len = sizeof sin;
	struct evconnlistener	*l;
	struct bufferevent	*c, *s = NULL;
	struct timeval		 tv = { 5, 0 };

	memset(&sin, 0, sizeof sin);
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	l = evconnlistener_new_bind(base, accepted, &s,
	    LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1,
	    (struct sockaddr *)&sin, sizeof sin);
	if (l == NULL)
		return (-1);
	getsockname(evconnlistener_get_fd(l), (struct sockaddr *)&sin, &len);
	c = bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
	bufferevent_setcb(c, client_read, NULL, client_event, NULL);
	bufferevent_enable(c, EV_READ);
	echoed = 0;
	if (bufferevent_socket_connect(c, (struct sockaddr *)&sin,
	    sizeof sin) != 0)
		return (-1);
	event_base_loopexit(base, &tv);
	event_base_dispatch(base);
	bufferevent_free(c);
	if (s != NULL)
		bufferevent_free(s);
	evconnlistener_free(l);
	return (echoed ? 0 : -1);
}

static int
bio_send(void *ctx, const unsigned char *buf, size_t len)
{
	hello_len += len;
	return ((int)len);
}

static int
bio_recv(void *ctx, unsigned char *buf, size_t len)
{
	return (MBEDTLS_ERR_SSL_WANT_READ);
}

/* Start a TLS handshake against nothing: it must stop waiting to read. */
static int
tls_hello(void)
{
	mbedtls_entropy_context		 entropy;
	mbedtls_ctr_drbg_context	 drbg;
	mbedtls_ssl_config		 conf;
	mbedtls_ssl_context		 ssl;
	int				 ret, ok = -1;

	mbedtls_entropy_init(&entropy);
	mbedtls_ctr_drbg_init(&drbg);
	mbedtls_ssl_config_init(&conf);
	mbedtls_ssl_init(&ssl);
	if ((ret = mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy,
	    (const unsigned char *)"smoke", 5)) != 0) {
		printf("tls: ctr_drbg_seed: -0x%04x\n", -ret);
		goto out;
	}
	mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT,
	    MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
	mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_NONE);
	mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, &drbg);
	if ((ret = mbedtls_ssl_setup(&ssl, &conf)) != 0) {
		printf("tls: ssl_setup: -0x%04x\n", -ret);
		goto out;
	}
	mbedtls_ssl_set_bio(&ssl, NULL, bio_send, bio_recv, NULL);
	ret = mbedtls_ssl_handshake(&ssl);
	printf("tls: handshake %s after a ClientHello of %zu bytes\n",
	    ret == MBEDTLS_ERR_SSL_WANT_READ ? "waits to read" : "failed",
	    hello_len);
	if (ret == MBEDTLS_ERR_SSL_WANT_READ && hello_len > 0)
		ok = 0;
out:
	mbedtls_ssl_free(&ssl);
	mbedtls_ssl_config_free(&conf);
	mbedtls_ctr_drbg_free(&drbg);
	mbedtls_entropy_free(&entropy);
	return (ok);
}

int
main(void)
{
	WSADATA			 wsa;
	struct event_base	*base;
	struct event_config	*cfg;
	char			 ver[32];
	int			 status = 0;

	setvbuf(stdout, NULL, _IONBF, 0);
	if (WSAStartup(MAKEWORD(2, 2), &wsa) != 0) {
		printf("WSAStartup failed\n");
		return (1);
	}
	mbedtls_version_get_string(ver);
	printf("libevent %s, mbed TLS %s\n", event_get_version(), ver);

	if ((base = event_base_new()) == NULL) {
		printf("event_base_new failed\n");
		return (1);
	}
	printf("default: method %s, iocp %s", event_base_get_method(base),
	    event_base_get_iocp_(base) != NULL ? "on" : "off");
	if (echo_over(base) == 0)
		printf(", loopback echo ok\n");
	else {
		printf(", loopback echo FAILED\n");
		status = 1;
	}
	event_base_free(base);

	/* IOCP needs libevent's locking. */
	if (evthread_use_windows_threads() != 0) {
		printf("evthread_use_windows_threads failed\n");
		return (1);
	}
	cfg = event_config_new();
	event_config_set_flag(cfg, EVENT_BASE_FLAG_STARTUP_IOCP);
	if ((base = event_base_new_with_config(cfg)) == NULL) {
		printf("event_base_new_with_config(STARTUP_IOCP) failed\n");
		return (1);
	}
	event_config_free(cfg);
	printf("STARTUP_IOCP: method %s, iocp %s", event_base_get_method(base),
	    event_base_get_iocp_(base) != NULL ? "on" : "off");
	if (event_base_get_iocp_(base) == NULL)
		status = 1;
	if (echo_over(base) == 0)
		printf(", loopback echo ok\n");
	else {
		printf(", loopback echo FAILED\n");
		status = 1;
	}
	event_base_free(base);

	if (tls_hello() != 0)
		status = 1;
	WSACleanup();
	printf("%s\n", status == 0 ? "smoke: ok" : "smoke: FAILED");
	return (status);
}
