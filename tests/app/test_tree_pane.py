"""Pilot tests of the association tree pane: what it shows and how the keys change it."""

from __future__ import annotations

import re

import numpy as np

from tests.app.conftest import ME, SIZE, ready, small_demo
from tui.analysis.standing import build_standing
from tui.app.widgets.fairshare_tree import FairshareTree, bar_text
from tui.formats.sshare import sshare_cells


def lines(tree: FairshareTree) -> list[str]:
    """The text the pane shows now, line by line (header first)."""
    return [tree.render_line(y).text for y in range(tree.size.height)]


def shown_names(tree: FairshareTree) -> list[str]:
    assert tree.table is not None
    return [str(tree.table.names[r]) for r in tree.rows_shown]


async def test_rows_show_sshare_cells(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        header = lines(tree)[0]
        for title in ("RawShares", "NormShares", "RawUsage", "EffectvUsage", "FairShare", "LevelFS", "Rank"):
            assert title in header
        standing = build_standing(small_demo()(), ME)
        cells = sshare_cells(standing.snapshot.tree, standing.fairshare)
        for y, row in enumerate(tree.rows_shown[:10], start=1):
            text = lines(tree)[y]
            assert str(tree.table.names[row]) in text
            for col in ("NormShares", "EffectvUsage", "FairShare"):
                assert cells[col][row] in text
        assert len(tree.children) == 0  # virtual: no widget per row


async def test_cursor_expand_collapse(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        t = tree.table
        account = next(i for i, r in enumerate(tree.rows_shown)
                       if t.has_children[r] and not tree.expanded[r])
        tree.cursor = account
        row = tree.selected_row
        before = len(tree.rows_shown)
        await pilot.press("enter")
        assert tree.expanded[row] and len(tree.rows_shown) > before
        assert "▾ " + str(t.names[row]) in lines(tree)[account + 1 - int(tree.scroll_offset.y)]
        await pilot.press("left")
        assert not tree.expanded[row] and len(tree.rows_shown) == before
        await pilot.press("left")  # collapsed already: go to the parent
        assert tree.selected_row == t.parent[row]
        await pilot.press("down", "down")
        assert tree.cursor == tree.rows_shown.tolist().index(t.parent[row]) + 2
        await pilot.press("minus")
        assert set(t.depth[tree.rows_shown]) <= {0, 1}
        await pilot.press("plus")
        assert len(tree.rows_shown) == t.size


async def test_sort_keeps_siblings_under_parent(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("plus", "F")
        assert (tree.sort_column, tree.sort_descending) == ("fairshare", True)
        assert "FairShare▼" in lines(tree)[0]
        t, order = tree.table, tree.rows_shown
        pos = np.empty(t.size, dtype=int)
        pos[order] = np.arange(len(order))
        assert np.all(pos[t.parent[1:]] < pos[1:])  # every row after its parent
        for parent in np.flatnonzero(t.has_children):
            kids = order[t.parent[order] == parent]
            keys = t.keys["fairshare"][kids]
            keys = keys[~np.isnan(keys)]
            assert np.all(np.diff(keys) <= 0)
        await pilot.press("F")
        assert tree.sort_descending is False
        await pilot.press("N")
        assert tree.sort_column == "name"
        await pilot.press("0")
        assert tree.sort_column is None and np.all(np.diff(tree.rows_shown) > 0)
        await pilot.press("s")
        assert tree.sort_column == "name"


async def test_filter_regex_and_escape(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        total = tree.table.size
        await pilot.press("slash", *"chem", "enter")
        assert tree.filter_text == "chem"
        assert any("chem" in n for n in shown_names(tree))
        assert tree.table.names[tree.selected_row].startswith("chem")
        assert "filter /chem/" in str(app.query_one("#status").render())
        # Every shown row matches, or is an ancestor or a descendant of a match.
        t = tree.table
        for r in tree.rows_shown:
            chain = [r]
            while chain[-1] > 0:
                chain.append(int(t.parent[chain[-1]]))
            below = any(re.search("chem", str(t.names[c]), re.I) for c in chain)
            assert below or tree.matches[r] or tree.keep[r]
        await pilot.press("slash", *"(unclosed", "enter")
        assert tree.filter_text == "chem"  # unchanged
        assert any("invalid regex" in n.message for n in app._notifications)
        await pilot.press("escape")
        assert tree.filter_text == "" and tree.keep is None
        assert total == tree.table.size


async def test_jump_to_me_and_highlight(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("m")
        row = tree.selected_row
        assert tree.table.users[row] == ME and tree.me_mask[row]
        y = tree.cursor - int(tree.scroll_offset.y) + 1
        assert 0 < y < tree.size.height
        assert ME in lines(tree)[y]
        me_style = tree.get_component_rich_style("assoc-tree--me")
        assert me_style.bgcolor is not None


async def test_command_user_and_unknown(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        other = str(tree.table.users[np.flatnonzero(tree.table.is_user)[5]])
        await pilot.press("colon", *f"user {other}", "enter")
        assert tree.table.users[tree.selected_row] == other
        await pilot.press("colon", *"alloc", "enter")
        await pilot.pause()
        assert app.query_one("#tabs").active == "alloc"
        await pilot.press("colon", *"tre", "enter")
        assert any("did you mean :tree" in n.message.lower() for n in app._notifications)
        await pilot.press("colon", *"tree", "enter")
        await pilot.pause()
        assert app.query_one("#tabs").active == "tree"
        await pilot.press("colon", "q", "enter")
        await pilot.pause()
    assert app.return_code in (0, None)


def test_bar_text() -> None:
    assert bar_text(1.0, 4) == "████"
    assert bar_text(0.0, 4) == "····"
    assert bar_text(0.5, 4) == "██··"
    assert bar_text(float("nan"), 4) == "    "


async def test_selection_timer_under_a_modal(make_app) -> None:
    """The breakdown's debounce timer fires while help is open: no query on the modal screen."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("2", "1", "down", "question_mark")
        await pilot.pause(0.3)
        assert app.is_running and app._exception is None


async def test_command_typed_in_one_burst(make_app) -> None:
    """Keys queued behind ":" (fast typing, paste, tmux send-keys) reach the prompt."""
    from textual import events

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for ch in ":sort fairshare":
            app.post_message(events.Key({":": "colon", " ": "space"}.get(ch, ch), ch))
        await pilot.pause()
        await pilot.press("enter")
        assert app.query_one(FairshareTree).sort_column == "fairshare"
        assert app.theme == "dark"  # the "t" did not cycle the theme


async def test_filter_typed_in_one_burst_after_a_tab_switch(make_app) -> None:
    """"m3", then "1/varg" (tmux send-keys): every key lands where the one before it sent focus."""
    from textual import events

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        for ch in "m3":  # "m" focuses the tree, "3" the allocations pane, in one burst
            app.post_message(events.Key(ch, ch))
        await pilot.pause()
        for ch in "1/varg":
            app.post_message(events.Key({"/": "slash"}.get(ch, ch), ch))
        await pilot.pause()
        await pilot.press("enter")
        tree = app.query_one(FairshareTree)
        assert tree.filter_text == "varg" and app.focused is tree


async def test_a_pane_takes_focus_so_keys_scroll_it(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("m", "2")
        assert app.focused is not None and app.focused in app.query_one("#pane-breakdown").query("*")
        await pilot.press("1")
        assert app.focused is app.query_one(FairshareTree)


async def test_sort_takes_an_unambiguous_prefix(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        await pilot.press("colon", *"sort fair", "enter")
        assert app.query_one(FairshareTree).sort_column == "fairshare"
        await pilot.press("colon", *"sort r", "enter")  # raw_shares, raw_usage, rank: ambiguous
        assert app.query_one(FairshareTree).sort_column == "fairshare"
        assert any("no column 'r'" in n.message for n in app._notifications)
