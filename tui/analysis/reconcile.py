"""Reconciliation: the engine's cells against the ones the scheduler printed.

Rule one of trust: a number the scheduler printed is shown as it printed it, and where the engine
disagrees the disagreement is named, never hidden. This module finds the disagreements; sources
that carry sshare's computed columns hand them in as printed strings. No Textual here.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from tui.engine import compute
from tui.engine.result import FairshareResult
from tui.engine.tree import Structure
from tui.formats.sshare import sshare_cells, wire
from tui.model import AssocTree, path_to
from tui.slurm_releases import SlurmRelease

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
    """Cells the engine computes differently from what was printed, beyond what the inputs'
    precision allows: engine defects."""
    checked: int
    """Cells compared (columns present in the printed output x rows)."""
    within_precision: tuple[Disagreement, ...] = ()
    """Cells that differ in the last printed digit where the exact value lies on a rounding
    boundary that the rounded usage cannot resolve (shown as printed; not a defect)."""

    @property
    def agrees(self) -> bool:
        return not self.disagreements


#: Columns computed from raw usage, where a rounded input can move the last printed digit.
_FROM_USAGE = ("NormUsage", "EffectvUsage", "LevelFS")


def _usage_bound(tree: AssocTree, result: FairshareResult, column: str, row: int, printed: str,
                 precision: float) -> bool:
    """Whether ``printed`` is reachable from the engine's value of ``column`` at ``row`` when every
    raw usage may be off by ``precision`` (a ratio of two usages moves by at most the sum of their
    relative errors; the row's own, its fairshare parent's and the root's are counted)."""
    try:
        want = float(printed)
    except ValueError:
        return False
    values = {"NormUsage": result.norm_usage, "EffectvUsage": result.effective_usage, "LevelFS": result.level_fs}
    col = values.get(column)
    if col is None:
        return False
    value = float(wire(np.asarray([col[row]]))[0])
    usage = tree.usage_raw
    refs = (row, int(max(result.structure.fs_parent[row], 0)), 0)
    if not np.isfinite(value) or any(usage[r] <= 0 for r in refs):
        return False
    rel = sum(precision / float(usage[r]) for r in refs)
    lo, hi = float(f"{value * (1 - rel):f}"), float(f"{value * (1 + rel):f}")
    return lo <= want <= hi


def reconcile(tree: AssocTree, result: FairshareResult, printed: Mapping[str, Sequence[str]],
              dampening: float = 1, skip: Collection[int] = (),
              precision: float = USAGE_PRECISION, release: SlurmRelease | None = None) -> Reconciliation:
    """Compare the engine's sshare cells for ``tree`` with ``printed`` (header -> column cells,
    aligned with the tree's rows). Columns absent from ``printed`` are not compared, nor the rows
    in ``skip`` (rows the scheduler printed nothing for: :attr:`Snapshot.usage_unknown`). A cell
    computed from raw usage that differs only as far as ``precision`` (billing-seconds of every
    usage) allows is put in ``within_precision``, not counted as a disagreement."""
    ours = sshare_cells(tree, result, dampening, release=release)  # blank where that release prints none
    bad: list[Disagreement] = []
    near: list[Disagreement] = []
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
                d = Disagreement(i, tree.label(i), column, got, want)
                if column in _FROM_USAGE and _usage_bound(tree, result, column, i, want, precision):
                    near.append(d)
                else:
                    bad.append(d)
    return Reconciliation(tuple(bad), checked, tuple(near))


@dataclass(frozen=True)
class OrderFix:
    """A Fair Tree order between two sibling accounts that the inputs could not decide."""

    first: str
    """The account sshare's printed FairShare ranks first (the earlier one of a tie)."""
    second: str
    level_fs: str
    """The LevelFS both print."""
    moved: str
    """The account whose raw usage was moved, and by how much (billing-seconds)."""
    delta: float
    tied: bool = False
    """slurmctld found both LevelFS exactly equal (the later account's first user kept the last
    rank handed out in the earlier one); the usage was moved to make them equal."""
    accounts: bool = True
    """Two sibling accounts (else two users)."""

    def sentence(self) -> str:
        moved = (f"with {self.moved}'s raw usage moved by {self.delta:+.6g} billing-seconds, within the "
                 "precision of the input.")
        if self.tied:
            how = (f"{self.second}'s first user keeps the last rank of {self.first}'s users" if self.accounts
                   else "both get one rank")
            return (f"{self.first} and {self.second} both print LevelFS {self.level_fs}, and sshare's printed "
                    f"FairShare shows slurmctld found them exactly equal (a tie: {how}); fairtop makes them "
                    "equal too, " + moved)
        return (f"{self.first} and {self.second} both print LevelFS {self.level_fs}: the order between them "
                f"is taken from sshare's printed FairShare ({self.first} first), " + moved)


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


def _with_usage(tree: AssocTree, usage: np.ndarray) -> AssocTree:
    return AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw, usage, tree.sibling_order)


