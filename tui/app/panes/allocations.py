"""The allocations pane: service-unit balances of the projects above the selected association.

Shows, each under its own heading, whichever the site has: the allocation service
(``allocation_url``), the embedded ledger (``ledger``), the user's ColdFront allocations
(``coldfront_url``, beside Slurm's own budget on their account), the snapshot's own allocations (the
demo), and Slurm's GrpTRESMins budgets. The service, ColdFront and the ledger are read in workers
(the service and ColdFront with async clients and the configured timeout), so the screen never waits
on them; when a later read
fails the last balances stay, marked "stale since HH:MM" with the reason. ``a`` switches to every
allocation of the cluster in one table, sorted by exhaustion date (``e``) or share used (``p``).
Renders :class:`tui.analysis.allocations.AllocationStatus` values and the seed-004 site factors.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from datetime import datetime, timezone
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable, Static

from tui.allocations.site_factor_jobs import SiteFactor, allocation_site_factors
from tui.allocations.coldfront import ColdFrontAllocation, ColdFrontView, read_coldfront
from tui.analysis.allocation_feeds import Feed, read_ledger, read_service
from tui.analysis.allocations import (
    AllocationStatus,
    allocation_status,
    allocations_for,
    balance_bar,
    budget_line,
    budgets_for,
)
from tui.analysis.coldfront import coldfront_lines, reconcile
from tui.analysis.standing import Standing
from tui.app import commands
from tui.app.panes.base import ShownPane, error_text
from tui.config import (
    AllocationAccess,
    ColdFrontAccess,
    ConfigError,
    Settings,
    allocation_access,
    coldfront_access,
    site_factor_params,
)
from tui.engine.site_factor import SEED_PARAMS, SiteFactorParams
from tui.model import Allocation

BAR_WIDTH = 40
TOP_USERS = 10
"""Users listed by name in an allocation's table; the rest are summed on one "others" line."""
REREAD_S = 60.0
"""The service and the ledger are read again when the pane is shown this long after the last read."""
PBS_TEXT = ("PBS Professional snapshot: no service-unit allocations, projects or billing, so no balances "
            "to show. It holds the fairshare tree and each entity's usage only (Tree, 1; Breakdown, 2).")


