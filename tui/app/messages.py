"""Typed messages the app's workers send back to the UI thread."""

from __future__ import annotations

from dataclasses import dataclass

from textual.message import Message

from tui.app.widgets.tree_rows import TreeTable
from tui.analysis.standing import Standing


@dataclass
class StandingLoaded(Message):
    """A source was read and the engine ran: everything the panes need, built off the UI thread."""

    standing: Standing
    table: TreeTable
    """The tree pane's strings and sort keys for ``standing``."""
