"""What-if answers beyond the projection itself: raw shares now, and the admin's control numbers.

API (used by :func:`tui.analysis.planner.run.run_scenario`; the pane reads ``ScenarioResult.admin`` and
``ScenarioResult.shares_now``):

* :func:`shares_now(tree, shares_tree, rows, algorithm, dampening)` -> list of :class:`SharesNow`:
  each association's fairshare today before -> after the ``[[shares]]`` change (a fresh engine
  compute of both trees).
* :func:`admin_answer(tree, u_star, half_life_s, ...)` -> :class:`AdminAnswer`: seed 000's control
  for a target ``u*`` ("fairshare halves every u*"): the ``FairShareDampeningFactor`` to set now
  (``u*/ubar``, and the integer Slurm takes), how it drifts over the coming weeks as the mean usage
  decays (or holds, with ``others = "steady"``), the artificial user's padding ``w = u* N`` (N real
  users) and its upkeep every ``check_every`` (:func:`tui.engine.control.padding_upkeep`).

No Textual here.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from tui.engine import compute
from tui.engine.control import (
    Upkeep,
    dampening_drift,
    padding,
    padding_decay,
    padding_upkeep,
    slurm_dampening_for_target,
)
from tui.model import AssocTree

__all__ = ["AdminAnswer", "SharesNow", "admin_answer", "shares_now"]

WEEK = 7 * 86400.0
#: The paper's upkeep job over one 4-hour decay of its padding: 1.5e9 / 1.47e9.
UPKEEP_MARGIN = 1.02


@dataclass(frozen=True)
class SharesNow:
    """Fairshare of one association today with its tree's raw shares and with the scenario's."""

    row: int
    label: str
    before: float
    after: float
    rank_before: int | None = None
    rank_after: int | None = None


def shares_now(tree: AssocTree, changed: AssocTree, rows: list[int], algorithm: str,
               dampening: float) -> list[SharesNow]:
    """Fairshare now of ``rows`` on ``tree`` (before) and ``changed`` (after the raw shares)."""
    b = compute(tree, algorithm, dampening)
    a = compute(changed, algorithm, dampening)
    out = []
    for r in rows:
        rb = ra = None
        if b.rank is not None and a.rank is not None and tree.is_user[r]:
            rb, ra = int(b.rank[r]), int(a.rank[r])
        out.append(SharesNow(r, tree.label(r), float(b.fairshare[r]), float(a.fairshare[r]), rb, ra))
    return out


@dataclass(frozen=True, eq=False)
class AdminAnswer:
    """Seed 000's control numbers for a target halving usage ``u*``."""

    halving_usage: float
    mean_usage: float
    """Mean raw usage of the real users now (``ubar``)."""
    users: int
    dampening_now: float
    """``u*/ubar``, real-valued (paper eq. 7)."""
    slurm_dampening: int
    """What FairShareDampeningFactor can be (an integer in 1..65535)."""
    drift_days: np.ndarray
    drift: np.ndarray
    """The real-valued factor to set at each of ``drift_days``."""
    padding: float
    """The artificial user's usage ``w = u* N`` (N real users; N + 1 with it, paper eq. 5)."""
    check_every_s: int
    upkeep_amount: float
    upkeep: Upkeep
    """The upkeep rule simulated with Slurm's decay, times in seconds."""

    @property
    def drift_slurm(self) -> np.ndarray:
        out: np.ndarray = np.clip(np.rint(self.drift), 1, 65535).astype(np.int64)
        return out

    def sentences(self) -> list[str]:
        slip = self.upkeep.worst_slip(self.padding)
        jobs = int(self.upkeep.ran.sum())
        weeks = self.drift_days[-1] / 7 if self.drift_days.size else 0.0
        lines = [f"admin: for fairshare halving every {self.halving_usage:,.0f} (mean usage {self.mean_usage:,.0f} "
                 f"over {self.users:,} users) set FairShareDampeningFactor = {self.slurm_dampening} now "
                 f"(exact {self.dampening_now:.4g})"]
        if self.drift.size > 1:
            lines.append("admin: the factor drifts " + " -> ".join(
                f"{d:.4g} (day {day:g})" for day, d in zip(self.drift_days, self.drift)))
        lines.append(f"admin: or pad with an artificial user of usage {self.padding:,.0f} and top it up by "
                     f"{self.upkeep_amount:,.0f} when below, checked every {self.check_every_s / 3600:g} h: "
                     f"{jobs} upkeep jobs in {weeks:g} weeks, padding within {slip:.2%}")
        return lines


def admin_answer(tree: AssocTree, u_star: float, half_life_s: float, weeks: float = 4.0,
                 check_every_s: int = 4 * 3600, upkeep_amount: float | None = None,
                 mean_rate: float = 0.0) -> AdminAnswer:
    """Dampening now and its weekly drift, and the padding with its upkeep, for target ``u*``.

    Parameters
    ----------
    tree : AssocTree
        Users' raw usage now (user rows).
    u_star : float
        Target halving usage, in the tree's usage unit.
    half_life_s : float
        PriorityDecayHalfLife.
    weeks : float
        Horizon of the drift (daily... weekly samples) and the upkeep simulation.
    check_every_s : int
        Upkeep check interval.
    upkeep_amount : float, optional
        Usage one upkeep job adds; default ``UPKEEP_MARGIN`` x one interval's decay of the padding.
    mean_rate : float
        Mean usage a user adds per second (0: the population stops; ``others = "steady"``
        passes the rate that holds the mean where it is).
    """
    users = tree.usage_raw[tree.is_user].astype(np.float64)
    n = int(users.size)
    mean = float(users.mean()) if n else 0.0
    days = np.arange(0.0, weeks * 7 + 1e-9, 7.0)
    drift = (dampening_drift(u_star, mean, days * 86400.0, half_life_s, mean_rate) if mean > 0
             else np.full(days.size, math.inf))
    w = float(padding(u_star, n + 1))
    amount = upkeep_amount if upkeep_amount is not None else \
        UPKEEP_MARGIN * float(padding_decay(w, check_every_s, half_life_s, "slurm"))
    up = padding_upkeep(w, amount, float(check_every_s), half_life_s, weeks * WEEK, "slurm")
    d_now = u_star / mean if mean > 0 else math.inf
    return AdminAnswer(u_star, mean, n, d_now, slurm_dampening_for_target(u_star, mean), days, np.asarray(drift),
                       w, int(check_every_s), float(amount), up)
