"""Slurm's usage law in one place: what a job adds to RawUsage, cycle by cycle, and a replay.

Read from ``priority_multifactor.c`` (the same from 22.05 to 26.05: ``_decay_thread``,
``_apply_decay``, ``_apply_new_usage``, ``_reset_usage``, ``priority_p_job_end``) and
``acct_policy.c`` (``_adjust_limit_usage``). With ``d = 1 - 0.693/HL`` (:mod:`tui.engine.decay`),
at every decay cycle ``now`` (every ``PriorityCalcPeriod`` from the controller's start; a
restart, and from 23.11 a reconfigure, re-anchors the grid):

1. if a ``PriorityUsageResetPeriod`` boundary has passed, every association's and QOS's usage
   becomes 0;
2. everything decays by ``d**(now - last_ran)`` (one step, however long the controller was
   down: the downtime is charged and decayed, not lost), except the usage of a QOS with
   ``Flags=NoDecay`` (associations always decay);
3. every running job adds ``delta * d**delta * billing * UsageFactor`` to its association and
   every ancestor, ``delta = now - max(last_ran, start)``; its QOS gets the same, or the
   undecayed ``delta * billing * UsageFactor`` for a NoDecay QOS;
4. when a job ends, its last slice ``[max(last_ran, start), end]`` is added the same way, but
   only when ``AccountingStorageEnforce`` has ``limits`` (or ``safe``): ``acct_policy.c`` calls
   ``priority_g_job_end`` only then. Without it a job shorter than a cycle adds nothing.

``billing`` is the job's billable TRES as a double (``calc_job_billable_tres``); sacct's
``billing=`` is that number truncated to an integer. sshare prints ``(uint64)usage_raw``. A
deleted association's usage stays in its parent (``assoc_mgr`` moves its leaf usage there).

Two forms of the same law:

* :func:`replay`: a job table (association row, start, end or running, billing, QOS) over an
  explicit, possibly irregular cycle grid (:func:`cycle_grid`, :func:`anchored_cycles`) ->
  every association's raw usage (ancestors included) and every QOS's, as slurmctld holds them
  after the grid's last cycle. Vectorised over jobs (prefix sums over cycles).
* :func:`charge_series`: closed form on a regular grid from now, evaluated at many times (the
  planner's projections).

Pure functions over numpy arrays: no I/O, no clock. Times are epoch seconds (or seconds from
now for the planner's series), usage is billing TRES-seconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta, timezone, tzinfo
from typing import Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tui.engine._numeric import scalar_or_array
from tui.engine.billing import BillingMode, billable_tres, billing_mode
from tui.engine.decay import decay_factor, decay_per_second, decay_rate, next_reset
from tui.model import Partition, PrioritySettings

__all__ = [
    "Law",
    "UsagePolicy",
    "JobTable",
    "Replay",
    "replay",
    "replay_at",
    "cycle_grid",
    "anchored_cycles",
    "logged_grid",
    "reset_boundaries",
    "last_reset_before",
    "subtree_sum",
    "cycle_accrual",
    "job_usage_over_cycles",
    "charged_usage",
    "charge_series",
    "decay_series",
]


# --------------------------------------------------------------------------------------------
# Policy: the settings the law depends on
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class UsagePolicy:
    """The cluster settings Slurm's usage law depends on.

    Attributes
    ----------
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds (0: no decay).
    calc_period_s : float
        ``PriorityCalcPeriod`` in seconds.
    reset_period : str
        ``PriorityUsageResetPeriod``: NONE, NOW, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY.
    enforce_limits : bool
        ``AccountingStorageEnforce`` has ``limits`` or ``safe``: a job's last slice (from the
        last cycle to its end) is charged at its end. False: it is never charged.
    qos_usage_factor : mapping of str to float
        QOS name -> ``UsageFactor`` (a QOS not named, or a negative factor, counts as 1).
    no_decay_qos : frozenset of str
        QOS with ``Flags=NoDecay``: their own usage never decays (associations' still does).
    tres_weights : mapping of str to mapping of str to float
        Partition -> ``TRESBillingWeights`` (TRES name -> weight per base unit). A partition
        not named, or with no weights, bills the CPU count.
    billing_mode : {"sum", "max_tres", "max_tres_gres"}
        From ``PriorityFlags`` (:func:`tui.engine.billing.billing_mode`).
    """

    half_life_s: float = 7 * 86400.0
    calc_period_s: float = 300.0
    reset_period: str = "NONE"
    enforce_limits: bool = True
    qos_usage_factor: Mapping[str, float] = field(default_factory=dict)
    no_decay_qos: frozenset[str] = frozenset()
    tres_weights: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    billing_mode: BillingMode = "sum"

    @classmethod
    def of(cls, settings: PrioritySettings, partitions: Sequence[Partition] = ()) -> UsagePolicy:
        """The policy of a snapshot's settings and partitions (an unknown
        AccountingStorageEnforce counts as ``limits``)."""
        enforce = settings.accounting_enforce
        limits = enforce is None or bool(enforce & {"limits", "safe", "all"})
        return cls(half_life_s=float(settings.decay_half_life_s), calc_period_s=float(settings.calc_period_s),
                   reset_period=settings.usage_reset_period, enforce_limits=limits,
                   qos_usage_factor=dict(settings.qos_usage_factors), no_decay_qos=frozenset(settings.qos_no_decay),
                   tres_weights={p.name: dict(p.billing_weights) for p in partitions if p.billing_weights},
                   billing_mode=billing_mode(settings.flags))

    @property
    def decay(self) -> float:
        """``d = 1 - 0.693/HL`` per second (1: no decay)."""
        return decay_per_second(self.half_life_s)

    def usage_factor(self, qos: str) -> float:
        """The QOS's ``UsageFactor`` as Slurm applies it (1 when unknown or negative)."""
        f = self.qos_usage_factor.get(qos, 1.0)
        return 1.0 if f < 0 else float(f)

    def billing(self, partition: str, alloc_tres: Mapping[str, float]) -> float:
        """The job's billable TRES (a double, untruncated) from its AllocTRES on ``partition``.

        ``alloc_tres`` are the whole job's allocated counts (``cpu``, ``mem`` in MB, ``node``,
        ``gres/gpu``, ...), ``billing`` among them is ignored.
        """
        weights = self.tres_weights.get(partition)
        return float(billable_tres(alloc_tres, weights or None, self.billing_mode))


