"""Running a scenario: :func:`run_scenario` projects it with :mod:`tui.engine.projection` (Slurm's
discrete law and the cluster's algorithm with a Slurm snapshot, PBS's decays with a PBS one, the
exact ODE of seed 000's model without one). No Textual here.
"""

from __future__ import annotations

import math
import weakref
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

import numpy as np

from tui.analysis.planner.answers import admin_answer, shares_now
from tui.analysis.planner.balance import (
    BalanceRun,
    BalanceSeries,
    binding_account,
    project_balance,
    site_series,
    why_no_account,
)
from tui.analysis.planner.node_check import check_fit
from tui.analysis.planner.priority import planned_priority
from tui.analysis.planner.result import AssocSeries, CostLine, PendingPriority, ScenarioResult
from tui.analysis.planner.scenario import HOUR, Model, Scenario, ScenarioJob, SharesOverride
from tui.engine.billing import billable_tres, billing_mode
from tui.engine.decay import next_reset
from tui.engine.projection import (
    Charges,
    charge_series,
    precharge,
    decay_series,
    project_usage,
    steady_rate,
)
from tui.engine.usage_law import UsagePolicy
from tui.engine.fairshare_projection import FairshareSeries, project_fairshare
from tui.engine.rank_trace import LevelFsTrace, fair_tree_trace
from tui.model import AssocTree, Job, PrioritySettings, Snapshot
from tui.sources.errors import InputError


def recovery_time(t_hours: np.ndarray, fairshare: np.ndarray, target: float) -> float | None:
    """When fairshare is back to ``target``: the first sampled time after its lowest point with
    fairshare at least ``target`` (None: the lowest point is above the target, or it is not
    back within the samples)."""
    f = np.where(np.isnan(fairshare), np.inf, fairshare)
    lo = int(np.argmin(f))
    if f[lo] >= target:
        return None
    hit = np.flatnonzero(f[lo:] >= target)
    return float(t_hours[lo + hit[0]]) if hit.size else None


# --------------------------------------------------------------------------------------------
# Running a scenario
# --------------------------------------------------------------------------------------------


def _find_row(tree: AssocTree, account: str, user: str, where: str) -> int:
    if user:
        rows = np.flatnonzero(tree.is_user & (tree.user == user))
        if account:
            rows = rows[tree.account[rows] == account]
        if rows.size == 0:
            known = sorted({str(a) for a in tree.account[tree.is_user & (tree.user == user)]})
            hint = f" (its accounts: {', '.join(known)})" if known else ""
            raise InputError(f"{where}.user", f"no association of user {user!r}"
                             + (f" in account {account!r}" if account else "") + hint)
        if rows.size > 1:
            raise InputError(f"{where}.account", f"user {user!r} has {rows.size} associations "
                             f"({', '.join(str(a) for a in tree.account[rows])}): say which account")
        return int(rows[0])
    if not account:
        raise InputError(f"{where}.user", "required: the user (or at least the account) the job charges")
    rows = np.flatnonzero(~tree.is_user & (tree.account == account))
    if rows.size == 0:
        raise InputError(f"{where}.account", f"no account {account!r} in the association tree")
    return int(rows[0])


def _job_billing(job: ScenarioJob, snap: Snapshot, where: str) -> float:
    if job.billing is not None:
        return float(job.billing)
    parts = {p.name: p for p in snap.partitions}
    part = parts.get(job.partition) if job.partition else None
    if job.partition and parts and part is None:
        raise InputError(f"{where}.partition", f"unknown partition {job.partition!r} (known: "
                         f"{', '.join(sorted(parts))})")
    weights = part.billing_weights if part is not None else None
    return float(billable_tres(job.totals(), weights, billing_mode(snap.settings.flags)))


