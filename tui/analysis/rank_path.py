"""How Fair Tree's per-level places become one global rank.

Fair Tree ranks users depth-first (spec §3.3): it visits the root's fairshare children in LevelFS
order (highest first, users before accounts on a tie), walks each account's subtree the same way
before the next sibling, and hands the users it reaches the ranks N, N-1, ... (N = every user
association, N is best). So the users ahead of a user are exactly the users under the siblings
placed before each association on its fairshare path: the rank is N minus their sum, unless a tie
lets it keep the rank of the user visited just before. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from tui.analysis.standing import Standing
from tui.engine.result import FairshareResult
from tui.model import AssocTree

__all__ = ["LevelPlace", "RankPath", "RankShared", "fair_tree_siblings", "fs_subtree_users", "ordinal", "rank_path"]


def ordinal(n: int) -> str:
    """``1`` -> ``1st``, ``2`` -> ``2nd``, ``11`` -> ``11th``, ``23`` -> ``23rd``."""
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n:,}{suffix}"


@dataclass(frozen=True)
class LevelPlace:
    """One association of the fairshare path and its place among its Fair Tree siblings."""

    row: int
    name: str
    """The account, or the user for the user's own level."""
    within: str
    """The fairshare parent's account name (``root`` at the top level)."""
    place: int
    """1-based place in the order Fair Tree visits the siblings."""
    count: int
    """Siblings at this level, itself included."""
    tied: int
    """Siblings with exactly its LevelFS, itself included (1: no tie)."""
    users_ahead: int
    """Users under the siblings placed before it: Fair Tree ranks all of them first."""
    higher: int
    """Siblings with a higher LevelFS (placed before it and not tied with it)."""

    @property
    def place_text(self) -> str:
        """``5th of 5 in mech``, ``tied with all 24 in lab`` or ``3rd of 9 (tied with 2 others) in lab``."""
        if self.tied == self.count and self.count > 1:
            return f"tied with all {self.count:,} in {self.within}"
        text = f"{ordinal(self.place)} of {self.count:,}"
        if self.tied > 1:
            text += f" (tied with {self.tied - 1:,} other{'s' if self.tied > 2 else ''})"
        return f"{text} in {self.within}"


@dataclass(frozen=True)
class RankPath:
    """A user's rank and the places along its fairshare path that make it."""

    levels: tuple[LevelPlace, ...]
    """From the root's children down to the user itself."""
    users: int
    """N: every user association."""
    rank: int
    """The user's Fair Tree rank (N = best)."""
    ahead: int
    """Users with a strictly higher rank."""

    @property
    def visited_before(self) -> int:
        """Users Fair Tree reaches before this one: the sum of every level's ``users_ahead``."""
        return sum(level.users_ahead for level in self.levels)

    @property
    def rank_without_ties(self) -> int:
        """N minus the users visited before: the rank when no tie lets it keep an earlier one."""
        return self.users - self.visited_before

    def held_back_by(self) -> LevelPlace | None:
        """The level where the path is placed worst among its siblings: the largest share of the
        siblings with a higher LevelFS (higher / (count - 1)), then the most users ahead. Siblings
        placed before it only by a tie do not hold it back (a user tied with the one reached
        before keeps that user's rank); None when no level has a sibling above it."""
        candidates = [lv for lv in self.levels if lv.users_ahead > 0 and lv.higher > 0]
        if not candidates:
            return None
        return max(candidates, key=lambda lv: (lv.higher / (lv.count - 1), lv.users_ahead))

    def lines(self) -> list[str]:
        """The sum in words, one line per level, then the rank it gives."""
        out = []
        for level in self.levels:
            who = f"{level.users_ahead:,} user{'s' if level.users_ahead != 1 else ''}"
            if level is self.levels[-1]:
                out.append(f"{level.name}: {level.place_text}: {who} reached before it")
            else:
                n = level.place - 1
                out.append(f"{level.name}: {level.place_text}: {who} under the {n:,} sibling{'s' if n != 1 else ''}"
                           " placed before it")
        out.append(f"N − users reached first = {self.users:,} − {self.visited_before:,} = "
                   f"{self.rank_without_ties:,}")
        if self.rank != self.rank_without_ties:
            out.append(f"a tie (equal LevelFS) with the user reached just before keeps that user's rank: "
                       f"{self.rank:,}")
        return out


