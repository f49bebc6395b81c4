/* SPDX-License-Identifier: ISC */

/*
 * fakertcore.c: the fake runtime's diagnostic server, shared by fakert and
 * winfakert (fakertcore.h).  It serves one message at a time on the
 * server thread, as the runtime does, and runs the stream of each
 * EventPipe session on a thread of its own, which the OS starts.
 */

#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "fakertcore.h"
#include "le.h"

enum sstate {
	SS_FREE,
	SS_RUNNING,
	SS_DONE
};

struct session {
	enum sstate		 state;
	int			 stop;
	struct conn		*conn;
	uint64_t		 id;
};

struct request {
	struct conn		*conn;
	enum port		 from;
	uint8_t			 set;
	uint8_t			 id;
	const uint8_t		*payload;
	size_t			 len;
};

struct command {
	uint8_t			 set;
	uint8_t			 id;
	const char		*name;
	int			(*fn)(struct request *);
};

/* Configuration, fixed after option parsing. */
int			 have_listen;
int			 have_connect;
static int		 opt_suspend;
uint64_t		 opt_pid;
static uint64_t		 opt_info_pid;	/* ProcessInfo's, if it lies */
static const char	*opt_name = "fakert";
uint8_t			 cookie[COOKIE_LEN];
static uint64_t		 opt_stream_bytes;
static size_t		 opt_stream_chunk = 65536;
uint64_t		 opt_exit_after;
static char		 cmdline[CMDLINE_MAX];

/* Server thread state; touched by the server thread only. */
static int		 paused;
uint64_t		 rx_total;
uint64_t		 served;
static uint64_t		 next_session = 1;

/* EventPipe sessions, under LOCK_SESSIONS. */
static struct session	 sessions[MAX_SESSIONS];

/* Events file, under LOCK_EVENTS. */
FILE			*evf;

static int	cmd_ok(struct request *);
static int	cmd_processinfo(struct request *);
static int	cmd_resume(struct request *);
static int	cmd_environment(struct request *);
static int	cmd_startup_profiler(struct request *);
static int	cmd_collect(struct request *);
static int	cmd_stop(struct request *);

static const struct command commands[] = {
	{ SET_DUMP, 0x01, "GenerateCoreDump", cmd_ok },
	{ SET_DUMP, 0x02, "GenerateCoreDump2", cmd_ok },
	{ SET_DUMP, 0x03, "GenerateCoreDump3", cmd_ok },
	{ SET_EVENTPIPE, 0x01, "StopTracing", cmd_stop },
	{ SET_EVENTPIPE, 0x02, "CollectTracing", cmd_collect },
	{ SET_EVENTPIPE, 0x03, "CollectTracing2", cmd_collect },
	{ SET_EVENTPIPE, 0x04, "CollectTracing3", cmd_collect },
	{ SET_EVENTPIPE, 0x05, "CollectTracing4", cmd_collect },
	{ SET_EVENTPIPE, 0x06, "CollectTracing5", cmd_collect },
	{ SET_EVENTPIPE, 0x07, "CollectTracing6", cmd_collect },
	{ SET_PROFILER, 0x01, "AttachProfiler", cmd_ok },
	{ SET_PROFILER, 0x02, "StartupProfiler", cmd_startup_profiler },
	{ SET_PROCESS, 0x00, "ProcessInfo", cmd_processinfo },
	{ SET_PROCESS, 0x01, "ResumeRuntime", cmd_resume },
	{ SET_PROCESS, 0x02, "ProcessEnvironment", cmd_environment },
	{ SET_PROCESS, 0x03, "SetEnvironmentVariable", cmd_ok },
	{ SET_PROCESS, 0x04, "ProcessInfo2", cmd_processinfo },
	{ SET_PROCESS, 0x05, "EnablePerfMap", cmd_ok },
	{ SET_PROCESS, 0x06, "DisablePerfMap", cmd_ok },
	{ SET_PROCESS, 0x07, "ApplyStartupHook", cmd_ok },
	{ SET_PROCESS, 0x08, "ProcessInfo3", cmd_processinfo },
};

