"""Allocation balance over a what-if campaign: pre-debit at start, debit at end, refusals.

API (used by :func:`tui.analysis.scenario.run_scenario`; the pane reads the result's
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

import math
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from tui.allocations.ledger import minutes_from_seconds
from tui.analysis.allocations import allocations_for, budgets_for
from tui.model import AssocTree, Snapshot

__all__ = ["Account", "BalanceRun", "BalanceSeries", "binding_account", "project_balance", "why_no_account"]


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


@dataclass(frozen=True, eq=False)
class BalanceSeries:
    """An account over the horizon."""

    account: Account
    balance: np.ndarray
    """SU a new job could still take at each step (after the events at or before it)."""
    held: np.ndarray
    """SU held by the campaign's running pre-debits at each step."""
    started: tuple[bool, ...]
    """Per run (in the order given): whether it was allowed to start."""
    refused: tuple[tuple[int, float], ...]
    """``(job index, hours from now)`` of every refused run."""

    @property
    def runs_out_h(self) -> float | None:
        """Hours from now of the first refusal (None: none within the horizon)."""
        return self.refused[0][1] if self.refused else None


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
        return Account("allocation", f"allocation {a.allocation_id} of {a.project}", "billing",
                       st.remaining * 60.0, 0.0, ends)
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
        One entry per copy; a run refused at its start neither holds nor debits.
    t_s : array
        Sample times, seconds from now.
    decay : callable, optional
        ``decay(times_s)`` -> factor by which usage present now is multiplied at those times
        (budgets: Slurm's decay); None: no decay (allocations).
    """
    t = np.asarray(t_s, dtype=np.float64)
    budget = account.kind == "budget"
    dec = decay if (budget and decay is not None) else (lambda x: np.ones_like(np.asarray(x, dtype=np.float64)))
    order = sorted(range(len(runs)), key=lambda i: (runs[i].start_s, i))
    holds = np.zeros(len(runs))
    debits = np.zeros(len(runs))
    started = [False] * len(runs)
    refused: list[tuple[int, float]] = []
    # Ledger: what is free = start - holds of running runs - debits of ended ones.
    # Budget: free = limit - used(t) - holds of running runs, used(t) = decayed used + decayed debits.
    limit = account.available_minutes + account.used_minutes
    for i in order:
        r = runs[i]
        if budget:
            hold = math.floor(r.per_s) * r.walltime_s / 60.0  # (uint64) TRES count x time limit
            debit = r.per_s * (r.end_s - r.start_s) / 60.0
        else:
            hold = float(minutes_from_seconds(math.ceil(r.per_s * r.walltime_s - 1e-9)))
            debit = min(hold, float(minutes_from_seconds(math.ceil(r.per_s * (r.end_s - r.start_s) - 1e-9))))
        free = _free(account, limit, runs, started, holds, debits, r.start_s, dec)
        expired = account.ends_s is not None and r.start_s > account.ends_s
        if hold > free + 1e-9 or expired:
            refused.append((r.job, r.start_s / 3600.0))
            continue
        started[i] = True
        holds[i], debits[i] = hold, debit
    bal = np.array([_free(account, limit, runs, started, holds, debits, x, dec) for x in t]) / 60.0
    held = np.array([sum(holds[i] for i, r in enumerate(runs) if started[i] and r.start_s <= x < r.end_s)
                     for x in t]) / 60.0
    return BalanceSeries(account, bal, held, tuple(started), tuple(refused))


def _free(account: Account, limit: float, runs: list[BalanceRun], started: list[bool], holds: np.ndarray,
          debits: np.ndarray, at: float, dec: Callable[[np.ndarray], np.ndarray]) -> float:
    """Minutes a new pre-debit may take at ``at`` (after every end and start at or before it)."""
    held = sum(holds[i] for i, r in enumerate(runs) if started[i] and r.start_s <= at < r.end_s)
    ended = [i for i, r in enumerate(runs) if started[i] and r.end_s <= at]
    if account.kind != "budget":
        return float(account.available_minutes - held - float(sum(debits[i] for i in ended)))
    d_at = float(dec(np.array([at]))[0])
    used = account.used_minutes * d_at
    if ended:
        ends = np.array([runs[i].end_s for i in ended])
        used += float(np.sum(debits[ended] * d_at / dec(ends)))
    return float(limit - used - held)

