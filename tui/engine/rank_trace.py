"""Fair Tree over a projection's steps, recomputing only what jobs reach.

When every usage decays by the same factor, LevelFS (a ratio of a row's usage to its fairshare
parent's) moves only on the rows jobs charge and on their fairshare children. A planner projects
the same cluster again on every edit: the source's running jobs (12,600 at 100k associations)
reach the same rows at the same steps each time, and the edit adds a few rows of its own. A
:class:`LevelFsTrace` keeps the LevelFS those running jobs give; an edit's projection then
computes only the rows its own jobs reach and patches them in before each re-rank. The values are
the same bits as a projection computed whole (each row's usage sums the same charges in the same
order), and so are the ranks: a step is re-ranked when any row's LevelFS moved more than 1e-12
since the previous ranked step, decided row by row from the trace and the patch alike.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from tui.engine.fair_tree import fair_tree_norm_shares, level_fs_of
from tui.engine.projection import Charges, UsageProjection
from tui.engine.tree import Structure, structure
from tui.model import AssocTree

#: LevelFS within this relative distance of the previous ranked step's: no re-rank.
RTOL = 1e-12


@dataclass(frozen=True, eq=False)
class LevelFsTrace:
    """LevelFS, at a projection's ranked steps, of every row its jobs reach.

    Attributes
    ----------
    tree : AssocTree
        The tree (shares and structure) it was computed on.
    charges : Charges or None
        The jobs traced, as given to :func:`tui.engine.projection.project_usage` (``then``);
        None when traced from a projection's own jobs.
    decay : float64 array (m,)
        The projection's decay at every step (its times, law and resets).
    steps : int64 array (s,)
        The ranked steps.
    rows : int64 array (r,)
        The rows the jobs reach (their paths and the fairshare children of those), root excluded,
        increasing.
    lf : longdouble array (s, r)
        Their LevelFS at each ranked step.
    moved : bool array (s, r)
        LevelFS further than :data:`RTOL` from the previous ranked step's (all True at the first).
    """

    tree: AssocTree
    charges: Charges | None
    decay: NDArray[np.float64]
    steps: NDArray[np.int64]
    rows: NDArray[np.int64]
    lf: np.ndarray
    moved: NDArray[np.bool_]

    def fits(self, tree: AssocTree, projection: UsageProjection, steps: NDArray[np.int64]) -> bool:
        """Whether ``projection`` is this trace's with jobs added before its ``then`` ones."""
        return (self.charges is not None and projection.then is self.charges and tree is self.tree
                and np.array_equal(steps, self.steps) and np.array_equal(projection.decay, self.decay)
                and not np.any(projection.rate))


def reached(st: Structure, paths: list[NDArray[np.int64]], size: int) -> NDArray[np.int64]:
    """Rows whose LevelFS jobs on ``paths`` move: the paths and their fairshare children, root excluded."""
    charged = np.zeros(size, dtype=bool)
    for path in paths:
        charged[path] = True
    out = np.flatnonzero(charged | charged[np.maximum(st.fs_parent, 0)])
    return out[out > 0]


#: Long doubles per block of steps in :func:`_lf_at_steps` (~16 MB each array).
_BLOCK = 1 << 20


