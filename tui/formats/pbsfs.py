"""PBS fairshare as text: exactly as OpenPBS ``pbsfs`` prints it (``src/scheduler/pbsfs.cpp``),
and as ``fairtop report --pbs-*`` rows (table, csv).

C ``printf`` and Python ``%`` both round the exact binary value half to even, so the
``%.0f`` usage columns agree (10.5 prints 10). Floats are widened the way C promotes them:
``tree_percentage * 100`` is a float product before ``printf`` sees it.

Every function returns the lines joined by ``\\n`` with a final newline, like the command.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from tui.engine.pbs import PbsFairshare, compare_path, compute
from tui.engine.pbs_tree import depth_levels, path_rows, row_of
from tui.model import PbsTree


def _percent(perc: np.float32) -> float:
    """``tree_percentage * 100`` in float, as ``pbsfs`` passes it to ``printf``."""
    return float(np.float32(perc) * np.float32(100))


def listing(tree: PbsTree, fs: PbsFairshare | None = None) -> str:
    """``pbsfs`` / ``pbsfs -p``: the units line, then one line per node in pre-order."""
    fs = fs or compute(tree)
    lines = [f"Fairshare usage units are in: {tree.usage_res}"]
    for i in range(len(tree.name)):
        lines.append(
            "%-10s: Grp: %-5d  cgrp: %-5dShares: %-6d Usage: %-6.0f Perc: %6.3f%%"
            % (tree.name[i], tree.resgroup[i], tree.cresgroup[i], tree.shares[i], tree.usage[i],
               _percent(fs.tree_percentage[i]))
        )
    return "\n".join(lines) + "\n"


def tree_text(tree: PbsTree) -> str:
    """``pbsfs -t``: ``%*s%s(%d)`` with width 5·depth and the string ``" "``.

    ``%*s`` never prints less than its string, so the root (width 0) still gets one space.
    """
    depth = np.zeros(len(tree.name), dtype=np.int64)
    for d, rows in enumerate(depth_levels(tree.parent)):
        depth[rows] = d
    return "".join("%*s%s(%d)\n" % (5 * int(depth[i]), " ", tree.name[i], tree.cresgroup[i])
                   for i in range(len(tree.name)))


def entity(tree: PbsTree, name: str | int, fs: PbsFairshare | None = None) -> str:
    """``pbsfs -g ENTITY``: the entity's values, then its path from the root.

    Raises
    ------
    KeyError
        ``Fairshare Entity NAME does not exist.``
    """
    fs = fs or compute(tree)
    i = row_of(tree, name)
    out = (
        "fairshare entity: %s\n"
        "Resgroup\t\t: %d\n"
        "cresgroup\t\t: %d\n"
        "Shares\t\t\t: %d\n"
        "Percentage\t\t: %s%%\n"
        "fairshare_tree_usage\t: %f\n"
        "usage\t\t\t: %.0f (%s)\n"
        "usage/perc\t\t: %.0f\n"
        % (tree.name[i], tree.resgroup[i], tree.cresgroup[i], tree.shares[i], percent_text(fs.tree_percentage[i]),
           float(fs.tree_usage[i]), tree.usage[i], tree.usage_res, fs.usage_per_perc[i])
    )
    out += "Path from root: \n"
    for g in path_rows(tree.parent, i):
        out += path_line(tree, fs, g) + "\n"
    return out


def path_line(tree: PbsTree, fs: PbsFairshare, row: int) -> str:
    """One ``Path from root`` line of ``pbsfs -g``: name, cresgroup, ``usage / perc = usage/perc``."""
    return "%-10s: %5d %10.0f / %5.3f = %.0f" % (
        tree.name[row], tree.cresgroup[row], tree.usage[row], float(fs.tree_percentage[row]),
        fs.usage_per_perc[row])


def percent_text(perc: np.float32) -> str:
    """A tree percentage as ``pbsfs -g`` prints it, without the ``%`` (``10.000001``)."""
    return "%f" % _percent(perc)


def compare(tree: PbsTree, first: str, second: str, fs: PbsFairshare | None = None) -> str:
    """``pbsfs -c E1 E2``: the more deserving entity's name, or ``E1 == E2``.

    Raises
    ------
    KeyError
        ``Fairshare Entity NAME does not exist.`` (the first missing one, as pbsfs checks).
    """
    fs = fs or compute(tree)
    a, b = row_of(tree, first), row_of(tree, second)
    rc = compare_path(tree, a, b, perc=fs.tree_percentage)
    if rc == 0:
        return f"{tree.name[a]} == {tree.name[b]}\n"
    return f"{tree.name[a if rc < 0 else b]}\n"


COLUMNS = ("name", "parent", "shares", "percentage", "usage", "fairshare_tree_usage", "usage_per_perc",
           "fairshare_factor")


def _as_printed(x: float) -> float:
    """``x`` as ``printf("%f")`` shows it, back as a number."""
    return float("%f" % x)


def pbs_rows(tree: PbsTree, fs: PbsFairshare | None = None) -> list[dict[str, Any]]:
    """Every node with its shares, usage and fairshare values, in ``pbsfs`` order.

    One row per fairshare node (pre-order, siblings in reverse file order, ``unknown`` last
    under ``TREEROOT``). Fractions the scheduler keeps as C floats are given as it shows them:
    ``percentage``, ``fairshare_tree_usage`` and ``fairshare_factor`` are rounded to six
    decimals (``pbsfs -g`` prints them with ``%f``, and ``job_sort_formula`` receives them the
    same way). ``usage`` and ``usage_per_perc`` are the unrounded doubles.

    Returns
    -------
    list of dict
        Keys :data:`COLUMNS`: ``name``; ``parent`` ("" for TREEROOT); ``shares`` (int, -1 for
        TREEROOT); ``percentage`` (share of the machine in percent, float-times-100 as pbsfs
        prints it, e.g. 24.0, 10.000001); ``usage`` (usage units); ``fairshare_tree_usage``
        (dimensionless); ``usage_per_perc`` (usage units, -1 where the percentage is 0);
        ``fairshare_factor`` (0..1).
    """
    fs = fs or compute(tree)
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


#: Column keys of :func:`pbs_rows` the table shows after the name, with their headings and formats.
TABLE_COLUMNS = (("shares", "Shares", "%d"), ("percentage", "Perc%", "%.6f"), ("usage", "Usage", "%.0f"),
                 ("fairshare_tree_usage", "TreeUsage", "%.6f"), ("usage_per_perc", "Usage/Perc", "%.0f"),
                 ("fairshare_factor", "Factor", "%.6f"))


def pbs_cells(row: dict[str, Any]) -> tuple[str, ...]:
    """The table's cells of one :func:`pbs_rows` row after the name (``%.6f`` fractions, ``%.0f`` usage)."""
    return tuple(fmt % row[key] for key, _, fmt in TABLE_COLUMNS)


def format_pbs_table(rows: list[dict[str, Any]]) -> str:
    """A plain-text table, names indented two spaces a level, one line per row."""
    head = ("Entity", *(title for _, title, _ in TABLE_COLUMNS))
    cells = [("  " * d + r["name"], *pbs_cells(r)) for d, r in zip(_depths(rows), rows)]
    widths = [max(len(c[k]) for c in [head, *cells]) for k in range(len(head))]
    lines = []
    for c in [head, *cells]:
        right = [v.rjust(w) for v, w in zip(c[1:], widths[1:])]
        lines.append("  ".join([c[0].ljust(widths[0]), *right]).rstrip())
    return "\n".join(lines) + "\n"


def format_pbs_csv(rows: list[dict[str, Any]]) -> str:
    """CSV with a header of :data:`COLUMNS`; numbers as Python prints them (round-trip exact)."""
    from tui.formats.tabular import format_csv  # csv and json: not on the app's first frame (tree_rows)

    return format_csv(rows, COLUMNS)
