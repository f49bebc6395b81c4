/* SPDX-License-Identifier: ISC */

/*
 * What differs between operating systems, behind one small interface
 * (posix.c; a win32.c will fill in the same): making socket files safely,
 * a peer's credentials, what the kernel says about a process, descriptor
 * limits, signals, privileges, and the sockets a service manager passes.
 * Nothing above this layer calls prctl, reads /proc or asks for
 * SO_PEERCRED.
 */

#ifndef PLATFORM_H
#define PLATFORM_H

#include <sys/types.h>
#include <sys/socket.h>

#include <stddef.h>
#include <stdint.h>

/*
 * What the router knows of a local process, seen from its own namespace.
 * Its start time is the key the runtime gives its default socket: clock
 * ticks after boot on Linux (stat field 22), seconds since 1970 on macOS.
 */
struct proc_info {
	pid_t		 pid;		/* as we see it */
	pid_t		 own_pid;	/* as it sees itself (innermost NSpid) */
	uint64_t	 starttime;	/* the runtime's key, as above */
	uint64_t	 start_epoch;	/* the same, in seconds since 1970 */
};

/* A connected local peer's credentials. */
struct peer_cred {
	pid_t		 pid;		/* 0 in a pid namespace we cannot see */
	uid_t		 uid;
	gid_t		 gid;
};

/*
 * A listening socket file, made safely, and removed at exit only if it is
 * still the one made.  The caller fills in what it asks for.
 */
struct sockfile {
	const char	*path;		/* asked */
	mode_t		 mode;
	const char	*owner;		/* a user, or NULL */
	const char	*group;		/* a group, or NULL */
	uid_t		 uid;		/* made: the owner= and group= ids, */
	gid_t		 gid;		/* or -1 */
	int		 dirfd;		/* its directory, kept open */
	dev_t		 dev;
	ino_t		 ino;
	int		 made;
};

/*
 * A descriptor a service manager passed at start-up (LISTEN_FDS), as the
 * kernel describes it.  What to do with it is the caller's.
 */
struct inherited_fd {
	int			 fd;
	char			 name[256];	/* from LISTEN_FDNAMES */
	int			 is_socket;
	int			 family;	/* AF_UNIX, AF_INET, ... */
	int			 type;		/* SOCK_STREAM, ... */
	int			 listening;
	struct sockaddr_storage	 addr;		/* getsockname() */
	socklen_t		 addrlen;
};

/* linux.c, darwin.c, win32.c */
void		 platform_init(void);
int		 proc_info_get(pid_t, int, struct proc_info *);
ssize_t		 proc_cmdline_get(pid_t, char *, size_t);
int		 peer_cred_get(int, struct peer_cred *);
int		 sockfile_probe(const char *);
const char	*sockfile_kind(mode_t);
int		 sockfile_listen(struct sockfile *, char *, size_t);
int		 sockfile_dir_check(const char *, char *, size_t);
void		 sockfile_remove(struct sockfile *);
int		 sockfile_private_dir(char *, const char *, char *, size_t);
void		 sockfile_private_dir_remove(const char *);
int		 platform_dump_dir_check(const char *, uid_t, char *, size_t);
int		 platform_nonblock(int);
size_t		 platform_signals(const int **);
int		 platform_user_id(const char *, uid_t *);
int		 platform_group_id(const char *, gid_t *);
void		 platform_raise_nofile(void);
long		 platform_fd_limit(void);
long		 platform_fds_in_use(void);
long		 platform_unsent(int);
int		 platform_kpipe_open(int [2]);
ssize_t		 platform_kpipe_fill(int, int, size_t);
ssize_t		 platform_kpipe_drain(int, int, size_t);
int		 platform_random(void *, size_t);
int		 platform_log_fd(int *);
void		 platform_block_signals(const int *, size_t);
int		 platform_harden(int, char *, size_t);
int		 platform_config_open(const char *, off_t, char *, size_t);
int		 platform_self_open(void);
int		 platform_exec_fd(int, char *const [], char *const []);
int		 platform_parent_death(pid_t);
void		 platform_set_name(const char *);
void		 platform_close_from(int);
int		 platform_drop(const char *, const char *, int, char *, size_t);
int		 platform_dir_watch(const char *);
void		 platform_dir_watch_drain(int);
int		 platform_inherited_fds(struct inherited_fd **, size_t *, char *,
		    size_t);
/* linux.c, darwin.c: what uds.c names when a process cannot be read */
void		 platform_proc_where(pid_t, char *, size_t);
/* linux.c: every process and its environment (for proc:), /proc parsers */
int		 proc_each(int (*)(pid_t, void *), void *);
int		 proc_environ_get(pid_t, const char *, char *, size_t);
int		 proc_environ_find(const char *, size_t, const char *, char *,
		    size_t);
int		 proc_stat_starttime(const char *, size_t, uint64_t *);
pid_t		 proc_status_own_pid(const char *, size_t, pid_t);

/* ids.c: a user or a group as a number or a name */
int		 parse_uid(const char *, uid_t *);
int		 parse_gid(const char *, gid_t *);

/* posix.c, win32.c: what the front ends (dsrouter.c, preset.c, ps.c) ask */
void		 platform_program_name(const char *, char *, size_t);
const char	*platform_ipc_spec(const char *, char *, size_t);
int		 platform_ipc_default_names(long, unsigned long long, char *,
		    size_t, char *, size_t);
const char	*platform_ipc_default_help(void);
int		 platform_ipc_stat(const char *);
int		 platform_block_signal(const char *);
int		 platform_quit_signal(void);
pid_t		 platform_parent_pid(void);
int		 platform_pid_alive(pid_t);
int		 platform_stdin_terminal(void);
int		 platform_stdin_pipe(void);
int		 platform_stdin_event_fd(void);
ssize_t		 platform_stdin_read(void *, size_t);
size_t		 platform_term_columns(void);
int		 platform_find_program(const char *, const char *, char *,
		    size_t);
const char	*platform_program_places(void);
/* linux.c, darwin.c, win32_frontend.c */
const char	*platform_iproxy_package(void);

#endif /* PLATFORM_H */
