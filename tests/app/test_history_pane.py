"""The history pane alone in a tiny app: dated plots from a capture's sacct, or a plain 'none'."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual_plotext import PlotextPlot

from tests.conftest import FIXTURES
from tui.analysis.standing import build_standing
from tui.app.panes.history import HistoryPane
from tui.sources.demo import demo_snapshot
from tui.sources.saved import load_folder

LIVE = FIXTURES / "slurm" / "live" / "fair_tree"


class PaneApp(App):
    def compose(self) -> ComposeResult:
        yield HistoryPane(id="pane")


def _text(pane: HistoryPane) -> str:
    return "\n".join(str(pane.query_one(f"#{i}").render()) for i in ("hi-title", "hi-check"))


async def _read(app: App, pilot, pane: HistoryPane) -> None:  # noqa: ANN001 - Pilot
    """Wait (up to 5 s) until the pane has read the records and drawn its check."""
    for _ in range(50):
        await pilot.pause(0.1)
        await app.workers.wait_for_complete()
        if "agrees" in _text(pane):
            break


async def test_capture_with_sacct_plots_usage_and_the_check() -> None:
    snap = load_folder(LIVE)
    standing = build_standing(snap, "la")
    app = PaneApp()
    async with app.run_test(size=(120, 45)) as pilot:
        pane = app.query_one(HistoryPane)
        pane.show(standing, None)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = _text(pane)
        assert "Usage of everyone, last 14 days" in text and "3 of 3 jobs" in text
        assert "-0.0045%, agrees" in text
        assert all(p.display for p in pane.query(PlotextPlot))
        row = next(i for i in range(snap.tree.size) if snap.tree.label(i) == "lsub/lc")
        pane.show(standing, row)  # cached: no second read
        await pilot.pause()
        text = _text(pane)
        assert "Usage of lsub/lc" in text and "1 of 3 jobs" in text and "RawUsage 1,999,810" in text


async def test_the_demo_has_a_past_that_rebuilds_its_raw_usage() -> None:
    """The default source is no empty pane: the demo's made-up accounting records plot, and
    Slurm's decay law over them gives back the demo's RawUsage (issue 21)."""
    from tui.sources.demo import demo_history

    snap = demo_snapshot(seed=0)
    jobs, _ = demo_history(snap)
    app = PaneApp()
    async with app.run_test(size=(120, 45)) as pilot:
        pane = app.query_one(HistoryPane)
        pane.show(build_standing(snap, "alice"), None)
        await pilot.pause()
        await app.workers.wait_for_complete()
        await pilot.pause()
        text = _text(pane)
        assert f"{len(jobs)} of {len(jobs)} jobs" in text
        assert f"RawUsage {int(snap.tree.usage_raw[0]):,}" in text and "agrees" in text
        assert "largest difference 0.0000%" in text
        assert all(p.display for p in pane.query(PlotextPlot))


async def test_in_the_app_the_records_are_read_when_the_tab_is_shown(isolated_paths) -> None:
    from tui.app.main import build_app
    from tui.cli import build_parser

    # A user with no association here: the tree opens on its first row (the cluster), not on "me".
    app = build_app(build_parser().parse_args(["--from", str(LIVE), "--user", "nobody-here"]))
    async with app.run_test(size=(120, 45)) as pilot:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        assert not app.query(HistoryPane)  # hidden: not even built yet, nothing read
        app.query_one("TabbedContent").active = "history"
        await pilot.pause()
        pane = app.query_one(HistoryPane)
        await _read(app, pilot, pane)
        assert "Usage of everyone" in _text(pane) and "agrees" in _text(pane)


async def test_the_tab_follows_the_selection_made_while_it_was_hidden(isolated_paths) -> None:
    """History shown on one row, back to the tree, another row selected, History again: it plots
    the new row (it kept the first one: found by trying the app in tmux)."""
    from tui.app.main import build_app
    from tui.app.widgets.fairshare_tree import FairshareTree
    from tui.cli import build_parser

    app = build_app(build_parser().parse_args(["--from", str(LIVE), "--user", "la"]))
    async with app.run_test(size=(120, 45)) as pilot:
        await pilot.pause(0.5)
        await app.workers.wait_for_complete()
        tabs = app.query_one("TabbedContent")
        tabs.active = "history"
        await pilot.pause()
        pane = app.query_one(HistoryPane)
        await _read(app, pilot, pane)
        assert "Usage of grp/la" in _text(pane)
        tabs.active = "tree"
        await pilot.pause()
        tree = app.query_one(FairshareTree)
        snap = load_folder(LIVE)
        tree.go_to_row(next(i for i in range(snap.tree.size) if snap.tree.label(i) == "lsub/lc"))
        await pilot.pause()
        tabs.active = "history"
        await pilot.pause(0.2)
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert "Usage of lsub/lc" in _text(pane)


RECONFIGURE = FIXTURES / "slurm-26.05" / "ctld_log" / "reconfigure_2605"


async def test_the_check_runs_on_the_logged_cycles_where_the_capture_saved_them() -> None:
    """A 26.05 capture with slurmctld's cycles (a reconfigure re-exec'd it mid-job): the pane's check
    runs on them, as ``fairtop history`` does, and says so; a capture without them says its grid."""
    for folder, grid in ((RECONFIGURE, "on slurmctld's logged cycles, within 1e-6 relative + 1"),
                         (LIVE, "on cycles every 60 s, within one period's decay")):
        snap = load_folder(folder)
        app = PaneApp()
        async with app.run_test(size=(120, 45)) as pilot:
            pane = app.query_one(HistoryPane)
            pane.show(build_standing(snap, ""), None)
            await _read(app, pilot, pane)
            text = _text(pane)
            assert f"rebuilt from the jobs with Slurm's decay law ({grid}): " in text, text
            assert "agrees" in text
