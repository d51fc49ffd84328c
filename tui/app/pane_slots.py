"""Slots for the panes other modules provide (breakdown, allocations, what-if).

A pane is a Widget class in ``tui.app.panes.<module>`` with ``show(view, row)``. Until a module
exists, its tab shows a placeholder saying so, and the app works without it.
"""

from __future__ import annotations

import importlib
import inspect

from textual.widget import Widget
from textual.widgets import Static

PANES: dict[str, tuple[str, str]] = {
    "breakdown": ("breakdown", "Breakdown"),
    "alloc": ("allocations", "Allocations"),
    "whatif": ("whatif", "What-if"),
}
"""Tab id -> (module in ``tui.app.panes``, title)."""


class Placeholder(Static):
    """Stands in for a pane that is not written yet."""

    def show(self, view: object, row: int | None) -> None:
        """Nothing to show."""


def pane_class(module: str) -> type[Widget] | None:
    """The pane's Widget class (the one defined in the module with a ``show`` method), or None."""
    try:
        mod = importlib.import_module(f"tui.app.panes.{module}")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("tui.app.panes"):
            return None
        raise
    for _, obj in inspect.getmembers(mod, inspect.isclass):
        if issubclass(obj, Widget) and obj.__module__ == mod.__name__ and callable(getattr(obj, "show", None)):
            return obj
    return None


def make_pane(tab_id: str) -> Widget:
    """An instance of the pane for ``tab_id`` (id ``pane-<tab_id>``), or a placeholder."""
    module, title = PANES[tab_id]
    cls = pane_class(module)
    if cls is None:
        return Placeholder(f"The {title} pane is not available yet.", id=f"pane-{tab_id}",
                           classes="placeholder")
    return cls(id=f"pane-{tab_id}")
