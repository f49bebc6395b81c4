#!/bin/sh
# SPDX-License-Identifier: ISC
#
# The Kubernetes manifests in deploy/, checked offline: every object
# against the Kubernetes API schema of its kind (kubernetes-models, JSON
# schemas compiled with ajv; js-yaml reads the files; both from the npm
# registry, cached outside the repository), every dsroute container's
# arguments by dsroute -n itself (which checks what the start would: each
# volume stands in as a directory of this test's, a Secret holding a
# certificate and key of certs/mkcerts.sh), and the wiring: each app's
# DOTNET_DiagnosticPorts socket is one a dsroute listens on through the
# same volume, a sidecar is native, a wrapper entrypoint runs an app after
# --, the node agent is hostPID, the NetworkPolicy guards dsroute's port
# from a namespace.  Manifests broken
# in each of those ways must fail.  No cluster is involved.

. "${top_srcdir:=$(cd "$(dirname "$0")/.." && pwd)}/tests/lib/lib.sh"
. "$top_srcdir/tests/lib/npm.sh"

npm_packages js-yaml@4.1.0 kubernetes-models@4.5.1
CHECK=$top_srcdir/tests/lib/deploy-check.cjs
version=$(sed -n 's/^AC_INIT(\[dsroute\], \[\([^]]*\)\].*/\1/p' \
    "$top_srcdir/configure.ac")
IMAGE=dsroute:$version

# What dsroute -n reads of a Secret (tls.crt, tls.key, ca.crt): a key and
# certificate that match, from certs/mkcerts.sh.
C=$T/certs
mkdir "$T/secret"
if sh "$top_srcdir/certs/mkcerts.sh" -d "$C" ca ca >/dev/null 2>&1 &&
    sh "$top_srcdir/certs/mkcerts.sh" -d "$C" server localhost \
    dns:localhost >/dev/null 2>&1; then
	cp "$C/localhost.pem" "$T/secret/tls.crt"
	cp "$C/localhost.key" "$T/secret/tls.key"
	cp "$C/ca.pem" "$T/secret/ca.crt"
else
	fail "certs/mkcerts.sh makes the Secret's files"
fi

# checks FILE...: the checker's lines.
checks() {
	DEPLOY_SECRET_DIR=$T/secret \
	    node "$CHECK" "$NPM_DIR" "$DSROUTE" "$IMAGE" "$T" "$@" \
	    2>"$T/node.err" ||
	    echo "not ok: the checker ran: $(head -n 3 "$T/node.err")"
}

# tap FILE: the checker's lines as TAP.
tap() {
	while IFS= read -r line; do
		case "$line" in
		"ok: "*)	pass "${line#ok: }" ;;
		"skip: "*)	line=${line#skip: }
				skip "${line%%: *}" "${line#*: }" ;;
		*)		line=${line#not ok: }
				fail "${line%%: *}" "${line#*: }" ;;
		esac
	done <"$1"
}

