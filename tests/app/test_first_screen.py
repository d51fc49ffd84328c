"""Issue 11 in the app: the first screen about you, layouts from 80x24 to 200x60, the tree's
commands, and the breakdown's scroll, rank, ties and dated recovery curves.

The demo is the snapshot tests' (seed 0, user alice, 2025-01-15): alice is
mech_vargas_lab/alice, rank 874 of 2,501, one of 24 `parent` users of her lab.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

import numpy as np
from textual.containers import VerticalScroll
from textual.widgets import Static
from textual_plotext import PlotextPlot

from tests.app.conftest import ME, ready, until
from tui.app import commands
from tui.app.app import FairtopApp
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.config import Settings, State
from tui.sources.demo import demo_snapshot

NOW = datetime(2025, 1, 15, tzinfo=timezone.utc)
SUMMARY = ("alice (demo user) · FairShare 0.349460 · 1,627 of 2,501 users ahead of you · held back by "
           "mech_vargas_lab (5th of 5 in mech) · 1 pending job, priority 8.6M")


def demo_app() -> FairtopApp:
    app = FairtopApp(Settings(theme="dark"), partial(demo_snapshot, seed=0, me=ME, now=NOW), ME, State())
    # Every toast, kept: a loaded machine can outlast a toast's timeout before the test looks.
    app.told = []  # type: ignore[attr-defined]
    notify = app.notify

    def recording(message: str, **kwargs):  # noqa: ANN003, ANN202
        app.told.append(message)  # type: ignore[attr-defined]
        return notify(message, **kwargs)

    app.notify = recording  # type: ignore[method-assign]
    return app


async def settled(pilot) -> None:  # noqa: ANN001
    """Ready, and the breakdown's selection timer fired and its worker done."""
    for _ in range(2):
        await ready(pilot)
        await pilot.pause(0.3)
    await ready(pilot)


def line_of(tree: FairshareTree, row: int, width: int) -> str:
    return tree._row_strip(row, False, width, tree.layout_for(width)).text


def messages(app: FairtopApp) -> list[str]:
    return list(app.told)  # type: ignore[attr-defined]


async def test_opens_on_a_summary_and_on_my_row() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert str(app.query_one("#me-summary", Static).content).startswith(SUMMARY)
        tree = app.query_one(FairshareTree)
        assert tree.selected_row == int(app.standing.my_rows[0])
        assert tree.table.names[tree.selected_row] == ME
        # on screen (centred), not only selected: the scroll follows after a refresh
        await until(pilot, lambda: tree.scroll_offset.y < tree.cursor < tree.scroll_offset.y + tree.size.height - 1)
        top = int(tree.scroll_offset.y)
        assert top < tree.cursor < top + tree.size.height - 1


async def test_top_level_accounts_sit_under_root_and_counts_stay_right() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        fas = int(np.flatnonzero(tree.table.names == "fas")[0])
        assert line_of(tree, 0, 120).startswith("▾ root ")
        assert line_of(tree, fas, 120).startswith("  ▾ fas ")
        await pilot.press("minus")  # collapse all, then "m" opens the path again
        await pilot.press("m")
        await ready(pilot)
        shown = len(tree.rows_shown)
        assert f"· {shown:,} shown ·" in str(app._status.content)
        await pilot.press("slash", *"vargas", "enter")
        await ready(pilot)
        assert f"· {len(tree.rows_shown):,} shown ·" in str(app._status.content)
        assert len(tree.rows_shown) != shown
        await pilot.press("slash", *"zzzq", "enter")
        await ready(pilot)
        assert len(tree.rows_shown) == 0
        assert "filter /zzzq/ (no match, Esc clears)" in str(app._status.content)
        assert "No association matches /zzzq/. Esc clears the filter." in messages(app)


