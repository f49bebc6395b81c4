/* SPDX-License-Identifier: ISC */

/*
 * faketoolcore.h: the fake tool as faketool (Linux: sockets, pthreads,
 * signals) and its Windows twin winfaketool (a named pipe, Win32 threads)
 * share it: the options, the commands, what they send and check and the
 * lines they print, and the exit status.  It makes no OS call: what it
 * needs of the OS, each of them provides (the os_ functions below), with
 * its own transport.
 */

#ifndef TESTS_FAKETOOLCORE_H
#define TESTS_FAKETOOLCORE_H

#include <stdint.h>

#include "fakeproto.h"

#define EXIT_ERROR		1	/* IPC error frame or failed check */
#define EXIT_EOF		2	/* EOF or I/O error before a reply */
#define EXIT_TIMEOUT		3
#define EXIT_USAGE		64

enum io {
	IO_OK,
	IO_EOF,
	IO_ERR,		/* the OS keeps the error: os_errtext() */
	IO_TIMEOUT
};

/* One connection to the target; the OS's own. */
struct conn;

/* The absolute time (os_now_ms()) every command must be done by. */
extern int64_t		 deadline;
/* --silent-ms: quiet after connecting. */
extern int64_t		 opt_silent_ms;

int		 tool_main(int, char *[]);
void		 tool_stopper(void);
void		 out(const char *, ...) FP_PRINTFLIKE(1, 2);
void		 diag(const char *, ...) FP_PRINTFLIKE(1, 2);
enum io		 read_full(struct conn *, void *, size_t, int64_t);

/*
 * The OS's part.  os_open() connects (or takes a parked connection); the
 * I/O waits at most until an absolute os_now_ms() time, and IO_ERR keeps
 * the error for os_errtext().  os_shut_wr_ok() says if --shut-wr can be
 * (or why not), os_reset() closes as abruptly as the OS can.
 * os_stopper_start() runs tool_stopper() on a thread of its own.
 * os_raw_signals() and os_hold_cut() end raw's --hold-ms early (SIGUSR1,
 * on Linux).  os_start() and os_finish() come around the command.
 */
void		 os_usage(void) FP_NORETURN;
int		 os_parse_target(const char *);
int		 os_shut_wr_ok(const char *);
int		 os_start(void);
void		 os_finish(void);
int64_t		 os_now_ms(void);
enum io		 os_sleep_ms(int64_t);
uint64_t	 os_pid(void);
void		 os_out_lock(void);
void		 os_out_unlock(void);
enum io		 os_open(struct conn **);
void		 os_close(struct conn *);
enum io		 os_read_some(struct conn *, void *, size_t, size_t *,
		    int64_t);
enum io		 os_write_full(struct conn *, const void *, size_t, int64_t);
void		 os_shut_wr(struct conn *);
enum io		 os_reset(struct conn *);
int		 os_is_reset(void);
const char	*os_errtext(void);
int		 os_stopper_start(void);
void		 os_stopper_join(void);
void		 os_raw_signals(void);
int		 os_hold_cut(void);

#endif /* TESTS_FAKETOOLCORE_H */
