/* SPDX-License-Identifier: ISC */

/*
 * Logging (log.c): one line a message on standard error, at the levels
 * and with the prefixes of dotnet-dsrouter, never holding up the event
 * loop, and the throttle for the lines a peer can make the router repeat.
 */

#ifndef LOG_H
#define LOG_H

#include <stddef.h>
#include <stdint.h>

#ifndef __dead
#define __dead		__attribute__((__noreturn__))
#endif

enum log_level {
	LL_NONE,
	LL_CRITICAL,
	LL_ERROR,
	LL_WARNING,
	LL_INFO,
	LL_DEBUG,
	LL_TRACE
};

/* Lines a peer can repeat at will pass at most once a second. */
#define LOG_THROTTLE_MS	1000

struct log_throttle {
	uint64_t	 last;		/* monotonic ms of the last line */
	unsigned long	 held;		/* lines held back since */
};

struct event_base;

void		 log_open(void);
void		 log_attach(struct event_base *);
void		 log_detach(void);
void		 log_flush(int);
int		 log_level_parse(const char *, enum log_level *);
void		 log_set_level(enum log_level);
int		 log_enabled(enum log_level);
void		 log_msg(enum log_level, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));
void		 fatalx(const char *, ...)
		    __attribute__((__format__(__printf__, 1, 2))) __dead;
void		 log_escape(char *, size_t, const char *, size_t);
int		 log_throttle_pass(struct log_throttle *, const char *);
unsigned long	 log_dropped_total(void);

#define log_critical(...)	log_msg(LL_CRITICAL, __VA_ARGS__)
#define log_error(...)		log_msg(LL_ERROR, __VA_ARGS__)
#define log_warning(...)	log_msg(LL_WARNING, __VA_ARGS__)
#define log_info(...)		log_msg(LL_INFO, __VA_ARGS__)
#define log_debug(...)		log_msg(LL_DEBUG, __VA_ARGS__)
#define log_trace(...)		log_msg(LL_TRACE, __VA_ARGS__)

#endif /* LOG_H */
