"""The allocations pane beyond one snapshot: the service and the ledger read in workers (a real
service on 127.0.0.1, killed to see "stale since"), the admin view's orders, the users' "others"
line and the site factor per allocation."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import date, datetime, timedelta, timezone
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import DataTable

from tests.allocations.services import SUPER, Server, write_tokens
from tests.app.test_panes import NOW, PaneApp, settle, shown, suite_standing
from tui.allocations.ledger import open_ledger
from tui.analysis.allocations import allocation_status
from tui.app.panes.allocations import AllocationsPane, user_rows
from tui.config import Settings
from tui.model import Allocation


class SettingsApp(PaneApp):
    def __init__(self, pane, settings: Settings) -> None:
        super().__init__(pane)
        self.settings = settings


def allocs() -> tuple[Allocation, ...]:
    start = NOW - timedelta(days=30)
    users = {f"u{i:02d}": float(100 - i) for i in range(13)}  # 13 users: 10 named, 3 summed
    return (
        # 40 % used in 30 days: runs out 45 days on, ends in 10: factor sqrt(0.6) * (1 - 10/40)^2
        Allocation("1", "aGA", 1000.0, 400.0, 0.0, start, NOW + timedelta(days=10), users),
        # 10 % used + 80 % held: burn 100/30 per day, 100 left: runs out in 30 days
        Allocation("2", "aB", 1000.0, 100.0, 800.0, start, NOW + timedelta(days=40)),
        # nothing used yet: no exhaustion date
        Allocation("3", "aC", 500.0, 0.0, 0.0, start, NOW + timedelta(days=20)),
    )


def test_user_rows_name_ten_and_sum_the_others() -> None:
    s = allocation_status(allocs()[0], NOW)
    rows = user_rows(s, me="u11")
    total = sum(100 - i for i in range(13))  # 1,222
    assert len(rows) == 11 and rows[0] == ("u00", "100", f"{100 / total:.1%}")
    assert rows[-1] == ("3 others (you among them)", f"{90 + 89 + 88:,}", f"{267 / total:.1%}")


@asynccontextmanager
async def pane_with_allocs(size: tuple[int, int]) -> AsyncIterator[tuple[AllocationsPane, Pilot]]:
    """The pane alone, showing :func:`allocs` for no selection."""
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree", allocations=allocs())
    pane = AllocationsPane()
    async with PaneApp(pane).run_test(size=size) as pilot:
        pane.show(standing, None)
        await settle(pilot)
        yield pane, pilot


async def test_site_factor_per_allocation_and_others_line_in_the_pane() -> None:
    async with pane_with_allocs((150, 80)) as (pane, pilot):
        text = shown(pane)
        tables = list(pane.query(DataTable))
        rows = [tables[0].get_row_at(i) for i in range(tables[0].row_count)]
    # aGA: credit 1 - 400/1000 = 0.6, temporal 1 - 10/40 = 0.75: sqrt(0.6) * 0.5625 = 0.43571
    assert ("site factor 0.436 = credit^0.5 x temporal^2 with credit 0.600, temporal 0.750 (10.0 days left) "
            "-> SiteFactor=4357") in text
    assert rows[-1] == ["3 others", "267", "21.8%"] and len(rows) == 11
    assert not any(t.show_vertical_scrollbar for t in tables)  # the tables are as tall as their rows


async def test_admin_view_sorts_by_exhaustion_and_by_share_used() -> None:
    async with pane_with_allocs((150, 50)) as (pane, pilot):
        pane.focus()
        await pilot.press("a")
        await settle(pilot)
        table = pane.query_one(DataTable)
        by_exhaustion = [table.get_row_at(i)[1:7] for i in range(table.row_count)]
        title = shown(pane)
        await pilot.press("p")
        await settle(pilot)
        table = pane.query_one(DataTable)
        by_used = [table.get_row_at(i)[1] for i in range(table.row_count)]
    assert "All 3 allocations of the cluster, by exhaustion date (soonest first)" in title
    # aB: 100 left at 100/30 SU a day -> 30 days; aGA: 600 at 400/30 -> 45 days, after its end (10 days)
    assert by_exhaustion == [["aB", "2", "1,000", "90.0%", "100", "2026-03-31"],
                             ["aGA", "1", "1,000", "40.0%", "600", "after its end"],
                             ["aC", "3", "500", "0.0%", "500", "-"]]
    assert by_used == ["aB", "aGA", "aC"]


@pytest.fixture()
def service_with_ledger(tmp_path: Path):
    db = tmp_path / "ledger.db"
    ledger = open_ledger(str(db), migrate=True)
    p = ledger.create_project("chem", 7001, "aGA")
    today = date.today()
    a = ledger.create_allocation(p["id"], "cpu", "startup", today - timedelta(days=5), today + timedelta(days=30))
    ledger.credit(a["id"], 60_000)  # 1,000 SU
    ledger.predebit("j1", 5001, 7001, "cpu", 6_000)
    ledger.complete("j1", "completed", 3_000)  # 50 SU used
    ledger.close()
    server = Server(str(db), ["--auth", "token", "--tokens", str(write_tokens(tmp_path / "tokens.toml"))]).start()
    try:
        yield server, db
    finally:
        server.stop()


async def test_service_is_read_in_a_worker_and_goes_stale_when_it_stops(service_with_ledger, monkeypatch) -> None:
    server, db = service_with_ledger
    monkeypatch.setenv("FAIRTOP_ALLOC_TOKEN", SUPER)
    settings = Settings(allocation_url=server.url, allocation_auth="token", allocation_timeout=2.0, ledger=str(db))
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    pane = AllocationsPane()
    async with SettingsApp(pane, settings).run_test(size=(150, 60)) as pilot:
        pane.show(standing, None)
        await settle(pilot)
        fresh = " ".join(shown(pane).split())
        server.kill()
        before = datetime.now(timezone.utc)
        pane.refresh_feeds(force=True)
        await settle(pilot)
        stale = " ".join(shown(pane).split())
    # both origins side by side: 1,000 SU granted, 50 used, as the ledger holds them (minutes / 60)
    assert fresh.count("used 50 · pre-debited 0 · remaining 950 of 1,000 SU") == 2
    assert f"allocation service {server.url}: read " in fresh and f"ledger {db}: read " in fresh
    stamp = [f"{t.astimezone():%H:%M}" for t in (before - timedelta(minutes=1), before)]
    assert any(f"allocation service {server.url}: stale since {hm} (GET /alloc: ConnectError" in stale
               for hm in stamp), stale
    assert stale.count("remaining 950 of 1,000 SU") == 2  # the last balances stay on screen
    assert f"ledger {db}: read " in stale


async def test_an_unreachable_ledger_is_said_with_its_reason(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dir" / "ledger.db"
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    pane = AllocationsPane()
    async with SettingsApp(pane, Settings(ledger=str(missing))).run_test(size=(150, 30)) as pilot:
        pane.show(standing, None)
        await settle(pilot)
        text = " ".join(shown(pane).split())
    assert f"ledger {missing}: unavailable (" in text and "unable to open database file" in text, text
    assert "Allocations of all projects" in text
