"""What every pane shares: a full-height scrolling frame with a title line."""

from __future__ import annotations

from textual import events
from textual.widget import Widget

from tui.app.widgets.fairshare_tree import keys_follow_prompt


class PaneFrame(Widget):
    """Base of the panes: fills its tab; content scrolls inside a padded ``VerticalScroll``.

    Subclasses compose a ``VerticalScroll`` whose first child is a ``Static`` with class
    ``pane-title``, and define ``show(standing, row)``.
    """

    DEFAULT_CSS = """
    PaneFrame { height: 1fr; }
    PaneFrame > VerticalScroll { height: 1fr; padding: 0 1; }
    PaneFrame .pane-title { text-style: bold; color: $accent; padding-bottom: 1; }
    """

    async def on_key(self, event: events.Key) -> None:
        # Keys no widget inside took (the scroll area has focus): a burst after ":" or "/" goes
        # to the prompt, as in the tree.
        focused = self.screen.focused
        await keys_follow_prompt(focused if focused is not None and self in focused.ancestors else self, event)
