"""The breakdown pane: why the selected association has its fairshare, level by level.

Renders a :class:`tui.analysis.breakdown.Explanation`: one block per association from the root down, with
the formula and its numbers for normalized shares, effective usage and (Fair Tree) LevelFS and
place among siblings, then the factor, a sentence in words, and the pending jobs' priority parts.
"""

from __future__ import annotations

from functools import partial

import numpy as np
from textual import work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Static
from textual.timer import Timer
from textual.worker import Worker, get_current_worker
from textual_plotext import PlotextPlot

from tui.analysis.breakdown import Explanation, Step, explain_slurm
from tui.analysis.pbs_breakdown import PbsExplanation, PbsStep, explain_pbs
from tui.analysis.planner import Recovery, day_reached, recovery
from tui.analysis.private_view import private_breakdown
from tui.analysis.standing import Standing
from tui.app.messages import ExplanationReady, RecoveryReady
from tui.app.paint_hold import PaintHold
from tui.app.panes.base import PaneFrame
from tui.app.widgets.steady_static import SteadyStatic

#: Pending jobs listed (the root and big accounts can have thousands).
MAX_JOBS = 20
#: Hidden lines kept ready under a path's (a level's heading, three formulas and a note): the
#: next path one level longer is drawn in one frame.
SPARE_LINES = 5
#: The fairshare the recovery text dates ("back to 0.5 around ..."); above it, when it doubles.
RECOVERY_TARGET = 0.5
#: Dates on the curves' time axis (plotext's form and the strftime that writes it).
PLOT_DATE_FORM, PLOT_DATE = "Y-m-d", "%Y-%m-%d"
#: Seconds a result may take before the pane says "computing...". One that comes sooner is drawn
#: at once, with the next part if that is in too: a placeholder drawn and replaced a frame later
#: is a third of a Down's bytes over SSH (and a flicker).
PENDING_S = 0.3


def _recovery_text(rec: Recovery) -> str:
    """Start and end values, and when the factor is back to 0.5 (or doubles), under the curves."""
    if rec.half_life_days == 0:
        return "PriorityDecayHalfLife is 0: usage never decays here, so nothing recovers by waiting."
    f0, f1 = rec.fairshare[0], rec.fairshare[-1]
    span = f"over the next {rec.days[-1]:g} days (to {rec.date_at(rec.days[-1]):%Y-%m-%d})"
    if f0 != f0:  # NaN: a Fair Tree account has no factor of its own
        return (f"raw usage {rec.usage[0]:,.0f} -> {rec.usage[-1]:,.0f} {span} (half-life "
                f"{rec.half_life_days:g} days). No fairshare curve: a Fair Tree account has no factor of its own.")
    text = (f"raw usage {rec.usage[0]:,.0f} -> {rec.usage[-1]:,.0f}, fairshare {f0:.6f} -> {f1:.6f} {span} "
            f"(half-life {rec.half_life_days:g} days).")
    target = RECOVERY_TARGET if f0 < RECOVERY_TARGET else min(1.0, 2 * f0) if f0 > 0 else None
    if target is not None and target > f0:
        day = day_reached(rec, target)
        text += (f" Back to {target:g} around {rec.date_at(day):%Y-%m-%d} (day {day:.1f})." if day is not None
                 else f" It stays below {target:g} {span}.")
    return text


def _step_lines(step: Step) -> list[tuple[int, str]]:
    """One association's lines as (indent, markup): a heading, then one line per quantity."""
    pad = 2 * step.depth
    head = f"[b]{escape(step.label)}[/b]"
    if step.row:
        shares = "parent" if step.transparent else f"{step.raw_shares} of {step.level_shares}"
        head += f"  [$text-muted]shares {escape(shares)} · usage {step.usage_raw:,.0f}[/]"
        if step.place_text:
            head += f"  [$accent]{escape(step.place_text)}[/]"
    lines = [(pad, head),
             (pad + 2, f"[$text-muted]NormShares  [/] {escape(step.shares_formula)}"),
             (pad + 2, f"[$text-muted]EffectvUsage[/] {escape(step.usage_formula)}")]
    if step.level_fs_formula:
        lines.append((pad + 2, f"[$text-muted]LevelFS     [/] {escape(step.level_fs_formula)}"))
    if step.note:
        lines.append((pad + 2, f"[$warning]{escape(step.note)}[/]"))
    return lines


