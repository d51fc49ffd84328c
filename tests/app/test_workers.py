"""The panes' workers: engine work off the UI thread, results as typed messages (stale ones
dropped), the what-if form debounced, and every worker's failure notified by the app."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest
from textual.widgets import Input, Static

from tests.app.conftest import SIZE, ready, small_demo, workers_done
from tests.app.test_panes import PaneApp, row_of, settle, shown, suite_standing
from tui.analysis.planner import project_plan as _real_project_plan
from tui.analysis.planner import recovery as _real_recovery
from tui.app.app import FairtopApp
from tui.app.messages import ExplanationReady, PlanReady, RecoveryReady
from tui.app.panes import breakdown as breakdown_pane
from tui.app.panes import whatif as whatif_pane
from tui.app.panes.breakdown import BreakdownPane
from tui.app.panes.whatif import WhatIfPane
from tui.sources.errors import InputError


def recording(func: Callable[..., Any], calls: list[threading.Thread]) -> Callable[..., Any]:
    """``func``, noting the thread of every call."""

    def wrapper(*args: Any, **kwargs: Any) -> Any:
        calls.append(threading.current_thread())
        return func(*args, **kwargs)

    return wrapper


def failing(text: str) -> Callable[..., Any]:
    def fail(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError(text)

    return fail


def error_notes(app) -> list[str]:  # noqa: ANN001 - FairtopApp
    return [n.message for n in app._notifications if n.severity == "error"]


def pane_text(app, tab: str) -> str:  # noqa: ANN001 - FairtopApp
    return shown(app.query_one(f"#pane-{tab}"))


FAILURES = {  # pane module's function made to raise -> (module, tab key, tab, pending text, error shown)
    "recovery": (breakdown_pane, "2", "breakdown", "computing...", "could not compute: {}"),
    "explain_slurm": (breakdown_pane, "2", "breakdown", "computing...", "could not compute: {}"),
    "project_plan": (whatif_pane, "4", "whatif", "Projecting the campaign", "Could not project this campaign: {}"),
}


@pytest.mark.parametrize("name", list(FAILURES))
async def test_pane_worker_failure_is_notified_and_shown(make_app, monkeypatch, name: str) -> None:
    module, key, tab, pending, shown_error = FAILURES[name]
    real = getattr(module, name)
    monkeypatch.setattr(module, name, failing(f"{name} exploded"))
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("m", key)
        await ready(pilot)
        text = pane_text(app, tab)
        assert any(f"{name} exploded" in note for note in error_notes(app)), app._notifications
        assert pending not in text
        assert shown_error.format(f"{name} exploded") in text
        assert app.standing is not None  # the data stays; only the pane's answer is missing
        if name == "project_plan":  # a failed request is retried on the next change of the form
            monkeypatch.setattr(module, name, real)
            app.query_one(WhatIfPane).jobs[0].input("cpus").value = "8"
            await ready(pilot)
            assert "users ahead " in pane_text(app, tab)


async def test_engine_work_runs_off_the_ui_thread(make_app, monkeypatch) -> None:
    calls: list[threading.Thread] = []
    for name in ("recovery", "explain_slurm"):
        monkeypatch.setattr(breakdown_pane, name, recording(getattr(breakdown_pane, name), calls))
    monkeypatch.setattr(whatif_pane, "project_plan", recording(_real_project_plan, calls))
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("m", "2")
        await ready(pilot)
        await pilot.press("4")
        await ready(pilot)
        assert "ranks " in pane_text(app, "breakdown") or "users ahead" in pane_text(app, "whatif")
        assert len(calls) >= 3
        assert threading.main_thread() not in calls
        assert not error_notes(app)


async def test_whatif_typing_is_debounced_into_one_engine_run(monkeypatch) -> None:
    calls: list[threading.Thread] = []
    monkeypatch.setattr(whatif_pane, "project_plan", recording(_real_project_plan, calls))
    monkeypatch.setattr(whatif_pane, "DEBOUNCE_S", 2.0)  # keys typed by Pilot come well within it
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 60)) as pilot:
        pane.show(standing, row_of(standing.snapshot.tree, "aGA", "uGA1"))
        await settle(pilot)
        assert len(calls) == 1  # show(): at once, no debounce
        field = pane.jobs[0].input("walltime")
        field.focus()
        pane.query_one("#wi-horizon", Input).value = "10"
        pane.query_one("#wi-step", Input).value = "5"
        pane.jobs[0].input("cpus").value = "1"
        field.value = ""
        await pilot.press(*"0:20")
        assert field.value == "0:20"  # the form answers each key without waiting for the engine
        await settle(pilot)
        assert len(calls) == 2  # one projection for the whole burst
        assert "aGA/uGA1: users ahead 17 → 19 of 21" in " ".join(shown(pane).split())


async def test_stale_results_are_dropped() -> None:
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    tree = standing.snapshot.tree
    user, other = row_of(tree, "aGA", "uGA1"), row_of(tree, "aC", "uC1")
    pane = BreakdownPane()
    async with PaneApp(pane).run_test(size=(140, 60)) as pilot:
        pane.show(standing, other)
        await settle(pilot)
        old = pane._request
        captured: list[Any] = []
        original = pane.post_message

        def capture(message):  # noqa: ANN001, ANN202 - keep the first request's results aside
            if isinstance(message, (ExplanationReady, RecoveryReady)) and message.request_id == old + 1:
                captured.append(message)
            return original(message)

        pane.post_message = capture
        pane.show(standing, user)
        await settle(pilot)
        pane.post_message = original
        assert {type(m) for m in captured} == {ExplanationReady, RecoveryReady}
        pane.show(standing, other)
        await settle(pilot)
        before = shown(pane)
        for message in captured:  # uGA1's results arrive late, after aC/uC1 was selected
            pane.post_message(message)
        await settle(pilot)
        assert shown(pane) == before and "aC/uC1" in before and "uGA1 ranks" not in before

    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 60)) as pilot:
        pane.show(standing, user)
        await settle(pilot)
        pane.jobs[0].input("cpus").value = "1"
        pane.jobs[0].input("walltime").value = "0:20"
        await settle(pilot)
        text = shown(pane)
        late = PlanReady(pane._request - 1, None, InputError("plan:jobs[0].user", "an older form's answer"))
        pane.post_message(late)
        await settle(pilot)
        assert shown(pane) == text and "an older form" not in text and "users ahead" in text


async def test_panes_say_computing_until_the_worker_answers(monkeypatch) -> None:
    gate = threading.Event()

    def slow_recovery(*args: Any, **kwargs: Any) -> Any:
        gate.wait(10)
        return _real_recovery(*args, **kwargs)

    monkeypatch.setattr(breakdown_pane, "recovery", slow_recovery)
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    pane = BreakdownPane()
    async with PaneApp(pane).run_test(size=(140, 60)) as pilot:
        pane.show(standing, row_of(standing.snapshot.tree, "aGA", "uGA1"))
        for _ in range(50):  # the explanation arrives while recovery still runs
            await pilot.pause(0.02)
            if "ranks 4 of 21" in shown(pane):
                break
        text = shown(pane)
        assert "aGA/uGA1 ranks 4 of 21" in text and "If you run nothing more: computing..." in text
        gate.set()
        await workers_done(pilot)
        assert "computing..." not in shown(pane)
        assert str(pane.query_one("#bd-rec-title", Static).content).startswith("If you run nothing more and")


def _instant(loader):  # noqa: ANN001, ANN202 - a loader -> the app's one cluster, read before the first frame
    from tui.app.cluster_choice import Cluster

    return [Cluster("", loader, instant=True)]


async def test_an_instant_source_is_read_before_the_first_frame() -> None:
    """The demo (an instant source) is read in on_load on the UI thread: no load worker runs,
    and the first time the tree draws it already has the rows."""
    from tui.app.widgets.fairshare_tree import FairshareTree
    from tui.config import Settings, State

    threads: list[threading.Thread] = []
    loader = recording(small_demo(), threads)
    app = FairtopApp(Settings(), loader, "alice", State(), clusters=_instant(loader))
    seen: list[int] = []
    render = FairshareTree.render_line

    def spy(self, y):  # noqa: ANN001, ANN202
        seen.append(len(self.rows_shown))
        return render(self, y)

    FairshareTree.render_line = spy  # type: ignore[method-assign]
    try:
        async with app.run_test(size=SIZE) as pilot:
            await ready(pilot)
            assert threads == [threading.main_thread()]
            assert not [w for w in app.workers if w.group == "load"]
            assert seen and seen[0] > 0  # never drawn empty
            assert app.standing is not None and "alice" in str(app.query_one("#status").render())
    finally:
        FairshareTree.render_line = render  # type: ignore[method-assign]


async def test_an_instant_source_that_fails_is_reported_by_the_worker() -> None:
    """A failing instant read is read again in the load worker, which reports it as for any source."""
    from tui.config import Settings, State

    def broken():  # noqa: ANN202
        raise OSError("demo exploded")

    app = FairtopApp(Settings(), broken, "alice", State(), clusters=_instant(broken))
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        assert "could not load: demo exploded" in str(app.query_one("#status").render())