def _check_shape(job: ScenarioJob, snap: Snapshot, where: str) -> list[str]:
    """Refuse a job its partition cannot run (totals, then each node's CPUs, memory and GPUs, the
    node count, MaxNodes and MaxTime: :func:`tui.analysis.planner.node_check.check_fit`); say what the
    source could not check (a note per unknown), never pass it silently."""
    part = {p.name: p for p in snap.partitions}.get(job.partition)
    label = where.rsplit(":", 1)[-1]
    if part is None:
        why = ("no partition given" if not job.partition else "the source has no partitions" if not snap.partitions
               else f"partition {job.partition!r} is not in the source")
        return [f"{label}: {why}: nodes and limits not checked"]
    totals = job.totals()
    limits = [("nodes", "node", float(part.total_nodes), "nodes"), ("cpus", "cpu", float(part.total_cpus), "CPUs"),
              ("mem", "mem", part.tres_totals.get("mem", 0.0), "MB of memory"),
              ("gpus", "gres/gpu", part.tres_totals.get("gres/gpu", 0.0), "GPUs")]
    for key, tres, total, what in limits:
        need = totals.get(tres, 0.0)
        if key == "gpus" and need and not total and part.tres_totals:
            raise InputError(f"{where}.gpus", f"partition {part.name!r} has no GPUs")
        if total and need > total:
            raise InputError(f"{where}.{key}", f"{need:,.0f} {what} in all; partition {part.name!r} has {total:,.0f}")
    nodes = max(1, round(totals.get("node", 1.0)))
    gpu_type = job.gpu_type or next((k.split(":", 1)[1] for k in totals if k.startswith("gres/gpu:")), "")
    fit = check_fit(part, nodes, totals.get("cpu", 0.0) / nodes, totals.get("mem", 0.0) / nodes,
                    math.ceil(totals.get("gres/gpu", 0.0) / nodes), gpu_type, job.walltime_s)
    for key, why in fit.errors.items():
        field_ = "tres" if job.tres is not None and key != "walltime" else key
        raise InputError(f"{where}.{field_}", why)
    return [f"{label}: {u}" for u in fit.unknown]


def _apply_shares(tree: AssocTree, shares: tuple[SharesOverride, ...], source: str) -> AssocTree:
    if not shares:
        return tree
    raw = tree.shares_raw.copy()
    for i, s in enumerate(shares):
        row = _find_row(tree, s.account, s.user, f"{source}:shares[{i}]")
        raw[row] = s.raw_shares
    return AssocTree(tree.parent, tree.is_user, tree.account, tree.user, raw, tree.usage_raw, tree.sibling_order)


def _resets(period: str, now: datetime, horizon_s: float) -> list[float]:
    """Reset times (seconds from now) within the horizon; the last reset is taken to be now."""
    out: list[float] = []
    if period.strip().upper() in ("NONE", "NOW", ""):
        return out
    local = now.astimezone() if now.tzinfo is not None else now
    nxt = next_reset(period, local)
    while nxt is not None:
        offset = (nxt - local).total_seconds()
        if offset > horizon_s:
            break
        if offset > 0:
            out.append(offset)
        nxt = next_reset(period, nxt)
    return out


@dataclass(frozen=True)
class _Prepared:
    """What a snapshot gives every run alike, made once per snapshot: the pane runs a scenario
    again on every edit, and billing 12,600 running jobs took 0.46 s of a 100k run each time."""

    rows: dict[tuple[str, str], int]
    """(account, user) -> row of every user association."""
    running: tuple[tuple[int, float, float], ...]
    """``(row, end in epoch seconds, billing/s)`` of the running jobs with a time limit."""
    charges: dict[tuple[float, bytes, float, float, tuple[float, ...]], Charges] = field(default_factory=dict)
    """Their :class:`Charges` per (now, time grid, half-life, calc period, resets)."""
    traces: dict[tuple[int, int], LevelFsTrace] = field(default_factory=dict)
    """The LevelFS those charges give, per (id of the Charges, rank step): an edit's Fair Tree
    projection then computes only the rows its own jobs reach."""


_PREPARED: weakref.WeakKeyDictionary[Snapshot, _Prepared] = weakref.WeakKeyDictionary()