/*
 * Print a message, with what the OS adds (os_fatal_detail(): on Linux the
 * errno text), and exit 1.
 */
void
fatal(const char *fmt, ...)
{
	va_list		 ap;
	const char	*detail = os_fatal_detail();

	fprintf(stderr, "fakert: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	if (detail != NULL)
		fprintf(stderr, ": %s", detail);
	fprintf(stderr, "\n");
	fflush(stderr);
	exit(1);
}

/* Append one line to the events file, flushed, never interleaved. */
void
ev_log(const char *fmt, ...)
{
	va_list	ap;

	if (evf == NULL)
		return;
	os_lock(LOCK_EVENTS);
	va_start(ap, fmt);
	vfprintf(evf, fmt, ap);
	va_end(ap);
	fputc('\n', evf);
	fflush(evf);
	os_unlock(LOCK_EVENTS);
}

/* Parse a decimal or 0x-prefixed unsigned number, or exit. */
uint64_t
rt_parse_number(const char *opt, const char *s, uint64_t min, uint64_t max)
{
	uint64_t	v;

	if (fp_parse_u64(s, &v) == -1 || v < min || v > max) {
		errno = 0;
		fatal("%s: bad number \"%s\"", opt, s);
	}
	return (v);
}

/* Parse --cookie: exactly 32 hex characters. */
static void
parse_cookie(const char *s)
{
	errno = 0;
	switch (fp_parse_cookie(s, cookie)) {
	case -1:
		fatal("--cookie: need 32 hex characters");
	case -2:
		fatal("--cookie: bad hex \"%s\"", s);
	}
}

/*
 * Parse the command line, the same on every OS but for what ADDR is
 * (os_parse_port) and the usage text.  Returns the events file or NULL.
 */
const char *
rt_options(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "connect", required_argument, NULL, 'c' },
		{ "suspend", no_argument, NULL, 's' },
		{ "pid", required_argument, NULL, 'p' },
		{ "cookie", required_argument, NULL, 'k' },
		{ "stream-bytes", required_argument, NULL, 'b' },
		{ "stream-chunk", required_argument, NULL, 'C' },
		{ "events", required_argument, NULL, 'e' },
		{ "exit-after", required_argument, NULL, 'x' },
		{ "name", required_argument, NULL, 'n' },
		{ "info-pid", required_argument, NULL, 'i' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*events = NULL;
	int		 ch, have_cookie = 0;

	opt_pid = os_pid();
	while ((ch = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			if (have_listen)
				fatal("--listen given twice");
			os_parse_port("--listen", optarg, PORT_LISTEN);
			have_listen = 1;
			break;
		case 'c':
			if (have_connect)
				fatal("--connect given twice");
			os_parse_port("--connect", optarg, PORT_CONNECT);
			have_connect = 1;
			break;
		case 's':
			opt_suspend = 1;
			break;
		case 'p':
			opt_pid = rt_parse_number("--pid", optarg, 0,
			    UINT64_MAX);
			break;
		case 'k':
			parse_cookie(optarg);
			have_cookie = 1;
			break;
		case 'b':
			opt_stream_bytes = rt_parse_number("--stream-bytes",
			    optarg, 0, UINT64_MAX);
			break;
		case 'C':
			opt_stream_chunk = rt_parse_number("--stream-chunk",
			    optarg, 1, 16 * 1024 * 1024);
			break;
		case 'e':
			events = optarg;
			break;
		case 'x':
			opt_exit_after = rt_parse_number("--exit-after",
			    optarg, 1, UINT64_MAX);
			break;
		case 'n':
			opt_name = optarg;
			break;
		case 'i':
			opt_info_pid = rt_parse_number("--info-pid", optarg, 1,
			    UINT64_MAX);
			break;
		default:
			os_usage();
		}
	}
	/* Words after "--" are the app's own: only in its command line. */
	if ((optind != argc && strcmp(argv[optind - 1], "--") != 0) ||
	    (!have_listen && !have_connect))
		os_usage();
	errno = 0;
	if (opt_suspend && !have_connect)
		fatal("--suspend needs --connect");
	if (!have_cookie)
		os_random_cookie(cookie);
	/* ProcessInfo's command line is fakert's on every OS. */
	fp_cmdline(cmdline, sizeof(cmdline), "fakert", argc, argv);
	paused = opt_suspend;
	return (events);
}

/*
 * The connect port's next wait after a failed dial: from BACKOFF_MIN_MS
 * up by 5/4 to BACKOFF_MAX_MS.
 */
int
rt_backoff(int backoff)
{
	if (backoff == 0)
		return (BACKOFF_MIN_MS);
	if (backoff * 5 / 4 > BACKOFF_MAX_MS)
		return (BACKOFF_MAX_MS);
	return (backoff * 5 / 4);
}

/* Send one response message with the server command set. */
static void
send_msg(struct conn *c, uint8_t id, const void *payload, size_t len)
{
	uint8_t	msg[IPC_MAX_MSG];

	len = fp_message(msg, SET_SERVER, id, payload, len);
	(void)os_write_full(c, msg, len, FOREVER);
}

static void
send_hresult(struct conn *c, uint8_t id, uint32_t hr)
{
	uint8_t	p[4];

	put_le32(p, hr);
	send_msg(c, id, p, sizeof(p));
}

static void
send_u64(struct conn *c, uint64_t v)
{
	uint8_t	p[8];

	put_le64(p, v);
	send_msg(c, ID_OK, p, sizeof(p));
}

/* Reply OK with i32 0 and do nothing else. */
static int
cmd_ok(struct request *rq)
{
	send_hresult(rq->conn, ID_OK, 0);
	return (0);
}

/* Reply with ProcessInfo, ProcessInfo2 or ProcessInfo3 fields. */
static int
cmd_processinfo(struct request *rq)
{
	static struct fp_buf	b;

	fp_processinfo_put(&b, rq->id, opt_info_pid != 0 ? opt_info_pid :
	    opt_pid, cookie, cmdline, os_platform.os, "x64", opt_name,
	    os_platform.rid);
	if (b.overflow)
		send_hresult(rq->conn, ID_ERROR, HR_E_FAIL);
	else
		send_msg(rq->conn, ID_OK, b.data, b.len);
	return (0);
}

/* Resume startup if the suspended connect port delivered the command. */
static int
cmd_resume(struct request *rq)
{
	send_hresult(rq->conn, ID_OK, 0);
	if (paused && rq->from == PORT_CONNECT) {
		paused = 0;
		os_resume();
	}
	return (0);
}

/* Accept StartupProfiler only while startup is paused. */
static int
cmd_startup_profiler(struct request *rq)
{
	if (paused)
		send_hresult(rq->conn, ID_OK, 0);
	else
		send_hresult(rq->conn, ID_ERROR, HR_INVALIDARG);
	return (0);
}

/* Reply with the environment size, then send the block itself. */
static int
cmd_environment(struct request *rq)
{
	static struct fp_buf	cont;
	struct fp_buf		head;
	const char		*env[] = {
		"FAKERT=1",
		"LANG=C.UTF-8",
		os_platform.path,
		os_platform.home
	};

	fp_environment_put(&head, &cont, env, sizeof(env) / sizeof(env[0]));
	send_msg(rq->conn, ID_OK, head.data, head.len);
	(void)os_write_full(rq->conn, cont.data, cont.len, FOREVER);
	return (0);
}

/*
 * Stream one EventPipe session until stopped, complete or broken: the
 * body of the thread os_stream_start() starts for session slot i.
 */
void
rt_stream(int i)
{
	struct session	*s = &sessions[i];
	struct fp_stream st;
	uint8_t		*chunk;
	char		 hex[SHA256_HEX_LEN];
	uint64_t	 left;
	size_t		 n, w;
	int		 stop, broken = 0;

	chunk = malloc(opt_stream_chunk);
	if (chunk == NULL || fp_stream_init(&st, s->id) == -1)
		fatal("stream setup");
	for (;;) {
		os_lock(LOCK_SESSIONS);
		stop = s->stop;
		os_unlock(LOCK_SESSIONS);
		if (stop || os_quitting())
			break;
		n = opt_stream_chunk;
		if (opt_stream_bytes != 0) {
			left = opt_stream_bytes - st.total;
			if (left == 0)
				break;
			if (left < n)
				n = left;
		}
		fp_stream_fill(&st, chunk, n);
		w = os_write_full(s->conn, chunk, n, FOREVER);
		fp_stream_sent(&st, chunk, w);
		if (w < n) {
			if (!os_quitting())
				broken = 1;
			break;
		}
	}
	if (fp_sha256_hex(&st.md, hex) == -1)
		fatal("stream digest");
	if (broken)
		ev_log("stream-broken %" PRIu64 " %" PRIu64, s->id, st.total);
	else
		ev_log("stream-end %" PRIu64 " %" PRIu64 " %s", s->id,
		    st.total, hex);
	free(chunk);
	os_close(s->conn);

	os_lock(LOCK_SESSIONS);
	s->conn = NULL;
	s->state = SS_DONE;
	os_sessions_wake();
	os_unlock(LOCK_SESSIONS);
}

/* Join sessions whose streaming thread has finished; call locked. */
void
rt_sessions_reap(void)
{
	int	i;

	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state != SS_DONE)
			continue;
		os_stream_join(i);
		sessions[i].state = SS_FREE;
	}
}

