"""The what-if planner's editor: several job lines, validation beside each field, TOML save and
load, and keys typed fast landing in the field they were typed for."""

from __future__ import annotations

import tomllib

from textual import events
from textual.pilot import Pilot
from textual.widgets import Button, Input, Static, TabbedContent

from tests.app.conftest import SIZE, ready
from tests.app.test_panes import PaneApp, set_fields, settle, shown, two_user_standing
from tui.analysis.planner import load_scenario
from tui.app.panes.whatif import JobEditor, WhatIfPane
from tui.app.widgets.series_plot import SeriesPlot


def flat(pane: WhatIfPane) -> str:
    return " ".join(shown(pane).split())


def error_of(job: JobEditor, key: str) -> str:
    return str(job.query_one(f".e-{key}", Static).render())


async def burst(pilot: Pilot, *keys: str) -> None:
    """Send ``keys`` to the app as a terminal delivers fast typing or a paste: all queued at once,
    none waiting for the previous one to be handled (``pilot.press`` waits for idle after each)."""
    app = pilot.app
    assert app._driver is not None
    for key in keys:
        event = events.Key(key, key if len(key) == 1 else None)
        event.set_sender(app)
        app._driver.send_message(event)
    await settle(pilot)


async def press_button(pilot: Pilot, button: Button) -> None:
    button.press()
    await settle(pilot)


async def test_several_job_lines_added_duplicated_removed() -> None:
    # No decay, 1 billing per CPU: job 1 = 8 CPUs x 10 h = 80 SU; job 2 = 3 copies of 2 CPUs x 1 h = 6 SU.
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 120)) as pilot:
        pane.show(two_user_standing(), None)
        await settle(pilot)
        set_fields(pane, {"horizon": "1-0", "step": "1:00:00"}, cpus="8", walltime="10:00:00")
        await press_button(pilot, pane.query_one("#wi-add", Button))
        assert len(pane.jobs) == 2
        set_fields(pane, {}, 1, cpus="2", count="3", walltime="1:00:00", start="2:00:00")
        await settle(pilot)
        two = flat(pane)
        await press_button(pilot, pane.jobs[1].query_one(".wi-dup", Button))
        three = flat(pane)
        assert [j.value("count") for j in pane.jobs] == ["1", "3", "3"]
        await press_button(pilot, pane.jobs[0].query_one(".wi-remove", Button))
        after_remove = flat(pane)
        titles = [str(j.query_one(".wi-job-title", Static).render()) for j in pane.jobs]
    assert "job 1: 1 run × 10 h at 8.00 billing/s = 80.0 SU" in two
    assert "job 2: 3 runs × 1 h at 2.00 billing/s = 6.0 SU" in two
    assert "campaign: 86.0 SU in all" in two
    assert "job 3: 3 runs × 1 h at 2.00 billing/s = 6.0 SU" in three and "campaign: 92.0 SU in all" in three
    assert titles == ["Job 1", "Job 2"]
    assert "job 1: 3 runs × 1 h" in after_remove and "campaign: 12.0 SU in all" in after_remove
    # root/a at the end of the day: 10 h + 2 x 6 SU
    assert "fairshare 0.7071 → 0.5563, usage 10.0 → 22.0 SU" in after_remove


async def test_each_message_beside_its_field() -> None:
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 120)) as pilot:
        pane.show(two_user_standing(), None)
        await settle(pilot)
        set_fields(pane, {"step": "2-0", "horizon": "1-0"}, cpus="x", repeat="2", nodes="9")
        await settle(pilot)
        job = pane.jobs[0]
        errors = {k: error_of(job, k) for k in ("cpus", "every", "nodes", "count", "walltime")}
        step = str(pane.query_one("#wi-plan .e-step", Static).render())
        text = flat(pane)
        set_fields(pane, {"step": "1:00:00"}, cpus="4", repeat="1", nodes="1", user="nobody")
        await settle(pilot)  # valid text; the projection says the user does not exist
        user_error = error_of(job, "user")
        unknown = flat(pane)
        set_fields(pane, {}, user="")
        await settle(pilot)
        cleared = error_of(job, "user"), flat(pane)
    assert errors == {"cpus": "a whole number, not 'x'", "every": "needed with repeat 2: the time between repeats",
                      "nodes": "cpu has 4 nodes", "count": "", "walltime": ""}
    assert step == "no longer than the horizon"
    assert "Fix the fields marked in red to see the projection." in text
    assert user_error == "no association of user 'nobody'"
    assert "Cannot project this campaign: plan:jobs[0].user: no association of user 'nobody'" in unknown
    assert cleared[0] == "" and "job 1: 1 run × 24 h" in cleared[1]