def _prepared(tree: AssocTree, snap: Snapshot) -> _Prepared:
    """The snapshot's :class:`_Prepared` for ``tree`` (the snapshot's own, or one with other shares)."""
    if snap.tree is not None and tree.account is snap.tree.account and tree.user is snap.tree.user:
        cached = _PREPARED.get(snap)
        if cached is None:
            cached = _PREPARED[snap] = _prepare(tree, snap)
        return cached
    return _prepare(tree, snap)


def _prepare(tree: AssocTree, snap: Snapshot) -> _Prepared:
    from tui.engine.billing import job_billing

    parts = {p.name: p for p in snap.partitions}
    rows = {(str(tree.account[i]), str(tree.user[i])): int(i) for i in np.flatnonzero(tree.is_user)}
    running = []
    for job in snap.jobs:
        row = rows.get((job.account, job.user))
        if job.state != "RUNNING" or row is None or job.start_time is None or job.time_limit_s <= 0:
            continue
        part = parts.get(job.partition)
        if (part is None or not part.billing_weights) and "billing" in job.tres:
            b = float(job.tres["billing"])
        else:
            b = job_billing(job, part, snap.settings.flags)
        running.append((row, job.start_time.timestamp() + job.time_limit_s, b))
    return _Prepared(rows, tuple(running))


def _running_precharge(tree: AssocTree, snap: Snapshot, now: datetime, t: np.ndarray, hl: float, period: float,
                       resets: list[float]) -> Charges:
    """The snapshot's running jobs charged until their time limits: the same for every run from
    one moment on one time grid, so kept with the snapshot (the last few grids)."""
    prep = _prepared(tree, snap)
    key = (now.timestamp(), t.tobytes(), float(hl), float(period), tuple(resets))
    found = prep.charges.get(key)
    if found is None:
        at = now.timestamp()
        live = [(row, end - at, b) for row, end, b in prep.running if end - at > 0]
        found = precharge(tree, [r for r, _, _ in live], [0.0] * len(live), [e for _, e, _ in live],
                          [b for _, _, b in live], t, hl, period, "slurm", resets,
                          UsagePolicy.of(snap.settings).enforce_limits)
        if len(prep.charges) >= 4:
            prep.charges.pop(next(iter(prep.charges)))
        prep.charges[key] = found
    return found


def _running_trace(tree: AssocTree, snap: Snapshot, running: Charges, t: np.ndarray, hl: float,
                   period: float, resets: list[float], every: int) -> LevelFsTrace:
    """The :class:`LevelFsTrace` of the snapshot's running jobs alone, kept beside their charges."""
    prep = _prepared(tree, snap)
    key = (id(running), every)
    found = prep.traces.get(key)
    if found is None or found.charges is not running or found.tree is not tree:
        alone = project_usage(tree, [], [], [], [], t, hl, period, "slurm", resets, None, running)
        found = fair_tree_trace(tree, alone, every)
        if len(prep.traces) >= 2:  # 37 MB each at 100k associations (31 ranked steps x 70k rows)
            prep.traces.pop(next(iter(prep.traces)))
        prep.traces[key] = found
    return found


