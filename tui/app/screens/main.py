"""The app's first screen: Textual's, less the whole-screen repaint on every focus move."""

from __future__ import annotations

from textual.reactive import Reactive
from textual.screen import Screen
from textual.widget import Widget


class MainScreen(Screen[None]):
    """The screen the app composes into.

    Textual's ``Screen.focused`` repaints the whole screen when focus moves (12 KB at 120x40 for
    a Tab between two fields of the what-if form, over SSH). The two widgets repaint themselves:
    blur and focus restyle them (``:focus``, ``:focus-within``), and the footer follows the
    bindings. So here the reactive only records the focused widget.
    """

    focused: Reactive[Widget | None] = Reactive(None, repaint=False)
    """The focused widget or None (set with ``set_focus``, as on Textual's screen)."""
