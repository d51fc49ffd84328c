"""A planned campaign against no campaign: the planner pane's numbers, table and sentences.

:func:`project_plan` runs a scenario twice through :func:`run_scenario`: as planned ("after") and
with every job line billed nothing ("before": the same associations, everyone decaying, the
running jobs charging as they will; kept per snapshot by :class:`Baselines`). Each quantity
over time is a :class:`Metric`, before and after side by side; quantities the analysis adds
later (a series' or the result's arrays, such as a job priority or an allocation balance)
become metrics too, under their field name. Every change is said as ``before → after``, never
as a bare difference. No Textual here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, replace

import numpy as np

from tui.analysis.planner.result import ScenarioResult
from tui.analysis.planner.run import run_scenario
from tui.analysis.planner.scenario import Scenario, ScenarioJob
from tui.engine.fairshare_projection import Cancelled as Cancelled  # re-exported for the pane
from tui.model import Snapshot

__all__ = ["Baselines", "Metric", "PlanProjection", "metrics", "project_plan", "sentences", "table_rows"]

HOUR = 3600.0

#: Series fields drawn under a name of their own, in this order; ``raw_usage`` is converted.
KNOWN = {"raw_usage": "usage", "fairshare": "fairshare", "ahead": "users ahead (Fair Tree rank)",
         "priority_fairshare": "job priority, FAIRSHARE part"}
#: Series and result fields that are not a quantity to plot (or are shown through another).
NOT_PLOTTED = {"level_fs", "rank", "tree_usage", "t_hours", "ranked",
               # run_scenario's own comparison: the pane draws its "without" run instead
               "raw_usage_before", "fairshare_before", "rank_before", "fairshare_stop"}


@dataclass(frozen=True, eq=False)
class PlanProjection:
    """The scenario as planned and without its jobs, from the same snapshot and time."""

    scenario: Scenario
    before: ScenarioResult
    after: ScenarioResult


@dataclass(frozen=True, eq=False)
class Metric:
    """One quantity over time, without and with the campaign."""

    key: str
    title: str
    before: np.ndarray
    after: np.ndarray
    digits: int
    """Decimals shown (0: thousands separators)."""

    def text(self, value: float) -> str:
        if not np.isfinite(value):
            return "-"
        return f"{value:,.{self.digits}f}"

    def change(self, k: int) -> str:
        """``before → after`` at step ``k``."""
        return f"{self.text(float(self.before[k]))} → {self.text(float(self.after[k]))}"


class Baselines:
    """Projections without the campaign, kept per snapshot: they depend on the horizon, the step
    and which associations the jobs charge, not on the jobs' shapes, so typing in a job's fields
    reuses one (at 100k associations each projection takes seconds)."""

    def __init__(self, size: int = 8) -> None:
        self._snapshot: Snapshot | None = None
        self._results: dict[Scenario, ScenarioResult] = {}
        self._size = size

    def get(self, sc: Scenario, snapshot: Snapshot, source: str) -> ScenarioResult:
        if snapshot is not self._snapshot:
            self._snapshot, self._results = snapshot, {}
        found = self._results.get(sc)
        if found is None:
            found = run_scenario(sc, snapshot, source=source, compare=False)
            if len(self._results) >= self._size:
                self._results.pop(next(iter(self._results)))
            self._results[sc] = found
        return found


def baseline_of(sc: Scenario) -> Scenario:
    """``sc`` without its campaign: each job line charges its association nothing (so the same
    associations are followed), shapes and times dropped (they change nothing at billing 0)."""
    return replace(sc, jobs=tuple(ScenarioJob(user=j.user, account=j.account, billing=0.0) for j in sc.jobs))


def project_plan(sc: Scenario, snapshot: Snapshot, source: str = "plan",
                 baselines: Baselines | None = None, cancelled: Callable[[], bool] | None = None) -> PlanProjection:
    """Project ``sc`` on ``snapshot`` as planned, and without its campaign (:func:`baseline_of`).

    ``cancelled`` is asked at each ranked step of the planned run: True stops it with
    :class:`tui.engine.fairshare_projection.Cancelled` (a newer form is to be projected).

    Raises
    ------
    InputError
        As :func:`run_scenario`: a user, account or partition the snapshot does not have, a job
        larger than its partition (naming ``plan:jobs[i].FIELD``).
    """
    # The pane's "without" run is its own (``baselines``).
    after = run_scenario(sc, snapshot, source=source, compare=False, cancelled=cancelled)
    base = baseline_of(sc)
    before = baselines.get(base, snapshot, source) if baselines is not None else run_scenario(
        base, snapshot, source=source, compare=False)
    return PlanProjection(sc, before, after)


def usage_scale(result: ScenarioResult) -> tuple[float, str]:
    """Divisor and unit of the usage shown: SU (billing-hours) for Slurm's billing-seconds."""
    if result.law == "slurm":
        return HOUR, "SU"
    return 1.0, result.usage_unit


