// SPDX-License-Identifier: ISC
//
// The checks of tests/deploy.sh:
//
//	node deploy-check.cjs NPM_DIR DSROUTE IMAGE TMPDIR FILE...
//
// reads the manifests in FILE... with js-yaml and prints one line per
// check, "ok: WHAT" or "not ok: WHAT: WHY":
//
// - each object validates against the Kubernetes API schema of its
//   apiVersion and kind (kubernetes-models, JSON schemas compiled with ajv);
// - each dsroute container runs IMAGE, and DSROUTE -n accepts its
//   arguments (with -f, the configuration from its ConfigMap), its
//   volumes standing in as below; one that runs dsroute from the app's
//   own image (command: [.../dsroute]) wraps the app: its arguments end
//   in -- COMMAND;
// - each app's DOTNET_DiagnosticPorts socket is one a dsroute listens on,
//   through the same volume; a sidecar is native (an init container with
//   restartPolicy: Always); a pod that reads other pods' runtimes is
//   hostPID;
// - each NetworkPolicy selects pods of these manifests, on ports their
//   dsroute containers expose, from a namespace only.

"use strict";

const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");
const { execFileSync } = require("child_process");

const [npmDir, dsroute, image, tmpDir, ...files] = process.argv.slice(2);
// The files that stand in for every Secret's (tls.crt, tls.key, ca.crt).
const secretDir = process.env.DEPLOY_SECRET_DIR || null;
const req = createRequire(path.join(npmDir, "package.json"));
const yaml = req("js-yaml");

function report(what, why) {
	console.log(why ? `not ok: ${what}: ${why}` : `ok: ${what}`);
}

// The model of an apiVersion and kind: kubernetes-models/GROUP/VERSION/KIND.
function model(apiVersion, kind) {
	if (typeof apiVersion !== "string" || typeof kind !== "string" ||
	    !/^[A-Za-z]+$/.test(kind))
		return null;
	try {
		return req(`kubernetes-models/${apiVersion}/${kind}`)[kind];
	} catch (e) {
		return null;
	}
}

const objects = [];
for (const file of files) {
	const base = path.basename(file);
	let docs;
	try {
		docs = yaml.loadAll(fs.readFileSync(file, "utf8"))
		    .filter(d => d !== null && d !== undefined);
	} catch (e) {
		report(`${base}: YAML`, e.message.split("\n")[0]);
		continue;
	}
	report(`${base}: YAML`, docs.length > 0 ? null : "no objects");
	for (const doc of docs) {
		const name = `${base}: ${doc.kind}/${doc.metadata && doc.metadata.name}`;
		const M = model(doc.apiVersion, doc.kind);
		if (M === null) {
			report(`${name}: schema`, `no schema for ${doc.apiVersion} ${doc.kind}`);
			continue;
		}
		try {
			new M(doc).validate();
			report(`${name}: schema`);
		} catch (e) {
			report(`${name}: schema`, e.message);
		}
		objects.push({ name, doc });
	}
}

// Pod templates: a Pod's spec, or a workload's template.
const pods = objects.map(o => {
	const d = o.doc;
	const spec = d.kind === "Pod" ? d.spec :
	    d.spec && d.spec.template && d.spec.template.spec;
	const labels = d.kind === "Pod" ? d.metadata.labels :
	    d.spec && d.spec.template && d.spec.template.metadata &&
	    d.spec.template.metadata.labels;
	return spec ? { name: o.name, spec, labels: labels || {} } : null;
}).filter(p => p);
const configMaps = objects.filter(o => o.doc.kind === "ConfigMap");

const containers = spec => [...(spec.initContainers || []).map(c => ({ c, init: true })),
    ...(spec.containers || []).map(c => ({ c, init: false }))];
const isWrapper = c => Array.isArray(c.command) && c.command.length === 1 &&
    /(^|\/)dsroute$/.test(String(c.command[0]));
const isDsroute = c => (typeof c.image === "string" &&
    /(^|\/)dsroute(:|@|$)/.test(c.image)) || isWrapper(c);

// Where a path in a container lands: a volume of the pod or of the node.
function location(spec, c, p) {
	let best = null;
	for (const m of c.volumeMounts || []) {
		const mp = m.mountPath.replace(/\/+$/, "");
		if ((p === mp || p.startsWith(mp + "/")) &&
		    (best === null || mp.length > best.mp.length))
			best = { mp, m };
	}
	if (best === null)
		return `container ${c.name}: ${p}`;
	const rel = p.slice(best.mp.length) + "";
	const sub = best.m.subPath ? "/" + best.m.subPath : "";
	const v = (spec.volumes || []).find(v => v.name === best.m.name) || {};
	if (v.hostPath)
		return "node:" + path.posix.normalize(v.hostPath.path + sub + rel);
	return `pod volume ${v.name}:` + path.posix.normalize("/" + sub + rel);
}

