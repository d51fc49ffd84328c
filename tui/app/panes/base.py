"""What every pane shares: a full-height scrolling frame with a title line, and worker failures.

A pane's engine work runs in thread workers started on the pane (``@work(thread=True, ...)``);
their results come back as typed messages (:mod:`tui.app.messages`). A worker's
``Worker.StateChanged`` goes to the pane only (it does not bubble): :meth:`PaneFrame.on_worker_state_changed`
lets the pane show its error state (:meth:`PaneFrame.worker_failed`) and posts
:class:`~tui.app.messages.PaneWorkerFailed`, which bubbles to the app, the one place that
notifies the user of any worker's failure.
"""

from __future__ import annotations

from typing import Any

from textual import events
from textual.widget import Widget
from textual.worker import Worker, WorkerState

from tui.analysis.standing import Standing
from tui.app.messages import PaneWorkerFailed
from tui.app.widgets.fairshare_tree import keys_follow_prompt


def error_text(error: BaseException | None) -> str:
    """The message of a worker's exception, or its type when it has none."""
    return (str(error) or type(error).__name__) if error is not None else "unknown error"


class PaneFrame(Widget):
    """Base of the panes: fills its tab; content scrolls inside a padded ``VerticalScroll``.

    Subclasses compose a ``VerticalScroll`` whose first child is a ``Static`` with class
    ``pane-title``, and define ``show(standing, row)``; those with workers override
    :meth:`worker_failed`.
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

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker of this pane raised: the pane shows it, the app is told (and notifies)."""
        if event.state is not WorkerState.ERROR:
            return
        event.stop()
        error = event.worker.error
        try:
            self.worker_failed(event.worker, error_text(error))
        finally:
            self.post_message(PaneWorkerFailed(event.worker, error))

    def worker_failed(self, worker: Worker, text: str) -> None:
        """Show that ``worker`` failed with ``text`` instead of its result (default: nothing)."""


class ShownPane(PaneFrame):
    """A pane that draws only while its tab is shown: :meth:`show` remembers the selection (a live
    source calls it on every refresh) and :meth:`draw_shown` draws it now if visible, else when
    the tab is next shown."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._pending: tuple[Standing, int | None] | None = None

    def show(self, standing: Standing, row: int | None) -> None:
        self._pending = (standing, row)
        if self.region.area:
            self.draw_shown()

    def on_show(self) -> None:
        if self._pending is not None:
            self.draw_shown()

    def draw_shown(self) -> None:
        """Draw ``self._pending`` (set)."""
