"""Slurm Fair Tree (the default since 19.05), as Slurm 22.05 ``fair_tree.c`` computes it.

Spec section 3. Per sibling group (a fairshare parent's ``children_list``):

- NormShares ``S = shares_raw / level_shares`` (double, own level only);
- EffectvUsage ``U = usage_raw / usage_raw(F(a))`` (long double);
- LevelFS ``LF = S / U`` (+inf with no usage, 0 with no shares; ``parent`` users +inf,
  ``parent`` accounts NO_VAL).

Siblings are sorted by LF descending, users before accounts on equal LF, otherwise stable
(glibc's merge sort keeps ``children_list`` order). A depth-first walk hands out ranks N, N-1, ...
to users; a user whose LF equals its predecessor's keeps the current rank, and an account tied with
its predecessor passes the tie to its first child. Tied sibling accounts are *not* merged (the
documented merge never runs: ``_count_tied_accounts`` always returns 0). FairShare = rank / N with
N the number of user associations.

The walk is done with array operations: the sorted sibling order gives each row its pre-order
position (from subtree sizes), the tie flags propagate one level at a time, and ranks are a
forward fill over users in walk order.
"""

from __future__ import annotations

import numpy as np

from tui.engine.result import FairshareResult
from tui.engine.tree import Structure, norm_usage, structure
from tui.model import NO_VAL, AssocTree

NO_VAL_LD = np.longdouble(NO_VAL)


