"""What a key repaints: over SSH every repainted line costs its bytes, so a cursor move in the tree
and a Tab between two fields of the what-if form must repaint their few lines, not the screen.

The app's updates are caught where Textual hands them to the terminal (``App._display``): the
screen lines each update covers are recorded, and each test asserts they lie within the widgets
the key changed.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from textual import events
from textual._compositor import ChopsUpdate
from textual.app import App
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget

from tests.app.conftest import SIZE, ready
from tui.app.panes import breakdown
from tui.app.panes.whatif import WhatIfPane
from tui.app.widgets import fairshare_tree
from tui.app.widgets.fairshare_tree import FairshareTree


@contextmanager
def painted(app: App[int]) -> Iterator[set[tuple[int, int, int]]]:
    """The spans ``(y, x1, x2)`` of the screen the app repaints while the block runs (a
    whole-screen update: every line, whole)."""
    spans: set[tuple[int, int, int]] = set()

    def display(screen: Screen[object], renderable: object) -> None:
        if isinstance(renderable, ChopsUpdate):
            spans.update(renderable.spans)
        elif renderable is not None:
            spans.update((y, 0, app.size.width) for y in range(app.size.height))

    app._display = display  # type: ignore[method-assign]
    try:
        yield spans
    finally:
        del app._display


def lines(spans: set[tuple[int, int, int]]) -> set[int]:
    return {y for y, _, _ in spans}


def lines_of(*widgets: Widget) -> set[int]:
    return {y for w in widgets for y in range(w.region.y, w.region.bottom)}


async def settle(pilot: Pilot[int]) -> None:
    """Let the screen's update timer run (it paints what the key made dirty)."""
    for _ in range(3):
        await pilot.pause(0.05)


