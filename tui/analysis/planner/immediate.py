"""What-if, right now: what one more job does to a fairshare if it were charged at once.

:func:`whatif` adds a job's cost (:func:`tui.engine.billing.job_cost`) to an association and every
direct ancestor up to the root (spec 1.2, the direct-parent chain, ``parent`` accounts included)
and recomputes the whole tree, since a job moves every sibling's normalized usage and every rank.
It is the *immediate* effect: the usage is charged at once and nothing decays. The form that
describes the job is :mod:`tui.analysis.planner.job_form`. No Textual here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from tui.analysis.standing import Standing
from tui.engine import compute
from tui.engine.billing import JobCost
from tui.engine.projection import add_usage
from tui.model import path_to

__all__ = ["UsageIncrement", "WhatIf", "whatif"]


@dataclass(frozen=True)
class UsageIncrement:
    """Raw usage of one association before and after the job (billing TRES-seconds)."""

    row: int
    label: str
    before: float
    after: float


@dataclass(frozen=True)
class WhatIf:
    """The immediate effect of a job on an association's fairshare."""

    cost: JobCost
    row: int
    label: str
    increments: tuple[UsageIncrement, ...]
    """The row first, then each direct ancestor up to the root: all get the same increment."""
    fairshare_before: float
    fairshare_after: float
    effective_usage_before: float
    effective_usage_after: float
    level_fs_before: float | None = None
    level_fs_after: float | None = None
    rank_before: int | None = None
    rank_after: int | None = None
    users: int = 0
    priority_fairshare_delta: float = 0.0
    """Change of the job priority's FAIRSHARE part: ``PriorityWeightFairshare * dF``."""


def whatif(standing: Standing, row: int, cost: JobCost) -> WhatIf:
    """Charge ``cost.total`` to ``row`` at once and recompute the engine on the changed tree.

    Parameters
    ----------
    standing : Standing
        Current snapshot and its results.
    row : int
        Association that runs the job (normally a user row).
    cost : JobCost
        From :func:`job_cost`.

    Raises
    ------
    ValueError
        Without a Slurm tree, or for a row outside it.
    """
    tree, res = standing.snapshot.tree, standing.fairshare
    if tree is None or res is None:
        raise ValueError("no Slurm association tree in this snapshot")
    if not 0 <= row < tree.size:
        raise ValueError(f"row {row} is not in the association tree")
    settings = standing.snapshot.settings
    changed = add_usage(tree, row, cost.total)
    after = compute(changed, res.algorithm, settings.dampening)
    incs = tuple(UsageIncrement(r, tree.label(r), float(tree.usage_raw[r]), float(changed.usage_raw[r]))
                 for r in reversed(path_to(tree, row)))
    lf_b = lf_a = None
    if res.level_fs is not None and after.level_fs is not None:  # same algorithm: both or neither
        lf_b, lf_a = float(res.level_fs[row]), float(after.level_fs[row])
    rank_b = rank_a = None
    if res.rank is not None and after.rank is not None and tree.is_user[row]:
        rank_b, rank_a = int(res.rank[row]), int(after.rank[row])
    f_b, f_a = float(res.fairshare[row]), float(after.fairshare[row])
    delta = settings.weight_fairshare * (f_a - f_b) if not (math.isnan(f_a) or math.isnan(f_b)) else 0.0
    return WhatIf(cost, row, tree.label(row), incs, f_b, f_a, float(res.effective_usage[row]),
                  float(after.effective_usage[row]), lf_b, lf_a, rank_b, rank_a, tree.user_count, delta)