def _fairshare_agrees(tree: AssocTree, usage: np.ndarray, rows: list[int], printed: Sequence[str]) -> bool:
    """Whether the engine on ``usage`` prints sshare's FairShare on ``rows``."""
    moved = _with_usage(tree, usage)
    cells = sshare_cells(moved, compute(moved, "fair_tree"), rows=rows)["FairShare"]
    return all(cells[i] == printed[i] for i in rows)


def _level_fs(tree: AssocTree, usage: np.ndarray, row: int, fs_parent: int, level_shares: float) -> np.longdouble:
    """The engine's LevelFS of ``row`` for ``usage`` (:func:`tui.engine.fair_tree.level_fairshare`)."""
    s = np.longdouble(float(tree.shares_raw[row]) / level_shares)
    return np.longdouble(s / (usage[row] / usage[fs_parent]))


def _exact_tie(tree: AssocTree, st: Structure, usage: np.ndarray, a: int, b: int,
               step: np.longdouble) -> np.longdouble:
    """Nudge ``usage[b]`` (and its ancestors, in place) by a few units in the last place until
    the two LevelFS are equal in long double (``u_a * S_b / S_a`` rounds); returns the total step."""
    path = path_to(tree, b)
    parent = int(st.fs_parent[b])
    shares = float(st.level_shares[b])  # the sum of the level's shares (the same for a and b)
    for _ in range(256):
        lf_a, lf_b = (_level_fs(tree, usage, r, parent, shares) for r in (a, b))
        if lf_a == lf_b:
            break
        # A larger usage lowers LevelFS: move u_b towards the side that closes the gap.
        nxt = np.nextafter(usage[b], np.longdouble(np.inf) if lf_b > lf_a else np.longdouble(-np.inf))
        d = nxt - usage[b]
        usage[path] += d
        step += d
    return step


_Candidate = tuple[int, int, int, np.longdouble, bool]
"""first, second, the row whose usage moves, by how much, whether the two end up tied."""


def _decide(tree: AssocTree, st: Structure, usage: np.ndarray, a: int, b: int, rows: list[int], fair: list[float],
            fair_cells: Sequence[str], end: np.ndarray, precision: float, users: bool,
            ) -> tuple[np.ndarray, _Candidate] | None:
    """The usage (and the move) that gives sshare's printed order of siblings ``a``, ``b`` (``a``
    first in the engine), or None when no move within ``precision`` does."""
    s_a, s_b = np.longdouble(float(tree.shares_raw[a])), np.longdouble(float(tree.shares_raw[b]))
    candidates: list[_Candidate] = []
    b_first = _best_printed(tree, fair, end, b) > _best_printed(tree, fair, end, a)
    tie = usage[a] * s_b / s_a - usage[b]  # u_b = u_a * S_b / S_a: equal LevelFS in long double
    if b_first:
        # b first: LF_b > LF_a  <=>  u_b * S_a < u_a * S_b (the parent's usage cancels).
        gap = usage[b] * s_a / s_b - usage[a]
        lower_b = gap * s_b / s_a
        move, delta = (b, -lower_b) if lower_b <= gap else (a, gap)
        step = delta * (1 + np.longdouble(1e-9)) + np.sign(delta) * np.longdouble(1e-9)
        candidates.append((b, a, move, step, False))
    if not users or fair[a] == fair[b]:  # two users tie exactly when they print one FairShare
        candidates.append((b, a, b, tie, True) if b_first else (a, b, b, tie, True))
    for first, second, move, step, tied in candidates:
        if abs(step) > precision:
            continue
        trial = usage.copy()
        trial[path_to(tree, move)] += step
        if tied:
            step = _exact_tie(tree, st, trial, a, b, step)
        if users or _fairshare_agrees(tree, trial, rows, fair_cells):
            return trial, (first, second, move, step, tied)
    return None


