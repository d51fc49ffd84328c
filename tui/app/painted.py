"""What the terminal shows, so an update sends only the pieces of lines that changed.

Textual repaints a widget's whole region when it refreshes: a pane whose text is updated in
three steps (a title, then an explanation, then curves), each with a layout that resizes its
parts, sends the pane three to five times, though most of its lines read the same each time.
Over SSH every line costs its bytes. :class:`PaintedChops` remembers each piece of line
(a "chop": one widget's run of cells on one screen line) last sent to the terminal, and drops
from an update the pieces that would redraw exactly what is there.

Only whole updates of the screen (Textual's ``LayoutUpdate``: start-up, resize, a new screen)
bypass it; they forget everything. Every other write to the terminal goes through
``App._display`` as a ``ChopsUpdate``, so what is remembered is what the terminal shows.
"""

from __future__ import annotations

from textual._compositor import ChopsUpdate
from textual.strip import Strip


class PaintedChops:
    """The chops last sent, by screen line and start column."""

    def __init__(self) -> None:
        self._lines: dict[int, dict[int, tuple[int, Strip]]] = {}
        """Screen line -> start column -> (end column, strip drawn there)."""

    def clear(self) -> None:
        """Forget what the terminal shows (it is about to be redrawn whole)."""
        self._lines.clear()

    def changed_only(self, update: ChopsUpdate) -> ChopsUpdate | None:
        """``update`` less the chops the terminal already shows (None: nothing is left)."""
        chops = [dict(line) for line in update.chops]
        spans = []
        for y, x1, x2 in update.spans:
            drawn = self._lines.setdefault(y, {})
            line = chops[y]
            sends = False
            for end, (x, strip) in zip(update.chop_ends[y], update.chops[y].items()):
                if strip is None or x >= x2 or end <= x1:
                    continue  # x2 is exclusive: Textual sends a chop starting there as a bare cursor move
                whole = x1 <= x and end <= x2
                if whole and drawn.get(x) == (end, strip):
                    line[x] = None  # the same cells with the same style: already on screen
                    continue
                sends = True
                lo, hi = max(x, x1), min(end, x2)
                for start in [s for s, (e, _) in drawn.items() if s < hi and e > lo]:
                    del drawn[start]  # overwritten, in part or whole
                if whole:
                    drawn[x] = (end, strip)
            if sends:
                spans.append((y, x1, x2))
        return ChopsUpdate(chops, spans, update.chop_ends) if spans else None
