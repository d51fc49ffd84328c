"""Data behind ``fairtop report --pbs-resource-group FILE --pbs-usage FILE``.

One row per fairshare node in ``pbsfs`` order (pre-order, siblings in reverse file order,
``unknown`` last under ``TREEROOT``). Fractions the scheduler keeps as C floats are given as it
shows them: ``percentage``, ``fairshare_tree_usage`` and ``fairshare_factor`` are rounded to six
decimals (``pbsfs -g`` prints them with ``%f``, and ``job_sort_formula`` receives them the same
way). ``usage`` and ``usage_per_perc`` are the unrounded doubles.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import Any

import numpy as np

from tui.engine.pbs import compute
from tui.sources.pbs import read_pbs

COLUMNS = ("name", "parent", "shares", "percentage", "usage", "fairshare_tree_usage", "usage_per_perc",
           "fairshare_factor")


def _as_printed(x: float) -> float:
    """``x`` as ``printf("%f")`` shows it, back as a number."""
    return float("%f" % x)


def pbs_report_rows(resource_group_path: str | Path, usage_path: str | Path | None,
                    unknown_shares: int = 0) -> list[dict[str, Any]]:
    """Every node with its shares, usage and fairshare values.

    Parameters
    ----------
    resource_group_path : path
        PBS ``resource_group`` file.
    usage_path : path or None
        Binary usage file, saved ``pbsfs`` output, or ``entity usage`` lines.
    unknown_shares : int
        ``unknown_shares`` from ``sched_config`` (default 0).

    Returns
    -------
    list of dict
        Keys :data:`COLUMNS`: ``name``; ``parent`` ("" for TREEROOT); ``shares`` (int, -1 for
        TREEROOT); ``percentage`` (share of the machine in percent, float-times-100 as pbsfs
        prints it, e.g. 24.0, 10.000001); ``usage`` (usage units); ``fairshare_tree_usage``
        (dimensionless); ``usage_per_perc`` (usage units, -1 where the percentage is 0);
        ``fairshare_factor`` (0..1).

    Raises
    ------
    tui.sources.errors.InputError
        Unreadable or malformed input.
    """
    tree = read_pbs(resource_group_path, usage_path, unknown_shares=unknown_shares)
    fs = compute(tree)
    rows = []
    for i in range(len(tree.name)):
        p = int(tree.parent[i])
        rows.append({
            "name": str(tree.name[i]),
            "parent": "" if p < 0 else str(tree.name[p]),
            "shares": int(tree.shares[i]),
            "percentage": _as_printed(float(fs.tree_percentage[i] * np.float32(100))),
            "usage": float(tree.usage[i]),
            "fairshare_tree_usage": _as_printed(float(fs.tree_usage[i])),
            "usage_per_perc": float(fs.usage_per_perc[i]),
            "fairshare_factor": _as_printed(float(fs.factor[i])),
        })
    return rows


def _depths(rows: list[dict[str, Any]]) -> list[int]:
    depth: dict[str, int] = {}
    for r in rows:  # pre-order: a parent's depth is known before its children
        depth[r["name"]] = depth[r["parent"]] + 1 if r["parent"] else 0
    return [depth[r["name"]] for r in rows]


def format_pbs_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table, names indented two spaces a level, one line per row."""
    head = ("Entity", "Shares", "Perc%", "Usage", "TreeUsage", "Usage/Perc", "Factor")
    cells = [
        ("  " * d + r["name"], "%d" % r["shares"], "%.6f" % r["percentage"], "%.0f" % r["usage"],
         "%.6f" % r["fairshare_tree_usage"], "%.0f" % r["usage_per_perc"], "%.6f" % r["fairshare_factor"])
        for d, r in zip(_depths(rows), rows)
    ]
    widths = [max(len(c[k]) for c in [head, *cells]) for k in range(len(head))]
    lines = []
    for c in [head, *cells]:
        right = [v.rjust(w) for v, w in zip(c[1:], widths[1:])]
        lines.append("  ".join([c[0].ljust(widths[0]), *right]).rstrip())
    return "\n".join(lines) + "\n"


def format_pbs_csv(rows: list[dict[str, Any]]) -> str:
    """CSV with a header of :data:`COLUMNS`; numbers as Python prints them (round-trip exact)."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=COLUMNS, lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return out.getvalue()