def order_from_printed(tree: AssocTree, printed: Mapping[str, Sequence[str]],
                       precision: float = USAGE_PRECISION, result: FairshareResult | None = None,
                       ) -> tuple[AssocTree, tuple[OrderFix, ...]]:
    """Fair Tree: where two sibling accounts print the same LevelFS but the engine's FairShare
    below them differs from sshare's, move one raw usage (and its ancestors') by the least amount
    that gives what sshare printed, if that stays within ``precision``: either the other order
    (the later account first), or an exact tie (slurmctld's LevelFS were equal, so the later
    account's first user kept the earlier one's last rank).

    Slurm compares LevelFS in long double from usage the sources round (assoc_mgr to 2 decimals,
    sshare to whole numbers), so such a near-tie cannot be decided from the inputs; the printed
    ranks decide it. Each candidate is checked by running the engine and comparing the printed
    FairShare of both accounts' users. The returned tree is what projections start from. Returns
    the tree unchanged, and no fixes, when nothing needs deciding.
    """
    if "FairShare" not in printed or "LevelFS" not in printed:
        return tree, ()
    result = result if result is not None and result.algorithm == "fair_tree" else compute(tree, "fair_tree")
    fair_cells = printed["FairShare"]
    fair = [float(c) if c else -1.0 for c in fair_cells]
    level = list(printed["LevelFS"])
    end = _subtree_end(tree)
    st = result.structure
    level_fs = result.level_fs
    assert level_fs is not None  # a fair_tree result has LevelFS
    ours = sshare_cells(tree, result)["FairShare"]
    fixes: list[OrderFix] = []
    usage = tree.usage_raw.copy()
    # Siblings (accounts and users) with a printed LevelFS, by fairshare parent; the deepest
    # groups first, so that a tie among users is settled before their accounts are compared.
    rows_lf = np.flatnonzero(~st.use_parent)
    members: dict[int, list[int]] = defaultdict(list)
    for r in rows_lf[rows_lf > 0].tolist():
        if level[r] and level[r] != "inf":
            members[int(st.fs_parent[r])].append(r)
    depth = tree.depth()
    groups = sorted(members, key=lambda g: -int(depth[g]))
    # Users first: two users' order (or tie) is what their own printed FairShare says. Then the
    # accounts, deepest first, each candidate checked by the engine against the printed
    # FairShare of both accounts' users.
    for users_pass in (True, False):
        for group in groups:
            sib = sorted(members[group], key=lambda r: -level_fs[r])  # the engine's order
            for a, b in zip(sib, sib[1:]):
                both_users = bool(tree.is_user[a] and tree.is_user[b])
                if level[a] != level[b] or both_users != users_pass:
                    continue
                rows = [i for r in (a, b) for i in range(r, int(end[r])) if tree.is_user[i]]
                if all(ours[i] == fair_cells[i] for i in rows):
                    continue  # the engine already prints what sshare printed for both
                fix = _decide(tree, st, usage, a, b, rows, fair, fair_cells, end, precision, both_users)
                if fix is not None:
                    usage, (first, second, move, step, tied) = fix
                    if step:
                        fixes.append(OrderFix(tree.label(first), tree.label(second), level[a], tree.label(move),
                                              float(step), tied, not both_users))
    if not fixes:
        return tree, ()
    return _with_usage(tree, usage), tuple(fixes)
