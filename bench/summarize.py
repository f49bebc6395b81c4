#!/usr/bin/env python3
# SPDX-License-Identifier: ISC

"""Turn the RESULT lines of bench/run.sh runs into a Markdown report.

    summarize.py RAW [RAW...]

Several raw files (e.g. a full run and a later run of WORKLOADS=many
alone) are reported together, each file's header shown.

Medians over rounds with [min-max]; ratios are paired: taken within each
round (against direct-tcp or direct-tls and against the peers of the same
direction in that round), then the median of those ratios is reported.
"""

import re
import statistics
import sys
from collections import defaultdict

HIGH_WATER_KIB = 256


def parse(path):
    header, results, skips = [], [], {}
    for line in open(path):
        line = line.rstrip("\n")
        if line.startswith("#"):
            header.append(line[2:])
        elif line.startswith("RESULT "):
            kv = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line[7:]))
            results.append(kv)
        elif line.startswith("SKIP "):
            kv = dict(re.findall(r'(\w+)=("[^"]*"|\S+)', line[5:]))
            skips[kv["config"]] = kv["why"].strip('"')
    return header, results, skips


def med(xs):
    return statistics.median(xs) if xs else None


def fmt(x, digits=2):
    if x is None:
        return "–"
    return f"{x:.{digits}f}"


def rng(xs, digits=2):
    if not xs:
        return "–"
    return (f"{fmt(med(xs), digits)} [{fmt(min(xs), digits)}–"
            f"{fmt(max(xs), digits)}]")


class Run:
    def __init__(self, results):
        # (kind, conc, config) -> {round: record}
        self.by = defaultdict(dict)
        self.gate = {}
        for r in results:
            kind = r["kind"]
            conc = r.get("conc", "")
            if r["round"] == "gate":
                self.gate[r["config"]] = r
                continue
            self.by[(kind, conc, r["config"])][r["round"]] = r

    def values(self, kind, conc, config, field):
        return [float(rec[field])
                for rec in self.by.get((kind, conc, config), {}).values()
                if field in rec]

    def paired(self, kind, conc, config, ref, field, op="ratio"):
        """Median over rounds of config/ref (or config-ref)."""
        return med(self.per_round(kind, conc, config, ref, field, op))

    def per_round(self, kind, conc, config, ref, field, op="ratio"):
        """config/ref (or config-ref) in each round both ran."""
        a = self.by.get((kind, conc, config), {})
        b = self.by.get((kind, conc, ref), {})
        out = []
        for rnd, rec in a.items():
            if rnd in b and field in rec and field in b[rnd]:
                x, y = float(rec[field]), float(b[rnd][field])
                if op == "ratio" and y > 0:
                    out.append(x / y)
                elif op == "diff":
                    out.append(x - y)
        return out


def direction(config):
    return config.split(":", 1)[1] if ":" in config else None


def parse_all(paths):
    header, results, skips = [], [], {}
    for i, path in enumerate(paths):
        h, r, sk = parse(path)
        if len(paths) > 1:
            h = [f"**{path.rsplit('/', 1)[-1]}**"] + h
        header += h
        results += r
        skips.update(sk)
    return header, results, skips