# --------------------------------------------------------------------------------------------
# The job table
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class JobTable:
    """Jobs (one row per run: a requeued job has one row per run) as arrays.

    Attributes
    ----------
    row : int64 array (J,)
        Association charged (its ancestors are charged too); -1: none (skipped).
    start : float64 array (J,)
        Start, epoch seconds (whole seconds, as Slurm's ``time_t``).
    end : float64 array (J,)
        End, epoch seconds; ``inf`` while it runs.
    billing : float64 array (J,)
        Billable TRES per second (before the QOS UsageFactor).
    qos : tuple of str
        Each job's QOS name ("" for none); empty when ``qos_code`` is given.
    qos_code : int array (J,) or None
        Each job's QOS as an index into ``qos_names`` (:meth:`coded`: no string per job, for
        millions of jobs).
    qos_names : tuple of str
    """

    row: NDArray[np.int64]
    start: NDArray[np.float64]
    end: NDArray[np.float64]
    billing: NDArray[np.float64]
    qos: tuple[str, ...]
    qos_code: NDArray[np.int64] | None = None
    qos_names: tuple[str, ...] = ()

    @classmethod
    def of(cls, row: ArrayLike, start: ArrayLike, end: ArrayLike, billing: ArrayLike,
           qos: Sequence[str] | None = None) -> JobTable:
        """Build a table from array-likes (``end``: NaN or inf for a running job)."""
        r = np.asarray(row, dtype=np.int64).reshape(-1)
        s = np.asarray(start, dtype=np.float64).reshape(-1)
        e = np.asarray(end, dtype=np.float64).reshape(-1).copy()
        e[np.isnan(e)] = np.inf
        b = np.asarray(billing, dtype=np.float64).reshape(-1)
        q = tuple(qos) if qos is not None else ("",) * r.size
        if not (r.size == s.size == e.size == b.size == len(q)):
            raise ValueError("row, start, end, billing and qos must have one entry per job")
        if np.any(e < s):
            raise ValueError("a job ends before it starts")
        return cls(r, s, e, b, q)

    @classmethod
    def coded(cls, row: ArrayLike, start: ArrayLike, end: ArrayLike, billing: ArrayLike, qos_code: ArrayLike,
              qos_names: Sequence[str]) -> JobTable:
        """:meth:`of` with each job's QOS as an index into ``qos_names``."""
        code = np.asarray(qos_code, dtype=np.int64).reshape(-1)
        plain = cls.of(row, start, end, billing, ("",) * code.size)
        if code.size and (code.min() < 0 or code.max() >= len(qos_names)):
            raise ValueError("a QOS code is outside qos_names")
        return cls(plain.row, plain.start, plain.end, plain.billing, (), code, tuple(qos_names))

    @property
    def size(self) -> int:
        return int(self.row.size)

    def qos_codes(self) -> tuple[NDArray[np.str_], NDArray[np.int64]]:
        """The distinct QOS names and each job's index into them."""
        if self.qos_code is not None:
            return np.asarray(self.qos_names, dtype=str), self.qos_code
        names, code = np.unique(np.asarray(self.qos, dtype=str), return_inverse=True)
        return names, code.reshape(-1)


# --------------------------------------------------------------------------------------------
# Cycle grids and resets
# --------------------------------------------------------------------------------------------


def cycle_grid(last_cycle: float, period_s: float, since: float) -> NDArray[np.float64]:
    """A regular grid of decay cycles ``last_cycle - k * period_s`` back to at or before ``since``.

    Returns
    -------
    float64 array
        Increasing cycle times (epoch seconds); the first is ``<= since``, the last is
        ``last_cycle``.
    """
    p = float(period_s)
    if p <= 0:
        raise ValueError("period must be positive")
    n = max(0, math.ceil((float(last_cycle) - float(since)) / p))
    return float(last_cycle) - p * np.arange(n, -1, -1, dtype=np.float64)


def anchored_cycles(anchors: ArrayLike, period_s: float, until: float, stops: ArrayLike = ()) -> NDArray[np.float64]:
    """Decay cycles of a controller started at each of ``anchors`` (its restarts, and from 23.11
    its reconfigures), up to ``until``.

    Each start runs a cycle at once, then one every ``period_s`` from that start's own clock
    (``_decay_thread`` waits until ``start + k * period``); a restart ends the previous grid. A
    cycle's time is the whole second it woke at, ``floor(anchor + k * period)``.

    Parameters
    ----------
    anchors : array_like
        Controller start times, epoch seconds with their fraction (e.g. the log's first line).
    period_s : float
        ``PriorityCalcPeriod`` in seconds.
    until : float
        Last time to include (e.g. the capture time).
    stops : array_like
        Times the controller stopped (no cycle between a stop and the next start).

    Returns
    -------
    float64 array
        Increasing cycle times (whole seconds).
    """
    a = np.sort(np.asarray(anchors, dtype=np.float64).reshape(-1))
    down = np.sort(np.asarray(stops, dtype=np.float64).reshape(-1))
    p = float(period_s)
    pieces = []
    for i, start in enumerate(a):
        stop = min(float(a[i + 1]) if i + 1 < a.size else math.inf, float(until) + 1.0)
        after = down[down > start]
        if after.size:
            stop = min(stop, float(after[0]))
        n = max(0, math.ceil((stop - start) / p))
        t = np.floor(start + p * np.arange(n, dtype=np.float64))
        pieces.append(t[(t < stop) & (t <= until)])
    if not pieces:
        return np.zeros(0)
    out = np.unique(np.concatenate(pieces))
    return out


