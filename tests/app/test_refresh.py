"""Live refresh: the source is re-read in a worker thread on the refresh period, the UI keeps
answering meanwhile, the status line says how old the data is, and a refresh keeps the standing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import Any

from textual.pilot import Pilot

from tests.app.conftest import ME, SIZE, ready, small_demo
from tui.app.app import FairtopApp
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.config import Settings, State

PERIOD_S = 0.25


class CountingSource:
    """A fake live source: counts its calls, can be made slow, blocked, or broken."""

    def __init__(self) -> None:
        self.calls = 0
        self.delay = 0.0
        self.gate = threading.Event()
        self.gate.set()
        self.error: Exception | None = None
        self._demo = small_demo()

    def __call__(self) -> Any:
        self.calls += 1
        self.gate.wait(10)
        time.sleep(self.delay)
        if self.error is not None:
            raise self.error
        return self._demo()


def live_app(source: Callable[[], Any], clock: list[float]) -> FairtopApp:
    app = FairtopApp(Settings(source="slurm", refresh_rate=PERIOD_S), source, ME, State(), live=True)
    app.clock = lambda: clock[0]
    return app


def status(app: FairtopApp) -> str:
    return str(app.query_one("#status").render())


async def wait_until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 5.0) -> None:
    end = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < end, "timed out"
        await pilot.pause(0.05)


async def test_live_source_refreshes_without_freezing_the_ui() -> None:
    source, clock = CountingSource(), [100.0]
    app = live_app(source, clock)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert source.calls >= 1 and "updated 0 s ago" in status(app)
        source.delay = 0.3  # each read now takes longer than the refresh period
        tree = app.query_one(FairshareTree)
        await wait_until(pilot, lambda: any(w.group == "load" and w.is_running for w in app.workers))
        before = tree.cursor
        await pilot.press("j")  # answered while the worker reads
        assert tree.cursor == before + 1
        await wait_until(pilot, lambda: source.calls >= 3)
        # A slow read is left to finish, not restarted each period: never two reads at once.
        assert sum(w.group == "load" and w.is_running for w in app.workers) <= 1


async def test_status_ticks_while_no_new_data_arrives() -> None:
    source, clock = CountingSource(), [100.0]
    app = live_app(source, clock)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        source.gate.clear()  # the next read hangs: no new data
        clock[0] += 7
        await wait_until(pilot, lambda: "updated 7 s ago" in status(app), timeout=3)
        calls = source.calls
        await pilot.pause(3 * PERIOD_S)
        assert source.calls == calls  # the hung read is not piled on
        clock[0] += 300
        await wait_until(pilot, lambda: "updated 5 min ago" in status(app), timeout=3)
        source.gate.set()
        await wait_until(pilot, lambda: "updated 0 s ago" in status(app))


async def test_failed_refresh_keeps_the_data_and_notifies_once() -> None:
    source, clock = CountingSource(), [100.0]
    app = live_app(source, clock)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        source.error = RuntimeError("sshare timed out")
        calls = source.calls
        await wait_until(pilot, lambda: source.calls >= calls + 3)
        await pilot.pause()
        assert "refresh failed: sshare timed out" in status(app)
        assert "associations" in status(app)  # the last data is still shown
        assert sum("sshare timed out" in n.message for n in app._notifications) == 1
        source.error = None
        await wait_until(pilot, lambda: "refresh failed" not in status(app))


async def test_snapshot_sources_show_their_time_and_are_read_once(make_app) -> None:
    source = CountingSource()
    app = make_app(loader=source)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.pause(0.3)
        assert source.calls == 1
        assert "snapshot 2025-01-15 00:00 UTC" in status(app)


async def test_refresh_keeps_expansion_and_cursor(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("m")  # alice's row, her lab open
        row = tree.selected_row
        lab = int(tree.table.parent[row])
        await pilot.press("j", "j")
        tree.set_expanded(int(tree.table.parent[tree.table.parent[lab]]), False)  # close alice's department
        tree.set_expanded(1, True)
        expanded, shown = tree.expanded.copy(), tree.rows_shown.copy()
        cursor_row, old_table = tree.selected_row, tree.table
        await pilot.press("r")
        await ready(pilot)
        assert tree.table is not old_table and tree.selected_row == cursor_row
        assert (tree.expanded == expanded).all() and (tree.rows_shown == shown).all()


async def test_refresh_keeps_the_what_if_form(make_app) -> None:
    from textual.widgets import Select

    from tui.app.panes.whatif import WhatIfPane

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("m", "4")
        await ready(pilot)
        job = app.query_one(WhatIfPane).jobs[0]
        select = job.query_one(".f-partition", Select)
        options = [value for _, value in select._options if value is not Select.NULL]
        select.value = options[-1]
        job.input("cpus").value = "32"
        await pilot.pause()
        await pilot.press("r")
        await ready(pilot)
        job = app.query_one(WhatIfPane).jobs[0]
        assert job.value("partition") == options[-1] and job.input("cpus").value == "32"


async def test_r_asks_the_live_source_for_everything_now(monkeypatch) -> None:
    # The real SlurmSource on the real sandbox capture's outputs: after the first read only the
    # due commands run; `r` makes the next read ask all eight again (scontrol show node too), sshare included.
    from tests.sources.test_live_cadence import FakeCluster
    from tui.app.main import build_app
    from tui.cli import build_parser
    from tui.sources.slurm_cli import Cadence, LiveSlurm

    fake = FakeCluster()
    monkeypatch.setattr("tui.sources.registry.SlurmSource.live_slurm",
                        property(lambda self: self.__dict__.setdefault(
                            "_fake", LiveSlurm(Cadence(jobs_s=30), runner=fake.run, clock=fake.clock))))
    app = build_app(build_parser().parse_args(["--slurm", "--user", "la"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        live = app.on_reload.__self__.live_slurm  # type: ignore[union-attr]  # the bound source
        assert len(live.issued) == 8
        fake.now += 5
        await pilot.press("r")
        await ready(pilot)
        assert len(live.issued) == 16 and app.standing is not None


async def test_a_refresh_that_returns_the_same_snapshot_builds_nothing_new(monkeypatch) -> None:
    """A followed folder whose publisher has not moved on returns its last snapshot again: the
    shown standing is kept (a second one built beside it made a lasting step in the app's
    memory), and the data's age still restarts; a new snapshot is built as before."""
    from tui.app import loading

    demo, clock = small_demo(), [100.0]
    same = demo()
    snapshots = [same]
    built: list[object] = []
    build = loading.build_standing
    monkeypatch.setattr(loading, "build_standing", lambda snap, *a, **k: built.append(snap) or build(snap, *a, **k))
    reads = []
    app = live_app(lambda: reads.append(1) or snapshots[-1], clock)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        shown = app.standing
        assert shown is not None and built == [same]
        clock[0] += 7
        count = len(reads)
        await wait_until(pilot, lambda: len(reads) >= count + 2)  # read again: the same snapshot
        await pilot.pause()
        assert "updated 0 s ago" in status(app)
        assert app.standing is shown and built == [same]
        snapshots.append(demo())
        await wait_until(pilot, lambda: app.standing is not shown)
        assert built == [same, snapshots[-1]]
