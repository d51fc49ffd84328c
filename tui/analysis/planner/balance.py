"""Allocation balance over a what-if campaign: pre-debit at start, debit at end, refusals.

API (used by :func:`tui.analysis.planner.run.run_scenario`; the pane reads the result's
``AssocSeries.balance``):

* :func:`binding_account(snapshot, tree, row, now)` -> :class:`Account` or None: the allocation (seed
  004 / HADM, ``Snapshot.allocations``) or Slurm budget (GrpTRESMins, ``Snapshot.budgets``) that
  binds an association, with its starting balance; None when the source has neither (the balance is
  then *unknown*, and :func:`why_no_account` says why).
* :func:`project_balance(account, runs, t_s, decay)` -> :class:`BalanceSeries`: replays the runs in
  time order like the ledger does.

The rules (``tui/allocations/ledger.py``; seed 004):

* an allocation counts integer resource-minutes; a run's pre-debit at its start is
  ``minutes_from_seconds(ceil(billing/s x walltime))`` (seconds round *up*), refused when it exceeds
  the balance (the job does not run), or when no allocation period covers the day;
* at its end the actual minutes (``billing/s x run time``, capped at the pre-debit) are debited and the
  rest is returned;
* a Slurm budget (GrpTRESMins) holds ``(uint64) TRES x time limit [min]`` of a starting job against
  ``limit - used - running``; Slurm holds the job (AssocGrp*Minutes) when that does not fit; ``used``
  decays with PriorityDecayHalfLife, as Slurm's usage does (``decay`` gives the factors).

Balances are in SU (resource-hours = minutes / 60). No Textual here.
"""

from __future__ import annotations

import heapq
import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from tui.allocations.ledger import minutes_from_seconds
from tui.analysis.allocations import allocations_for, budgets_for
from tui.model import AssocTree, Snapshot

__all__ = ["Account", "BalanceRun", "BalanceSeries", "binding_account", "project_balance", "site_series",
           "why_no_account"]


@dataclass(frozen=True)
class Account:
    """What a campaign's runs are debited from."""

    kind: str
    """``allocation`` (ledger, SU) or ``budget`` (Slurm GrpTRESMins)."""
    label: str
    """E.g. ``allocation 1003 of chem_lab`` or ``GrpTRESMins billing of chem``."""
    tres: str
    """``billing`` (or a TRES such as ``cpu``, ``gres/gpu`` for a budget on it)."""
    available_minutes: float
    """What a new pre-debit may take now: remaining balance (allocation) or
    ``limit - used - running`` (budget)."""
    used_minutes: float = 0.0
    """Budget only: the decayed usage now (it decays; the limit does not)."""
    ends_s: float | None = None
    """Allocation only: seconds from now to the end of its period (no pre-debit after it)."""
    granted_minutes: float | None = None
    """Allocation only: the grant (seed 004's credit factor is what is left of it)."""
    latest_end_s: float | None = None
    """Allocation only: seconds from now to the latest end of any active allocation (the temporal
    factor's ``max_j dt_j``)."""
    pace_su_per_day: float | None = None
    """Allocation only: the group's own use so far, SU per day since its start (None: unknown)."""


@dataclass(frozen=True)
class BalanceRun:
    """One copy of one job run, as the account sees it."""

    job: int
    start_s: float
    end_s: float
    """Actual end (start + run time)."""
    per_s: float
    """TRES charged per second (billing per second for a billing account)."""
    walltime_s: float
    copies: int = 1
    """Identical copies starting together (each its own pre-debit)."""


