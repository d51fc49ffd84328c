"""The Fair Tree rank of a few users without ranking the whole tree.

:func:`tui.engine.fair_tree.rank_users` sorts every sibling group and walks the whole tree: ~3 ms
at 20k associations, paid at every ranked step of a what-if projection, which reports the rank of
one or two users. A user's place in Fair Tree's depth-first walk needs only its own path: at every
level, the users in the subtrees of the siblings sorted before it. Its rank is ``N - place`` and
the users ahead of it are ``place``, unless it is tied (equal LevelFS with the sibling before it,
or an account's tie passed down to a first child): then the rank is the last untied user's,
somewhere earlier in the walk, and :meth:`RowRanker.ranks` says so (the caller ranks the whole
tree). Same order as :func:`tui.engine.fair_tree.sorted_siblings`: LevelFS descending (exact
long double), users before accounts, then ``children_list`` order.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.engine.fair_tree import NO_VAL_LD
from tui.engine.tree import Structure
from tui.model import AssocTree


@dataclass(frozen=True)
class _Level:
    """One node on a path and its sibling group (itself included), fixed per tree."""

    node: int
    siblings: np.ndarray
    """Rows sharing the node's fairshare parent."""
    sorts_first: np.ndarray
    """Per sibling: sorted before the node on equal LevelFS (a user before an account, else
    earlier in ``children_list`` order)."""
    users_in: np.ndarray
    """Per sibling: user associations in its fairshare subtree."""


class RowRanker:
    """Ranks of some user rows of one tree at any LevelFS (see the module docstring)."""

    def __init__(self, tree: AssocTree, st: Structure, rows: np.ndarray) -> None:
        n = tree.size
        users_in = tree.is_user.astype(np.int64)
        for level in reversed(st.levels):  # bottom-up subtree user counts in the fairshare tree
            users_in += np.bincount(st.fs_parent[level], weights=users_in[level], minlength=n).astype(np.int64)
        order = tree.sibling_order if tree.sibling_order is not None else np.arange(n)
        account = ~tree.is_user
        self.users = int(tree.is_user.sum())
        groups: dict[int, np.ndarray] = {}
        self._paths: list[list[_Level] | None] = []
        for row in map(int, rows):
            if not tree.is_user[row]:
                self._paths.append(None)  # accounts have no rank
                continue
            path = []
            node = row
            while node > 0:
                parent = int(st.fs_parent[node])
                sib = groups.get(parent)
                if sib is None:
                    sib = groups[parent] = np.flatnonzero(st.fs_parent == parent)
                first = (account[sib] < account[node]) | ((account[sib] == account[node]) & (
                    (order[sib] < order[node]) | ((order[sib] == order[node]) & (sib < node))))
                path.append(_Level(node, sib, first, users_in[sib]))
                node = parent
            self._paths.append(path[::-1])  # top-down, for the tie passed to a first child

    def ranks(self, lf: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(rank, users ahead) of each row at LevelFS ``lf`` (0, 0 for accounts), or None when a
        user row is tied (its rank is then not its own place: rank the whole tree)."""
        rank = np.zeros(len(self._paths), dtype=np.int64)
        ahead = np.zeros(len(self._paths), dtype=np.int64)
        for i, path in enumerate(self._paths):
            if path is None:
                continue
            place, tied = 0, False
            for depth, lv in enumerate(path):
                mine = lf[lv.node]
                theirs = lf[lv.siblings]
                before = (theirs > mine) | ((theirs == mine) & lv.sorts_first)
                place += int(lv.users_in[before].sum())
                if before.any():  # tied with the sibling just before it: an equal LevelFS before it
                    tied = bool(np.any(theirs[before] == mine))
                else:  # a first child: its predecessor is NO_VAL, and it inherits its account's tie
                    tied = bool(mine == NO_VAL_LD) or (tied and depth > 0)
            if tied:
                return None
            rank[i], ahead[i] = self.users - place, place
        return rank, ahead
