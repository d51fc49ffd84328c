"""The Fair Tree rank of a few users without ranking the whole tree.

:func:`tui.engine.fair_tree.rank_users` sorts every sibling group and walks the whole tree: ~3 ms
at 20k associations, paid at every ranked step of a what-if projection, which reports the rank of
one or two users. A user's place in Fair Tree's depth-first walk needs only its own path: at every
level, the users in the subtrees of the siblings sorted before it. Its rank is ``N - place`` and
the users ahead of it are ``place``, unless it is tied (equal LevelFS with the sibling before it,
or an account's tie passed down to a first child): then the rank is the last untied user's,
found in its own group, or :meth:`RowRanker.ranks` says the caller must rank the whole tree. The
walk is the recovery curve's (:func:`tui.engine.path_rank.rank_on_path`), in the order of
:func:`tui.engine.fair_tree.sorted_siblings`.
"""

from __future__ import annotations

import numpy as np

from tui.engine.path_rank import PathGroup, children_order, path_groups, rank_on_path, users_under
from tui.engine.tree import Structure
from tui.model import AssocTree


class RowRanker:
    """Ranks of some user rows of one tree at any LevelFS (see the module docstring)."""

    def __init__(self, tree: AssocTree, st: Structure, rows: np.ndarray) -> None:
        under, order = users_under(tree, st), children_order(tree)
        known: dict[int, np.ndarray] = {}
        self.is_user = tree.is_user
        self.users = int(tree.is_user.sum())
        self._paths: list[list[PathGroup] | None] = [  # accounts have no rank
            path_groups(tree, st, int(row), under, order, known) if tree.is_user[row] else None
            for row in map(int, rows)]

    def ranks(self, lf: np.ndarray) -> tuple[np.ndarray, np.ndarray] | None:
        """(rank, users ranked strictly better) of each row at LevelFS ``lf`` (0, 0 for accounts),
        or None when a user row's tie reaches past its own group (rank the whole tree then)."""
        rank = np.zeros(len(self._paths), dtype=np.int64)
        for i, groups in enumerate(self._paths):
            if groups is None:
                continue
            own = int(rank_on_path(groups, lambda g: lf[g.rows][None, :], self.is_user, self.users)[0])
            if own == 0:
                return None
            rank[i] = own
        # A tie shares the rank of the last untied user before it: those ahead rank higher.
        return rank, np.where(rank > 0, self.users - rank, 0)