@dataclass(frozen=True, eq=False)
class BalanceSeries:
    """An account over the horizon."""

    account: Account
    balance: np.ndarray
    """SU a new job could still take at each step (after the events at or before it)."""
    held: np.ndarray
    """SU held by the campaign's running pre-debits at each step."""
    started: tuple[bool, ...]
    """Per copy (runs in the order given, each run's copies in turn): whether it was allowed to start."""
    refused: tuple[tuple[int, float], ...]
    """``(job index, hours from now)`` of every refused run."""

    @property
    def runs_out_h(self) -> float | None:
        """Hours from now of the first refusal (None: none within the horizon)."""
        return self.refused[0][1] if self.refused else None

    def runs_out_with_pace_h(self, t_hours: np.ndarray) -> float | None:
        """First sampled hour at which the balance minus the group's own pace since its start (SU
        per day, :attr:`Account.pace_su_per_day`) is gone; None if it lasts or the pace is unknown."""
        pace = self.account.pace_su_per_day
        if not pace:
            return None
        hit = np.flatnonzero(self.balance - pace * np.asarray(t_hours) / 24.0 <= 0)
        return float(t_hours[hit[0]]) if hit.size else None


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def binding_account(snap: Snapshot, tree: AssocTree, row: int, now: datetime) -> Account | None:
    """The allocation or Slurm budget a job of ``row`` is debited from.

    An allocation of the row's account or an account above it (the nearest, active now) comes
    first; else the tightest Slurm budget on the row's path whose usage is known.
    """
    path_accounts = []
    r = row
    while r >= 0:
        path_accounts.append(str(tree.account[r]))
        r = int(tree.parent[r])
    now = _aware(now)
    allocs = [s for s in allocations_for(snap.allocations, tree, row, now)
              if (s.allocation.start is None or _aware(s.allocation.start) <= now)
              and (s.allocation.end is None or now <= _aware(s.allocation.end))]
    if allocs:
        st = min(allocs, key=lambda s: path_accounts.index(s.project))
        a = st.allocation
        ends = None if a.end is None else (_aware(a.end) - now).total_seconds()
        active_ends = [(_aware(x.end) - now).total_seconds() for x in snap.allocations
                       if x.end is not None and _aware(x.end) >= now and (x.start is None or _aware(x.start) <= now)]
        return Account("allocation", f"allocation {a.allocation_id} of {a.project}", "billing",
                       st.remaining * 60.0, 0.0, ends, a.granted_su * 60.0, max(active_ends, default=None),
                       st.burn_per_day)
    known = [b for b in budgets_for(snap.budgets, tree, row) if b.used_minutes is not None]
    if not known:
        return None
    b = min(known, key=lambda b: b.limit_minutes - (b.used_minutes or 0) - (b.running_minutes or 0))
    who = f"{b.account}/{b.user}" if b.user else b.account
    used = float(b.used_minutes or 0)
    return Account("budget", f"GrpTRESMins {b.tres} of {who}", b.tres,
                   b.limit_minutes - used - float(b.running_minutes or 0), used)


def why_no_account(snap: Snapshot, tree: AssocTree, row: int) -> str:
    """Why :func:`binding_account` found nothing (for the answers: never a silent "no limit")."""
    limits_only = [b for b in budgets_for(snap.budgets, tree, row) if b.used_minutes is None]
    if limits_only:
        return ("balance unknown: the source prints the GrpTRESMins limit but not the usage "
                "(scontrol show assoc_mgr has it)")
    if snap.allocations or snap.budgets:
        return "no allocation or GrpTRESMins budget binds this association: no balance to debit"
    return "balance unknown: the source has no allocations and no GrpTRESMins budgets"