def many_section(results, w):
    """The many-runtimes part (bench/many.sh), if it ran."""
    mem = [r for r in results if r["kind"] == "many-mem"]
    ps = [r for r in results if r["kind"] == "many-ps"]
    app = [r for r in results if r["kind"] in ("many-appear", "many-gone")]
    rr = [r for r in results if r["kind"] == "rr" and
          r["config"].startswith("many:")]
    if not (mem or ps or app or rr):
        return
    w("## Many runtimes (fake runtimes dialling in; bench/many.sh)")
    w("")

    def m(config, stage):
        for r in mem:
            if r["config"] == config and r["stage"] == stage:
                return r
        return None

    def f(r, k):
        return float(r[k]) if r and k in r else None

    if mem:
        n = max(int(r["runtimes"]) for r in mem)
        w("### Memory (RSS of the router alone; its stand-ins apart)")
        w("")
        w("| router | stage | runtimes | router RSS KiB | fds | stand-ins | "
          "stand-ins' RSS KiB (sum) | stand-ins' PSS KiB (sum) |")
        w("|---|---|---|---|---|---|---|---|")
        for r in mem:
            w(f"| {r['config']} | {r['stage']} | {r['runtimes']} | "
              f"{r['rss_kib']} | {r['fds']} | {r['standins']} | "
              f"{r['standin_rss_kib']} | {r['standin_pss_kib']} |")
        w("")
        rows = []

        def per(label, config, a, b, count=n):
            ra, rb = m(config, a), m(config, b)
            if ra is None or rb is None:
                return
            d = (f(rb, "rss_kib") - f(ra, "rss_kib")) / count
            fd = (f(rb, "fds") - f(ra, "fds")) / count
            rows.append(f"| {label} | {d:.1f} | {fd:.1f} |")

        per("node: a parked runtime record (0 → N)", "node", "0", str(n))
        per("node: … with its ProcessInfo, after a listing (0 → N listed)",
            "node", "0", f"{n}-listed")
        per("mirror: a mirrored runtime, its three sockets (0 → N)",
            "mirror", "0", str(n))
        for c in sorted({r["config"] for r in mem
                         if r["config"].startswith("link-mirror-poll-")}):
            per(f"linked mirror ({c[12:]}): a mirrored runtime (0 → N)",
                c, "0", str(n))
        per("node: left after N came and went (0 → gone1)", "node", "0",
            "gone1")
        per("node: left after a second N (gone1 → gone2)", "node", "gone1",
            "gone2")
        per("mirror: left after N came and went (0 → gone1)", "mirror", "0",
            "gone1")
        per("mirror: left after a second N (gone1 → gone2)", "mirror",
            "gone1", "gone2")
        if rows:
            w(f"| per runtime (N = {n}) | router RSS KiB | fds |")
            w("|---|---|---|")
            for x in rows:
                w(x)
            w("")
        sts = [r for r in mem if int(r["standins"]) > 0]
        if sts:
            w("| stand-ins of | runtimes | RSS KiB per stand-in | "
              "PSS KiB per stand-in |")
            w("|---|---|---|---|")
            for r in sts:
                k = int(r["standins"])
                w(f"| {r['config']} ({r['stage']}) | {k} | "
                  f"{int(r['standin_rss_kib']) / k:.0f} | "
                  f"{int(r['standin_pss_kib']) / k:.0f} |")
            w("")

    if ps:
        w("### `dsroute ps` (a process each: start-up included)")
        w("")
        w("`node-tcp`: `dsroute ps tcp:` against the node router (no "
          "mirror, runtimes parked on its Unix socket). The node lists a "
          "runtime only once it has its ProcessInfo, which it asks for "
          "when a listing finds it unknown: *first* is the first listing "
          "after the runtimes came, *complete* the time from it until a "
          "listing (asked every 20 ms) showed them all. `mirror-dir`: "
          "`dsroute ps dir:` on the mirror's directory.")
        w("")
        w("| runtimes | node-tcp first ms (rows) | node-tcp complete ms "
          "(listings) | node-tcp steady ms | mirror-dir steady ms |")
        w("|---|---|---|---|---|")
        for k in sorted({int(r["runtimes"]) for r in ps}):
            def sel(c, ph):
                return [r for r in ps if r["config"] == c and
                        r["phase"] == ph and int(r["runtimes"]) == k]
            first = sel("node-tcp", "first")
            comp = sel("node-tcp", "complete")
            st = [float(r["ms"]) for r in sel("node-tcp", "steady")]
            md = [float(r["ms"]) for r in sel("mirror-dir", "steady")]
            bad = [r for r in sel("node-tcp", "steady") +
                   sel("mirror-dir", "steady") if int(r["rows"]) != k]
            w(f"| {k} | "
              + (f"{first[0]['ms']} ({first[0]['rows']})" if first else "–")
              + " | "
              + (f"{comp[0]['ms']} ({comp[0]['listings']})" if comp
                 else "–")
              + f" | {rng(st, 1)} | {rng(md, 1)}"
              + (" (rows missing!)" if bad else "") + " |")
        w("")

    if app:
        w("### Time until the runtimes appear in a mirror, and are gone")
        w("")
        w("From starting the fake runtimes (killing them, SIGKILL) until "
          "the mirror's directory has a name for each (none); "
          "`mirror-local`: the runtimes dial the mirror's router; "
          "`link-poll-*`: they dial a node router that a second router's "
          "mirror is linked to.")
        w("")
        w("| mirror | runtimes | appear s | gone s | rounds |")
        w("|---|---|---|---|---|")
        loc = [r for r in app if r["config"] == "mirror-local"]
        for r in loc:
            if r["kind"] == "many-appear":
                w(f"| mirror-local (stage {r['stage']}) | {r['runtimes']} | "
                  f"{float(r['appear_s']):.3f} | – | 1 |")
        for r in loc:
            if r["kind"] == "many-gone":
                w(f"| mirror-local (round {r['round']}) | {r['runtimes']} | "
                  f"– | {float(r['gone_s']):.3f} | 1 |")
        for c in sorted({r["config"] for r in app
                         if r["config"].startswith("link-")}):
            rs = [r for r in app if r["config"] == c]
            ap = [float(r["appear_s"]) for r in rs]
            go = [float(r["gone_s"]) for r in rs]
            w(f"| {c} | {rs[0]['runtimes']} | {rng(ap)} | {rng(go)} | "
              f"{len(rs)} |")
        w("")

    if rr:
        w("### A fresh connection per ProcessInfo to one runtime, "
          "through a mirror name")
        w("")
        w("c=1; `mirror-K`: the runtime is one of K behind the mirror's "
          "router; `link-K`: one of K behind a node router, through a "
          "linked mirror (two routers). × 1 runtime: paired within each "
          "round. Relay CPU: the router's process tree (both routers for "
          "link).")
        w("")
        w("| config | conn/s | × 1 runtime | p50 µs | p99 µs | errors | "
          "relay CPU µs/conn |")
        w("|---|---|---|---|---|---|---|")
        run = Run(rr)
        for c in dict.fromkeys(r["config"] for r in rr):
            kind, _, k = c[5:].rpartition("-")
            ref = f"many:{kind}-1"
            errs = sum(int(r.get("errors", "0")) for r in rr
                       if r["config"] == c)
            w(f"| {c[5:]} | {rng(run.values('rr', '1', c, 'conn_per_s'), 0)} | "
              f"{fmt(run.paired('rr', '1', c, ref, 'conn_per_s')) if c != ref else '–'} | "
              f"{fmt(med(run.values('rr', '1', c, 'p50_us')), 0)} | "
              f"{fmt(med(run.values('rr', '1', c, 'p99_us')), 0)} | {errs} | "
              f"{fmt(med(run.values('rr', '1', c, 'relay_cpu_us_per_conn')), 1)} |")
        w("")