async def test_a_cursor_move_repaints_two_rows_and_the_status_line(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("m")  # alice's row, mid-screen: no scroll
        await settle(pilot)
        top = tree.region.y + 1 - int(tree.scroll_offset.y)  # screen line of row 0 (under the header)
        old = top + tree.cursor
        with painted(app) as spans:
            await pilot.press("down")
            await settle(pilot)
        assert tree.cursor == old - top + 1
        status = app.query_one("#status")
        assert {old, old + 1} <= lines(spans)  # the update was caught
        assert lines(spans) <= {old, old + 1} | lines_of(status)


async def test_a_collapse_repaints_from_its_row_down(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("m", "left")  # alice's account, open
        await settle(pilot)
        row = tree.selected_row
        assert row is not None and tree.expanded[row]
        line = tree.region.y + 1 - int(tree.scroll_offset.y) + tree.cursor
        with painted(app) as spans:
            await pilot.press("left")  # collapse it
            await settle(pilot)
        assert not tree.expanded[row]
        scrollbar = tree.scrollable_content_region.right  # its column, right of the rows
        assert line in lines(spans)
        above = {(y, x1, x2) for y, x1, x2 in spans if y < line}
        assert all(x1 >= scrollbar for _, x1, _ in above), sorted(above)  # above the row: the scrollbar only


async def test_a_tab_in_the_what_if_form_repaints_the_two_fields(make_app) -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("4")
        await ready(pilot)
        pane = app.query_one(WhatIfPane)
        await pilot.press("tab")  # into the form's first field
        await ready(pilot)
        await settle(pilot)
        first = app.focused
        assert first is not None and first in pane.query("Input").nodes
        with painted(app) as spans:
            await pilot.press("tab")
            await settle(pilot)
        second = app.focused
        assert second is not None and second is not first
        footer = app.query_one("Footer")
        assert lines_of(second) & lines(spans)  # the update was caught
        assert lines(spans) <= lines_of(first, second, footer), sorted(lines(spans))


async def test_a_held_key_draws_the_tree_once_it_rests(make_app, monkeypatch) -> None:
    # Keys up to 6 s apart count as held (0.1 s in the app), and the held keys' draw waits 6 s:
    # on a loaded machine the burst below still comes as one, before that draw (with 2 s, eight
    # Pilot presses took longer than that 2 runs in 3 at load average 10).
    monkeypatch.setattr(fairshare_tree, "HELD_KEY_S", 6.0)
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("m")
        await settle(pilot)
        top = tree.region.y + 1 - int(tree.scroll_offset.y)
        first = top + tree.cursor
        with painted(app) as spans:
            await pilot.press(*["down"] * 8)
            await pilot.pause()
            drawn_while_held = lines(spans) & lines_of(tree)
            for _ in range(200):  # the timer draws where the cursor rests, 6 s on (later under load)
                await pilot.pause(0.1)
                if first + 8 in lines(spans):
                    break
        assert tree.cursor == first - top + 8
        assert drawn_while_held <= {first, first + 1}  # at most the first key, at once; the others wait
        assert {first, first + 8} <= lines(spans) & lines_of(tree) <= {first, first + 1, first + 8}


async def test_the_breakdown_beside_the_tree_sends_the_lines_a_neighbour_changes(make_app) -> None:
    # From 180 columns the breakdown follows the cursor beside the tree. Two users of one account
    # share their path: the pane sends the lines that differ (title, summary, the user's own step,
    # the rank sentence, the curves), not the pane; what was cleared and refilled, moved by a
    # summary one line longer or narrowed by a scrollbar was sent whole (55 lines here).
    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await ready(pilot)
        await pilot.press("m")  # alice
        await pilot.pause(0.3)  # the breakdown waits for the cursor to rest, then its worker runs
        await ready(pilot)
        await settle(pilot)
        side = app.query_one("#pane-side")
        assert side.display
        sent = _record_sent(app)
        # The next user of alice's account. Alice has a pending job: its block goes, and the
        # lines under it move up (sent once: see the test below).
        await pilot.press("down")
        await pilot.pause(0.3)  # the breakdown waits for the cursor to rest
        await ready(pilot)
        await settle(pilot)
        x0 = side.region.x
        pane_lines = {y for update in sent for y, x1, x2 in update.spans
                      for end, (x, strip) in zip(update.chop_ends[y], update.chops[y].items())
                      if strip is not None and x >= x0 and x < x2 and end > x1}  # what is drawn of the pane
        assert "Why" in str(app.query_one("#pane-side #bd-title").render())
        assert pane_lines  # the new row's lines were caught
        assert len(pane_lines) <= side.region.height // 2, sorted(pane_lines)


async def test_a_neighbour_whose_breakdown_changes_height_sends_each_changed_line_once(make_app, monkeypatch) -> None:
    # A neighbour with another path, another summary or no pending-jobs block moves the lines
    # below: those are sent, once, and the lines that read the same are not (a line mounted for
    # a longer path came a message later: the pane was sent where it stood, then where it went).
    monkeypatch.setattr(breakdown, "PENDING_S", 30.0)  # the explanation waits for its curves
    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await ready(pilot)
        await pilot.press("m", "left")  # alice's account; below it, its users (one level more), then others
        await pilot.pause(0.3)
        await ready(pilot)
        await settle(pilot)
        scroll = app.query_one("#pane-side #bd-scroll")
        steps = app.query_one("#pane-side #bd-steps")
        tree = app.query_one(FairshareTree)
        checked = longer_path = 0
        for _ in range(12):
            height, before = scroll.virtual_size.height, _pane_text(app)
            path_lines = sum(line.display for line in steps.children)
            sent = _record_sent(app)
            await pilot.press("down")
            await pilot.pause(0.3)
            await ready(pilot)
            await settle(pilot)
            del app._painted.changed_only  # type: ignore[attr-defined]
            if scroll.virtual_size.height == height:
                continue
            after = _pane_text(app)
            chops = _pane_chops(sent, *_text_columns(app))
            changed = {y for y in after if after[y] != before[y]}
            assert {y for y, _ in chops} <= changed, sorted({y for y, _ in chops} - changed)
            # (The blank lines under the text may be sent again when the scrollbar goes or comes.)
            written = [(y, x) for y, x in chops if after[y].strip()]
            assert len(written) == len(set(written)), f"a line was sent twice: {sorted(written)}"
            tree_lines = {y for y, x1, _ in _spans(sent) if x1 < tree.region.right} & lines_of(tree)
            assert len(tree_lines) <= 2, sorted(tree_lines)  # the tree: its two rows
            checked += 1
            longer_path += sum(line.display for line in steps.children) > path_lines  # a longer path than the last
            if longer_path and checked >= 3:
                break
        assert checked >= 3 and longer_path, (checked, longer_path)


def _text_columns(app: App[int]) -> tuple[int, int]:
    """The breakdown's text columns beside the tree: right of its border, left of its scrollbar."""
    region = app.query_one("#pane-side #bd-scroll").scrollable_content_region
    return region.x, region.right


def _pane_text(app: App[int]) -> dict[int, str]:
    """What the screen shows in the breakdown's text columns, by screen line."""
    x1, x2 = _text_columns(app)
    return {y: strip.crop(x1, x2).text for y, strip in enumerate(app.screen._compositor.render_strips())}


def _pane_chops(updates: list[ChopsUpdate], x1: int, x2: int) -> list[tuple[int, int]]:
    """The (line, column) of every piece of line sent into columns ``[x1, x2)``."""
    return [(y, x) for update in updates for y, a, b in update.spans
            for end, (x, strip) in zip(update.chop_ends[y], update.chops[y].items())
            if strip is not None and x < min(b, x2) and end > max(a, x1)]


def _spans(updates: list[ChopsUpdate]) -> set[tuple[int, int, int]]:
    return {span for update in updates for span in update.spans}


def _record_sent(app: App[int]) -> list[ChopsUpdate]:
    """What the app sends from now on (after :class:`PaintedChops` left out what is on screen)."""
    sent: list[ChopsUpdate] = []
    changed_only = app._painted.changed_only  # type: ignore[attr-defined]

    def record(update: ChopsUpdate) -> ChopsUpdate | None:
        kept = changed_only(update)
        if kept is not None:
            sent.append(kept)
        return kept

    app._painted.changed_only = record  # type: ignore[attr-defined]
    return sent


def _text(updates: list[ChopsUpdate]) -> str:
    return "\n".join(strip.text for update in updates for line in update.chops for strip in line.values()
                     if strip is not None)


async def test_leaving_the_terminal_window_repaints_no_whole_screen(make_app) -> None:
    # Textual's app_focus repainted the whole screen on each focus change (35 KB at 200x60).
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await settle(pilot)
        whole: list[object] = []
        display = app._display

        def spy(screen: Screen[object], renderable: object) -> None:
            if renderable is not None and not isinstance(renderable, ChopsUpdate):
                whole.append(renderable)
            display(screen, renderable)  # type: ignore[arg-type]

        app._display = spy  # type: ignore[method-assign]
        sent = _record_sent(app)  # (the tree and the header restyle; no other line is sent)
        app.post_message(events.AppBlur())
        await settle(pilot)
        assert not app.app_focus
        app.post_message(events.AppFocus())
        await settle(pilot)
        assert app.app_focus and not whole
        tree = app.query_one(FairshareTree)
        assert {y for update in sent for y, _, _ in update.spans} <= lines_of(app.query_one("Header"), tree)


async def test_a_quick_breakdown_beside_the_tree_is_drawn_once(make_app) -> None:
    # A single Down is answered at once (no wait for the selection to rest), and its answer,
    # which comes in well under PENDING_S, is drawn whole: no "computing..." drawn and replaced.
    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await _breakdown_beside(pilot, "m")
        sent = _record_sent(app)
        await pilot.press("down")
        await pilot.pause(0.1)  # less than BREAKDOWN_DELAY_S: the worker started at once
        await ready(pilot)
        await settle(pilot)
        text = _text(sent)
        assert "computing" not in text
        assert "Why" in str(app.query_one("#pane-side #bd-title").render())
        assert "ranks" in text  # the new row's explanation was sent


async def _breakdown_beside(pilot: Pilot[int], key: str) -> None:
    """Once the app is ready, press ``key`` and wait for the breakdown beside the tree."""
    await ready(pilot)
    await pilot.press(key)
    await pilot.pause(0.5)
    await ready(pilot)
    await settle(pilot)


async def test_a_key_that_leaves_the_selection_in_place_sends_nothing(make_app) -> None:
    # Down held on the last row: each key re-explained the same row and redrew the breakdown
    # beside the tree (~0.1 s of the UI thread at 200x60), and the keys queued behind those
    # kept the screen changing for 0.4 s after the key was released.
    app = make_app()
    async with app.run_test(size=(200, 60)) as pilot:
        await _breakdown_beside(pilot, "end")
        tree = app.query_one(FairshareTree)
        last = tree.selected_row
        assert last == int(tree.rows_shown[-1])
        side = app.query_one("#pane-side")
        asked: list[int | None] = []
        show = side.show  # type: ignore[attr-defined]
        side.show = lambda standing, row: (asked.append(row), show(standing, row))  # type: ignore[attr-defined]
        sent = _record_sent(app)
        for _ in range(4):
            await pilot.press("down")
            await pilot.pause(0.2)  # each a single key (after a rest): answered at once, were it a move
        await ready(pilot)
        await settle(pilot)
        assert tree.selected_row == last and asked == []
        assert not sent
        await pilot.press("up")  # a real move still is
        await pilot.pause(0.2)
        await ready(pilot)
        assert asked == [int(tree.rows_shown[-2])]


async def test_a_followed_snapshot_repaints_the_rows_whose_values_changed(tmp_path: Path) -> None:
    # fairtop --from ROOT/current, and the publisher flips ``current`` to a capture with 1 % of
    # the rows changed (user1 and the rows printed after it among them: on screen).
    from bench.tty_bytes import follow_captures, publish
    from tui.app.main import build_app
    from tui.cli import build_parser
    from tui.sources.publish import CURRENT

    base, changed = follow_captures()
    root = tmp_path / "root"
    publish(root, base)
    app = build_app(build_parser().parse_args(["--from", str(root / CURRENT), "--user", "user1"]))
    async with app.run_test(size=SIZE) as pilot:
        await _loaded(app, pilot)
        await settle(pilot)
        tree = app.query_one(FairshareTree)
        before = [tree.render_line(y).text for y in range(tree.size.height)]
        first = app.standing
        publish(root, changed)
        with painted(app) as spans:
            app._refresh_live_source()  # what the refresh interval calls
            await _loaded(app, pilot, after=first)
            await settle(pilot)
        after = [tree.render_line(y).text for y in range(tree.size.height)]
        differ = {tree.region.y + y for y, (a, b) in enumerate(zip(before, after)) if a != b}
        assert len(differ) >= 8, differ  # the rows on screen that changed
        rows = tree.scrollable_content_region.right  # the scrollbar's column may move alone
        sent = {y for y, x1, _ in spans if x1 < rows} & lines_of(tree)
        assert sent == differ


async def _loaded(app: App[int], pilot: Pilot[int], after: object = None) -> None:
    """Wait until the app shows a standing (another than ``after``) and its load has ended."""
    for _ in range(500):
        if app.standing is not None and app.standing is not after \
                and not any(w.group == "load" and w.is_running for w in app.workers):
            return
        await pilot.pause(0.02)
    raise AssertionError("the app did not show the capture")