def project_balance(account: Account, runs: list[BalanceRun], t_s: np.ndarray,
                    decay: Callable[[np.ndarray], np.ndarray] | None = None) -> BalanceSeries:
    """Replay ``runs`` against ``account`` and sample the balance at ``t_s`` (seconds from now).

    Parameters
    ----------
    account : Account
    runs : list of BalanceRun
        A copy refused at its start neither holds nor debits; of a run's copies, as many start as
        the balance covers, one pre-debit after the other.
    t_s : array
        Sample times, seconds from now.
    decay : callable, optional
        ``decay(times_s)`` -> factor by which usage present now is multiplied at those times
        (budgets: Slurm's decay); None: no decay (allocations).
    """
    t = np.asarray(t_s, dtype=np.float64)
    budget = account.kind == "budget"

    def dec(x: np.ndarray) -> np.ndarray:
        if budget and decay is not None:
            return np.maximum(np.asarray(decay(np.asarray(x, dtype=np.float64)), dtype=np.float64), 1e-300)
        return np.ones(np.shape(x))

    n = len(runs)
    start = np.array([r.start_s for r in runs], dtype=np.float64)
    end = np.array([r.end_s for r in runs], dtype=np.float64)
    if budget:  # (uint64) TRES count x time limit in minutes; usage accrues the double
        hold = np.array([math.floor(r.per_s) * r.walltime_s / 60.0 for r in runs])
        debit = np.array([r.per_s * (r.end_s - r.start_s) / 60.0 for r in runs])
    else:  # the ledger: seconds round up to whole minutes, the debit capped at the pre-debit
        hold = np.array([float(minutes_from_seconds(math.ceil(r.per_s * r.walltime_s - 1e-9))) for r in runs])
        debit = np.minimum(hold, [float(minutes_from_seconds(math.ceil(r.per_s * (r.end_s - r.start_s) - 1e-9)))
                                  for r in runs])
    d_end = dec(end) if n else np.zeros(0)
    limit = account.available_minutes + account.used_minutes
    count = np.zeros(n)  # copies of each run that started
    refused: list[tuple[int, float]] = []
    active: list[tuple[float, int]] = []  # (end, run) of started runs still holding
    held = ended_debits = 0.0  # ledger: debits so far; budget: sum of debit / D(end)
    for i in sorted(range(n), key=lambda k: (start[k], k)):
        while active and active[0][0] <= start[i]:
            _, j = heapq.heappop(active)
            held -= hold[j] * count[j]
            ended_debits += count[j] * (debit[j] / d_end[j] if budget else debit[j])
        if budget:
            d_now = float(dec(np.array([start[i]]))[0])
            free = limit - d_now * (account.used_minutes + ended_debits) - held
        else:
            free = account.available_minutes - held - ended_debits
        copies = runs[i].copies
        if account.ends_s is not None and start[i] > account.ends_s:
            fit = 0
        elif hold[i] <= 0:
            fit = copies
        else:
            fit = int(min(copies, max(0.0, math.floor((free + 1e-9) / hold[i]))))
        refused.extend([(runs[i].job, float(start[i]) / 3600.0)] * (copies - fit))
        if fit:
            count[i] = fit
            held += hold[i] * fit
            heapq.heappush(active, (float(end[i]), i))
    refused.sort(key=lambda x: x[1])
    # sample: held(t) = holds started by t minus those ended by t; debits ended by t
    s_order, e_order = np.argsort(start, kind="stable"), np.argsort(end, kind="stable")
    cum_hold_s = np.concatenate([[0.0], np.cumsum((hold * count)[s_order])])
    cum_hold_e = np.concatenate([[0.0], np.cumsum((hold * count)[e_order])])
    per_end = count * (debit / d_end if budget else debit)
    cum_debit_e = np.concatenate([[0.0], np.cumsum(per_end[e_order])])
    s_sorted, e_sorted = start[s_order], end[e_order]
    k_s = np.searchsorted(s_sorted, t, side="right")
    k_e = np.searchsorted(e_sorted, t, side="right")
    held_t = cum_hold_s[k_s] - cum_hold_e[k_e]
    if budget:
        free_t = limit - dec(t) * (account.used_minutes + cum_debit_e[k_e]) - held_t
    else:
        free_t = account.available_minutes - held_t - cum_debit_e[k_e]
    started = tuple(k < count[i] for i, r in enumerate(runs) for k in range(r.copies))
    return BalanceSeries(account, free_t / 60.0, held_t / 60.0, started, tuple(refused))


def site_series(b: BalanceSeries, t_s: np.ndarray, scale: float, rule: str = "power") -> np.ndarray | None:
    """Seed 004's site factor of an allocation at each step, times ``scale`` (the SiteFactor at 1).

    The credit factor is what is left of the grant (``1 - used/granted``, the campaign's holds and
    debits included); the temporal factor ``1 - dt/max_j dt_j`` with ``dt`` the time to this
    allocation's end and ``max_j`` the latest end among the active allocations (:mod:`tui.engine.site_factor`).
    None when the account is not a dated allocation.
    """
    from tui.engine.site_factor import credit_factor, power_rule, sigmoid_rule

    a = b.account
    if a.kind != "allocation" or not a.granted_minutes or a.ends_s is None or not a.latest_end_s:
        return None
    t = np.asarray(t_s, dtype=np.float64)
    fc = credit_factor(a.granted_minutes - b.balance * 60.0, a.granted_minutes)
    longest = np.maximum(a.latest_end_s - t, 0.0)
    dt = np.maximum(a.ends_s - t, 0.0)
    ft = np.where(longest > 0, np.clip(1.0 - dt / np.where(longest > 0, longest, 1.0), 0.0, 1.0), 1.0)
    s = power_rule(fc, ft) if rule == "power" else sigmoid_rule(fc, ft)
    out: np.ndarray = scale * s
    return out