def _is_series(value: object, size: int) -> bool:
    return (isinstance(value, np.ndarray) and value.ndim == 1 and value.shape[0] == size
            and value.dtype.kind in "fiu")


def metrics(plan: PlanProjection, index: int) -> list[Metric]:
    """The quantities of series ``index`` (one charged association), before and after.

    Usage, fairshare, users ahead and the FAIRSHARE part of a job priority where the result has
    them, then any other numeric array of the series or of the result, named by its field.
    """
    b, a = plan.before.series[index], plan.after.series[index]
    size = plan.after.t_hours.size
    out = []
    scale, unit = usage_scale(plan.after)
    for key, title in KNOWN.items():
        vb, va = getattr(b, key), getattr(a, key)
        if vb is None or va is None:
            continue
        if key == "raw_usage":
            out.append(Metric(key, f"usage ({unit}, decayed)", vb / scale, va / scale, 1))
        else:
            out.append(Metric(key, title, np.asarray(vb, float), np.asarray(va, float),
                              4 if key == "fairshare" else 0))
    if a.balance is not None:  # the binding allocation or budget: SU free at each step
        free_b = b.balance.balance if b.balance is not None else a.balance.balance
        out.append(Metric("balance", f"balance of {a.balance.account.label} (SU free)",
                          np.asarray(free_b, float), np.asarray(a.balance.balance, float), 1))
    mine = [p for p in plan.after.planned if (p.account, p.user) == (a.account, a.user)]
    if mine:  # the first planned job's priority while pending, all its parts (no 'before': it is new)
        prio = np.asarray(mine[0].priority, float)
        out.append(Metric("planned_priority", f"priority of job {mine[0].job + 1} if pending", prio, prio, 0))
    pairs: list[tuple[str, object, object]] = [
        (f.name, getattr(b, f.name), getattr(a, f.name)) for f in dataclasses.fields(a)]
    pairs += [(f.name, getattr(plan.before, f.name), getattr(plan.after, f.name))
              for f in dataclasses.fields(plan.after)]
    for name, vb, va in pairs:
        if name in KNOWN or name in NOT_PLOTTED or not (_is_series(vb, size) and _is_series(va, size)):
            continue
        assert isinstance(vb, np.ndarray) and isinstance(va, np.ndarray)
        out.append(Metric(name, name.replace("_", " "), vb.astype(float), va.astype(float),
                          4 if float(np.nanmax(np.abs(va), initial=0.0)) <= 1 else 0))
    return out


def table_steps(plan: PlanProjection, rows: int = 9) -> list[int]:
    """Steps the table shows: evenly spaced from now to the horizon, with the campaign's end."""
    t = plan.after.t_hours
    picks = {int(round(x)) for x in np.linspace(0, t.size - 1, min(rows, t.size))}
    end = int(np.searchsorted(t, plan.after.campaign_end_h))
    if plan.scenario.jobs and end < t.size:
        picks.add(end)
    return sorted(picks)


