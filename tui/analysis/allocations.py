"""Service-unit allocations as the allocations pane shows them: balance, burn rate, exhaustion.

Pure arithmetic over :class:`tui.model.Allocation` (SU = billing-hours). The burn rate is the
debited use over the elapsed part of the allocation period, and the projection assumes that rate
goes on; pre-debits (held for running jobs) count against the balance but not the rate, since
they are not spent yet. No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

from tui.model import Allocation, AssocTree, Budget, path_to

__all__ = ["AllocationStatus", "allocation_status", "allocations_for", "balance_bar", "BAR_CHARS", "budget_line",
           "budgets_for"]

#: Characters of the balance bar: used, pre-debited, remaining (distinct without colour).
BAR_CHARS = ("█", "▒", "░")


@dataclass(frozen=True)
class AllocationStatus:
    """One allocation's balance and where it is heading, at ``now``."""

    allocation: Allocation
    now: datetime
    granted: float
    used: float
    pre_debited: float
    remaining: float
    """granted - used - pre-debited (negative when overdrawn)."""
    elapsed_days: float | None
    """Days from the start to ``now`` (capped at the end); None without a start date."""
    burn_per_day: float | None
    """SU per day over the elapsed period; None when it cannot be known (no start, not begun)."""
    exhaustion: datetime | None
    """When the remaining SU run out at the burn rate: None if the rate is 0 or unknown or
    exhaustion falls after the end; ``now`` if nothing remains."""
    by_user: tuple[tuple[str, float], ...]
    """Debited SU per user, largest first (ties by name)."""
    failures: int

    @property
    def project(self) -> str:
        return self.allocation.project

    @property
    def exhausted(self) -> bool:
        return self.remaining <= 0

    def fractions(self) -> tuple[float, float, float]:
        """Used, pre-debited and remaining shares of the grant, each clipped to [0, 1]."""
        if self.granted <= 0:
            return (0.0, 0.0, 0.0)
        used = min(max(self.used / self.granted, 0.0), 1.0)
        pre = min(max(self.pre_debited / self.granted, 0.0), 1.0 - used)
        return used, pre, max(0.0, 1.0 - used - pre)


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def allocation_status(alloc: Allocation, now: datetime) -> AllocationStatus:
    """Balance, burn rate and projected exhaustion of ``alloc`` at ``now``.

    Parameters
    ----------
    alloc : Allocation
        Granted, used (debited) and pre-debited SU, start and end.
    now : datetime
        The snapshot's time (naive values are taken as UTC).
    """
    now = _aware(now)
    start = _aware(alloc.start) if alloc.start else None
    end = _aware(alloc.end) if alloc.end else None
    remaining = alloc.remaining_su
    elapsed = burn = None
    if start is not None:
        upto = min(now, end) if end is not None else now
        elapsed = max(0.0, (upto - start).total_seconds() / 86400)
        burn = alloc.used_su / elapsed if elapsed > 0 else None
    exhaustion = None
    if remaining <= 0:
        exhaustion = now
    elif burn:
        when = now + timedelta(days=remaining / burn)
        exhaustion = None if end is not None and when > end else when
    users = tuple(sorted(alloc.use_by_user.items(), key=lambda kv: (-kv[1], kv[0])))
    return AllocationStatus(alloc, now, alloc.granted_su, alloc.used_su, alloc.pre_debited_su, remaining,
                            elapsed, burn, exhaustion, users, alloc.failures)


def allocations_for(allocations: tuple[Allocation, ...], tree: AssocTree | None, row: int | None,
                    now: datetime) -> list[AllocationStatus]:
    """Statuses of the allocations charged through the row's account or any account above it.

    ``row`` None (or no tree) gives every allocation. Sorted by project then id.
    """
    chosen = list(allocations)
    if tree is not None and row is not None:
        accounts = set()
        r = row
        while r >= 0:
            accounts.add(str(tree.account[r]))
            r = int(tree.parent[r])
        chosen = [a for a in allocations if a.project in accounts]
    chosen.sort(key=lambda a: (a.project, a.allocation_id))
    return [allocation_status(a, now) for a in chosen]


def balance_bar(status: AllocationStatus, width: int = 30) -> tuple[str, str, str]:
    """The used / pre-debited / remaining segments of a text bar ``width`` cells wide.

    Cells are rounded so the three segments always fill ``width`` exactly; a non-zero part
    gets at least one cell when there is room, so a small pre-debit stays visible.
    """
    fr = status.fractions()
    cells = [round(f * width) for f in fr]
    for i, f in enumerate(fr):
        if f > 0 and cells[i] == 0:
            cells[i] = 1
    # give or take the rounding error from the largest segment
    big = max(range(3), key=lambda i: cells[i])
    cells[big] += width - sum(cells)
    cells = [max(c, 0) for c in cells]
    return tuple(ch * n for ch, n in zip(BAR_CHARS, cells))  # type: ignore[return-value]


def budgets_for(budgets: tuple[Budget, ...], tree: AssocTree | None, row: int | None) -> list[Budget]:
    """Slurm budgets (GrpTRESMins) that bind the row: its own association's and every account's
    above it (a user budget only for that user). ``row`` None gives them all."""
    if tree is None or row is None:
        return list(budgets)
    mine = {(str(tree.account[r]), str(tree.user[r]) if tree.is_user[r] else "") for r in path_to(tree, row)}
    return [b for b in budgets if (b.account, b.user) in mine]


def budget_line(b: Budget) -> str:
    """One budget in words: limit, used, left, and what running jobs still commit.

    Minutes of the ``billing`` TRES are shown in SU (billing-hours) too. Rule two: a used amount the
    source does not give is "unknown", never 0.
    """
    who = f"{b.account}/{b.user}" if b.user else b.account
    unit = f"{b.tres}-minutes"

    def amount(minutes: float) -> str:
        text = f"{minutes:,.0f} {unit}"
        return text + (f" ({minutes / 60:,.1f} SU)" if b.tres == "billing" else "")

    line = f"{who}: GrpTRESMins {b.tres}={b.limit_minutes:,}"
    if b.used_minutes is None:
        line += " · used unknown (the source prints the limit only; scontrol show assoc_mgr has the usage)"
    else:
        left = b.limit_minutes - b.used_minutes
        share = b.used_minutes / b.limit_minutes if b.limit_minutes else 1.0
        line += f" · used {amount(b.used_minutes)} ({share:.0%}) · left {amount(max(left, 0))}"
        if left <= 0:
            line += " · exhausted: Slurm holds new jobs (AssocGrpBillingMinutes)"
    if b.running_minutes:
        line += f" · running jobs still commit {amount(b.running_minutes)}"
    return line
