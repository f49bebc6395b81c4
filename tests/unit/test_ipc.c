/* SPDX-License-Identifier: ISC */

/* Unit tests of the wire format: header and advertise classification. */

#include "config.h"

#include <stdlib.h>
#include <string.h>

#include "router/ipc.h"
#include "tap.h"

static const uint8_t	 magic[14] = "DOTNET_IPC_V1";

/* Build a message of size bytes (header included) with a given header. */
static size_t
message(uint8_t *buf, uint16_t size, uint8_t set, uint8_t id,
    uint16_t reserved)
{
	size_t	 i;

	memcpy(buf, magic, 14);
	buf[14] = size & 0xff;
	buf[15] = size >> 8;
	buf[16] = set;
	buf[17] = id;
	buf[18] = reserved & 0xff;
	buf[19] = reserved >> 8;
	for (i = 20; i < size; i++)
		buf[i] = (uint8_t)(i * 7);
	return (size < 20 ? 20 : size);
}

static void
test_greetings(void)
{
	struct greeting	 g;
	struct advertise adv = { .pid = 0x0102030405060708ULL };
	static uint8_t	 buf[65536];
	uint8_t		 advr[ADVR_LEN];
	size_t		 len, i;
	int		 all_more;

	ipc_classify(buf, 0, &g);
	ok(g.kind == GREETING_MORE, "no bytes: need more");

	ipc_classify((const uint8_t *)"D", 1, &g);
	ok(g.kind == GREETING_MORE && g.need == 20, "'D': need a header");
	ipc_classify((const uint8_t *)"A", 1, &g);
	ok(g.kind == GREETING_MORE && g.need == ADVR_LEN,
	    "'A': need an advertise");
	ipc_classify((const uint8_t *)"GET / HTTP/1.1\r\n", 16, &g);
	ok(g.kind == GREETING_INVALID && g.hresult == HRESULT_UNKNOWN_MAGIC,
	    "HTTP request: invalid, UNKNOWN_MAGIC, as the runtime answers");
	ipc_classify((const uint8_t *)"DOTNET_IPC_V2", 13, &g);
	ok(g.kind == GREETING_INVALID && g.hresult == HRESULT_UNKNOWN_MAGIC,
	    "wrong magic version: invalid, UNKNOWN_MAGIC");
	ipc_classify((const uint8_t *)"ADVR_V2", 7, &g);
	ok(g.kind == GREETING_INVALID, "wrong advertise magic: invalid");

	for (i = 0; i < IPC_COOKIE_LEN; i++)
		adv.cookie[i] = (uint8_t)(0xa0 + i);
	ipc_advertise_build(advr, &adv);
	ok(memcmp(advr, "ADVR_V1\0", 8) == 0 && advr[32] == 0 &&
	    advr[33] == 0, "advertise: magic and zero future field");
	ok(advr[24] == 0x08 && advr[31] == 0x01, "advertise: pid little-endian");
	ipc_classify(advr, ADVR_LEN - 1, &g);
	ok(g.kind == GREETING_MORE, "advertise less one byte: need more");
	ipc_classify(advr, ADVR_LEN, &g);
	ok(g.kind == GREETING_ADVERTISE && g.advertise.pid == adv.pid &&
	    memcmp(g.advertise.cookie, adv.cookie, IPC_COOKIE_LEN) == 0,
	    "advertise: cookie and pid round-trip");

	len = message(buf, 19, 4, 0, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID && g.hresult == HRESULT_BAD_ENCODING,
	    "size 19: invalid, BAD_ENCODING");
	len = message(buf, 0, 4, 0, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID, "size 0: invalid");
	len = message(buf, 20, 4, 0, 1);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID && g.hresult != 0,
	    "reserved not zero: invalid");
	len = message(buf, 24, 0xff, 0xff, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_INVALID, "client-sent 0xFF set: invalid");

	len = message(buf, 20, 4, 0, 0);
	ipc_classify(buf, len, &g);
	ok(g.kind == GREETING_COMMAND && g.need == 20 && g.header.set == 4 &&
	    g.header.id == 0, "ProcessInfo: a complete command of 20 bytes");
	ipc_classify(buf, 19, &g);
	ok(g.kind == GREETING_MORE, "ProcessInfo less one byte: need more");

	len = message(buf, 65535, 2, 3, 0);
	ipc_classify(buf, 20, &g);
	ok(g.kind == GREETING_MORE && g.need == 65535,
	    "largest message: header tells the size");
	ipc_classify(buf, 65534, &g);
	ok(g.kind == GREETING_MORE, "largest message less one: need more");
	ipc_classify(buf, 65535, &g);
	ok(g.kind == GREETING_COMMAND, "largest message: complete");
	ipc_classify(buf, 65536, &g);
	ok(g.kind == GREETING_COMMAND && g.need == 65535,
	    "trailing bytes: the message is still the first 65535");

	/* Any prefix of a valid message is "more", whatever its length. */
	len = message(buf, 300, 2, 4, 0);
	all_more = 1;
	for (i = 0; i < len; i++) {
		ipc_classify(buf, i, &g);
		if (g.kind != GREETING_MORE)
			all_more = 0;
	}
	ok(all_more, "every proper prefix of a 300-byte command: need more");
	all_more = 1;
	for (i = 0; i < ADVR_LEN; i++) {
		ipc_classify(advr, i, &g);
		if (g.kind != GREETING_MORE)
			all_more = 0;
	}
	ok(all_more, "every proper prefix of an advertise: need more");
}

