"""The association tree pane: a virtual table drawn line by line from numpy arrays.

No widget per association: :class:`FairshareTree` is a ``ScrollView`` whose virtual height is the
number of visible rows; ``render_line`` draws only the lines on screen from ``self.rows_shown``
(tree rows in display order, see :mod:`tree_rows`). Expand/collapse, sort and filter recompute
that array with a few vectorised passes, so 100k associations stay responsive.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from rich.segment import Segment
from textual import events
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

from tui.app import tree_rows as tr
from tui.app.commands import bindings
from tui.app.tree_rows import Column

BAR = 8
NAME_CAP = 40
"""The name column is never wider than this when every column fits (wide terminals)."""
MIN_NAME = 16
HELD_KEY_S = 0.1
"""A cursor move this soon after the previous one is a held key: the tree is then drawn at most
this often, and a scroll jumps three quarters of a screen ahead instead of one line. Over a slow
link a held Down otherwise queues seconds of repaints (each scrolled line repaints the tree)."""


@dataclass(frozen=True)
class Layout:
    """The tree's columns at one width."""

    name_width: int
    columns: tuple[Column | None, ...]
    """Number columns shown, in order; None is the FairShare bar."""
    hidden_left: int
    """Columns scrolled out on the left (``shift+left`` brings them back)."""
    hidden_right: int
    """Columns that do not fit on the right (``shift+right`` shows them)."""
_EIGHTHS = " ▏▎▍▌▋▊▉"


async def keys_follow_prompt(widget: Widget, event: events.Key) -> None:
    """Call from the ``on_key`` of a widget that holds focus: keys typed in one burst after
    ``:`` or ``/`` reach the prompt.

    ":sort name" (or "1/chem", "1g3") typed or pasted fast is queued at ``widget`` whole, while
    bindings would run only as each key bubbles up to the app, after the queue drained. So the
    bindings run here, in order, and once one has moved focus away (to the prompt, to another
    tab), the rest of the burst is passed on to whatever has focus.
    """
    focused = widget.screen.focused
    if focused is not None and focused is not widget and widget not in focused.ancestors:
        event.stop()
        event.prevent_default()
        focused.post_message(events.Key(event.key, event.character))
        return
    active = widget.app.active_bindings.get(event.key)
    if active is not None and active.enabled:
        event.stop()
        event.prevent_default()
        await widget.app.run_action(active.binding.action, active.node)


def bar_text(value: float, width: int = BAR) -> str:
    """A horizontal bar for a value in [0, 1], in eighth-cell steps; blank for NaN."""
    if not np.isfinite(value):
        return " " * width
    eighths = int(round(min(max(value, 0.0), 1.0) * width * 8))
    full, part = divmod(eighths, 8)
    return ("█" * full + (_EIGHTHS[part] if part else "")).ljust(width, "·")