def main():
    header, results, skips = parse_all(sys.argv[1:])
    many = [r for r in results if r["kind"].startswith("many-") or
            r["config"].startswith("many:")]
    results = [r for r in results if r not in many]
    run = Run(results)
    configs = []
    for r in results:
        if r["config"] not in configs:
            configs.append(r["config"])
    plain = [c for c in configs if "tls" not in c]
    tls = [c for c in configs if "tls" in c]

    out = []
    w = out.append
    w("# dsroute benchmark: results")
    w("")
    for h in header:
        w(f"- {h}")
    w("")
    w("Medians over the rounds, [min–max] in brackets. Ratios are paired: "
      "taken within each round, then the median. `rt-uds`: the runtime "
      "listens on a Unix socket and the tool connects over TCP (or TLS) "
      "through the relay, so the trace flows UDS → TCP; `rt-tcp`: the "
      "runtime listens on TCP (or TLS) and the tool connects to the "
      "relay's Unix socket. Direct TCP (or TLS) is the ceiling of both "
      "directions. See bench/README.md for the method.")
    w("")

    bad = [c for c, r in run.gate.items() if r.get("verify") != "ok"]
    errs = [f"{c} c={conc}" for (kind, conc, c), recs in run.by.items()
            for rec in recs.values()
            if kind == "rr" and rec.get("errors", "0") != "0"]
    fails = [c for (kind, conc, c), recs in run.by.items()
             for rec in recs.values()
             if kind == "stream" and rec.get("verify") != "ok"]
    w(f"**Correctness:** 64 MiB gate through {len(run.gate)} configs: "
      + ("all verified byte for byte" if not bad
         else "FAILED: " + ", ".join(bad))
      + "; timed streams: "
      + ("every byte verified" if not fails
         else "FAILED: " + ", ".join(sorted(set(fails))))
      + "; fresh-connection exchanges: "
      + ("0 errors" if not errs else "errors in " + ", ".join(errs)) + ".")
    w("")
    if skips:
        w("**Not run:**")
        w("")
        for c, why in skips.items():
            w(f"- `{c}`: {why}")
        w("")

    for group, ref, cfgs, title in (
            ("plain", "direct-tcp", plain, "Plaintext"),
            ("tls", "direct-tls", tls, "TLS")):
        if not cfgs:
            continue
        w(f"## {title}: (a) trace stream, (e) CPU per GB")
        w("")
        names = [p for p in ("socat", "haproxy", "stunnel", "dsroute-b")
                 if any(c.startswith(p + ":") for c in cfgs)]
        cols = "".join(f" × {p} |" for p in names)
        w(f"| config | GB/s | × {ref} |{cols} relay CPU s/GB | "
          "ends' CPU s/GB |")
        w("|---|---|---|" + "---|" * len(names) + "---|---|")
        for c in cfgs:
            if not run.values("stream", "", c, "gbps"):
                continue
            d = direction(c)
            peers = []
            for p in names:
                pc = f"{p}:{d}" if d else None
                if pc and pc != c and pc in cfgs:
                    peers.append(fmt(run.paired("stream", "", c, pc,
                                                "gbps")))
                else:
                    peers.append("–")
            cpu = run.values("stream", "", c, "cpu_s_per_gb")
            w(f"| {c} | {rng(run.values('stream', '', c, 'gbps'))} | "
              f"{fmt(run.paired('stream', '', c, ref, 'gbps')) if c != ref else '–'} | "
              f"{''.join(x + ' | ' for x in peers)}"
              f"{fmt(med(cpu), 3) if c.split(':')[0] not in ('direct-uds', 'direct-tcp', 'direct-tls') else '–'} | "
              f"{fmt(med(run.values('stream', '', c, 'ends_cpu_s_per_gb')), 3)} |")
        w("")
        w(f"## {title}: (b) a fresh connection per ProcessInfo")
        w("")
        names = [p for p in ("socat", "haproxy", "stunnel", "dsroute-b")
                 if any(c.startswith(p + ":") for c in cfgs)]
        cols = "".join(f" × {p} |" for p in names)
        w(f"| config | conn/s c=1 | × {ref} |{cols} p50 µs | added p50 µs "
          f"| p99 µs | conn/s c=4 | × {ref} c=4 | relay CPU µs/conn |")
        w("|---|---|---|" + "---|" * len(names) + "---|---|---|---|---|---|")
        for c in cfgs:
            if not run.values("rr", "1", c, "conn_per_s"):
                continue
            d = direction(c)
            peers = []
            for p in names:
                pc = f"{p}:{d}" if d else None
                peers.append(fmt(run.paired("rr", "1", c, pc, "conn_per_s"))
                             if pc and pc != c and pc in cfgs else "–")
            w(f"| {c} | {rng(run.values('rr', '1', c, 'conn_per_s'), 0)} | "
              f"{fmt(run.paired('rr', '1', c, ref, 'conn_per_s')) if c != ref else '–'} | "
              f"{''.join(x + ' | ' for x in peers)}"
              f"{fmt(med(run.values('rr', '1', c, 'p50_us')), 0)} | "
              f"{fmt(run.paired('rr', '1', c, ref, 'p50_us', 'diff'), 0) if c != ref else '–'} | "
              f"{fmt(med(run.values('rr', '1', c, 'p99_us')), 0)} | "
              f"{rng(run.values('rr', '4', c, 'conn_per_s'), 0)} | "
              f"{fmt(run.paired('rr', '4', c, ref, 'conn_per_s')) if c != ref else '–'} | "
              f"{fmt(med(run.values('rr', '1', c, 'relay_cpu_us_per_conn')), 1) if not c.startswith('direct-') else '–'} |")
        w("")
        w(f"## {title}: (c) idle sessions and stalled readers "
          "(fresh relay each time)")
        w("")
        w("| config | idle RSS KiB/session | idle PSS KiB/session | "
          "fds/session | processes | stalled: RSS KiB/session | "
          "stalled: growth KiB over 1.5 s |")
        w("|---|---|---|---|---|---|---|")
        for c in cfgs:
            if c.startswith("direct-") or not (
                    run.values("idle", "", c, "rss_kib_per_session") or
                    run.values("stall", "", c, "rss_kib_per_session")):
                continue
            w(f"| {c} | {rng(run.values('idle', '', c, 'rss_kib_per_session'), 1)} | "
              f"{fmt(med(run.values('idle', '', c, 'pss_kib_per_session')), 1)} | "
              f"{fmt(med(run.values('idle', '', c, 'fds_per_session')), 1)} | "
              f"{fmt(med(run.values('idle', '', c, 'procs')), 0)} | "
              f"{fmt(med(run.values('stall', '', c, 'rss_kib_per_session')), 1)} | "
              f"{fmt(med(run.values('stall', '', c, 'growth_kib')), 0)} |")
        w("")

    sc = [r for r in results if r["kind"] == "syscalls"]
    if sc:
        w("## System calls of the relay (strace -c -f; exact, not timed)")
        w("")
        w("| config | per fresh connection | most frequent | per MB "
          "streamed | most frequent |")
        w("|---|---|---|---|---|")
        for c in configs:
            rr = [r for r in sc if r["config"] == c and
                  r["workload"] == "rr"]
            st = [r for r in sc if r["config"] == c and
                  r["workload"] == "stream"]
            if not rr and not st:
                continue

            def cell(rs):
                if not rs:
                    return "– | –"
                top = rs[0]["top"].replace(",", ", ")
                return f"{float(rs[0]['per_unit']):.1f} | {top}"
            w(f"| {c} | {cell(rr)} | {cell(st)} |")
        w("")

    many_section(many, w)
    if not results:
        print("\n".join(out))
        return

    # The targets of issue 24 (and the earlier ones it keeps), for dsroute.
    w("## Targets (dsroute, same run)")
    w("")
    w("| target | measured | met |")
    w("|---|---|---|")

    def row(name, value, ok, digits=2, unit="", config=None):
        if value is None:
            why = skips.get(config, "not measured in this run")
            w(f"| {name} | pending ({why}) | – |")
        else:
            w(f"| {name} | {fmt(value, digits)}{unit} | "
              f"{'yes' if ok(value) else 'NO'} |")

    for d in ("rt-uds", "rt-tcp"):
        c = f"dsroute:{d}"
        row(f"{d} stream ≥ 0.9× direct TCP",
            run.paired("stream", "", c, "direct-tcp", "gbps"),
            lambda v: v >= 0.9)
        row(f"{d} stream ≥ 3× socat",
            run.paired("stream", "", c, f"socat:{d}", "gbps"),
            lambda v: v >= 3)
    row("tls-rt-uds stream ≥ 0.9× direct TLS",
        run.paired("stream", "", "dsroute:tls-rt-uds", "direct-tls",
                   "gbps"),
        lambda v: v >= 0.9, config="dsroute:tls-rt-uds")
    row("tls-rt-tls stream ≥ 0.95× direct TLS",
        run.paired("stream", "", "dsroute:tls-rt-tls", "direct-tls",
                   "gbps"),
        lambda v: v >= 0.95, config="dsroute:tls-rt-tls")
    tail = run.per_round("stream", "", "dsroute:tls-rt-tls", "direct-tls",
                         "gbps")
    row("tls-rt-tls no slow tail: its slowest round ≥ 0.85× direct TLS",
        min(tail) if tail else None, lambda v: v >= 0.85,
        config="dsroute:tls-rt-tls")
    row("tls-tls stream ≥ 0.65× direct TLS",
        run.paired("stream", "", "dsroute:tls-tls", "direct-tls", "gbps"),
        lambda v: v >= 0.65, config="dsroute:tls-tls")
    relay = med(run.values("stream", "", "dsroute:tls-tls", "cpu_s_per_gb"))
    ends = med(run.values("stream", "", "direct-tls", "ends_cpu_s_per_gb"))
    row("tls-tls relay CPU/GB ≤ 1.0× the two ends' on direct TLS",
        relay / ends if relay is not None and ends else None,
        lambda v: v <= 1.0, config="dsroute:tls-tls")
    for d in ("rt-uds", "rt-tcp"):
        c = f"dsroute:{d}"
        row(f"{d} conn/s c=1 ≥ 0.7× direct TCP",
            run.paired("rr", "1", c, "direct-tcp", "conn_per_s"),
            lambda v: v >= 0.7)
        row(f"{d} conn/s c=4 ≥ 0.7× direct TCP",
            run.paired("rr", "4", c, "direct-tcp", "conn_per_s"),
            lambda v: v >= 0.7)
        row(f"{d} conn/s c=1 ≥ 3× socat",
            run.paired("rr", "1", c, f"socat:{d}", "conn_per_s"),
            lambda v: v >= 3)
        row(f"{d} added p50 ≤ 60 µs",
            run.paired("rr", "1", c, "direct-tcp", "p50_us", "diff"),
            lambda v: v <= 60, 0, " µs")
    for d in ("rt-uds", "rt-tcp"):
        row(f"{d} idle session ≤ 2 KiB RSS",
            med(run.values("idle", "", f"dsroute:{d}",
                           "rss_kib_per_session")),
            lambda v: v <= 2, 1, " KiB")
    # tls-tls holds two TLS connections per session: no row of its own.
    for d in ("tls-rt-uds", "tls-rt-tls"):
        row(f"{d} idle TLS session ≤ 16 KiB RSS",
            med(run.values("idle", "", f"dsroute:{d}",
                           "rss_kib_per_session")),
            lambda v: v <= 16, 1, " KiB", config=f"dsroute:{d}")
    for d in ("rt-uds", "rt-tcp"):
        c = f"dsroute:{d}"
        per = med(run.values("stall", "", c, "rss_kib_per_session"))
        growth = med(run.values("stall", "", c, "growth_kib"))
        if per is None:
            row(f"{d} memory flat under a slow reader", None, None)
        else:
            ok = per <= HIGH_WATER_KIB * 1.1 and abs(growth) <= 1024
            w(f"| {d} memory flat under a slow reader (≤ {HIGH_WATER_KIB} "
              f"KiB high water per session, no growth) | {per:.1f} "
              f"KiB/session, growth {growth:.0f} KiB | "
              f"{'yes' if ok else 'NO'} |")
    w("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
