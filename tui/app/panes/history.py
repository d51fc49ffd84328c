"""The history pane: usage per day of the selected association, and the decayed usage it implies.

Renders :mod:`tui.analysis.history` answers: two dated plots (textual-plotext), SU per day and
decayed usage at the end of each day, and one line on how well the jobs rebuild sshare's
RawUsage. The accounting records come from ``sacct_a_P.psv`` in a capture folder, from a live
``sacct`` or, on the built-in demo, from its made-up past (:func:`tui.sources.demo.demo_history`),
read once in a worker thread (live: again after :data:`LIVE_TTL_S`); a source without them
(slurmrestd, PBS) is said so plainly.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.message import Message
from textual.widgets import Static
from textual.worker import Worker, WorkerState
from textual_plotext import PlotextPlot

from tui.analysis.history import check_raw_usage, daily_usage, logged_cycles, select_jobs
from tui.analysis.standing import Standing
from tui.app.panes.base import ShownPane
from tui.model import Snapshot
from tui.sources.ctld_log import load_saved_log
from tui.sources.demo import demo_history
from tui.sources.sacct import SACCT_FILE, AccountedJob, live_history, load_saved_history
from tui.sources.slurm_cli import last_decay_cycle

DAYS = 14
"""Days shown, ending with the snapshot's day."""
LIVE_TTL_S = 600.0
"""A live cluster's accounting records are asked for again after this many seconds."""


@dataclass
class Records:
    """One source's accounting records and what the check runs on."""

    jobs: list[AccountedJob]
    last_cycle: datetime | None
    cycles: list[float] | None = None
    """slurmctld's logged decay cycles (a capture's ``slurmctld_cycles.log``) when they cover the jobs."""
    anchors: list[float] = field(default_factory=list)
    """The controller's starts, with the logged cycles."""


@dataclass
class HistoryLoaded(Message):
    """Accounting records of one source, read off the UI thread."""

    key: str
    records: Records


def jobs_origin(snap: Snapshot) -> tuple[str, str | None]:
    """("folder", DIR), ("live", None) or ("none", why)."""
    if snap.tree is None:
        return "none", "PBS has no sacct: usage history is for Slurm clusters."
    folder = Path(snap.source)
    if folder.is_dir():
        if (folder / SACCT_FILE).is_file():
            return "folder", str(folder)
        return "none", (f"This capture has no {SACCT_FILE} (saved sacct), so there is no usage history. "
                        "'fairtop capture DIR' saves one.")
    if snap.source.startswith("live Slurm"):
        return "live", None
    if snap.source.startswith("built-in demo"):
        return "demo", None
    return "none", f"{snap.source}: no sacct (accounting records) in this source, so there is no usage history."