def fair_tree_norm_shares(tree: AssocTree, st: Structure) -> np.ndarray:
    """Per-level NormShares (double). ``parent`` rows show their fairshare parent's ratio."""
    own = np.arange(tree.size)
    own[st.use_parent] = st.fs_parent[st.use_parent]
    level = st.level_shares[own].astype(np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        s = np.where(level > 0, tree.shares_raw[own].astype(np.float64) / level, 0.0)
    # The root's level_shares is NO_VAL: its own ratio (and that of ``parent`` rows whose
    # fairshare parent is the root) is shares_raw / NO_VAL, which prints 0.000000.
    s[own == 0] = 1.0 / NO_VAL
    return s


def level_fairshare(tree: AssocTree, st: Structure, norm_shares: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """EffectvUsage and LevelFS of every row (long double); the root gets U = 1, LF = NO_VAL."""
    usage = tree.usage_raw
    parent_usage = usage[np.maximum(st.fs_parent, 0)]
    # Divide only where the divisor is non-zero: long double division by zero is ~15x slower.
    eff = np.zeros(tree.size, dtype=np.longdouble)
    has = parent_usage > 0
    eff[has] = usage[has] / parent_usage[has]
    s = norm_shares.astype(np.longdouble)
    lf = np.full(tree.size, np.inf, dtype=np.longdouble)  # S / 0 = +inf
    used = eff > 0
    lf[used] = s[used] / eff[used]
    lf[s == 0] = 0
    lf[st.use_parent & tree.is_user] = np.inf
    lf[st.use_parent & ~tree.is_user] = NO_VAL_LD
    eff[0] = 1.0
    lf[0] = NO_VAL_LD
    return eff, lf


def level_fs_of(u: np.ndarray, u_parent: np.ndarray, shares: np.ndarray, use_parent: np.ndarray,
                is_user: np.ndarray, root: np.ndarray) -> np.ndarray:
    """LevelFS of some rows from their usage and their fairshare parents' (long double), with
    :func:`tui.engine.fair_tree.level_fairshare`'s special cases (last axis = rows)."""
    s = shares.astype(np.longdouble)
    with np.errstate(divide="ignore", invalid="ignore"):
        eff = np.where(u_parent > 0, u / np.where(u_parent > 0, u_parent, 1), np.longdouble(0))
        lf = np.where(eff > 0, s / np.where(eff > 0, eff, 1), np.longdouble(np.inf))
    lf = np.where(s == 0, np.longdouble(0), lf)
    lf = np.where(use_parent & is_user, np.longdouble(np.inf), lf)
    return np.where((use_parent & ~is_user) | root, NO_VAL_LD, lf)


def _sortable(x: np.ndarray) -> np.ndarray:
    """uint64 keys in the same order as the float64 values ``x`` (IEEE bit trick)."""
    bits = np.ascontiguousarray(x, dtype=np.float64).view(np.uint64)
    sign = bits >> np.uint64(63)
    return np.where(sign == 1, ~bits, bits | np.uint64(1 << 63))


def sorted_siblings(fs_parent: np.ndarray, lf: np.ndarray, is_user: np.ndarray,
                    sibling_order: np.ndarray | None) -> np.ndarray:
    """Every non-root row, grouped by fairshare parent, each group in Fair Tree's sorted order.

    Order within a group: LevelFS descending (exact long double), users before accounts on
    equal LevelFS, then ``children_list`` order (stable, like glibc's merge sort ``qsort``).

    One radix-friendly argsort of a packed uint64 key (group, a prefix of LevelFS as a double,
    account bit) does nearly all of it; groups in which the truncated prefix cannot tell two
    different LevelFS apart are re-sorted exactly. Returns row numbers.
    """
    n = len(fs_parent)
    child = np.arange(1, n)
    if sibling_order is not None:  # the index bits below then follow children_list order
        child = child[np.argsort(sibling_order[1:], kind="stable")]
    bits = max(1, int(n).bit_length())
    fbits = 63 - 2 * bits - 1  # what is left of the key for a LevelFS prefix
    # Packed unique key (group, LevelFS prefix descending, account bit, children_list index):
    # unique keys need no stable sort, and an unstable argsort of uint64 is several times faster.
    prefix = _sortable(-lf[child].astype(np.float64)) >> np.uint64(64 - fbits)
    account = (~is_user[child]).astype(np.uint64)
    index = np.arange(len(child), dtype=np.uint64)
    key = ((fs_parent[child].astype(np.uint64) << np.uint64(fbits + 1 + bits))
           | (prefix << np.uint64(1 + bits)) | (account << np.uint64(bits)) | index)
    order = np.argsort(key)
    perm = child[order]
    # Exact fix-up where one prefix bucket holds different LevelFS values.
    bucket = key[order] >> np.uint64(1 + bits)
    exact = lf[perm]
    clash = (bucket[1:] == bucket[:-1]) & (exact[1:] != exact[:-1])
    if clash.any():
        bad_groups = np.flatnonzero(np.bincount(fs_parent[perm[1:][clash]]))  # not np.unique: it imports numpy.ma
        idx = np.flatnonzero(np.isin(fs_parent[perm], bad_groups))
        sub = perm[idx]
        exact_order = np.lexsort((order[idx], ~is_user[sub], -lf[sub], fs_parent[sub]))
        perm[idx] = sub[exact_order]
    return perm


def rank_users(tree: AssocTree, st: Structure, lf: np.ndarray) -> np.ndarray:
    """Fair Tree rank of every user row (N best); 0 for account rows.

    Parameters
    ----------
    tree : AssocTree
    st : Structure
        From :func:`tui.engine.tree.structure`.
    lf : longdouble array
        LevelFS of every row.
    """
    n = tree.size
    perm = sorted_siblings(st.fs_parent, lf, tree.is_user, tree.sibling_order)
    g = st.fs_parent[perm]
    first = np.ones(len(perm), dtype=bool)
    first[1:] = g[1:] != g[:-1]
    prev_lf = np.empty(len(perm), dtype=np.longdouble)
    prev_lf[0] = NO_VAL_LD
    prev_lf[1:] = lf[perm[:-1]]
    prev_lf[first] = NO_VAL_LD  # each group starts with prev_level_fs = NO_VAL
    local_tie = prev_lf == lf[perm]

    # Subtree sizes in the fairshare tree (bottom-up), then each row's pre-order position:
    # pos(c) = pos(F(c)) + 1 + sizes of the siblings sorted before c.
    size = np.ones(n, dtype=np.int64)
    for rows in reversed(st.levels):
        size += np.bincount(st.fs_parent[rows], weights=size[rows], minlength=n).astype(np.int64)
    sp = size[perm]
    excl = np.cumsum(sp) - sp  # sizes of everything sorted before, across groups
    group_start = np.maximum.accumulate(np.where(first, np.arange(len(perm)), 0))
    before = excl - excl[group_start]
    offset = np.empty(n, dtype=np.int64)
    offset[perm] = before
    tie_here = np.zeros(n, dtype=bool)
    tie_here[perm] = local_tie
    is_first = np.zeros(n, dtype=bool)
    is_first[perm] = first

    pos = np.zeros(n, dtype=np.int64)
    tied = np.zeros(n, dtype=bool)
    for rows in st.levels:  # top-down: a first child inherits its (account) parent's tie
        fp = st.fs_parent[rows]
        pos[rows] = pos[fp] + 1 + offset[rows]
        tied[rows] = tie_here[rows] | (is_first[rows] & tied[fp] & (fp != 0))

    # pos is a permutation (pre-order positions): invert it instead of sorting.
    walk_all = np.empty(n, dtype=np.int64)
    walk_all[pos] = np.arange(n)
    walk = walk_all[tree.is_user[walk_all]]
    total = len(walk)
    k = np.arange(total)
    # rank = rnt (= N - users ranked so far) unless tied, then the last rank handed out.
    last_untied = np.maximum.accumulate(np.where(~tied[walk], k, -1))
    ranks = np.where(last_untied >= 0, total - last_untied, total)
    rank = np.zeros(n, dtype=np.int64)
    rank[walk] = ranks
    return rank


def fair_tree(tree: AssocTree, st: Structure | None = None) -> FairshareResult:
    """Fair Tree values of every association, as ``sshare -a -l`` prints them.

    ``st`` may be passed in when the caller already computed the tree's structure.
    """
    st = st if st is not None else structure(tree)
    shares = fair_tree_norm_shares(tree, st)
    eff, lf = level_fairshare(tree, st, shares)
    rank = rank_users(tree, st, lf)
    total = tree.user_count
    fs = np.full(tree.size, np.nan)
    if total:
        fs[tree.is_user] = rank[tree.is_user] / float(total)
    return FairshareResult("fair_tree", shares, norm_usage(tree), eff, lf, fs, rank, st)
