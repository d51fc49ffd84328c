"""Hold the screen's paint until a widget's update has asked for all of its layout.

Textual lays widgets out a message after their text changes: each one posts ``Update`` (repaint
in place) or ``Layout`` (it changed size) to the screen when its own queue empties, and the screen
paints on its next tick. When the tick falls between the two, the lines that kept their size are
sent where they stood, then again where the resized ones pushed them: a breakdown whose neighbour
has another pending-jobs block or a longer path sent its pane twice. While a :class:`PaintHold`
holds, the app's updates are batched (``App.batch_update``'s counter); it lets go once no widget
under its root has a refresh pending, and the screen lays out and paints once.
"""

from __future__ import annotations

from textual.app import App
from textual.widget import Widget

MAX_HOPS = 20
"""Trips through the app's queue a hold waits at most (each lets the widgets' own queues run)."""


def _refresh_pending(widget: Widget) -> bool:
    """Whether ``widget`` has yet to tell the screen of a change (Textual's flags, cleared when it does)."""
    return (widget._layout_required or widget._repaint_required or widget._scroll_required
            or widget._refresh_styles_required)


class PaintHold:
    """Holds the screen's paint while ``root``'s widgets post what an update changed."""

    def __init__(self, root: Widget) -> None:
        self._root = root
        self._holding = False

    def start(self) -> None:
        """Hold the next paint (no-op while held): call before updating the widgets."""
        if self._holding or not self._root.is_attached:
            return
        self._holding = True
        app = self._root.app
        app._begin_batch()
        app.call_later(self._release, app, MAX_HOPS, False)

    def _release(self, app: App[object], hops: int, clean_before: bool) -> None:
        """Let go after two clean looks in a row (a restyle posts its layout a message later)."""
        root = self._root
        clean = not root.is_attached or not any(_refresh_pending(w) for w in root.walk_children(Widget, with_self=True))
        if hops > 0 and not (clean and clean_before):
            app.call_later(self._release, app, hops - 1, clean)
            return
        self._holding = False
        app._end_batch()
