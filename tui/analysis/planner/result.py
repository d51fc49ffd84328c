"""A scenario's result: the series of every charged association, the costs, the pending jobs'
priorities, and :meth:`ScenarioResult.sentences` (the answers in words). No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta

import numpy as np

from tui.analysis.planner.answers import AdminAnswer, SharesNow
from tui.analysis.planner.balance import (
    BalanceSeries,
)
from tui.analysis.planner.priority import PlannedPriority

# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AssocSeries:
    """One charged association over the horizon."""

    account: str
    user: str
    row: int
    """Row in the snapshot's tree (-1 in the standalone model)."""
    raw_usage: np.ndarray
    """sshare RawUsage units (billing TRES-seconds); core-hours in the standalone model."""
    fairshare: np.ndarray
    level_fs: np.ndarray | None = None
    rank: np.ndarray | None = None
    ahead: np.ndarray | None = None
    """Users with a better Fair Tree rank."""
    priority_fairshare: np.ndarray | None = None
    """The job priority's FAIRSHARE part, ``PriorityWeightFairshare * F`` (when the weight is known)."""
    tree_usage: np.ndarray | None = None
    """PBS ``fairshare_tree_usage``."""
    raw_usage_before: np.ndarray | None = None
    """The same projection without the scenario's jobs ("before"; the source's running jobs stay)."""
    fairshare_before: np.ndarray | None = None
    rank_before: np.ndarray | None = None
    fairshare_stop: np.ndarray | None = None
    """If the association stops now: no campaign and (with ``others`` = steady/observed) no own pace."""
    balance: BalanceSeries | None = None
    """The binding allocation or Slurm budget over the horizon (None: see ``balance_note``)."""
    balance_note: str = ""
    """Why there is no balance (unknown or absent), when ``balance`` is None."""

    @property
    def label(self) -> str:
        return f"{self.account}/{self.user}" if self.user else (self.account or "you")


@dataclass(frozen=True)
class CostLine:
    """What one job line costs, before decay."""

    index: int
    billing_per_s: float
    """Billable TRES of one copy, per second."""
    runs: int
    """``count * repeat``."""
    billing_seconds: float
    """Charged: billing x run time (the runtime, else the walltime) x runs."""
    held_billing_seconds: float | None = None
    """Pre-debited at the starts: billing x walltime x runs (None: the same as charged)."""

    @property
    def su(self) -> float:
        """Service units (billing-hours)."""
        return self.billing_seconds / 3600.0


@dataclass(frozen=True, eq=False)
class PendingPriority:
    """A pending job's priority over the horizon (multifactor, the cluster's weights)."""

    job_id: str
    account: str
    user: str
    priority: np.ndarray
    """AGE (growing to PriorityMaxAge) + FAIRSHARE (the projected factor) + the other parts held."""
    age: np.ndarray
    fairshare: np.ndarray