def logged_grid(cycles: ArrayLike, last: float | None, taken: float, since: float,
                first_job: float) -> tuple[NDArray[np.float64] | None, str]:
    """slurmctld's logged decay cycles as a replay's grid, when they can be.

    Parameters
    ----------
    cycles : array_like
        Logged cycle times (epoch s, :mod:`tui.sources.ctld_log`).
    last : float or None
        The saved last cycle (``priority_last_decay_ran``), if known.
    taken : float
        When the usage was read (the capture).
    since, first_job : float
        The window's start and its first job's start.

    Returns
    -------
    (float64 array or None, str)
        The cycles from the last one at or before ``since`` to the last one at or before
        ``taken``; or None and why not: none before the capture, the log's last cycle is not the
        saved one (a log not flushed, or another controller's), or the log starts after the
        window's first job (rotated away: the jobs before it would not be charged).
    """
    c = np.unique(np.asarray(cycles, dtype=np.float64).reshape(-1))
    c = c[c <= taken]
    stamp = "%Y-%m-%d %H:%M:%S UTC"
    if c.size == 0:
        return None, "the log has no decay cycle before the capture"
    if last is not None and c[-1] != math.floor(last):
        return None, (f"the log's last cycle ({datetime.fromtimestamp(c[-1], timezone.utc):{stamp}}) is not the "
                      f"saved last cycle ({datetime.fromtimestamp(last, timezone.utc):{stamp}})")
    if c[0] > min(since, first_job):
        return None, f"the log starts at {datetime.fromtimestamp(c[0], timezone.utc):{stamp}}, after the window's start"
    k = int(np.searchsorted(c, since, side="right")) - 1
    return c[max(k, 0):], ""


