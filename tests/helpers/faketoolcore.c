/* SPDX-License-Identifier: ISC */

/*
 * faketoolcore.c: the fake tool's commands, shared by faketool and
 * winfaketool (faketoolcore.h).  Each command but stop's helper runs on
 * the main thread; collect --stop-after-bytes stops its session from a
 * second thread, which the OS starts, while the main one reads on.
 */

#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "faketoolcore.h"
#include "le.h"

#define MAX_ENV_BYTES		(16 * 1024 * 1024)
#define MAX_RAW_REPLY		(1024 * 1024)

struct reply {
	uint8_t			 set;
	uint8_t			 id;
	uint16_t		 size;
	uint8_t			 payload[IPC_MAX_PAYLOAD];
	size_t			 len;
};

/* Global options. */
int64_t			 deadline;
int64_t			 opt_silent_ms;
static int		 opt_shut_wr;

/* collect --stop-after-bytes: the session the stopper thread stops. */
static uint64_t		 stopper_id;
static int		 stopper_status;

/* Print one result line on stdout, whole and flushed. */
void
out(const char *fmt, ...)
{
	va_list	ap;

	os_out_lock();
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	os_out_unlock();
}

/* Print a diagnostic on stderr. */
void
diag(const char *fmt, ...)
{
	va_list	ap;

	os_out_lock();
	fprintf(stderr, "faketool: ");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	fflush(stderr);
	os_out_unlock();
}

/* Print the line for a failed I/O result and return the exit status. */
static int
io_status(enum io r)
{
	switch (r) {
	case IO_OK:
		return (0);
	case IO_EOF:
		out("eof");
		return (EXIT_EOF);
	case IO_TIMEOUT:
		out("timeout");
		return (EXIT_TIMEOUT);
	default:
		out("%s", os_errtext());
		return (EXIT_EOF);
	}
}

/* Read exactly len bytes before until. */
enum io
read_full(struct conn *c, void *buf, size_t len, int64_t until)
{
	uint8_t	*p = buf;
	size_t	 done = 0, n;
	enum io	 r;

	while (done < len) {
		if ((r = os_read_some(c, p + done, len - done, &n, until)) !=
		    IO_OK)
			return (r);
		done += n;
	}
	return (IO_OK);
}

/* Write one request message on c. */
static enum io
send_request(struct conn *c, uint8_t set, uint8_t id, const void *payload,
    size_t len)
{
	static __thread uint8_t	msg[IPC_MAX_MSG];
	enum io			r;

	r = os_write_full(c, msg, fp_message(msg, set, id, payload, len),
	    deadline);
	if (r == IO_OK && opt_shut_wr)
		os_shut_wr(c);
	return (r);
}

/*
 * Read one reply and check its header strictly.  Returns 0, or the exit
 * status after printing why.
 */
static int
read_reply(struct conn *c, struct reply *rp)
{
	uint8_t			hdr[IPC_HDR_LEN];
	struct fp_header	h;
	enum io			r;

	if ((r = read_full(c, hdr, sizeof(hdr), deadline)) != IO_OK)
		return (io_status(r));
	fp_header(hdr, &h);
	rp->size = h.size;
	rp->set = h.set;
	rp->id = h.id;
	if (!h.magic_ok) {
		diag("reply: bad magic");
		return (EXIT_ERROR);
	}
	if (rp->size < IPC_HDR_LEN) {
		diag("reply: size %u < 20", rp->size);
		return (EXIT_ERROR);
	}
	rp->len = rp->size - IPC_HDR_LEN;
	if ((r = read_full(c, rp->payload, rp->len, deadline)) != IO_OK)
		return (io_status(r));
	if (rp->set != SET_SERVER) {
		diag("reply: command set 0x%02X, not 0xFF", rp->set);
		return (EXIT_ERROR);
	}
	if (rp->id != ID_OK && rp->id != ID_ERROR) {
		diag("reply: unknown response id 0x%02X", rp->id);
		return (EXIT_ERROR);
	}
	if (rp->id == ID_ERROR && rp->len < 4) {
		diag("reply: error frame without hresult");
		return (EXIT_ERROR);
	}
	return (0);
}

