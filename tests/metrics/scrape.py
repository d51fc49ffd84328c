"""Helpers of the metrics tests: parse exposition text, the report's JSON rows, expected samples."""

from __future__ import annotations

import io
import json
import re
from contextlib import redirect_stdout

from tui.cli import main
from tui.formats.openmetrics import ASSOCIATION_METRICS

_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse(text: str) -> dict[str, list[tuple[dict[str, str], float]]]:
    """Metric name -> [(labels, value)] of exposition text (comments skipped)."""
    out: dict[str, list[tuple[dict[str, str], float]]] = {}
    for line in text.splitlines():
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = {k: v.encode().decode("unicode_escape") for k, v in _LABEL.findall(m.group(2) or "")}
        out.setdefault(m.group(1), []).append((labels, float(m.group(3))))
    return out


def report_rows(folder: str) -> list[dict]:
    """``fairtop report --from FOLDER --format json``, as the CLI prints it."""
    buf = io.StringIO()
    with redirect_stdout(buf):
        assert main(["report", "--from", folder, "--format", "json"]) == 0
    return json.loads(buf.getvalue())


def expected(rows: list[dict], cluster: str) -> dict[tuple[str, str, str, str], float]:
    """(metric, cluster, account, user) -> the report's value as Prometheus reads it; blank
    cells (null, "", RawShares "parent") have no sample."""
    out = {}
    for row in rows:
        for column, (metric, _) in ASSOCIATION_METRICS.items():
            cell = row.get(column)
            if cell is None or cell in ("", "parent"):
                continue
            out[(metric, cluster, row["account"], row["user"])] = float(cell)
    return out
