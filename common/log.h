/* SPDX-License-Identifier: ISC */

/*
 * Logging (log.c): one line a message on standard error, at the levels
 * and with the prefixes of dotnet-dsrouter or as one JSON object
 * (--log-format), never holding up the event loop, and the throttle for
 * the lines a peer can make the router repeat.
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

enum log_format {
	LOG_TEXT,		/* dotnet-dsrouter's prefixes, key=value */
	LOG_JSON		/* one object a line */
};

/* The longest line, newline included: a longer one is cut. */
#define LOG_LINE	2048

/* Lines a peer can repeat at will pass at most once a second. */
#define LOG_THROTTLE_MS	1000

struct log_throttle {
	uint64_t	 last;		/* monotonic ms of the last line */
	unsigned long	 held;		/* lines held back since */
};

/*
 * A structured record: log_begin, then fields in the order the text line
 * shows them, then log_end.  The text format writes the line the router
 * always wrote (its words, then key=value pairs); the JSON format writes
 * an object with time, level, event and the fields as typed values.
 * Every call is a no-op when the level is not logged.
 */
struct log_rec {
	enum log_level	 level;
	int		 on;		/* the level is logged */
	int		 cut;		/* a field did not fit */
	long		 sec, msec;	/* when the record began */
	size_t		 len;
	char		 line[LOG_LINE];
};

/* How a field shows; 0 is key=value in text, "key":value in JSON. */
#define LF_QUOTE	0x01		/* text: key="value" */
#define LF_ESCAPE	0x02		/* text: log_escape the value */
#define LF_JSON		0x04		/* JSON only: the words say it */
#define LF_TEXT		0x08		/* text only */

struct event_base;

void		 log_open(int, int);
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
int		 log_format_parse(const char *, enum log_format *);
void		 log_set_format(enum log_format);
size_t		 json_escape(char *, size_t, const char *, size_t, size_t *);
size_t		 utf8_len(const unsigned char *, size_t);

int		 log_begin(struct log_rec *, enum log_level, const char *);
void		 log_words(struct log_rec *, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));
void		 log_say(struct log_rec *, const char *, ...)
		    __attribute__((__format__(__printf__, 2, 3)));
void		 log_str(struct log_rec *, const char *, const char *, int);
void		 log_u64(struct log_rec *, const char *, uint64_t, int);
void		 log_bool(struct log_rec *, const char *, int, int);
void		 log_secs(struct log_rec *, const char *, double, int);
void		 log_time(struct log_rec *, const char *, int);
void		 log_end(struct log_rec *);
unsigned long	 log_dropped_total(void);

#define log_critical(...)	log_msg(LL_CRITICAL, __VA_ARGS__)
#define log_error(...)		log_msg(LL_ERROR, __VA_ARGS__)
#define log_warning(...)	log_msg(LL_WARNING, __VA_ARGS__)
#define log_info(...)		log_msg(LL_INFO, __VA_ARGS__)
#define log_debug(...)		log_msg(LL_DEBUG, __VA_ARGS__)
#define log_trace(...)		log_msg(LL_TRACE, __VA_ARGS__)

#endif /* LOG_H */
