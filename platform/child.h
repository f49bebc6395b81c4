/* SPDX-License-Identifier: ISC */

/*
 * Processes the daemon runs (posix_child.c, win32_child.c): helper
 * programs whose output is logged and whose exit is reported (adb,
 * iproxy), the application a front end launches (-- COMMAND), which
 * shares our standard streams and whose end ends the router, and bare
 * processes that only need reaping (the stand-ins of standin.c).  One
 * SIGCHLD event on the daemon's loop reaps them all.
 */

#ifndef CHILD_H
#define CHILD_H

#include <sys/types.h>
#include <sys/queue.h>

#include <event2/event_struct.h>

struct event_base;
struct evbuffer;

/* A helper program running. */
struct child {
	char			 name[256];	/* for the log: a path, a pid */
	int			 timeout_ms;	/* 0: none */
	int			 quiet;		/* its stderr at debug level */
	void			(*done)(struct child *, int,
				    struct evbuffer *);
	void			*arg;
	pid_t			 pid;
	int			 fd[2];		/* its stdout and stderr */
	struct event		 ev[2];
	struct evbuffer		*in[2];
	struct evbuffer		*output;	/* its stdout */
	struct event		 deadline;
	int			 timed_out;
	int			 launched;	/* child_launch()'s: no pipes */
	int			 tty;		/* ... given our terminal */
	int			 signal;	/* the signal that ended it, or 0 */
	TAILQ_ENTRY(child)	 entry;
};

/* child_lines.c: the daemon's loop, which watches the children. */
extern struct event_base *child_base;
void		 child_init(struct event_base *);

/* posix_child.c, win32_child.c */
int		 child_spawn(struct child *, char *const []);
int		 child_launch_available(void);
int		 child_launch(struct child *, char *const [], char *const []);
int		 child_signal(struct child *, int);
void		 child_hold(pid_t);
int		 child_running(const struct child *);
void		 child_stop(struct child *, int);
void		 child_wait(struct child *);
int		 child_watch(void);
void		 child_reap_later(pid_t);
void		 child_cleanup(void);

/* child_lines.c: log and keep what a child wrote to stream 0 or 1. */
void		 child_lines(struct child *, int, int);
void		 child_report(struct child *, int);

#endif /* CHILD_H */