// A dsroute container's arguments, and its configuration file's text.
function configOf(spec, c) {
	const args = c.args || [];
	const i = args.findIndex(a => a === "-f" || a === "--config");
	if (i === -1 || i + 1 >= args.length)
		return null;
	const file = args[i + 1];
	for (const m of c.volumeMounts || []) {
		if (!file.startsWith(m.mountPath.replace(/\/+$/, "") + "/"))
			continue;
		const v = (spec.volumes || []).find(v => v.name === m.name);
		const key = file.slice(m.mountPath.replace(/\/+$/, "").length + 1);
		const cm = v && v.configMap &&
		    configMaps.find(o => o.doc.metadata.name === v.configMap.name);
		if (cm && cm.doc.data && typeof cm.doc.data[key] === "string")
			return { index: i + 1, text: cm.doc.data[key] };
	}
	return { index: i + 1, text: null };
}

// The Unix socket paths a dsroute listens on or dials.
function socketsOf(c, conf) {
	const eps = (c.args || []).filter(a => typeof a === "string" && a.startsWith("uds:"));
	if (conf && conf.text)
		for (const line of conf.text.split("\n")) {
			const m = line.match(/^\s*(local|remote)\s*=\s*(uds:\S+)/);
			if (m)
				eps.push(m[2]);
		}
	return eps.map(e => e.slice(4).split(",")[0]);
}

// The file system a dsroute container's -n sees, since -n checks what the
// start would (socket directories, certificate files): each volume it
// mounts is a directory of its own under ROOT, and returns a function
// that moves the container's paths there.  A Secret holds the files of
// secretDir; each directory of a Unix socket in a volume is made 0700,
// as the pod's init container makes it (which is checked below, run
// twice with busybox).
function standIn(spec, c, root) {
	const mounts = (c.volumeMounts || []).map(m => ({
		mp: m.mountPath.replace(/\/+$/, ""),
		dir: path.join(root, m.name, m.subPath || ""),
		v: (spec.volumes || []).find(v => v.name === m.name) || {},
	})).filter(m => m.mp !== "").sort((a, b) => b.mp.length - a.mp.length);
	for (const m of mounts) {
		fs.mkdirSync(m.dir, { recursive: true, mode: 0o700 });
		if (m.v.secret && secretDir !== null)
			for (const f of fs.readdirSync(secretDir))
				fs.copyFileSync(path.join(secretDir, f),
				    path.join(m.dir, f));
	}
	if (mounts.length === 0)
		return s => s;
	// One pass, the longest mount path first: a path moved is not moved
	// again by a mount at /tmp.
	const esc = s => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
	const re = new RegExp(`(?<=^|[=:\\s])(${mounts.map(m => esc(m.mp))
	    .join("|")})(?=/|,|\\s|$)`, "gm");
	return s => s.replace(re, mp => mounts.find(m => m.mp === mp).dir);
}

let n = 0;
const listeners = [];	// { pod, loc }
for (const pod of pods) {
	for (const { c, init } of containers(pod.spec)) {
		if (!isDsroute(c))
			continue;
		const what = `${pod.name}: container ${c.name}`;
		if (isWrapper(c)) {
			// The app's image, with dsroute copied in from IMAGE.
			const args = (c.args || []).map(String);
			const dash = args.indexOf("--");
			report(`${what}: dsroute wraps the app (-- COMMAND)`,
			    dash !== -1 && dash + 1 < args.length ? null :
			    "no -- COMMAND in its arguments");
		} else
			report(`${what}: image ${image}`, c.image === image ?
			    null : `image ${c.image}`);
		const conf = configOf(pod.spec, c);
		const root = fs.mkdtempSync(path.join(tmpDir, "pod."));
		const moved = standIn(pod.spec, c, root);
		let args = (c.args || []).map(a => moved(String(a)));
		let text = null;
		if (conf !== null) {
			if (conf.text === null) {
				report(`${what}: its configuration file is in a ConfigMap`,
				    `${(c.args || [])[conf.index]} is in none of these manifests`);
				continue;
			}
			text = moved(conf.text);
			const f = path.join(tmpDir, `conf.${n++}`);
			fs.writeFileSync(f, text);
			args[conf.index] = f;
		}
		for (const s of socketsOf({ args }, text === null ? null : { text }))
			if (s.startsWith(root + "/"))
				fs.mkdirSync(path.dirname(s), { recursive: true,
				    mode: 0o700 });
		try {
			execFileSync(dsroute, ["-n", ...args], { stdio: "pipe" });
			report(`${what}: dsroute -n accepts its arguments`);
		} catch (e) {
			report(`${what}: dsroute -n accepts its arguments`,
			    String(e.stderr).trim() || e.message);
		}
		for (const s of socketsOf(c, conf))
			listeners.push({ pod, c, init, loc: location(pod.spec, c, s) });
	}
}