def fair_tree_siblings(tree: AssocTree, result: FairshareResult, row: int) -> np.ndarray:
    """``row`` and its Fair Tree siblings (the fairshare parent's children), in the order Fair
    Tree visits them: LevelFS descending, users before accounts on equal LevelFS, then
    ``children_list`` order (as :mod:`tui.engine.fair_tree`)."""
    st = result.structure
    lf = result.level_fs
    assert lf is not None, "Fair Tree sibling order needs Fair Tree results (LevelFS)"
    sibs = np.flatnonzero(st.fs_parent == st.fs_parent[row])
    sibs = sibs[sibs != 0]
    key = tree.sibling_order[sibs] if tree.sibling_order is not None else sibs
    order: np.ndarray = sibs[np.lexsort((key, ~tree.is_user[sibs], -lf[sibs]))]
    return order


def fs_subtree_users(tree: AssocTree, result: FairshareResult) -> np.ndarray:
    """Users under every row in the fairshare tree (a user counts 1; a ``parent`` account 0:
    its children sit one level up, under its fairshare parent)."""
    st = result.structure
    count = tree.is_user.astype(np.int64)
    for rows in reversed(st.levels):  # deepest first: a level is complete before it is added up
        np.add.at(count, st.fs_parent[rows], count[rows])
    return count


@dataclass
class RankShared:
    """What every user's rank path reuses, for a caller that walks many (a publisher ranking each
    user of a cluster): users under each row, each sibling group's order, the users' sorted ranks."""

    below: np.ndarray
    user_ranks: np.ndarray
    orders: dict[int, np.ndarray] = field(default_factory=dict)

    @classmethod
    def of(cls, standing: Standing) -> RankShared | None:
        tree, res = standing.snapshot.tree, standing.fairshare
        if tree is None or res is None or res.rank is None or res.level_fs is None:
            return None
        return cls(fs_subtree_users(tree, res), np.sort(res.rank[tree.is_user]))


def rank_path(standing: Standing, row: int, users_below: np.ndarray | None = None,
              shared: RankShared | None = None) -> RankPath | None:
    """The places along ``row``'s fairshare path and the rank they make (None: not a Fair Tree user).

    ``users_below`` is :func:`fs_subtree_users`, passed when the caller has it already; ``shared``
    (:class:`RankShared`) makes a walk of many rows cost each row its own path only.
    """
    tree, res = standing.snapshot.tree, standing.fairshare
    if tree is None or res is None or res.rank is None or res.level_fs is None or not tree.is_user[row]:
        return None
    below = shared.below if shared is not None else (
        fs_subtree_users(tree, res) if users_below is None else users_below)
    st = res.structure
    chain = [row]
    while st.fs_parent[chain[-1]] > 0:
        chain.append(int(st.fs_parent[chain[-1]]))
    levels = []
    for r in reversed(chain):
        if shared is None:
            order = fair_tree_siblings(tree, res, r)
        else:
            group = int(st.fs_parent[r])
            if group not in shared.orders:
                shared.orders[group] = fair_tree_siblings(tree, res, r)
            order = shared.orders[group]
        place, count = int(np.flatnonzero(order == r)[0]) + 1, len(order)
        tied = int(np.count_nonzero(res.level_fs[order] == res.level_fs[r]))
        higher = int(np.count_nonzero(res.level_fs[order[: place - 1]] > res.level_fs[r]))
        ahead = int(below[order[: place - 1]].sum())
        fp = int(st.fs_parent[r])
        name = str(tree.user[r]) if tree.is_user[r] else str(tree.account[r])
        levels.append(LevelPlace(r, name, str(tree.account[fp]), place, count, tied, ahead, higher))
    rank = int(res.rank[row])
    if shared is not None:
        ahead_users = len(shared.user_ranks) - int(np.searchsorted(shared.user_ranks, rank, side="right"))
    else:
        ahead_users = int(np.count_nonzero(res.rank[tree.is_user] > rank))
    return RankPath(tuple(levels), tree.user_count, rank, ahead_users)
