"""The what-if pane: edit a job, see what it costs and what it does to a fairshare now.

Form fields are validated by :func:`tui.analysis.job_form.parse_job_form` on every change, on the UI
thread (cheap); a valid job is billed (:meth:`JobRequest.cost`) and charged to the association
(:func:`tui.analysis.whatif.whatif`, which reruns the engine on a copy of the tree) by an exclusive
thread worker once the form has rested :data:`DEBOUNCE_S` seconds; the result comes back as a
:class:`~tui.app.messages.WhatIfReady` and is dropped if the form changed meanwhile.
The projection over time has its own labelled area, left empty until the projection engine
exists.
"""

from __future__ import annotations

import math

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Input, Label, Select, Static
from textual.worker import Worker, WorkerState, get_current_worker

from tui.app.messages import WhatIfReady
from tui.app.panes.base import PaneFrame
from tui.engine.billing import JobCost
from tui.model import Partition
from tui.analysis.standing import Standing
from tui.analysis.job_form import parse_job_form
from tui.analysis.whatif import WhatIf, whatif

#: Seconds the form must rest after a change before the what-if worker runs the engine.
DEBOUNCE_S = 0.25
#: Stand-in when a snapshot has no partitions: billed by CPU count (spec 4.4).
NO_PARTITION = Partition("default", description="no partition data: billed by CPU count")

#: (field, label, default) of the text inputs; amounts are per node, as sbatch takes them.
FIELDS = (
    ("nodes", "Nodes", "1"),
    ("cpus", "CPUs/node", "4"),
    ("gpus", "GPUs/node", "0"),
    ("mem_gb", "Mem GB/node", "16"),
    ("walltime", "Walltime", "24:00:00"),
)


def pbs_whatif_text(usage_res: str) -> str:
    """What the what-if pane says on a PBS Professional snapshot."""
    return (f"PBS Professional snapshot: no partitions, billing weights or jobs, so no what-if. "
            f"PBS charges usage in fairshare_usage_res units (here {usage_res}) while jobs run, and this "
            "snapshot holds only the fairshare tree and each entity's usage. The Breakdown tab (2) "
            "shows how usage sets an entity's fairshare_tree_usage and factor.")


#: What the pane does not draw yet, and where the working projection is (no placeholder promise).
PROJECTION_TEXT = ("Above: the job charged at once, nothing decaying. Its effect over the coming days "
                   "(usage, fairshare, rank, pending jobs' priority, recovery) is computed by "
                   "'fairtop whatif SCENARIO.toml' (see docs/whatif.md); this pane does not plot it yet.")


