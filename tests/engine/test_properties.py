"""Properties of the Slurm algorithms on random trees (hypothesis), and equality with the
plain recursive reference in :mod:`tui.engine.reference`."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from tui.engine import compute
from tui.engine.classic import fairshare_factor
from tui.engine.reference import classic_reference, fair_tree_reference
from tui.model import NO_VAL, USE_PARENT, AssocTree

SHARES = st.sampled_from([0, 1, 1, 2, 3, 5, 10, 40, USE_PARENT])
USAGE = st.sampled_from([0, 0, 1, 2, 3, 7, 10, 25, 1000, 123456789])


@st.composite
def trees(draw, max_size: int = 40) -> AssocTree:
    n = draw(st.integers(2, max_size))
    parent, is_user, shares, own = [-1], [False], [NO_VAL], [0]
    accounts = [0]
    for i in range(1, n):
        p = draw(st.sampled_from(accounts))
        user = draw(st.booleans())
        parent.append(p)
        is_user.append(user)
        shares.append(draw(SHARES))
        own.append(draw(USAGE) if user else 0)
        if not user:
            accounts.append(i)
    usage = np.array(own, dtype=np.longdouble)
    for i in range(n - 1, 0, -1):  # Slurm adds usage to every ancestor
        usage[parent[i]] += usage[i]
    order = draw(st.permutations(range(n))) if draw(st.booleans()) else None
    return AssocTree(
        parent=np.array(parent), is_user=np.array(is_user),
        account=np.array([f"a{i}" for i in range(n)], dtype=object),
        user=np.array([f"u{i}" if u else "" for i, u in enumerate(is_user)], dtype=object),
        shares_raw=np.array(shares, dtype=np.int64), usage_raw=usage,
        sibling_order=None if order is None else np.array(order))


def same(a, b) -> bool:
    return (math.isnan(a) and math.isnan(b)) or a == b


@settings(max_examples=300, deadline=None)
@given(trees(), st.sampled_from([1, 1, 2, 5]))
def test_classic_equals_reference(tree, damp):
    result = compute(tree, "classic", damp)
    for i, (s, e, fs) in enumerate(classic_reference(tree, damp)):
        assert result.norm_shares[i] == s
        assert result.effective_usage[i] == e
        assert math.isclose(result.fairshare[i], fs, rel_tol=1e-15, abs_tol=1e-300)


@settings(max_examples=300, deadline=None)
@given(trees())
def test_fair_tree_equals_reference(tree):
    result = compute(tree, "fair_tree")
    for i, (s, e, lf, fs, rank) in enumerate(fair_tree_reference(tree)):
        assert result.norm_shares[i] == s
        assert result.effective_usage[i] == e
        assert result.level_fs[i] == lf
        assert same(result.fairshare[i], fs)
        assert result.rank[i] == rank


def users_below(tree: AssocTree, fs_parent: np.ndarray, row: int) -> list[int]:
    found = []
    for i in range(tree.size):
        x = i
        while x > 0 and x != row:
            x = fs_parent[x]
        if x == row and tree.is_user[i]:
            found.append(i)
    return found


@settings(max_examples=200, deadline=None)
@given(trees())
def test_fair_tree_sibling_order_dominates_every_user_below(tree):
    # If sibling A outranks sibling B (higher LevelFS), every user under A ranks at least as
    # high as every user under B (equal only through Slurm's tie inheritance).
    result = compute(tree, "fair_tree")
    fsp = result.structure.fs_parent
    for a in range(1, tree.size):
        for b in range(1, tree.size):
            if fsp[a] != fsp[b] or not result.level_fs[a] > result.level_fs[b]:
                continue
            ua = [a] if tree.is_user[a] else users_below(tree, fsp, a)
            ub = [b] if tree.is_user[b] else users_below(tree, fsp, b)
            if ua and ub:
                assert min(result.rank[ua]) >= max(result.rank[ub])


@settings(max_examples=200, deadline=None)
@given(trees(), st.sampled_from(["fair_tree", "classic"]), st.sampled_from([1, 3]))
def test_every_fairshare_is_in_unit_interval(tree, algorithm, damp):
    fs = compute(tree, algorithm, damp).fairshare
    values = fs[tree.is_user] if algorithm == "fair_tree" else fs
    assert np.all((values >= 0) & (values <= 1))
    if algorithm == "fair_tree" and tree.user_count:
        assert values.max() == 1.0  # the best-ranked user always gets N/N


@given(st.floats(min_value=1e-9, max_value=1.0))
def test_classic_half_where_effective_usage_equals_norm_shares(x):
    assert fairshare_factor(x, x, 1) == 0.5


def test_classic_half_on_a_tree_used_exactly_as_shared():
    # Flat tree whose usage is proportional to shares: E == S for every user -> 0.5.
    shares = [1, 2, 3, 4, 10]
    tree = AssocTree.from_rows([(-1, False, "root", "", NO_VAL, sum(shares) * 64.0)]
                               + [(0, True, "root", f"u{i}", s, s * 64.0) for i, s in enumerate(shares)])
    fs = compute(tree, "classic").fairshare[1:]
    assert np.allclose(fs, 0.5, rtol=0, atol=1e-15)