def table_rows(plan: PlanProjection, index: int, rows: int = 9) -> tuple[list[str], list[list[str]]]:
    """Header and rows of the table under the plots: the date, then each metric ``before → after``."""
    ms = metrics(plan, index)
    header = ["date"] + [m.title for m in ms]
    out = []
    for k in table_steps(plan, rows):
        out.append([f"{plan.after.date(plan.after.t_hours[k]):%Y-%m-%d %H:%M}"] + [m.change(k) for m in ms])
    return header, out


def sentences(plan: PlanProjection) -> list[str]:
    """Plain answers: what the campaign costs, and for each charged association its fairshare,
    users ahead and usage without → with the campaign, its lowest point, and its recovery."""
    a, b = plan.after, plan.before
    out = []
    scale, unit = usage_scale(a)
    for c in a.costs:
        job = plan.scenario.jobs[c.index]
        out.append(f"job {c.index + 1}: {c.runs} run{'s' if c.runs != 1 else ''} × {job.walltime_s / HOUR:g} h "
                   f"at {c.billing_per_s:,.2f} billing/s = {c.billing_seconds / scale:,.1f} {unit}")
    if len(a.costs) > 1:
        out.append(f"campaign: {a.total_billing_seconds / scale:,.1f} {unit} in all")
    t = a.t_hours
    end = min(int(np.searchsorted(t, a.campaign_end_h)), t.size - 1)
    when = f"{a.date(t[end]):%Y-%m-%d %H:%M}" + (" (campaign end)" if a.campaign_end_h <= t[-1] else
                                                  " (end of the horizon, before the campaign ends)")
    for i, (sa, sb) in enumerate(zip(a.series, b.series)):
        f = sa.fairshare
        out.append(f"{sa.label} on {when}: fairshare {sb.fairshare[end]:.4f} → {f[end]:.4f}, usage "
                   f"{sb.raw_usage[end] / scale:,.1f} → {sa.raw_usage[end] / scale:,.1f} {unit} "
                   "(without → with the campaign)")
        if sa.ahead is not None and sb.ahead is not None:
            out.append(f"{sa.label}: users ahead {int(sb.ahead[end]):,} → {int(sa.ahead[end]):,} of {a.users:,}")
        if np.all(np.isnan(f)):
            continue
        lo = int(np.nanargmin(f))
        out.append(f"{sa.label}: lowest with the campaign on {a.date(t[lo]):%Y-%m-%d %H:%M}: fairshare "
                   f"{sb.fairshare[lo]:.4f} → {f[lo]:.4f}")
        rec = a.recovery_h[i] if i < len(a.recovery_h) else None
        if rec is not None:
            out.append(f"{sa.label}: fairshare back to {a.target:g} on {a.date(rec):%Y-%m-%d}")
        elif f[lo] < a.target:
            out.append(f"{sa.label}: fairshare not back to {a.target:g} by {a.date(t[-1]):%Y-%m-%d} "
                       "(end of the horizon)")
        else:
            out.append(f"{sa.label}: fairshare stays at or above {a.target:g}")
    out.extend(a.notes)
    return out


def unknown_usage_lines(plan: PlanProjection, unknown: dict[int, str]) -> list[str]:
    """What the planner can say where the charged associations' usage is unknown (``unknown``:
    row -> why, e.g. plain slurmrestd): each job line's cost, which needs no usage, and that the
    fairshare without and with the campaign is unknown. Nothing computed from zeros is shown."""
    lines = []
    for c in plan.after.costs:
        lines.append(f"Job {c.index + 1}: {c.billing_per_s:,.2f} billing units/s × {c.runs:,} run(s) = "
                     f"{c.billing_seconds:,.0f} billing-seconds = {c.su:,.1f} SU")
    for s in plan.after.series:
        if s.row in unknown:
            lines.append(f"Fairshare of {s.label} without → with the campaign: unknown, {unknown[s.row]} "
                         "(--slurmrestd-sshare, --slurm or --from DIR have it)")
    return lines