class HistoryPane(ShownPane):
    """Daily usage (SU) and decayed usage of the selected association, with dates."""

    DEFAULT_CSS = """
    HistoryPane PlotextPlot { height: 14; min-height: 10; }
    HistoryPane .hi-check { color: $text-muted; padding-top: 1; }
    """

    def __init__(self, **kwargs) -> None:  # noqa: ANN003 - Widget's keyword arguments
        super().__init__(**kwargs)
        self._cache: dict[str, tuple[float, Records]] = {}

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="hi-scroll"):
            yield Static("No usage history loaded.", id="hi-title", classes="pane-title", markup=False)
            yield PlotextPlot(id="hi-daily")
            yield PlotextPlot(id="hi-decayed")
            yield Static("", id="hi-check", classes="hi-check", markup=False)

    def _key(self, snap: Snapshot) -> str:
        # the demo's records are made for its moment: a reloaded demo is a new cluster
        return f"{snap.source}@{snap.taken_at.isoformat()}" if jobs_origin(snap)[0] == "demo" else snap.source

    def draw_shown(self) -> None:
        """Plot the usage of the selection (an account: with the accounts below it; a user: that
        association), or of everyone when nothing is selected."""
        assert self._pending is not None
        standing, row = self._pending
        snap = standing.snapshot
        kind, value = jobs_origin(snap)
        if kind == "none":
            self._message(value or "No usage history.")
            return
        key = self._key(snap)
        cached = self._cache.get(key)
        fresh = cached is not None and (kind in ("folder", "demo") or time.monotonic() - cached[0] < LIVE_TTL_S)
        if not fresh:
            self._message("Reading the accounting records (sacct)…")
            self._load(key, kind, value, snap)
            return
        assert cached is not None
        self._draw(standing, row, cached[1])

    def _message(self, text: str) -> None:
        self.query_one("#hi-title", Static).update(text)
        for plot in self.query(PlotextPlot):
            plot.display = False
        self.query_one("#hi-check", Static).update("")

    @work(thread=True, exclusive=True, exit_on_error=False, group="history")
    def _load(self, key: str, kind: str, folder: str | None, snap: Snapshot) -> None:
        cycles: list[float] | None = None  # a regular grid, but where a capture saved slurmctld's cycles
        anchors: list[float] = []
        if kind == "folder":
            assert folder is not None
            jobs, last = load_saved_history(folder)
            cycles, anchors = logged_cycles(load_saved_log(folder), jobs, last, snap.taken_at)
        elif kind == "demo":
            jobs, last = demo_history(snap)
        else:
            hl = snap.settings.decay_half_life_s
            back = timedelta(seconds=10 * hl) if hl > 0 else timedelta(days=366)
            on = snap.cluster if snap.source.startswith("live Slurm -M ") else ""  # a [[cluster]] of this slurmdbd
            jobs = live_history(datetime.now(timezone.utc) - max(back, timedelta(days=DAYS)), cluster=on)
            last = last_decay_cycle(on)
        self.post_message(HistoryLoaded(key, Records(jobs, last, cycles, anchors)))

    @on(HistoryLoaded)
    def _loaded(self, message: HistoryLoaded) -> None:
        self._cache[message.key] = (time.monotonic(), message.records)
        if self._pending is not None:
            standing, row = self._pending
            if self._key(standing.snapshot) == message.key:
                self._draw(standing, row, message.records)

    @on(Worker.StateChanged)
    def _failed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "history" and event.state == WorkerState.ERROR:
            event.stop()
            self._message(f"Could not read the accounting records: {event.worker.error}")

    def _draw(self, standing: Standing, row: int | None, records: Records) -> None:
        snap = standing.snapshot
        jobs = records.jobs
        tree = snap.tree
        assert tree is not None
        account = user = None
        scope = "everyone"
        if row is not None and row > 0:
            account = str(tree.account[row])
            user = str(tree.user[row]) if tree.is_user[row] else None
            scope = tree.label(row) + ("" if user else " and the accounts below it")
        mine = [j for j in select_jobs(jobs, account, None, tree) if user is None or j.user == user]
        now = snap.taken_at.astimezone(snap.zone)  # the cluster's days
        daily = daily_usage(mine, now, DAYS, snap.settings.decay_half_life_s)
        dates = [d.strftime("%d/%m/%Y") for d in daily.days]
        su = [float(x) / 3600.0 for x in daily.total()]
        decayed = [float(x) / 3600.0 for x in daily.total_decayed()]
        self.query_one("#hi-title", Static).update(
            f"Usage of {scope}, last {DAYS} days to {now:%Y-%m-%d %H:%M %Z} ({len(mine)} of {len(jobs)} jobs; "
            "SU = billing-hours)")
        for plot_id, values, title in (("#hi-daily", su, "usage per day (SU)"),
                                       ("#hi-decayed", decayed, "decayed usage at the end of the day (SU)")):
            widget = self.query_one(plot_id, PlotextPlot)
            widget.display = True
            plt = widget.plt
            plt.clear_data()
            plt.clear_figure()
            plt.date_form("d/m/Y")
            if plot_id == "#hi-daily":
                plt.bar(dates, values)
            else:
                plt.plot(dates, values, marker="braille")
            plt.title(title)
            widget.refresh()
        check = check_raw_usage(jobs, tree, snap.settings, records.last_cycle, snap.taken_at, cycles=records.cycles,
                                partitions=snap.partitions, anchors=records.anchors, tz=snap.zone)
        target = next((r for r in check.rows if r.row == (row or 0)), None)
        line = ""
        if target is not None:
            rel = "-" if target.rel_diff is None else f"{target.rel_diff:+.4%}"
            verdict = "agrees" if target.agrees else "differs: " + target.note
            printed = "the demo's" if jobs_origin(snap)[0] == "demo" else "sshare"
            grid = ("on slurmctld's logged cycles, within 1e-6 relative + 1" if check.logged else
                    f"on cycles every {check.period_s} s, within one period's decay")
            line = (f"RawUsage {target.printed:,.0f} ({printed}) vs {target.rebuilt:,.0f} rebuilt from the jobs "
                    f"with Slurm's decay law ({grid}): {rel}, {verdict}; all associations: largest difference "
                    f"{check.max_rel_diff:.4%}.")
            line += "".join(f"\n{n}" for n in check.notes)
        self.query_one("#hi-check", Static).update(line)
