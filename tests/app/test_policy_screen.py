"""The Policy screen (``:policy``): a replay of the demo's jobs under another half-life, what a
source without jobs lacks, and no UI stall while the replay runs."""

from __future__ import annotations

import asyncio
import dataclasses
import time
from datetime import datetime, timezone
from functools import partial

from textual.widgets import Input, Static

from tests.app.conftest import ready, small_demo, until, workers_done
from tui.analysis.policy_view import default_window
from tui.analysis.replay import PolicyChange, job_columns, policy_replay, replay_rows
from tui.app.screens.policy import PolicyScreen
from tui.app.widgets.line_table import LineTable
from tui.sources.demo import demo_history
from tui.sources.sacct import SacctColumns


def _expected_top(snap, half_life_s: float) -> dict[str, object]:  # noqa: ANN001 - a Snapshot
    jobs, last = demo_history(snap)
    cols = SacctColumns.of_jobs(jobs)
    since = default_window(snap.taken_at, snap.settings.decay_half_life_s, float(cols.start.min()))
    done = policy_replay(snap, job_columns(cols, snap.tree), PolicyChange(half_life_s=half_life_s),
                         since.astimezone(timezone.utc), last)
    return replay_rows(done)[0]


async def _open(pilot) -> PolicyScreen:  # noqa: ANN001 - a Pilot
    await ready(pilot)
    await pilot.press("colon", *"policy", "enter")
    await until(pilot, lambda: isinstance(pilot.app.screen, PolicyScreen) and bool(pilot.app.screen.rows))
    screen = pilot.app.screen
    assert isinstance(screen, PolicyScreen)
    return screen


async def test_half_life_changes_the_top_mover(make_app) -> None:  # noqa: ANN001 - fixture
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open(pilot)
        assert screen.rows[0]["move"] == 0.0  # the cluster's own policy: nothing moves
        screen.query_one("#po-half_life", Input).value = "1-0"
        screen.query_one("#po-half_life", Input).focus()
        await pilot.press("enter")
        await until(pilot, lambda: screen.done is not None and screen.done.new.half_life_s == 86400.0)
        expected = _expected_top(app.standing.snapshot, 86400.0)
        top = screen.rows[0]
        assert (top["account"], top["user"], top["move"]) == (expected["account"], expected["user"],
                                                              expected["move"])
        table = screen.query_one(LineTable)
        assert table.lines[0].split()[:2] == [expected["account"], expected["user"]]
        assert "-> 1-00:00:00" in str(screen.query_one("#po-status", Static).render())
        await pilot.press("escape")
        assert not isinstance(app.screen, PolicyScreen)


async def test_says_what_pbs_lacks(make_app) -> None:  # noqa: ANN001 - fixture
    from tui.sources.demo_pbs import demo_pbs_snapshot

    app = make_app(loader=partial(demo_pbs_snapshot, me="alice", now=datetime(2026, 1, 1, tzinfo=timezone.utc)))
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("colon", *"policy", "enter")
        await until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        text = str(app.screen.query_one("#po-status", Static).render())
        assert "PBS has no sacct" in text
        assert not app.screen.query_one(LineTable).display


async def test_says_what_a_capture_without_sacct_lacks(make_app, tmp_path) -> None:  # noqa: ANN001 - fixtures
    snap = small_demo()()
    loader = lambda: dataclasses.replace(snap, source=str(tmp_path))  # noqa: E731 - a capture folder, no sacct
    app = make_app(loader=loader)
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("colon", *"policy", "enter")
        await until(pilot, lambda: isinstance(app.screen, PolicyScreen))
        text = str(app.screen.query_one("#po-status", Static).render())
        assert "no sacct_a_P.psv" in text and "policy replay" in text


async def test_no_ui_stall_while_replaying(make_app) -> None:  # noqa: ANN001 - fixture
    app = make_app(loader=small_demo(users=4000))
    gaps: list[float] = []

    async def heartbeat() -> None:
        """The event loop's stalls, as bench/app.py measures them (a 1 ms beat)."""
        while True:
            t0 = time.perf_counter()
            await asyncio.sleep(0.001)
            gaps.append(time.perf_counter() - t0 - 0.001)

    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open(pilot)
        await workers_done(pilot)  # the first replay's plots built: the beat measures one form's replay
        await pilot.pause(0.2)
        field = screen.query_one("#po-half_life", Input)
        field.value = "2-0"
        field.focus()
        beat = asyncio.create_task(heartbeat())
        try:
            await field.action_submit()
            deadline = time.perf_counter() + 20
            while not (screen.done is not None and screen.done.new.half_life_s == 2 * 86400.0):
                assert time.perf_counter() < deadline
                await asyncio.sleep(0.005)
            await asyncio.sleep(0.5)  # the table drawn, the plots computed and built
        finally:
            beat.cancel()
        assert gaps and max(gaps) < 0.05, f"longest UI stall {1000 * max(gaps):.0f} ms"


def test_says_what_private_data_hides() -> None:
    from tui.app.screens.policy import lacks
    from tui.model import PrivateView

    snap = dataclasses.replace(small_demo()(), private=PrivateView(frozenset({"jobs", "usage"}), "alice"))
    why = lacks(snap)
    assert why is not None and "PrivateData=jobs,usage" in why and "ask an admin" in why
    assert lacks(small_demo()()) is None  # the demo has its made-up jobs
