"""The engine's Slurm numbers printed the way ``sshare`` prints them (cells, rows, table).

Values go through the same conversions sshare's do before printing: long doubles become doubles
sent as ``value * 1e6`` and divided back (``packdouble``), the classic FairShare column is
recomputed client-side from those doubles, and cells use C's ``%f``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from tui.engine.classic import fairshare_factor
from tui.engine.result import FairshareResult
from tui.model import NO_VAL, USE_PARENT, AssocTree
from tui.slurm_releases import SlurmRelease

FLOAT_MULT = 1e6
PARENT_LEVEL_FS = "parent"
"""The LevelFS of a ``parent`` association, the same in the tree, the breakdown and the what-if:
it has none of its own (sshare prints the cell empty)."""


def wire(values: np.ndarray) -> np.ndarray:
    """Doubles as sshare receives them: ``(double)x * 1e6 / 1e6`` (pack.c ``packdouble``)."""
    return (np.asarray(values, dtype=np.float64) * FLOAT_MULT) / FLOAT_MULT


def printed_fairshare(tree: AssocTree, result: FairshareResult, dampening: float = 1,
                      release: SlurmRelease | None = None) -> np.ndarray:
    """The FairShare column sshare prints (NaN = empty).

    Fair Tree: the users' factor, empty for accounts. Classic up to Slurm 25.05: sshare
    recomputes ``2**(-(E/S)/d)`` itself from the received EffectvUsage and NormShares, for every
    row. Classic from 25.11 (``release``): slurmctld's own factor for users, empty for accounts
    (:mod:`tui.slurm_releases`).
    """
    if result.algorithm == "fair_tree":
        return wire(result.fairshare)
    if release is not None and release.controller_classic_fairshare:
        return np.where(tree.is_user, wire(result.fairshare), np.nan)
    return fairshare_factor(wire(result.effective_usage), wire(result.norm_shares), dampening)


REPORT_COLUMNS = ("account", "user", "raw_shares", "norm_shares", "raw_usage", "norm_usage", "effective_usage",
                  "level_fs", "fairshare", "rank")
"""The columns of ``fairtop report --format json|csv``, in order."""

#: ``fairtop report --format json|csv`` column of each sshare column a source may carry as printed.
REPORT_KEYS = {"NormShares": "norm_shares", "RawUsage": "raw_usage", "NormUsage": "norm_usage",
               "EffectvUsage": "effective_usage",
               "LevelFS": "level_fs", "FairShare": "fairshare", "Rank": "rank"}
"""Printed column -> report key; ``Rank`` is never printed by sshare, but a PrivateData view
passes it blank (the rank needs the whole tree, :mod:`tui.analysis.report_inputs`)."""


def _f(x: float) -> str:
    """C's ``%f`` with sshare's empty cells for unset values."""
    if x is None or math.isnan(x) or x in (float(NO_VAL), float(0xFFFFFFFF)):
        return ""
    return "inf" if x == math.inf else f"{x:f}"


def _f_column(values: np.ndarray, blank: np.ndarray | None = None, few: bool = False) -> list[str]:
    """:func:`_f` over a whole column: ``"%f"`` in C through ``map`` (0.14 s for 200k values,
    against 0.37 s for an f-string per numpy scalar), then the unset cells blanked, and the rows
    of ``blank`` (True: sshare leaves it empty whatever the value). ``few``: the column has few
    distinct values (NormShares), each is formatted once."""
    values = np.asarray(values, dtype=np.float64)
    out = _texts(values, "%f".__mod__, few)  # "%f" % inf == "inf", as C prints it
    unset = np.isnan(values) | (values == float(NO_VAL)) | (values == float(0xFFFFFFFF))
    if blank is not None:
        unset |= blank
    for i in np.flatnonzero(unset).tolist():
        out[i] = ""
    return out


def _texts(values: np.ndarray, text: Callable[[Any], str], few: bool) -> list[str]:
    """``text`` of each value, through ``map`` (in C); with ``few`` distinct values, each one once."""
    if not few:
        return list(map(text, values.tolist()))
    distinct, inverse = np.unique(values, return_inverse=True)
    once = list(map(text, distinct.tolist()))
    return list(map(once.__getitem__, inverse.tolist()))


def _printed_values(tree: AssocTree, result: FairshareResult, dampening: float,
                    release: SlurmRelease | None = None) -> dict[str, tuple[np.ndarray, np.ndarray | None]]:
    """sshare header -> (the doubles sshare prints with ``%f``, rows it leaves empty or None)."""
    out: dict[str, tuple[np.ndarray, np.ndarray | None]] = {
        "NormShares": (wire(result.norm_shares), None),
        "NormUsage": (wire(result.norm_usage), None),
        "EffectvUsage": (wire(result.effective_usage), None),
        "FairShare": (printed_fairshare(tree, result, dampening, release), None),
    }
    if result.level_fs is not None:
        blank = tree.shares_raw == USE_PARENT
        blank[0] = True  # root
        out["LevelFS"] = (wire(result.level_fs), blank)
    return out


def sshare_cells(tree: AssocTree, result: FairshareResult, dampening: float = 1,
                 rows: Sequence[int] | None = None, columns: Collection[str] | None = None,
                 release: SlurmRelease | None = None) -> dict[str, list[str]]:
    """Every computed column exactly as ``sshare -a -l -P`` of ``release`` would print it, keyed
    by header name (``release`` None: as 22.05 prints).

    With ``rows``, only those rows are formatted (the others are ""): the breakdown needs the
    cells of one path, not 100k rows. With ``columns``, only those headers are formatted (the
    tree skips what the source printed).
    """
    printed = _printed_values(tree, result, dampening, release)
    if columns is not None:
        printed = {name: v for name, v in printed.items() if name in columns}
    if rows is None:
        return {name: _f_column(values, blank) for name, (values, blank) in printed.items()}
    cols = {name: [""] * tree.size for name in printed}
    for i in sorted(set(rows)):
        for name, (values, blank) in printed.items():
            cols[name][i] = "" if blank is not None and blank[i] else _f(values[i])
    return cols


def _int_cells(values: np.ndarray, special: dict[int, str] | None = None, few: bool = False) -> list[str]:
    """Integers as text (``str`` through ``map``: a third of ``astype(str)``'s time), with the
    ``special`` values' cells replaced. ``few``: few distinct values (RawShares), each formatted once."""
    out = _texts(values, str, few)
    for value, cell in (special or {}).items():
        for i in np.flatnonzero(values == value).tolist():
            out[i] = cell
    return out


def _usage_cells(usage: np.ndarray) -> list[str]:
    """RawUsage as the input gave it: an integer (sshare's truncated column) or, from
    ``scontrol show assoc_mgr``, the shortest text of the double (2 decimals)."""
    if bool(np.all(usage == np.floor(usage))):
        return _int_cells(usage.astype(np.int64))
    return [str(int(u)) if u == int(u) else repr(u) for u in usage.astype(np.float64).tolist()]


def report_blocks(tree: AssocTree, result: FairshareResult, dampening: float = 1,
                  size: int = 20_000, printed: Mapping[str, Sequence[str]] | None = None,
                  release: SlurmRelease | None = None) -> Iterator[dict[str, list[str]]]:
    """Every :data:`REPORT_COLUMNS` column as text, ``size`` associations at a time, in input order.

    The computed columns are exactly what ``sshare -a -l -P`` prints (:func:`sshare_cells`):
    ``%f`` with six decimals, ``inf`` where sshare prints it, "" where it prints nothing
    (FairShare of accounts and LevelFS of ``parent`` users under Fair Tree, LevelFS everywhere
    under classic). ``raw_shares`` is an integer, ``parent`` or ""; ``rank`` is the Fair Tree
    rank of users ("" for accounts and under classic). Blocks keep the text of a 200k-row
    report from being held at once (its memory cost the process more than its formatting).
    ``printed`` (sshare's columns as text, row-aligned) replaces the engine's cells of every
    column it has: what the scheduler printed is reported as printed.
    """
    values_of = _printed_values(tree, result, dampening, release)
    empty = (np.zeros(tree.size), np.ones(tree.size, dtype=bool))
    raw = tree.shares_raw

    def cells(name: str, s: slice) -> list[str]:
        values, blank = values_of.get(name, empty)
        return _f_column(values[s], None if blank is None else blank[s], few=name == "NormShares")

    for lo in range(0, tree.size, size):
        s = slice(lo, min(lo + size, tree.size))
        shares = _int_cells(raw[s], {USE_PARENT: "parent", NO_VAL: ""}, few=True)
        if result.rank is not None:
            rank = _int_cells(result.rank[s])
            for i in np.flatnonzero(~tree.is_user[s]).tolist():
                rank[i] = ""
        else:
            rank = [""] * (s.stop - s.start)
        block = {
            "account": tree.account[s].tolist(),  # str objects already
            "user": tree.user[s].tolist(),
            "raw_shares": shares,
            "norm_shares": cells("NormShares", s),
            "raw_usage": _usage_cells(tree.usage_raw[s]),
            "norm_usage": cells("NormUsage", s),
            "effective_usage": cells("EffectvUsage", s),
            "level_fs": cells("LevelFS", s),
            "fairshare": cells("FairShare", s),
            "rank": rank,
        }
        for column, key in REPORT_KEYS.items():
            cells_printed = (printed or {}).get(column)
            if cells_printed is not None:
                block[key] = list(cells_printed[s])
        yield block


def format_table(tree: AssocTree, result: FairshareResult, dampening: float = 1,
                 printed: Mapping[str, Sequence[str]] | None = None, release: SlurmRelease | None = None) -> str:
    """A fixed-width table in sshare's layout (indented Account column), plus Rank for Fair Tree.

    ``printed`` (sshare's columns as text) replaces the engine's cells of every column it has."""
    cells = sshare_cells(tree, result, dampening, release=release)
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
        ranks = list((printed or {}).get("Rank", ranks))
        columns.append(("Rank", ranks, 6))
    widths = [max(abs(w), *(len(v) for v in vals)) if vals else abs(w) for _, vals, w in columns]

    def line(values: list[str]) -> str:
        return " ".join(v.ljust(w) if spec < 0 else v.rjust(w)
                        for v, w, (_, _, spec) in zip(values, widths, columns)).rstrip()

    out = [line([c[0] for c in columns]), " ".join("-" * w for w in widths)]
    out += [line([c[1][i] for c in columns]) for i in range(tree.size)]
    return "\n".join(out) + "\n"