def _day(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d") if t is not None else "?"


def status_markup(s: AllocationStatus, factor: SiteFactor | None = None) -> str:
    """The heading, balance bar, burn and site-factor lines of one allocation (Textual markup)."""
    used, pre, rest = balance_bar(s, BAR_WIDTH)
    a = s.allocation
    lines = [
        f"[b]{escape(s.project)}[/b]  [$text-muted]allocation {escape(a.allocation_id)} · "
        f"{_day(a.start)} → {_day(a.end)}[/]",
        f"[$error]{used}[/][$warning]{pre}[/][$success]{rest}[/]  "
        f"used {s.used:,.0f} · pre-debited {s.pre_debited:,.0f} · remaining {s.remaining:,.0f} "
        f"of {s.granted:,.0f} SU",
    ]
    if s.burn_per_day is None:
        burn = "burn rate: not started yet"
    else:
        burn = f"burn {s.burn_per_day:,.1f} SU/day over {s.elapsed_days:,.0f} days"
    if s.exhausted:
        burn += " · [$error]exhausted[/]"
    elif s.exhaustion is not None:
        burn += f" · [$warning]runs out {_day(s.exhaustion)}[/] at this rate"
    elif s.burn_per_day:
        burn += " · lasts past the end at this rate"
    lines.append(burn)
    if factor is not None:
        lines.append(f"[$text-muted]{escape(factor.describe())}[/]")
    if s.failures:
        lines.append(f"[$error]{s.failures} job{'s' if s.failures != 1 else ''} refused for "
                     "insufficient balance[/]")
    return "\n".join(lines)


def user_rows(s: AllocationStatus, me: str, top: int = TOP_USERS) -> list[tuple[str, str, str]]:
    """The users' (name, SU, share) rows: the ``top`` largest, then one line summing the others."""
    total = sum(v for _, v in s.by_user) or 1.0
    rows = [(f"{u} (you)" if me and u == me else u, f"{su:,.0f}", f"{su / total:.1%}") for u, su in s.by_user[:top]]
    rest = s.by_user[top:]
    if rest:
        mine = next((u for u, _ in rest if me and u == me), None)
        label = f"{len(rest)} others" + (" (you among them)" if mine else "")
        su = sum(v for _, v in rest)
        rows.append((label, f"{su:,.0f}", f"{su / total:.1%}"))
    return rows


def sort_all(statuses: list[tuple[str, AllocationStatus]], key: str) -> list[tuple[str, AllocationStatus]]:
    """All allocations by exhaustion date (soonest first; then those that last past their end at
    their burn rate, then those not burning) or by share used (debited + held; largest first)."""
    if key == "used":
        def used(s: AllocationStatus) -> float:
            return (s.used + s.pre_debited) / s.granted if s.granted > 0 else 0.0
        return sorted(statuses, key=lambda o: (-used(o[1]), o[1].project))
    far = datetime.max.replace(tzinfo=timezone.utc)
    return sorted(statuses, key=lambda o: (o[1].exhaustion or far, not o[1].burn_per_day, o[1].project))


@dataclass
class FeedRead(Message, bubble=False):
    """A worker read the service or the ledger (``allocations``) or failed (``error``)."""

    origin: str
    allocations: tuple[Any, ...] | None
    """:class:`Allocation` (service, ledger) or :class:`ColdFrontAllocation` (coldfront)."""
    error: str | None
    at: datetime


class AllocationsPane(ShownPane):
    """Allocation balances for the selected association's accounts (all when none is selected)."""

    BINDINGS = commands.bindings("alloc")
    DEFAULT_CSS = """
    AllocationsPane .al-block { height: auto; padding-bottom: 1; }
    AllocationsPane .al-status { color: $foreground; }
    AllocationsPane .al-origin { color: $accent; text-style: bold; }
    AllocationsPane .al-stale { color: $warning; }
    AllocationsPane DataTable { height: auto; overflow-y: hidden; background: $surface; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._feeds: dict[str, Feed[Any]] = {}
        self._read_at: dict[str, float] = {}
        self._reading: set[str] = set()
        self._access: AllocationAccess | None = None
        self._coldfront: ColdFrontAccess | None = None
        self.show_all = False
        """The admin view: every allocation of the cluster in one table."""
        self.sort_key = "exhaustion"
        """The admin view's order: ``exhaustion`` or ``used``."""

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="al-scroll"):
            yield Static("No allocations loaded.", id="al-title", classes="pane-title", markup=False)

    # -- settings and reads ----------------------------------------------------------------

    def _settings(self) -> Settings | None:
        return getattr(self.app, "settings", None)

    def _params(self) -> SiteFactorParams:
        settings = self._settings()
        return site_factor_params(settings) if settings is not None else SEED_PARAMS

    def _configure(self) -> None:
        settings = self._settings()
        if settings is None or self._access is not None:
            return
        try:
            self._access = allocation_access(settings)
        except ConfigError as exc:
            self._access = AllocationAccess(None, None, None, False, 5.0)
            self.notify(str(exc), severity="error")
        if self._access.url:
            self._feeds["service"] = Feed("service", self._access.url)
        if self._access.ledger:
            self._feeds["ledger"] = Feed("ledger", self._access.ledger)
        try:
            self._coldfront = coldfront_access(settings)
        except ConfigError as exc:
            self.notify(str(exc), severity="error")
        if self._coldfront is not None:
            self._feeds["coldfront"] = Feed("coldfront", self._coldfront.url)

    def refresh_feeds(self, force: bool = False) -> None:
        """Start a read of each configured origin not read within :data:`REREAD_S` (or now)."""
        for origin in self._feeds:
            if origin in self._reading:
                continue
            if not force and time.monotonic() - self._read_at.get(origin, -1e9) < REREAD_S:
                continue
            self._reading.add(origin)
            if origin == "service":
                self._read_service()
            elif origin == "coldfront":
                self._read_coldfront()
            else:
                self._read_ledger()

    @work(exclusive=True, exit_on_error=False, group="alloc-service")
    async def _read_service(self) -> None:
        access = self._access
        assert access is not None and access.url
        try:
            allocs = await read_service(access.url, token=access.token, munge=access.munge, timeout=access.timeout,
                                        ca_file=access.ca_file)
        except Exception as exc:  # anything: the pane says why and keeps the last balances
            self.post_message(FeedRead("service", None, error_text(exc), datetime.now(timezone.utc)))
            return
        self.post_message(FeedRead("service", allocs, None, datetime.now(timezone.utc)))

    @work(exclusive=True, exit_on_error=False, group="alloc-coldfront")
    async def _read_coldfront(self) -> None:
        access = self._coldfront
        assert access is not None
        try:
            view = await read_coldfront(access.url, token=access.token, timeout=access.timeout,
                                        ca_file=access.ca_file, public=access.public,
                                        published=access.published, user=access.user)
        except Exception as exc:  # anything: the pane says why and keeps the last allocations
            self.post_message(FeedRead("coldfront", None, error_text(exc), datetime.now(timezone.utc)))
            return
        self.post_message(FeedRead("coldfront", view.allocations, None, datetime.now(timezone.utc)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="alloc-ledger")
    def _read_ledger(self) -> None:
        access = self._access
        assert access is not None and access.ledger
        try:
            allocs = read_ledger(access.ledger)
        except Exception as exc:
            self.post_message(FeedRead("ledger", None, error_text(exc), datetime.now(timezone.utc)))
            return
        self.post_message(FeedRead("ledger", allocs, None, datetime.now(timezone.utc)))

    @on(FeedRead)
    def _feed_read(self, message: FeedRead) -> None:
        self._reading.discard(message.origin)
        self._read_at[message.origin] = time.monotonic()
        feed = self._feeds[message.origin]
        self._feeds[message.origin] = (feed.succeeded(message.allocations, message.at)
                                       if message.allocations is not None else feed.failed(message.error or "?",
                                                                                           message.at))
        self._redraw()

    # -- keys ------------------------------------------------------------------------------

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all
        self._redraw()

    def action_sort_by(self, key: str) -> None:
        self.sort_key = key
        self.show_all = True
        self._redraw()

    # -- rendering -------------------------------------------------------------------------

    def draw_shown(self) -> None:
        """List the allocations charged through the selected row's account or the accounts above
        it (everything with no selection), reading the service and the ledger if due."""
        self._configure()
        self.refresh_feeds()
        self._redraw()

    def _origins(self, standing: Standing) -> list[tuple[str, Feed | None, tuple[Allocation, ...]]]:
        """(label, feed or None for the snapshot, allocations) of every origin with something to show."""
        out: list[tuple[str, Feed | None, tuple[Allocation, ...]]] = []
        for feed in self._feeds.values():
            if feed.origin != "coldfront":  # not service units: its own block (_coldfront_blocks)
                out.append((feed.status(), feed, feed.allocations or ()))
        snap = standing.snapshot
        if snap.allocations:
            out.append((f"{snap.source}: its own allocations", None, snap.allocations))
        return out

    def _redraw(self) -> None:
        if self._pending is None:
            return
        standing, row = self._pending
        snap = standing.snapshot
        scroll = self.query_one("#al-scroll", VerticalScroll)
        title = self.query_one("#al-title", Static)
        scroll.remove_children(".al-block")
        if standing.algorithm == "pbs" and not self._feeds:
            title.update(PBS_TEXT)
            return
        origins = self._origins(standing)
        now = snap.taken_at
        params = self._params()
        if self.show_all:
            self._redraw_all(origins, now, params)
            return
        scope = "all projects"
        if snap.tree is not None and row is not None:
            scope = f"{snap.tree.label(row)} and the accounts above it"
        blocks: list[Widget] = []
        shown = 0
        for label, feed, allocs in origins:
            statuses = allocations_for(allocs, snap.tree, row, now)
            factors = allocation_site_factors(allocs, now, params)
            head = Static(escape(label), classes="al-block al-origin" + (" al-stale" if feed and feed.error else ""))
            blocks.append(head)
            if allocs and not statuses:
                blocks.append(Static(f"No allocation is charged through {escape(scope)} ({len(allocs)} allocations "
                                     "here). Select another association in the tree (1), press m for your own, "
                                     "or a for every allocation.", classes="al-block al-status"))
            blocks += [self._block(s, standing.me, factors.get(s.allocation.allocation_id)) for s in statuses]
            shown += len(statuses)
        blocks += self._coldfront_blocks(standing)
        budgets = budgets_for(snap.budgets, snap.tree, row)
        if budgets or snap.budgets:
            text = ("\n".join(escape(budget_line(b)) for b in budgets) if budgets
                    else f"none binds {escape(scope)} ({len(snap.budgets)} on the cluster)")
            blocks.append(Static(f"[b]Slurm budgets[/b] (GrpTRESMins against decayed usage)\n{text}",
                                 classes="al-block al-status"))
        if not origins and "coldfront" not in self._feeds:
            title.update("This cluster has no service-unit allocations loaded"
                         + (" (its Slurm budgets are below)." if snap.budgets else
                            ". Set allocation_url or ledger in the config to read a ledger."))
        else:
            title.update(f"Allocations of {scope} (SU = billing-hours; a: every allocation)")
        scroll.mount_all(blocks)

    def _coldfront_blocks(self, standing: Standing) -> list[Widget]:
        """The user's ColdFront allocations, each usage attribute beside the Slurm budget of its
        account in this snapshot (ColdFront's are the user's own: not narrowed to the selection)."""
        feed = self._feeds.get("coldfront")
        if feed is None:
            return []
        head = Static(escape(feed.status()), classes="al-block al-origin" + (" al-stale" if feed.error else ""))
        if feed.allocations is None:
            return [head]
        allocs: tuple[ColdFrontAllocation, ...] = feed.allocations
        lines = coldfront_lines(ColdFrontView(feed.where, False, allocs),
                                reconcile(allocs, standing.snapshot.budgets))
        return [head, Static(escape("\n".join(lines[1:] if allocs else lines)), classes="al-block al-status")]

    def _redraw_all(self, origins: list[tuple[str, Feed | None, tuple[Allocation, ...]]], now: datetime,
                    params: SiteFactorParams) -> None:
        rows: list[tuple[str, AllocationStatus]] = []
        factors: dict[tuple[str, str], SiteFactor] = {}
        notes = []
        for label, feed, allocs in origins:
            origin = feed.origin if feed is not None else "snapshot"
            rows += [(origin, allocation_status(a, now)) for a in allocs]
            factors.update({(origin, k): v for k, v in allocation_site_factors(allocs, now, params).items()})
            if feed is not None and feed.error:
                notes.append(label)
        rows = sort_all(rows, self.sort_key)
        order = "exhaustion date (soonest first)" if self.sort_key == "exhaustion" else "share used (largest first)"
        self.query_one("#al-title", Static).update(
            f"All {len(rows)} allocations of the cluster, by {order} (e: by exhaustion, p: by % used, "
            "a: back to the selection)")
        table: DataTable = DataTable(cursor_type="row", zebra_stripes=True)
        table.add_columns("from", "project", "id", "granted SU", "used %", "remaining SU", "runs out", "site factor")
        for origin, s in rows:
            share = (s.used + s.pre_debited) / s.granted if s.granted > 0 else 0.0
            runs_out = ("exhausted" if s.exhausted else _day(s.exhaustion) if s.exhaustion is not None
                        else "after its end" if s.burn_per_day else "-")
            f = factors.get((origin, s.allocation.allocation_id))
            table.add_row(origin, s.project, s.allocation.allocation_id, f"{s.granted:,.0f}", f"{share:.1%}",
                          f"{s.remaining:,.0f}", runs_out, f"{f.site:.3f}" if f is not None else "inactive")
        parts: list[Widget] = []
        if notes:
            parts.append(Static("\n".join(escape(n) for n in notes), classes="al-block al-stale"))
        parts.append(Vertical(table, classes="al-block"))
        self.query_one("#al-scroll", VerticalScroll).mount_all(parts)

    def _block(self, s: AllocationStatus, me: str, factor: SiteFactor | None) -> Vertical:
        parts: list[Widget] = [Static(status_markup(s, factor), classes="al-status")]
        if s.by_user:
            table: DataTable = DataTable(cursor_type="row", zebra_stripes=True)
            table.add_columns("user", "SU", "share")
            for cells in user_rows(s, me):
                table.add_row(*cells)
            parts.append(table)
        return Vertical(*parts, classes="al-block")
