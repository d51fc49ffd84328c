"""Where the allocations pane's balances come from, besides the snapshot: the allocation service
and the embedded ledger; and the seed-004 site factor of each allocation. No Textual here.

A :class:`Feed` keeps the last allocations read from one origin (the service's and the ledger's
are the snapshot's :class:`~tui.model.Allocation`; ColdFront's its own records) and, when a later read fails,
the time of the last good one and why it failed: the pane then shows the last data as "stale
since HH:MM (why)". Reading the service is async (the pane's worker awaits it, with the
configured timeout); reading the ledger blocks (a thread worker). The site factors are
:func:`tui.allocations.site_factor_jobs.allocation_site_factors`, as the command sets them.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Generic, TypeVar

from tui.allocations.client import AllocationClient, to_model
from tui.model import Allocation

__all__ = ["Feed", "read_ledger", "read_service"]

T = TypeVar("T")
LABELS = {"service": "allocation service", "ledger": "ledger", "coldfront": "ColdFront"}


@dataclass(frozen=True)
class Feed(Generic[T]):
    """The allocations of one origin as last read."""

    origin: str
    """``service``, ``ledger`` or ``coldfront``."""
    where: str
    """The URL or the ledger's path."""
    allocations: tuple[T, ...] | None = None
    """None until a read succeeds."""
    read_at: datetime | None = None
    """When the allocations above were read."""
    error: str | None = None
    """Why the latest read failed (None: it succeeded)."""
    failed_at: datetime | None = None

    def succeeded(self, allocations: tuple[T, ...], at: datetime) -> Feed[T]:
        return replace(self, allocations=allocations, read_at=at, error=None, failed_at=None)

    def failed(self, error: str, at: datetime) -> Feed[T]:
        return replace(self, error=error, failed_at=at)

    @property
    def stale(self) -> bool:
        return self.error is not None and self.allocations is not None

    def status(self) -> str:
        """One line: where, and how fresh (local time)."""
        label = f"{LABELS.get(self.origin, self.origin)} {self.where}"
        if self.error is not None and self.read_at is not None:
            return f"{label}: stale since {self.read_at.astimezone():%H:%M} ({self.error})"
        if self.error is not None:
            return f"{label}: unavailable ({self.error})"
        if self.read_at is None:
            return f"{label}: reading…"
        return f"{label}: read {self.read_at.astimezone():%H:%M:%S}"


async def read_service(url: str, *, token: str | None, munge: bool, timeout: float,
                       ca_file: str | None = None) -> tuple[Allocation, ...]:
    """Every allocation the caller may see, from the service (one try: the pane asks again later);
    an https one verified against ``ca_file`` or the system's CAs."""
    async with AllocationClient(url, token=token, munge=munge, timeout=timeout, max_retries=0,
                                ca_file=ca_file) as api:
        return tuple(to_model(a) for a in await api.allocations())


def read_ledger(target: str) -> tuple[Allocation, ...]:
    """Every allocation of the embedded ledger (SQLite file or PostgreSQL URL)."""
    from tui.allocations.balance import from_ledger

    return tuple(to_model(a) for a in from_ledger(target))
