"""The Jobs pane (``6``, ``:jobs``): why each pending job waits, and the running ones.

One line a job of the user selected in the tree (else yours): job id, partition, Slurm's Reason
code, its place in its partition's queue (jobs ahead, of which the user's), the priority part
holding it back against the job just ahead, and the scheduler's start estimate with its age.
Under the table, the highlighted job in words: the reason with the job's own numbers, its place,
its sprio parts, the estimate, and what would move it. The answers are
:func:`tui.analysis.jobs.jobs_view`'s, computed in a thread worker (the queue of a busy site is
ordered once per snapshot and kept for the next user); the table draws only its lines on screen
(:class:`~tui.app.widgets.line_table.LineTable`), and a refresh that changes nothing redraws
nothing. A source without jobs (PBS, a capture without squeue) says so in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from collections.abc import Callable
from typing import Any

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker

from tui.analysis.jobs import JobsView, Queue, jobs_lacks, jobs_user, jobs_view
from tui.analysis.standing import Standing
from tui.app.panes.base import ShownPane
from tui.app.widgets.line_table import LineTable
from tui.model import Snapshot

def utc_now() -> datetime:
    return datetime.now(timezone.utc)


CLOCK: Callable[[], datetime] = utc_now
"""The wall clock the estimates' age is counted to (the screenshot script fixes it)."""
HINT = "↑↓ a job · the user selected in the tree (1), m: you"


@dataclass
class JobsReady(Message, bubble=False):
    """One user's jobs explained, off the UI thread."""

    user: str
    view: JobsView = field(repr=False)
    snapshot: Snapshot = field(repr=False)
    queue: Queue | None = field(repr=False)
    """The snapshot's queue, kept for the next user's jobs (None: none was needed)."""


class JobsPane(ShownPane):
    """The user's pending and running jobs, each explained."""

    DEFAULT_CSS = """
    JobsPane > Vertical { height: 1fr; padding: 0 1; }
    JobsPane #jb-table { height: auto; max-height: 60%; min-height: 2; }
    JobsPane #jb-detail { height: auto; max-height: 12; padding-top: 1; }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._key: tuple[Snapshot, str] | None = None
        """(snapshot, user) drawn or being computed (the snapshot held: an id could be reused)."""
        self._queue: tuple[Snapshot, Queue] | None = None
        self.view: JobsView | None = None
        """The view drawn (tests read it)."""

    def compose(self) -> ComposeResult:
        with Vertical(id="jb-box"):
            yield Static("No jobs loaded.", id="jb-title", classes="pane-title", markup=False)
            yield LineTable(id="jb-table")
            yield Static("", id="jb-detail", markup=False)

    def draw_shown(self) -> None:
        assert self._pending is not None
        standing, row = self._pending
        snap = standing.snapshot
        lacks = jobs_lacks(snap)
        if lacks is not None:
            self._key, self.view = None, None
            self._set("#jb-title", f"Jobs: {lacks}")
            self.query_one(LineTable).display = False
            self._set("#jb-detail", "")
            return
        user = jobs_user(standing, row)
        if self._key is not None and self._key[0] is snap and self._key[1] == user:
            return  # drawn, or on its way
        self._key = (snap, user)
        queue = self._queue[1] if self._queue is not None and self._queue[0] is snap else None
        if self.view is None or self.view.user != user:
            self._set("#jb-title", f"Jobs of {user or 'no user'}: explaining…")
        self._explain(standing, user, queue)

    @work(thread=True, exclusive=True, exit_on_error=False, group="jobs")
    def _explain(self, standing: Standing, user: str, queue: Queue | None) -> None:
        snap = standing.snapshot
        if queue is None and any(j.state == "PENDING" and j.user == user for j in snap.jobs):
            queue = Queue.of_snapshot(snap)  # once per snapshot: the next user's jobs reuse it
        view = jobs_view(standing, user, queue, CLOCK())
        self.post_message(JobsReady(user, view, snap, queue))

    @on(JobsReady)
    def _ready(self, message: JobsReady) -> None:
        if message.queue is not None:
            self._queue = (message.snapshot, message.queue)
        if self._key is None or self._key[0] is not message.snapshot or self._key[1] != message.user:
            return  # the selection (or the snapshot) moved on meanwhile
        old, view = self.view, message.view
        self.view = view
        table = self.query_one(LineTable)
        table.display = True
        self._set("#jb-title", f"{view.title} · {HINT}")
        # the same job stays highlighted across a refresh; unchanged lines are not sent again
        at = old.job_ids[table.cursor] if old is not None and old.user == view.user and old.job_ids else None
        cursor = view.job_ids.index(at) if at in view.job_ids else 0
        if old is None or (old.header, old.lines) != (view.header, view.lines) or cursor != table.cursor:
            table.set_lines(view.header, view.lines, cursor)
        self._detail(cursor)

    @on(LineTable.Highlighted)
    def _highlighted(self, event: LineTable.Highlighted) -> None:
        event.stop()
        self._detail(event.index)

    def _detail(self, index: int) -> None:
        view = self.view
        text = view.details[index] if view is not None and 0 <= index < len(view.details) else ""
        self._set("#jb-detail", text)

    def _set(self, selector: str, text: str) -> None:
        widget = self.query_one(selector, Static)
        if widget.content != text:
            widget.update(text)

    def worker_failed(self, worker: Worker, text: str) -> None:
        if worker.group == "jobs":
            self._key = None
            self._set("#jb-title", f"Jobs: could not explain them: {text}")