def run_scenario(sc: Scenario, snapshot: Snapshot | None = None, now: datetime | None = None,
                 source: str = "scenario", earlier: Snapshot | None = None, *,
                 compare: bool = True, cancelled: Callable[[], bool] | None = None) -> ScenarioResult:
    """Project a scenario: with a Slurm snapshot, Slurm's law over the whole tree; without one,
    the standalone model (``[model]``).

    Parameters
    ----------
    sc : Scenario
    snapshot : Snapshot, optional
        A Slurm snapshot (its tree, settings and partitions).
    now : datetime, optional
        Time 0 (default: the snapshot's ``taken_at``, else the current time).
    source : str
        The scenario's file name, for error messages.
    earlier : Snapshot, optional
        An older snapshot of the same cluster, for ``others = "observed"``.
    compare : bool
        Also project "before" (without the jobs) and "if we stop" (Slurm sources); False skips
        them (``*_before`` and ``fairshare_stop`` are then None) for a faster redraw.
    cancelled : callable, optional
        Asked at each ranked step of the fairshare projection; True stops it
        (:class:`tui.engine.fairshare_projection.Cancelled`).

    Raises
    ------
    InputError
        A job naming an unknown user, account or partition; no source and no ``[model]``.
    """
    now = now or (snapshot.taken_at if snapshot is not None else datetime.now(timezone.utc))
    t = sc.times_s
    runs = [(i, s, e) for i, j in enumerate(sc.jobs) for s, e in j.runs()]
    campaign_end_h = max((e for _, _, e in runs), default=0) / HOUR
    if snapshot is not None and snapshot.tree is None and snapshot.pbs is not None:
        return _run_pbs(sc, snapshot, now, t, runs, campaign_end_h, source)
    if snapshot is None or snapshot.tree is None:
        if sc.model is None:
            raise InputError(source, "no source and no [model] table: give --demo, --from DIR, --slurm or "
                             "--sshare FILE, or a [model] with halving_usage and half_life")
        return _run_model(sc, now, t, runs, campaign_end_h)
    tree = _apply_shares(snapshot.tree, sc.shares, source)
    st = snapshot.settings
    o = sc.settings
    hl = o.half_life_s if o.half_life_s is not None else st.decay_half_life_s
    period = o.calc_period_s if o.calc_period_s is not None else st.calc_period_s
    algorithm = o.algorithm or st.algorithm
    damp = o.dampening if o.dampening is not None else st.dampening
    resets = _resets(o.usage_reset_period or st.usage_reset_period, now, sc.horizon_s)

    rows_of = [_find_row(tree, j.account, j.user, f"{source}:jobs[{i}]") for i, j in enumerate(sc.jobs)]
    bill = [_job_billing(j, snapshot, f"{source}:jobs[{i}]") for i, j in enumerate(sc.jobs)]
    unpriced = [i for i, j in enumerate(sc.jobs) if j.billing is None and not snapshot.partitions]
    shape_notes = [n for i, j in enumerate(sc.jobs) for n in _check_shape(j, snapshot, f"{source}:jobs[{i}]")]
    watch = list(dict.fromkeys(rows_of))
    balances = _balances(sc, snapshot, tree, now, watch, rows_of, bill, t, hl, period)
    started = _started_copies(sc, runs, rows_of, watch, balances)
    costs = tuple(CostLine(i, bill[i], j.count * j.repeat, bill[i] * j.count * j.repeat * j.run_s,
                           bill[i] * j.count * j.repeat * j.walltime_s)
                  for i, j in enumerate(sc.jobs))
    rate = steady_rate(tree, hl, period) if sc.others == "steady" else None
    if sc.others == "observed":
        rate = _observed(tree, snapshot, earlier, hl, period, source)
    running = _running_precharge(tree, snapshot, now, t, hl, period, resets) \
        if sc.running and sc.others == "decay" else None
    c_rows = [rows_of[i] for i, _, _ in runs]
    c_start = [float(s) for _, s, _ in runs]
    c_end = [float(e) for _, _, e in runs]
    c_bill = [bill[i] * n for (i, _, _), n in zip(runs, started)]
    proj = project_usage(tree, c_rows, c_start, c_end, c_bill, t, hl, period, "slurm", resets, rate, running,
                         UsagePolicy.of(st).enforce_limits)
    pend_jobs = _pending_jobs(sc, snapshot, tree, source)
    extra = [row for _, row in pend_jobs if row not in watch]
    if sc.rank_every_s is not None:
        every = max(1, round(sc.rank_every_s / sc.step_s))
    else:
        every = 1 if t.size * tree.size <= 5_000_000 else max(1, round(86400 / sc.step_s))
    trace = _running_trace(tree, snapshot, running, t, hl, period, resets, every) \
        if running is not None and rate is None and algorithm == "fair_tree" else None
    fs: FairshareSeries = project_fairshare(tree, proj, watch + extra, algorithm, damp, every, trace, cancelled)
    base_fs: FairshareSeries | None = fs
    if runs and compare:  # before: the same projection without the scenario's jobs
        base = project_usage(tree, [], [], [], [], t, hl, period, "slurm", resets, rate, running)
        base_fs = project_fairshare(tree, base, watch, algorithm, damp, every, trace)
    stop_fs = base_fs
    if not compare:
        base_fs = stop_fs = None
    elif rate is not None:  # "if we stop": the charged associations' own pace ends too
        rate_stop = np.array(rate, dtype=np.float64)
        rate_stop[watch] = 0.0
        stop = project_usage(tree, [], [], [], [], t, hl, period, "slurm", resets, rate_stop, running)
        stop_fs = project_fairshare(tree, stop, watch, algorithm, damp, every)
    w = st.weight_fairshare
    col = {row: c for c, row in enumerate(watch + extra)}
    pend = tuple(_pending_priority(job, row, t, fs.fairshare[:, col[row]], st) for job, row in pend_jobs)
    parts = {p.name: p for p in snapshot.partitions}
    planned = tuple(planned_priority(i, str(tree.account[rows_of[i]]), str(tree.user[rows_of[i]]), t,
                                     fs.fairshare[:, col[rows_of[i]]], st, parts, j.partition, j.totals(), j.start_s,
                                     j.walltime_s, j.qos_factor, _site(j, balances.get(rows_of[i]), t))
                    for i, j in enumerate(sc.jobs))
    series = []
    for c, row in enumerate(watch):
        f = fs.fairshare[:, c]
        bal = balances.get(row)
        series.append(AssocSeries(
            str(tree.account[row]), str(tree.user[row]) if tree.is_user[row] else "", row,
            fs.usage[:, c].astype(np.float64), f,
            None if fs.level_fs is None else fs.level_fs[:, c].astype(np.float64),
            None if fs.rank is None else fs.rank[:, c],
            None if fs.ahead is None else fs.ahead[:, c],
            w * f if w else None,
            raw_usage_before=None if base_fs is None else base_fs.usage[:, c].astype(np.float64),
            fairshare_before=None if base_fs is None else base_fs.fairshare[:, c],
            rank_before=None if base_fs is None or base_fs.rank is None else base_fs.rank[:, c],
            fairshare_stop=None if stop_fs is None else stop_fs.fairshare[:, c],
            balance=bal if isinstance(bal, BalanceSeries) else None,
            balance_note=bal if isinstance(bal, str) else ""))
    t_h = t / HOUR
    notes = list(shape_notes)
    if unpriced:
        notes.append("partition billing weights unknown: " + ", ".join(f"jobs[{i}]" for i in unpriced)
                     + " billed their CPU count (set billing = per second)")
    if running is not None and running.rows.size:
        notes.append(f"{running.rows.size} running jobs keep charging until their time limits")
    if algorithm == "fair_tree" and every > 1:
        notes.append(f"Fair Tree ranks recomputed every {every * sc.step_s / HOUR:g} h and held in between")
    if resets:
        notes.append("usage reset (PriorityUsageResetPeriod) on "
                     + ", ".join(f"{now + timedelta(seconds=r):%Y-%m-%d}" for r in resets))
    if sc.others == "decay" and runs:
        notes.append("everyone else only decays; with others = \"steady\" they keep their usage")
    if sc.others == "observed" and earlier is not None:
        notes.append(f"everyone keeps the pace seen since {earlier.taken_at:%Y-%m-%d %H:%M}")
    notes.extend(f"jobs[{p.job}]: site_scale given but no dated allocation binds it: SITE is its site "
                 f"({sc.jobs[p.job].site:g})" for p in planned
                 if sc.jobs[p.job].site_scale is not None and not isinstance(p.site, np.ndarray))
    refused_runs = sum(sc.jobs[i].count for i, _, _ in runs) - sum(started)
    if refused_runs:
        notes.append(f"{refused_runs} job runs refused by the allocation are left out of the usage")
    rec = tuple(recovery_time(t_h, s.fairshare, sc.target) if runs else None for s in series)
    shares = tuple(shares_now(snapshot.tree, tree, watch, algorithm, damp)) if sc.shares else ()
    admin = None
    if sc.admin is not None:
        users = tree.is_user
        mean_rate = 0.0 if rate is None else float(np.asarray(rate, dtype=np.float64)[users].mean())
        admin = admin_answer(tree, sc.admin.halving_usage, hl, sc.admin.weeks, sc.admin.check_every_s,
                             sc.admin.upkeep_amount, mean_rate)
    return ScenarioResult(now, t_h, tuple(series), "slurm", algorithm, int(hl), tree.user_count, fs.ranked, costs,
                          campaign_end_h, sc.target, "billing TRES-seconds", tuple(notes), rec, pend, planned,
                          shares, admin)


