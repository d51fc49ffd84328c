"""Rows of dicts as JSON and CSV (``fairtop report --format json|csv``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["format_csv", "format_json", "with_cluster", "cluster_column"]


def with_cluster(cluster: str, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``rows`` with ``cluster`` as their first key (multi-cluster json and csv)."""
    return [{"cluster": cluster, **row} for row in rows]


def cluster_column(cluster: str, table: str, width: int) -> str:
    """A text table with a first column ``Cluster`` (``width`` wide): a header line (the one above
    a line of dashes) gets the title, the dashes line more dashes, ``#`` and blank lines stay as
    they are, every other line the cluster's name."""
    lines = table.splitlines()

    def dashes(i: int) -> bool:
        return 0 <= i < len(lines) and lines[i].strip() != "" and set(lines[i].strip()) <= {"-", " "}

    out = []
    for i, line in enumerate(lines):
        if line.startswith("#") or not line.strip():
            out.append(line)
        elif dashes(i):
            out.append("-" * width + " " + line)
        else:
            out.append(f"{'Cluster' if dashes(i + 1) else cluster:<{width}} {line}")
    return "\n".join(out) + "\n"


def format_json(rows: list[dict[str, Any]]) -> str:
    """One JSON array, one object per row."""
    return json.dumps(rows, indent=1) + "\n"


def format_csv(rows: list[dict[str, Any]], columns: Sequence[str] | None = None) -> str:
    """CSV with a header (``columns``, else the first row's keys); None becomes an empty cell."""
    out = io.StringIO()
    names = list(columns) if columns is not None else (list(rows[0]) if rows else [])
    writer = csv.DictWriter(out, fieldnames=names, lineterminator="\n")
    writer.writeheader()
    for row in rows:
        writer.writerow({k: ("" if v is None else v) for k, v in row.items()})
    return out.getvalue()
