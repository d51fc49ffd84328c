"""Policy replay: a snapshot's jobs of the last days under another policy, and what it does to
every association's RawUsage, FairShare and rank.

The jobs in the window are replayed with Slurm's usage law (:func:`tui.engine.usage_law.replay`)
twice, under the snapshot's own policy and under the new one. What the window's jobs do not
explain (older jobs, a usage reset, purged records: ``printed - own replay``, the *residual*)
is carried over: decayed as the new policy would have decayed it from the window's start when
it exceeds the replay's own noise (one period's decay, ``1 - d**P``, as in
:func:`tui.analysis.history.check_raw_usage`), else as it is. So

    replayed = new replay + residual * (d_new**t_new / d_old**t_old)

and a replay under the snapshot's own policy gives back the printed RawUsage exactly (then
sshare's printed columns stand, as in ``fairtop report``). ``switch_at``: the old policy up to
that time, then the new one, usage carried over as Slurm carries it across a restart (kept and
decayed from the switch's cycle by the new half-life; the grid re-anchored there).

Pure: arrays in, arrays out; no I/O, no clock, no Textual.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone, tzinfo

import numpy as np
from numpy.typing import NDArray

from tui.analysis.job_columns import JobColumns, job_columns
from tui.engine import compute
from tui.engine.billing import BillingMode
from tui.engine.result import FairshareResult
from tui.engine.usage_law import (
    JobTable,
    UsagePolicy,
    anchored_cycles,
    cycle_grid,
    logged_grid,
    replay,
    reset_boundaries,
)
from tui.model import USE_PARENT, AssocTree, Snapshot
from tui.sources.errors import InputError

__all__ = ["JobColumns", "PolicyChange", "PolicyReplay", "ReplayBase", "job_columns", "parse_shares",
           "policy_replay", "prepare_replay", "replay_policy", "replay_rows", "RESET_PERIODS"]

RESET_PERIODS = ("NONE", "DAILY", "WEEKLY", "MONTHLY", "QUARTERLY", "YEARLY")


# --------------------------------------------------------------------------------------------
# The policy change
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class PolicyChange:
    """What a replay changes; None (or empty) keeps the snapshot's own.

    ``billing``: partition -> whole TRESBillingWeights (per base unit); ``qos_usage_factor``:
    QOS -> UsageFactor (added to the snapshot's); ``shares``: (account, user or "") -> raw
    shares (:data:`tui.model.USE_PARENT` for ``parent``).
    """

    half_life_s: float | None = None
    calc_period_s: float | None = None
    reset_period: str | None = None
    algorithm: str | None = None
    damping: float | None = None
    billing: Mapping[str, Mapping[str, float]] = field(default_factory=dict)
    max_tres: bool | None = None
    enforce_limits: bool | None = None
    qos_usage_factor: Mapping[str, float] = field(default_factory=dict)
    shares: Mapping[tuple[str, str], int] = field(default_factory=dict)

    def policy(self, old: UsagePolicy) -> UsagePolicy:
        """``old`` with this change applied."""
        mode: BillingMode = old.billing_mode
        if self.max_tres is not None:
            mode = "max_tres" if self.max_tres else "sum"
        return replace(
            old,
            half_life_s=old.half_life_s if self.half_life_s is None else float(self.half_life_s),
            calc_period_s=old.calc_period_s if self.calc_period_s is None else float(self.calc_period_s),
            reset_period=old.reset_period if self.reset_period is None else self.reset_period.upper(),
            enforce_limits=old.enforce_limits if self.enforce_limits is None else self.enforce_limits,
            qos_usage_factor={**old.qos_usage_factor, **self.qos_usage_factor},
            tres_weights={**old.tres_weights, **{k: dict(v) for k, v in self.billing.items()}},
            billing_mode=mode)


def parse_shares(text: str, tree: AssocTree, source: str = "shares") -> dict[tuple[str, str], int]:
    """``ACCOUNT[/USER] SHARES`` lines (``#`` comments; SHARES a whole number >= 0 or ``parent``).

    Raises
    ------
    InputError
        A malformed line or an association the tree does not have, with its line number.
    """
    known = {(str(tree.account[i]), str(tree.user[i])) for i in range(tree.size)}
    out: dict[tuple[str, str], int] = {}
    for no, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split()
        if len(parts) != 2:
            raise InputError(source, f"expected 'ACCOUNT[/USER] SHARES', got {raw.strip()[:60]!r}", no)
        name, shares = parts
        account, _, user = name.partition("/")
        if (account, user) not in known:
            raise InputError(source, f"no association {name!r} in this cluster", no)
        if shares.lower() == "parent":
            out[(account, user)] = USE_PARENT
        elif shares.isascii() and shares.isdigit():
            out[(account, user)] = int(shares)
        else:
            raise InputError(source, f"SHARES must be a whole number >= 0 or 'parent', not {shares!r}", no)
    return out


# --------------------------------------------------------------------------------------------
# The replay
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class PolicyReplay:
    """Now (the snapshot's own policy) and replayed, row for row of the snapshot's tree."""

    now_tree: AssocTree
    now: FairshareResult
    tree: AssocTree
    """The replayed tree: its usage (and shares) under the new policy."""
    result: FairshareResult
    algorithm: str
    damping: float
    old: UsagePolicy
    new: UsagePolicy
    at: datetime
    since: datetime
    jobs: int
    unchanged: bool
    """Nothing changed (usage, shares, algorithm, dampening): sshare's printed columns stand."""
    residual: NDArray[np.float64]
    """Printed RawUsage minus the window's jobs under the snapshot's own policy (at ``at``)."""
    tolerance: NDArray[np.float64]
    """Where ``|residual|`` is within it, it is the replay's noise (:attr:`ReplayBase.grid_text`)."""
    notes: tuple[str, ...] = ()
    grid_text: str = ""
    """Which cycles the own-policy replay ran on, and the tolerance that implies (:attr:`ReplayBase.grid_text`)."""


def _grid(policy: UsagePolicy, last: float, since: float, anchor: float | None) -> NDArray[np.float64]:
    if anchor is None:
        return cycle_grid(last, policy.calc_period_s, since)
    return anchored_cycles([anchor], policy.calc_period_s, last)


def _log_decay(policy: UsagePolicy) -> float:
    d = policy.decay
    return math.log(d) if d < 1.0 else 0.0


@dataclass(frozen=True, eq=False)
class ReplayBase:
    """What every replay of one snapshot and window shares (:func:`prepare_replay`): the jobs under
    the snapshot's own law, the residual, and the fairshare now. Computed once per session."""

    snap: Snapshot
    tree: AssocTree
    jobs: JobColumns
    since: datetime
    old: UsagePolicy
    last: float
    """The last old cycle at or before ``at`` (epoch s)."""
    until: float
    when: float
    grid: NDArray[np.float64]
    table: JobTable
    tz: tzinfo | None
    rebuilt: NDArray[np.float64]
    residual: NDArray[np.float64]
    noise: NDArray[np.float64]
    now_tree: AssocTree
    now: FairshareResult
    at_capture: bool
    """``at`` is the snapshot's own time: "now" is sshare's printed usage."""
    logged: bool = False
    """The grid is slurmctld's own logged decay cycles over the whole window."""
    grid_text: str = ""
    """Which grid, in words, with the tolerance it implies: logged cycles (RawUsage within 1e-6
    relative + 1 of sshare) or an assumed grid (within ``1 - d**P`` relative + 1)."""


def prepare_replay(snap: Snapshot, jobs: JobColumns, since: datetime, last_cycle: datetime | None = None,
                   at: datetime | None = None, cycles: Sequence[float] | None = None) -> ReplayBase:
    """The jobs from ``since`` to ``at`` under the snapshot's own policy (see the module docstring).

    Parameters
    ----------
    snap : Snapshot
        A Slurm snapshot: its tree's RawUsage (at ``snap.taken_at``), settings and partitions.
    jobs : JobColumns
        Every job that ran in the window (:func:`job_columns`).
    since : datetime
        The window's start: jobs' time before it is not replayed (it is in the residual).
    last_cycle : datetime, optional
        The last decay cycle before the capture (default ``snap.taken_at``); the grid ends there.
    at : datetime, optional
        When to read the usage, ``<= snap.taken_at`` (default the snapshot's time).
    cycles : sequence of float, optional
        slurmctld's own decay cycles (epoch s, from its log with ``DebugFlags=Priority``:
        :mod:`tui.sources.ctld_log`). When they cover the window and end on ``last_cycle``, the
        own policy runs on them (restarts and all) and the residual's noise is ``1e-6`` relative
        + 1; else on a regular grid back from ``last_cycle`` (``1 - d**P`` relative + 1), and
        ``grid_text`` says why.

    Raises
    ------
    ValueError
        Not a Slurm snapshot, ``at`` after the snapshot or not after ``since``.
    """
    tree = snap.tree
    if tree is None:
        raise ValueError("not a Slurm snapshot: a replay needs the association tree")
    taken = snap.taken_at.timestamp()
    L = float(math.floor((last_cycle or snap.taken_at).timestamp()))
    when = taken if at is None else at.timestamp()
    if when > taken + 1e-6:
        raise ValueError(f"--at {at} is after the snapshot ({snap.taken_at}): its jobs are not known")
    T0 = since.timestamp()
    if when <= T0:
        raise ValueError("the window is empty: --at is not after its start")
    old = UsagePolicy.of(snap.settings, snap.partitions)
    P = old.calc_period_s
    full, why = (None, "no slurmctld log saved") if not cycles else logged_grid(
        cycles, None if last_cycle is None else last_cycle.timestamp(), taken, T0,
        float(jobs.jobs.start.min()) if jobs.size else T0)
    logged = full is not None
    if full is None:
        full = cycle_grid(L, P, T0)
    L = float(full[-1])
    k = max(int(np.searchsorted(full, when, side="right")) - 1, 0)
    La = float(full[k])  # the last old cycle at or before --at
    until = when if when >= L else La
    grid = full[:k + 1]
    c0 = float(grid[0])
    table = jobs.table(old, c0)
    tz = snap.zone if snap.zone is not None else snap.taken_at.astimezone().tzinfo  # reset midnights
    rebuilt = replay(table, tree.parent, grid, old, until=until,
                     resets=reset_boundaries(old.reset_period, c0, La, tz)).usage
    # The residual (what the window's jobs do not explain), read at the capture's cycle, then at --at.
    printed = np.asarray(tree.usage_raw, dtype=np.float64)
    if La == L:
        residual = printed - rebuilt
    else:
        at_capture = replay(table, tree.parent, full, old, until=taken,
                            resets=reset_boundaries(old.reset_period, c0, L, tz)).usage
        residual = (printed - at_capture) * math.exp(-_log_decay(old) * (L - La))
    slack = 1e-6 if logged else 1.0 - old.decay ** P
    noise = slack * np.maximum(np.abs(printed), np.abs(rebuilt)) + 1.0
    if logged:
        text = (f"slurmctld's logged decay cycles ({full.size:,} in the window): the own policy's RawUsage "
                "within 1e-6 relative + 1 of sshare's")
    else:
        text = (f"assumed, every {P:g} s back from the {'last cycle' if last_cycle is not None else 'snapshot'} "
                f"({why}): the own policy's RawUsage within 1 - d^P = {slack:.2g} relative + 1 of sshare's")
    now_tree = tree if La == L else replace(tree, usage_raw=np.maximum(rebuilt + residual, 0.0).astype(np.longdouble))
    return ReplayBase(snap, tree, jobs, since, old, La, until, when, grid, table, tz, rebuilt, residual, noise,
                      now_tree, compute(now_tree, snap.settings.algorithm, snap.settings.dampening), La == L, logged,
                      text)


def policy_replay(snap: Snapshot, jobs: JobColumns, change: PolicyChange, since: datetime,
                  last_cycle: datetime | None = None, at: datetime | None = None,
                  switch_at: datetime | None = None, cycles: Sequence[float] | None = None) -> PolicyReplay:
    """:func:`prepare_replay`, then :func:`replay_policy` of ``change``."""
    return replay_policy(prepare_replay(snap, jobs, since, last_cycle, at, cycles), change, switch_at)


def replay_policy(base: ReplayBase, change: PolicyChange, switch_at: datetime | None = None) -> PolicyReplay:
    """The window's jobs under ``change`` (counterfactual, or switched at ``switch_at``): one run of
    the law over the kept columns, the residual carried, the engine on the result.

    Raises
    ------
    ValueError
        ``switch_at`` outside the window.
    """
    tree, old, La, c0 = base.tree, base.old, base.last, float(base.grid[0])
    new = change.policy(old)
    same = new == old
    notes: list[str] = []
    if switch_at is None:
        start, carried = c0, np.zeros(tree.size)
        # the same calc period: the cluster's own cycles (logged ones keep their restarts)
        g_new = base.grid if new.calc_period_s == old.calc_period_s else _grid(new, La, c0, None)
    else:
        s = switch_at.timestamp()
        if not c0 < s <= La:
            raise ValueError(f"--switch-at {switch_at} is outside the replayed window "
                             f"({base.since} to {datetime.fromtimestamp(base.when, timezone.utc)})")
        start = float(base.grid[np.searchsorted(base.grid, s, side="right") - 1])  # the old cycle at or before it
        before = base.grid[base.grid <= start]
        carried = replay(base.table, tree.parent, before, old, until=start,
                         resets=reset_boundaries(old.reset_period, c0, start, base.tz)).usage if before.size > 1 \
            else np.zeros(tree.size)
        g_new = _grid(new, La, start, start)
    new_resets = reset_boundaries(new.reset_period, start, float(g_new[-1]), base.tz)
    last_new = float(g_new[-1])
    lo, ln = _log_decay(old), _log_decay(new)
    carry = 0.0 if new_resets.size else math.exp(ln * (last_new - start))
    if same and switch_at is None:
        rebuilt_new = base.rebuilt
    else:
        table = base.table if same else base.jobs.table(new, start)
        rebuilt_new = replay(table, tree.parent, g_new, new, until=base.until, resets=new_resets).usage
        rebuilt_new = rebuilt_new + carried * carry
    residual = base.residual
    real = np.abs(residual) > base.noise
    if switch_at is None:
        scale = 0.0 if new_resets.size else math.exp(ln * (last_new - c0) - lo * (La - c0))
    else:
        scale = carry * math.exp(-lo * (La - start))  # old decay up to the switch, the new one after
    replayed = np.maximum(np.where(real, rebuilt_new + residual * scale, rebuilt_new + residual), 0.0)
    if np.any(real) and scale != 1.0:
        notes.append(f"{int(np.count_nonzero(real))} association(s) had usage from before the window "
                     f"({base.since.isoformat(timespec='minutes')}): carried, decayed as the new policy decays it")
    if new_resets.size and switch_at is None:
        notes.append(f"PriorityUsageResetPeriod={new.reset_period}: usage before the window is wiped by its reset")
    if old.reset_period not in ("NONE", new.reset_period) and reset_boundaries(old.reset_period, c0, La,
                                                                                 base.tz).size:
        notes.append(f"the snapshot's own PriorityUsageResetPeriod={old.reset_period} wiped usage in the window: "
                     "older usage is not known to the replay")
    if np.any(base.table.row < 0):
        notes.append(f"{int(np.count_nonzero(base.table.row < 0))} job(s) of associations not in the tree "
                     "(deleted or renamed) are left out")
    shares = tree.shares_raw
    if change.shares:
        shares = shares.copy()
        index = {(str(tree.account[i]), str(tree.user[i])): i for i in range(tree.size)}
        for key, value in change.shares.items():
            shares[index[key]] = value
    if same and switch_at is None:
        usage = np.asarray(base.now_tree.usage_raw, dtype=np.longdouble)  # bit for bit: the same law, same jobs
    else:
        usage = np.floor(replayed).astype(np.longdouble)  # as sshare prints (and Slurm keeps) it: whole
    new_tree = replace(tree, usage_raw=usage, shares_raw=shares)
    settings = base.snap.settings
    algorithm = change.algorithm or settings.algorithm
    damping = float(change.damping if change.damping is not None else settings.dampening)
    unchanged = (base.at_capture and not change.shares and algorithm == settings.algorithm
                 and damping == settings.dampening and bool(np.array_equal(usage, base.now_tree.usage_raw)))
    result = base.now if unchanged else compute(new_tree, algorithm, damping)
    return PolicyReplay(base.now_tree, base.now, new_tree, result, algorithm, damping, old, new,
                        datetime.fromtimestamp(base.when, timezone.utc), base.since, int(base.table.size), unchanged,
                        residual, base.noise, tuple(notes), base.grid_text)


# --------------------------------------------------------------------------------------------
# Now against replayed, per association
# --------------------------------------------------------------------------------------------


def _user_rank(tree: AssocTree, result: FairshareResult) -> NDArray[np.int64]:
    """Users' rank as ``fairtop report`` prints it (N = the best): Fair Tree's own; under classic by
    FairShare (ties share the better rank). 0 for accounts."""
    if result.rank is not None:
        return np.asarray(result.rank, dtype=np.int64)
    users = np.flatnonzero(np.asarray(tree.is_user, dtype=bool))
    rank = np.zeros(tree.size, dtype=np.int64)
    fs = np.asarray(result.fairshare, dtype=np.float64)[users]
    rank[users] = np.searchsorted(np.sort(fs), fs, side="right")
    return rank


def replay_rows(done: PolicyReplay) -> list[dict[str, object]]:
    """One row per association (root excluded), sorted by the move (largest gain in FairShare first,
    then by name): account, user, raw_usage now/replayed, fairshare now/replayed, rank now/replayed
    (users: N = the highest FairShare, as ``fairtop report``), move (FairShare replayed - now),
    rank_move (places gained)."""
    tree = done.tree
    fs_now = np.asarray(done.now.fairshare, dtype=np.float64)
    fs_new = np.asarray(done.result.fairshare, dtype=np.float64)
    r_now, r_new = _user_rank(done.now_tree, done.now), _user_rank(tree, done.result)
    out: list[dict[str, object]] = []
    for i in range(1, tree.size):
        user = bool(tree.is_user[i])
        a, b = float(fs_now[i]), float(fs_new[i])
        move = b - a if math.isfinite(a) and math.isfinite(b) else None
        out.append({"account": str(tree.account[i]), "user": str(tree.user[i]),
                    "raw_usage": int(done.now_tree.usage_raw[i]), "raw_usage_replayed": int(tree.usage_raw[i]),
                    "fairshare": round(a, 6) if math.isfinite(a) else None,
                    "fairshare_replayed": round(b, 6) if math.isfinite(b) else None,
                    "rank": int(r_now[i]) if user else None, "rank_replayed": int(r_new[i]) if user else None,
                    "move": None if move is None else round(move, 6),
                    "rank_move": int(r_new[i] - r_now[i]) if user else None})
    out.sort(key=lambda r: (-(r["move"] if isinstance(r["move"], float) else -math.inf),
                            str(r["account"]), str(r["user"])))
    return out
