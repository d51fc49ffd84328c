"""Reconciliation: the engine's cells against the ones the scheduler printed.

Rule one of trust: a number the scheduler printed is shown as it printed it, and where the engine
disagrees the disagreement is named, never hidden. This module finds the disagreements; sources
that carry sshare's computed columns hand them in as printed strings. No Textual here.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tui.engine import compute
from tui.engine.result import FairshareResult
from tui.formats.sshare import sshare_cells
from tui.model import AssocTree, path_to

#: How far a raw usage may be moved to follow the printed order: sshare truncates RawUsage to a
#: whole number, so the true value lies within one billing-second of what any source gives.
USAGE_PRECISION = 1.0

__all__ = ["COLUMNS", "Disagreement", "OrderFix", "Reconciliation", "order_from_printed", "reconcile"]

#: sshare's computed columns the engine reproduces (RawShares and RawUsage are inputs).
COLUMNS = ("NormShares", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")


@dataclass(frozen=True)
class Disagreement:
    """One printed cell the engine computes differently."""

    row: int
    label: str
    column: str
    ours: str
    printed: str


@dataclass(frozen=True)
class Reconciliation:
    """Every compared cell's outcome."""

    disagreements: tuple[Disagreement, ...]
    checked: int
    """Cells compared (columns present in the printed output x rows)."""

    @property
    def agrees(self) -> bool:
        return not self.disagreements


def reconcile(tree: AssocTree, result: FairshareResult, printed: Mapping[str, Sequence[str]],
              dampening: float = 1, skip: Collection[int] = ()) -> Reconciliation:
    """Compare the engine's sshare cells for ``tree`` with ``printed`` (header -> column cells,
    aligned with the tree's rows). Columns absent from ``printed`` are not compared, nor the rows
    in ``skip`` (rows the scheduler printed nothing for: :attr:`Snapshot.usage_unknown`)."""
    ours = sshare_cells(tree, result, dampening)
    bad: list[Disagreement] = []
    checked = 0
    skipped = frozenset(skip)
    for column in COLUMNS:
        if column not in printed or column not in ours:
            continue
        for i, (got, want) in enumerate(zip(ours[column], printed[column])):
            if i in skipped:
                continue
            checked += 1
            if got != want:
                bad.append(Disagreement(i, tree.label(i), column, got, want))
    return Reconciliation(tuple(bad), checked)


@dataclass(frozen=True)
class OrderFix:
    """A Fair Tree order between two sibling accounts that the inputs could not decide."""

    first: str
    """The account sshare's printed FairShare ranks first."""
    second: str
    level_fs: str
    """The LevelFS both print."""
    moved: str
    """The account whose raw usage was moved, and by how much (billing-seconds)."""
    delta: float

    def sentence(self) -> str:
        return (f"{self.first} and {self.second} both print LevelFS {self.level_fs}: the order between them "
                f"is taken from sshare's printed FairShare ({self.first} first), with {self.moved}'s raw "
                f"usage moved by {self.delta:+.6g} billing-seconds, within the precision of the input.")


def _subtree_end(tree: AssocTree) -> np.ndarray:
    """One past the last row of every row's subtree (rows are in pre-order)."""
    depth = tree.depth()
    end = np.empty(tree.size, dtype=np.int64)
    stack: list[int] = []
    for i in range(tree.size):
        while stack and depth[stack[-1]] >= depth[i]:
            end[stack.pop()] = i
        stack.append(i)
    for j in stack:
        end[j] = tree.size
    return end


def _best_printed(tree: AssocTree, fair: list[float], end: np.ndarray, row: int) -> float:
    """The highest printed FairShare among the users below ``row`` (-1 if none printed)."""
    return max((fair[i] for i in range(row, int(end[row])) if tree.is_user[i]), default=-1.0)


def order_from_printed(tree: AssocTree, printed: Mapping[str, Sequence[str]],
                       precision: float = USAGE_PRECISION, result: FairshareResult | None = None,
                       ) -> tuple[AssocTree, tuple[OrderFix, ...]]:
    """Fair Tree: where two sibling accounts print the same LevelFS but the engine orders them
    against what sshare's printed FairShare reveals, move one raw usage (and its ancestors') by
    the least amount that gives the printed order, if that stays within ``precision``.

    Slurm compares LevelFS in long double from usage the sources round (assoc_mgr to 2 decimals,
    sshare to whole numbers), so such a near-tie cannot be decided from the inputs; the printed
    ranks decide it. The returned tree is what projections start from. Returns the tree
    unchanged, and no fixes, when nothing needs deciding.
    """
    if "FairShare" not in printed or "LevelFS" not in printed:
        return tree, ()
    result = result if result is not None and result.algorithm == "fair_tree" else compute(tree, "fair_tree")
    fair = [float(c) if c else -1.0 for c in printed["FairShare"]]
    level = list(printed["LevelFS"])
    end = _subtree_end(tree)
    st = result.structure
    level_fs = result.level_fs
    assert level_fs is not None  # a fair_tree result has LevelFS
    fixes: list[OrderFix] = []
    usage = tree.usage_raw.copy()
    accounts = np.flatnonzero(~tree.is_user & ~st.use_parent)
    for group in np.unique(st.fs_parent[accounts[accounts > 0]]):
        sib = [int(a) for a in accounts if a > 0 and st.fs_parent[a] == group]
        sib.sort(key=lambda a: -level_fs[a])  # the engine's order
        for a, b in zip(sib, sib[1:]):
            if level[a] != level[b] or not level[a] or level[a] == "inf":
                continue
            if _best_printed(tree, fair, end, b) <= _best_printed(tree, fair, end, a):
                continue  # the printed ranks agree with the engine's order
            # b must come first: LF_b > LF_a  <=>  u_b * S_a < u_a * S_b (the parent's usage cancels).
            s_a, s_b = float(tree.shares_raw[a]), float(tree.shares_raw[b])
            gap = usage[b] * np.longdouble(s_a) / np.longdouble(s_b) - usage[a]  # >= 0 here
            lower_b = gap * np.longdouble(s_b / s_a)
            move, delta = (b, -lower_b) if lower_b <= gap else (a, gap)
            step = np.longdouble(delta) * (1 + np.longdouble(1e-9)) + np.sign(delta) * np.longdouble(1e-9)
            if abs(step) > precision:
                continue
            usage[path_to(tree, move)] += step
            fixes.append(OrderFix(tree.label(b), tree.label(a), level[a], tree.label(move), float(step)))
    if not fixes:
        return tree, ()
    fixed = AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw, usage, tree.sibling_order)
    return fixed, tuple(fixes)
