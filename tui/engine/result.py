"""The engine's answer for one association tree, whichever Slurm algorithm produced it."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.engine.tree import Structure


@dataclass(frozen=True, eq=False)
class FairshareResult:
    """Per-row fairshare quantities, aligned with the rows of the :class:`~tui.model.AssocTree`.

    NaN marks a value Slurm leaves unset and ``sshare`` prints empty (the root's NormUsage,
    account FairShare under Fair Tree, LevelFS of ``parent`` rows).

    Attributes
    ----------
    algorithm : {"fair_tree", "classic"}
    norm_shares : float64 array
        NormShares: per level (Fair Tree) or the product down the path (classic).
    norm_usage : longdouble array
        NormUsage: raw usage / the root's raw usage.
    effective_usage : longdouble array
        EffectvUsage: usage / fairshare parent's usage (Fair Tree) or the classic blend.
    level_fs : longdouble array or None
        LevelFS = NormShares / EffectvUsage (Fair Tree only; +inf for no usage).
    fairshare : float64 array
        The fairshare factor in [0, 1] that job priority uses.
    rank : int64 array or None
        Fair Tree rank of user rows (N = best), 0 for accounts.
    structure : Structure
        Fairshare parents and level shares the values were computed from.
    """

    algorithm: str
    norm_shares: np.ndarray
    norm_usage: np.ndarray
    effective_usage: np.ndarray
    level_fs: np.ndarray | None
    fairshare: np.ndarray
    rank: np.ndarray | None
    structure: Structure
