/* SPDX-License-Identifier: ISC */

/*
 * The daemon (daemon.c): the event loop around the routes a front end
 * made, signals, start-up, reload and an orderly shutdown.  A front end
 * gives it its own hooks; the daemon never reaches back into one.
 */

#ifndef DAEMON_H
#define DAEMON_H

/* What a front end does around the loop. */
struct frontend {
	const char	*name;
	int		(*start)(void);		/* the routes listen; -1: stop
						   (status says with what) */
	void		(*stop)(void);		/* the loop ended: undo start */
	int		(*reload)(void);	/* SIGHUP: 1 reloaded, 0 nothing
						   to, -1 failed (kept) */
	int		(*status)(int);		/* the exit status, given ours */
	int		(*signal)(int);		/* SIGTERM, SIGINT: 1 if taken
						   (no drain), 0 to drain */
};

int		 daemon_run(const struct frontend *);
void		 daemon_shutdown(void);

/* metrics_http.c: --metrics, served from the daemon's loop. */
int		 metrics_http_check(char *, size_t);
int		 metrics_http_start(char *, size_t);
int		 metrics_http_reload(void);
void		 metrics_http_describe(void);
int		 metrics_http_fds(void);
void		 metrics_http_stop(void);

#endif /* DAEMON_H */
