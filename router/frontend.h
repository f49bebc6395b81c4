/* SPDX-License-Identifier: ISC */

/*
 * The front ends: dsroute's own command line (cli.c) and dotnet-dsrouter's
 * (dsrouter.c, with its presets' port forwarding in preset.c and the
 * helper programs they run through child.c).  Each makes routes and
 * hands the daemon its hooks; main.c picks one.
 */

#ifndef FRONTEND_H
#define FRONTEND_H

#include <sys/types.h>
#include <sys/queue.h>

#include <event2/event_struct.h>

#include <stdio.h>

#include "platform/child.h"

struct evbuffer;
struct frontend;

/* Port forwarding to a phone (preset.c). */
enum forward_kind {
	FORWARD_NONE,
	FORWARD_ADB_REVERSE,	/* the device dials us: adb reverse */
	FORWARD_ADB_FORWARD,	/* we dial the device: adb forward */
	FORWARD_IPROXY		/* we dial an iOS device through iproxy */
};

enum forward_state {
	FWD_UNKNOWN,
	FWD_IN_PLACE,
	FWD_FAILING,
	FWD_CONFLICT
};

struct forward {
	enum forward_kind	 kind;
	const char		*serial;	/* -s: the device, or NULL */
	int			 host_port;	/* on 127.0.0.1 here */
	int			 device_port;
	char			 program[1024];
	struct child		 child;
	struct event		 timer;		/* adb: check the rule */
	enum forward_state	 state;
	int			 owned;		/* we added the adb rule */
	int			 stopping;
	int			 failed;	/* iproxy ended: exit 1 */
};

/* launch.c: the application after -- */
struct route;
void		 launch_set(char **, int);
int		 launch_wanted(void);
int		 launch_private_spec(char *, size_t, char *, size_t);
int		 launch_start(const struct route *, int);
int		 launch_signal(int);
void		 launch_stop(void);
int		 launch_status(int);

/* cli.c */
const struct frontend *cli_frontend(int, char *[]);

/* dsrouter.c */
int		 dsrouter_wanted(int, char *[]);
const struct frontend *dsrouter_frontend(int, char *[]);

/* ps.c */
int		 ps_main(int, char *[]);

/* preset.c */
int		 forward_prepare(struct forward *, char *, size_t);
void		 forward_start(struct forward *);
void		 forward_stop(struct forward *);
void		 preset_howto(FILE *, const char *, const char *, int, int,
		    const char *);

#endif /* FRONTEND_H */