// Each runtime's socket is one a dsroute has.
for (const pod of pods) {
	for (const { c } of containers(pod.spec)) {
		const env = (c.env || []).find(e => e.name === "DOTNET_DiagnosticPorts");
		if (!env)
			continue;
		const what = `${pod.name}: container ${c.name}: DOTNET_DiagnosticPorts`;
		const loc = location(pod.spec, c, String(env.value).split(",")[0]);
		// A pod's volume is its own; the node's, every pod's.
		const near = listeners.filter(l => l.pod === pod ||
		    l.loc.startsWith("node:"));
		const l = near.find(l => l.loc === loc);
		report(`${what} reaches a dsroute`, l ? null :
		    `${loc}; dsroute has ${near.map(l => l.loc).join(", ") || "none"}`);
		if (!l)
			continue;
		if (l.pod === pod)
			report(`${pod.name}: dsroute is a native sidecar`,
			    l.init && l.c.restartPolicy === "Always" ? null :
			    "not an init container with restartPolicy: Always");
		else
			report(`${l.pod.name}: hostPID, to see other pods' runtimes`,
			    l.pod.spec.hostPID === true ? null : "hostPID is not true");
	}
}

// Each NetworkPolicy guards dsroute ports of pods here, from namespaces.
for (const o of objects.filter(o => o.doc.kind === "NetworkPolicy")) {
	const sel = (o.doc.spec.podSelector || {}).matchLabels || {};
	const chosen = pods.filter(p => Object.keys(sel).length > 0 &&
	    Object.entries(sel).every(([k, v]) => p.labels[k] === v));
	report(`${o.name}: selects pods of these manifests`,
	    chosen.length > 0 ? null : `none labelled ${JSON.stringify(sel)}`);
	const dsPorts = new Set(chosen.flatMap(p => containers(p.spec)
	    .filter(({ c }) => isDsroute(c))
	    .flatMap(({ c }) => (c.ports || []).map(q => q.containerPort))));
	for (const rule of (o.doc.spec.ingress || []).filter(r => r.from)) {
		const ports = (rule.ports || []).map(q => q.port);
		report(`${o.name}: lets in only from namespaces`,
		    rule.from.every(f => f.namespaceSelector && !f.ipBlock) ?
		    null : JSON.stringify(rule.from));
		report(`${o.name}: on dsroute's ports`,
		    ports.length > 0 && ports.every(p => dsPorts.has(p)) ? null :
		    `ports ${JSON.stringify(ports)}, dsroute has ${JSON.stringify([...dsPorts])}`);
	}
}

// Each init container that runs to completion (not a sidecar) must
// succeed when it runs again, as it does when its pod restarts and finds
// its volumes as it left them.  Its command runs twice with busybox, its
// mount paths moved under TMPDIR, a directory per volume.
function busybox() {
	try {
		execFileSync("busybox", ["true"], { stdio: "pipe" });
		return true;
	} catch (e) {
		return false;
	}
}
const haveBusybox = busybox();
for (const pod of pods) {
	for (const c of pod.spec.initContainers || []) {
		if (c.restartPolicy === "Always" || !c.command)
			continue;
		const what = `${pod.name}: init container ${c.name}: its command succeeds when run again`;
		if (!haveBusybox) {
			console.log(`skip: ${what}: no busybox to run it with`);
			continue;
		}
		const root = fs.mkdtempSync(path.join(tmpDir, "init."));
		const moved = s => {
			for (const m of c.volumeMounts || []) {
				const mp = m.mountPath.replace(/\/+$/, "");
				s = s.split(mp).join(path.join(root, m.name));
			}
			return s;
		};
		for (const m of c.volumeMounts || [])
			fs.mkdirSync(path.join(root, m.name), { recursive: true });
		const argv = [...c.command, ...(c.args || [])].map(a => moved(String(a)));
		let why = null;
		for (const run of ["first", "second"]) {
			try {
				execFileSync("busybox", argv, { stdio: "pipe" });
			} catch (e) {
				why = `the ${run} run: ${String(e.stderr).trim() || e.message}`;
				break;
			}
		}
		report(what, why);
	}
}