/* At exit: wait for every stream to end, and join them all. */
void
rt_sessions_finish(void)
{
	int	i;

	os_lock(LOCK_SESSIONS);
	for (i = 0; i < MAX_SESSIONS; i++) {
		while (sessions[i].state == SS_RUNNING)
			os_sessions_wait();
	}
	rt_sessions_reap();
	os_unlock(LOCK_SESSIONS);
}

/* Start a session: reply with its id and hand the stream to a thread. */
static int
cmd_collect(struct request *rq)
{
	struct session	*s = NULL;
	int		 i;

	if (rq->len < 4) {
		send_hresult(rq->conn, ID_ERROR, HR_BAD_ENCODING);
		return (0);
	}
	os_lock(LOCK_SESSIONS);
	rt_sessions_reap();
	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state == SS_FREE) {
			s = &sessions[i];
			break;
		}
	}
	if (s == NULL) {
		os_unlock(LOCK_SESSIONS);
		send_hresult(rq->conn, ID_ERROR, HR_E_FAIL);
		return (0);
	}
	s->state = SS_RUNNING;
	s->stop = 0;
	s->conn = rq->conn;
	s->id = 0x00007f3a00000000ULL + 0x40 * next_session++;
	send_u64(rq->conn, s->id);
	ev_log("stream-start %" PRIu64, s->id);
	if (os_stream_start(i) == -1) {
		s->state = SS_FREE;
		s->conn = NULL;
		os_unlock(LOCK_SESSIONS);
		return (0);
	}
	os_unlock(LOCK_SESSIONS);
	return (1);
}

