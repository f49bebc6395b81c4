// SPDX-License-Identifier: ISC
//
// A container of a manifest in deploy/ as docker run would run it, for
// tests/containers.sh: what a kubelet makes of the pod spec, as far as
// one container goes.
//
//	node pod-run.cjs NPM_DIR run FILE WORKLOAD CONTAINER [VOLUME=SOURCE...]
//	node pod-run.cjs NPM_DIR configmap FILE NAME DIR
//
// run prints docker run's arguments, one a line: --user from the pod's
// and the container's securityContext (runAsNonRoot refused for uid 0,
// as the kubelet refuses it), the pod's fsGroup as --group-add,
// --read-only, no-new-privileges, the capabilities, --pid host for a
// hostPID pod, the environment, each volumeMount as -v SOURCE:PATH[:ro]
// with the SOURCE given for its volume, --entrypoint for command[0];
// then a line "--" where the image goes, then the rest of the command
// and the args.  WORKLOAD is KIND/NAME; CONTAINER names an init
// container or a container.  What this does not carry over (valueFrom,
// subPath, ...) makes it exit 1 saying so, rather than run something
// else than the manifest says.
//
// configmap writes each key of the ConfigMap NAME into DIR, as the
// kubelet mounts it.

"use strict";

const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const [npmDir, mode, file, ...rest] = process.argv.slice(2);
const yaml = createRequire(path.join(npmDir, "package.json"))("js-yaml");
const docs = yaml.loadAll(fs.readFileSync(file, "utf8"))
    .filter(d => d !== null && d !== undefined);

function die(why) {
	console.error(`pod-run: ${path.basename(file)}: ${why}`);
	process.exit(1);
}

function find(kind, name) {
	const d = docs.find(o => o.kind === kind && o.metadata &&
	    o.metadata.name === name);
	if (!d)
		die(`no ${kind}/${name}`);
	return d;
}

if (mode === "configmap") {
	const [name, dir] = rest;
	const data = find("ConfigMap", name).data || {};
	for (const key of Object.keys(data))
		fs.writeFileSync(path.join(dir, key), data[key]);
	process.exit(0);
}
if (mode !== "run")
	die(`unknown mode ${mode}`);

const [workload, cname, ...vols] = rest;
const [kind, wname] = workload.split("/");
const w = find(kind, wname);
const spec = kind === "Pod" ? w.spec : w.spec.template.spec;
const c = [...(spec.initContainers || []), ...(spec.containers || [])]
    .find(x => x.name === cname);
if (!c)
	die(`${workload} has no container ${cname}`);

const sources = {};
for (const v of vols) {
	const i = v.indexOf("=");
	sources[v.slice(0, i)] = v.slice(i + 1);
}

const out = [];
const psc = spec.securityContext || {};
const sc = c.securityContext || {};
const pick = k => sc[k] !== undefined ? sc[k] : psc[k];
const uid = pick("runAsUser");
const gid = pick("runAsGroup");
if (pick("runAsNonRoot") === true && uid === 0)
	die(`${cname}: runAsNonRoot with runAsUser 0`);
if (uid !== undefined)
	out.push("--user", gid !== undefined ? `${uid}:${gid}` : `${uid}`);
if (psc.fsGroup !== undefined)
	out.push("--group-add", `${psc.fsGroup}`);
for (const g of psc.supplementalGroups || [])
	out.push("--group-add", `${g}`);
if (sc.readOnlyRootFilesystem === true)
	out.push("--read-only");
if (sc.allowPrivilegeEscalation === false)
	out.push("--security-opt", "no-new-privileges");
if (sc.privileged)
	die(`${cname}: privileged is not carried over`);
const caps = sc.capabilities || {};
for (const x of caps.drop || [])
	out.push("--cap-drop", x);
for (const x of caps.add || [])
	out.push("--cap-add", x);
if (spec.hostPID === true)
	out.push("--pid", "host");
for (const e of c.env || []) {
	if (e.value === undefined)
		die(`${cname}: env ${e.name} has no value`);
	out.push("-e", `${e.name}=${e.value}`);
}
for (const m of c.volumeMounts || []) {
	if (m.subPath !== undefined)
		die(`${cname}: subPath is not carried over`);
	if (sources[m.name] === undefined)
		die(`${cname}: no source given for the volume ${m.name}`);
	out.push("-v", `${sources[m.name]}:${m.mountPath}` +
	    (m.readOnly ? ":ro" : ""));
}
if (c.workingDir !== undefined)
	out.push("-w", c.workingDir);
const command = c.command || [];
if (command.length > 0)
	out.push("--entrypoint", command[0]);
out.push("--", ...command.slice(1), ...(c.args || []));
for (const a of out) {
	if (/\n/.test(a))
		die(`${cname}: an argument holds a newline`);
	console.log(a);
}