def last_reset_before(period: str, when: datetime) -> datetime | None:
    """The latest PriorityUsageResetPeriod boundary at or before ``when`` (local midnights of
    ``when``'s zone); None for NONE and NOW (NOW resets at controller start)."""
    p = period.strip().upper()
    midnight = datetime.combine(when.date(), time(0), tzinfo=when.tzinfo)
    if p == "DAILY":
        return midnight
    if p == "WEEKLY":  # Sunday 00:00 (Python: Monday 0 ... Sunday 6)
        return midnight - timedelta(days=(when.weekday() + 1) % 7)
    if p in ("MONTHLY", "QUARTERLY", "YEARLY"):
        month = {"MONTHLY": when.month, "QUARTERLY": (when.month - 1) // 3 * 3 + 1, "YEARLY": 1}[p]
        return datetime.combine(date(when.year, month, 1), time(0), tzinfo=when.tzinfo)
    return None


def reset_boundaries(period: str, since: float, until: float, tz: tzinfo | None = None,
                     anchors: ArrayLike = ()) -> NDArray[np.float64]:
    """``PriorityUsageResetPeriod`` boundaries in ``(since, until]`` (epoch seconds).

    Calendar periods reset at local midnights of ``tz`` (default UTC) as
    :func:`tui.engine.decay.next_reset` counts them; ``NOW`` resets at each controller start
    in ``anchors`` (its whole second). The reset itself happens at the first cycle at or after a boundary.
    """
    p = period.strip().upper()
    if p == "NOW":
        # the start's whole second: its first cycle may run within that very second (a fast start)
        a = np.floor(np.asarray(anchors, dtype=np.float64).reshape(-1))
        return np.sort(a[(a > since) & (a <= until)])
    if p == "NONE":
        return np.zeros(0)
    zone = tz or timezone.utc
    out: list[float] = []
    last = datetime.fromtimestamp(since, zone)
    while True:
        nxt = next_reset(p, last)
        if nxt is None or nxt.timestamp() > until:
            break
        if nxt.timestamp() > since:
            out.append(nxt.timestamp())
        last = nxt
    return np.asarray(out, dtype=np.float64)


# --------------------------------------------------------------------------------------------
# The replay
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class Replay:
    """What :func:`replay` rebuilt.

    Attributes
    ----------
    usage : float64 array (n,)
        Every association's raw usage, its descendants' included (what sshare's RawUsage
        shows, before the truncation to an integer).
    own : float64 array (n,)
        What the jobs charged each association directly.
    per_job : float64 array (J,)
        Each job's share of its association's usage.
    qos : dict of str to float
        Every QOS's raw usage (NoDecay ones undecayed).
    last_cycle : float
        The grid's last cycle (epoch seconds).
    """

    usage: NDArray[np.float64]
    own: NDArray[np.float64]
    per_job: NDArray[np.float64]
    qos: dict[str, float]
    last_cycle: float


def subtree_sum(own: ArrayLike, parent: ArrayLike) -> NDArray[np.float64]:
    """Each row's value plus all its descendants' (``parent[i] = -1`` at a root)."""
    total = np.asarray(own, dtype=np.float64).copy()
    par = np.asarray(parent, dtype=np.int64)
    if total.size == 0:
        return total
    depth = np.zeros(par.size, dtype=np.int64)
    up = par.copy()
    while np.any(up >= 0):  # depth by walking every row up one level per pass
        on = up >= 0
        depth[on] += 1
        up[on] = par[up[on]]
    for d in range(int(depth.max()), 0, -1):
        level = np.flatnonzero(depth == d)
        total += np.bincount(par[level], weights=total[level], minlength=total.size)
    return total


def _search(c: NDArray[np.float64], x: NDArray[np.float64], side: Literal["left", "right"]) -> NDArray[np.int64]:
    """``np.searchsorted(c, x, side)`` for many unsorted ``x`` against a non-decreasing, roughly even
    ``c`` (a cycle grid): each ``x`` finds its bucket of an even split of ``c``'s span by arithmetic, then
    steps over the few cycles in it. About four times faster than a binary search per job at a
    million jobs; an uneven ``c`` (more than 8 cycles in a bucket) falls back to the binary search."""
    n = c.size
    span = float(c[-1] - c[0]) if n else 0.0
    if x.size < 4096 or n < 2 or not span > 0:
        return np.searchsorted(c, x, side=side).astype(np.int64)
    h = span / n
    edges = c[0] + h * np.arange(n + 1, dtype=np.float64)
    edges[-1] = np.inf
    first = np.searchsorted(c, edges, side=side)  # sorted: fast
    most = int(np.diff(first).max())
    if most > 8:
        return np.searchsorted(c, x, side=side).astype(np.int64)
    with np.errstate(invalid="ignore"):
        b = np.clip(np.floor((x - c[0]) / h), 0, n - 1)
    b = np.nan_to_num(b, nan=n - 1).astype(np.int64)
    b -= (b > 0) & (edges[b] > x)  # rounding: at most one bucket off
    b += (b < n - 1) & (edges[np.minimum(b + 1, n)] <= x)
    ans: NDArray[np.int64] = first[b].astype(np.int64)
    below = x < c[0] if side == "right" else x <= c[0]
    ans[below] = 0
    upper = first[b + 1]
    for _ in range(most):
        at = c[np.minimum(ans, n - 1)]
        ans += (ans < upper) & ((at <= x) if side == "right" else (at < x))
    return ans


def replay(jobs: JobTable, parent: ArrayLike, cycles: ArrayLike, policy: UsagePolicy,
           until: float | None = None, resets: ArrayLike = ()) -> Replay:
    """Replay Slurm's usage law over ``jobs`` and ``cycles``: raw usage after the last cycle.

    Parameters
    ----------
    jobs : JobTable
        The jobs (a requeued job: one row per run).
    parent : array_like of int (n,)
        The association tree's parent rows (-1 at the root).
    cycles : array_like
        Increasing decay cycle times, epoch seconds: ``cycles[0]`` is the first ``last_ran``
        (nothing before it is charged), ``cycles[-1]`` the last cycle. Restarts show as longer
        (and re-anchored) gaps: :func:`anchored_cycles`.
    policy : UsagePolicy
        Half-life, limits enforcement, QOS factors and NoDecay set (``calc_period_s`` and
        ``reset_period`` are not used here: the grid and ``resets`` carry them).
    until : float, optional
        When the usage is read (a capture), ``>= cycles[-1]``: jobs that ended after the last
        cycle and by ``until`` have their last slice charged undecayed (with limits). Default:
        the last cycle.
    resets : array_like
        Usage reset boundaries (:func:`reset_boundaries`): usage is zeroed at the first cycle at
        or after each.

    Returns
    -------
    Replay
    """
    c = np.asarray(cycles, dtype=np.float64).reshape(-1)
    if c.size == 0:
        raise ValueError("no decay cycle")
    if np.any(np.diff(c) <= 0):
        raise ValueError("cycle times must be strictly increasing")
    par = np.asarray(parent, dtype=np.int64)
    n = par.size
    last = float(c[-1])
    stop = last if until is None else max(float(until), last)
    d = policy.decay
    dlog = math.log(d) if d < 1.0 else 0.0
    N = c.size - 1
    # Index of the last reset cycle: charges before it are wiped.
    b = np.asarray(resets, dtype=np.float64).reshape(-1)
    hit = np.searchsorted(c, b[b <= last], side="left")
    r = int(hit.max()) if hit.size else 0
    # Per cycle k >= 1: its whole interval, the decay from it to the last cycle, what a job
    # running through it adds (decayed to the end) and the undecayed seconds; zero before r.
    gap = np.diff(c, prepend=c[0])
    keep = np.arange(c.size) >= r
    w = np.exp((last - c) * dlog) * keep                       # d**(c_N - c_k)
    g = gap * np.exp(gap * dlog) * w                           # Delta d**Delta, decayed
    G = np.cumsum(g, dtype=np.longdouble)
    H = np.cumsum(gap * keep, dtype=np.longdouble)

    s, e = jobs.start, jobs.end
    k1 = np.maximum(_search(c, s, "right"), 1)    # first cycle after the start
    # first cycle after the end: a job ending in the second of a cycle ran through it (the cycle's
    # time is its wake-up second, the end is processed after; sacct's times are whole seconds)
    ke = _search(c, e, "right")
    kl = np.minimum(ke, N + 1) - 1                             # last cycle it runs through
    runs = kl >= k1
    k1c = np.minimum(k1, N)
    klc = np.clip(kl, 0, N)
    delta1 = np.where(runs, c[k1c] - np.maximum(c[k1c - 1], s), 0.0)
    first = delta1 * np.exp(delta1 * dlog) * w[k1c]
    inner = np.where(runs, (G[klc] - G[k1c]).astype(np.float64), 0.0)
    decayed = np.where(runs, first + inner, 0.0)
    flat = np.where(runs, delta1 * keep[k1c] + (H[klc] - H[k1c]).astype(np.float64), 0.0)
    # The last slice, charged at the end (limits/safe only), then decayed from the cycle
    # before the end; wiped by a reset at or after the cycle that follows it.
    ended = np.isfinite(e) & (e <= stop) & (ke >= 1) & (e > s) & bool(policy.enforce_limits)
    kp = np.clip(ke - 1, 0, N)
    tail = np.where(ended, e - np.maximum(c[kp], s), 0.0)
    tail = np.maximum(tail, 0.0)
    tail_kept = ended & (ke > r)
    tail_w = np.where(ke > N, 1.0, np.exp((last - c[kp]) * dlog))
    decayed = decayed + np.where(tail_kept, tail * np.exp(tail * dlog) * tail_w, 0.0)
    flat = flat + np.where(tail_kept, tail, 0.0)

    names, code = jobs.qos_codes()
    factor = np.asarray([policy.usage_factor(str(q)) for q in names], dtype=np.float64)[code] if names.size \
        else np.ones(0)
    per_job = decayed * jobs.billing * factor
    valid = (jobs.row >= 0) & (jobs.row < n)
    own = np.bincount(jobs.row[valid], weights=per_job[valid], minlength=n).astype(np.float64)
    undecayed = flat * jobs.billing * factor
    nodecay = np.asarray([str(q) in policy.no_decay_qos for q in names], dtype=bool)
    by_qos = np.bincount(code, weights=np.where(nodecay[code], undecayed, per_job), minlength=names.size) \
        if names.size else np.zeros(0)
    qos = {str(q): float(v) for q, v in zip(names, by_qos) if q}
    return Replay(subtree_sum(own, par), own, per_job, qos, last)


def replay_at(jobs: JobTable, parent: ArrayLike, cycles: ArrayLike, policy: UsagePolicy, samples: ArrayLike,
              untils: ArrayLike | None = None, resets: ArrayLike = ()) -> NDArray[np.float64]:
    """:func:`replay` read at several cycles in one pass: every association's raw usage after each
    of ``samples``, as ``replay(jobs, parent, cycles[:K + 1], policy, until, resets).usage`` for
    each sample cycle ``K`` (to rounding).

    A job charges its association from its first cycle to its end; after that its share only
    decays. So each job is evaluated at the samples it is still charging at (one, for a job that
    starts and ends between two samples) and, once done, at the first sample after its end; what
    the done jobs hold is carried from sample to sample by the decay between them (and dropped at
    a usage reset). The cost is about one :func:`replay`, however many samples.

    Parameters
    ----------
    jobs, parent, cycles, policy, resets
        As :func:`replay` (``cycles`` the whole grid).
    samples : array_like of int (M,)
        Non-decreasing indices into ``cycles``: the cycles after which the usage is read.
    untils : array_like of float (M,), optional
        When each sample is read (``>= cycles[K]``, non-decreasing, and before the next sample's
        cycle when that is another one): jobs that
        ended after the sample's cycle and by then have their last slice charged undecayed (with
        limits). Default: each sample's cycle.

    Returns
    -------
    float64 array (M, n)
        Raw usage, descendants included, at each sample.
    """
    c = np.asarray(cycles, dtype=np.float64).reshape(-1)
    if c.size == 0:
        raise ValueError("no decay cycle")
    if np.any(np.diff(c) <= 0):
        raise ValueError("cycle times must be strictly increasing")
    Ks = np.asarray(samples, dtype=np.int64).reshape(-1)
    M = Ks.size
    par = np.asarray(parent, dtype=np.int64)
    n = par.size
    if M == 0:
        return np.zeros((0, n))
    if np.any(np.diff(Ks) < 0) or Ks[0] < 0 or Ks[-1] >= c.size:
        raise ValueError("samples must be non-decreasing indices into cycles")
    cK = c[Ks]
    stop = cK.copy() if untils is None else np.maximum(np.asarray(untils, dtype=np.float64).reshape(-1), cK)
    d = policy.decay
    dlog = math.log(d) if d < 1.0 else 0.0
    # Each sample's last reset cycle (charges before it are wiped), and its prefix sums as in replay().
    b = np.asarray(resets, dtype=np.float64).reshape(-1)
    r = np.zeros(M, dtype=np.int64)
    for m in range(M):
        hit = np.searchsorted(c, b[b <= cK[m]], side="left")
        r[m] = int(hit.max()) if hit.size else 0
    step = np.diff(c, prepend=c[0])
    step = step * np.exp(step * dlog)  # each cycle's own slice, decayed over itself

    # (job, sample) pairs: from the first sample at or after its start to the first after its end.
    started = np.flatnonzero(jobs.start <= stop[-1])  # a job after the last reading adds nothing
    s_all, e_all = jobs.start[started], jobs.end[started]
    first_m = _search(stop, s_all, "left")
    done_m = _search(cK, e_all, "left")  # first sample whose cycle is at or after the end
    k1_all, ke_all = _search(c, s_all, "right"), _search(c, e_all, "right")
    last_m = np.minimum(done_m, M - 1)
    count = np.where(first_m <= last_m, last_m - first_m + 1, 0)
    job = np.repeat(np.arange(s_all.size), count)
    offsets = np.cumsum(count) - count
    m = (first_m[job] + np.arange(job.size) - offsets[job]).astype(np.int64)
    final = m == done_m[job]  # done: carried to the later samples by the decay alone

    s, e, K = s_all[job], e_all[job], Ks[m]
    k1 = np.maximum(np.minimum(k1_all[job], K + 1), 1)
    ke = np.minimum(ke_all[job], K + 1)
    kl = ke - 1
    runs = kl >= k1
    k1c = np.minimum(k1, K)
    klc = np.clip(kl, 0, K)
    delta1 = np.where(runs, c[k1c] - np.maximum(c[k1c - 1], s), 0.0)
    # Per sample, one row at a time (a year of 1-minute cycles is 525,600 of them: 12 rows at once
    # held ~200 MB): w, each cycle's decay to the sample's cycle (0 before its last reset), and G,
    # the decayed slices' prefix sums, long double as in replay().
    decayed = np.zeros(job.size)
    by_m = np.argsort(m, kind="stable")
    ends = np.searchsorted(m[by_m], np.arange(M + 1), side="left")
    for mm in range(M):
        sel = by_m[ends[mm]:ends[mm + 1]]
        if not sel.size:
            continue
        upto = int(Ks[mm]) + 1
        w = np.zeros(upto)
        w[r[mm]:] = np.exp((cK[mm] - c[r[mm]:upto]) * dlog)
        G = np.cumsum(step[:upto] * w, dtype=np.longdouble)
        a, z = k1c[sel], klc[sel]
        decayed[sel] = np.where(runs[sel], delta1[sel] * np.exp(delta1[sel] * dlog) * w[a]
                                + (G[z] - G[a]).astype(np.float64), 0.0)
    ended = np.isfinite(e) & (e <= stop[m]) & (ke >= 1) & (e > s) & bool(policy.enforce_limits)
    kp = np.clip(ke - 1, 0, K)
    tail = np.maximum(np.where(ended, e - np.maximum(c[kp], s), 0.0), 0.0)
    tail_w = np.where(ke > K, 1.0, np.exp((cK[m] - c[kp]) * dlog))
    decayed = decayed + np.where(ended & (ke > r[m]), tail * np.exp(tail * dlog) * tail_w, 0.0)

    names, code = jobs.qos_codes()
    factor = np.asarray([policy.usage_factor(str(q)) for q in names], dtype=np.float64)[code] if names.size \
        else np.ones(0)
    per_pair = decayed * (jobs.billing * factor)[started[job]]
    row = jobs.row[started[job]]
    valid = (row >= 0) & (row < n)
    key = m * n + row
    held = np.bincount(key[valid & ~final], weights=per_pair[valid & ~final], minlength=M * n).reshape(M, n)
    done = np.bincount(key[valid & final], weights=per_pair[valid & final], minlength=M * n).reshape(M, n)
    out = np.empty((M, n))
    carried = np.zeros(n)
    for k in range(M):
        if k:
            wiped = bool(np.any((b > cK[k - 1]) & (b <= cK[k])))
            carried = np.zeros(n) if wiped else carried * math.exp((cK[k] - cK[k - 1]) * dlog)
        carried = carried + done[k]
        out[k] = subtree_sum(carried + held[k], par)
    return out


# --------------------------------------------------------------------------------------------
# One job, cycle by cycle (the reference loop) and its increments
# --------------------------------------------------------------------------------------------


def cycle_accrual(
    dt_s: ArrayLike,
    billing: ArrayLike,
    half_life_s: float,
    qos_usage_factor: ArrayLike = 1.0,
) -> NDArray[np.float64] | float:
    """Raw usage one job adds over one accrual interval (spec 4.3, PM ``_apply_new_usage``).

    Parameters
    ----------
    dt_s : array_like
        Seconds the job ran inside the interval (``end - max(last_ran, job start)``); negative
        values count as 0.
    billing : array_like
        Billable TRES of the job (see :mod:`tui.engine.billing`); CPUs when the partition has no
        ``TRESBillingWeights``.
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds.
    qos_usage_factor : array_like
        QOS ``UsageFactor``; Slurm treats a negative value as 1.

    Returns
    -------
    float or ndarray
        ``dt * d**dt * billing * qf`` in billing TRES-seconds: the new usage is itself decayed
        over its own interval.
    """
    dt = np.maximum(np.asarray(dt_s, dtype=np.float64), 0.0)
    qf = np.asarray(qos_usage_factor, dtype=np.float64)
    qf = np.where(qf < 0, 1.0, qf)
    d = decay_per_second(half_life_s)
    out = dt * np.power(d, dt) * np.asarray(billing, dtype=np.float64) * qf
    return scalar_or_array(out)


def job_usage_over_cycles(
    cycle_times_s: ArrayLike,
    start_s: float,
    end_s: float,
    billing: float,
    half_life_s: float,
    qos_usage_factor: float = 1.0,
    usage0: float = 0.0,
    enforce_limits: bool = True,
) -> NDArray[np.longdouble]:
    """Raw usage of one association after each decay cycle while one job runs and ends.

    Follows Slurm's order (spec 4.2-4.3): at every cycle the existing usage is decayed by
    ``d**(t_k - t_{k-1})``, then a job still running adds its share of ``[t_{k-1}, t_k]``. A job
    that ends between two cycles is charged at its end for ``[max(t_{k-1}, start), end]``, and
    that charge is decayed by the whole of the next cycle's interval (only with
    ``enforce_limits``; else that slice is never charged). The reference loop :func:`replay`
    must agree with.

    Parameters
    ----------
    cycle_times_s : array_like
        Increasing times of decay cycles in seconds (e.g. epoch). The first entry is the
        ``last_ran`` before the window; nothing is charged for time before it.
    start_s, end_s : float
        Job start and end in seconds on the same clock; ``end_s = inf`` for a job still running.
    billing : float
        Billable TRES of the job.
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds.
    qos_usage_factor : float
        QOS ``UsageFactor`` (negative counts as 1).
    usage0 : float
        Raw usage at ``cycle_times_s[0]`` in billing TRES-seconds.
    enforce_limits : bool
        ``AccountingStorageEnforce`` has ``limits``/``safe`` (the end slice is charged).

    Returns
    -------
    ndarray of longdouble
        Usage right after each cycle; ``[0]`` is ``usage0``. Usage is accumulated in long double
        as in Slurm (``usage_raw`` is ``long double``; increments are doubles).
    """
    t = np.asarray(cycle_times_s, dtype=np.float64)
    if t.ndim != 1 or t.size == 0:
        raise ValueError("cycle_times_s must be a non-empty 1-d sequence")
    if np.any(np.diff(t) <= 0):
        raise ValueError("cycle_times_s must be strictly increasing")
    if end_s < start_s:
        raise ValueError(f"job ends ({end_s}) before it starts ({start_s})")
    out = np.empty(t.size, dtype=np.longdouble)
    u = np.longdouble(usage0)
    out[0] = u
    for k in range(1, t.size):
        t0, t1 = t[k - 1], t[k]
        begin = max(t0, start_s)
        if end_s < t1:
            # Ended inside this interval: charged at job end, then decayed with everything else.
            if end_s > t0 and enforce_limits:
                u += np.longdouble(cycle_accrual(end_s - begin, billing, half_life_s, qos_usage_factor))
            u *= np.longdouble(decay_factor(half_life_s, t1 - t0))
        else:
            u *= np.longdouble(decay_factor(half_life_s, t1 - t0))
            if start_s < t1:
                u += np.longdouble(cycle_accrual(t1 - begin, billing, half_life_s, qos_usage_factor))
        out[k] = u
    return out


def charged_usage(start: float, end: float | None, billing: float, last_cycle: float, period_s: float,
                  half_life_s: float, enforce_limits: bool = True) -> float:
    """One job's share of RawUsage at ``last_cycle`` on a regular grid (:func:`replay` of one job).

    Cycles run at ``last_cycle - k * period_s``. A job that ended after ``last_cycle`` has its
    last slice charged undecayed (with ``enforce_limits``).

    Parameters
    ----------
    start, end : float
        Epoch seconds; ``end`` None while running (charged up to ``last_cycle``).
    billing : float
        Billable TRES (per second of run time).
    last_cycle, period_s, half_life_s : float
        The last decay cycle (epoch s), PriorityCalcPeriod and PriorityDecayHalfLife (s).
    enforce_limits : bool
        ``AccountingStorageEnforce`` has ``limits``/``safe``.

    Returns
    -------
    float
        Billing-seconds, decayed to ``last_cycle``.
    """
    stop = math.inf if end is None else float(end)
    jobs = JobTable.of([0], [start], [stop], [billing])
    grid = cycle_grid(last_cycle, period_s, min(float(start), float(last_cycle)))
    policy = UsagePolicy(half_life_s=half_life_s, calc_period_s=period_s, enforce_limits=enforce_limits)
    until = float(last_cycle) if end is None else max(float(end), float(last_cycle))
    return float(replay(jobs, [-1], grid, policy, until=until).per_job[0])


# --------------------------------------------------------------------------------------------
# Closed form on a regular grid from now, at many times (the planner's projections)
# --------------------------------------------------------------------------------------------

Law = Literal["slurm", "continuous"]


def _epochs(times_s: NDArray[np.float64], resets_s: NDArray[np.float64], law: Law,
            calc_period_s: float) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
    """For every time, when its charges begin (0, or the reset epoch's start) and the reset cycle.

    Slurm zeroes usage at the first decay cycle at or after a reset time, before that cycle's
    decay and charges; the charges of that cycle cover ``[previous cycle, cycle]``, so the
    epoch's charges start at the previous cycle. In the continuous model the reset is at its
    own time.
    """
    begin = np.zeros(times_s.shape)  # charges start at the last cycle (now) or at the epoch
    cut = np.full(times_s.shape, -np.inf)
    for r in np.sort(resets_s):
        if law == "slurm":
            cycle = math.ceil(r / calc_period_s - 1e-12) * calc_period_s  # first cycle >= r
            after, start = cycle, cycle - calc_period_s
        else:
            after, start = r, r
        hit = times_s >= after
        begin[hit] = start
        cut[hit] = after
    return begin, cut


def charge_series(
    times_s: ArrayLike,
    start_s: ArrayLike,
    end_s: ArrayLike,
    billing: ArrayLike,
    half_life_s: float,
    calc_period_s: float = 300.0,
    law: Law = "slurm",
    resets_s: ArrayLike = (),
    enforce_limits: bool = True,
) -> NDArray[np.float64]:
    """Raw usage each job has added (and left after decay) at each time, vectorised.

    Parameters
    ----------
    times_s : array_like, shape (m,)
        Times from now in seconds, ``>= 0``. Under the Slurm law, the value at ``t`` is the
        usage right after the last decay cycle at or before ``t``; cycles run at multiples of
        ``calc_period_s`` from now (now is the last cycle).
    start_s, end_s : array_like, shape (J,)
        Job start and end in seconds from now (``end_s`` may be ``inf``).
    billing : array_like, shape (J,)
        Billable TRES per second (times copies and the QOS UsageFactor).
    half_life_s : float
        ``PriorityDecayHalfLife`` in seconds (0: no decay).
    calc_period_s : float
        ``PriorityCalcPeriod`` in seconds (Slurm law only).
    law : {"slurm", "continuous"}
        ``slurm``: Slurm's discrete law (spec 4.2-4.3), each cycle decays by ``d**P`` with
        ``d = 1 - 0.693/HL`` and a running job adds ``B * dt * d**dt``; a job ending between
        cycles is charged at its end and that charge decays with the next cycle. Agrees with
        :func:`job_usage_over_cycles` to rounding. ``continuous``: the exact solution of
        ``du/dt = B - lambda u`` on the job's interval (``lambda = ln 2 / HL``, Yalim 2020).
    resets_s : array_like
        ``PriorityUsageResetPeriod`` reset times in seconds from now.
    enforce_limits : bool
        Slurm law: a job's last slice (last cycle to its end) is charged only with
        ``AccountingStorageEnforce=limits``/``safe``.

    Returns
    -------
    ndarray, shape (J, m)
        Billing TRES-seconds of each job at each time.
    """
    t = np.asarray(times_s, dtype=np.float64)
    s = np.asarray(start_s, dtype=np.float64).reshape(-1, 1)
    e = np.asarray(end_s, dtype=np.float64).reshape(-1, 1)
    b = np.asarray(billing, dtype=np.float64).reshape(-1, 1)
    if np.any(e < s):
        raise ValueError("a job ends before it starts")
    begin, cut = _epochs(t, np.asarray(resets_s, dtype=np.float64), law, calc_period_s)
    s_eff = np.maximum(s, begin)  # (J, m): charges before the epoch were wiped by its reset
    wiped = e <= cut  # ended (and charged) before the reset cycle
    if law == "continuous":
        lam = decay_rate(half_life_s)
        run_end = np.minimum(t, e)
        ran = np.maximum(run_end - s_eff, 0.0)
        if lam == 0.0:
            out = b * ran
        else:
            out = -(b / lam) * np.expm1(-lam * ran) * np.exp(-lam * np.maximum(t - np.maximum(run_end, s_eff), 0.0))
    else:
        out = _slurm_charge(t, s_eff, e, b, half_life_s, calc_period_s, enforce_limits)
    return np.where(wiped, 0.0, out)


def _slurm_charge(t: NDArray[np.float64], s: NDArray[np.float64], e: NDArray[np.float64],
                  b: NDArray[np.float64], half_life_s: float, period: float,
                  enforce_limits: bool = True) -> NDArray[np.float64]:
    """Closed form of Slurm's per-cycle recursion for jobs (rows) at times (columns).

    Cycles are at ``c * period`` (cycle 0 is now). With ``q = d**period`` and
    ``acc(x) = B x d**x``: ``ks``, the first cycle after the start, adds ``acc(t_ks - s)``; each
    later cycle while the job still runs decays by ``q`` and adds ``acc(period)``; ``ke``, the
    first cycle at or after the end, gets the end charge ``acc(e - max(t_ke-1, s))`` (made at
    the end, before that cycle's decay); afterwards the usage only decays.
    """
    d = decay_per_second(half_life_s)
    q = float(decay_factor(half_life_s, period))
    log_q = math.log(q)

    def acc(x: NDArray[np.float64]) -> NDArray[np.float64]:
        x = np.maximum(x, 0.0)
        return b * x * np.power(d, x)

    def qpow(n: NDArray[np.float64]) -> NDArray[np.float64]:
        return np.exp(n * log_q) if q < 1.0 else np.ones_like(n)

    def geo(n: NDArray[np.float64]) -> NDArray[np.float64]:
        return n if q == 1.0 else -np.expm1(n * log_q) / (1.0 - q)

    with np.errstate(invalid="ignore", over="ignore"):
        k = np.floor(t / period + 1e-9)                   # last cycle at or before t
        ks = np.floor(s / period + 1e-9) + 1.0            # first cycle strictly after the start
        ke = np.where(np.isfinite(e), np.floor(e / period + 1e-9) + 1.0, np.inf)  # first cycle > end
        first = acc(ks * period - s)
        full = acc(np.full_like(s, period))

        def running(c: NDArray[np.float64]) -> NDArray[np.float64]:
            n = c - ks  # cycles after the first running one
            return np.where(n >= 0, first * qpow(n) + full * geo(n), 0.0)

        end_charge = acc(e - np.maximum((ke - 1.0) * period, s)) * float(enforce_limits)
        ended = k >= ke
        after = (running(np.where(ended, ke - 1.0, -1.0)) + end_charge) * qpow(np.where(ended, k - ke + 1.0, 0.0))
        out = np.where(ended, after, running(np.minimum(k, ke - 1.0)))
    return np.where(k < ks, 0.0, out)


def decay_series(times_s: ArrayLike, half_life_s: float, calc_period_s: float = 300.0,
                 law: Law = "slurm", resets_s: ArrayLike = ()) -> NDArray[np.float64]:
    """Factor by which usage held now is multiplied at each time (0 after a reset).

    Slurm: ``(d**P)**k`` after ``k`` whole cycles; continuous: ``exp(-lambda t)``.
    """
    t = np.asarray(times_s, dtype=np.float64)
    _, cut = _epochs(t, np.asarray(resets_s, dtype=np.float64), law, calc_period_s)
    if law == "continuous":
        out = np.exp(-decay_rate(half_life_s) * t)
    else:
        q = float(decay_factor(half_life_s, calc_period_s))
        out = np.exp(np.floor(t / calc_period_s + 1e-9) * math.log(q))
    return np.where(np.isfinite(cut), 0.0, out)