def _balances(sc: Scenario, snap: Snapshot, tree: AssocTree, now: datetime, watch: list[int], rows_of: list[int],
              bill: list[float], t: np.ndarray, hl: float, period: float) -> dict[int, BalanceSeries | str]:
    """Per charged association: its balance over the horizon, or why it is unknown."""
    out: dict[int, BalanceSeries | str] = {}
    for row in watch:
        acct = binding_account(snap, tree, row, now)
        if acct is None:
            out[row] = why_no_account(snap, tree, row)
            continue
        brs: list[BalanceRun] = []
        for i, j in enumerate(sc.jobs):
            if rows_of[i] != row:
                continue
            per_s = bill[i] if acct.tres == "billing" else j.totals().get(acct.tres, 0.0)
            for s, e in j.runs():
                brs.append(BalanceRun(i, float(s), float(e), per_s, float(j.walltime_s), j.count))
        out[row] = project_balance(acct, brs, t, lambda x: decay_series(x, hl, period))
    return out


def _site(job: ScenarioJob, bal: BalanceSeries | str | None, t: np.ndarray) -> float | np.ndarray:
    """The job line's site part: fixed, or seed 004's factor of its allocation x ``site_scale``."""
    if job.site_scale is None:
        return job.site
    series = site_series(bal, t, job.site_scale, job.site_rule) if isinstance(bal, BalanceSeries) else None
    return job.site if series is None else series