async def test_reload_acknowledges_and_theme_lists_themes() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("r")
        await ready(pilot)
        assert any(m.startswith("Reading ") and m.endswith(" again…") for m in messages(app))
        assert "Reloaded: snapshot 2025-01-15 00:00 UTC." in messages(app)
        await pilot.press("colon", *"theme bogus", "enter")
        await ready(pilot)
        toast = next(m for m in messages(app) if "bogus" in m)
        assert toast.startswith("There is no theme 'bogus'. The themes are dark, ") and toast.endswith(".")
        assert "ansi16" in toast and app.theme == "dark"


async def test_account_command_and_palette() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("colon", *"account mech_guo_lab", "enter")
        await ready(pilot)
        assert tree.table.names[tree.selected_row] == "mech_guo_lab" and not tree.table.is_user[tree.selected_row]
        await pilot.press("colon", *"user mech_vargas_lab", "enter")
        await ready(pilot)
        assert tree.table.names[tree.selected_row] == "mech_vargas_lab"
        assert any(m.startswith("mech_vargas_lab is an account, not a user") for m in messages(app))
        await pilot.press("colon", *"account mech_vargas", "enter")
        await ready(pilot)
        assert "There is no account 'mech_vargas'. Did you mean 'mech_vargas_lab'?" in messages(app)
        provider = commands.FairtopCommands(app.screen)
        hits = [str(hit.text) async for hit in provider.search("vargas_lab")]
        assert "Account: mech_vargas_lab" in hits
        entries = {title: text for title, text, _ in commands._palette_entries(app)}
        assert entries["Jump to me"].startswith("m · :me · ")
        assert entries["Breakdown"].startswith("2 · :breakdown · ")


async def test_fairshare_sort_orders_accounts_by_their_best_user() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("F")  # FairShare, best first
        tree, standing = app.query_one(FairshareTree), app.standing
        t, res = standing.snapshot.tree, standing.fairshare
        tops = [int(r) for r in tree.order if t.parent[r] == 0]
        best = []
        for r in tops:  # the best rank among the users below each top-level association
            below = np.zeros(t.size, dtype=bool)
            below[r] = True
            for _ in range(8):
                below |= below[np.maximum(t.parent, 0)] & (t.parent >= 0)
            best.append(int(res.rank[below & t.is_user].max()))
        assert best == sorted(best, reverse=True)
        assert best[0] == 2501  # the first account holds the user ranked first


async def test_80_columns_choose_columns_and_scroll_sideways() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        width = tree.scrollable_content_region.width
        layout = tree.layout_for(width)
        assert [c.id if c else "bar" for c in layout.columns] == ["fairshare", "level_fs", "rank", "bar"]
        assert layout.hidden_right == 4  # EffectvUsage, NormShares, RawShares, RawUsage
        lab = int(np.flatnonzero(tree.table.names == "mech_vargas_lab")[0])
        assert "▾ mech_vargas_lab " in line_of(tree, lab, width)  # not cut
        mine = line_of(tree, tree.selected_row, width).split()
        assert mine[:4] == ["alice", "0.349460", "parent", "874"]
        assert tree._header(layout).endswith(" ▸")
        presses = 0
        while tree.layout_for(width).hidden_right:  # shift+right / ">" until RawUsage shows
            await pilot.press("greater_than_sign")
            presses += 1
            assert presses <= 7
        layout = tree.layout_for(width)
        assert layout.columns[-1].id == "raw_usage" and layout.hidden_left
        assert "14689862" in line_of(tree, tree.selected_row, width)
        assert tree._header(layout).startswith("◂Account / User")
        await pilot.press(*["less_than_sign"] * presses)
        assert tree.layout_for(width).hidden_left == 0
        status = str(app._status.content)
        assert status.endswith("me: alice") and len(status) <= 78


async def test_status_keeps_me_with_sort_and_filter_at_120() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("F", "slash", *"vargas", "enter")
        await ready(pilot)
        status = str(app._status.content)
        assert "sort FairShare ▼" in status and "filter /vargas/" in status and status.endswith("me: alice")
        assert len(status) <= 118


