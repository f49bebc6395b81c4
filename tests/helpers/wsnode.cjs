// SPDX-License-Identifier: ISC
//
// wsnode: a browser runtime's WebSocket as Node's own (undici, node 20
// with --experimental-websocket), the client the .NET browser runtime
// uses under Node: it offers permessage-deflate and sends no Origin.
// Advertises as one binary message, logs each request's size and
// whether it is one whole IPC message, answers OK and closes.
//
// usage: node --experimental-websocket wsnode.cjs URL EVENTS
"use strict";
const fs = require("fs");
const [url, events] = process.argv.slice(2);
const log = (line) => fs.appendFileSync(events, line + "\n");
const ws = new WebSocket(url);
ws.binaryType = "arraybuffer";
ws.onopen = () => {
	const adv = new Uint8Array(34);
	adv.set(Buffer.from("ADVR_V1\0"));
	for (let i = 8; i < 24; i++)
		adv[i] = i;
	new DataView(adv.buffer).setUint32(24, process.pid, true);
	ws.send(adv);
	log("advertise " + process.pid);
};
ws.onmessage = (e) => {
	const m = new Uint8Array(e.data);
	const size = m.length >= 16 ? m[14] | m[15] << 8 : -1;
	log("request " + m.length + (size === m.length ? " whole" : " split"));
	const r = new Uint8Array(24);
	r.set(Buffer.from("DOTNET_IPC_V1\0"));
	r[14] = 24;
	r[16] = 0xff;
	ws.send(r);
	ws.close();
};
ws.onclose = (e) => log("closed " + e.code);
ws.onerror = () => log("error");