def _started_copies(sc: Scenario, runs: list[tuple[int, int, int]], rows_of: list[int], watch: list[int],
                    balances: dict[int, BalanceSeries | str]) -> list[int]:
    """Copies of each run (in ``runs`` order) the allocation lets start (all, without one)."""
    taken: dict[int, int] = {row: 0 for row in watch}
    out = []
    for i, _, _ in runs:
        row = rows_of[i]
        bal = balances.get(row)
        n = sc.jobs[i].count
        if isinstance(bal, BalanceSeries):
            k = taken[row]
            n = sum(bal.started[k:k + n])
            taken[row] = k + sc.jobs[i].count
        out.append(n)
    return out


def _observed(tree: AssocTree, snap: Snapshot, earlier: Snapshot | None, hl: float, period: float,
              source: str) -> np.ndarray:
    """Own rates between ``earlier`` and ``snap``; associations absent from ``earlier`` get 0."""
    from tui.engine.projection import observed_rate

    if earlier is None or earlier.tree is None:
        raise InputError(f"{source}:others", "\"observed\" needs an earlier snapshot of the cluster (--since DIR)")
    dt = (snap.taken_at - earlier.taken_at).total_seconds()
    if dt <= 0:
        raise InputError(f"{source}:others", f"the earlier snapshot ({earlier.taken_at:%Y-%m-%d %H:%M}) is not "
                         f"older than this one ({snap.taken_at:%Y-%m-%d %H:%M})")
    old = earlier.tree
    key_then = {(str(old.account[i]), str(old.user[i]), bool(old.is_user[i])): i for i in range(old.size)}
    d = float(decay_series([dt], hl, period)[0])
    now_u = tree.usage_raw.astype(np.float64)
    then = now_u / d if d > 0 else now_u.copy()  # absent then: no rate
    for i in range(tree.size):
        j = key_then.get((str(tree.account[i]), str(tree.user[i]), bool(tree.is_user[i])))
        if j is not None:
            then[i] = float(old.usage_raw[j])
    return observed_rate(then, now_u, tree.parent, dt, hl, period)