/* Stop a session, wait for its stream to close, then reply. */
static int
cmd_stop(struct request *rq)
{
	struct session	*s = NULL;
	uint64_t	 id;
	int		 i;

	if (rq->len < 8) {
		send_hresult(rq->conn, ID_ERROR, HR_BAD_ENCODING);
		return (0);
	}
	id = get_le64(rq->payload);
	os_lock(LOCK_SESSIONS);
	for (i = 0; i < MAX_SESSIONS; i++) {
		if (sessions[i].state == SS_RUNNING && sessions[i].id == id) {
			s = &sessions[i];
			break;
		}
	}
	if (s == NULL) {
		os_unlock(LOCK_SESSIONS);
		send_hresult(rq->conn, ID_ERROR, HR_INVALIDARG);
		return (0);
	}
	s->stop = 1;
	while (s->state != SS_DONE)
		os_sessions_wait();
	os_stream_join(i);
	s->state = SS_FREE;
	os_unlock(LOCK_SESSIONS);
	send_u64(rq->conn, id);
	return (0);
}

static const struct command *
find_command(uint8_t set, uint8_t id)
{
	size_t	i;

	for (i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
		if (commands[i].set == set && commands[i].id == id)
			return (&commands[i]);
	}
	return (NULL);
}

/*
 * Serve exactly one message on c, as the runtime server loop does, and
 * close the connection unless a streaming session took it.  The first
 * npre bytes of the message were read already (a parked connection's,
 * on Windows).
 */