@dataclass(frozen=True, eq=False)
class ScenarioResult:
    """A scenario's projection and the answers people ask of it."""

    now: datetime
    t_hours: np.ndarray
    series: tuple[AssocSeries, ...]
    law: str
    """``slurm`` (discrete decay cycles) or ``continuous`` (standalone model)."""
    algorithm: str
    """``fair_tree``, ``classic`` or ``model`` (F = 2**(-u/u*))."""
    half_life_s: int
    users: int
    ranked: np.ndarray
    """Steps at which Fair Tree ranks were recomputed (held in between)."""
    costs: tuple[CostLine, ...]
    campaign_end_h: float
    """Hours from now at which the last job ends (0 without jobs)."""
    target: float
    usage_unit: str
    notes: tuple[str, ...] = ()
    recovery_h: tuple[float | None, ...] = ()
    """Per series: hours from now at which fairshare is back to ``target`` after the campaign."""
    pending: tuple[PendingPriority, ...] = ()
    planned: tuple[PlannedPriority, ...] = ()
    """Per job line: its priority while pending, submitted at its start offset, part by part."""
    shares_now: tuple[SharesNow, ...] = ()
    """With ``[[shares]]``: each charged association's fairshare today before -> after."""
    admin: AdminAnswer | None = None

    @property
    def total_billing_seconds(self) -> float:
        return float(sum(c.billing_seconds for c in self.costs))

    def date(self, hours: float) -> datetime:
        return self.now + timedelta(hours=float(hours))

    def sentences(self) -> list[str]:
        """Plain answers: cost, fairshare before -> after, the lowest point, recovery."""
        out = []
        total = self.total_billing_seconds
        if self.costs:
            unit = {"model": "core-hours", "pbs": f"{self.usage_unit}-hours"}.get(self.algorithm, "SU (billing-hours)")
            held = sum(c.held_billing_seconds if c.held_billing_seconds is not None else c.billing_seconds
                       for c in self.costs)
            out.append(f"campaign: {sum(c.runs for c in self.costs)} job runs, {total / 3600:,.1f} {unit}"
                       + (f" = {total:,.0f} billing TRES-seconds" if self.law == "slurm" else "")
                       + (f" (pre-debited at the starts: {held / 3600:,.1f} SU)" if abs(held - total) > 1e-9 else "")
                       + f", last job ends {self.date(self.campaign_end_h):%Y-%m-%d %H:%M}")
        end_k = min(int(np.searchsorted(self.t_hours, self.campaign_end_h)), self.t_hours.size - 1)
        for s, rec in zip(self.series, self.recovery_h or (None,) * len(self.series)):
            f = s.fairshare
            if np.all(np.isnan(f)):
                continue
            lo = int(np.nanargmin(f))
            when = "campaign end" if self.campaign_end_h <= self.t_hours[-1] else "the horizon's end"
            line = (f"{s.label}: fairshare {f[0]:.4f} now -> {f[end_k]:.4f} at {when} "
                    f"({self.date(self.t_hours[end_k]):%Y-%m-%d}); lowest {f[lo]:.4f} on "
                    f"{self.date(self.t_hours[lo]):%Y-%m-%d %H:%M}")
            if s.rank is not None:
                line += f"; rank {s.rank[0]} -> {s.rank[end_k]} of {self.users}"
            out.append(line)
            if rec is not None:
                out.append(f"{s.label}: fairshare back to {self.target:g} on {self.date(rec):%Y-%m-%d}")
            elif f[lo] < self.target:
                out.append(f"{s.label}: fairshare not back to {self.target:g} by "
                           f"{self.date(self.t_hours[-1]):%Y-%m-%d} (end of the horizon)")
            out.extend(self._before_after(s, end_k))
        out.extend(f"{x.label}: with the scenario's raw shares, fairshare now {x.before:.6f} -> {x.after:.6f}"
                   + (f" (rank {x.rank_before} -> {x.rank_after} of {self.users})" if x.rank_before is not None else "")
                   for x in self.shares_now)
        for p in self.planned:
            out.append(self._planned_line(p))
            out.extend(f"job {p.job} ({p.user}) vs pending job {b.job_id} ({b.user}): " + self._passes_planned(p, b)
                       for b in self.pending)
        if self.admin is not None:
            out.extend(self.admin.sentences())
        if len(self.pending) > 1:
            a = self.pending[0]
            for b in self.pending[1:]:
                out.append(f"job {a.job_id} ({a.user}): priority {a.priority[0]:,.0f} now vs job {b.job_id} ({b.user}) "
                           f"{b.priority[0]:,.0f}; " + self._passes(a, b))
        out.extend(self.notes)
        return out

    def _before_after(self, s: AssocSeries, end_k: int) -> list[str]:
        """The campaign's cost in fairshare, what stopping now gives, and the balance."""
        out = []
        fb = s.fairshare_before
        if fb is not None and self.costs and not np.isnan(fb[end_k]):
            out.append(f"{s.label}: the campaign costs fairshare {fb[end_k]:.4f} -> {s.fairshare[end_k]:.4f} "
                       f"(without -> with it, {self.date(self.t_hours[end_k]):%Y-%m-%d})")
        stop = s.fairshare_stop
        if stop is not None and not np.all(np.isnan(stop)):
            if stop[0] >= self.target:
                out.append(f"{s.label}: if it stops now, fairshare is already {stop[0]:.4f} (>= {self.target:g})")
            else:
                hit = np.flatnonzero(np.nan_to_num(stop, nan=-1.0) >= self.target)
                out.append(f"{s.label}: if it stops now, fairshare {stop[0]:.4f} is back to {self.target:g} on "
                           f"{self.date(self.t_hours[hit[0]]):%Y-%m-%d %H:%M}" if hit.size else
                           f"{s.label}: if it stops now, fairshare {stop[0]:.4f} is not back to {self.target:g} by "
                           f"{self.date(self.t_hours[-1]):%Y-%m-%d}" + (
                               " (it hardly moves: when everyone only decays, ratios stay put; try "
                               "others = \"steady\")"
                               if stop[-1] - stop[0] < 0.01 else ""))
        b = s.balance
        if b is None:
            if s.balance_note:
                out.append(f"{s.label}: {s.balance_note}")
            return out
        line = (f"{s.label}: {b.account.label}: {b.balance[0]:,.1f} SU free now -> {b.balance[end_k]:,.1f} SU at "
                f"{self.date(self.t_hours[end_k]):%Y-%m-%d}")
        if b.refused:
            job, h = b.refused[0]
            line += (f"; refuses jobs[{job}] on {self.date(h):%Y-%m-%d %H:%M} (its pre-debit exceeds the balance): "
                     f"runs out then, {len(b.refused)} runs refused in all")
        else:
            line += "; no job refused"
        pace = b.runs_out_with_pace_h(self.t_hours)
        if pace is not None:
            line += (f"; with the group's own pace ({b.account.pace_su_per_day:,.1f} SU/day) it runs out on "
                     f"{self.date(pace):%Y-%m-%d}")
        out.append(line)
        return out

    def _planned_line(self, p: PlannedPriority) -> str:
        k0 = int(np.searchsorted(self.t_hours, p.submit_h))
        if k0 >= self.t_hours.size:
            return f"job {p.job} ({p.user}): submitted after the horizon"
        if not np.any(np.nan_to_num(p.priority)):
            return (f"job {p.job} ({p.user}): priority 0 from every factor: every PriorityWeight is 0 (Slurm's "
                    "default, or the source has no scontrol show config), so jobs go by submit time")
        site = float(p.site[k0]) if isinstance(p.site, np.ndarray) else p.site
        held = [f"{k} {v:,.0f}" for k, v in (("JOBSIZE", p.jobsize), ("PARTITION", p.partition), ("QOS", p.qos),
                                              ("TRES", p.tres), ("SITE", site)) if v]
        line = (f"job {p.job} ({p.user}): priority {p.priority[k0]:,.0f} at submission "
                f"({self.date(self.t_hours[k0]):%Y-%m-%d %H:%M}: FAIRSHARE {p.fairshare[k0]:,.0f}, AGE {p.age[k0]:,.0f}"
                + "".join(f", {x}" for x in held) + f") -> {p.priority[-1]:,.0f} at the horizon's end")
        return line + "".join(f"; {n}" for n in p.notes)

    def _passes_planned(self, a: PlannedPriority, b: PendingPriority) -> str:
        ok = ~np.isnan(a.priority)
        hit = np.flatnonzero(ok & (np.nan_to_num(a.priority, nan=-np.inf) > b.priority))
        if not hit.size:
            return f"does not pass it by {self.date(self.t_hours[-1]):%Y-%m-%d} (end of the horizon)"
        k0 = int(np.flatnonzero(ok)[0])
        if hit[0] == k0:
            return "ahead from its submission"
        return f"passes it on {self.date(self.t_hours[hit[0]]):%Y-%m-%d %H:%M}"

    def _passes(self, a: PendingPriority, b: PendingPriority) -> str:
        if a.priority[0] > b.priority[0]:
            return "already ahead"
        hit = np.flatnonzero(a.priority > b.priority)
        if not hit.size:
            return f"does not pass it by {self.date(self.t_hours[-1]):%Y-%m-%d} (end of the horizon)"
        return f"passes it on {self.date(self.t_hours[hit[0]]):%Y-%m-%d %H:%M}"