/* Print "error 0xHRESULT" for an error frame and return 1. */
static int
error_frame(const struct reply *rp)
{
	out("error 0x%08" PRIX32, get_le32(rp->payload));
	return (EXIT_ERROR);
}

/*
 * Send a command on a new connection and read the reply.  Returns 0 with
 * *rp filled (maybe an error frame) and *cp still open, or a status.
 */
static int
exchange(uint8_t set, uint8_t id, const void *payload, size_t len,
    struct reply *rp, struct conn **cp)
{
	struct conn	*c;
	enum io		 r;
	int		 status;

	if ((r = os_open(&c)) != IO_OK)
		return (io_status(r));
	if ((r = send_request(c, set, id, payload, len)) != IO_OK) {
		os_close(c);
		return (io_status(r));
	}
	if ((status = read_reply(c, rp)) != 0) {
		os_close(c);
		return (status);
	}
	*cp = c;
	return (0);
}

/*
 * Run a simple command on a new connection: send it, read the reply,
 * close.  Returns 0 with *rp filled (maybe an error frame) or a status.
 */
static int
transact(uint8_t set, uint8_t id, const void *payload, size_t len,
    struct reply *rp)
{
	struct conn	*c;
	int		 status;

	if ((status = exchange(set, id, payload, len, rp, &c)) == 0)
		os_close(c);
	return (status);
}

/*
 * Start a command whose reply more follows on the same connection: the
 * reply must be OK with a payload of want bytes.  Returns 0 with *rp
 * filled and *cp open, or a status.
 */
static int
open_stream(const char *what, uint8_t set, uint8_t id, const void *payload,
    size_t len, size_t want, struct reply *rp, struct conn **cp)
{
	int	status;

	if ((status = exchange(set, id, payload, len, rp, cp)) != 0)
		return (status);
	if (rp->id == ID_ERROR) {
		os_close(*cp);
		return (error_frame(rp));
	}
	if (rp->len != want) {
		os_close(*cp);
		diag("%s reply: payload %zu, not %zu", what, rp->len, want);
		return (EXIT_ERROR);
	}
	return (0);
}

