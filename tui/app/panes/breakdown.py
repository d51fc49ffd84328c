"""The breakdown pane: why the selected association has its fairshare, level by level.

Renders a :class:`tui.explain.Explanation`: one block per association from the root down, with
the formula and its numbers for normalized shares, effective usage and (Fair Tree) LevelFS and
place among siblings, then the factor, a sentence in words, and the pending jobs' priority parts.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.markup import escape
from textual.widgets import Static

from tui.app.panes.base import PaneFrame
from tui.explain import Explanation, Step, explain_slurm
from tui.view import ClusterView

#: Pending jobs listed (the root and big accounts can have thousands).
MAX_JOBS = 20


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
    BreakdownPane #bd-jobs { color: $foreground; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("Select an association in the tree.", id="bd-title", classes="pane-title", markup=False)
            yield Static("", id="bd-summary", markup=False)
            yield Static("", id="bd-steps")
            yield Static("", id="bd-factor", markup=False)
            yield Static("", id="bd-jobs")

    def show(self, view: ClusterView, row: int | None) -> None:
        """Explain ``row`` of ``view`` (None: ask for a selection)."""
        title, summary, steps, factor, jobs = self.query_one("#bd-title", Static), \
            self.query_one("#bd-summary", Static), self.query_one("#bd-steps", Static), \
            self.query_one("#bd-factor", Static), self.query_one("#bd-jobs", Static)
        if view.fairshare is None or view.snapshot.tree is None:
            ex = None
            title.update("No Slurm association tree in this snapshot: nothing to break down.")
        elif row is None:
            ex = None
            title.update("Select an association in the tree.")
        else:
            ex = explain_slurm(view, row)
        if ex is None:
            for widget in (summary, steps, factor, jobs):
                widget.update("")
            return
        kind = "user" if ex.is_user else "account"
        title.update(f"Why {ex.label} ({kind}) has its fairshare · {ex.algorithm.replace('_', ' ')}")
        summary.update(ex.summary)
        steps.update("\n".join(_step_markup(s) for s in ex.steps))
        factor.update(f"FairShare: {ex.factor_formula}")
        jobs.update(_jobs_markup(ex))
