"""SteadyStatic: an update that keeps the widget's height repaints it in place, without a layout
of the screen (100-240 ms at 200x60 beside the tree); one that changes it is laid out."""

from __future__ import annotations

from textual.app import App, ComposeResult
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Static

from tui.app.widgets.steady_static import SteadyStatic


class Lines(App[None]):
    CSS = "#min { min-height: 4; padding-bottom: 1; }"

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield SteadyStatic("one line", id="text")
            yield SteadyStatic("one", id="min")
            yield Static("below", id="below")


async def test_same_height_no_layout_taller_laid_out(monkeypatch) -> None:
    layouts: list[int] = []
    refresh_layout = Screen._refresh_layout

    def counted(self: Screen[object], *args: object, **kwargs: object) -> None:
        layouts.append(1)
        refresh_layout(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Screen, "_refresh_layout", counted)
    app = Lines()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        text, least, below = (app.query_one(f"#{n}") for n in ("text", "min", "below"))
        assert isinstance(text, SteadyStatic) and isinstance(least, SteadyStatic)
        assert below.region.y == 5  # 1 line, then 4 (min-height)
        layouts.clear()
        text.update("another line")
        least.update("two\nlines")  # 2 lines + padding: still the min-height's 4
        await pilot.pause()
        assert layouts == []
        assert str(text.render()) == "another line" and below.region.y == 5
        text.update("three\nlines\nnow")
        least.update("a\nb\nc\nd")
        await pilot.pause()
        assert layouts  # laid out: the lines under it moved
        assert (text.region.height, least.region.height, below.region.y) == (3, 5, 8)


async def test_the_same_text_is_not_rendered_again() -> None:
    app = Lines()
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        text = app.query_one("#text", SteadyStatic)
        text.update("one line")
        assert not text._repaint_required
        text.update("one line!")
        assert text._repaint_required
