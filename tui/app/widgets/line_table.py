"""A table of lines already formatted (in a worker), drawn line by line: a cursor, no per-row cost.

Textual's ``DataTable`` spends about 0.1 ms of the UI thread per row it is given (keys, widths,
reactive updates): 20,000 associations stalled the UI for two seconds. Here the rows arrive as
one list of strings, and only the lines on screen are drawn.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich.segment import Segment
from rich.style import Style
from textual.binding import Binding
from textual.geometry import Size
from textual.message import Message
from textual.scroll_view import ScrollView
from textual.strip import Strip


class LineTable(ScrollView, can_focus=True):
    """A header line and body lines; ``up``/``down``/``pageup``/``pagedown``/``home``/``end`` move
    the cursor, which posts :class:`LineTable.Highlighted`."""

    DEFAULT_CSS = """
    LineTable { height: 16; scrollbar-size-vertical: 1; }
    """

    BINDINGS = [Binding("up,k", "move(-1)", show=False), Binding("down,j", "move(1)", show=False),
                Binding("pageup", "page(-1)", show=False), Binding("pagedown", "page(1)", show=False),
                Binding("home", "edge(0)", show=False), Binding("end", "edge(1)", show=False)]

    @dataclass
    class Highlighted(Message):
        table: LineTable
        index: int

    def __init__(self, *, id: str | None = None) -> None:  # noqa: A002 - Textual's
        super().__init__(id=id)
        self.header = ""
        self.lines: list[str] = []
        self.cursor = 0

    def set_lines(self, header: str, lines: list[str], cursor: int = 0) -> None:
        self.header, self.lines = header, lines
        self.cursor = max(0, min(cursor, len(lines) - 1))
        self.virtual_size = Size(max((len(header), *(len(x) for x in lines[:200])), default=0), len(lines) + 1)
        self.call_after_refresh(self._follow)  # the new virtual size laid out first
        self.refresh()

    def _follow(self) -> None:
        body = max(1, self.size.height - 1)
        top = int(self.scroll_offset.y)
        if self.cursor < top:
            self.scroll_to(y=self.cursor, animate=False)
        elif self.cursor >= top + body:
            self.scroll_to(y=self.cursor - body + 1, animate=False)

    def _to(self, index: int) -> None:
        if not self.lines:
            return
        index = max(0, min(index, len(self.lines) - 1))
        if index != self.cursor:
            self.cursor = index
            self._follow()
            self.refresh()
            self.post_message(self.Highlighted(self, index))

    def action_move(self, step: int) -> None:
        self._to(self.cursor + step)

    def action_page(self, step: int) -> None:
        self._to(self.cursor + step * max(1, self.size.height - 2))

    def action_edge(self, end: int) -> None:
        self._to(len(self.lines) - 1 if end else 0)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    def render_line(self, y: int) -> Strip:
        x0, width = int(self.scroll_offset.x), self.size.width
        if y == 0:
            text, style = self.header, Style(bold=True)
        else:
            i = int(self.scroll_offset.y) + y - 1
            if i >= len(self.lines):
                return Strip.blank(width)
            text = self.lines[i]
            style = Style(reverse=True) if i == self.cursor and self.has_focus else \
                Style(underline=True) if i == self.cursor else Style()
        return Strip([Segment(text[x0:x0 + width].ljust(width), style)], width)
