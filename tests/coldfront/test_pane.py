"""The Allocations pane reads the real ColdFront in a worker: the user's allocations beside the
snapshot's Slurm budget on their account; a stalled ColdFront never stalls the screen."""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.app.test_allocations_pane import SettingsApp
from tests.app.test_panes import settle, shown, suite_standing
from tests.coldfront.site import Site
from tui.app.panes.allocations import AllocationsPane
from tui.config import Settings
from tui.model import Budget


def _settings(site: Site, timeout: float = 10.0) -> Settings:
    return Settings(coldfront_url=site.url, allocation_timeout=timeout)


async def test_the_pane_shows_the_users_coldfront_allocations_beside_slurm(coldfront: Site,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRTOP_COLDFRONT_TOKEN", coldfront.tokens["cgray"])
    budget = Budget("cgray-metered", "", "cpu", 9_000_000, 2_700_000)
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree", budgets=(budget,))
    pane = AllocationsPane()
    async with SettingsApp(pane, _settings(coldfront)).run_test(size=(200, 80)) as pilot:
        pane.show(standing, None)
        await settle(pilot)
        text = shown(pane)
    assert f"ColdFront {coldfront.url}: read " in text
    assert "University Metered HPC · Active · Slurm account cgray-metered" in text
    assert "  Core Usage (Hours): budget 150,000.0 hours · ColdFront's usage 41,234.5 hours (27%)" in text
    assert "    Slurm's own usage (GrpTRESRaw cpu): 45,000.0 h · difference +3,765.5 h" in text
    assert "Expired" in text and "slurm_specs" not in text and "Paid Cloud Support" not in text


async def test_a_stalled_coldfront_leaves_the_screen_live_then_says_why(coldfront: Site,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAIRTOP_COLDFRONT_TOKEN", coldfront.tokens["sfoster"])
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    pane = AllocationsPane()
    with coldfront.stalled():
        async with SettingsApp(pane, _settings(coldfront, timeout=2.0)).run_test(size=(200, 60)) as pilot:
            started = time.monotonic()
            pane.show(standing, None)
            await pilot.pause()
            assert f"ColdFront {coldfront.url}: reading…" in shown(pane)
            pane.focus()
            await pilot.press("a")  # the screen answers keys while the worker waits on ColdFront
            await pilot.pause()
            assert pane.show_all and time.monotonic() - started < 1.5
            await pilot.press("a")
            await settle(pilot)
            await asyncio.sleep(0)
            text = " ".join(shown(pane).split())
    assert f"ColdFront {coldfront.url}: unavailable (GET /api/allocations/: ReadTimeout" in text, text