static void
test_frames(void)
{
	static const uint8_t want[24] = {
		'D', 'O', 'T', 'N', 'E', 'T', '_', 'I', 'P', 'C', '_', 'V',
		'1', 0, 24, 0, 0xff, 0xff, 0, 0, 0x05, 0x00, 0x07, 0x80
	};
	uint8_t		 frame[24], req[20], reply[128];
	struct advertise adv;
	uint32_t	 hresult = 0;
	size_t		 i;

	ipc_error_frame(frame, HRESULT_ACCESS_DENIED);
	ok(memcmp(frame, want, 24) == 0, "access-denied frame, byte for byte");

	ipc_request(req, IPC_SET_PROCESS, 0);
	ok(memcmp(req, magic, 14) == 0 && req[14] == 20 && req[15] == 0 &&
	    req[16] == 4 && req[17] == 0, "ProcessInfo request");

	memset(reply, 0, sizeof(reply));
	memcpy(reply, magic, 14);
	reply[14] = 64;
	reply[16] = 0xff;
	reply[17] = 0x00;
	reply[20] = 0x39;		/* pid 12345 */
	reply[21] = 0x30;
	for (i = 0; i < 16; i++)
		reply[28 + i] = (uint8_t)i;
	ok(ipc_processinfo_parse(reply, 64, &adv, &hresult) == 0 &&
	    adv.pid == 12345 && adv.cookie[15] == 15,
	    "ProcessInfo reply: pid and cookie");
	ok(ipc_processinfo_parse(reply, 40, &adv, &hresult) == -1,
	    "truncated ProcessInfo reply: rejected");
	ok(ipc_processinfo_parse(frame, 24, &adv, &hresult) == 1 &&
	    hresult == HRESULT_ACCESS_DENIED, "error frame: its HRESULT");
}

static void
test_names(void)
{
	char			 label[40];
	struct default_name	 dn;

	ok(strcmp(ipc_command_name(4, 0), "ProcessInfo") == 0, "0x0400");
	ok(strcmp(ipc_command_name(2, 7), "CollectTracing6") == 0, "0x0207");
	ok(strcmp(ipc_command_name(1, 3), "GenerateCoreDump3") == 0, "0x0103");
	ok(strcmp(ipc_command_name(4, 7), "ApplyStartupHook") == 0, "0x0407");
	ok(ipc_command_name(4, 9) == NULL, "0x0409 is unknown");
	ok(ipc_command_name(0, 0) == NULL, "0x0000 is unknown");
	ipc_command_label(9, 0xfe, label, sizeof(label));
	ok(strcmp(label, "unknown(0x09,0xfe)") == 0, "label of an unknown");

	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-4242-99887766-socket",
	    0, &dn) == 1 && dn.pid == 4242 && dn.key == 99887766 &&
	    !dn.router, "default port name: pid and key");
	ok(ipc_default_socket_parse("dotnet-diagnostic-dsrouter-1-2-socket",
	    0, &dn) == 0, "dsrouter socket name is not a runtime's");
	ok(ipc_default_socket_parse("dotnet-diagnostic-dsrouter-17-2-socket",
	    1, &dn) == 1 && dn.pid == 17 && dn.key == 2 && dn.router,
	    "... but a router's, when asked");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-12-socket", 1,
	    &dn) == 0, "name without a key is not a runtime's");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-dsrouter--1-2-socket",
	    1, &dn) == 0, "nor a name without a pid");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-0-2-socket",
	    1, &dn) == 0, "nor one with pid 0");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-4294967297-2-socket",
	    1, &dn) == 0, "nor one with a pid beyond 32 bits");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-5--2-socket",
	    1, &dn) == 0, "nor one with a signed key");
	ok(ipc_default_socket_parse("/tmp/dotnet-diagnostic-5-"
	    "99999999999999999999-socket", 1, &dn) == 0,
	    "nor one with a key beyond 64 bits");
	ok(ipc_default_socket_parse("/tmp/app.sock", 1, &dn) == 0,
	    "other names");
}

/* The first bytes of a reply, as a router reads the runtime's answer. */
static void
test_replies(void)
{
	uint8_t		 frame[24], ok_reply[28];
	uint32_t	 hresult = 0;
	size_t		 i;
	int		 more = 1;

	ipc_error_frame(frame, HRESULT_ACCESS_DENIED);
	ok(ipc_reply_classify(frame, 24, &hresult) == REPLY_ERROR &&
	    hresult == HRESULT_ACCESS_DENIED, "an error frame and its HRESULT");
	for (i = 0; i < 24; i++)
		more &= ipc_reply_classify(frame, i, &hresult) == REPLY_MORE;
	ok(more, "fewer than 24 bytes of an error frame: more needed");

	memcpy(ok_reply, frame, 20);
	ok_reply[14] = 28;
	ok_reply[17] = IPC_ID_OK;
	ok(ipc_reply_classify(ok_reply, 20, &hresult) == REPLY_OK,
	    "an OK is known from its header");
	ok(ipc_reply_classify((const uint8_t *)"Nettrace", 8, &hresult) ==
	    REPLY_OTHER, "bytes of no header of ours: other, at once");
	ok_reply[16] = IPC_SET_PROCESS;
	ok(ipc_reply_classify(ok_reply, 20, &hresult) == REPLY_OTHER,
	    "a header of another command set: other");
	frame[14] = 20;
	ok(ipc_reply_classify(frame, 24, &hresult) == REPLY_OTHER,
	    "an error frame too short for its HRESULT: other");
	ok(strcmp(ipc_hresult_name(HRESULT_ACCESS_DENIED), "access denied")
	    == 0 && ipc_hresult_name(0x80004005) == NULL,
	    "the protocol's HRESULTs have names");
}

int
main(void)
{
	test_greetings();
	test_frames();
	test_replies();
	test_names();
	return (tap_done());
}