def _pending_jobs(sc: Scenario, snap: Snapshot, tree: AssocTree, source: str) -> list[tuple[Job, int]]:
    if not sc.pending:
        return []
    by_id = {j.job_id: j for j in snap.jobs}
    rows = _prepared(tree, snap).rows
    out = []
    for i, jid in enumerate(sc.pending):
        job = by_id.get(jid)
        if job is None or job.state != "PENDING":
            raise InputError(f"{source}:pending[{i}]", f"no pending job {jid!r} in the source"
                             + ("" if job is None else f" (it is {job.state})"))
        row = rows.get((job.account, job.user))
        if row is None:
            raise InputError(f"{source}:pending[{i}]", f"job {jid}'s association {job.account}/{job.user} "
                             "is not in the tree")
        if not job.factors:
            # slurmrestd gives the total only: the parts that move (AGE, FAIRSHARE) are unknown
            raise InputError(f"{source}:pending[{i}]", f"job {jid} has no priority parts in the source (only "
                             f"its total, {job.priority}): its priority over time is unknown; use a source "
                             "with sprio (--slurm, --from DIR)")
        out.append((job, row))
    return out


def _pending_priority(job: Job, row: int, t: np.ndarray, fairshare: np.ndarray,
                      st: PrioritySettings) -> PendingPriority:
    """Priority of a pending job at each time: its sprio parts, with AGE growing from today's
    value at one PriorityMaxAge's worth per ``max_age`` and FAIRSHARE from the projection."""
    parts = {k.upper(): float(v) for k, v in job.factors.items()}
    age0 = parts["AGE"] / st.weight_age if st.weight_age > 0 and "AGE" in parts else 0.0
    age = np.minimum(1.0, age0 + t / st.max_age_s) if st.max_age_s > 0 else np.ones_like(t)
    held = sum(v for k, v in parts.items() if k not in ("AGE", "FAIRSHARE"))
    f = np.where(np.isnan(fairshare), 0.0, fairshare)
    prio = held + st.weight_age * age + st.weight_fairshare * f
    return PendingPriority(job.job_id, job.account, job.user, prio, age, fairshare)


def _run_pbs(sc: Scenario, snap: Snapshot, now: datetime, t: np.ndarray, runs: list[tuple[int, int, int]],
             campaign_end_h: float, source: str) -> ScenarioResult:
    """PBS Professional: a job charges the entity named by its ``user`` (or ``account``) at
    ``billing`` usage units per second, else its CPU count (``cput``)."""
    from tui.engine.projection import project_pbs

    tree = snap.pbs
    assert tree is not None
    names = {str(n): i for i, n in enumerate(tree.name)}
    rows_of = []
    for i, j in enumerate(sc.jobs):
        name = j.user or j.account
        if name not in names:
            key = "user" if j.user else "account"
            raise InputError(f"{source}:jobs[{i}].{key}", f"no PBS entity {name!r} in the fairshare tree")
        rows_of.append(names[name])
    rate = [j.billing if j.billing is not None else j.totals().get("cpu", 0.0) for j in sc.jobs]
    o = sc.settings
    # the scenario's settings, else the captured sched_config's, else the scheduler's defaults
    f = next(v for v in (o.pbs_decay_factor, tree.decay_factor, 0.5) if v is not None)
    period = next(v for v in (o.pbs_decay_time_s, tree.decay_time_s, 86400) if v is not None)
    first = None
    if tree.last_decay:
        first = max(0.0, tree.last_decay + period - now.timestamp())
    watch = list(dict.fromkeys(rows_of))
    res = project_pbs(tree, [rows_of[i] for i, _, _ in runs], [s for _, s, _ in runs], [e for _, _, e in runs],
                      [rate[i] * sc.jobs[i].count for i, _, _ in runs], t, watch, f, period, first)
    parent = np.asarray(tree.parent)
    series = tuple(AssocSeries(str(tree.name[parent[row]]) if parent[row] >= 0 else "", str(tree.name[row]), row,
                               res.usage[:, c], res.factor[:, c], tree_usage=res.tree_usage[:, c].astype(np.float64))
                   for c, row in enumerate(watch))
    costs = tuple(CostLine(i, rate[i], j.count * j.repeat, rate[i] * j.count * j.repeat * j.walltime_s)
                  for i, j in enumerate(sc.jobs))
    t_h = t / HOUR
    rec = tuple(recovery_time(t_h, s.fairshare, sc.target) if runs else None for s in series)
    notes = (f"PBS: usage x {f:g} every {period / 3600:g} h; accrual counted to each job's end",) + _not_here(sc, "PBS")
    return ScenarioResult(now, t_h, series, "pbs", "pbs", int(period), int(np.count_nonzero(
        np.bincount(parent[1:], minlength=len(parent)) == 0)), np.ones(t.size, bool), costs, campaign_end_h,
        sc.target, tree.usage_res, notes, rec)


