"""Recovery: an association's raw usage and fairshare over time if it runs nothing more.

The maths is :func:`tui.engine.projection.recovery_curve` (everyone else's usage holds steady,
this association's decays by Slurm's per-second factor). Here: the sample times, and when a
target is reached. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from tui.analysis.standing import Standing
from tui.engine.projection import recovery_curve


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
    start: datetime | None = None
    """The snapshot's time: day 0 (None: dates unknown, days only)."""

    def date_at(self, day: float) -> datetime:
        """The date ``day`` days after the snapshot (``start`` must be known)."""
        if self.start is None:
            raise ValueError("this recovery has no start date")
        return self.start + timedelta(days=float(day))

    @property
    def has_fairshare(self) -> bool:
        """False for a Fair Tree account: it has no factor, so no fairshare curve is drawn."""
        return bool(np.isfinite(self.fairshare).any())


def recovery(standing: Standing, row: int, half_lives: float = 4, points: int = 17) -> Recovery:
    """Sample usage and fairshare of ``row`` over ``half_lives`` half-lives.

    Parameters
    ----------
    standing : Standing
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
    tree = standing.snapshot.tree
    if tree is None or standing.fairshare is None:
        raise ValueError("no Slurm association tree in this snapshot")
    if not 0 <= row < tree.size:
        raise ValueError(f"row {row} is not in the association tree")
    settings = standing.snapshot.settings
    hl = settings.decay_half_life_s
    seconds = np.linspace(0.0, (hl if hl > 0 else 7 * 86400) * half_lives, points)
    usage, fairshare = recovery_curve(tree, row, seconds, hl, settings.algorithm, settings.dampening,
                                      fairshare_now=float(standing.fairshare.fairshare[row]))
    return Recovery(seconds / 86400.0, usage, fairshare, hl / 86400.0, standing.snapshot.taken_at)


def day_reached(rec: Recovery, target: float) -> float | None:
    """The day fairshare first reaches ``target``, interpolated linearly between the two samples
    around it (None: not within the span). Under Fair Tree the factor moves in rank steps, so
    the day is "around": within one sample interval."""
    hit = np.flatnonzero(rec.fairshare >= target)
    if not len(hit):
        return None
    k = int(hit[0])
    if k == 0:
        return 0.0
    f0, f1 = float(rec.fairshare[k - 1]), float(rec.fairshare[k])
    d0, d1 = float(rec.days[k - 1]), float(rec.days[k])
    return d0 + (d1 - d0) * (target - f0) / (f1 - f0) if f1 > f0 else d1


def days_to_reach(rec: Recovery, target: float) -> float | None:
    """First sampled day on which fairshare is at least ``target`` (None: not within the span)."""
    hit = np.flatnonzero(rec.fairshare >= target)
    return float(rec.days[hit[0]]) if len(hit) else None
