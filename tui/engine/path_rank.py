"""Fair Tree rank of one user when only the usage on its own path moves (the recovery curve).

A change to the usage of a row and its ancestors moves the LevelFS of the rows in the sibling
groups along its fairshare path and nowhere else, and the row's rank is ``N - k`` with ``k`` the
users the depth-first walk meets before it: the users under every sibling sorted ahead of the
path at each level. So one rank needs the few groups on the path, not the whole tree's sort.
Where the row ties with its predecessor, its rank is the last untied one handed out before it:
found among the users just ahead of it in its group (a run of ``parent`` users, all at +inf);
where the tie reaches further (an account's subtree ahead, or an account's tie inherited),
:func:`rank_on_path` says 0 and the caller computes the whole tree. The order and the tie rule are
:func:`tui.engine.fair_tree.sorted_siblings` and :func:`tui.engine.fair_tree.rank_users`'s.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from tui.engine.fair_tree import NO_VAL_LD, fair_tree_norm_shares, level_fs_of
from tui.engine.tree import Structure
from tui.model import AssocTree, path_to


@dataclass(frozen=True, eq=False)
class PathGroup:
    """One sibling group on a user's fairshare path."""

    parent: int
    """The fairshare parent whose children these are."""
    rows: np.ndarray
    """Its children, in ``children_list`` order."""
    on_path: int
    """Index in ``rows`` of the path's member."""
    users: np.ndarray
    """Users in each member's fairshare subtree (itself included)."""


def users_under(tree: AssocTree, st: Structure) -> np.ndarray:
    """User associations in every row's fairshare subtree, itself included."""
    under = tree.is_user.astype(np.int64)
    for rows in reversed(st.levels):  # bottom-up over the fairshare tree
        under += np.bincount(st.fs_parent[rows], weights=under[rows], minlength=tree.size).astype(np.int64)
    return under


def children_order(tree: AssocTree) -> np.ndarray:
    """Every row in ``children_list`` order, the order :func:`sorted_siblings` breaks ties by."""
    return np.arange(tree.size) if tree.sibling_order is None else \
        np.lexsort((np.arange(tree.size), tree.sibling_order))


def path_groups(tree: AssocTree, st: Structure, row: int, under: np.ndarray, order: np.ndarray,
                known: dict[int, np.ndarray] | None = None) -> list[PathGroup]:
    """The sibling groups on ``row``'s fairshare path, top-down; ``known`` keeps each parent's
    children for the next row's path."""
    known = {} if known is None else known
    chain = [row]
    while st.fs_parent[chain[-1]] > 0:
        chain.append(int(st.fs_parent[chain[-1]]))
    groups = []
    for member in reversed(chain):
        parent = int(st.fs_parent[member])
        rows = known.get(parent)
        if rows is None:
            rows = known[parent] = order[st.fs_parent[order] == parent]
        groups.append(PathGroup(parent, rows, int(np.flatnonzero(rows == member)[0]), under[rows]))
    return groups


def rank_on_path(groups: list[PathGroup], level_fs: Callable[[PathGroup], np.ndarray], is_user: np.ndarray,
                 users: int) -> np.ndarray:
    """The path's user's rank at each of some points, from each group's LevelFS at those points
    (``level_fs(group)``: points x members, long double); 0 where the tie it is in reaches past
    its own sibling group or a LevelFS is NaN (rank the whole tree there)."""
    m = level_fs(groups[0]).shape[0]
    ahead = np.zeros(m, dtype=np.int64)
    tied = parent_tied = np.zeros(m, dtype=bool)
    unordered = np.zeros(m, dtype=bool)  # a NaN LevelFS: no order to reason about here
    for g in groups:
        lf = level_fs(g)
        unordered |= np.isnan(lf).any(axis=1)
        is_account, k = ~is_user[g.rows], g.on_path
        own, index = lf[:, k : k + 1], np.arange(g.rows.size)
        # Sorted ahead: a higher LevelFS, or the same with a user before an account, or the
        # same kind earlier in children_list.
        before = (lf > own) | ((lf == own) & ((is_account < is_account[k])
                                              | ((is_account == is_account[k]) & (index < k))))
        ahead += before.astype(np.int64) @ g.users
        first = ~before.any(axis=1)
        prev = np.where(before, lf, np.longdouble(np.inf)).min(axis=1)
        prev[first] = NO_VAL_LD
        parent_tied, tied = tied, (prev == own[:, 0]) | (first & tied & (g.parent != 0))
    out = np.where(tied | unordered, 0, users - ahead)
    last = groups[-1]
    for i in np.flatnonzero(tied & ~unordered):
        out[i] = _untied_before(lf[i], before[i], ~is_user[last.rows], int(ahead[i]), bool(parent_tied[i]),
                                last.parent != 0, users)
    return out


class PathRank:
    """Ranks of user ``row`` of ``tree`` with usage added to its path (Fair Tree).

    Parameters
    ----------
    tree : AssocTree
    st : Structure
        From :func:`tui.engine.tree.structure`.
    row : int
        A user association.
    """

    def __init__(self, tree: AssocTree, st: Structure, row: int) -> None:
        if not tree.is_user[row]:
            raise ValueError(f"row {row} is not a user association: Fair Tree ranks users only")
        self.tree, self.st, self.row = tree, st, row
        self.users = tree.user_count
        self.path = np.asarray(path_to(tree, row), dtype=np.int64)
        self.shares = fair_tree_norm_shares(tree, st)
        self.groups = path_groups(tree, st, row, users_under(tree, st), children_order(tree))
        # Members whose usage moves: the path's (a ``parent`` account on the path sits beside its child).
        self.moves = {g.parent: np.isin(g.rows, self.path) for g in self.groups}

    def ranks(self, added: np.ndarray) -> np.ndarray:
        """The row's rank with each of ``added`` (long double) usage on it and every direct
        ancestor (as :func:`tui.engine.projection.add_usage` adds it); 0 where the tie it is in
        reaches past its own sibling group (compute the whole tree there)."""
        added = np.asarray(added, dtype=np.longdouble)[:, None]
        usage, st, is_user = self.tree.usage_raw, self.st, self.tree.is_user

        def level_fs(g: PathGroup) -> np.ndarray:
            rows = g.rows
            u = np.where(self.moves[g.parent], usage[rows] + added, usage[rows])  # (points, members)
            return level_fs_of(u, usage[g.parent] + added, self.shares[rows], st.use_parent[rows], is_user[rows],
                               np.zeros(rows.size, dtype=bool))

        return rank_on_path(self.groups, level_fs, is_user, self.users)


def _untied_before(lf: np.ndarray, before: np.ndarray, is_account: np.ndarray, ahead: int,
                   parent_tied: bool, nested: bool, users: int) -> int:
    """A tied row's rank: the last untied user's just ahead of it in its own group (a run of
    equal LevelFS, e.g. users with ``parent`` shares); 0 if that reaches past the group."""
    in_order = sorted(np.flatnonzero(before).tolist(), key=lambda i: (-lf[i], is_account[i], i))
    for pos in range(len(in_order) - 1, -1, -1):
        s = in_order[pos]
        if is_account[s]:
            return 0  # its last user is somewhere in that account's subtree
        ahead -= 1
        prev = lf[in_order[pos - 1]] if pos > 0 else NO_VAL_LD
        if not (prev == lf[s] or (pos == 0 and parent_tied and nested)):
            return users - ahead
    return 0  # the group's first user inherits its account's tie