def _lf_at_steps(tree: AssocTree, st: Structure, shares: np.ndarray, projection: UsageProjection,
                 rows: NDArray[np.int64], steps: NDArray[np.int64]) -> np.ndarray:
    """LevelFS of ``rows`` at ``steps`` (longdouble, shape (steps, rows)) under uniform decay."""
    idx = np.concatenate([rows, np.maximum(st.fs_parent[rows], 0)])
    added = projection.charged(idx, steps)
    u0, s, use_parent, is_user = projection.usage0[idx], shares[rows], st.use_parent[rows], tree.is_user[rows]
    out = np.empty((steps.size, rows.size), dtype=np.longdouble)
    zeros = np.zeros(rows.size, dtype=bool)
    decay = projection.decay[steps].astype(np.longdouble)
    block = max(1, _BLOCK // max(idx.size, 1))  # steps at once: the same long double operations, element
    for a in range(0, steps.size, block):     # by element, as one step at a time, in bounded memory
        u = u0[None, :] * decay[a:a + block, None] + added[:, a:a + block].T.astype(np.longdouble)
        out[a:a + block] = level_fs_of(u[:, : rows.size], u[:, rows.size:], s, use_parent, is_user, zeros)
    return out


def _moved(lf: np.ndarray) -> NDArray[np.bool_]:
    moved = np.ones(lf.shape, dtype=bool)
    if lf.shape[0] > 1:
        moved[1:] = ~np.isclose(lf[1:], lf[:-1], rtol=RTOL, atol=0.0)
    return moved


def trace_level_fs(tree: AssocTree, st: Structure, shares: np.ndarray, projection: UsageProjection,
                   steps: NDArray[np.int64]) -> LevelFsTrace:
    """The :class:`LevelFsTrace` of all the projection's jobs (uniform decay, no step a reset).
    ``shares``: Fair Tree's normalized shares of ``tree``. A projection of its ``then`` jobs alone
    gives a trace that later projections adding their own jobs to those can reuse."""
    rows = reached(st, projection.paths, tree.size)
    lf = _lf_at_steps(tree, st, shares, projection, rows, steps)
    then = projection.then if projection.then is not None and projection.then.rows.size == len(projection.paths) \
        else None
    return LevelFsTrace(tree, then, projection.decay, steps, rows, lf, _moved(lf))


def patched_steps(tree: AssocTree, st: Structure, shares: np.ndarray, projection: UsageProjection,
                  steps: NDArray[np.int64], trace: LevelFsTrace | None
                  ) -> Iterator[tuple[NDArray[np.int64], np.ndarray, bool]]:
    """Per ranked step: ``(rows, lf, rerank)``, every reached row's LevelFS and whether it moved.

    With a fitting ``trace`` (of the projection's ``then`` jobs) only the rows the other jobs
    reach are computed; otherwise the whole projection is traced here. Yields at every ranked
    step (the first always re-ranks, even when no job reaches any row); ``rows`` is the same
    array throughout.
    """
    if trace is None or not trace.fits(tree, projection, steps):
        trace = trace_level_fs(tree, st, shares, projection, steps)
        own = np.zeros(0, dtype=np.int64)
    else:
        assert projection.then is not None  # fits() checked it
        own = reached(st, projection.paths[: len(projection.paths) - projection.then.rows.size], tree.size)
    base_rows = trace.rows
    rows = np.union1d(base_rows, own)
    in_rows_base = np.searchsorted(rows, base_rows)
    in_rows_own = np.searchsorted(rows, own)
    patched = np.isin(base_rows, own)  # trace rows the own jobs move too: the patch wins
    own_lf = _lf_at_steps(tree, st, shares, projection, own, steps) if own.size else np.zeros((steps.size, 0))
    own_moved = _moved(own_lf)
    lf = np.empty(rows.size, dtype=np.longdouble)
    for i in range(steps.size):
        lf[in_rows_base] = trace.lf[i]
        lf[in_rows_own] = own_lf[i]
        rerank = i == 0 or bool(np.any(trace.moved[i] & ~patched) or np.any(own_moved[i]))
        yield rows, lf, rerank


def ranked_steps(m: int, rank_every: int) -> NDArray[np.int64]:
    """The steps of ``m`` at which Fair Tree is re-ranked: every ``rank_every`` and the last."""
    ranked = np.zeros(m, dtype=bool)
    ranked[:: max(1, int(rank_every))] = True
    ranked[-1] = True
    return np.flatnonzero(ranked)


def fair_tree_trace(tree: AssocTree, projection: UsageProjection, rank_every: int = 1) -> LevelFsTrace:
    """The :class:`LevelFsTrace` of a projection of some jobs alone (its ``then``), for
    :func:`tui.engine.fairshare_projection.project_fairshare` (same tree, times and ``rank_every``)."""
    st = structure(tree)
    return trace_level_fs(tree, st, fair_tree_norm_shares(tree, st), projection,
                          ranked_steps(projection.times_s.size, rank_every))