async def test_200_columns_show_the_breakdown_beside_the_tree() -> None:
    app = demo_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await settled(pilot)
        side = app.query_one("#pane-side")
        assert side.display
        assert str(side.query_one("#bd-title", Static).content).startswith(
            "Why mech_vargas_lab/alice (user) has its fairshare")
        tree = app.query_one(FairshareTree)
        assert tree.layout_for(tree.scrollable_content_region.width).name_width <= 45
        await pilot.press("down")
        await settled(pilot)
        for _ in range(50):  # a loaded machine's worker may take longer than settled's pauses
            if "anthonyj" in str(side.query_one("#bd-title", Static).content):
                break
            await pilot.pause(0.2)
        assert "anthonyj" in str(side.query_one("#bd-title", Static).content)
    narrow = demo_app()
    async with narrow.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        assert not any(p.display for p in narrow.query("#pane-side"))  # built only when wide


async def test_breakdown_scroll_home_rank_ties_and_recovery() -> None:
    app = demo_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await ready(pilot)
        await pilot.press("2")
        await ready(pilot)
        pane = app.query_one("#pane-breakdown")
        text = "\n".join(str(w.content) for w in pane.query(Static))
        assert "tied with all 24 (equal LevelFS)" in text and "ties ahmedj" not in text
        assert "LevelFS = parent: none of its own (sshare prints it empty)" in text
        assert "mech_vargas_lab: 5th of 5 in mech: 60 users under the 4 siblings placed before it" in text
        assert "N − users reached first = 2,501 − 1,628 = 873" in text
        # alice's lab keeps its usage: her rank and factor do not move in 12 days (4 half-lives of 3 days)
        assert "It stays below 0.5 over the next 12 days (to 2025-01-27)." in text
        plots = list(pane.query(PlotextPlot))
        assert [p.display for p in plots] == [True, True]
        scroll = pane.query_one(VerticalScroll)
        await pilot.press("end")
        await pilot.pause(0.2)
        assert scroll.scroll_y > 0
        await pilot.press("home")
        await pilot.pause(0.2)
        assert scroll.scroll_y == 0
        await pilot.press("end")
        await pilot.pause(0.2)
        await pilot.press("1", "up", "2")  # ahmedj, the row above
        await ready(pilot)
        assert scroll.scroll_y == 0
        await pilot.press("colon", *"account mech_vargas_lab", "enter", "2")
        await ready(pilot)
        assert [p.display for p in plots] == [True, False]  # an account: no fairshare curve
        text = "\n".join(str(w.content) for w in pane.query(Static))
        assert "No fairshare curve: a Fair Tree account has no factor of its own." in text


async def test_help_at_80_columns_drops_the_id_column() -> None:
    app = demo_app()
    async with app.run_test(size=(80, 24)) as pilot:
        await ready(pilot)
        await pilot.press("question_mark")
        await pilot.pause()
        table = app.screen.query_one(Static).content
        assert [c.header for c in table.columns] == ["Keys", "Command", "Action"]
        assert app._footer.compact and not app._footer.show_command_palette



async def test_widened_to_200_columns_the_side_pane_shows_my_row() -> None:
    """Widened after the load, the side pane is mounted then, and the breakdown asked for before
    the mount is done: it shows the selected row once mounted, not "Select an association in the
    tree." until the cursor moves. The same race at start failed CI's 200-column screenshot."""
    app = FairtopApp(Settings(), partial(demo_snapshot, seed=0, users=400, accounts=80, me=ME,
                                         now=datetime(2025, 1, 15, tzinfo=timezone.utc)), ME, State())
    async with app.run_test(size=(120, 40)) as pilot:
        await settled(pilot)
        await pilot.resize_terminal(200, 60)
        await settled(pilot)
        title = str(app.query_one("#pane-side").query_one("#bd-title", Static).content)
        assert title.startswith("Why chem_adeyemi_lab/alice (user) has its fairshare")