/* ProcessInfo, ProcessInfo2 or ProcessInfo3 (id 0x00, 0x04, 0x08). */
static int
do_processinfo(uint8_t id, int quiet)
{
	static struct reply		rp;
	static struct fp_processinfo	pi;
	int				status;

	if ((status = transact(SET_PROCESS, id, NULL, 0, &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR)
		return (error_frame(&rp));
	if (fp_processinfo_get(&pi, id, rp.payload, rp.len) == -1) {
		diag("ProcessInfo reply: malformed payload");
		return (EXIT_ERROR);
	}
	if (quiet)
		return (0);
	if (id == 0x00)
		out("pid=%" PRIu64 " cookie=%s cmdline=%s os=%s arch=%s",
		    pi.pid, pi.cookie, pi.cmdline, pi.os, pi.arch);
	else if (id == 0x04 || pi.version < 1)
		out("pid=%" PRIu64 " cookie=%s cmdline=%s os=%s arch=%s "
		    "entrypoint=%s clrversion=%s", pi.pid, pi.cookie,
		    pi.cmdline, pi.os, pi.arch, pi.entrypoint, pi.clrversion);
	else
		out("pid=%" PRIu64 " cookie=%s cmdline=%s os=%s arch=%s "
		    "entrypoint=%s clrversion=%s rid=%s", pi.pid, pi.cookie,
		    pi.cmdline, pi.os, pi.arch, pi.entrypoint, pi.clrversion,
		    pi.rid);
	return (0);
}

/* ResumeRuntime. */
static int
do_resume(int quiet)
{
	static struct reply	rp;
	int			status;

	if ((status = transact(SET_PROCESS, 0x01, NULL, 0, &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR)
		return (error_frame(&rp));
	if (rp.len != 4) {
		diag("ResumeRuntime reply: payload %zu bytes, not 4", rp.len);
		return (EXIT_ERROR);
	}
	if (!quiet)
		out("ok");
	return (0);
}

/* ProcessEnvironment: reply, then the continuation read to EOF. */
static int
do_env(void)
{
	static struct reply	 rp;
	struct conn		*c;
	uint8_t			*cont;
	uint32_t		 expect, count;
	size_t			 have = 0, n;
	enum io			 r;
	int			 status;

	if ((status = open_stream("ProcessEnvironment", SET_PROCESS, 0x02,
	    NULL, 0, 6, &rp, &c)) != 0)
		return (status);
	expect = get_le32(rp.payload);
	if (expect > MAX_ENV_BYTES) {
		os_close(c);
		diag("ProcessEnvironment: %" PRIu32 " bytes is too many",
		    expect);
		return (EXIT_ERROR);
	}
	if ((cont = malloc((size_t)expect + 1)) == NULL) {
		os_close(c);
		diag("out of memory");
		return (EXIT_ERROR);
	}
	/* Read to EOF, as the managed client does, then check the length. */
	for (;;) {
		r = os_read_some(c, cont + have, expect + 1 - have, &n,
		    deadline);
		if (r != IO_OK)
			break;
		have += n;
		if (have > expect)
			break;
	}
	os_close(c);
	if (r != IO_OK && r != IO_EOF) {
		free(cont);
		return (io_status(r));
	}
	if (have != expect) {
		free(cont);
		if (have < expect)
			return (io_status(IO_EOF));
		diag("ProcessEnvironment: more than %" PRIu32 " bytes",
		    expect);
		return (EXIT_ERROR);
	}
	status = fp_environment_get(cont, have, &count);
	free(cont);
	if (status == -1) {
		diag("ProcessEnvironment: malformed block");
		return (EXIT_ERROR);
	}
	out("env count=%" PRIu32, count);
	return (0);
}

/* StopTracing for id on a new (or the next parked) connection. */
static int
do_stop(uint64_t id, int quiet)
{
	static __thread struct reply	rp;
	uint8_t				p[8];
	int				status;

	put_le64(p, id);
	if ((status = transact(SET_EVENTPIPE, 0x01, p, sizeof(p), &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR)
		return (error_frame(&rp));
	if (rp.len != 8 || get_le64(rp.payload) != id) {
		diag("StopTracing reply: does not echo session id");
		return (EXIT_ERROR);
	}
	if (!quiet)
		out("ok");
	return (0);
}

/* The body of the thread os_stopper_start() starts: StopTracing, quietly. */
void
tool_stopper(void)
{
	stopper_status = do_stop(stopper_id, 1);
}

/* CollectTracing2, then read the stream to EOF with the given options. */
static int
do_collect(int argc, char *argv[])
{
	static struct reply	 rp;
	static uint8_t		 buf[65536];
	struct sha256		 md;
	struct conn		*c;
	uint8_t			 payload[256];
	char			 hex[SHA256_HEX_LEN];
	uint64_t		 stop_after = 0, rate = 0, hangup = 0;
	uint64_t		 expect = 0, total = 0, pause = 0, id, v;
	int64_t			 start, due;
	size_t			 want, n;
	int			 have_expect = 0, stopping = 0, i;
	int			 status;
	enum io			 r = IO_OK;

	for (i = 0; i < argc; i += 2) {
		if (i + 1 >= argc || fp_parse_u64(argv[i + 1], &v) == -1) {
			diag("collect: %s needs a number", argv[i]);
			return (EXIT_USAGE);
		}
		if (strcmp(argv[i], "--stop-after-bytes") == 0)
			stop_after = v;
		else if (strcmp(argv[i], "--rate") == 0 && v > 0)
			rate = v;
		else if (strcmp(argv[i], "--hangup-after-bytes") == 0)
			hangup = v;
		else if (strcmp(argv[i], "--pause-after-bytes") == 0)
			pause = v;
		else if (strcmp(argv[i], "--expect-bytes") == 0) {
			expect = v;
			have_expect = 1;
		} else {
			diag("collect: unknown option %s", argv[i]);
			return (EXIT_USAGE);
		}
	}

	if ((status = open_stream("CollectTracing2", SET_EVENTPIPE, 0x03,
	    payload, fp_collect2_payload(payload), 8, &rp, &c)) != 0)
		return (status);
	id = get_le64(rp.payload);

	if (sha256_init(&md) == -1) {
		os_close(c);
		diag("SHA-256 setup failed");
		return (EXIT_ERROR);
	}
	start = os_now_ms();
	for (;;) {
		if (hangup != 0 && total >= hangup)
			break;
		/* A stalled reader: take nothing more until the deadline. */
		if (pause != 0 && total >= pause) {
			r = os_sleep_ms(deadline - os_now_ms());
			break;
		}
		want = sizeof(buf);
		if (rate != 0 && rate / 20 < want)
			want = rate / 20 > 0 ? rate / 20 : 1;
		if (hangup != 0 && hangup - total < want)
			want = hangup - total;
		if (pause != 0 && pause - total < want)
			want = pause - total;
		if ((r = os_read_some(c, buf, want, &n, deadline)) != IO_OK)
			break;
		sha256_update(&md, buf, n);
		total += n;
		if (stop_after != 0 && !stopping && total >= stop_after) {
			stopper_id = id;
			stopper_status = 0;
			if (os_stopper_start() == -1) {
				r = IO_ERR;
				break;
			}
			stopping = 1;
		}
		if (rate != 0) {
			due = start + (int64_t)(total * 1000 / rate);
			if (due > os_now_ms() &&
			    (r = os_sleep_ms(due - os_now_ms())) != IO_OK)
				break;
		}
	}
	/* Closing here on --hangup-after-bytes is the tool dying. */
	os_close(c);
	if (stopping)
		os_stopper_join();
	if (fp_sha256_hex(&md, hex) == -1) {
		diag("SHA-256 failed");
		return (EXIT_ERROR);
	}
	out("session=%" PRIu64 " bytes=%" PRIu64 " sha256=%s", id, total,
	    hex);
	if (r != IO_OK && r != IO_EOF)
		return (io_status(r));
	if (stopping && stopper_status != 0)
		return (stopper_status);
	if (have_expect && total != expect) {
		diag("collect: expected %" PRIu64 " stream bytes, got %"
		    PRIu64, expect, total);
		return (EXIT_ERROR);
	}
	return (0);
}

/*
 * Read whatever arrives on c until EOF, an error or until, keeping the
 * first MAX_RAW_REPLY bytes in reply and counting the rest in *total.
 */
static enum io
raw_read(struct conn *c, uint8_t *reply, size_t *have, uint64_t *total,
    int64_t until)
{
	static uint8_t	scratch[65536];
	size_t		got;
	enum io		r;

	for (;;) {
		if (*have < MAX_RAW_REPLY)
			r = os_read_some(c, reply + *have,
			    MAX_RAW_REPLY - *have, &got, until);
		else
			r = os_read_some(c, scratch, sizeof(scratch), &got,
			    until);
		if (r != IO_OK)
			return (r);
		if (*have < MAX_RAW_REPLY)
			*have += got;
		*total += got;
	}
}

/*
 * Send raw bytes, optionally held (until SIGUSR1, at most, on Linux),
 * half-closed (not on a pipe) or reset; show replies.
 */
static int
do_raw(int argc, char *argv[])
{
	static uint8_t	 data[IPC_MAX_MSG * 4];
	static char	 hex[2 * 4096 + 1];
	struct conn	*c;
	uint8_t		*reply;
	uint64_t	 chunk = 0, delay = 0, hold = 0, total = 0, v;
	int64_t		 until;
	size_t		 len, off, n, have = 0;
	int		 shut = 0, reset = 0, eof = 0, i;
	enum io		 r = IO_OK;

	if (argc < 1 || fp_hex_decode(argv[0], data, sizeof(data), &len) ==
	    -1) {
		diag("raw: need HEX bytes");
		return (EXIT_USAGE);
	}
	i = 1;
	while (i < argc) {
		if (strcmp(argv[i], "--shut-wr") == 0) {
			if (os_shut_wr_ok("raw: --shut-wr") == -1)
				return (EXIT_USAGE);
			shut = 1;
			i++;
			continue;
		}
		if (strcmp(argv[i], "--reset") == 0) {
			reset = 1;
			i++;
			continue;
		}
		if (i + 1 >= argc || fp_parse_u64(argv[i + 1], &v) == -1) {
			diag("raw: %s needs a number", argv[i]);
			return (EXIT_USAGE);
		}
		if (strcmp(argv[i], "--chunk") == 0 && v > 0)
			chunk = v;
		else if (strcmp(argv[i], "--own-pid-at") == 0 &&
		    v + 8 <= (uint64_t)len)
			put_le64(data + v, os_pid());
		else if (strcmp(argv[i], "--delay-ms") == 0)
			delay = v;
		else if (strcmp(argv[i], "--hold-ms") == 0)
			hold = v;
		else {
			diag("raw: unknown option %s", argv[i]);
			return (EXIT_USAGE);
		}
		i += 2;
	}
	if (chunk == 0)
		chunk = len > 0 ? (uint64_t)len : 1;
	os_raw_signals();
	if ((reply = malloc(MAX_RAW_REPLY)) == NULL) {
		diag("out of memory");
		return (EXIT_ERROR);
	}
	if ((r = os_open(&c)) != IO_OK) {
		free(reply);
		return (io_status(r));
	}

	/* Send, chunk by chunk; a failed write just ends the sending. */
	for (off = 0; off < len; off += n) {
		n = len - off < chunk ? len - off : chunk;
		if ((r = os_write_full(c, data + off, n, deadline)) != IO_OK)
			break;
		if (off + n < len && delay > 0 &&
		    (r = os_sleep_ms(delay)) != IO_OK)
			break;
	}
	if (r == IO_ERR) {
		diag("raw: write: %s", os_errtext());
		r = IO_OK;
	}
	if (r == IO_OK && (shut || opt_shut_wr))
		os_shut_wr(c);

	/* Hold the connection open, collecting whatever arrives. */
	if (r == IO_OK && hold > 0) {
		until = os_now_ms() + (int64_t)hold;
		if (until > deadline)
			until = deadline;
		r = raw_read(c, reply, &have, &total, until);
		if (r == IO_EOF) {
			eof = 1;
			r = IO_OK;
		}
		if (r == IO_TIMEOUT && (until < deadline || os_hold_cut()))
			r = IO_OK;
		if (r == IO_OK && eof)
			r = os_sleep_ms(until - os_now_ms());
	}

	if (r == IO_OK && reset)
		r = os_reset(c);
	else if (r == IO_OK && eof)
		r = IO_EOF;
	else if (r == IO_OK)
		r = raw_read(c, reply, &have, &total, deadline);
	os_close(c);

	if (have == 0)
		out("reply none");
	else {
		if (total > 4096) {
			diag("raw: reply is %" PRIu64 " bytes; showing 4096",
			    total);
			have = 4096;
		}
		fp_hex_string(hex, reply, have);
		out("reply %s", hex);
	}
	free(reply);
	switch (r) {
	case IO_EOF:
		out("eof");
		return (0);
	case IO_TIMEOUT:
		out("timeout");
		return (EXIT_TIMEOUT);
	default:
		if (os_is_reset()) {
			out("reset");
			return (0);
		}
		out("%s", os_errtext());
		return (EXIT_EOF);
	}
}

/* Send an arbitrary well-formed command and describe the reply. */
static int
do_command(int argc, char *argv[])
{
	static struct reply	rp;
	static uint8_t		payload[IPC_MAX_PAYLOAD];
	uint64_t		set, id;
	size_t			len = 0;
	int			status;

	if (argc < 2 || argc > 3 || fp_parse_u64(argv[0], &set) == -1 ||
	    set > 0xff || fp_parse_u64(argv[1], &id) == -1 || id > 0xff ||
	    (argc == 3 && fp_hex_decode(argv[2], payload, sizeof(payload),
	    &len) == -1)) {
		diag("command: need SET ID [HEXPAYLOAD]");
		return (EXIT_USAGE);
	}
	if ((status = transact(set, id, payload, len, &rp)) != 0)
		return (status);
	if (rp.id == ID_ERROR) {
		out("reply set=0x%02X id=0x%02X size=%u hresult=0x%08" PRIX32,
		    rp.set, rp.id, rp.size, get_le32(rp.payload));
		return (error_frame(&rp));
	}
	out("reply set=0x%02X id=0x%02X size=%u payload=%zu", rp.set, rp.id,
	    rp.size, rp.len);
	return (0);
}

/* Run processinfo or resume N times, each on a fresh connection. */
static int
do_repeat(int argc, char *argv[])
{
	uint64_t	count, i;
	int		status = 0;

	if (argc != 2 || fp_parse_u64(argv[0], &count) == -1 ||
	    (strcmp(argv[1], "processinfo") != 0 &&
	    strcmp(argv[1], "resume") != 0)) {
		diag("repeat: need N processinfo|resume");
		return (EXIT_USAGE);
	}
	for (i = 0; i < count; i++) {
		if (strcmp(argv[1], "processinfo") == 0)
			status = do_processinfo(0x00, 1);
		else
			status = do_resume(1);
		if (status != 0) {
			diag("repeat: iteration %" PRIu64 " failed", i + 1);
			return (status);
		}
	}
	out("ok %" PRIu64, count);
	return (0);
}

/*
 * Parse the command line, the same on every OS but for what ADDR is
 * (os_parse_target) and the usage text, and run the command.  Returns
 * the exit status.
 */
int
tool_main(int argc, char *argv[])
{
	static const struct option longopts[] = {
		{ "timeout", required_argument, NULL, 't' },
		{ "shut-wr", no_argument, NULL, 's' },
		{ "silent-ms", required_argument, NULL, 'q' },
		{ NULL, 0, NULL, 0 }
	};
	const char	*cmd;
	char		*end;
	double		 timeout = 30.0;
	uint64_t	 id;
	int		 ch, status, cargc;
	char		**cargv;

	while ((ch = getopt_long(argc, argv, "+", longopts, NULL)) != -1) {
		switch (ch) {
		case 't':
			timeout = strtod(optarg, &end);
			if (*optarg == '\0' || *end != '\0' || timeout <= 0 ||
			    timeout > 86400)
				os_usage();
			break;
		case 's':
			if (os_shut_wr_ok("--shut-wr") == -1)
				os_usage();
			opt_shut_wr = 1;
			break;
		case 'q':
			opt_silent_ms = strtoll(optarg, &end, 10);
			if (*optarg == '\0' || *end != '\0' ||
			    opt_silent_ms < 0)
				os_usage();
			break;
		default:
			os_usage();
		}
	}
	if (argc - optind < 2)
		os_usage();
	if (os_parse_target(argv[optind]) == -1) {
		diag("bad ADDR \"%s\"", argv[optind]);
		os_usage();
	}
	cmd = argv[optind + 1];
	cargc = argc - optind - 2;
	cargv = argv + optind + 2;
	deadline = os_now_ms() + (int64_t)(timeout * 1000);
	if (os_start() == -1)
		return (EXIT_EOF);

	if (strcmp(cmd, "processinfo") == 0 && cargc == 0)
		status = do_processinfo(0x00, 0);
	else if (strcmp(cmd, "processinfo2") == 0 && cargc == 0)
		status = do_processinfo(0x04, 0);
	else if (strcmp(cmd, "processinfo3") == 0 && cargc == 0)
		status = do_processinfo(0x08, 0);
	else if (strcmp(cmd, "resume") == 0 && cargc == 0)
		status = do_resume(0);
	else if (strcmp(cmd, "env") == 0 && cargc == 0)
		status = do_env();
	else if (strcmp(cmd, "collect") == 0)
		status = do_collect(cargc, cargv);
	else if (strcmp(cmd, "stop") == 0 && cargc == 1 &&
	    fp_parse_u64(cargv[0], &id) == 0)
		status = do_stop(id, 0);
	else if (strcmp(cmd, "repeat") == 0)
		status = do_repeat(cargc, cargv);
	else if (strcmp(cmd, "raw") == 0)
		status = do_raw(cargc, cargv);
	else if (strcmp(cmd, "command") == 0)
		status = do_command(cargc, cargv);
	else {
		diag("unknown command or arguments: %s", cmd);
		status = EXIT_USAGE;
	}

	os_finish();
	return (status);
}
