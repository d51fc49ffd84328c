"""RowRanker: a few users' Fair Tree rank and users ahead, against the whole-tree ranking."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tests.engine.test_properties import trees
from tui.engine.fair_tree import fair_tree_norm_shares, level_fairshare, rank_users
from tui.engine.rank_rows import RowRanker
from tui.engine.tree import structure
from tui.model import AssocTree


def whole_tree(tree: AssocTree, lf: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(rank, users ranked strictly better) of ``rows`` from rank_users, as the projection held them."""
    st_ = structure(tree)
    rk = rank_users(tree, st_, lf)
    ranks = np.sort(rk[tree.is_user])
    ahead = np.where(tree.is_user[rows], ranks.size - np.searchsorted(ranks, rk[rows], side="right"), 0)
    return rk[rows], ahead


def _tied_on_path(st_, lf: np.ndarray, row: int) -> bool:
    """Some member of ``row``'s fairshare path has a sibling of equal LevelFS."""
    while row > 0:
        siblings = np.flatnonzero(st_.fs_parent == st_.fs_parent[row])
        if np.count_nonzero(lf[siblings] == lf[row]) > 1:
            return True
        row = int(st_.fs_parent[row])
    return False


@settings(max_examples=400, deadline=None)
@given(trees(), st.data())
def test_own_place_equals_whole_tree_rank_or_says_tied(tree, data):
    st_ = structure(tree)
    _, lf = level_fairshare(tree, st_, fair_tree_norm_shares(tree, st_))
    rows = np.array(data.draw(st.lists(st.integers(0, tree.size - 1), min_size=1, max_size=4)))
    want = whole_tree(tree, lf, rows)
    got = RowRanker(tree, st_, rows).ranks(lf)
    if got is None:  # only when a user row or one of its ancestors ties with a sibling
        assert any(tree.is_user[r] and _tied_on_path(st_, lf, int(r)) for r in rows)
        return
    assert got[0].tolist() == want[0].tolist()
    assert got[1].tolist() == want[1].tolist()


def test_untied_users_are_answered_without_the_whole_tree():
    # root -> a (2 users with different usage), b (1 user): nobody ties.
    tree = AssocTree(parent=np.array([-1, 0, 1, 1, 0, 4]), is_user=np.array([0, 0, 1, 1, 0, 1], dtype=bool),
                     account=np.array(["root", "a", "a", "a", "b", "b"], dtype=object),
                     user=np.array(["", "", "u1", "u2", "", "u3"], dtype=object),
                     shares_raw=np.array([1, 1, 1, 1, 1, 1]),
                     usage_raw=np.array([60, 50, 10, 40, 10, 10], dtype=np.longdouble))
    st_ = structure(tree)
    _, lf = level_fairshare(tree, st_, fair_tree_norm_shares(tree, st_))
    rows = np.array([2, 3, 5, 1])
    got = RowRanker(tree, st_, rows).ranks(lf)
    assert got is not None
    # b (LevelFS 3) before a (0.6); in a, u1 (5) before u2 (1.25): walk u3, u1, u2 -> ranks 3, 2, 1.
    assert got[0].tolist() == [2, 1, 3, 0]
    assert got[1].tolist() == [1, 2, 0, 0]
    assert whole_tree(tree, lf, rows)[0].tolist() == got[0].tolist()


def test_a_tie_within_its_group_is_answered_and_a_wider_one_left_to_the_whole_tree():
    # Two users under one account: the second tied with the first when their LevelFS are equal.
    tree = AssocTree(parent=np.array([-1, 0, 1, 1]), is_user=np.array([0, 0, 1, 1], dtype=bool),
                     account=np.array(["root", "a", "a", "a"], dtype=object),
                     user=np.array(["", "", "u1", "u2"], dtype=object),
                     shares_raw=np.array([1, 1, 1, 1]), usage_raw=np.array([5, 5, 5, 0], dtype=np.longdouble))
    st_ = structure(tree)
    _, lf = level_fairshare(tree, st_, fair_tree_norm_shares(tree, st_))
    got = RowRanker(tree, st_, np.array([3, 2])).ranks(lf)  # u2 (no usage, inf) comes first
    assert got is not None and got[0].tolist() == [2, 1] and got[1].tolist() == [0, 1]
    lf[2] = lf[3]  # now u1 first (children_list order), u2 tied with it: both rank 2, nobody ahead
    assert whole_tree(tree, lf, np.array([2, 3]))[0].tolist() == [2, 2]
    got = RowRanker(tree, st_, np.array([2, 3])).ranks(lf)
    assert got is not None and got[0].tolist() == [2, 2] and got[1].tolist() == [0, 0]
    # root -> a (u1), b (u2), neither with usage: b ties with a, and its first user inherits the
    # tie from a's subtree, outside u2's own group.
    tree = AssocTree(parent=np.array([-1, 0, 1, 0, 3]), is_user=np.array([0, 0, 1, 0, 1], dtype=bool),
                     account=np.array(["root", "a", "a", "b", "b"], dtype=object),
                     user=np.array(["", "", "u1", "", "u2"], dtype=object),
                     shares_raw=np.array([1, 1, 1, 1, 1]), usage_raw=np.zeros(5, dtype=np.longdouble))
    st_ = structure(tree)
    _, lf = level_fairshare(tree, st_, fair_tree_norm_shares(tree, st_))
    assert whole_tree(tree, lf, np.array([2, 4]))[0].tolist() == [2, 2]
    assert RowRanker(tree, st_, np.array([4])).ranks(lf) is None
    got = RowRanker(tree, st_, np.array([2])).ranks(lf)
    assert got is not None and got[0].tolist() == [2]