def _pbs_step_lines(step: PbsStep) -> list[tuple[int, str]]:
    """One fairshare node's lines: a heading, then percentage, tree usage and usage/perc."""
    pad = 2 * step.depth
    head = f"[b]{escape(step.name)}[/b]"
    if step.sibling_shares is not None:
        head += f"  [$text-muted]shares {step.shares} of {step.sibling_shares} · usage {step.usage:,.0f}[/]"
    else:
        head += f"  [$text-muted]usage {step.usage:,.0f} (U_root)[/]"
    return [
        (pad, head),
        (pad + 2, f"[$text-muted]Percentage          [/] {escape(step.percentage_formula)}"),
        (pad + 2, f"[$text-muted]fairshare_tree_usage[/] {escape(step.tree_usage_formula)}"),
        (pad + 2, f"[$text-muted]usage/perc          [/] {escape(step.usage_per_perc_formula)}"),
    ]


class IndentedLines(Vertical):
    """Lines that wrap under their own indentation (one Static per line, reused between updates).

    A line no longer needed is hidden, not removed, and shown again when a later path is longer;
    :data:`SPARE_LINES` more wait hidden. A mount or a removal is done a message later: the lines
    kept were painted where they stood, then again where the new lines pushed them (a neighbour
    with another path sent the pane twice).
    """

    DEFAULT_CSS = """
    IndentedLines { height: auto; }
    IndentedLines > Static { height: auto; }
    """

    def set_lines(self, lines: list[tuple[int, str]]) -> None:
        """Show ``(indent, markup)`` lines; a wrapped line continues at its indent."""
        have = list(self.query_children(Static))
        new = []
        for i, (indent, markup) in enumerate(lines):
            widget = have[i] if i < len(have) else SteadyStatic()
            widget.update(markup)
            widget.styles.padding = (0, 0, 0, indent)
            widget.display = True
            if i >= len(have):
                new.append(widget)
        for widget in have[len(lines):]:
            widget.update("")  # shown again with its last text, it was painted blank first (its size was stale)
            widget.display = False
        if new:
            spare = [SteadyStatic() for _ in range(SPARE_LINES)]
            for widget in spare:
                widget.display = False
            self.mount(*new, *spare)


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
    BreakdownPane #bd-scroll { scrollbar-gutter: stable; }
    BreakdownPane #bd-summary { color: $foreground; padding-bottom: 1; }
    BreakdownPane #bd-steps { padding-bottom: 1; }
    BreakdownPane #bd-factor { color: $foreground; text-style: bold; padding-bottom: 1; }
    BreakdownPane #bd-rank { padding-bottom: 1; }
    BreakdownPane #bd-jobs { color: $foreground; padding-bottom: 1; }
    BreakdownPane #bd-rec-title { text-style: bold; color: $foreground; }
    BreakdownPane PlotextPlot { height: 12; max-width: 100; margin-bottom: 1; }
    BreakdownPane .bd-label { color: $text-muted; }
    BreakdownPane #bd-rec-text { color: $foreground; padding-bottom: 1; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="bd-scroll"):
            yield SteadyStatic("Select an association in the tree.", id="bd-title", classes="pane-title", markup=False)
            yield SteadyStatic("", id="bd-summary", markup=False)
            yield IndentedLines(id="bd-steps")
            yield SteadyStatic("", id="bd-factor", markup=False)
            yield IndentedLines(id="bd-rank")
            yield SteadyStatic("", id="bd-jobs")
            yield SteadyStatic("", id="bd-rec-title", markup=False)
            yield SteadyStatic("", id="bd-rec-text", markup=False)
            yield SteadyStatic("", id="bd-usage-label", classes="bd-label", markup=False)
            yield PlotextPlot(id="bd-usage-plot")
            yield SteadyStatic("", id="bd-fs-label", classes="bd-label", markup=False)
            yield PlotextPlot(id="bd-fs-plot")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._request = 0
        """Counts :meth:`show` calls: results of an older one are dropped."""
        self._worker: Worker | None = None
        """The worker of the current request (None: nothing to compute)."""
        self._label = ""
        self._explained = False
        self._held: Explanation | None = None
        """The explanation waiting (up to :data:`PENDING_S`) for its recovery curves."""
        self._pending: Timer | None = None
        self._hold = PaintHold(self)
        """Each draw is painted once, laid out: its lines that move are not sent where they stood first."""

    def show(self, standing: Standing, row: int | None) -> None:
        """Explain ``row`` of ``standing`` (None: ask for a selection).

        The explanation (a path walk, but it prints every row's sshare cells) and the recovery
        curves (16 engine runs) are computed by one exclusive thread worker; they arrive as
        :class:`ExplanationReady` then :class:`RecoveryReady`. Until then the pane says so.
        """
        self.drop_request()
        self._hold.start()
        title = self.query_one("#bd-title", Static)
        self.query_one("#bd-scroll", VerticalScroll).scroll_home(animate=False)  # a new row reads from its top
        self._worker, self._explained = None, False
        if standing.algorithm == "pbs":
            self._show_pbs(standing, row)
            return
        if standing.fairshare is None or standing.snapshot.tree is None:
            title.update("No Slurm association tree in this snapshot: nothing to break down.")
        elif row is None:
            title.update("Select an association in the tree.")
        elif standing.partial:  # PrivateData: the levels above cannot be rebuilt
            head, lines = private_breakdown(standing, row)
            title.update(head)
            self._clear_explanation()
            self.query_one("#bd-summary", Static).update(escape("\n".join(lines)))
            self._show_recovery(None)
            return
        else:
            self._label = standing.snapshot.tree.label(row)
            self._worker = self._explain(standing, row, self._request)
            self._pending = self.set_timer(PENDING_S, partial(self._say_pending, self._request))
            # The last row's lines stay until the new ones arrive: a row's neighbour shares most
            # of them (its path, the labels), and what is on screen is not sent again
            # (PaintedChops); cleared first, every line was sent twice.
            return
        self._clear_explanation()
        self._show_recovery(None)

    def drop_request(self) -> None:
        """The selection moved on: what is still computing is not drawn (the next show asks again)."""
        self._request += 1
        self._held = None
        if self._pending is not None:
            self._pending.stop()
            self._pending = None
        self.workers.cancel_group(self, "breakdown")

    def _show_pbs(self, standing: Standing, row: int | None) -> None:
        """``pbsfs -g`` for the selected entity, with every level's formula and numbers."""
        widgets = [self.query_one(f"#bd-{k}", Static) for k in ("title", "summary", "factor", "jobs")]
        title, summary, factor, jobs = widgets
        steps = self.query_one("#bd-steps", IndentedLines)
        self._show_recovery(None)
        if row is None:
            title.update("Select an entity in the tree.")
            for widget in widgets[1:]:
                widget.update("")
            steps.set_lines([])
            return
        ex: PbsExplanation = explain_pbs(standing, row)
        title.update(f"Why {ex.name} has its fairshare · PBS Professional (as pbsfs -g {ex.name})")
        summary.update(ex.summary)
        steps.set_lines([line for s in ex.steps for line in _pbs_step_lines(s)])
        factor.update(f"fairshare_factor: {ex.factor_formula}")
        jobs.update("[b]pbsfs -g[/b]\n" + escape(ex.pbsfs_text.rstrip("\n")) + "\n\n[$text-muted]"
                    "No jobs or recovery curve: a PBS snapshot holds the fairshare tree and usage only "
                    "(usage decays by fairshare_decay_factor every fairshare_decay_time).[/]")

    def _clear_explanation(self) -> None:
        for widget_id in ("#bd-summary", "#bd-factor", "#bd-jobs"):
            self.query_one(widget_id, Static).update("")
        for lines_id in ("#bd-steps", "#bd-rank"):
            self.query_one(lines_id, IndentedLines).set_lines([])

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

    def _say_pending(self, request: int) -> None:
        """The request is slow: show what is in, and say what is still computing."""
        if request != self._request or self._pending is None:
            return  # stopped after it fired (a timer's call is a message: stop() does not take it back)
        self._pending = None
        self._hold.start()
        if self._held is not None:
            self._show_explanation(self._held)
        elif not self._explained:
            self.query_one("#bd-title", Static).update(f"Why {self._label} has its fairshare: computing...")

    def on_explanation_ready(self, message: ExplanationReady) -> None:
        if message.request_id != self._request:
            return  # the selection moved on since the worker started
        if self._pending is not None:
            self._held = message.explanation  # drawn with its curves, unless they are slow
        else:
            self._show_explanation(message.explanation)

    def _show_explanation(self, ex: Explanation, curves_follow: bool = False) -> None:
        """Draw ``ex``; the curves' place says "computing..." unless ``curves_follow`` (they are
        drawn next, in the same frame: blanked in between, each line changed height twice and
        the screen was laid out again)."""
        self._held = None
        self._explained = True
        self._hold.start()
        kind = "user" if ex.is_user else "account"
        self.query_one("#bd-title", Static).update(
            f"Why {ex.label} ({kind}) has its fairshare · {ex.algorithm.replace('_', ' ')}")
        self.query_one("#bd-summary", Static).update(ex.summary)
        self.query_one("#bd-steps", IndentedLines).set_lines([line for s in ex.steps for line in _step_lines(s)])
        self.query_one("#bd-factor", Static).update(f"FairShare: {ex.factor_formula}")
        rank = self.query_one("#bd-rank", IndentedLines)
        if ex.rank_lines:
            rank.set_lines([(0, "[b]How the places make the rank[/b] [$text-muted](Fair Tree ranks users depth-first: "
                                "each account's whole subtree before its next sibling, N for the first user reached, "
                                "N is best)[/]"),
                            *((2, escape(line)) for line in ex.rank_lines)])
        else:
            rank.set_lines([])
        self.query_one("#bd-jobs", Static).update(_jobs_markup(ex))
        if not curves_follow:
            self._show_recovery(None, pending=True)  # the last row's curves go with its explanation

    def on_recovery_ready(self, message: RecoveryReady) -> None:
        if message.request_id == self._request:
            self._settle(curves_follow=True)
            self._show_recovery(message.recovery)

    def _settle(self, curves_follow: bool = False) -> None:
        """No more waiting: the held explanation is drawn now."""
        if self._pending is not None:
            self._pending.stop()
            self._pending = None
        if self._held is not None:
            self._show_explanation(self._held, curves_follow)

    def worker_failed(self, worker: Worker, text: str) -> None:
        if worker is not self._worker:
            return  # an older request's: the pane shows a newer one
        self._settle()
        if not self._explained:
            self.query_one("#bd-title", Static).update(
                f"Why {self._label} has its fairshare: could not compute: {text}")
            self._clear_explanation()  # the last row's, kept while this one computed
        self._show_recovery(None)
        self.query_one("#bd-rec-title", Static).update(f"If you run nothing more: could not compute: {text}")

    def _show_recovery(self, rec: Recovery | None, pending: bool = False) -> None:
        """The curves, dated: your usage, and your fairshare if you have one, if you run nothing more."""
        self._hold.start()
        title = self.query_one("#bd-rec-title", Static)
        plots = (self.query_one("#bd-usage-plot", PlotextPlot), self.query_one("#bd-fs-plot", PlotextPlot))
        labels = (self.query_one("#bd-usage-label", Static), self.query_one("#bd-fs-label", Static))
        text = self.query_one("#bd-rec-text", Static)
        if rec is None:
            title.update("If you run nothing more: computing..." if pending else "")
            for widget in (*labels, text):
                widget.update("")
            for plot in plots:
                if pending:  # hidden in place: the pane keeps its height, so its scrollbar is not redrawn twice
                    plot.visible = False
                else:
                    plot.display = False
            return
        title.update(f"If you run nothing more and everyone else's usage holds steady "
                     f"(next {rec.days[-1]:g} days):")
        text.update(_recovery_text(rec))
        labels[0].update("raw usage (billing TRES-seconds; Slurm decays it by 1 - 0.693/half-life per second)")
        dates = [rec.date_at(d).strftime(PLOT_DATE) for d in rec.days] if rec.start is not None else None
        self._plot(plots[0], dates, rec.days, rec.usage.tolist())
        if rec.has_fairshare:
            labels[1].update("fairshare (the engine recomputed at each date)")
            self._plot(plots[1], dates, rec.days, rec.fairshare.tolist())
        else:
            labels[1].update("")
            plots[1].display = False

    @staticmethod
    def _plot(widget: PlotextPlot, dates: list[str] | None, days: np.ndarray, values: list[float]) -> None:
        widget.display = widget.visible = True
        plt = widget.plt
        plt.clear_data()
        plt.clear_figure()
        if dates is not None:
            plt.date_form(PLOT_DATE_FORM)
            plt.plot(dates, values, marker="braille")
        else:
            plt.plot(days.tolist(), values, marker="braille")
            plt.xlabel("days from now")
        widget.refresh()
