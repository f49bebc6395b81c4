// SPDX-License-Identifier: ISC
//
// The checks of tests/dockerfile.sh: node dockerfile-check.cjs NPM_DIR FILE
// parses FILE with dockerfile-ast (installed under NPM_DIR) and prints one
// line per check, "ok: WHAT" or "not ok: WHAT: WHY".

"use strict";

const fs = require("fs");
const path = require("path");
const { createRequire } = require("module");

const [npmDir, file] = process.argv.slice(2);
const { DockerfileParser } =
    createRequire(path.join(npmDir, "package.json"))("dockerfile-ast");

function report(what, why) {
	console.log(why ? `not ok: ${what}: ${why}` : `ok: ${what}`);
}

// The stages, each its FROM and the instructions after it.
const df = DockerfileParser.parse(fs.readFileSync(file, "utf8"));
const stages = [];
for (const ins of df.getInstructions()) {
	const kw = ins.getKeyword();
	if (kw === "FROM")
		stages.push({ from: ins, ins: [] });
	else if (stages.length > 0)
		stages[stages.length - 1].ins.push(ins);
}
const of = (stage, kw) => stage ? stage.ins.filter(i => i.getKeyword() === kw) : [];
// An instruction's arguments as its words, exec form or shell form.
function words(ins) {
	if (typeof ins.getJSONStrings === "function" &&
	    ins.getJSONStrings().length > 0)
		return ins.getJSONStrings().map(a => a.getJSONValue());
	return ins.getArguments().map(a => a.getValue());
}
const execForm = ins => typeof ins.getJSONStrings === "function" &&
    ins.getJSONStrings().length > 0 &&
    /^\s*\[/.test(ins.getArgumentsContent() || "");

report("two stages at least", stages.length >= 2 ? null :
    `${stages.length} FROM`);
const build = stages[0], last = stages[stages.length - 1];

// The build stage: Debian bookworm, and one RUN, ./dev.sh static.
const base = build ? build.from.getImage() : null;
report("the build stage is Debian bookworm",
    /^debian:bookworm(-slim)?(@sha256:[0-9a-f]+)?$/.test(base || "") ? null :
    `FROM ${base}`);
const runs = of(build, "RUN").map(i => words(i).join(" "));
report("the build stage runs exactly ./dev.sh static",
    runs.length === 1 && runs[0] === "./dev.sh static" ? null :
    `RUN: ${JSON.stringify(runs)}`);

// The final stage: empty, from the build stage's binary only.
const image = last ? last.from.getImage() : null;
report("the final stage is FROM scratch or distroless static",
    stages.length >= 2 && (image === "scratch" ||
    /^gcr\.io\/distroless\/static(-debian\d+)?(:[\w.-]+)?$/.test(image)) ?
    null : `FROM ${image}`);
const lastRuns = of(last, "RUN").length;
report("no RUN in the final stage", lastRuns === 0 ? null :
    `${lastRuns} RUN`);
const stageName = build ? build.from.getBuildStage() : null;
const copies = of(last, "COPY").map(i => ({
	from: (i.getFlags().find(f => f.getName() === "from") || {
	    getValue: () => null }).getValue(),
	args: words(i)
}));
report("the final stage copies the static binary from the build stage",
    copies.length === 1 && copies[0].from === stageName &&
    /\/build\/static\/dsroute$/.test(copies[0].args[0] || "") ? null :
    `COPY: ${JSON.stringify(copies)}`);

// How it runs.
const entry = of(last, "ENTRYPOINT");
report("an exec-form ENTRYPOINT", entry.length === 1 && execForm(entry[0]) ?
    null : entry.map(i => i.getArgumentsContent()).join(" | ") || "none");
const target = copies.length === 1 ? copies[0].args[1] : null;
report("the ENTRYPOINT runs the binary copied in",
    entry.length === 1 && words(entry[0])[0] === target ? null :
    `ENTRYPOINT ${entry.length ? words(entry[0])[0] : "none"}, COPY to ${target}`);
const cmd = of(last, "CMD");
report("an exec-form CMD", cmd.length === 1 && execForm(cmd[0]) ? null :
    cmd.map(i => i.getArgumentsContent()).join(" | ") || "none");
const user = of(last, "USER").map(i => i.getArgumentsContent().trim());
const ids = (user[user.length - 1] || "").match(/^(\d+)(?::(\d+))?$/);
report("USER is a numeric non-root uid:gid",
    ids && ids[2] !== undefined && Number(ids[1]) !== 0 &&
    Number(ids[2]) !== 0 ? null : `USER ${JSON.stringify(user)}`);
report("EXPOSE names a port", of(last, "EXPOSE").length > 0 ? null : "none");
const labels = of(last, "LABEL").flatMap(i => i.getProperties())
    .map(p => p.getName());
const wanted = ["title", "description", "version", "licenses", "source"]
    .map(k => `org.opencontainers.image.${k}`);
const missing = wanted.filter(k => !labels.includes(k));
report("the OCI labels", missing.length === 0 ? null :
    `missing ${missing.join(", ")}`);
