"""The breakdown pane: why the selected association has its fairshare, level by level.

Renders a :class:`tui.analysis.breakdown.Explanation`: one block per association from the root down, with
the formula and its numbers for normalized shares, effective usage and (Fair Tree) LevelFS and
place among siblings, then the factor, a sentence in words, and the pending jobs' priority parts.
"""

from __future__ import annotations

from textual import work
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Sparkline, Static

from tui.app.panes.base import PaneFrame
from tui.analysis.breakdown import Explanation, Step, explain_slurm
from tui.analysis.recovery import Recovery, days_to_reach, recovery
from tui.analysis.standing import Standing

#: Pending jobs listed (the root and big accounts can have thousands).
MAX_JOBS = 20
#: Trees up to this size get their recovery curve at once (deterministic screens); bigger ones
#: in a worker thread (16 engine runs on 100k associations take about a second).
INLINE_RECOVERY_ROWS = 20_000


def _recovery_text(rec: Recovery) -> str:
    """Start and end values, and when the factor doubles, under the two curves."""
    if rec.half_life_days == 0:
        return "PriorityDecayHalfLife is 0: usage never decays here, so nothing recovers by waiting."
    f0, f1 = rec.fairshare[0], rec.fairshare[-1]
    if f0 != f0:  # NaN: a Fair Tree account has no factor of its own
        return (f"raw usage {rec.usage[0]:,.0f} -> {rec.usage[-1]:,.0f} after {rec.days[-1]:g} days "
                f"(half-life {rec.half_life_days:g} days); accounts have no Fair Tree factor.")
    doubled = days_to_reach(rec, min(1.0, 2 * f0)) if f0 > 0 else None
    when = (f"; it is at least doubled ({min(1.0, 2 * f0):.6f}) by day {doubled:g}" if doubled
            else "")
    return (f"raw usage {rec.usage[0]:,.0f} -> {rec.usage[-1]:,.0f}, fairshare {f0:.6f} -> {f1:.6f} "
            f"over {rec.days[-1]:g} days (half-life {rec.half_life_days:g} days){when}.")


def _step_markup(step: Step) -> str:
    """One association's lines: a heading, then one line per quantity, indented by depth."""
    pad = "  " * step.depth
    head = f"{pad}[b]{escape(step.label)}[/b]"
    if step.row:
        shares = "parent" if step.transparent else f"{step.raw_shares} of {step.level_shares}"
        head += f"  [$text-muted]shares {escape(shares)} · usage {step.usage_raw:,.0f}[/]"
        if step.position is not None:
            head += f"  [$accent]place {step.position} of {step.siblings}[/]"
    lines = [head,
             f"{pad}  [$text-muted]NormShares  [/] {escape(step.shares_formula)}",
             f"{pad}  [$text-muted]EffectvUsage[/] {escape(step.usage_formula)}"]
    if step.level_fs_formula:
        lines.append(f"{pad}  [$text-muted]LevelFS     [/] {escape(step.level_fs_formula)}")
    if step.note:
        lines.append(f"{pad}  [$warning]{escape(step.note)}[/]")
    return "\n".join(lines)


def _jobs_markup(ex: Explanation) -> str:
    if not ex.jobs:
        return "[$text-muted]No pending jobs.[/]"
    lines = ["[b]Pending jobs[/b] (priority = sum of the weighted parts, as sprio -l shows them)"]
    for job in ex.jobs[:MAX_JOBS]:
        parts = " + ".join(f"{name} {value:,.0f}" for name, value in job.parts if value)
        prio = "?" if job.priority is None else f"{job.priority:,}"
        lines.append(f"  {escape(job.job_id)} on {escape(job.partition)}: {prio}"
                     + (f" = {escape(parts)}" if parts else ""))
    if len(ex.jobs) > MAX_JOBS:
        lines.append(f"  [$text-muted]… and {len(ex.jobs) - MAX_JOBS:,} more[/]")
    return "\n".join(lines)