def _fs(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else ("inf" if math.isinf(x) else f"{x:f}")


def result_markup(w: WhatIf, algorithm: str, usage_unknown: str = "") -> str:
    """Cost, raw usage added up the chain, and the fairshare before and after (Textual markup).

    ``usage_unknown``: why the association's usage is unknown (then only the cost is real)."""
    c = w.cost
    mode = {"sum": "sum", "max_tres": "MAX_TRES", "max_tres_gres": "MAX_TRES_GRES"}[c.mode]
    lines = [
        f"[b]Cost[/b]  {c.billing_per_s:,.2f} billing units/s ({mode}) × {c.walltime_s:,} s = "
        f"{c.total:,.0f} billing-seconds = [b]{c.total_hours:,.1f} SU[/b] (billing-hours)",
        "",
    ]
    if usage_unknown:
        return "\n".join([*lines, f"[b]Fairshare of {escape(w.label)}[/b] before and after: unknown, "
                                   f"{escape(usage_unknown)} (--slurmrestd-sshare, --slurm or --from DIR have it)"])
    lines.append("[b]Raw usage added[/b] (the same to the association and every ancestor)")
    for inc in w.increments:
        lines.append(f"  {escape(inc.label):<40} {inc.before:>16,.0f} → {inc.after:>16,.0f}")
    lines += ["", f"[b]Fairshare of {escape(w.label)} now → right after the job[/b]"]
    lines.append(f"  FairShare     {_fs(w.fairshare_before)} → {_fs(w.fairshare_after)}")
    lines.append(f"  EffectvUsage  {_fs(w.effective_usage_before)} → {_fs(w.effective_usage_after)}")
    if algorithm == "fair_tree":
        lines.append(f"  LevelFS       {_fs(w.level_fs_before)} → {_fs(w.level_fs_after)}")
        if w.rank_before is not None:
            lines.append(f"  Rank          {w.rank_before} → {w.rank_after} of {w.users}")
    if w.priority_fairshare_delta:
        lines.append(f"  Job priority  FAIRSHARE part {w.priority_fairshare_delta:+,.0f}")
    if w.fairshare_before == w.fairshare_after:
        lines.append("  [$text-muted]FairShare moves only when the job changes this association's place "
                     "in the ranking (Breakdown, 2, shows what decides it).[/]")
    return "\n".join(lines)


class WhatIfPane(PaneFrame):
    """A job editor with the job's cost and its immediate effect on a fairshare."""

    DEFAULT_CSS = """
    WhatIfPane #wi-form { height: auto; }
    WhatIfPane .wi-field { width: 1fr; height: auto; min-width: 12; }
    WhatIfPane .wi-field Label { color: $text-muted; }
    WhatIfPane .wi-field Input.invalid { border: tall $error; }
    WhatIfPane .wi-error { color: $error; height: auto; }
    WhatIfPane #wi-part-row { height: auto; }
    WhatIfPane #wi-part-row Select { width: 1fr; }
    WhatIfPane #wi-result { padding: 1 0; color: $foreground; }
    WhatIfPane #wi-result.pending { text-opacity: 60%; }
    WhatIfPane #wi-projection { border: round $panel-lighten-2; color: $text-muted;
                                padding: 0 1; height: auto; min-height: 5; }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._view: Standing | None = None
        self._row: int | None = None
        self._partitions: dict[str, Partition] = {}
        self._request = 0
        """Counts form states (and selections): a result for an older one is dropped."""
        self._worker: Worker | None = None
        """The worker charging the current form (None: nothing to compute)."""
        self._texts: dict[str, str] = {}
        """The text last put in each Static by :meth:`_update`."""
        self._result_shown = False
        """Whether ``#wi-result`` shows a what-if result (kept, dimmed, while the next computes)."""
        self._form: tuple | None = None
        """The fields and target of the current request: an unchanged form is not redone."""
        self._form_standing: Standing | None = None

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static("What if I run this job?", id="wi-title", classes="pane-title", markup=False)
            with Horizontal(id="wi-part-row"):
                with Vertical(classes="wi-field"):
                    yield Label("Partition")
                    yield Select[str]([], id="wi-partition", prompt="partition")
                    yield Static("", id="wi-error-partition", classes="wi-error", markup=False)
                with Vertical(classes="wi-field"):
                    yield Label("GPU type")
                    yield Select[str]([], id="wi-gpu_type", prompt="any")
            with Horizontal(id="wi-form"):
                for key, label, default in FIELDS:
                    with Vertical(classes="wi-field"):
                        yield Label(label)
                        yield Input(default, id=f"wi-{key}")
                        yield Static("", id=f"wi-error-{key}", classes="wi-error", markup=False)
            yield Static("", id="wi-result")
            yield Static(PROJECTION_TEXT, id="wi-projection", markup=False)

    def show(self, standing: Standing, row: int | None) -> None:
        """Charge the edited job to ``row`` (a user row; else the viewer's own association)."""
        is_pbs = standing.algorithm == "pbs"
        for widget_id in ("#wi-part-row", "#wi-form", "#wi-projection"):
            self.query_one(widget_id).display = not is_pbs
        if is_pbs:
            self._view, self._row = None, row  # nothing to recompute on a form change
            self.query_one("#wi-title", Static).update("What if I run this job?")
            pbs = standing.snapshot.pbs
            self.query_one("#wi-result", Static).update(escape(pbs_whatif_text(pbs.usage_res if pbs else "cput")))
            return
        parts = standing.snapshot.partitions or (NO_PARTITION,)
        # A refresh with the same partitions keeps the user's choice; new ones reset the form.
        first = [p.name for p in parts] != list(self._partitions)
        self._view, self._row = standing, row
        self._partitions = {p.name: p for p in parts}
        if first:
            select = self.query_one("#wi-partition", Select)
            select.set_options((f"{p.name}  {p.description}".strip(), p.name) for p in parts)
            select.value = parts[0].name
            self._gpu_types()
        self._recompute()

    def _target(self) -> int | None:
        """The association the job is charged to: the selected user row, else the viewer's."""
        standing = self._view
        tree = standing.snapshot.tree if standing else None
        if tree is None:
            return None
        if self._row is not None and tree.is_user[self._row]:
            return self._row
        return int(standing.my_rows[0]) if standing is not None and len(standing.my_rows) else None

    def _gpu_types(self) -> None:
        """GPU types the chosen partition has (``gres/gpu:<type>`` TRES); preselect a sole one."""
        part = self._partitions.get(self._value("wi-partition"))
        types = sorted(k.split(":", 1)[1] for k in (part.tres_totals if part else {}) if k.startswith("gres/gpu:"))
        select = self.query_one("#wi-gpu_type", Select)
        select.set_options((t, t) for t in types)
        if len(types) == 1:
            select.value = types[0]

    def _value(self, widget_id: str) -> str:
        widget = self.query_one(f"#{widget_id}")
        if isinstance(widget, Select):
            return "" if widget.is_blank() else str(widget.value)
        return widget.value  # type: ignore[attr-defined]

    @on(Select.Changed, "#wi-partition")
    def _partition_changed(self) -> None:
        self._gpu_types()
        self._recompute(DEBOUNCE_S)

    @on(Select.Changed, "#wi-gpu_type")
    @on(Input.Changed)
    def _changed(self) -> None:
        self._recompute(DEBOUNCE_S)

    def _recompute(self, delay: float = 0.0) -> None:
        """Validate the form at once; charge a valid job in the what-if worker ``delay`` s later.

        Every call makes a new request: a result for an older one (the form or the selection
        changed since) is dropped, and a worker still waiting out its delay is cancelled.
        """
        if self._view is None:
            return
        fields = {key: self._value(f"wi-{key}") for key, _, _ in FIELDS}
        fields["partition"] = self._value("wi-partition")
        fields["gpu_type"] = self._value("wi-gpu_type")
        standing, target = self._view, self._target()
        form = (tuple(fields.items()), target)
        failed = self._worker is not None and self._worker.state is WorkerState.ERROR
        if form == self._form and standing is self._form_standing and not failed:
            return  # e.g. the partition Select's Changed after show() set it: already requested
        self._form, self._form_standing = form, standing
        self._request += 1
        self._worker = None
        self.workers.cancel_group(self, "whatif")
        request, errors = parse_job_form(fields, self._partitions)
        for key in ("partition", *(k for k, _, _ in FIELDS)):
            self._update(f"wi-error-{key}", errors.get(key, ""))
            if key != "partition":
                self.query_one(f"#wi-{key}", Input).set_class(key in errors, "invalid")
        tree = standing.snapshot.tree
        who = tree.label(target) if tree is not None and target is not None else "a user"
        self._update("wi-title", f"What if {who} ran this job? (charged to the user selected in the tree, "
                                 "else to you; Tab moves between fields)")
        if request is None:
            self._show_result("[$error]Fix the fields above to see the cost.[/]")
            return
        cost = request.cost(self._partitions, standing.snapshot.settings.flags)
        if target is None or standing.fairshare is None:
            self._show_result(f"[b]Cost[/b]  {cost.billing_per_s:,.2f} billing units/s × {cost.walltime_s:,} s = "
                              f"[b]{cost.total_hours:,.1f} SU[/b]\n\n"
                              "Select a user association in the tree to see the effect on its fairshare.")
            return
        # The last result stays on screen, dimmed, until this one arrives (no flicker per key).
        if self._result_shown:
            self.query_one("#wi-result", Static).add_class("pending")
        else:
            self._show_result(f"[b]Cost[/b]  {cost.total_hours:,.1f} SU · computing the effect on the fairshare...")
        self._worker = self._charge(standing, target, cost, self._request, delay)

    # An explicit description: by default @work repr()s the arguments, the whole Standing
    # (0.7 s at 100k associations, on the UI thread, per key).
    @work(thread=True, exclusive=True, group="whatif", name="what-if", exit_on_error=False,
          description="charge the what-if job and rerun the engine")
    def _charge(self, standing: Standing, target: int, cost: JobCost, request_id: int, delay: float) -> None:
        """Off the UI thread: wait ``delay`` s unless cancelled (a newer key), then run the engine."""
        worker = get_current_worker()
        if delay and worker.cancelled_event.wait(delay):
            return
        result = whatif(standing, target, cost)
        if not worker.is_cancelled:
            self.post_message(WhatIfReady(request_id, result))

    def on_what_if_ready(self, message: WhatIfReady) -> None:
        if message.request_id != self._request or self._view is None:
            return  # the form or the selection changed since the worker started
        why = self._view.usage_unknown(message.result.row)
        self._show_result(result_markup(message.result, self._view.algorithm, why), is_result=True)

    def worker_failed(self, worker: Worker, text: str) -> None:
        if worker is not self._worker:
            return  # an older request's: the form has changed since
        self._show_result(f"[$error]Could not compute the effect of this job: {escape(text)}[/]")

    def _update(self, widget_id: str, text: str) -> None:
        """Update a Static only if its text changes: each update relayouts the screen, per key."""
        if self._texts.get(widget_id) != text:
            self._texts[widget_id] = text
            self.query_one(f"#{widget_id}", Static).update(text)

    def _show_result(self, markup: str, is_result: bool = False) -> None:
        result = self.query_one("#wi-result", Static)
        result.remove_class("pending")
        result.update(markup)
        self._result_shown = is_result
