"""Slurm classic fairshare (``PriorityFlags=NO_FAIR_TREE``), as Slurm 22.05 computes it.

Spec section 2. NormShares is the product of ``shares/level_shares`` ratios from the association
up to the root (``parent`` levels skipped), multiplied leaf first in double precision as
``_normalize_assoc_shares_traditional`` does. Effective usage blends an association's normalized
usage with its fairshare parent's effective usage in long double::

    E(a) = N(a) + (E(F(a)) - N(a)) * shares_raw(a) / level_shares(a)

and the factor is ``F = 2**(-(E/S)/d)`` with ``d`` = FairShareDampeningFactor.
"""

from __future__ import annotations

import numpy as np

from tui.engine.result import FairshareResult
from tui.engine.tree import Structure, norm_usage, structure
from tui.model import AssocTree, rows_by_depth


def fairshare_factor(effective_usage: np.ndarray | float, norm_shares: np.ndarray | float,
                     dampening: float = 1) -> np.ndarray:
    """Classic fairshare factor ``2**(-(E/S)/d)``; 0 where ``S <= 0``.

    Parameters
    ----------
    effective_usage : array_like
        EffectvUsage in [0, 1] (long double keeps Slurm's precision).
    norm_shares : array_like
        NormShares in [0, 1].
    dampening : float
        FairShareDampeningFactor (Slurm: integer >= 1).

    Returns
    -------
    float64 array
        As ``priority_p_calc_fs_factor``: the exponent is formed in long double, converted to
        double, then ``pow(2, x)``.
    """
    e = np.asarray(effective_usage, dtype=np.longdouble)
    s = np.asarray(norm_shares, dtype=np.float64)
    positive = s > 0
    with np.errstate(divide="ignore", invalid="ignore"):
        exponent = (-(e / np.where(positive, s, 1.0)) / np.longdouble(dampening)).astype(np.float64)
    return np.where(positive, np.exp2(exponent), 0.0)


def classic_norm_shares(tree: AssocTree, st: Structure | None = None) -> np.ndarray:
    """NormShares of the classic algorithm (float64), root 1.0."""
    st = st if st is not None else structure(tree)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(st.level_shares > 0,
                         tree.shares_raw.astype(np.float64) / st.level_shares.astype(np.float64), 0.0)
    ratio[st.use_parent] = 1.0  # ``parent`` ancestors are skipped in the product
    # Leaf-to-root product in double, in Slurm's order: s = ((1*r(a))*r(P(a)))*... , done for
    # all rows of one depth at a time (they need the same number of factors).
    s = np.ones(tree.size, dtype=np.float64)
    for d, rows in enumerate(rows_by_depth(tree.depth())):
        acc = np.ones(len(rows), dtype=np.float64)
        x = rows
        for _ in range(d):
            acc *= ratio[x]
            x = tree.parent[x]
        s[rows] = acc
    # A ``parent`` association shows its fairshare parent's value (root: 1.0).
    up = np.flatnonzero(st.use_parent)
    s[up] = s[st.fs_parent[up]]
    return s


def classic(tree: AssocTree, dampening: float = 1, st: Structure | None = None) -> FairshareResult:
    """Classic fairshare of every association, as ``sshare -a -l`` prints it.

    Parameters
    ----------
    tree : AssocTree
        Raw shares and raw usage.
    dampening : float
        FairShareDampeningFactor.
    st : Structure, optional
        The tree's structure, when the caller already has it.
    """
    st = st if st is not None else structure(tree)
    shares = classic_norm_shares(tree, st)
    norm = norm_usage(tree)
    eff = np.empty(tree.size, dtype=np.longdouble)
    eff[0] = 1.0  # set once at plugin init and never changed
    raw = tree.shares_raw.astype(np.longdouble)
    level = st.level_shares.astype(np.longdouble)
    for rows in st.levels:  # fairshare parents are always computed one level earlier
        fp = st.fs_parent[rows]
        parent_eff = eff[fp]
        n = norm[rows]
        blend = n + (parent_eff - n) * (raw[rows] / np.where(level[rows] == 0, 1, level[rows]))
        inherit = st.use_parent[rows] | (st.level_shares[rows] == 0)
        value = np.where(inherit, parent_eff, blend)
        eff[rows] = np.where(fp == 0, n, value)
    fs = fairshare_factor(eff, shares, dampening)
    return FairshareResult("classic", shares, norm, eff, None, fs, None, st)
