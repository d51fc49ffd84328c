"""Rows of dicts as JSON and CSV (``fairtop report --format json|csv``)."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from typing import Any

__all__ = ["format_csv", "format_json"]


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