class FairshareTree(ScrollView, can_focus=True):
    """Accounts and users with sshare's columns (PBS: entities with the report's columns),
    expandable, sortable and filterable."""

    BINDINGS = bindings("tree")
    COMPONENT_CLASSES = {
        "assoc-tree--header", "assoc-tree--account", "assoc-tree--user", "assoc-tree--me",
        "assoc-tree--cursor", "assoc-tree--match", "assoc-tree--bar-low", "assoc-tree--bar-mid",
        "assoc-tree--bar-high",
    }
    DEFAULT_CSS = """
    FairshareTree { height: 1fr; overflow-x: hidden; }
    """

    @dataclass
    class Selected(Message):
        """The highlighted association changed."""

        tree: FairshareTree
        row: int | None
        """Row of ``snapshot.tree`` (None when nothing is shown)."""

    cursor: reactive[int] = reactive(0, always_update=True, repaint=False)
    """Index into ``rows_shown`` of the highlighted line (its watcher repaints the lines that changed)."""

    def __init__(self, *, name: str | None = None, id: str | None = None, classes: str | None = None) -> None:
        super().__init__(name=name, id=id, classes=classes)
        self.table: tr.TreeTable | None = None
        self.order = np.zeros(0, dtype=np.int64)
        self.expanded = np.zeros(0, dtype=bool)
        self.rows_shown = np.zeros(0, dtype=np.int64)
        self.keep: np.ndarray | None = None
        self.matches: np.ndarray | None = None
        self.me_mask = np.zeros(0, dtype=bool)
        self.sort_column: str | None = None
        """Column id the siblings are sorted by; None is sshare's order."""
        self.sort_descending = False
        self.filter_text = ""
        """The active name filter (a regex); empty for none."""
        self._base_expanded: np.ndarray | None = None
        self._center_next = False
        """Centre the cursor's row at the next scroll (a jump to a row, the first tree)."""
        self._layout_waits = 0
        """Refreshes waited for the layout's new height before scrolling to the cursor."""
        self.col_offset = 0
        """Number columns scrolled out on the left when not all fit (in priority order)."""
        self._drawn: dict[int, Strip] = {}
        self._moved_at = -1.0
        """When the cursor last moved (``time.monotonic``)."""
        self._draw_timer: Timer | None = None
        """Draws the cursor's latest place while a key is held."""
        self._jump = False
        """The next scroll to the cursor jumps ahead (a key is held)."""
        """The strip last drawn on each screen line, to repaint only the lines that change."""

    # --- data ---------------------------------------------------------------------------------

    def set_table(self, table: tr.TreeTable, me: str = "", expand_depth: int = 2) -> None:
        """Show a new tree; keeps sort and filter.

        The first tree opens its top levels and the path to ``me``. A refresh keeps the accounts
        the user opened or closed and the cursor's association, matched by name (rows move when
        associations come and go).
        """
        old_table, old_row = self.table, self.selected_row
        own = self._base_expanded if self._base_expanded is not None else self.expanded  # not the filter's
        self.table = table
        if self.sort_column is not None:  # a tree of the other kind: its sort column by the same key
            self.sort_column = tr.column_id(table.columns, self.sort_column)
        self.me_mask = (table.users == me) & table.is_user if me else np.zeros(table.size, dtype=bool)
        self.expanded = table.depth < expand_depth
        self._base_expanded = None
        if old_table is None:  # the first tree opens on the user's own (first) row
            # Every line changes: repaint them all rather than render each to compare with the
            # loading screen's (twice: the layout and the cursor; ~10 ms of the first frame at 20k)
            self._drawn.clear()
            mine = np.flatnonzero(self.me_mask)
            self.expanded |= tr.ancestors_mask(table, mine)
            keep = int(mine[0]) if mine.size else None
            self._center_next = keep is not None
        else:
            self.expanded = tr.carry_expanded(old_table, own, table, self.expanded)
            keep = None if old_row is None else tr.same_row(old_table, old_row, table)
        self.order = tr.sorted_preorder(table, self.sort_column, self.sort_descending)
        self._apply_filter(self.filter_text)
        self._relayout(keep)

    @property
    def columns(self) -> tuple[tr.Column, ...]:
        """The columns of the shown tree (Slurm's before any tree is loaded)."""
        return self.table.columns if self.table is not None else tr.COLUMNS

    @property
    def selected_row(self) -> int | None:
        """The tree row under the cursor."""
        if self.table is None or not len(self.rows_shown):
            return None
        return int(self.rows_shown[min(self.cursor, len(self.rows_shown) - 1)])

    def _apply_filter(self, pattern: str) -> None:
        assert self.table is not None
        if not pattern:
            if self.filter_text and self._base_expanded is not None:
                self.expanded = self._base_expanded  # back to the user's own expansion
            self.keep = self.matches = self._base_expanded = None
        else:
            match = tr.filter_mask(self.table, pattern)  # raises re.error
            up = tr.ancestors_mask(self.table, np.flatnonzero(match))
            if self._base_expanded is None:
                self._base_expanded = self.expanded.copy()
            # Relative to the pre-filter state, so typing a regex letter by letter does not
            # accumulate the expansions of every intermediate pattern.
            self.expanded = self._base_expanded | up
            self.keep = match | up | tr.descendants_mask(self.table, match)
            self.matches = match
        self.filter_text = pattern

    def _relayout(self, keep_row: int | None = None) -> None:
        """Recompute the visible rows and put the cursor back on ``keep_row`` (or its ancestor)."""
        assert self.table is not None
        self.rows_shown = tr.visible_rows(self.table, self.order, self.expanded, self.keep)
        size = Size(self.scrollable_content_region.width, len(self.rows_shown) + 1)  # +1: the header line
        if size != self.virtual_size:
            # Set quietly: the reactive repaints the whole tree; the layout it needs (the
            # scrollbar) does not, and refresh_changed below repaints the lines that changed.
            self.set_reactive(FairshareTree.virtual_size, size)
            self.refresh(repaint=False, layout=True)
        index = 0
        row = keep_row
        while row is not None and row >= 0:
            hit = np.flatnonzero(self.rows_shown == row)
            if hit.size:
                index = int(hit[0])
                break
            row = int(self.table.parent[row])
        self.cursor = index
        # The new virtual height is laid out on the next refresh: scroll there again once it is
        # (before, the scroll is clamped to the old height; the first tree opens on "me").
        self.call_after_refresh(self._scroll_to_cursor)
        self.refresh_changed()

    def set_filter(self, pattern: str) -> None:
        """Show rows whose name matches ``pattern``, with their ancestors and descendants.

        Raises :class:`re.error` for an invalid regex and leaves the current filter in place.
        """
        if self.table is None:
            self.filter_text = pattern
            return
        old = self.selected_row
        self._apply_filter(pattern)
        first = None if self.matches is None else np.flatnonzero(self.matches[self.order])
        target = int(self.order[first[0]]) if first is not None and first.size else old
        self._relayout(target)

    def sort_by(self, column: str | None, descending: bool | None = None) -> None:
        """Order siblings by ``column`` (None: sshare's order); same column again reverses.

        A column id of the other tree kind means this tree's column with the same sort key.
        """
        if column is not None and self.table is not None:
            column = tr.column_id(self.table.columns, column)
        if descending is None:
            descending = (not self.sort_descending) if column == self.sort_column else column not in (None, "name")
        self.sort_column, self.sort_descending = column, descending
        if self.table is not None:
            old = self.selected_row
            self.order = tr.sorted_preorder(self.table, column, descending)
            self._relayout(old)

    def set_expanded(self, rows: np.ndarray | int | None, value: bool) -> None:
        """Expand or collapse rows (None: every account)."""
        if self.table is None:
            return
        old = self.selected_row
        if rows is None:
            self.expanded[:] = value if value else self.table.depth < 1
        else:
            self.expanded[rows] = value
        self._relayout(old)

    def go_to_row(self, row: int) -> None:
        """Expand the path to ``row`` and put the cursor on it."""
        assert self.table is not None
        up = tr.ancestors_mask(self.table, np.array([row]))
        self.expanded |= up
        if self.keep is not None and not self.keep[row]:
            self._apply_filter("")  # the row is filtered out: drop the filter rather than hide it
        self._center_next = True
        self._relayout(row)

    # --- actions (bound via the command registry) ----------------------------------------------

    def action_cursor(self, delta: int) -> None:
        self.cursor = max(0, min(len(self.rows_shown) - 1, self.cursor + delta))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(1, self.size.height - 2))

    def action_edge(self, end: int) -> None:
        self.cursor = max(0, len(self.rows_shown) - 1) if end else 0

    def action_toggle(self) -> None:  # type: ignore[override]  # shadows DOMNode's toggle(attribute)
        row = self.selected_row
        if row is not None and self.table is not None and self.table.has_children[row]:
            self.set_expanded(row, not self.expanded[row])

    def action_collapse(self) -> None:
        row = self.selected_row
        if row is None or self.table is None:
            return
        if self.table.has_children[row] and self.expanded[row]:
            self.set_expanded(row, False)
        elif self.table.parent[row] >= 0:
            self._relayout(int(self.table.parent[row]))

    def action_expand(self) -> None:
        row = self.selected_row
        if row is None or self.table is None or not self.table.has_children[row]:
            return
        if not self.expanded[row]:
            self.set_expanded(row, True)
        else:
            self.action_cursor(1)

    # --- drawing -------------------------------------------------------------------------------

    def watch_cursor(self, cursor: int) -> None:
        now = time.monotonic()
        held, self._moved_at = now - self._moved_at < HELD_KEY_S, now
        self.post_message(self.Selected(self, self.selected_row))
        if not held:
            self._draw_cursor()
        elif self._draw_timer is None:
            self._jump = True
            self._draw_timer = self.set_timer(HELD_KEY_S, self._draw_cursor)

    @property
    def draw_deferred(self) -> bool:
        """A held key's cursor move waits on its timer to be drawn."""
        return self._draw_timer is not None

    def _draw_cursor(self) -> None:
        self._draw_timer = None
        self._scroll_to_cursor(settled=False)
        self._jump = False
        self.refresh_changed()

    def refresh_changed(self) -> None:
        """Repaint only the screen lines whose text or style changed since they were drawn.

        Over SSH every repainted line costs its bytes: a cursor move changes two lines, a
        collapse the lines from the row down, a live refresh the rows whose values changed. A
        scroll repaints the whole tree by itself (``ScrollView.watch_scroll_y``).
        """
        width = self.scrollable_content_region.width
        if not self._drawn or width <= 0:  # nothing drawn yet (or since a resize): all of it
            self.refresh()
            return
        layout = self.layout_for(width)
        changed = [y for y in range(self.size.height) if self._drawn.get(y) != self._line(y, width, layout)]
        for start, stop in _runs(changed):
            self.refresh(Region(0, start, self.size.width, stop - start))

    def _scroll_to_cursor(self, settled: bool = True) -> None:
        """Keep the cursor's row on screen (``settled``: the layout has its new height).

        Scrolls are forced: until the layout after a new virtual height has run, Textual has not
        shown the scrollbar and refuses a plain scroll (the first tree then stayed at its top in
        a real terminal while the cursor was on the user's row further down)."""
        cursor = self.cursor
        top, height = int(self.scroll_offset.y), max(1, self.size.height - 1)
        center = self._center_next
        if center or cursor < top - 1 or cursor > top + height:  # a jump: show the row with context around it
            want = max(0, cursor - height // 2)
            if settled and want > self.max_scroll_y and self._layout_waits < 5:
                # the new virtual height is not laid out yet (the scroll would be clamped): next refresh
                self._layout_waits += 1
                self.call_after_refresh(self._scroll_to_cursor)
                return
            self.scroll_to(y=want, animate=False, immediate=True, force=True)
        elif cursor < top:
            ahead = height - 1 - height // 4 if self._jump else 0
            self.scroll_to(y=max(0, cursor - ahead), animate=False, immediate=True, force=True)
        elif cursor >= top + height:
            y = cursor - height // 4 if self._jump else cursor - height + 1
            self.scroll_to(y=y, animate=False, immediate=True, force=True)
        if settled:
            self._center_next = False
            self._layout_waits = 0

    async def on_key(self, event: events.Key) -> None:
        await keys_follow_prompt(self, event)

    def on_resize(self) -> None:
        self._drawn.clear()
        self.virtual_size = Size(self.scrollable_content_region.width, len(self.rows_shown) + 1)
        self._scroll_to_cursor(settled=False)  # a smaller screen (the summary line appearing) keeps the row in view

    def on_click(self, event: events.Click) -> None:
        index = int(self.scroll_offset.y) + event.y - 1
        if 0 <= index < len(self.rows_shown):
            if index == self.cursor:
                self.action_toggle()
            self.cursor = index

    def layout_for(self, width: int) -> Layout:
        """Which columns fit ``width`` cells, and how wide the name column is.

        Every column fits: sshare's order, the name column as wide as the widest name needs
        (capped at :data:`NAME_CAP`), the rest of the width after the bar. Too narrow: the name
        keeps the width its names need (never cut while a number could give way), the number
        columns follow in priority order (FairShare, LevelFS, Rank, ...; RawUsage last) from
        ``col_offset`` on, as many as fit, and ``shift+right``/``>`` scrolls to the others.
        """
        cols = self.columns[1:]
        natural = max(MIN_NAME, min(NAME_CAP, self.table.name_width if self.table is not None else MIN_NAME))
        full = sum(c.width + 1 for c in cols) + BAR + 1
        if natural + full <= width:
            self.col_offset = 0
            return Layout(min(width - full, max(natural, NAME_CAP)), (*cols, None), 0, 0)
        by_priority: list[Column] = sorted(cols, key=lambda c: c.priority)
        ranked: list[Column | None] = list(by_priority)
        ranked.insert(min(3, len(ranked)), None)  # the bar, after the first three numbers
        # The name gives way only to the first two numbers (and never below MIN_NAME).
        need = sum((c.width if c is not None else BAR) + 1 for c in ranked[:2])
        name_w = max(MIN_NAME, min(natural, width - need))
        self.col_offset = max(0, min(self.col_offset, len(ranked) - 1))
        shown: list[Column | None] = []
        room = width - name_w - 2  # 2: the header's " ▸" when columns are left out
        for c in ranked[self.col_offset:]:
            w = (c.width if c is not None else BAR) + 1
            if w > room and shown:
                break
            shown.append(c)
            room -= w
        right = len(ranked) - self.col_offset - len(shown)
        name_w += max(0, room) + (0 if right else 2)  # what is left widens the name
        return Layout(name_w, tuple(shown), self.col_offset, right)

    def _header(self, layout: Layout) -> str:
        left = "◂" if layout.hidden_left else ""
        parts = [(left + self.columns[0].title).ljust(layout.name_width)]
        for c in layout.columns:
            if c is None:
                parts.append("FS bar".ljust(BAR))
                continue
            title = c.title
            if c.id == self.sort_column:
                title += "▼" if self.sort_descending else "▲"
            parts.append(title.rjust(c.width))
        return " ".join(parts) + (" ▸" if layout.hidden_right else "")

    def action_scroll_columns(self, delta: int) -> None:
        """Show the next (1) or previous (-1) number columns when not all fit."""
        self.col_offset = max(0, self.col_offset + delta)
        layout = self.layout_for(self.scrollable_content_region.width)
        if delta > 0 and not layout.hidden_right and not layout.hidden_left:
            self.col_offset = 0
        self.refresh()

    def render_line(self, y: int) -> Strip:
        width = self.scrollable_content_region.width  # excludes the scrollbar
        strip = self._drawn[y] = self._line(y, width, self.layout_for(width))
        return strip

    def _line(self, y: int, width: int, layout: Layout) -> Strip:
        """Screen line ``y`` (0: the header) as it is drawn now."""
        if y == 0:
            style = self.get_component_rich_style("assoc-tree--header")
            return Strip([Segment(self._header(layout), style)]).adjust_cell_length(width, style)
        index = int(self.scroll_offset.y) + y - 1
        if self.table is None or index >= len(self.rows_shown):
            return Strip.blank(width, self.rich_style)
        return self._row_strip(int(self.rows_shown[index]), index == self.cursor, width, layout)

    def _row_strip(self, row: int, is_cursor: bool, width: int, layout: Layout) -> Strip:
        t = self.table
        assert t is not None
        kind = "me" if self.me_mask[row] else ("user" if t.is_user[row] else "account")
        base = self.get_component_rich_style(f"assoc-tree--{kind}")
        if self.matches is not None and self.matches[row]:
            base += self.get_component_rich_style("assoc-tree--match")
        if is_cursor:
            base += self.get_component_rich_style("assoc-tree--cursor")
        marker = ("▾ " if self.expanded[row] else "▸ ") if t.has_children[row] else "  "
        name_w = layout.name_width
        name = "  " * int(t.depth[row]) + marker + str(t.names[row])  # top-level accounts sit under root
        name = name[: name_w - 1] + "…" if len(name) > name_w else name.ljust(name_w)
        value = t.fairshare[row]
        level = "low" if value < 0.25 else "mid" if value < 0.5 else "high"
        bar_style = base if is_cursor else base + self.get_component_rich_style(f"assoc-tree--bar-{level}")
        segments = [Segment(name, base)]
        for c in layout.columns:
            if c is None:
                segments += [Segment(" ", base), Segment(bar_text(value), bar_style)]
            else:
                segments.append(Segment(" " + str(t.cells[c.id][row]).rjust(c.width), base))
        return Strip(segments).adjust_cell_length(width, base)



def _runs(lines: list[int]) -> list[tuple[int, int]]:
    """Sorted line numbers as ``(start, stop)`` runs of consecutive lines."""
    runs: list[tuple[int, int]] = []
    for y in lines:
        if runs and runs[-1][1] == y:
            runs[-1] = (runs[-1][0], y + 1)
        else:
            runs.append((y, y + 1))
    return runs
