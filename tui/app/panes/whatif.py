"""The what-if pane: edit a job, see what it costs and what it does to a fairshare now.

Form fields are validated by :func:`tui.analysis.whatif.parse_job_form` on every change; a valid job is
billed (:func:`tui.analysis.whatif.job_cost` through :meth:`JobRequest.cost`) and charged at once to the
association (:func:`tui.analysis.whatif.whatif`), which reruns the engine on a copy of the tree.
The projection over time has its own labelled area, left empty until the projection engine
exists.
"""

from __future__ import annotations

import math

from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.markup import escape
from textual.widgets import Input, Label, Select, Static

from tui.app.panes.base import PaneFrame
from tui.model import Partition
from tui.analysis.standing import Standing
from tui.analysis.job_form import parse_job_form
from tui.analysis.whatif import WhatIf, whatif

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

PROJECTION_TEXT = ("Projection over time: not available yet. This area will show fairshare, rank, "
                   "priority and balance over the coming days once the projection engine exists.")


def _fs(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else ("inf" if math.isinf(x) else f"{x:f}")


def result_markup(w: WhatIf, algorithm: str) -> str:
    """Cost, raw usage added up the chain, and the fairshare before and after (Textual markup)."""
    c = w.cost
    mode = {"sum": "sum", "max_tres": "MAX_TRES", "max_tres_gres": "MAX_TRES_GRES"}[c.mode]
    lines = [
        f"[b]Cost[/b]  {c.billing_per_s:,.2f} billing units/s ({mode}) × {c.walltime_s:,} s = "
        f"{c.total:,.0f} billing-seconds = [b]{c.total_hours:,.1f} SU[/b] (billing-hours)",
        "",
        "[b]Raw usage added[/b] (the same to the association and every ancestor)",
    ]
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
    WhatIfPane #wi-projection { border: round $panel-lighten-2; color: $text-muted;
                                padding: 0 1; height: auto; min-height: 5; }
    """

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._view: Standing | None = None
        self._row: int | None = None
        self._partitions: dict[str, Partition] = {}

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
        self._recompute()

    @on(Select.Changed, "#wi-gpu_type")
    @on(Input.Changed)
    def _changed(self) -> None:
        self._recompute()

    def _recompute(self) -> None:
        if self._view is None:
            return
        fields = {key: self._value(f"wi-{key}") for key, _, _ in FIELDS}
        fields["partition"] = self._value("wi-partition")
        fields["gpu_type"] = self._value("wi-gpu_type")
        request, errors = parse_job_form(fields, self._partitions)
        for key in ("partition", *(k for k, _, _ in FIELDS)):
            self.query_one(f"#wi-error-{key}", Static).update(errors.get(key, ""))
            if key != "partition":
                self.query_one(f"#wi-{key}", Input).set_class(key in errors, "invalid")
        result = self.query_one("#wi-result", Static)
        standing, target = self._view, self._target()
        tree = standing.snapshot.tree
        who = tree.label(target) if tree is not None and target is not None else "a user"
        self.query_one("#wi-title", Static).update(
            f"What if {who} ran this job? (charged to the user selected in the tree, else to you; "
            "Tab moves between fields)")
        if request is None:
            result.update("[$error]Fix the fields above to see the cost.[/]")
            return
        cost = request.cost(self._partitions, standing.snapshot.settings.flags)
        if target is None or standing.fairshare is None:
            result.update(f"[b]Cost[/b]  {cost.billing_per_s:,.2f} billing units/s × {cost.walltime_s:,} s = "
                          f"[b]{cost.total_hours:,.1f} SU[/b]\n\n"
                          "Select a user association in the tree to see the effect on its fairshare.")
            return
        result.update(result_markup(whatif(standing, target, cost), standing.algorithm))