void
rt_serve(struct conn *c, enum port from, const uint8_t *pre, size_t npre)
{
	static uint8_t		 msg[IPC_MAX_MSG];
	const struct command	*cmd;
	struct request		 rq;
	struct fp_header	 h;
	size_t			 got, size;
	int			 r, kept = 0;

	if (npre > 0)
		memcpy(msg, pre, npre);
	rx_total += npre;
	r = os_read_full(c, msg + npre, IPC_HDR_LEN - npre, &got);
	rx_total += got;
	got += npre;
	if (r == RD_QUIT)
		goto done;
	if (r != RD_OK) {
		ev_log("bad-message short-header %zu", got);
		send_hresult(c, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	fp_header(msg, &h);
	size = h.size;
	if (size < IPC_HDR_LEN) {
		ev_log("bad-message size %d", IPC_HDR_LEN);
		send_hresult(c, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	r = os_read_full(c, msg + IPC_HDR_LEN, size - IPC_HDR_LEN, &got);
	rx_total += got;
	if (r == RD_QUIT)
		goto done;
	if (r != RD_OK) {
		ev_log("bad-message short-payload %zu", IPC_HDR_LEN + got);
		send_hresult(c, ID_ERROR, HR_BAD_ENCODING);
		goto done;
	}
	if (!h.magic_ok) {
		ev_log("bad-message magic %zu", size);
		send_hresult(c, ID_ERROR, HR_UNKNOWN_MAGIC);
		goto done;
	}
	if ((cmd = find_command(h.set, h.id)) == NULL) {
		ev_log("bad-message unknown-command %zu", size);
		send_hresult(c, ID_ERROR, HR_UNKNOWN_COMMAND);
		goto done;
	}
	ev_log("command 0x%02X 0x%02X %zu %s", cmd->set, cmd->id, size,
	    cmd->name);
	rq.conn = c;
	rq.from = from;
	rq.set = cmd->set;
	rq.id = cmd->id;
	rq.payload = msg + IPC_HDR_LEN;
	rq.len = size - IPC_HDR_LEN;
	kept = cmd->fn(&rq);
	served++;
done:
	if (!kept)
		os_close(c);
	ev_log("rx-bytes %" PRIu64, rx_total);
}

/* The peer hung up on a parked connection: close it and say so. */
void
rt_hup(struct conn *c)
{
	os_close(c);
	ev_log("parked-hup");
	ev_log("rx-bytes %" PRIu64, rx_total);
}

/* ResumeRuntime resumed startup: say so, as the runtime would go on. */
void
rt_resumed(void)
{
	ev_log("resumed");
	fprintf(stderr, "fakert: resumed\n");
	fflush(stderr);
}

/* The last line of the events file, which it closes. */
void
rt_exit(void)
{
	ev_log("exit");
	if (evf != NULL)
		fclose(evf);
	evf = NULL;
}
