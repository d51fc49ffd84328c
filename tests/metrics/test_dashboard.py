"""The Grafana dashboard and the alert rules in contrib/: every metric they name is in
serve-metrics' output, the dashboard has what Grafana's import needs, and promtool accepts the
rules (and their unit tests) and every dashboard query."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path


from tests.metrics.scrape import parse
from tests.needs import missing
from tui.metrics.exposition import age_tail, snapshot_body
from tui.sources import registry

ROOT = Path(__file__).resolve().parents[2]
DASHBOARD = ROOT / "contrib/grafana/fairtop-dashboard.json"
RULES = ROOT / "contrib/prometheus/fairtop-rules.yml"
NAME = re.compile(r"\bfairtop_[a-z_]+\b")


def dashboard_exprs() -> list[str]:
    doc = json.loads(DASHBOARD.read_text())
    exprs = [t["expr"] for p in doc["panels"] for t in p["targets"]]
    return exprs + [v["definition"] for v in doc["templating"]["list"]]


def rule_exprs() -> list[str]:
    return re.findall(r"^\s+expr: (.+)$", RULES.read_text(), re.M)


def test_every_metric_named_exists() -> None:
    snap = registry.make("demo", "slurm", "").load()  # tree, jobs and allocations
    text = snapshot_body(snap)[0] + age_tail(snap)
    written = set(parse(text))
    named = {n for e in dashboard_exprs() + rule_exprs() for n in NAME.findall(e)}
    assert {"fairtop_association_fairshare", "fairtop_allocation_balance",
            "fairtop_allocation_exhaustion_timestamp_seconds", "fairtop_snapshot_age_seconds"} <= named
    assert named - written == set()


def test_dashboard_is_importable() -> None:
    doc = json.loads(DASHBOARD.read_text())
    assert [i["name"] for i in doc["__inputs"]] == ["DS_PROMETHEUS"]
    ids = [p["id"] for p in doc["panels"]]
    assert len(ids) == len(set(ids)) and doc["uid"] and doc["schemaVersion"] >= 30
    variables = {v["name"] for v in doc["templating"]["list"]}
    for panel in doc["panels"]:
        assert set(panel["gridPos"]) == {"x", "y", "w", "h"} and panel["gridPos"]["x"] + panel["gridPos"]["w"] <= 24
        for t in panel["targets"]:
            assert t["datasource"]["uid"] == "${DS_PROMETHEUS}"
            assert set(re.findall(r"\$(\w+)", t["expr"])) <= variables


def _promtool() -> str:
    found = shutil.which("promtool")
    if found is None:
        missing("no promtool: the rules and dashboard queries were not checked (apt-get install prometheus)")
    return found


def test_promtool_checks_and_tests_the_rules() -> None:
    promtool = _promtool()
    for args in (["check", "rules", RULES.name], ["test", "rules", "fairtop-rules.test.yml"]):
        done = subprocess.run([promtool, *args], cwd=RULES.parent, capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stdout + done.stderr


def test_dashboard_queries_parse(tmp_path: Path) -> None:
    """Each panel query as a recording rule: promtool parses it as Prometheus will."""
    promtool = _promtool()
    doc = json.loads(DASHBOARD.read_text())
    lines = ["groups:", "  - name: dashboard", "    rules:"]
    for p in doc["panels"]:
        for t in p["targets"]:
            expr = t["expr"].replace("$cluster", ".*").replace("$account", ".*")
            lines += [f"      - record: fairtop:panel{p['id']}_{t['refId']}", f"        expr: {json.dumps(expr)}"]
    (tmp_path / "panels.yml").write_text("\n".join(lines) + "\n")
    done = subprocess.run([promtool, "check", "rules", str(tmp_path / "panels.yml")], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
