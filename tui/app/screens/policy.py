"""The Policy screen (``:policy``, ``P``): the admin's question, what another policy would do.

A form mirrors ``fairtop replay``'s flags (half-life, calc period, reset period, algorithm,
dampening, limits enforcement, QOS UsageFactors, billing weights); Enter replays the source's
jobs under it. Below: the largest winners and losers, every user's and account's FairShare and
rank now and replayed, sorted by the move, and the highlighted association's RawUsage and
FairShare over the window under both policies. The computation is :mod:`tui.analysis.replay`
and :mod:`tui.analysis.policy_view`, in thread workers: the jobs and the cluster's own-policy
pass once per source (:func:`~tui.analysis.replay.prepare_replay`), then one
:func:`~tui.analysis.replay.replay_policy` per form. A source without jobs (PBS, a capture
without sacct, PrivateData for a normal user) is said so, with why.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Grid, VerticalScroll
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Input, Label, Static
from textual.worker import Worker, WorkerState

from tui.analysis.policy_view import (
    Series,
    FormError,
    OwnSeries,
    default_window,
    duration,
    enforce_hint,
    form_change,
    own_series,
    policy_line,
    policy_series,
    series_row,
    winners_losers,
)
from tui.analysis.replay import PolicyChange, PolicyReplay, ReplayBase, job_columns, prepare_replay, \
    replay_policy, replay_rows
from tui.analysis.standing import Standing
from tui.app.panes.base import error_text
from tui.app.panes.history import jobs_origin
from tui.app.widgets.line_table import LineTable
from tui.app.widgets.series_plot import Figure, SeriesPlot
from tui.model import Snapshot

_BASES: dict[str, tuple[ReplayBase, OwnSeries]] = {}
"""The last snapshot's own-policy pass and its plot series (one: a session looks at one cluster at a
time), by the snapshot's id (checked against ``base.snap``: an id can be reused once a snapshot is gone)."""

FIELDS = (("half_life", "Half-life"), ("calc_period", "Calc period"), ("reset_period", "Reset period"),
          ("algorithm", "Algorithm"), ("damping", "Dampening"), ("enforce_limits", "Enforce limits"),
          ("qos_usage_factor", "QOS UsageFactor"), ("billing", "Billing weights"))


def lacks(snap: Snapshot) -> str | None:
    """Why this source cannot be replayed, or None."""
    if snap.tree is None:
        return ("PBS has no sacct: a policy replay needs Slurm's associations and every job's accounting "
                "record. Try it on a Slurm capture ('fairtop capture DIR') or 'fairtop --demo'.")
    if snap.private is not None and snap.private.hides & {"jobs", "usage", "users", "accounts"}:
        return (f"A policy replay needs every job and every association's usage, and PrivateData="
                f"{','.join(sorted(snap.private.hides))} shows you your own only: ask an admin "
                "(or run 'fairtop replay' as one).")
    kind, why = jobs_origin(snap)
    if kind == "none":
        return (why or "This source has no accounting records.").replace("usage history", "policy replay")
    return None


@dataclass
class Prepared(Message):
    key: str
    base: ReplayBase = field(repr=False)  # a message's repr is logged: no arrays in it
    own: OwnSeries = field(repr=False)


@dataclass
class Replayed(Message):
    key: str
    change: PolicyChange
    done: PolicyReplay = field(repr=False)
    rows: list[dict[str, object]] = field(repr=False)
    header: str = field(repr=False)
    lines: list[str] = field(repr=False)
    """The table's lines, formatted in the worker."""
    row_index: list[int] = field(repr=False)
    """The tree row of each line."""


@dataclass
class SeriesReady(Message):
    key: str
    change: PolicyChange
    series: Series = field(repr=False)


