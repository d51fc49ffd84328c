"""What the app's Policy screen asks of a replay: its form read into a :class:`PolicyChange`, the
largest winners and losers, and one association's usage and FairShare over the window under the
cluster's policy and the new one.

The replay itself is :mod:`tui.analysis.replay` (as ``fairtop replay``). Pure: no I/O, no Textual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta, tzinfo

import numpy as np
from numpy.typing import NDArray

from tui.analysis.replay import RESET_PERIODS, PolicyChange, PolicyReplay, ReplayBase, replay_policy
from tui.engine import compute
from tui.engine.usage_law import UsagePolicy, cycle_grid, replay_at, reset_boundaries
from tui.model import AssocTree, PrioritySettings
from tui.sources.slurm_units import parse_slurm_time, parse_tres_billing_weights

FORM_FIELDS = ("half_life", "calc_period", "reset_period", "algorithm", "damping", "enforce_limits",
               "qos_usage_factor", "billing")
"""The form's fields, as ``fairtop replay``'s flags (empty: the cluster's own)."""


class FormError(ValueError):
    """A form field that does not read: ``field`` and one sentence."""

    def __init__(self, field: str, text: str) -> None:
        super().__init__(f"{field}: {text}")
        self.field, self.text = field, text


def slurm_seconds(field: str, text: str | None, zero_ok: bool) -> float | None:
    """A Slurm time (``7-0``, ``90`` minutes, ``1:00:00``) in seconds; None when empty.

    Raises
    ------
    FormError
        Not a Slurm time, infinite, or 0 where ``zero_ok`` is false.
    """
    if not text:
        return None
    try:
        secs = parse_slurm_time(text)
    except ValueError as exc:
        raise FormError(field, str(exc)) from None
    if secs is None or (secs == 0 and not zero_ok):
        raise FormError(field, f"must be a finite time{'' if zero_ok else ' > 0'} (7-0 = 7 days, 90 = 90 minutes), "
                               f"not {text!r}")
    return float(secs)


def _pairs(field: str, text: str, sep: str) -> dict[str, str]:
    out = {}
    for item in (t.strip() for t in text.split(sep)):
        if not item:
            continue
        name, eq, value = item.partition("=")
        if not eq or not name.strip() or not value.strip():
            raise FormError(field, f"expected NAME=VALUE, not {item!r}")
        out[name.strip()] = value.strip()
    return out


def form_change(form: Mapping[str, str]) -> PolicyChange:
    """The form (:data:`FORM_FIELDS` -> text, empty or missing: the cluster's own) as a change.

    ``qos_usage_factor``: ``QOS=F`` pairs, comma-separated; ``billing``: ``PARTITION=WEIGHTS``
    pairs separated by ``;`` (WEIGHTS as TRESBillingWeights, ``CPU=1,Mem=0.25G``).

    Raises
    ------
    FormError
        A field that does not read, named.
    """
    get = {k: str(form.get(k, "")).strip() for k in FORM_FIELDS}
    reset = get["reset_period"].upper() or None
    if reset is not None and reset not in RESET_PERIODS:
        raise FormError("reset period", f"one of {', '.join(RESET_PERIODS)}, not {get['reset_period']!r}")
    algorithm = get["algorithm"].lower().replace(" ", "_") or None
    if algorithm not in (None, "classic", "fair_tree"):
        raise FormError("algorithm", f"classic or fair_tree, not {get['algorithm']!r}")
    damping = None
    if get["damping"]:
        try:
            damping = float(get["damping"])
        except ValueError:
            damping = -1.0
        if not 0 < damping < math.inf:
            raise FormError("damping", f"a number > 0, not {get['damping']!r}")
    limits = get["enforce_limits"].lower() or None
    if limits not in (None, "yes", "no"):
        raise FormError("enforce limits", f"yes or no, not {get['enforce_limits']!r}")
    factors = {}
    for qos, text in _pairs("QOS usage factors", get["qos_usage_factor"], ",").items():
        try:
            factors[qos] = float(text)
        except ValueError:
            factors[qos] = -1.0
        if not 0 <= factors[qos] < math.inf:
            raise FormError("QOS usage factors", f"{qos}: a number >= 0, not {text!r}")
    billing = {}
    for part, text in _pairs("billing weights", get["billing"], ";").items():
        try:
            billing[part] = parse_tres_billing_weights(text)
        except ValueError as exc:
            raise FormError("billing weights", f"{part}: {exc}") from None
    return PolicyChange(half_life_s=slurm_seconds("half-life", get["half_life"], zero_ok=True),
                        calc_period_s=slurm_seconds("calc period", get["calc_period"], zero_ok=False),
                        reset_period=reset, algorithm=algorithm, damping=damping,
                        enforce_limits=None if limits is None else limits == "yes",
                        qos_usage_factor=factors, billing=billing)


def winners_losers(rows: list[dict[str, object]], n: int = 5) -> tuple[list[dict[str, object]],
                                                                       list[dict[str, object]]]:
    """The ``n`` largest gains and the ``n`` largest losses in FairShare of ``replay_rows`` (sorted
    by the move, largest gain first); a row that does not move is neither."""
    moved = [r for r in rows if isinstance(r["move"], float) and r["move"] != 0.0]
    winners = [r for r in moved if r["move"] > 0][:n]  # type: ignore[operator]
    losers = [r for r in reversed(moved) if r["move"] < 0][:n]  # type: ignore[operator]
    return winners, losers


@dataclass(frozen=True, eq=False)
class Series:
    """Every association over the window: at each time, RawUsage and FairShare under the cluster's
    own policy (``now``) and under the new one (``new``), arrays of ``[time, tree row]``."""

    times: list[datetime]
    usage_now: NDArray[np.float64]
    usage_new: NDArray[np.float64]
    fairshare_now: NDArray[np.float64]
    fairshare_new: NDArray[np.float64]


@dataclass(frozen=True, eq=False)
class OwnSeries:
    """The cluster's own policy at the plot's times (:func:`own_series`): once per session, as
    :class:`~tui.analysis.replay.ReplayBase` is. Arrays ``[time, tree row]`` but ``last`` and ``until``."""

    times: list[datetime]
    cycle: NDArray[np.int64]
    """Each time's last cycle of the cluster's grid (an index into ``base.grid``)."""
    last: NDArray[np.float64]
    """That cycle (epoch s)."""
    until: NDArray[np.float64]
    """When the usage is read (the last time: the snapshot's; else its cycle)."""
    rebuilt: NDArray[np.float64]
    residual: NDArray[np.float64]
    noise: NDArray[np.float64]
    usage: NDArray[np.float64]
    fairshare: NDArray[np.float64]


def _times(base: ReplayBase, points: int) -> list[datetime]:
    start, end = base.since, datetime.fromtimestamp(base.when, base.snap.taken_at.tzinfo)
    step = (end - start) / points
    return [end if k == points else start + step * k for k in range(1, points + 1)]


def _fairshare(tree: AssocTree, usage: NDArray[np.float64], algorithm: str, damping: float,
               shares: NDArray[np.int64] | None = None) -> NDArray[np.float64]:
    kw = {} if shares is None else {"shares_raw": shares}
    done = compute(replace(tree, usage_raw=np.asarray(usage, dtype=np.longdouble), **kw), algorithm, damping)
    return np.asarray(done.fairshare, dtype=np.float64)


def own_series(base: ReplayBase, points: int = 12) -> OwnSeries:
    """Every association's usage and FairShare under the cluster's own policy at ``points`` times from
    the window's start to the snapshot, as :func:`~tui.analysis.replay.prepare_replay` reads them at
    each (``at``): one pass of the law (:func:`~tui.engine.usage_law.replay_at`), the residual carried
    back, the engine at each time. The last time is ``base``'s own."""
    times = _times(base, points)
    old, grid, tree = base.old, base.grid, base.tree
    when = np.asarray([t.timestamp() for t in times], dtype=np.float64)
    when[-1] = base.when
    cycle = np.clip(np.searchsorted(grid, when, side="right") - 1, 0, grid.size - 1)
    cycle[-1] = grid.size - 1
    last = grid[cycle]
    until = np.where(when >= base.last, when, last)
    until[-1] = base.until
    c0 = float(grid[0])
    resets = reset_boundaries(old.reset_period, c0, base.last, base.tz)
    rebuilt = replay_at(base.table, tree.parent, grid, old, cycle, until, resets)
    rebuilt[-1] = base.rebuilt
    lo = math.log(old.decay) if old.decay < 1.0 else 0.0
    residual = base.residual[None, :] * np.exp(-lo * (base.last - last))[:, None]
    printed = np.abs(np.asarray(tree.usage_raw, dtype=np.float64))
    noise = (1.0 - old.decay ** old.calc_period_s) * np.maximum(printed[None, :], np.abs(rebuilt)) + 1.0
    usage = np.maximum(rebuilt + residual, 0.0)
    usage[-1] = np.asarray(base.now_tree.usage_raw, dtype=np.float64)
    s = base.snap.settings
    fairshare = np.stack([_fairshare(tree, u, s.algorithm, s.dampening) for u in usage[:-1]]
                         + [np.asarray(base.now.fairshare, dtype=np.float64)])
    return OwnSeries(times, cycle, last, until, rebuilt, residual, noise, usage, fairshare)


def policy_series(base: ReplayBase, change: PolicyChange, points: int = 12, own: OwnSeries | None = None,
                  done: PolicyReplay | None = None) -> Series:
    """Every association's usage and FairShare at ``points`` times from the window's start to the
    snapshot under both policies, as :func:`~tui.analysis.replay.replay_policy` of a base read at
    each time gives them (the last time is ``done``, ``replay_policy(base, change)``, when given).
    One pass of the law per policy (:func:`~tui.engine.usage_law.replay_at`) and the engine at each
    time; ``own`` (:func:`own_series`) is the cluster's side, computed once. A selection then reads
    its row (infinite FairShare as 0).

    The new policy runs on the cluster's own cycles (logged ones too) while the calc period is the
    same; another one's cycles run every new ``PriorityCalcPeriod`` back from each time's last cycle,
    as ``replay_policy`` at that time: one pass per phase of the new period.
    """
    own = own or own_series(base, points)
    done = done or replay_policy(base, change)
    tree, old, new = base.tree, base.old, done.new
    settings = base.snap.settings
    algorithm, damping = done.algorithm, done.damping
    shares = None
    if change.shares:
        shares = np.asarray(done.tree.shares_raw).copy()
    same_usage = new == old
    same_fs = same_usage and shares is None and algorithm == settings.algorithm and damping == settings.dampening
    if same_usage:
        usage = own.usage.copy()
    else:
        c0 = float(base.grid[0])
        table = base.table if new.tres_weights == old.tres_weights and new.billing_mode == old.billing_mode \
            else base.jobs.table(new, c0)
        # Each time's new grid runs back from its own last cycle, as replay_policy's at that time:
        # the times whose cycles are a whole number of new periods apart share one grid (one pass).
        P, last = new.calc_period_s, own.last.size - 1
        phase = np.round(np.mod(base.last - own.last, P), 6)
        rebuilt_new = np.zeros_like(own.usage)  # the last time: done's
        last_new = np.empty(own.last.size)
        wiped = np.zeros(own.last.size, dtype=bool)
        same_grid = P == old.calc_period_s  # the cluster's own cycles (logged ones too), as replay_policy
        for p in np.unique(phase) if not same_grid else [0.0]:
            on = np.flatnonzero(phase == p) if not same_grid else np.arange(own.last.size)
            grid = cycle_grid(float(own.last[on[-1]]), P, c0) if not same_grid else base.grid
            cycle = np.clip(np.searchsorted(grid, own.last[on], side="right") - 1, 0, grid.size - 1)
            resets = reset_boundaries(new.reset_period, c0, float(grid[-1]), base.tz)
            read = on[:-1] if on[-1] == last else on  # the last time is done's own
            rebuilt_new[read] = replay_at(table, tree.parent, grid, new, cycle[:read.size], own.until[read], resets)
            last_new[on] = grid[cycle]
            wiped[on] = [bool(np.any(resets <= t)) for t in grid[cycle]]
        lo = math.log(old.decay) if old.decay < 1.0 else 0.0
        ln = math.log(new.decay) if new.decay < 1.0 else 0.0
        scale = np.where(wiped, 0.0, np.exp(ln * (last_new - c0) - lo * (own.last - c0)))[:, None]
        real = np.abs(own.residual) > own.noise
        usage = np.floor(np.maximum(np.where(real, rebuilt_new + own.residual * scale,
                                             rebuilt_new + own.residual), 0.0))
        usage[-1] = np.asarray(done.tree.usage_raw, dtype=np.float64)
    if same_fs:
        fairshare = own.fairshare.copy()
    else:
        fairshare = np.stack([_fairshare(tree, u, algorithm, damping, shares) for u in usage[:-1]]
                             + [np.asarray(done.result.fairshare, dtype=np.float64)])
    cols = [np.nan_to_num(a, nan=0.0, posinf=0.0, neginf=0.0) for a in (own.usage, usage, own.fairshare, fairshare)]
    return Series(list(own.times), *cols)


def series_row(series: Series, row: int, zone: tzinfo | None = None) -> tuple[list[str], list[tuple[str, list[float]]],
                                                                            list[tuple[str, list[float]]]]:
    """One association's plot lines from ``series`` (what the Policy screen draws when the highlight
    moves): the times as ``dd/mm/YYYY HH:MM`` on the cluster's clock (``zone``, the snapshot's; None:
    this machine's), RawUsage in SU (billing-hours) and FairShare, each under the cluster's policy
    and the new one."""
    dates = [t.astimezone(zone).strftime("%d/%m/%Y %H:%M") for t in series.times]
    usage = [("cluster's policy", (series.usage_now[:, row] / 3600.0).tolist()),
             ("new policy", (series.usage_new[:, row] / 3600.0).tolist())]
    fairshare = [("cluster's policy", series.fairshare_now[:, row].tolist()),
                 ("new policy", series.fairshare_new[:, row].tolist())]
    return dates, usage, fairshare


def default_window(taken_at: datetime, half_life_s: float, first_job: float | None) -> datetime:
    """The replayed window's start: every job of the source, else ten half-lives (at least 30 days)."""
    if first_job is not None:
        return datetime.fromtimestamp(first_job - 1, taken_at.tzinfo)
    back = timedelta(days=366) if half_life_s <= 0 else max(timedelta(seconds=10 * half_life_s), timedelta(days=30))
    return taken_at - back


def enforce_hint(enforce: frozenset[str] | None) -> str:
    """The "Enforce limits" field's hint: the cluster's own, as the other fields show theirs. Yes when
    AccountingStorageEnforce has ``limits`` or ``safe`` (or ``all``: a job's last slice is charged at its
    end), no when it does not (``associations`` alone); unknown (a source without it) counts as yes, as
    the replay counts it (:meth:`~tui.engine.usage_law.UsagePolicy.of`), and says so."""
    if enforce is None:
        return "yes (AccountingStorageEnforce unknown)"
    return "yes" if UsagePolicy.of(PrioritySettings(accounting_enforce=enforce)).enforce_limits else "no"


def duration(seconds: float) -> str:
    """Slurm's ``D-HH:MM:SS``."""
    s = int(seconds)
    return f"{s // 86400}-{s % 86400 // 3600:02d}:{s % 3600 // 60:02d}:{s % 60:02d}"


def policy_line(done: PolicyReplay) -> str:
    """What the replay changed, one line (``fairtop replay --format table``'s head, the Policy screen)."""
    a, b = done.old, done.new
    changes = []
    if a.half_life_s != b.half_life_s:
        changes.append(f"half-life {duration(a.half_life_s)} -> {duration(b.half_life_s)}")
    if a.calc_period_s != b.calc_period_s:
        changes.append(f"calc period {a.calc_period_s:g} s -> {b.calc_period_s:g} s")
    if a.reset_period != b.reset_period:
        changes.append(f"reset {a.reset_period} -> {b.reset_period}")
    if a.enforce_limits != b.enforce_limits:
        changes.append(f"limits {'yes' if a.enforce_limits else 'no'} -> {'yes' if b.enforce_limits else 'no'}")
    if a.billing_mode != b.billing_mode:
        changes.append(f"billing {a.billing_mode} -> {b.billing_mode}")
    changes += [f"TRESBillingWeights of {p}" for p in sorted(b.tres_weights)
                if a.tres_weights.get(p) != b.tres_weights[p]]
    changes += [f"UsageFactor of {q} {a.usage_factor(q):g} -> {b.usage_factor(q):g}"
                for q in sorted(b.qos_usage_factor) if a.usage_factor(q) != b.usage_factor(q)]
    return "; ".join(changes) or "the cluster's own usage law"