async def test_save_and_load_round_trip(tmp_path) -> None:
    path = tmp_path / "plan.toml"
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 120)) as pilot:
        pane.show(two_user_standing(), None)
        await settle(pilot)
        save, load = pane.query_one("#wi-save", Button), pane.query_one("#wi-load", Button)
        await press_button(pilot, save)
        no_path = str(pane.query_one("#wi-file-msg", Static).render())
        pane.query_one("#wi-path", Input).value = str(path)
        set_fields(pane, {"horizon": "14-0", "step": "12:00:00", "target": "0.4"}, cpus="8", walltime="12:00:00",
                   count="20", start="2-0", every="7-0", repeat="2", mem_gb="64")
        await settle(pilot)
        await press_button(pilot, save)
        saved_msg = str(pane.query_one("#wi-file-msg", Static).render())
        saved = tomllib.loads(path.read_text())
        sc = load_scenario(path)
        # change everything, add a line, then load the file back
        set_fields(pane, {"horizon": "3-0", "target": "0.9"}, cpus="1", count="1")
        await press_button(pilot, pane.query_one("#wi-add", Button))
        await press_button(pilot, load)
        fields = pane.jobs[0].values()
        plan = {k: pane.query_one(f"#wi-{k}", Input).value for k in ("horizon", "step", "target")}
        lines = len(pane.jobs)
        set_fields(pane, {}, cpus="x")
        await settle(pilot)
        await press_button(pilot, save)
        refused = str(pane.query_one("#wi-file-msg", Static).render())
        (tmp_path / "bad.toml").write_text('horizon = "1-0"\n[[jobs]]\ncpu = 4\n')
        pane.query_one("#wi-path", Input).value = str(tmp_path / "bad.toml")
        await press_button(pilot, load)
        bad = str(pane.query_one("#wi-file-msg", Static).render())
        pane.query_one("#wi-path", Input).value = str(tmp_path / "no" / "such" / "dir.toml")
        await press_button(pilot, load)
        missing = str(pane.query_one("#wi-file-msg", Static).render())
    assert no_path == "Type a file path first (e.g. ~/plan.toml)."
    assert saved_msg == f"Saved 1 job line(s) to {path}."
    assert saved["horizon"] == "14-00:00:00" and saved["target"] == 0.4
    assert saved["jobs"] == [{"user": "a", "account": "root", "partition": "cpu", "count": 20, "repeat": 2,
                              "cpus": 8, "mem": 65536.0, "start": "2-00:00:00", "walltime": "0-12:00:00",
                              "every": "7-00:00:00"}]
    assert sc.jobs[0].count == 20 and sc.jobs[0].every_s == 7 * 86400 and sc.step_s == 12 * 3600
    assert lines == 1
    assert plan == {"horizon": "14-0", "step": "12:00:00", "target": "0.4"}
    assert fields == {"partition": "cpu", "gpu_type": "", "count": "20", "nodes": "1", "cpus": "8", "gpus": "0",
                      "mem_gb": "64", "walltime": "12:00:00", "start": "2-0", "every": "7-0", "repeat": "2",
                      "user": "a", "account": "root"}
    assert refused == "Not saved: 1 field(s) marked in red need fixing first."
    assert bad == f"Not loaded: {tmp_path / 'bad.toml'}:jobs[0].cpu: unknown key; did you mean 'cpus'?"
    assert missing.startswith(f"Not loaded: {tmp_path / 'no' / 'such' / 'dir.toml'}: No such file")


KEYS_AFTER_TAB = ("end", "2", "tab", "end", "3", "tab", "end", "5", "shift+tab", "end", "7")
"""From Count ("1"): Count "12", Nodes "13" -> back to Nodes "137", CPUs/node "45"."""


async def test_keys_typed_fast_after_tab_land_in_their_field() -> None:
    for send in ("press", "burst"):
        pane = WhatIfPane()
        async with PaneApp(pane).run_test(size=(150, 120)) as pilot:
            pane.show(two_user_standing(), None)
            await settle(pilot)
            job = pane.jobs[0]
            job.input("count").focus()
            await pilot.pause()
            if send == "press":
                await pilot.press(*KEYS_AFTER_TAB)
            else:
                await burst(pilot, *KEYS_AFTER_TAB)
            values = {k: job.input(k).value for k in ("count", "nodes", "cpus")}
            assert values == {"count": "12", "nodes": "137", "cpus": "45"}, send
            assert pilot.app.focused is job.input("nodes"), send


