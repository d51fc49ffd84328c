"""Reading the source off the UI thread, live refresh, and how fresh the data is.

A mixin of :class:`FairtopApp`, like :mod:`tui.app.actions`. The source is read by one
exclusive thread worker (group ``load``); a live source is read again every
``settings.refresh_rate`` seconds, and the status line says "updated N s ago", redrawn every
second. Demo and saved-folder snapshots are read once; the status line shows their time.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timezone
from typing import TYPE_CHECKING

from textual import work
from textual.worker import Worker, WorkerState, get_current_worker

from tui.analysis.standing import build_standing
from tui.app.messages import PaneWorkerFailed, StandingLoaded
from tui.app.panes.base import error_text
from tui.app.tree_rows import TreeTable

if TYPE_CHECKING:
    from tui.analysis.standing import Standing
    from tui.app.host import AppHost
    from tui.model import Snapshot


class LoadActions:
    """The load worker, the refresh timer's callback, every worker's failure, and the data's age."""

    _refresh_error: str | None  # assigned here, initialised by FairtopApp
    _loading: tuple[str, ...]
    _last_built: dict[str, tuple[Snapshot, Standing, TreeTable]]

    @work(thread=True, exclusive=True, exit_on_error=False, group="load", name="load")
    def load(self: AppHost) -> None:
        """Read the source and run the engine off the UI thread; the result comes as a message.

        Exclusive: a manual reload cancels a running one, whose result is then dropped.
        """
        worker = get_current_worker()
        self._read_source(lambda: worker.is_cancelled)

    def load_now(self: AppHost) -> None:
        """Read an instant source (the demo) on the UI thread; the result comes as a message, as
        from :meth:`load`. If the read fails, the worker reads it again and reports the failure
        as for any source."""
        try:
            self._read_source(lambda: False)
        except Exception:  # noqa: BLE001 - reported by the worker's own read, below
            self.load()

    def _read_source(self: AppHost, cancelled: Callable[[], bool]) -> None:
        cluster = self.clusters[self.cluster_index].name
        stages = self.stages() if self.stages is not None else [(self.loader(), ())]
        for snapshot, loading in stages:  # a live source: sshare's tree first, the rest after
            if cancelled():
                return
            standing, table = _built_from(self, cluster, snapshot, loading)
            if not cancelled():
                self.post_message(StandingLoaded(standing, table, cluster=cluster, loading=loading))

    def _refresh_live_source(self: AppHost) -> None:
        """Re-read a live source, unless the last read is still running (a slow sshare is left
        to finish rather than cancelled and restarted every period)."""
        if self.live and not any(w.group == "load" and w.is_running for w in self.workers):
            self.load()

    def on_worker_state_changed(self: AppHost, event: Worker.StateChanged) -> None:
        """Failures of the app's own workers (the load)."""
        if event.state is WorkerState.ERROR:
            self._worker_failed(event.worker, event.worker.error)

    def on_pane_worker_failed(self: AppHost, message: PaneWorkerFailed) -> None:
        """Failures of the panes' workers (their ``StateChanged`` stops at the pane)."""
        self._worker_failed(message.worker, message.error)

    def _worker_failed(self: AppHost, worker: Worker, error: BaseException | None) -> None:
        """The one place worker failures surface: a notification with the error's text."""
        text = error_text(error)
        if worker.group == "load":
            if self.standing is not None:
                # A refresh failed: keep showing the last data, say how old it is, notify once per error.
                repeated, self._refresh_error = text == self._refresh_error, text
                self._update_status()
                if repeated:
                    return
            else:
                self._status.update(f"could not load: {error}")
        self.notify(text, title=f"{worker.name or worker.group} failed", severity="error", timeout=15)

    def _data_age(self: AppHost) -> str:
        """How fresh the data is: "updated N s ago" for a live source, else the snapshot time."""
        if self.standing is None or self._loaded_at is None:
            return "loading…"
        if self._loading:
            return f"loading {', '.join(self._loading)}…"
        if not self.live:
            return f"snapshot {self.standing.snapshot.taken_at.astimezone(timezone.utc):%Y-%m-%d %H:%M} UTC"
        age = max(0, int(self.clock() - self._loaded_at))
        text = f"updated {age} s ago" if age < 120 else f"updated {age // 60} min ago"
        return text + (f" (refresh failed: {self._refresh_error})" if self._refresh_error else "")


def _built_from(host: AppHost, cluster: str, snapshot: Snapshot,
                loading: tuple[str, ...]) -> tuple[Standing, TreeTable]:
    """The standing and table of ``snapshot``: the last ones again when the source returned
    the very snapshot they were built from (a followed folder whose publisher has not moved
    on). Building a second 20,000-association standing beside the shown one doubled the
    Python objects alive for a moment, and Python's allocator keeps the arenas such a peak
    takes: the app's memory stepped up for good (bench/README.md, 2026-11-26)."""
    last = host._last_built.get(cluster)
    if last is not None and last[0] is snapshot and last[1].me == host.me and not loading:
        return last[1], last[2]
    standing = build_standing(snapshot, host.me, check_printed=not loading)
    table = TreeTable.from_standing(standing)
    if not loading:
        host._last_built[cluster] = (snapshot, standing, table)
    return standing, table
