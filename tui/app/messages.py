"""Typed messages the app's workers send back to the UI thread."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from textual.message import Message
from textual.worker import Worker

if TYPE_CHECKING:  # annotations only: importing the panes' analysis here would slow the first frame
    from tui.analysis.breakdown import Explanation
    from tui.analysis.planner import PlanProjection, Recovery
    from tui.analysis.standing import Standing
    from tui.app.tree_rows import TreeTable
    from tui.sources.errors import InputError


@dataclass
class StandingLoaded(Message):
    """A source was read and the engine ran: everything the panes need, built off the UI thread."""

    standing: Standing
    table: TreeTable
    """The tree pane's strings and sort keys for ``standing``."""
    cluster: str = ""
    """The cluster read (a load that ends after the user switched to another is only kept)."""
    kept: bool = False
    """An earlier read of this cluster, shown again on switching back (its age unchanged)."""
    loading: tuple[str, ...] = ()
    """Commands still running for a fuller snapshot (a live source's first stage), for the status line."""


@dataclass
class ExplanationReady(Message, bubble=False):
    """The breakdown worker explained ``row``; dropped unless ``request_id`` is still the pane's."""

    request_id: int
    row: int
    explanation: Explanation


@dataclass
class RecoveryReady(Message, bubble=False):
    """The breakdown worker's recovery curves of ``row`` (after its :class:`ExplanationReady`)."""

    request_id: int
    row: int
    recovery: Recovery


@dataclass
class PlanReady(Message, bubble=False):
    """The what-if worker projected the planner's campaign (or the cluster refused it: ``error``);
    dropped unless ``request_id`` is still the pane's (the form changed, or another row was
    selected, since the worker started)."""

    request_id: int
    result: PlanProjection | None
    error: InputError | None = None
    """A user, account or partition the cluster does not have (naming ``plan:jobs[i].FIELD``)."""


@dataclass
class PaneWorkerFailed(Message):
    """A pane's worker raised. Bubbles to :class:`~tui.app.app.FairtopApp`, which notifies the user
    the same way as for its own workers (``Worker.StateChanged`` does not bubble)."""

    worker: Worker
    error: BaseException | None  # Worker.error: set once the worker is in the ERROR state
