#!/usr/bin/python3
# SPDX-License-Identifier: ISC
#
# promscrape: what Prometheus would read from a dsroute --metrics, through
# the Prometheus client library's own parser.
#
#	promscrape URL [CA CERT KEY]
#
# GET URL (http: or https:, the latter verified against CA, with the
# client certificate CERT and KEY); fail unless the answer is 200 with
# the text format's Content-Type and parses.  Print one sample a line,
# "name{label="value",...} value", labels sorted.  Exit 1 on any failure,
# 2 when the parser is missing.

import http.client
import ssl
import sys
import urllib.parse

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    print("promscrape: python3-prometheus-client is not installed",
          file=sys.stderr)
    sys.exit(2)

WANT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


def main():
    url = urllib.parse.urlsplit(sys.argv[1])
    if url.scheme == "https":
        ctx = ssl.create_default_context(cafile=sys.argv[2])
        ctx.load_cert_chain(sys.argv[3], sys.argv[4])
        conn = http.client.HTTPSConnection(url.hostname, url.port,
                                           context=ctx, timeout=20)
    else:
        conn = http.client.HTTPConnection(url.hostname, url.port,
                                          timeout=20)
    conn.request("GET", url.path)
    resp = conn.getresponse()
    body = resp.read().decode("utf-8")
    if resp.status != 200:
        print("promscrape: status %d" % resp.status, file=sys.stderr)
        return 1
    if resp.getheader("Content-Type") != WANT_TYPE:
        print("promscrape: Content-Type %r" % resp.getheader("Content-Type"),
              file=sys.stderr)
        return 1
    families = list(text_string_to_metric_families(body))
    helped = set(line.split()[2] for line in body.splitlines()
                 if line.startswith("# HELP "))
    for fam in families:
        if fam.name.startswith("dsroute_") is False:
            print("promscrape: %s lacks the dsroute_ prefix" % fam.name,
                  file=sys.stderr)
            return 1
        if fam.type == "unknown" or (fam.name not in helped and
                                     fam.name + "_total" not in helped):
            print("promscrape: %s has no TYPE or HELP" % fam.name,
                  file=sys.stderr)
            return 1
        for s in fam.samples:
            labels = ",".join('%s="%s"' % (k, v)
                              for k, v in sorted(s.labels.items()))
            print("%s{%s} %d" % (s.name, labels, s.value))
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, ValueError, http.client.HTTPException) as e:
        print("promscrape: %s" % e, file=sys.stderr)
        sys.exit(1)