async def test_esc_leaves_a_field_and_the_global_keys_work(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("m", "4")
        await ready(pilot)
        tabs = app.query_one(TabbedContent)
        pane = app.query_one(WhatIfPane)
        cpus = pane.jobs[0].input("cpus")
        assert app.focused is pane.query_one("#wi-scroll")  # no field: the app's keys work
        await burst(pilot, "2")
        assert tabs.active == "breakdown"
        await burst(pilot, "4")
        cpus.focus()
        await pilot.pause()
        await burst(pilot, "end", "8", "escape", "1")  # "1" after Esc is the Tree key, not a digit
        assert cpus.value == "48" and tabs.active == "tree"
        await burst(pilot, "4", "question_mark")
        assert tabs.active == "whatif" and app.screen.__class__.__name__ == "HelpScreen"


async def test_a_result_builds_only_the_plots_on_screen() -> None:
    # Building a plotext figure parses every date (strptime) and lays out its canvas in Python:
    # a result hands each plot its figure, and only a plot drawn on screen builds it, in a thread.
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=SIZE) as pilot:
        pane.show(two_user_standing(), None)
        await settle(pilot)
        set_fields(pane, {"horizon": "1-0", "step": "1:00:00"}, cpus="8", walltime="10:00:00")
        await settle(pilot)
        await pilot.pause()
        await settle(pilot)

        def built(plot: SeriesPlot) -> bool:
            return plot.built is not None and plot.built[0].figure is plot.figure

        plots = [p for p in pane.query(SeriesPlot) if p.display]
        assert len(plots) >= 3 and all(p.figure is not None for p in plots)
        assert plots[0].figure is not None and plots[0].figure.title.endswith("usage (SU, decayed)")
        visible = pane.screen._compositor.visible_widgets
        on_screen = [p for p in plots if p in visible]
        assert on_screen and len(on_screen) < len(plots)
        assert all(built(p) for p in on_screen)
        assert all(p.built is None for p in plots if p not in visible)
        assert "without" in plots[0].built[1].plain  # type: ignore[index] - the legend, as built
        pane.query_one("#wi-scroll").scroll_end(animate=False)
        await pilot.pause()
        await settle(pilot)
        await pilot.pause()
        assert plots[-1] in pane.screen._compositor.visible_widgets and built(plots[-1])


async def test_a_key_in_a_field_lays_out_nothing_and_the_table_fits_its_width() -> None:
    # A layout is of the whole screen (20-40 ms of the UI thread at 20k associations, beside the
    # projection): Input reset its virtual size at each change, so every key laid out the screen.
    # The table is text rendered at the width it has, and again at a new width.
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=SIZE) as pilot:
        pane.show(two_user_standing(), None)
        await settle(pilot)
        cpus = pane.jobs[0].input("cpus")
        cpus.focus()
        await settle(pilot)
        before = pane._result
        assert before is not None
        screen = pilot.app.screen
        layouts: list[bool] = []
        """Per screen layout: whether the result on screen was still the one before the keys."""
        refresh_layout = screen._refresh_layout

        def counted(*args: object, **kwargs: object) -> None:
            layouts.append(pane._result is before)
            refresh_layout(*args, **kwargs)  # type: ignore[arg-type]

        screen._refresh_layout = counted  # type: ignore[method-assign]
        await burst(pilot, "end", "8")
        assert cpus.value == "48" and pane._result is not before
        assert layouts and True not in layouts  # laid out only for the new result
        table = pane.query_one("#wi-table", Static)
        lines = str(table.render()).splitlines()
        assert "without → with the campaign" in lines[0] and len(lines) >= 3
        assert max(map(len, lines)) <= table.content_size.width == pane._table_width
        wide = max(map(len, lines))
        await pilot.resize_terminal(60, 40)
        await settle(pilot)
        await pilot.pause()
        narrow = str(table.render()).splitlines()
        assert table.content_size.width < wide and pane._table_width == table.content_size.width
        assert max(map(len, narrow)) <= table.content_size.width and narrow[0].rstrip() == lines[0].rstrip()
