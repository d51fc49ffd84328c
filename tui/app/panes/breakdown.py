"""The breakdown pane: why the selected association has its fairshare, level by level.

Renders a :class:`tui.analysis.breakdown.Explanation`: one block per association from the root down, with
the formula and its numbers for normalized shares, effective usage and (Fair Tree) LevelFS and
place among siblings, then the factor, a sentence in words, and the pending jobs' priority parts.
"""

from __future__ import annotations

from textual import work
from textual.worker import Worker, get_current_worker
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Sparkline, Static

from tui.app.messages import ExplanationReady, RecoveryReady
from tui.app.panes.base import PaneFrame
from tui.analysis.breakdown import Explanation, Step, explain_slurm
from tui.analysis.pbs_breakdown import PbsExplanation, PbsStep, explain_pbs
from tui.analysis.recovery import Recovery, days_to_reach, recovery
from tui.analysis.standing import Standing

#: Pending jobs listed (the root and big accounts can have thousands).
MAX_JOBS = 20


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


def _pbs_step_markup(step: PbsStep) -> str:
    """One fairshare node's lines: a heading, then percentage, tree usage and usage/perc."""
    pad = "  " * step.depth
    head = f"{pad}[b]{escape(step.name)}[/b]"
    if step.sibling_shares is not None:
        head += f"  [$text-muted]shares {step.shares} of {step.sibling_shares} · usage {step.usage:,.0f}[/]"
    else:
        head += f"  [$text-muted]usage {step.usage:,.0f} (U_root)[/]"
    return "\n".join([
        head,
        f"{pad}  [$text-muted]Percentage          [/] {escape(step.percentage_formula)}",
        f"{pad}  [$text-muted]fairshare_tree_usage[/] {escape(step.tree_usage_formula)}",
        f"{pad}  [$text-muted]usage/perc          [/] {escape(step.usage_per_perc_formula)}",
    ])


def _jobs_markup(ex: Explanation) -> str:
    if not ex.jobs:
        return "[$text-muted]No pending jobs.[/]"
    if any(job.parts for job in ex.jobs):
        lines = ["[b]Pending jobs[/b] (priority = sum of the weighted parts, as sprio -l shows them)"]
    else:
        lines = ["[b]Pending jobs[/b] (priority as the scheduler holds it; the source has no sprio output, "
                 "so the parts are unknown)"]
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

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._request = 0
        """Counts :meth:`show` calls: results of an older one are dropped."""
        self._worker: Worker | None = None
        """The worker of the current request (None: nothing to compute)."""
        self._label = ""
        self._explained = False

    def show(self, standing: Standing, row: int | None) -> None:
        """Explain ``row`` of ``standing`` (None: ask for a selection).

        The explanation (a path walk, but it prints every row's sshare cells) and the recovery
        curves (16 engine runs) are computed by one exclusive thread worker; they arrive as
        :class:`ExplanationReady` then :class:`RecoveryReady`. Until then the pane says so.
        """
        self._request += 1
        title = self.query_one("#bd-title", Static)
        self._worker, self._explained = None, False
        self.workers.cancel_group(self, "breakdown")
        if standing.algorithm == "pbs":
            self._show_pbs(standing, row)
            return
        if standing.fairshare is None or standing.snapshot.tree is None:
            title.update("No Slurm association tree in this snapshot: nothing to break down.")
        elif row is None:
            title.update("Select an association in the tree.")
        else:
            self._label = standing.snapshot.tree.label(row)
            title.update(f"Why {self._label} has its fairshare: computing...")
            self._worker = self._explain(standing, row, self._request)
        self._clear_explanation()
        self._show_recovery(None, pending=self._worker is not None)

    def _show_pbs(self, standing: Standing, row: int | None) -> None:
        """``pbsfs -g`` for the selected entity, with every level's formula and numbers."""
        widgets = [self.query_one(f"#bd-{k}", Static) for k in ("title", "summary", "steps", "factor", "jobs")]
        title, summary, steps, factor, jobs = widgets
        self._show_recovery(None)
        if row is None:
            title.update("Select an entity in the tree.")
            for widget in widgets[1:]:
                widget.update("")
            return
        ex: PbsExplanation = explain_pbs(standing, row)
        title.update(f"Why {ex.name} has its fairshare · PBS Professional (as pbsfs -g {ex.name})")
        summary.update(ex.summary)
        steps.update("\n".join(_pbs_step_markup(s) for s in ex.steps))
        factor.update(f"fairshare_factor: {ex.factor_formula}")
        jobs.update("[b]pbsfs -g[/b]\n" + escape(ex.pbsfs_text.rstrip("\n")) + "\n\n[$text-muted]"
                    "No jobs or recovery curve: a PBS snapshot holds the fairshare tree and usage only "
                    "(usage decays by fairshare_decay_factor every fairshare_decay_time).[/]")

    def _clear_explanation(self) -> None:
        for widget_id in ("#bd-summary", "#bd-steps", "#bd-factor", "#bd-jobs"):
            self.query_one(widget_id, Static).update("")

    # An explicit description: by default @work repr()s the arguments, the whole Standing.
    @work(thread=True, exclusive=True, group="breakdown", name="breakdown", exit_on_error=False,
          description="explain the selected row and compute its recovery curves")
    def _explain(self, standing: Standing, row: int, request_id: int) -> None:
        """Off the UI thread: the explanation, then the recovery curves, each as a message."""
        worker = get_current_worker()
        ex = explain_slurm(standing, row)
        if worker.is_cancelled:
            return
        self.post_message(ExplanationReady(request_id, row, ex))
        rec = recovery(standing, row)
        if not worker.is_cancelled:
            self.post_message(RecoveryReady(request_id, row, rec))

    def on_explanation_ready(self, message: ExplanationReady) -> None:
        if message.request_id != self._request:
            return  # the selection moved on since the worker started
        ex = message.explanation
        self._explained = True
        kind = "user" if ex.is_user else "account"
        self.query_one("#bd-title", Static).update(
            f"Why {ex.label} ({kind}) has its fairshare · {ex.algorithm.replace('_', ' ')}")
        self.query_one("#bd-summary", Static).update(ex.summary)
        self.query_one("#bd-steps", Static).update("\n".join(_step_markup(s) for s in ex.steps))
        self.query_one("#bd-factor", Static).update(f"FairShare: {ex.factor_formula}")
        self.query_one("#bd-jobs", Static).update(_jobs_markup(ex))

    def on_recovery_ready(self, message: RecoveryReady) -> None:
        if message.request_id == self._request:
            self._show_recovery(message.recovery)

    def worker_failed(self, worker: Worker, text: str) -> None:
        if worker is not self._worker:
            return  # an older request's: the pane shows a newer one
        if not self._explained:
            self.query_one("#bd-title", Static).update(
                f"Why {self._label} has its fairshare: could not compute: {text}")
        self._show_recovery(None)
        self.query_one("#bd-rec-title", Static).update(f"If you run nothing more: could not compute: {text}")

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
