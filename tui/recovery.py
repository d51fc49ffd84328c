"""Recovery: an association's raw usage and fairshare over time if it runs nothing more.

Slurm decays every association's usage by the same factor, so decay alone changes no ratio and no
fairshare. What moves fairshare is that *your* usage decays while others keep running. This module
models the simplest honest case: everyone else's usage holds steady (what they add balances their
decay), yours decays by Slurm's per-second factor ``d = 1 - 0.693/HL`` (spec 4.1). Your usage
``u(t) = u0 * d**t``; your ancestors lose the same ``u0 - u(t)``; the engine recomputes the tree at
each time. No textual here.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from tui.engine import compute
from tui.engine.decay import decay_factor
from tui.view import ClusterView
from tui.whatif import add_usage


@dataclass(frozen=True)
class Recovery:
    """Usage and fairshare of one association at times ``days`` from now."""

    days: np.ndarray
    """Sample times in days from the snapshot."""
    usage: np.ndarray
    """The association's raw usage (billing TRES-seconds) at each time."""
    fairshare: np.ndarray
    """Its fairshare factor at each time (NaN for Fair Tree accounts, which have none)."""
    half_life_days: float
    """PriorityDecayHalfLife in days (0: usage never decays, nothing recovers)."""


def recovery(view: ClusterView, row: int, half_lives: float = 4, points: int = 17) -> Recovery:
    """Sample usage and fairshare of ``row`` over ``half_lives`` half-lives.

    Parameters
    ----------
    view : ClusterView
        The snapshot and its engine results.
    row : int
        The association (normally a user row).
    half_lives : float
        How far ahead, in cluster half-lives (one week when the cluster has no decay).
    points : int
        Number of samples, the first at now.

    Raises
    ------
    ValueError
        Without a Slurm tree, or for a row outside it.
    """
    tree = view.snapshot.tree
    if tree is None or view.fairshare is None:
        raise ValueError("no Slurm association tree in this snapshot")
    if not 0 <= row < tree.size:
        raise ValueError(f"row {row} is not in the association tree")
    settings = view.snapshot.settings
    hl = settings.decay_half_life_s
    span = (hl if hl > 0 else 7 * 86400) * half_lives
    seconds = np.linspace(0.0, span, points)
    u0 = float(tree.usage_raw[row])
    usage = u0 * np.asarray(decay_factor(hl, seconds), dtype=np.float64) if hl > 0 else np.full(points, u0)
    fairshare = np.empty(points)
    fairshare[0] = view.fairshare.fairshare[row]
    for i in range(1, points):
        changed = add_usage(tree, row, -(u0 - usage[i]))
        fairshare[i] = compute(changed, settings.algorithm, settings.dampening).fairshare[row]
    return Recovery(seconds / 86400.0, usage, fairshare, hl / 86400.0)


def days_to_reach(rec: Recovery, target: float) -> float | None:
    """First sampled day on which fairshare is at least ``target`` (None: not within the span)."""
    hit = np.flatnonzero(rec.fairshare >= target)
    return float(rec.days[hit[0]]) if len(hit) else None
