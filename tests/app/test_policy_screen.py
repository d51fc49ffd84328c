"""The Policy screen (``:policy``): a replay of the demo's jobs under another half-life, what a
source without jobs lacks, and the replays run in worker threads."""

from __future__ import annotations

import dataclasses
import shutil
from datetime import datetime, timezone
from functools import partial

import pytest
from textual.widgets import Input, Static

from tests.conftest import FIXTURES
from tests.app.conftest import ready, small_demo, until, workers_done
from tui.analysis.policy_view import default_window
from tui.analysis.replay import PolicyChange, job_columns, policy_replay, replay_rows
from tui.app.screens.policy import PolicyScreen
from tui.app.widgets.line_table import LineTable
from tui.sources.demo import demo_history
from tui.sources.sacct import SacctColumns
from tui.sources.saved import load_folder

HL1H = FIXTURES / "slurm" / "replay" / "hl1h"


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


async def test_the_replays_run_off_the_event_loops_thread(make_app, monkeypatch) -> None:  # noqa: ANN001 - fixtures
    """The heavy calls (the jobs and the cluster's own pass, each form's replay, the plots' series) run in
    worker threads, so the UI stays live however long they take (the stall itself is measured by
    bench/app.py's heartbeat, not timed here: a loaded machine makes any timed assertion flaky)."""
    import threading

    from tui.app.screens import policy as screen_module

    seen: dict[str, set[str]] = {}

    def recorded(name: str):  # noqa: ANN202 - a wrapper
        real = getattr(screen_module, name)

        def call(*args, **kwargs):  # noqa: ANN002, ANN003, ANN202
            seen.setdefault(name, set()).add(threading.current_thread().name)
            return real(*args, **kwargs)
        return call

    for name in ("prepare_replay", "own_series", "replay_policy", "policy_series"):
        monkeypatch.setattr(screen_module, name, recorded(name))
    app = make_app(loader=small_demo(users=400))
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open(pilot)
        await workers_done(pilot)
        field = screen.query_one("#po-half_life", Input)
        field.value = "2-0"
        field.focus()
        await field.action_submit()
        await until(pilot, lambda: screen.done is not None and screen.done.new.half_life_s == 2 * 86400.0)
        await workers_done(pilot)
    assert set(seen) == {"prepare_replay", "own_series", "replay_policy", "policy_series"}
    main = threading.main_thread().name
    assert all(main not in threads for threads in seen.values()), seen


def test_says_what_private_data_hides() -> None:
    from tui.app.screens.policy import lacks
    from tui.model import PrivateView

    snap = dataclasses.replace(small_demo()(), private=PrivateView(frozenset({"jobs", "usage"}), "alice"))
    why = lacks(snap)
    assert why is not None and "PrivateData=jobs,usage" in why and "ask an admin" in why
    assert lacks(small_demo()()) is None  # the demo has its made-up jobs


@pytest.mark.parametrize(("enforce", "hint"), [("associations", "no"), ("associations,limits", "yes"),
                                               ("associations,safe", "yes")])
async def test_enforce_limits_shows_the_clusters_own(make_app, tmp_path, enforce: str, hint: str) -> None:  # noqa: ANN001 - fixtures
    """The "Enforce limits" field's hint is the capture's AccountingStorageEnforce (limits or safe: yes),
    as the other fields show the cluster's own values, not "yes or no"."""
    folder = tmp_path / "capture"
    shutil.copytree(HL1H, folder)
    config = folder / "scontrol_show_config.txt"
    text = config.read_text()
    assert "AccountingStorageEnforce = associations,limits\n" in text
    config.write_text(text.replace("AccountingStorageEnforce = associations,limits\n",
                                   f"AccountingStorageEnforce = {enforce}\n"))
    app = make_app(loader=partial(load_folder, folder), me="alice")
    async with app.run_test(size=(160, 50)) as pilot:
        screen = await _open(pilot)
        assert screen.query_one("#po-enforce_limits", Input).placeholder == hint
        assert screen.query_one("#po-half_life", Input).placeholder == "0-01:00:00"
        assert screen.done is not None and screen.done.old.enforce_limits is (hint == "yes")


def test_enforce_hint_unknown_counts_as_limits() -> None:
    from tui.analysis.policy_view import enforce_hint

    assert enforce_hint(None) == "yes (AccountingStorageEnforce unknown)"
    assert enforce_hint(frozenset({"associations", "qos"})) == "no"


async def _half_life_one_day(pilot, screen: PolicyScreen) -> None:  # noqa: ANN001 - a Pilot
    screen.query_one("#po-half_life", Input).value = "1-0"
    screen.query_one("#po-half_life", Input).focus()
    await pilot.press("enter")
    await until(pilot, lambda: screen.done is not None and screen.done.new.half_life_s == 86400.0)


@pytest.mark.parametrize("picked", ["root/root", "chem_adeyemi_lab/alice"])
async def test_the_table_opens_on_the_largest_mover_unless_the_selected_row_moves(make_app, picked: str) -> None:  # noqa: ANN001
    """An admin opens on root/root (tree row 1), which no policy moves: the table then starts at its
    top (the largest winner, the header's "sorted by the move"). alice's FairShare keeps its rank
    under a one-day half-life but her usage moves: the table starts on her. A row the cursor was
    moved to stays under it in the next replay."""
    app = make_app()
    async with app.run_test(size=(160, 50)) as pilot:
        await ready(pilot)
        tree = app.standing.snapshot.tree
        row = next(i for i in range(tree.size) if tree.label(i) == picked)
        app.push_screen(PolicyScreen(app.standing, row))
        await until(pilot, lambda: isinstance(app.screen, PolicyScreen) and bool(app.screen.rows))
        screen = app.screen
        assert isinstance(screen, PolicyScreen)
        table = screen.query_one(LineTable)
        await _half_life_one_day(pilot, screen)
        await pilot.pause()
        line = table.cursor
        mine = screen.rows[screen._row_index.index(row)]
        if picked == "root/root":
            assert (mine["move"], mine["raw_usage"], mine["raw_usage_replayed"]) == (0, 0, 0)
            assert line == 0 and screen.row == screen._row_index[0]
        else:
            assert screen.rows[line] is mine and mine["move"] == 0
            assert mine["raw_usage_replayed"] < mine["raw_usage"]  # a shorter half-life: less usage left
        table.focus()
        await pilot.press("down", "down")
        chosen = screen.row
        assert chosen == screen._row_index[line + 2]
        screen.query_one("#po-half_life", Input).value = "2-0"
        screen.query_one("#po-half_life", Input).focus()
        await pilot.press("enter")
        await until(pilot, lambda: screen.done is not None and screen.done.new.half_life_s == 2 * 86400.0)
        await pilot.pause()
        assert screen._row_index[table.cursor] == chosen
