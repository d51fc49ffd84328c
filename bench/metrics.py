"""``fairtop serve-metrics`` at 20,000 associations: ``python bench/metrics.py [-n 7] [--rows N]``.

Builds a Fair Tree snapshot of ``--rows`` associations (``bench/sources.py``'s sshare generator,
with sshare's printed columns, so the report's printed path runs), then measures in one run:

* render: the text made once per snapshot (:meth:`MetricsState.publish`: the report's cells,
  the families, gzip);
* scrape: ``GET /metrics`` over HTTP on 127.0.0.1 from the running server, plain and with
  ``Accept-Encoding: gzip``, the whole response read (what Prometheus waits for).

Prints the medians, the series count and the body sizes. Target: a scrape under 0.5 s at 20k.
``--client``: also time the association families written by prometheus-client (when it can be
imported; it is not a dependency) against our writer, from the same report cells.
``--prometheus``: a real Prometheus (Debian's package) on 127.0.0.1 scrapes the server every 2 s;
prints its own ``scrape_duration_seconds`` (request, parse and store of every sample) and
``scrape_samples_scraped`` over 10 scrapes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench.sources import sshare_text  # noqa: E402
from tui.analysis.report_inputs import report_inputs  # noqa: E402
from tui.formats.openmetrics import ASSOCIATION_METRICS, association_families  # noqa: E402
from tui.formats.sshare import report_blocks  # noqa: E402
from tui.metrics.server import MetricsState, make_server  # noqa: E402
from tui.model import PrioritySettings, Snapshot  # noqa: E402
from tui.sources.sshare import parse_sshare  # noqa: E402


def snapshot(rows: int) -> Snapshot:
    table = parse_sshare(sshare_text(rows), "bench.psv")
    printed = {h: tuple(table.column(h)) for h in ("NormShares", "RawUsage", "EffectvUsage", "LevelFS", "FairShare")}
    return Snapshot(cluster="bench", source="bench.psv", tree=table.tree, settings=PrioritySettings(),
                    printed=printed, capabilities=frozenset({"usage", "printed"}))


def timed(fn: object, repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()  # type: ignore[operator]
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def writers(snap: Snapshot, repeat: int) -> str:
    """Our writer against prometheus-client's, from the same report cells (the writer alone)."""
    from prometheus_client.core import CollectorRegistry, GaugeMetricFamily
    from prometheus_client.openmetrics.exposition import generate_latest

    got = report_inputs(snap)
    blocks = list(report_blocks(got.tree, got.result, got.damping, printed=got.printed))
    ours, _ = timed(lambda: "".join(f.text() for f in association_families("bench", got.tree, blocks)), repeat)
    parent, depth, accounts = got.tree.parent.tolist(), got.tree.depth().tolist(), got.tree.account.tolist()

    class Collector:
        def collect(self) -> list[GaugeMetricFamily]:
            fams = {col: GaugeMetricFamily(name, text, labels=["cluster", "account", "user", "parent", "depth"])
                    for col, (name, text) in ASSOCIATION_METRICS.items()}
            i = 0
            for block in blocks:
                for k, (account, user) in enumerate(zip(block["account"], block["user"])):
                    labels = ["bench", account, user, accounts[parent[i]] if parent[i] >= 0 else "", str(depth[i])]
                    i += 1
                    for col, fam in fams.items():
                        cell = block[col][k]
                        if cell and cell != "parent":
                            fam.add_metric(labels, float(cell))
            return list(fams.values())

    registry = CollectorRegistry()
    registry.register(Collector())  # type: ignore[arg-type]
    client, _ = timed(lambda: generate_latest(registry), repeat)
    return (f"association families alone: our writer {ours:.3f} s, prometheus-client {client:.3f} s "
            f"({client / ours:.1f}x ours)")


def prometheus_scrapes(url: str, scrapes: int = 10) -> str:
    """Prometheus' own view of ``scrapes`` scrapes of ``url``: duration median and max, samples."""
    import json
    import shutil
    import socket
    import subprocess
    import tempfile
    import urllib.parse

    binary = shutil.which("prometheus")
    if binary is None:
        return "no prometheus binary: apt-get install prometheus"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    target = url.split("/")[2]
    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp, "p.yml").write_text("global:\n  scrape_interval: 2s\n  scrape_timeout: 2s\nscrape_configs:\n"
                                      f"  - job_name: bench\n    static_configs:\n      - targets: ['{target}']\n")
        proc = subprocess.Popen([binary, f"--config.file={tmp}/p.yml", f"--storage.tsdb.path={tmp}/data",
                                 f"--web.listen-address=127.0.0.1:{port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            def query(q: str) -> list[dict]:
                api = f"http://127.0.0.1:{port}/api/v1/query?" + urllib.parse.urlencode({"query": q})
                with urllib.request.urlopen(api, timeout=10) as resp:
                    return json.load(resp)["data"]["result"]

            end = time.monotonic() + 120
            while time.monotonic() < end:
                time.sleep(2)
                try:
                    got = query("count_over_time(scrape_duration_seconds[5m])")
                except OSError:
                    continue
                if got and int(got[0]["value"][1]) >= scrapes:
                    break
            med = query("quantile_over_time(0.5, scrape_duration_seconds[5m])")[0]["value"][1]
            top = query("max_over_time(scrape_duration_seconds[5m])")[0]["value"][1]
            samples = query("scrape_samples_scraped")[0]["value"][1]
            n = query("count_over_time(scrape_duration_seconds[5m])")[0]["value"][1]
        finally:
            proc.terminate()
            proc.wait(10)
    return (f"Prometheus' scrape_duration_seconds over {n} scrapes: median {float(med):.3f} s, "
            f"max {float(top):.3f} s; scrape_samples_scraped {samples}")


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=7, help="repeats (median)")
    ap.add_argument("--rows", type=int, default=20_000)
    ap.add_argument("--client", action="store_true", help="also time prometheus-client's writer")
    ap.add_argument("--prometheus", action="store_true", help="a real Prometheus scrapes the server (10 scrapes)")
    args = ap.parse_args(argv)
    snap = snapshot(args.rows)
    state = MetricsState()
    render, _ = timed(lambda: state.publish(snap), args.n)
    server = make_server(state, "127.0.0.1", 0)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    url = f"http://127.0.0.1:{server.server_address[1]}/metrics"

    def get(gz: bool) -> bytes:
        req = urllib.request.Request(url, headers={"Accept-Encoding": "gzip"} if gz else {})
        with urllib.request.urlopen(req) as resp:
            return resp.read()

    get(False)  # warm the connection path
    plain, body = timed(lambda: get(False), args.n)
    gzipped, body_gz = timed(lambda: get(True), args.n)
    scraped = prometheus_scrapes(url) if args.prometheus else ""
    server.shutdown()
    assert isinstance(body, bytes) and isinstance(body_gz, bytes)
    series = sum(1 for line in body.splitlines() if line and not line.startswith(b"#"))
    print(f"{args.rows:,} associations, {series:,} series, body {len(body) / 1e6:.1f} MB, "
          f"gzip {len(body_gz) / 1e6:.2f} MB (median of {args.n})")
    print(f"render once per snapshot {render:.3f} s; scrape {plain * 1000:.1f} ms plain, "
          f"{gzipped * 1000:.1f} ms gzip; render/scrape {render / plain:.0f}x")
    if scraped:
        print(scraped)
    if args.client:
        print(writers(snap, args.n))


if __name__ == "__main__":
    main()
