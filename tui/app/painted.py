"""What the terminal shows, so an update sends only the pieces of lines that changed.

Textual repaints a widget's whole region when it refreshes: a pane whose text is updated in
three steps (a title, then an explanation, then curves), each with a layout that resizes its
parts, sends the pane three to five times, though most of its lines read the same each time.
Over SSH every line costs its bytes. :class:`PaintedChops` remembers each piece of line
(a "chop": one widget's run of cells on one screen line) last sent to the terminal, and drops
from an update the pieces that would redraw exactly what is there.

A chop that differs from the one on screen in a few cells (a number, a name in a sentence) is
cut to the cells that differ, from the first to the last.

Only whole updates of the screen (Textual's ``LayoutUpdate``: start-up, resize, a new screen)
bypass it; they forget everything. Every other write to the terminal goes through
``App._display`` as a ``ChopsUpdate``, so what is remembered is what the terminal shows.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.style import Style
from textual._compositor import ChopsUpdate
from textual.strip import Strip

from tui.app.sgr import CompactChops

MIN_CUT = 8
"""Cells a cut must save: a cursor move to the first changed cell costs up to 8 bytes."""


def _cells(strip: Strip) -> list[tuple[str, Style | None]] | None:
    """One (character, style) a cell; None when a character is not one cell wide (a cut there
    could split it) or the strip holds a control code."""
    cells: list[tuple[str, Style | None]] = []
    for text, style, control in strip:
        if control or cell_len(text) != len(text):
            return None
        cells.extend((char, style) for char in text)
    return cells


def changed_cells(shown: Strip, new: Strip) -> tuple[int, int] | None:
    """The cells ``[a, b)`` outside which ``new`` draws what ``shown`` does (None: not comparable,
    or nothing worth cutting)."""
    old_cells, new_cells = _cells(shown), _cells(new)
    if old_cells is None or new_cells is None or len(old_cells) != len(new_cells):
        return None
    a, b = 0, len(new_cells)
    while a < b and old_cells[a] == new_cells[a]:
        a += 1
    while b > a and old_cells[b - 1] == new_cells[b - 1]:
        b -= 1
    return (a, b) if len(new_cells) - (b - a) >= MIN_CUT else None


class PaintedChops:
    """The chops last sent, by screen line and start column."""

    def __init__(self) -> None:
        self._lines: dict[int, dict[int, tuple[int, Strip]]] = {}
        """Screen line -> start column -> (end column, strip drawn there)."""

    def clear(self) -> None:
        """Forget what the terminal shows (it is about to be redrawn whole)."""
        self._lines.clear()

    def changed_only(self, update: ChopsUpdate) -> ChopsUpdate | None:
        """``update`` less the chops the terminal already shows, and less the cells a changed
        chop shares with the one on screen (None: nothing is left)."""
        chops = [dict(line) for line in update.chops]
        chop_ends = list(update.chop_ends)
        spans = []
        for y, x1, x2 in update.spans:
            drawn = self._lines.setdefault(y, {})
            line = chops[y]
            cuts: dict[int, tuple[int, Strip]] = {}
            sends = False
            for end, (x, strip) in zip(update.chop_ends[y], update.chops[y].items()):
                if strip is None or x >= x2 or end <= x1:
                    continue  # x2 is exclusive: Textual sends a chop starting there as a bare cursor move
                whole = x1 <= x and end <= x2
                shown = drawn.get(x)
                if whole and shown == (end, strip):
                    line[x] = None  # the same cells with the same style: already on screen
                    continue
                if whole and shown is not None and shown[0] == end:
                    cut = changed_cells(shown[1], strip)
                    if cut is not None and cut[0] == cut[1]:  # the same cells, cut into other segments
                        line[x] = None
                        drawn[x] = (end, strip)
                        continue
                    if cut is not None:
                        cuts[x] = (x + cut[0], strip.crop(*cut))
                sends = True
                lo, hi = max(x, x1), min(end, x2)
                for start in [s for s, (e, _) in drawn.items() if s < hi and e > lo]:
                    del drawn[start]  # overwritten, in part or whole
                if whole:
                    drawn[x] = (end, strip)
            if cuts:
                chops[y], chop_ends[y] = _with_cuts(line, update.chop_ends[y], cuts)
            if sends:
                spans.append((y, x1, x2))
        return CompactChops(chops, spans, chop_ends) if spans else None


def _with_cuts(line: dict[int, Strip | None], ends: list[int], cuts: dict[int, tuple[int, Strip]]
               ) -> tuple[dict[int, Strip | None], list[int]]:
    """``line``'s chops (and their ends) with each chop in ``cuts`` replaced by its changed cells."""
    chops: dict[int, Strip | None] = {}
    new_ends = []
    for end, (x, strip) in zip(ends, line.items()):
        if x in cuts:
            x, strip = cuts[x]
            end = x + strip.cell_length
        chops[x] = strip
        new_ends.append(end)
    return chops, new_ends
