"""The engine's Slurm numbers printed the way ``sshare`` prints them (cells, rows, table).

Values go through the same conversions sshare's do before printing: long doubles become doubles
sent as ``value * 1e6`` and divided back (``packdouble``), the classic FairShare column is
recomputed client-side from those doubles, and cells use C's ``%f``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import numpy as np

from tui.engine.classic import fairshare_factor
from tui.engine.result import FairshareResult
from tui.model import NO_VAL, USE_PARENT, AssocTree

FLOAT_MULT = 1e6


def wire(values: np.ndarray) -> np.ndarray:
    """Doubles as sshare receives them: ``(double)x * 1e6 / 1e6`` (pack.c ``packdouble``)."""
    return (np.asarray(values, dtype=np.float64) * FLOAT_MULT) / FLOAT_MULT


def printed_fairshare(tree: AssocTree, result: FairshareResult, dampening: float = 1) -> np.ndarray:
    """The FairShare column sshare prints (NaN = empty).

    Fair Tree: the users' factor, empty for accounts. Classic: sshare recomputes
    ``2**(-(E/S)/d)`` itself from the received EffectvUsage and NormShares, for every row.
    """
    if result.algorithm == "fair_tree":
        return wire(result.fairshare)
    return fairshare_factor(wire(result.effective_usage), wire(result.norm_shares), dampening)


def _num(x: float) -> float | None:
    return None if math.isnan(x) or math.isinf(x) else float(x)


#: ``fairtop report --format json`` key of each sshare column a source may carry as printed.
REPORT_KEYS = {"NormShares": "norm_shares", "RawUsage": "raw_usage", "EffectvUsage": "effective_usage",
               "LevelFS": "level_fs", "FairShare": "fairshare"}


def _printed_value(key: str, cell: str) -> float | int | None:
    """A printed cell as its JSON value: sshare's digits, ``inf`` and empty cells as null."""
    if not cell or cell == "inf":
        return None
    return int(cell) if key == "raw_usage" else float(cell)


def report_rows(tree: AssocTree, result: FairshareResult, dampening: float = 1,
                printed: Mapping[str, Sequence[str]] | None = None) -> list[dict[str, Any]]:
    """One dict per association in input order, with the keys of ``fairtop report --format json``.

    ``level_fs`` is null where sshare prints ``inf`` or nothing, and always under classic.
    ``printed`` (sshare's columns as text, row-aligned) replaces the engine's value of every column
    it has: what the scheduler printed is reported as printed (``float(cell)`` keeps its digits).
    """
    shares = wire(result.norm_shares)
    eff = wire(result.effective_usage)
    fair = printed_fairshare(tree, result, dampening)
    level = wire(result.level_fs) if result.level_fs is not None else None
    rows = []
    for i in range(tree.size):
        raw = int(tree.shares_raw[i])
        up = raw == USE_PARENT
        lf = None
        if level is not None and not up and i != 0:
            lf = _num(level[i])
        rows.append({
            "account": str(tree.account[i]),
            "user": str(tree.user[i]),
            "raw_shares": "parent" if up else (None if raw == NO_VAL else raw),
            "norm_shares": float(shares[i]),
            "raw_usage": int(tree.usage_raw[i]) if tree.usage_raw[i] == np.floor(tree.usage_raw[i])
            else float(tree.usage_raw[i]),
            "effective_usage": float(eff[i]),
            "level_fs": lf,
            "fairshare": _num(fair[i]),
        })
    for column, key in REPORT_KEYS.items():
        cells = (printed or {}).get(column)
        if cells is not None:
            for row, cell in zip(rows, cells):
                row[key] = _printed_value(key, cell)
    return rows


def _f(x: float) -> str:
    """C's ``%f`` with sshare's empty cells for unset values."""
    if x is None or math.isnan(x) or x in (float(NO_VAL), float(0xFFFFFFFF)):
        return ""
    return "inf" if x == math.inf else f"{x:f}"


def sshare_cells(tree: AssocTree, result: FairshareResult, dampening: float = 1,
                 rows: Sequence[int] | None = None, columns: Collection[str] | None = None,
                 ) -> dict[str, list[str]]:
    """Every computed column exactly as ``sshare -a -l -P`` would print it, keyed by header name.

    With ``rows``, only those rows are formatted (the others are "") : the breakdown needs the
    cells of one path, and formatting 100k rows takes seconds. With ``columns``, only those
    headers are formatted (the tree skips what the source printed).
    """
    idx = range(tree.size) if rows is None else sorted(set(rows))
    shares = wire(result.norm_shares)
    norm = wire(result.norm_usage)
    eff = wire(result.effective_usage)
    fair = printed_fairshare(tree, result, dampening)

    def column(values: np.ndarray, keep: Callable[[int], bool] = lambda i: True) -> list[str]:
        if rows is None:
            return [_f(values[i]) if keep(i) else "" for i in idx]
        out = [""] * tree.size
        for i in idx:
            out[i] = _f(values[i]) if keep(i) else ""
        return out

    every = ("NormShares", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")
    wanted = set(columns if columns is not None else every)
    cols = {name: column(values) for name, values in
            (("NormShares", shares), ("NormUsage", norm), ("EffectvUsage", eff), ("FairShare", fair))
            if name in wanted}
    if result.level_fs is not None and "LevelFS" in wanted:
        cols["LevelFS"] = column(wire(result.level_fs), lambda i: tree.shares_raw[i] != USE_PARENT and i != 0)
    return cols


def format_table(tree: AssocTree, result: FairshareResult, dampening: float = 1,
                 printed: Mapping[str, Sequence[str]] | None = None) -> str:
    """A fixed-width table in sshare's layout (indented Account column), plus Rank for Fair Tree.

    ``printed`` (sshare's columns as text) replaces the engine's cells of every column it has."""
    cells = sshare_cells(tree, result, dampening)
    depth = tree.depth()
    names = [(" " * int(depth[i])) + str(tree.account[i]) for i in range(tree.size)]
    raw = ["parent" if s == USE_PARENT else ("" if s == NO_VAL else str(s)) for s in tree.shares_raw.tolist()]
    usage = [str(int(u)) for u in tree.usage_raw]
    for column, got in (printed or {}).items():
        if column == "RawUsage":
            usage = list(got)
        elif column in cells:
            cells[column] = list(got)
    columns: list[tuple[str, list[str], int]] = [
        ("Account", names, -20), ("User", [str(u) for u in tree.user], 10), ("RawShares", raw, 10),
        ("NormShares", cells["NormShares"], 11), ("RawUsage", usage, 11),
        ("NormUsage", cells["NormUsage"], 11), ("EffectvUsage", cells["EffectvUsage"], 13),
        ("FairShare", cells["FairShare"], 10),
    ]
    if "LevelFS" in cells:
        columns.append(("LevelFS", cells["LevelFS"], 10))
        assert result.rank is not None  # Fair Tree results carry LevelFS and Rank
        ranks = ["" if not tree.is_user[i] else str(int(result.rank[i])) for i in range(tree.size)]
        columns.append(("Rank", ranks, 6))
    widths = [max(abs(w), *(len(v) for v in vals)) if vals else abs(w) for _, vals, w in columns]

    def line(values: list[str]) -> str:
        return " ".join(v.ljust(w) if spec < 0 else v.rjust(w)
                        for v, w, (_, _, spec) in zip(values, widths, columns)).rstrip()

    out = [line([c[0] for c in columns]), " ".join("-" * w for w in widths)]
    out += [line([c[1][i] for c in columns]) for i in range(tree.size)]
    return "\n".join(out) + "\n"
