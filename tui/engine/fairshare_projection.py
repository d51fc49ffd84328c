"""Fairshare along a usage projection: classic at every step, Fair Tree's LevelFS at every step
and its ranks at the ranked steps (only where jobs reach, :mod:`tui.engine.rank_trace`)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tui.engine.classic import classic_norm_shares, fairshare_factor
from tui.engine.fair_tree import fair_tree_norm_shares, level_fairshare, level_fs_of, rank_users
from tui.engine.projection import UsageProjection
from tui.engine.rank_rows import RowRanker
from tui.engine.rank_trace import LevelFsTrace, patched_steps, ranked_steps
from tui.engine.tree import structure
from tui.model import AssocTree, path_to



class Cancelled(Exception):  # noqa: N818 - what happened, not an error
    """A projection stopped because its ``cancelled`` callable said so (its answer is not wanted)."""


@dataclass(frozen=True, eq=False)
class FairshareSeries:
    """Fairshare of some associations at every step of a :class:`UsageProjection`.

    Attributes
    ----------
    rows : int64 array (r,)
    usage : longdouble array (m, r)
        Raw usage, billing TRES-seconds.
    fairshare : float64 array (m, r)
        Classic: the factor at every step. Fair Tree: ``rank / users`` at the steps in
        ``ranked``, held until the next one; NaN for accounts.
    level_fs : longdouble array (m, r) or None
        Fair Tree LevelFS at every step (it needs only the row and its fairshare parent).
    rank : int64 array (m, r) or None
        Fair Tree rank (users = best), held between ranked steps; 0 for accounts.
    ahead : int64 array (m, r) or None
        Users ranked strictly above (a better rank), held between ranked steps.
    ranked : bool array (m,)
        Steps at which the whole tree was recomputed (Fair Tree), or all True (classic).
    users : int
        User associations in the tree.
    """

    rows: NDArray[np.int64]
    usage: np.ndarray
    fairshare: NDArray[np.float64]
    level_fs: np.ndarray | None
    rank: NDArray[np.int64] | None
    ahead: NDArray[np.int64] | None
    ranked: NDArray[np.bool_]
    users: int


def project_fairshare(
    tree: AssocTree,
    projection: UsageProjection,
    rows: ArrayLike,
    algorithm: str = "fair_tree",
    dampening: float = 1,
    rank_every: int = 1,
    trace: LevelFsTrace | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> FairshareSeries:
    """Fairshare of ``rows`` at every step of ``projection``.

    Classic depends only on an association's own path (its usage, its fairshare parents'
    effective usage and the root's usage), so it is computed at every step for those rows
    alone, in long double as :func:`tui.engine.classic.classic` does. Fair Tree's rank is a
    global order: the whole tree is recomputed (:func:`tui.engine.fair_tree.fair_tree`, the
    structure shared) every ``rank_every`` steps and at the last one, and held in between;
    LevelFS is exact at every step.

    Parameters
    ----------
    tree : AssocTree
        The tree the projection started from (shares and structure).
    projection : UsageProjection
        From :func:`project_usage`.
    rows : array_like
        Associations to report.
    algorithm : {"fair_tree", "classic"}
    dampening : float
        FairShareDampeningFactor (classic).
    rank_every : int
        Steps between full Fair Tree recomputations (1: every step).
    trace : LevelFsTrace, optional
        From :func:`tui.engine.rank_trace.fair_tree_trace` on a projection of this one's ``then`` jobs alone, on the
        same tree and times: only the rows this projection's own jobs reach are computed (the
        result is the same, bit for bit). Ignored when it does not fit.
    cancelled : callable, optional
        Asked before Fair Tree's work and at each ranked step: True stops the projection with
        :class:`Cancelled` (a newer question came; a thread cannot be stopped from outside).

    Returns
    -------
    FairshareSeries
    """
    r = np.asarray(rows, dtype=np.int64).reshape(-1)
    m = projection.times_s.size
    st = structure(tree)
    users = tree.user_count
    if algorithm == "classic":
        # Every fairshare parent on the rows' paths, top-down, and the root.
        need = sorted({int(x) for row in r for x in path_to(tree, int(row))} | {0}, key=lambda x: st.fs_depth[x])
        col = {x: i for i, x in enumerate(need)}
        u = projection.of(need)
        root = u[:, col[0]]
        with np.errstate(divide="ignore", invalid="ignore"):
            norm = np.where(root[:, None] > 0, np.minimum(u / np.where(root > 0, root, 1)[:, None],
                                                           np.longdouble(1)), np.longdouble(0))
        eff = np.empty_like(u)
        eff[:, col[0]] = 1
        for x in need[1:]:
            i, fp = col[x], int(st.fs_parent[x])
            norm_i = norm[:, i]
            if fp == 0:
                eff[:, i] = norm_i
            elif st.use_parent[x] or st.level_shares[x] == 0:
                eff[:, i] = eff[:, col[fp]]
            else:
                frac = np.longdouble(tree.shares_raw[x]) / np.longdouble(st.level_shares[x])
                eff[:, i] = norm_i + (eff[:, col[fp]] - norm_i) * frac
        shares = classic_norm_shares(tree, st)
        cols = [col[int(x)] for x in r]
        fs = np.stack([fairshare_factor(eff[:, i], shares[x], dampening) for i, x in zip(cols, r)], axis=1) \
            if r.size else np.zeros((m, 0))
        return FairshareSeries(r, u[:, cols], fs.reshape(m, r.size), None, None, None, np.ones(m, dtype=bool), users)
    if algorithm != "fair_tree":
        raise ValueError(f"unknown algorithm {algorithm!r} (use fair_tree or classic)")
    if cancelled is not None and cancelled():  # before the whole tree's LevelFS and the first block
        raise Cancelled
    # LevelFS at every step: S / (u / u(F(a))), with level_fairshare's special cases.
    shares = fair_tree_norm_shares(tree, st)
    fsp = np.maximum(st.fs_parent[r], 0)
    u_all = projection.of(np.concatenate([r, fsp]))
    u = u_all[:, : r.size]
    lf = level_fs_of(u, u_all[:, r.size:], shares[r], st.use_parent[r], tree.is_user[r], r == 0)
    steps = ranked_steps(m, rank_every)
    ranked = np.zeros(m, dtype=bool)
    ranked[steps] = True
    rank = np.zeros((m, r.size), dtype=np.int64)
    ahead = np.zeros((m, r.size), dtype=np.int64)
    fs = np.full((m, r.size), np.nan)
    user_rows = tree.is_user[r]
    n = tree.size
    _, lf_all = level_fairshare(tree, st, shares)
    ranker = RowRanker(tree, st, r)
    rank_r = np.zeros(r.size, dtype=np.int64)
    ahead_r = np.zeros(r.size, dtype=np.int64)

    def rerank(lf_k: np.ndarray) -> None:
        nonlocal rank_r, ahead_r
        own = ranker.ranks(lf_k)  # the rows' own places: no whole-tree sort unless one is tied
        if own is not None:
            rank_r, ahead_r = own
            return
        rk = rank_users(tree, st, lf_k)
        sorted_ranks = np.sort(rk[tree.is_user])
        rank_r = rk[r]
        ahead_r = np.where(user_rows, sorted_ranks.size - np.searchsorted(sorted_ranks, rank_r, side="right"), 0)

    def hold(k: int) -> None:
        rank[k] = rank_r
        ahead[k] = ahead_r

    if not np.any(projection.rate) and np.all(projection.decay[steps] > 0):
        # Uniform decay: LevelFS moves only where jobs reach (tui.engine.rank_trace).
        lf_k = lf_all.copy()
        for k, (moving, lf_moving, moved) in zip(steps, patched_steps(tree, st, shares, projection, steps, trace)):
            if cancelled is not None and cancelled():
                raise Cancelled
            if moved:
                lf_k[moving] = lf_moving
                rerank(lf_k)
            hold(int(k))
    else:  # own rates, or a reset (every usage restarts): the whole tree at every ranked step
        whole = np.arange(1, n)
        last_lf: np.ndarray | None = None
        for k in steps:
            if cancelled is not None and cancelled():
                raise Cancelled
            usage = projection.at(int(k))
            new_lf = level_fs_of(usage[whole], usage[np.maximum(st.fs_parent[whole], 0)], shares[whole],
                                 st.use_parent[whole], tree.is_user[whole], np.zeros(n - 1, dtype=bool))
            if last_lf is None or not np.allclose(new_lf, last_lf, rtol=1e-12, atol=0.0):
                lf_k = lf_all.copy()
                lf_k[whole] = new_lf
                rerank(lf_k)
                last_lf = new_lf
            hold(int(k))
    # Hold the last ranked step's values until the next one.
    last = np.maximum.accumulate(np.where(ranked, np.arange(m), 0))
    rank, ahead = rank[last], ahead[last]
    if users:
        fs[:, user_rows] = rank[:, user_rows] / float(users)
    return FairshareSeries(r, u, fs, lf, rank, ahead, ranked, users)
