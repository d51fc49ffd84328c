"""A user's Fair Tree rank from the sibling groups on its path equals the whole tree's.

The recovery curve (16 points) ranks one user under usage that moves on its path only; each
rank here is compared with :func:`tui.engine.fair_tree.fair_tree` on the changed tree, over the
demo cluster and over small trees full of ties (where the path answers None and the caller
computes the whole tree).
"""

from __future__ import annotations

import numpy as np
import pytest

from tests.treebuild import tree_from_text
from tui.engine import compute
from tui.engine.fair_tree import fair_tree
from tui.engine.path_rank import PathRank
from tui.engine.projection import add_usage, recovery_curve
from tui.engine.tree import structure
from tui.model import AssocTree
from tui.sources.demo import demo_snapshot

TIES = """
a 1
  @u1 1 50
  @u2 1 50
  @u3 1 0
  b parent
    @u4 1 50
    @u5 0 20
c 1
  @u6 1 100
  @u7 1 100
d 1
  @u8 2 0
e 1
  @u9 1 0
"""
"""Equal LevelFS among users and accounts, a ``parent`` account, users with no usage or no shares,
two accounts with no usage (tied: the second's first user inherits it)."""


def _whole_rank(tree: AssocTree, row: int, added: float) -> int:
    return int(fair_tree(add_usage(tree, row, added)).rank[row])


def _check(tree: AssocTree, rows: np.ndarray, fractions: list[float]) -> tuple[int, int]:
    """Every row's path rank against the whole tree's; (answered, tied)."""
    st = structure(tree)
    answered = tied = 0
    for row in rows.tolist():
        adds = [-float(tree.usage_raw[row]) * f for f in fractions]
        for added, rank in zip(adds, PathRank(tree, st, row).ranks(np.array(adds, dtype=np.longdouble))):
            if rank == 0:
                tied += 1
            else:
                answered += 1
                assert rank == _whole_rank(tree, row, added), (row, added)
    return answered, tied


def test_every_user_of_a_tree_full_of_ties() -> None:
    tree = tree_from_text(TIES)
    answered, tied = _check(tree, np.flatnonzero(tree.is_user), [0.0, 0.2, 0.5, 0.6, 1.0])
    assert answered > 0 and tied > 0  # both ways are taken


def test_demo_users_at_recovery_points() -> None:
    tree = demo_snapshot().tree
    assert tree is not None
    rng = np.random.default_rng(7)
    users = np.flatnonzero(tree.is_user)
    answered, _ = _check(tree, rng.choice(users, 60, replace=False), [0.05, 0.3, 0.7, 0.99])
    assert answered == 240  # the demo's ties (runs of ``parent`` users) are all within a group


def test_an_account_row_is_refused() -> None:
    tree = tree_from_text(TIES)
    with pytest.raises(ValueError, match="not a user"):
        PathRank(tree, structure(tree), 1)


@pytest.mark.parametrize("text", [TIES, "@a 1 60\n@b 1 40\n"])
def test_the_recovery_curve_is_the_engine_at_every_point(text: str) -> None:
    tree = tree_from_text(text)
    seconds = np.linspace(0, 4 * 86400, 17)
    decay = (1 - 0.693 / 86400) ** seconds
    for row in range(1, tree.size):
        usage, fairshare = recovery_curve(tree, row, seconds, 86400)
        u0 = float(tree.usage_raw[row])
        assert usage[1] == pytest.approx(u0 * decay[1], rel=1e-9)
        want = [compute(add_usage(tree, row, -(u0 - u)), "fair_tree").fairshare[row] for u in usage]
        np.testing.assert_array_equal(fairshare, want)
