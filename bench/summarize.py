#!/usr/bin/env python3
# SPDX-License-Identifier: ISC

"""Turn the RESULT lines of one bench/run.sh run into a Markdown report.

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


def main():
    header, results, skips = parse(sys.argv[1])
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