def _run_model(sc: Scenario, now: datetime, t: np.ndarray, runs: list[tuple[int, int, int]],
               campaign_end_h: float) -> ScenarioResult:
    """Seed 000's model in hours: ``du/dt = c(t) - lambda u``, exact; ``F = 2**(-u/u*)``."""
    assert sc.model is not None
    m = sc.model
    hl_h = m.half_life_s / HOUR
    th = t / HOUR
    rate = [sc.jobs[i].cpus * sc.jobs[i].nodes * sc.jobs[i].count for i, _, _ in runs]
    u = m.initial_usage * decay_series(th, hl_h, law="continuous")
    if runs:
        u = u + charge_series(th, [s / HOUR for _, s, _ in runs], [e / HOUR for _, _, e in runs], rate, hl_h,
                              law="continuous").sum(axis=0)
    f = np.exp2(-u / m.halving_usage)
    costs = tuple(CostLine(i, j.cpus * j.nodes, j.count * j.repeat, j.cpus * j.nodes * j.count * j.repeat
                           * j.walltime_s) for i, j in enumerate(sc.jobs))
    rec = recovery_time(th, f, sc.target) if runs else None
    if runs and rec is None and f.min() < sc.target:  # not within the horizon: exact, after the campaign
        rec = model_recovery_h(campaign_end_h, m, sc.target, sc, runs)
    series = AssocSeries("", "", -1, u, f)
    return ScenarioResult(now, th, (series,), "continuous", "model", m.half_life_s, 1, np.ones(th.size, bool),
                          costs, campaign_end_h, sc.target, "core-hours", _not_here(sc, "the standalone model"), (rec,))


def _not_here(sc: Scenario, where: str) -> tuple[str, ...]:
    """Say which asked-for answers need a Slurm source (never drop a question silently)."""
    out = []
    if sc.admin is not None:
        out.append(f"[admin] not answered in {where}: the dampening and padding need a Slurm tree's users")
    if sc.shares:
        out.append(f"[[shares]] not applied in {where}: raw shares are Slurm's")
    if sc.pending:
        out.append(f"pending not followed in {where}: it needs the source's sprio")
    return tuple(out)


def model_recovery_h(end_h: float, m: Model, target: float, sc: Scenario,
                     runs: list[tuple[int, int, int]]) -> float | None:
    """Exact time (hours) at which ``F = 2**(-u/u*)`` is back to ``target`` once the last job
    ends: ``u`` then only decays, ``u(t) = u_end 2**(-(t - end)/HL)``."""
    if not 0 < target < 1:
        return None if target >= 1 else end_h
    hl_h = m.half_life_s / HOUR
    rate = [sc.jobs[i].cpus * sc.jobs[i].nodes * sc.jobs[i].count for i, _, _ in runs]
    u_end = float(m.initial_usage * decay_series([end_h], hl_h, law="continuous")[0]
                  + charge_series([end_h], [s / HOUR for _, s, _ in runs], [e / HOUR for _, _, e in runs],
                                  rate, hl_h, law="continuous").sum())
    u_target = -m.halving_usage * math.log2(target)
    if u_end <= u_target:
        return end_h
    if hl_h <= 0:
        return None
    return end_h + hl_h * math.log2(u_end / u_target)
