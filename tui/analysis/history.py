"""Usage history from accounting records, and the cross-check against sshare's RawUsage.

Two answers, both UI-free:

* :func:`daily_usage`: billing x seconds per day and per (account, user) over the last N days
  (a job running across midnight is split at midnight, local time of the snapshot), and the
  decayed usage that history implies at the end of each day: every job's charge up to that
  moment, decayed at Slurm's per-second factor ``d = 1 - 0.693/HL`` (continuously).
* :func:`check_raw_usage`: Slurm's own discrete law (:mod:`tui.engine.usage_law`: QOS
  UsageFactor, limits enforcement, usage resets, billing from AllocTRES) replayed over the jobs
  and summed up the association tree, against the RawUsage sshare printed. Decay cycles are the
  controller's own when known (its log), else assumed on a regular grid, one
  ``PriorityCalcPeriod`` apart, ending at the last decay cycle (saved as
  ``last_decay_cycle.txt``; else the snapshot time). Where the true cycle times differ from the
  grid, the result moves by at most one period's decay, ``1 - d**P`` relative: that is the
  tolerance then (plus 1 for sshare's truncation).

Disagreements beyond it are named: a usage reset (PriorityUsageResetPeriod, or an admin's
``sacctmgr modify ... set RawUsage=0``) leaves sshare below the jobs; purged or missing job
records (PurgeJobAfter, PrivateData, a narrower --starttime) leave it above; a controller that
lost its state files (not one that was merely down: its first cycle charges and decays the gap)
loses the usage before; a QOS UsageFactor scales it (known to the law when the capture saved the
QOS table).
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import date, datetime, time, timedelta, timezone, tzinfo

import numpy as np

from tui.analysis.job_columns import job_columns
from tui.engine.decay import decay_per_second
from tui.engine.usage_law import (
    JobTable,
    UsagePolicy,
    charged_usage,
    cycle_grid,
    last_reset_before,
    logged_grid,
    replay,
    reset_boundaries,
)
from tui.model import AssocTree, Partition, PrioritySettings
from tui.sources.ctld_log import ControllerLog
from tui.sources.sacct import AccountedJob

__all__ = ["DailyUsage", "UsageCheck", "HistoryCheck", "daily_usage", "charged_usage", "check_raw_usage",
           "job_table", "last_reset_before", "select_jobs", "usage_back_then"]


# --------------------------------------------------------------------------------------------
# Filtering
# --------------------------------------------------------------------------------------------


def _ancestors(tree: AssocTree | None) -> dict[str, set[str]]:
    """account -> itself and every account above it (from the tree's account rows)."""
    if tree is None:
        return {}
    out: dict[str, set[str]] = {}
    for i in range(tree.size):
        if tree.is_user[i]:
            continue
        names = {str(tree.account[i])}
        p = int(tree.parent[i])
        while p >= 0:
            names.add(str(tree.account[p]))
            p = int(tree.parent[p])
        out[str(tree.account[i])] = names
    return out


def select_jobs(jobs: Iterable[AccountedJob], account: str | None = None, user: str | None = None,
                tree: AssocTree | None = None) -> list[AccountedJob]:
    """Jobs of ``user`` and under ``account`` (the account itself or, with the tree, any
    account below it, as Slurm counts an account's usage)."""
    up = _ancestors(tree)
    out = []
    for job in jobs:
        if user and job.user != user:
            continue
        if account and account not in up.get(job.account, {job.account}):
            continue
        out.append(job)
    return out


# --------------------------------------------------------------------------------------------
# Daily usage and the decayed usage it implies
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class DailyUsage:
    """Usage per day of every (account, user) that ran in the window.

    ``usage[k, i]`` is billing x seconds of ``keys[k]`` on ``days[i]``; ``decayed[k, i]`` its
    decayed usage (billing-seconds) at the end of ``days[i]`` (the last day: at ``now``), from
    all its jobs, also those before the window.
    """

    days: tuple[date, ...]
    keys: tuple[tuple[str, str], ...]
    usage: np.ndarray
    decayed: np.ndarray
    now: datetime
    half_life_s: int

    def total(self) -> np.ndarray:
        """Usage per day, all keys together (billing-seconds)."""
        return self.usage.sum(axis=0) if len(self.keys) else np.zeros(len(self.days))

    def total_decayed(self) -> np.ndarray:
        return self.decayed.sum(axis=0) if len(self.keys) else np.zeros(len(self.days))

    def rows(self) -> list[dict[str, object]]:
        """One dict per (day, account, user) with usage: date, account, user, usage (billing-s),
        su (billing-hours), decayed_usage (billing-s)."""
        out: list[dict[str, object]] = []
        for i, day in enumerate(self.days):
            for k, (acct, user) in enumerate(self.keys):
                if self.usage[k, i] == 0 and self.decayed[k, i] == 0:
                    continue
                out.append({"date": day.isoformat(), "account": acct, "user": user,
                            "usage": round(float(self.usage[k, i]), 3),
                            "su": round(float(self.usage[k, i]) / 3600.0, 6),
                            "decayed_usage": round(float(self.decayed[k, i]), 3)})
        return out


def _decayed_integral(rate: np.ndarray, a: np.ndarray, b: np.ndarray, t: float, lam: float) -> np.ndarray:
    """``rate * integral_a^b exp(-lam (t - s)) ds`` for b <= t (zero where b <= a)."""
    width = np.maximum(b - a, 0.0)
    if lam == 0.0:
        flat: np.ndarray = rate * width
        return flat
    bb = np.maximum(b, a)
    out: np.ndarray = rate * (np.exp(-lam * (t - bb)) - np.exp(-lam * (t - a))) / lam * (width > 0)
    return out


def daily_usage(jobs: Sequence[AccountedJob], now: datetime, days: int, half_life_s: int,
                tz: tzinfo | None = None) -> DailyUsage:
    """Usage per day over the ``days`` days ending with ``now``'s date, per (account, user).

    Parameters
    ----------
    jobs : sequence of AccountedJob
        Accounting records (all of them: earlier jobs still count in the decayed usage).
    now : datetime
        The snapshot time (aware); running jobs count up to it, later charges are ignored.
    days : int
        Number of calendar days (>= 1), the last one being ``now``'s (partial) day.
    half_life_s : int
        PriorityDecayHalfLife in seconds (0: no decay).
    tz : tzinfo, optional
        Zone whose midnights split the days (default ``now``'s).

    Returns
    -------
    DailyUsage
        Usage in billing-seconds (SU = billing-hours is ``usage / 3600``).
    """
    if days < 1:
        raise ValueError("days must be >= 1")
    zone = tz or now.tzinfo
    local_now = now.astimezone(zone)
    last = local_now.date()
    day_list = tuple(last - timedelta(days=days - 1 - i) for i in range(days))
    bounds = [datetime.combine(d, time(0), tzinfo=zone).timestamp() for d in day_list]
    t_now = now.timestamp()
    edges = np.asarray(bounds + [t_now], dtype=np.float64)
    ends_of_day = np.minimum(np.asarray(bounds[1:] + [t_now], dtype=np.float64), t_now)
    keys = sorted({(j.account, j.user) for j in jobs})
    index = {k: n for n, k in enumerate(keys)}
    usage = np.zeros((len(keys), days))
    decayed = np.zeros((len(keys), days))
    if jobs:
        start = np.asarray([j.start.timestamp() for j in jobs])
        stop = np.asarray([min(j.end.timestamp(), t_now) if j.end is not None else t_now for j in jobs])
        rate = np.asarray([j.billing for j in jobs])
        key = np.asarray([index[(j.account, j.user)] for j in jobs])
        d = decay_per_second(half_life_s)
        lam = -math.log(d) if d < 1 else 0.0
        for i in range(days):
            lo, hi = edges[i], edges[i + 1]
            seconds = np.clip(np.minimum(stop, hi) - np.maximum(start, lo), 0.0, None)
            np.add.at(usage[:, i], key, rate * seconds)
            t = ends_of_day[i]
            np.add.at(decayed[:, i], key, _decayed_integral(rate, start, np.minimum(stop, t), t, lam))
    return DailyUsage(day_list, tuple(keys), usage, decayed, now, half_life_s)


# --------------------------------------------------------------------------------------------
# Slurm's law (:mod:`tui.engine.usage_law`) over sacct's jobs
# --------------------------------------------------------------------------------------------


def job_table(jobs: Sequence[AccountedJob], tree: AssocTree,
              policy: UsagePolicy) -> tuple[JobTable, dict[str, list[int]]]:
    """The jobs as the law's table: each charged to its (account, user) association, or, when
    that association was deleted, to its account (Slurm keeps a deleted association's usage in
    its parent); the billing recomputed as a double from AllocTRES where the partition's
    weights are known (sacct's ``billing=`` is truncated). Also ``account/user`` -> the indices
    of jobs with neither in the tree. Built from columns (:func:`tui.analysis.job_columns.job_columns`):
    the lookup and the billing run once per distinct association and job shape, not per job."""
    cols = job_columns(jobs, tree)
    table = cols.table(policy, -math.inf)
    unmatched: defaultdict[str, list[int]] = defaultdict(list)
    for n in np.flatnonzero(cols.row < 0).tolist():
        unmatched[f"{cols.jobs.accounts[cols.jobs.account[n]]}/{cols.jobs.users[cols.jobs.user[n]]}"].append(n)
    return table, dict(unmatched)


# --------------------------------------------------------------------------------------------
# The cross-check
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UsageCheck:
    """One association: RawUsage as printed against the jobs' reconstruction."""

    row: int
    label: str
    printed: float
    rebuilt: float
    tolerance: float
    """Billing-seconds the two may differ by from the decay-period rounding (and truncation)."""
    note: str = ""

    @property
    def diff(self) -> float:
        return self.rebuilt - self.printed

    @property
    def rel_diff(self) -> float | None:
        """``(rebuilt - printed) / printed``; None when nothing was printed."""
        return None if self.printed == 0 else self.diff / self.printed

    @property
    def agrees(self) -> bool:
        return bool(abs(self.diff) <= self.tolerance)

    def as_dict(self) -> dict[str, object]:
        rel = self.rel_diff
        return {"association": self.label, "raw_usage": round(self.printed, 2), "rebuilt": round(self.rebuilt, 2),
                "diff": round(self.diff, 2), "rel_diff": None if rel is None else float(f"{rel:.3e}"),
                "tolerance": round(self.tolerance, 2), "agrees": self.agrees, "note": self.note}


@dataclass(frozen=True)
class HistoryCheck:
    """The reconstruction of every association's RawUsage from the jobs."""

    rows: tuple[UsageCheck, ...]
    last_cycle: datetime
    last_cycle_assumed: bool
    """True when no last decay cycle was saved and the snapshot time stands in for it."""
    period_s: int
    half_life_s: int
    unmatched: dict[str, float] = field(default_factory=dict)
    """``account/user`` of jobs without an association in the tree -> their charged usage."""
    notes: tuple[str, ...] = ()
    logged: bool = False
    """The cycles were slurmctld's own (its log): the tolerance is 1e-6 relative + 1, not one period's decay."""

    @property
    def max_rel_diff(self) -> float:
        rels = [abs(r.rel_diff) for r in self.rows if r.rel_diff is not None]
        return max(rels, default=0.0)

    @property
    def agrees(self) -> bool:
        return all(r.agrees for r in self.rows)

    def only(self, account: str | None, user: str | None, tree: AssocTree) -> HistoryCheck:
        """The rows of ``user``'s associations and of the associations under ``account``."""
        up = _ancestors(tree)

        def keep(i: int) -> bool:
            if user and tree.user[i] != user:
                return False
            return not account or account in up.get(str(tree.account[i]), {str(tree.account[i])})

        return replace(self, rows=tuple(r for r in self.rows if keep(r.row)))


def _explain(printed: float, rebuilt: float) -> str:
    if rebuilt > printed:
        return ("sshare has less than the jobs: a usage reset (PriorityUsageResetPeriod, or "
                "sacctmgr ... set RawUsage=0), a controller down or restarted without its state, "
                "or a QOS UsageFactor < 1")
    return ("sshare has more than the jobs: job records missing from sacct (purged by PurgeJobAfter, "
            "hidden by PrivateData, older than --starttime), jobs of a deleted association, "
            "or a QOS UsageFactor > 1")


def _replay(jobs: Sequence[AccountedJob], tree: AssocTree, policy: UsagePolicy, cycles: np.ndarray,
            until: float, tz: tzinfo | None = None,
            anchors: Sequence[float] = ()) -> tuple[np.ndarray, dict[str, float]]:
    """Every association's usage after the last of ``cycles`` rebuilt from ``jobs`` (Slurm's law,
    summed up the tree), and the usage of job (account, user) pairs the tree does not have."""
    table, unmatched = job_table(jobs, tree, policy)
    resets = reset_boundaries(policy.reset_period, float(cycles[0]), float(cycles[-1]), tz, anchors)
    done = replay(table, tree.parent, cycles, policy, until=until, resets=resets)
    lost = {k: float(done.per_job[idx].sum()) for k, idx in unmatched.items()}
    return done.usage, lost


def _since(jobs: Sequence[AccountedJob], last: float) -> float:
    return min([j.start.timestamp() for j in jobs] + [last])


def usage_back_then(jobs: Sequence[AccountedJob], tree: AssocTree, settings: PrioritySettings,
                    last_cycle: datetime, days: float) -> tuple[np.ndarray, datetime]:
    """Every association's RawUsage ``days`` before ``last_cycle`` (on its cycle grid), rebuilt
    from the accounting records as :func:`check_raw_usage` rebuilds today's: the jobs as they
    stood then (later ones left out, those still running then charged up to then). With today's
    usage it gives each association's observed pace (the planner's ``others = "observed"``).
    Assumes no usage reset in between."""
    P = max(int(settings.calc_period_s), 1)
    then_t = math.floor((last_cycle.timestamp() - days * 86400.0) / P) * P
    then = datetime.fromtimestamp(then_t, timezone.utc)
    past = [replace(j, end=None) if j.end is None or j.end.timestamp() > then_t else j
            for j in jobs if j.start.timestamp() < then_t]
    policy = replace(UsagePolicy.of(settings), reset_period="NONE")
    grid = cycle_grid(float(then_t), P, _since(past, float(then_t)))
    rebuilt, _ = _replay(past, tree, policy, grid, float(then_t))
    return rebuilt, then


def check_raw_usage(jobs: Sequence[AccountedJob], tree: AssocTree, settings: PrioritySettings,
                    last_cycle: datetime | None, taken_at: datetime, *, cycles: Sequence[float] | None = None,
                    partitions: Sequence[Partition] = (), anchors: Sequence[float] = (),
                    tz: tzinfo | None = None) -> HistoryCheck:
    """Replay Slurm's usage law over ``jobs`` and compare with every association's RawUsage.

    Parameters
    ----------
    jobs : sequence of AccountedJob
        All jobs that still count (with HL 7 days, ten half-lives back is enough for 0.1%); a
        requeued job once per run (``sacct -D``).
    tree : AssocTree
        The snapshot's tree; ``usage_raw`` is what sshare (or assoc_mgr) printed.
    settings : PrioritySettings
        Half-life, calc period, usage reset period, AccountingStorageEnforce and the QOS
        UsageFactors and NoDecay flags of the cluster (:meth:`UsagePolicy.of`).
    last_cycle : datetime or None
        The last decay cycle; None: ``taken_at`` (then the grid may be off by up to a period,
        which the tolerance then covers).
    taken_at : datetime
        When the snapshot was taken (jobs ended between the last cycle and then have their last
        slice charged undecayed, with limits).
    cycles : sequence of float, optional
        The controller's real decay cycle times (epoch s, e.g. from its log or
        :func:`tui.engine.usage_law.anchored_cycles` over its restarts); the tolerance is then
        ``1e-6`` relative (+1 for sshare's truncation). Default: a regular grid ending at
        ``last_cycle``.
    partitions : sequence of Partition
        Their TRESBillingWeights recompute each job's billing from AllocTRES.
    anchors : sequence of float
        Controller start times (for ``PriorityUsageResetPeriod=NOW``).
    tz : tzinfo, optional
        The controller's zone, whose midnights a calendar ``PriorityUsageResetPeriod`` resets at
        (:attr:`tui.model.Snapshot.zone`); default this machine's.

    Returns
    -------
    HistoryCheck
        One row per association, in tree order, with the tolerance and a note where they differ.
    """
    policy = UsagePolicy.of(settings, partitions)
    known = cycles is not None and len(cycles) > 0
    assumed = last_cycle is None and not known
    if known:
        grid = np.asarray(cycles, dtype=np.float64)
        cycle = datetime.fromtimestamp(float(grid[-1]), timezone.utc)
    else:
        cycle = last_cycle or taken_at
    L = float(math.floor(cycle.timestamp()))
    P = max(int(settings.calc_period_s), 1)
    HL = int(settings.decay_half_life_s)
    if not known:
        grid = cycle_grid(L, P, _since(jobs, L))
    d = decay_per_second(HL)
    notes: list[str] = []
    zone = tz if tz is not None else cycle.astimezone().tzinfo
    reset = last_reset_before(settings.usage_reset_period, cycle.astimezone(zone))
    if reset is not None:
        notes.append(f"PriorityUsageResetPeriod={settings.usage_reset_period}: usage was reset at the first cycle "
                     f"after {reset.isoformat(timespec='minutes')}; the jobs' usage before it is left out")
    elif settings.usage_reset_period.strip().upper() == "NOW" and not anchors:
        notes.append("PriorityUsageResetPeriod=NOW: usage was reset when slurmctld last started (time unknown)")
    if assumed:
        notes.append("no last decay cycle saved: cycles assumed to end at the snapshot time")
    if HL == 0:
        notes.append("PriorityDecayHalfLife=0: usage does not decay")
    if not policy.enforce_limits:
        notes.append("AccountingStorageEnforce has no 'limits': a job's run after its last decay cycle is "
                     "never charged (a job shorter than a cycle adds nothing)")
    rebuilt, unmatched = _replay(jobs, tree, policy, grid, max(L, taken_at.timestamp()), zone, anchors)
    if unmatched:
        notes.append(f"{len(unmatched)} account/user pair(s) in sacct have no association in sshare "
                     f"(deleted or renamed): {', '.join(sorted(unmatched))}")
    # where the true cycles fall against an assumed grid: one period's decay; known cycles: rounding
    slack = 1e-6 if known else 1.0 - d**P
    out = []
    for i in range(tree.size):
        printed = float(tree.usage_raw[i])
        tol = float(slack * max(printed, rebuilt[i]) + 1.0)  # + sshare's truncation to a whole number
        note = "" if abs(rebuilt[i] - printed) <= tol else _explain(printed, float(rebuilt[i]))
        out.append(UsageCheck(i, tree.label(i), printed, float(rebuilt[i]), tol, note))
    return HistoryCheck(tuple(out), cycle, assumed, P, HL, dict(unmatched), tuple(notes), known)


def logged_cycles(log: ControllerLog | None, jobs: Sequence[AccountedJob], last: datetime | None,
                  taken: datetime) -> tuple[list[float] | None, list[float]]:
    """A capture's logged decay cycles (its ``slurmctld_cycles.log``, parsed) when they cover its jobs
    and end on its last cycle (:func:`tui.engine.usage_law.logged_grid`), and the controller's
    starts; (None, []) otherwise: the check then runs on a regular grid."""
    if log is None or not jobs:
        return None, []
    first = min(j.start.timestamp() for j in jobs)
    grid, _ = logged_grid(log.cycles, None if last is None else last.timestamp(), taken.timestamp(), first, first)
    return (None, []) if grid is None else ([float(c) for c in grid], log.starts)