class BreakdownPane(PaneFrame):
    """The fairshare breakdown of one association (``pbsfs -g`` for Slurm)."""

    DEFAULT_CSS = """
    BreakdownPane #bd-summary { color: $foreground; padding-bottom: 1; }
    BreakdownPane #bd-steps { padding-bottom: 1; }
    BreakdownPane #bd-factor { color: $foreground; text-style: bold; padding-bottom: 1; }
    BreakdownPane #bd-jobs { color: $foreground; padding-bottom: 1; }
    BreakdownPane #bd-rec-title { text-style: bold; color: $foreground; }
    BreakdownPane Sparkline { height: 1; width: 64; margin-bottom: 1; }
    BreakdownPane .bd-label { color: $text-muted; }
    BreakdownPane #bd-rec-text { color: $foreground; padding-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("Select an association in the tree.", id="bd-title", classes="pane-title", markup=False)
            yield Static("", id="bd-summary", markup=False)
            yield Static("", id="bd-steps")
            yield Static("", id="bd-factor", markup=False)
            yield Static("", id="bd-jobs")
            yield Static("", id="bd-rec-title", markup=False)
            yield Static("", id="bd-usage-label", classes="bd-label", markup=False)
            yield Sparkline([], id="bd-usage-spark")
            yield Static("", id="bd-fs-label", classes="bd-label", markup=False)
            yield Sparkline([], id="bd-fs-spark")
            yield Static("", id="bd-rec-text", markup=False)

    def show(self, standing: Standing, row: int | None) -> None:
        """Explain ``row`` of ``standing`` (None: ask for a selection)."""
        title, summary, steps, factor, jobs = self.query_one("#bd-title", Static), \
            self.query_one("#bd-summary", Static), self.query_one("#bd-steps", Static), \
            self.query_one("#bd-factor", Static), self.query_one("#bd-jobs", Static)
        if standing.fairshare is None or standing.snapshot.tree is None:
            ex = None
            title.update("No Slurm association tree in this snapshot: nothing to break down.")
        elif row is None:
            ex = None
            title.update("Select an association in the tree.")
        else:
            ex = explain_slurm(standing, row)
        if ex is None:
            for widget in (summary, steps, factor, jobs):
                widget.update("")
            self._show_recovery(None)
            return
        kind = "user" if ex.is_user else "account"
        title.update(f"Why {ex.label} ({kind}) has its fairshare · {ex.algorithm.replace('_', ' ')}")
        summary.update(ex.summary)
        steps.update("\n".join(_step_markup(s) for s in ex.steps))
        factor.update(f"FairShare: {ex.factor_formula}")
        jobs.update(_jobs_markup(ex))
        assert row is not None and standing.snapshot.tree is not None  # else ex is None
        if standing.snapshot.tree.size <= INLINE_RECOVERY_ROWS:
            self._show_recovery(recovery(standing, row))
        else:
            self._show_recovery(None, pending=True)
            self._recover(standing, row)

    @work(thread=True, exclusive=True, group="recovery", exit_on_error=False)
    def _recover(self, standing: Standing, row: int) -> None:
        rec = recovery(standing, row)
        self.app.call_from_thread(self._show_recovery, rec)

    def _show_recovery(self, rec: Recovery | None, pending: bool = False) -> None:
        """The two curves: your usage and your fairshare if you run nothing more."""
        title = self.query_one("#bd-rec-title", Static)
        usage_spark = self.query_one("#bd-usage-spark", Sparkline)
        fs_spark = self.query_one("#bd-fs-spark", Sparkline)
        labels = (self.query_one("#bd-usage-label", Static), self.query_one("#bd-fs-label", Static))
        text = self.query_one("#bd-rec-text", Static)
        if rec is None:
            title.update("If you run nothing more: computing..." if pending else "")
            usage_spark.data, fs_spark.data = [], []
            for widget in (*labels, text):
                widget.update("")
            return
        title.update(f"If you run nothing more and everyone else's usage holds steady "
                     f"(next {rec.days[-1]:g} days):")
        labels[0].update(f"raw usage {rec.usage[0]:,.0f} -> {rec.usage[-1]:,.0f} "
                         f"(Slurm decays it by 1 - 0.693/half-life per second)")
        fs = [v for v in rec.fairshare.tolist() if v == v]
        labels[1].update(f"fairshare {min(fs):.6f} .. {max(fs):.6f} (engine recomputed at each point)"
                         if fs else "fairshare: none (a Fair Tree account has no factor)")
        usage_spark.data = rec.usage.tolist()
        fs_spark.data = [0.0 if v != v else float(v) for v in rec.fairshare]
        text.update(_recovery_text(rec))