class PolicyScreen(Screen[None]):
    """The form, winners and losers, the table, and the highlighted association's plots."""

    BINDINGS = [Binding("escape", "dismiss", "Back", id="policy-close")]

    DEFAULT_CSS = """
    PolicyScreen #po-scroll { padding: 0 1; }
    PolicyScreen .pane-title { text-style: bold; color: $accent; }
    PolicyScreen #po-form { grid-size: 4; grid-columns: auto 1fr auto 1fr; grid-rows: 1; grid-gutter: 0 1;
                            height: auto; margin-bottom: 1; }
    PolicyScreen #po-form Input { border: none; height: 1; padding: 0 1; }
    PolicyScreen #po-form Input:focus { background: $boost; text-style: bold; }
    PolicyScreen #po-status { color: $text-muted; height: 5; }
    PolicyScreen #po-moves { height: 4; }
    PolicyScreen SeriesPlot { height: 12; }
    """

    def __init__(self, standing: Standing, row: int | None) -> None:
        super().__init__()
        self.standing = standing
        self.row = row if row else None
        self._picked = self.row
        """The association selected when the screen opened (the tree's cursor: often one's own row)."""
        self._moved = False
        """The cursor was moved in the table: later replays keep its association."""
        self.rows: list[dict[str, object]] = []
        """The last replay's rows (:func:`~tui.analysis.replay.replay_rows`), sorted by the move."""
        self.done: PolicyReplay | None = None
        self._change: PolicyChange | None = None
        self._series_of: tuple[PolicyChange, Series] | None = None
        """The shown policy's series of every association (:func:`~tui.analysis.policy_view.policy_series`)."""
        self._row_index: list[int] = []
        self._key = f"{id(standing.snapshot)}"
        """The snapshot's identity: a reload is a new snapshot (and the demo's jobs are made for its moment)."""

    def compose(self) -> ComposeResult:
        snap = self.standing.snapshot
        s = snap.settings
        limits = enforce_hint(s.accounting_enforce)
        own = {"half_life": duration(s.decay_half_life_s), "calc_period": f"{s.calc_period_s // 60} (minutes)",
               "reset_period": s.usage_reset_period, "algorithm": s.algorithm, "damping": f"{s.dampening:g}",
               "enforce_limits": limits,
               "qos_usage_factor": "QOS=F,…", "billing": "PART=CPU=1,Mem=0.25G;…"}
        with VerticalScroll(id="po-scroll"):
            yield Static("Policy replay · what another policy would have done · Esc: back", classes="pane-title",
                         id="po-title", markup=False)
            with Grid(id="po-form"):
                for name, title in FIELDS:
                    yield Label(title)
                    yield Input(placeholder=own.get(name, ""), id=f"po-{name}")
            yield Static("", id="po-status", markup=False)
            yield Static("", id="po-moves", markup=False)
            yield LineTable(id="po-table")
            yield SeriesPlot(id="po-usage")
            yield SeriesPlot(id="po-fs")

    def on_mount(self) -> None:
        why = lacks(self.standing.snapshot)
        if why is not None:
            self._lacking(why)
            return
        self._status("Reading the jobs and replaying them under the cluster's own policy…")
        kept = _BASES.get(self._key)
        if kept is not None and kept[0].snap is self.standing.snapshot:
            self.post_message(Prepared(self._key, *kept))
        else:
            self._prepare(self.standing.snapshot)
        self.query_one("#po-half_life", Input).focus()

    def _lacking(self, why: str) -> None:
        self.query_one("#po-title", Static).update("Policy replay: not on this source · Esc: back")
        self._status(why)
        for widget in (self.query_one("#po-form"), self.query_one(LineTable), *self.query(SeriesPlot)):
            widget.display = False

    def _status(self, text: str) -> None:
        self.query_one("#po-status", Static).update(text, layout=False)  # a fixed height: no new layout

    # --- workers -----------------------------------------------------------------------------

    @work(thread=True, exclusive=True, exit_on_error=False, group="policy-prepare")
    def _prepare(self, snap: Snapshot) -> None:
        from tui.sources.ctld_log import load_saved_log, parse_ctld_log
        from tui.sources.demo import demo_history
        from tui.sources.sacct import SacctColumns, live_columns, load_saved_columns, load_saved_last_cycle

        assert snap.tree is not None
        kind, folder = jobs_origin(snap)
        last: datetime | None = None
        cycles: list[float] | None = None  # slurmctld's logged decay cycles, when saved or readable
        if kind == "demo":
            jobs, last = demo_history(snap)
            cols = SacctColumns.of_jobs(jobs)
        elif kind == "folder":
            assert folder is not None
            cols, last = load_saved_columns(folder), load_saved_last_cycle(Path(folder))
            log = load_saved_log(folder)
            cycles = log.cycles if log is not None else None
        else:
            from tui.sources.slurm_cli import controller_log, last_decay_cycle

            on_cluster = snap.cluster if snap.source.startswith("live Slurm -M ") else ""
            since = default_window(snap.taken_at, snap.settings.decay_half_life_s, None)
            cols, last = live_columns(since, cluster=on_cluster), last_decay_cycle(on_cluster)
            data = controller_log(on_cluster)
            cycles = parse_ctld_log(data).cycles if data else None
        first = float(cols.start.min()) if cols.size else None
        since = default_window(snap.taken_at, snap.settings.decay_half_life_s, first)
        base = prepare_replay(snap, job_columns(cols, snap.tree), since.astimezone(timezone.utc), last, cycles=cycles)
        self.post_message(Prepared(self._key, base, own_series(base)))

    @work(thread=True, exclusive=True, exit_on_error=False, group="policy-replay")
    def _replay(self, key: str, base: ReplayBase, own: OwnSeries, change: PolicyChange) -> None:
        done = replay_policy(base, change)
        rows = replay_rows(done)
        index = {(str(done.tree.account[i]), str(done.tree.user[i])): i for i in range(done.tree.size)}
        cells = [(str(r["account"]), str(r["user"]), _num(r["fairshare"]), _num(r["fairshare_replayed"]),
                  "" if r["move"] is None else f"{r['move']:+.6f}", _num(r["rank"]), _num(r["rank_replayed"]),
                  _num(r["raw_usage"]), _num(r["raw_usage_replayed"])) for r in rows]
        widths = [max(len(c), *(len(line[k]) for line in cells)) if cells else len(c) for k, c in enumerate(COLUMNS)]
        lines = [_line(widths, *line) for line in cells]
        header = _line(widths, *COLUMNS)
        self.post_message(Replayed(key, change, done, rows, header, lines,
                                   [index[(str(r["account"]), str(r["user"]))] for r in rows]))
        # every association over time under both policies, once per policy: a highlight reads its row
        self.post_message(SeriesReady(key, change, policy_series(base, change, own=own, done=done)))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        if event.state is WorkerState.ERROR and str(event.worker.group).startswith("policy-"):
            event.stop()
            self._status(f"The replay failed: {error_text(event.worker.error)}")

    # --- results -----------------------------------------------------------------------------

    @on(Prepared)
    def _prepared(self, message: Prepared) -> None:
        _BASES.clear()
        _BASES[message.key] = (message.base, message.own)
        self._run()

    @on(Input.Submitted)
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._run()

    def _run(self) -> None:
        kept = _BASES.get(self._key)
        if kept is None:
            return  # still preparing: it runs the form once ready
        form = {f: self.query_one(f"#po-{f}", Input).value for f, _ in FIELDS}
        try:
            change = form_change(form)
        except FormError as exc:
            self._status(f"Not replayed: {exc}")
            return
        self._status("Replaying…")
        self._replay(self._key, *kept, change)

    @on(Replayed)
    def _replayed(self, message: Replayed) -> None:
        if message.key != self._key:
            return
        done, rows = message.done, message.rows
        self.done, self.rows, self._change = done, rows, message.change
        what = policy_line(done)
        zone = self.standing.snapshot.zone  # the cluster's clock (None: this machine's)
        self._status(f"{done.jobs:,} job run(s) from {done.since.astimezone(zone):%Y-%m-%d %H:%M} to "
                     f"{done.at.astimezone(zone):%Y-%m-%d %H:%M %Z} replayed: {what}; "
                     f"{done.algorithm.replace('_', ' ')}"
                     + (f", dampening {done.damping:g}" if done.algorithm == "classic" else "")
                     + f"\nCycles: {done.grid_text}"
                     + "".join(f"\n{n}" for n in done.notes)
                     + "\nEnter in a field replays · table sorted by the move (FairShare replayed - now) · "
                       "Rank: N = the highest of N users")
        winners, losers = winners_losers(rows, 4)
        listed = [" · ".join(f"{_name(r)} {r['move']:+.4f}" for r in side) or "none" for side in (winners, losers)]
        self.query_one("#po-moves", Static).update(f"Largest winners: {listed[0]}\nLargest losers:  {listed[1]}",
                                                   layout=False)
        self._row_index = message.row_index
        first = self._first_line(rows)
        self.query_one(LineTable).set_lines(message.header, message.lines, first)
        if rows:
            self._plot(self._row_index[first])

    def _first_line(self, rows: list[dict[str, object]]) -> int:
        """Where the cursor goes in a new replay's table: the association the cursor was moved to;
        else the one selected at opening where this policy moves its FairShare or its usage (or
        moves nobody); else the top, the largest winner (an admin opens on root/root, which no
        policy moves)."""
        at = {r: i for i, r in enumerate(self._row_index)}
        if self._moved or self._picked not in at:
            return at.get(self.row, 0) if self.row is not None else 0
        i = at[self._picked]
        return i if _moves(rows[i]) or not any(map(_moves, rows)) else 0

    @on(LineTable.Highlighted)
    def _highlighted(self, event: LineTable.Highlighted) -> None:
        self._moved = True
        if 0 <= event.index < len(self._row_index) and self._row_index[event.index] != self.row:
            self._plot(self._row_index[event.index])

    def _plot(self, row: int) -> None:
        """Plot ``row`` from the series of the shown policy (computed once per policy, in a worker)."""
        self.row = row
        series = self._series_of
        if series is None or series[0] is not self._change:
            return  # its series is on the way: plotted when it arrives
        label = _BASES[self._key][0].tree.label(row) if self._key in _BASES else ""
        dates, usage, fairshare = series_row(series[1], row, self.standing.snapshot.zone)
        times = series[1].times
        short = len(times) > 1 and (times[-1] - times[0]).total_seconds() < 2 * 86400  # hours, not days
        form = "H:M" if short else "d/m"
        self.query_one("#po-usage", SeriesPlot).show_figure(Figure(f"RawUsage of {label} (SU = billing-hours)",
                                                                   dates, usage, output_form=form))
        self.query_one("#po-fs", SeriesPlot).show_figure(Figure(f"FairShare of {label}", dates, fairshare,
                                                                output_form=form))

    @on(SeriesReady)
    def _series_ready(self, message: SeriesReady) -> None:
        if message.key == self._key and message.change is self._change:
            self._series_of = (message.change, message.series)
            if self.row is not None:
                self._plot(self.row)


COLUMNS = ("Account", "User", "FairShare", "Replayed", "Move", "Rank", "Replayed", "RawUsage", "Replayed")


def _line(widths: list[int], *cells: str) -> str:
    """One line of the table: names left-aligned, numbers right-aligned, as ``fairtop replay``."""
    return " ".join(c.ljust(w) if k < 2 else c.rjust(w) for k, (c, w) in enumerate(zip(cells, widths))).rstrip()


def _moves(row: dict[str, object]) -> bool:
    """The policy changes this association's FairShare or its RawUsage (under Fair Tree a usage
    change can leave the rank, and so the FairShare, where it was)."""
    return bool(row["move"]) or row["raw_usage"] != row["raw_usage_replayed"]


def _name(row: dict[str, object]) -> str:
    return f"{row['account']}/{row['user']}" if row["user"] else str(row["account"])


def _num(value: object) -> str:
    return "" if value is None else f"{value:.6f}" if isinstance(value, float) else str(value)
