"""A real Prometheus (Debian's package) scrapes ``fairtop serve-metrics`` on 127.0.0.1, and PromQL
through its HTTP API returns the values ``fairtop report --format json`` gives for the same
snapshot: every association, nested accounts and +Inf included.

Without the prometheus binary the test skips loudly; as root (CI, where .ci/prometheus.sh
installs it) it fails instead.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.metrics.scrape import expected, report_rows
from tests.needs import missing
from tui.formats.openmetrics import ASSOCIATION_METRICS

FIX = Path(__file__).resolve().parents[1] / "fixtures"
CAPTURE = FIX / "slurm/nested_parent/fair_tree"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _prometheus() -> str:
    found = shutil.which("prometheus")
    if found is None:
        missing("no prometheus on PATH (apt-get install prometheus; .ci/prometheus.sh does so as root)")
    return found


def scraped_port(base: str) -> int:
    """The port of serve-metrics, from Prometheus' own list of its targets."""
    with urllib.request.urlopen(f"{base}/api/v1/targets", timeout=10) as resp:
        target = json.load(resp)["data"]["activeTargets"][0]
    assert target["health"] == "up", target
    return int(target["scrapeUrl"].split(":")[2].split("/")[0])


def _query(base: str, promql: str) -> list[dict]:
    url = f"{base}/api/v1/query?{urllib.parse.urlencode({'query': promql})}"
    with urllib.request.urlopen(url, timeout=10) as resp:
        doc = json.load(resp)
    assert doc["status"] == "success", doc
    return doc["data"]["result"]


def _pbs_folder(folder: Path) -> None:
    """The PBS manual's example as a saved PBS folder (resource_group + usage.txt)."""
    folder.mkdir()
    shutil.copy(FIX / "pbs/man_resource_group", folder / "resource_group")
    shutil.copy(FIX / "pbs/man_usage.txt", folder / "usage.txt")


@pytest.fixture
def scraped(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[str]:
    """Prometheus' API base URL, once it has scraped serve-metrics of CAPTURE (or, with the
    param "pbs", the PBS folder), published as ``fairtop capture --every`` publishes
    (``ROOT/<time>`` and the symlink ``ROOT/current``)."""
    prometheus = _prometheus()
    published = tmp_path / "published"
    published.mkdir()
    if getattr(request, "param", "slurm") == "pbs":
        _pbs_folder(published / "20260301T000000Z")
    else:
        shutil.copytree(CAPTURE, published / "20260301T000000Z")
    (published / "current").symlink_to("20260301T000000Z")
    metrics_port, prom_port = _free_port(), _free_port()
    server = subprocess.Popen([sys.executable, "-m", "tui.cli", "serve-metrics", "--from", str(published / "current"),
                               "--listen", f"127.0.0.1:{metrics_port}"],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    (tmp_path / "prometheus.yml").write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: fairtop\n"
        f"    static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n")
    prom = subprocess.Popen([prometheus, f"--config.file={tmp_path / 'prometheus.yml'}",
                             f"--storage.tsdb.path={tmp_path / 'data'}", f"--web.listen-address=127.0.0.1:{prom_port}"],
                            stdout=subprocess.DEVNULL, stderr=open(tmp_path / "prometheus.log", "w"))
    base = f"http://127.0.0.1:{prom_port}"
    try:
        end = time.monotonic() + 60
        while True:
            assert prom.poll() is None, (tmp_path / "prometheus.log").read_text()[-2000:]
            try:
                if _query(base, "fairtop_snapshot_age_seconds"):
                    break
            except OSError:
                pass
            assert time.monotonic() < end, "Prometheus did not scrape serve-metrics within 60 s: " + \
                (tmp_path / "prometheus.log").read_text()[-2000:]
            time.sleep(0.5)
        yield base
    finally:
        for proc in (prom, server):
            proc.terminate()
            proc.wait(10)


def test_promql_returns_the_reports_values(scraped: str) -> None:
    want = expected(report_rows(str(CAPTURE)), "sandbox")
    got = {}
    for metric, _ in ASSOCIATION_METRICS.values():
        for series in _query(scraped, metric):
            m = series["metric"]
            got[(metric, m["cluster"], m["account"], m.get("user", ""))] = float(series["value"][1])
    assert got == want
    assert got[("fairtop_association_level_fs", "sandbox", "abb", "")] == float("inf")
    nested = _query(scraped, 'fairtop_association_rank{account="adaa"}')
    # the whole scrape is stored: as many series as serve-metrics wrote sample lines
    with urllib.request.urlopen(f"http://127.0.0.1:{scraped_port(scraped)}/metrics", timeout=10) as resp:
        written = sum(1 for line in resp.read().decode().splitlines() if line and not line.startswith("#"))
    stored = _query(scraped, 'count({__name__=~"fairtop_.*"})')
    assert int(stored[0]["value"][1]) == written
    assert sorted((s["metric"]["user"], s["metric"]["parent"], s["metric"]["depth"]) for s in nested) == \
        [("udaa1", "adaa", "4"), ("udaa2", "adaa", "4")]


@pytest.mark.parametrize("scraped", ["pbs"], indirect=True)
def test_promql_returns_the_pbs_reports_values(scraped: str, tmp_path: Path) -> None:
    folder = tmp_path / "pbs"
    _pbs_folder(folder)
    rows = report_rows(str(folder))
    got = {(s["metric"]["entity"], s["metric"].get("parent", "")): float(s["value"][1])
           for s in _query(scraped, "fairtop_pbs_entity_fairshare_factor")}
    assert got == {(r["name"], r["parent"]): r["fairshare_factor"] for r in rows}
    usage = {s["metric"]["entity"]: float(s["value"][1]) for s in _query(scraped, "fairtop_pbs_entity_usage")}
    assert usage == {r["name"]: r["usage"] for r in rows}
