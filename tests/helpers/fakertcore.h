/* SPDX-License-Identifier: ISC */

/*
 * fakertcore.h: the fake runtime's diagnostic server as fakert (Linux:
 * sockets, pthreads) and its Windows twin winfakert (named pipes, Win32
 * threads) share it: the options, the events file, the command table and
 * the commands, serving one message, EventPipe sessions and the stream
 * each one sends.  It makes no OS call: what it needs of the OS, each of
 * them provides (the os_ functions and fatal(), below), with its own
 * transport, threads and main loop.
 */

#ifndef TESTS_FAKERTCORE_H
#define TESTS_FAKERTCORE_H

#include <stdint.h>
#include <stdio.h>

#include "fakeproto.h"

#define MAX_SESSIONS		64
#define CONNECT_TIMEOUT_MS	100
#define ADVR_TIMEOUT_MS		100
#define BACKOFF_MIN_MS		10
#define BACKOFF_MAX_MS		500
#define CMDLINE_MAX		4096

/* os_write_full's timeout: none. */
#define FOREVER			(-1)

/* os_read_full's results. */
#define RD_OK			0
#define RD_EOF			1
#define RD_QUIT			2

enum port {
	PORT_LISTEN,
	PORT_CONNECT
};

/* The two locks: the events file's and the sessions' (with a condition). */
enum lock {
	LOCK_EVENTS,
	LOCK_SESSIONS
};

/* One connection; the OS's own. */
struct conn;

/* What ProcessInfo and ProcessEnvironment say of the platform. */
struct platform {
	const char		*os;
	const char		*rid;
	const char		*path;		/* PATH=... */
	const char		*home;		/* HOME=... or the like */
};

/* Configuration, fixed by rt_options(). */
extern int		 have_listen;
extern int		 have_connect;
extern uint64_t		 opt_pid;
extern uint64_t		 opt_exit_after;
extern uint8_t		 cookie[COOKIE_LEN];

/* Server thread state. */
extern uint64_t		 rx_total;
extern uint64_t		 served;

/* The events file, which the OS opens. */
extern FILE		*evf;

void		 fatal(const char *, ...) FP_PRINTFLIKE(1, 2) FP_NORETURN;
const char	*rt_options(int, char *[]);
uint64_t	 rt_parse_number(const char *, const char *, uint64_t,
		    uint64_t);
void		 ev_log(const char *, ...) FP_PRINTFLIKE(1, 2);
int		 rt_backoff(int);
void		 rt_serve(struct conn *, enum port, const uint8_t *, size_t);
void		 rt_hup(struct conn *);
void		 rt_stream(int);
void		 rt_sessions_reap(void);
void		 rt_sessions_finish(void);
void		 rt_resumed(void);
void		 rt_exit(void);

/*
 * The OS's part.  os_read_full() reads len bytes with no timeout, as the
 * runtime does (RD_*); os_write_full() waits at most timeout ms at a time
 * (FOREVER: no limit) and returns what it wrote.  os_stream_start(i) runs
 * rt_stream(i) on a thread of its own, os_stream_join(i) joins it.
 * os_sessions_wait() waits, LOCK_SESSIONS held, for os_sessions_wake().
 * os_resume() tells the main thread that ResumeRuntime came, and
 * os_quitting() says if the fake is shutting down.
 */
extern const struct platform os_platform;

const char	*os_fatal_detail(void);
void		 os_usage(void) FP_NORETURN;
uint64_t	 os_pid(void);
void		 os_random_cookie(uint8_t *);
void		 os_parse_port(const char *, const char *, enum port);
int		 os_read_full(struct conn *, void *, size_t, size_t *);
size_t		 os_write_full(struct conn *, const void *, size_t, int);
void		 os_close(struct conn *);
void		 os_lock(enum lock);
void		 os_unlock(enum lock);
void		 os_sessions_wait(void);
void		 os_sessions_wake(void);
int		 os_stream_start(int);
void		 os_stream_join(int);
int		 os_quitting(void);
void		 os_resume(void);

#endif /* TESTS_FAKERTCORE_H */
