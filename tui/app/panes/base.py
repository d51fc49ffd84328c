"""What every pane shares: a full-height scrolling frame with a title line."""

from __future__ import annotations

from textual.widget import Widget


class PaneFrame(Widget):
    """Base of the panes: fills its tab; content scrolls inside a padded ``VerticalScroll``.

    Subclasses compose a ``VerticalScroll`` whose first child is a ``Static`` with class
    ``pane-title``, and define ``show(view, row)``.
    """

    DEFAULT_CSS = """
    PaneFrame { height: 1fr; }
    PaneFrame > VerticalScroll { height: 1fr; padding: 0 1; }
    PaneFrame .pane-title { text-style: bold; color: $accent; padding-bottom: 1; }
    """