manifests=$(ls "$top_srcdir"/deploy/*.yaml)
checks $manifests >"$T/real.out"
tap "$T/real.out"
for f in sidecar mtls node-agent networkpolicy wrapper; do
	check "deploy/$f.yaml is checked" grep -q "^ok: $f.yaml: YAML" \
	    "$T/real.out"
done
# README.md's pod spec (Security), as a Pod: the same checks.
{
	printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: readme}\n'
	awk '/^```/ { inside = 0 } inside { print }
	    prev == "```yaml" && $0 == "spec:" { inside = 1; print }
	    { prev = $0 }' "$top_srcdir/README.md"
} >"$T/readme.yaml"
checks "$T/readme.yaml" >"$T/readme.out"
tap "$T/readme.out"
check "deploy/wrapper.yaml: dsroute is the app's entrypoint" grep -q \
    '^ok: wrapper.yaml: Deployment/app-wrapped: container app: dsroute wraps the app' \
    "$T/real.out"
check "README.md's pod spec runs dsroute as a native sidecar" \
    grep -q '^ok: readme.yaml: Pod/readme: dsroute is a native sidecar' \
    "$T/readme.out"

# Broken manifests: each object breaks one rule.
cat >"$T/broken.yaml" <<'EOF'
apiVersion: apps/v1
kind: Deployment
metadata: {name: port-as-string}
spec:
  selector: {matchLabels: {a: b}}
  template:
    metadata: {labels: {a: b}}
    spec:
      containers:
        - name: app
          image: app
          ports: [{containerPort: "8080"}]
---
apiVersion: v1
kind: Pod
metadata: {name: nameless-container}
spec:
  containers:
    - image: app
---
apiVersion: v1
kind: Gadget
metadata: {name: unknown-kind}
---
apiVersion: v1
kind: Pod
metadata: {name: plain-sidecar}
spec:
  volumes: [{name: diag, emptyDir: {}}]
  containers:
    - name: app
      image: app
      env: [{name: DOTNET_DiagnosticPorts, value: "/diag/run/app.sock,nosuspend"}]
      volumeMounts: [{name: diag, mountPath: /diag}]
    - name: dsroute
      image: example/dsroute
      args: [uds:/diag/run/app.sock, "tls:*:9443,ca=/tls/ca.crt"]
      volumeMounts: [{name: diag, mountPath: /diag}]
---
apiVersion: v1
kind: Pod
metadata: {name: wrong-socket, labels: {dsroute.diagnostics/listener: tls}}
spec:
  volumes: [{name: diag, emptyDir: {}}, {name: other, emptyDir: {}}]
  initContainers:
    - name: dsroute
      image: dsroute:0.1.0
      restartPolicy: Always
      args: [uds:/diag/run/app.sock, tcp:127.0.0.1:9000]
      ports: [{containerPort: 9000}]
      volumeMounts: [{name: diag, mountPath: /diag}]
  containers:
    - name: app
      image: app
      env: [{name: DOTNET_DiagnosticPorts, value: /diag/run/app.sock}]
      volumeMounts: [{name: other, mountPath: /diag}]
---
apiVersion: v1
kind: Pod
metadata: {name: missing-cert}
spec:
  volumes: [{name: diag, emptyDir: {}}, {name: tls, secret: {secretName: dsroute-tls}}]
  initContainers:
    - name: dsroute
      image: dsroute:0.1.0
      restartPolicy: Always
      args: [uds:/diag/run/app.sock, "tls:*:9443,cert=/tls/server.crt,key=/tls/server.key,ca=/tls/ca.crt"]
      volumeMounts: [{name: diag, mountPath: /diag}, {name: tls, mountPath: /tls}]
  containers:
    - name: app
      image: app
---
apiVersion: v1
kind: Pod
metadata: {name: init-once}
spec:
  volumes: [{name: diag, emptyDir: {}}]
  initContainers:
    - name: diag-dir
      image: busybox:1.36
      command: [mkdir, -m, "0700", /diag/run]
      volumeMounts: [{name: diag, mountPath: /diag}]
  containers:
    - name: app
      image: app
---
apiVersion: v1
kind: Pod
metadata: {name: wrapper-without-app}
spec:
  containers:
    - name: app
      image: app-with-dsroute
      command: [/usr/bin/dsroute]
      args: [uds:/tmp/app.sock, tcp:127.0.0.1:9000]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: open-policy}
spec:
  podSelector: {matchLabels: {dsroute.diagnostics/listener: tls}}
  ingress:
    - from: [{ipBlock: {cidr: 0.0.0.0/0}}]
      ports: [{port: 8080}]
EOF
sed -i "s/dsroute:0.1.0/$IMAGE/" "$T/broken.yaml"
checks "$T/broken.yaml" >"$T/broken.out"

# refuted DESC EREGEX: the checker said "not ok" on a line matching it.
refuted() {
	if grep -Eq -- "^not ok: $2" "$T/broken.out"; then
		pass "a broken manifest fails: $1"
	else
		fail "a broken manifest fails: $1" "no line /^not ok: $2/"
	fi
}
refuted "a port given as a string" \
    "broken.yaml: Deployment/port-as-string: schema: .*containerPort must be integer"
refuted "a container without a name" \
    "broken.yaml: Pod/nameless-container: schema: .*must have required property '?name'?"
refuted "a kind with no schema" \
    "broken.yaml: Gadget/unknown-kind: schema: no schema"
refuted "an image this Dockerfile does not build" \
    "broken.yaml: Pod/plain-sidecar: container dsroute: image $IMAGE: image example/dsroute"
refuted "arguments dsroute refuses" \
    "broken.yaml: Pod/plain-sidecar: container dsroute: dsroute -n accepts its arguments: .*needs cert= and key="
refuted "a certificate file its Secret does not hold" \
    "broken.yaml: Pod/missing-cert: container dsroute: dsroute -n accepts its arguments: .*cert=[^ ]*/tls/server\\.crt: No such file or directory"
refuted "a sidecar that is not native" \
    "broken.yaml: Pod/plain-sidecar: dsroute is a native sidecar"
refuted "a runtime socket in another volume" \
    "broken.yaml: Pod/wrong-socket: container app: DOTNET_DiagnosticPorts reaches a dsroute: pod volume other:"
refuted "a wrapper entrypoint with no app after --" \
    "broken.yaml: Pod/wrapper-without-app: container app: dsroute wraps the app \\(-- COMMAND\\): no -- COMMAND"
refuted "a policy that lets an address block in" \
    "broken.yaml: NetworkPolicy/open-policy: lets in only from namespaces"
refuted "a policy on a port dsroute does not have" \
    "broken.yaml: NetworkPolicy/open-policy: on dsroute's ports"
if command -v busybox >/dev/null 2>&1; then
	refuted "an init command that fails when the pod restarts" \
	    "broken.yaml: Pod/init-once: init container diag-dir: its command succeeds when run again: the second run: .*File exists"
	broken=12
else
	skip "a broken manifest fails: an init command run again" \
	    "no busybox (Debian: busybox)"
	broken=11
fi
check "the broken manifests pass nothing they break" \
    [ "$(grep -c '^not ok' "$T/broken.out")" -eq "$broken" ]

done_testing
