"""The what-if pane, a planner: a campaign of jobs projected over time, without and with it.

The editor holds the scenario's horizon, step and target fairshare and one :class:`JobEditor` per
job line (add, duplicate, remove). Every change is validated on the UI thread by
:func:`tui.analysis.planner.form.parse_plan` (cheap; each message beside its field); a valid scenario
is projected twice (:func:`tui.analysis.planner.compare.project_plan`, as planned and without its
jobs) by an exclusive thread worker once the form has rested :data:`DEBOUNCE_S` seconds. The
result comes back as a :class:`~tui.app.messages.PlanReady` and is dropped if the form changed
meanwhile (a projection a newer key made stale stops at its next step); it is drawn as dated
plots (textual-plotext), a table and sentences, every change as ``before → after``. Scenarios
are saved (tomli-w) and loaded (:func:`load_scenario`) as TOML.

Keys: Tab, Shift+Tab and Esc are priority bindings here, handled by the app in the order the keys
arrive, so characters typed right after them go to the field they were typed for (a non-priority
Tab is handled only after the key has bubbled up, by which time the next keys sit in the old
field's queue). Esc leaves a field; with no field focused the app's keys (1-4, ?, :, q) work.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from rich.table import Table
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.css.query import NoMatches
from textual.geometry import Size
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static
from textual.worker import Worker, WorkerState, get_current_worker

from tui.analysis.planner import (
    JOB_FIELDS,
    NO_EXTRAS,
    PLAN_FIELDS,
    Baselines,
    Cancelled,
    JobExtras,
    PlanProjection,
    Scenario,
    fields_of_job,
    load_scenario,
    metrics,
    parse_plan,
    plan_fields_of,
    project_plan,
    save_scenario,
    sentences,
    table_rows,
    unknown_usage_lines,
)
from tui.analysis.private_view import private_whatif
from tui.analysis.standing import Standing
from tui.app.messages import PlanReady
from tui.app.panes.base import PaneFrame
from tui.app.widgets.series_plot import Figure, SeriesPlot
from tui.model import Partition
from tui.sources.errors import InputError

#: Seconds the form must rest after a change before the worker projects it. Short: a projection
#: at 20k associations takes ~0.04 s of CPU, and one started before a newer key is stopped.
DEBOUNCE_S = 0.1
#: Stand-in when a snapshot has no partitions: billed by CPU count (spec 4.4).
NO_PARTITION = Partition("default", description="no partition data: billed by CPU count")
#: Source name in the projection's error messages (``plan:jobs[0].user``).
SOURCE = "plan"
#: Plots drawn before any result, in this order (other metrics get a plot when they appear).
PLOTS = ("raw_usage", "fairshare", "ahead", "priority_fairshare")


def pbs_whatif_text(usage_res: str) -> str:
    """What the what-if pane says on a PBS Professional snapshot."""
    return (f"PBS Professional snapshot: no partitions, billing weights or jobs, so no what-if. "
            f"PBS charges usage in fairshare_usage_res units (here {usage_res}) while jobs run, and this "
            "snapshot holds only the fairshare tree and each entity's usage. The Breakdown tab (2) "
            "shows how usage sets an entity's fairshare_tree_usage and factor.")


class FieldInput(Input):
    """A text field of the planner: its own keys handled in the order typed; Esc leaves it."""

    BINDINGS = [Binding("escape", "leave", "Leave the field", show=False, priority=True)]

    async def _on_key(self, event: events.Key) -> None:
        # The field's bindings (End, Backspace, arrows...) run here, in turn with the characters:
        # left to the app they would run only once the key bubbled up, after the characters
        # queued behind them ("End 8" typed fast would insert the 8 first).
        bindings = self._bindings.key_to_bindings.get(event.key, ())
        if bindings and not bindings[0].priority:
            event.stop()
            event.prevent_default()
            await self.run_action(bindings[0].action)
            return
        await super()._on_key(event)

    def _watch_value(self, value: str) -> None:
        # Input sets its virtual size to (content width, 1) at every change, and each layout sets
        # it back: a layout of the whole screen per key (20-40 ms of the UI thread at 20k, beside
        # the projection). Set first without a refresh, the same value then changes nothing.
        self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)

    def action_leave(self) -> None:
        pane = next((a for a in self.ancestors if isinstance(a, WhatIfPane)), None)
        if pane is not None:  # at once (Widget.focus waits a turn): the next key goes to the pane
            self.screen.set_focus(pane.query_one("#wi-scroll"))


def _field(key: str, label: str, widget: Input | Select, classes: str = "wi-field") -> Vertical:
    return Vertical(Label(label), widget, Static("", classes=f"wi-error e-{key}", markup=False),
                    classes=classes)


class JobEditor(Vertical):
    """One job line: shape, campaign (count, start, every, repeat) and whom it charges."""

    def __init__(self, number: int, partitions: list[Partition], fields: dict[str, str],
                 extras: JobExtras = NO_EXTRAS, **kwargs) -> None:  # noqa: ANN003 - Widget's
        super().__init__(classes="wi-job", **kwargs)
        self.extras = extras
        """What the line carries from a file and has no field for (a TRES string, a billing)."""
        self._number = number
        self._partitions = partitions
        self._fields = fields
        self._found: dict[str, Widget] = {}
        """Widgets by selector: a query walks the DOM (ms per field at 100k rows' load), per key."""

    def one(self, selector: str) -> Widget:
        """The widget ``selector`` names in this line, found once."""
        widget = self._found.get(selector)
        if widget is None:
            widget = self._found[selector] = self.query_one(selector)
        return widget

    def compose(self) -> ComposeResult:
        names = [p.name for p in self._partitions]
        part = self._fields.get("partition") or (names[0] if names else "")
        options = [(p.name, p.name) for p in self._partitions]
        keys = [k for k, _, _ in JOB_FIELDS]
        labels = {k: label for k, label, _ in JOB_FIELDS}
        with Horizontal(classes="wi-row"):
            yield Static(f"Job {self._number}", classes="wi-job-title", markup=False)
            select = Select[str](options, value=part if part in names else Select.NULL, prompt="partition",
                                 classes="f-partition")
            yield _field("partition", "Partition", select, "wi-field wi-wide")
            gpus = self._gpu_options(part)
            gpu = self._fields.get("gpu_type", "")
            if not gpu and len(gpus) == 1:
                gpu = gpus[0][1]
            yield _field("gpu_type", "GPU type", Select[str](
                gpus, value=gpu if any(v == gpu for _, v in gpus) else Select.NULL, prompt="any",
                classes="f-gpu_type"))
            for key in keys[:5]:
                yield _field(key, labels[key], FieldInput(self._fields[key], classes=f"f-{key}"))
        with Horizontal(classes="wi-row"):
            for key in keys[5:]:
                yield _field(key, labels[key], FieldInput(self._fields[key], classes=f"f-{key}",
                                                          placeholder=self._placeholder(key)))
            with Vertical(classes="wi-buttons"):
                yield Button("Duplicate", classes="wi-dup", compact=True)
                yield Button("Remove", classes="wi-remove", compact=True)
        extra = []
        if self.extras.tres is not None:
            extra.append("TRES " + ",".join(f"{k}={v:g}" for k, v in self.extras.tres.items()))
        if self.extras.billing is not None:
            extra.append(f"billing {self.extras.billing:g}/s")
        if extra:
            yield Static("From the file, kept as it is (overrides the shape above for billing): "
                         + "; ".join(extra), classes="wi-extras", markup=False)

    @staticmethod
    def _placeholder(key: str) -> str:
        return {"every": "once", "user": "selected", "account": "selected"}.get(key, "")

    def _gpu_options(self, partition: str) -> list[tuple[str, str]]:
        part = next((p for p in self._partitions if p.name == partition), None)
        types = sorted(k.split(":", 1)[1] for k in (part.tres_totals if part else {}) if k.startswith("gres/gpu:"))
        return [(t, t) for t in types]

    def set_number(self, number: int) -> None:
        self._number = number
        self.query_one(".wi-job-title", Static).update(f"Job {number}")

    def set_partitions(self, partitions: list[Partition]) -> None:
        """New partition choices (a refresh that changed them): the first is chosen."""
        self._partitions = partitions
        select = self.query_one(".f-partition", Select)
        select.set_options((p.name, p.name) for p in partitions)
        if partitions:
            select.value = partitions[0].name
        self.partition_changed()

    def partition_changed(self) -> None:
        """The GPU types of the chosen partition (a sole one preselected)."""
        options = self._gpu_options(self.value("partition"))
        select = self.query_one(".f-gpu_type", Select)
        select.set_options(options)
        if len(options) == 1:
            select.value = options[0][1]

    @property
    def composed(self) -> bool:
        """Whether the fields exist yet (a line being mounted has none)."""
        try:
            return all(self.one(f".{name}") is not None for name in ("f-partition", "f-count", "f-account"))
        except NoMatches:
            return False

    def input(self, key: str) -> Input:
        widget = self.one(f".f-{key}")
        assert isinstance(widget, Input)
        return widget

    def value(self, key: str) -> str:
        widget = self.one(f".f-{key}")
        if isinstance(widget, Select):
            return "" if widget.is_blank() else str(widget.value)
        assert isinstance(widget, Input)
        return widget.value

    def values(self) -> dict[str, str]:
        out = {k: self.value(k) for k, _, _ in JOB_FIELDS}
        out["partition"] = self.value("partition")
        out["gpu_type"] = self.value("gpu_type")
        return out


class WhatIfPane(PaneFrame):
    """The planner: a campaign of jobs, its cost, and its effect over time (before → after)."""

    # Priority: the app handles these before passing on the next key (see the module docstring).
    BINDINGS = [Binding("tab", "app.focus_next", "Next field", show=False, priority=True),
                Binding("shift+tab", "app.focus_previous", "Previous field", show=False, priority=True)]

    DEFAULT_CSS = """
    WhatIfPane .wi-row, WhatIfPane #wi-plan, WhatIfPane #wi-jobs, WhatIfPane #wi-plots { height: auto; }
    WhatIfPane .wi-field { width: 1fr; height: auto; min-width: 9; }
    WhatIfPane .wi-wide { width: 2fr; min-width: 14; }
    WhatIfPane .wi-field Label { color: $text-muted; }
    WhatIfPane .wi-field Input.invalid { border: tall $error; }
    WhatIfPane .wi-error { color: $error; height: auto; }
    WhatIfPane .wi-job { height: auto; border-top: solid $panel-lighten-2; }
    WhatIfPane .wi-job-title { width: 7; padding-top: 2; text-style: bold; }
    WhatIfPane .wi-buttons { width: 12; height: auto; padding-top: 1; }
    WhatIfPane .wi-extras { color: $text-muted; }
    WhatIfPane #wi-add { margin: 1 0 0 0; }
    WhatIfPane #wi-file-msg { height: auto; color: $text-muted; }
    WhatIfPane #wi-file-msg.error { color: $error; }
    WhatIfPane #wi-path { width: 3fr; }
    WhatIfPane #wi-plan Button { margin: 2 0 0 1; }
    WhatIfPane #wi-result { padding: 1 0; color: $foreground; }
    WhatIfPane .pending { text-opacity: 60%; }
    WhatIfPane SeriesPlot { height: 12; min-height: 8; }
    WhatIfPane #wi-table { height: auto; }
    /* Narrow terminals: the fields in a grid of four per line instead of one squeezed line. */
    WhatIfPane.-narrow .wi-row, WhatIfPane.-narrow #wi-plan {
        layout: grid; grid-size: 4; grid-rows: auto; grid-gutter: 0 1; height: auto;
    }
    WhatIfPane.-narrow .wi-field, WhatIfPane.-narrow .wi-wide, WhatIfPane.-narrow #wi-path { width: 1fr; }
    WhatIfPane.-narrow .wi-job-title, WhatIfPane.-narrow .wi-buttons { width: 1fr; padding-top: 1; }
    WhatIfPane.-narrow #wi-plan Button { margin: 0; width: 1fr; height: 1; }
    """

    NARROW = 120
    """Below this many columns the fields go four to a line."""

    def __init__(self, *args, **kwargs) -> None:  # noqa: ANN002, ANN003 - Widget's
        super().__init__(*args, **kwargs)
        self._view: Standing | None = None
        self._row: int | None = None
        self._partitions: dict[str, Partition] = {}
        self._priced = True
        """False when the partitions are the stand-in (the snapshot has none)."""
        self._base: Scenario | None = None
        """A loaded scenario: its keys without a field here (shares, settings...) are kept."""
        self._request = 0
        """Counts form states (and selections): a result for an older one is dropped."""
        self._worker: Worker | None = None
        """The worker projecting the current form (None: nothing to compute)."""
        self._texts: dict[str, str] = {}
        """The text last put in each Static by :meth:`_update`."""
        self._form: tuple | None = None
        """The fields and target of the current request: an unchanged form is not redone."""
        self._form_standing: Standing | None = None
        self._result: PlanProjection | None = None
        """The projection on screen (kept, dimmed, while the next computes)."""
        self._job_ids = 0
        self._found: dict[str, Widget] = {}
        """Widgets by selector, found once (see :meth:`JobEditor.one`)."""
        self._baselines = Baselines()
        """Projections without the campaign, reused while only the jobs' shapes change."""
        self._table: Table | None = None
        """The table of the projection on screen (kept to render it again at another width)."""
        self._table_width = 0
        """The width the table's text was rendered at (0: not rendered as text)."""

    # --- building ------------------------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="wi-scroll"):
            yield Static("Plan a campaign of jobs", id="wi-title", classes="pane-title", markup=False)
            with Horizontal(id="wi-plan"):
                for key, label, default in PLAN_FIELDS:
                    yield _field(key, label, FieldInput(default, id=f"wi-{key}"))
                yield _field("path", "Scenario file (TOML)", FieldInput("", id="wi-path",
                                                                         placeholder="~/plan.toml"), "wi-field wi-wide")
                yield Button("Save", id="wi-save", compact=True)
                yield Button("Load", id="wi-load", compact=True)
            yield Static("", id="wi-file-msg", markup=False)
            yield Vertical(id="wi-jobs")
            yield Button("Add a job", id="wi-add", compact=True)
            yield Static("", id="wi-result", markup=False)
            with Vertical(id="wi-plots"):
                for key in PLOTS:
                    yield SeriesPlot(id=f"wi-plot-{key}")
            yield Static("", id="wi-table")

    def on_mount(self) -> None:
        for plot in self.query(SeriesPlot):
            plot.display = False
        self.set_class(self.app.size.width < self.NARROW, "-narrow")

    def on_resize(self) -> None:
        self.set_class(self.app.size.width < self.NARROW, "-narrow")
        if self._table is not None:  # the table's text again at its new width, once laid out
            self.call_after_refresh(self._refit_table)

    def _refit_table(self) -> None:
        if self._table is not None and self.query_one("#wi-table").content_size.width != self._table_width:
            self._show_table()

    def one(self, selector: str) -> Widget:
        """The widget ``selector`` names in the pane (not in a job line), found once."""
        widget = self._found.get(selector)
        if widget is None:
            widget = self._found[selector] = self.query_one(selector)
        return widget

    def input(self, key: str) -> Input:
        widget = self.one(f"#wi-{key}")
        assert isinstance(widget, Input)
        return widget

    @property
    def jobs(self) -> list[JobEditor]:
        """The job lines, in order."""
        return [w for w in self.one("#wi-jobs").children if isinstance(w, JobEditor)]

    def _new_job(self, number: int, fields: dict[str, str] | None = None,
                 extras: JobExtras = NO_EXTRAS) -> JobEditor:
        self._job_ids += 1
        return JobEditor(number, list(self._partitions.values()), fields or {k: d for k, _, d in JOB_FIELDS},
                         extras, id=f"wi-job-{self._job_ids}")

    def show(self, standing: Standing, row: int | None) -> None:
        """Plan for ``row`` (a user row; else the viewer's own association)."""
        is_pbs = standing.algorithm == "pbs"
        for widget_id in ("#wi-plan", "#wi-jobs", "#wi-add", "#wi-plots", "#wi-table"):
            self.query_one(widget_id).display = not (is_pbs or standing.partial)
        if standing.partial and not is_pbs:  # PrivateData: the others' usage is not in this view
            self._view, self._row = None, row
            self._update("wi-title", "What if I run these jobs?")
            self._update("wi-result", private_whatif(standing))
            return
        if is_pbs:
            self._view, self._row = None, row  # nothing to recompute on a form change
            self._update("wi-title", "What if I run these jobs?")
            pbs = standing.snapshot.pbs
            self._update("wi-result", pbs_whatif_text(pbs.usage_res if pbs else "cput"))
            return
        parts = standing.snapshot.partitions or (NO_PARTITION,)
        changed = [p.name for p in parts] != list(self._partitions)
        self._view, self._row = standing, row
        self._partitions = {p.name: p for p in parts}
        self._priced = bool(standing.snapshot.partitions)
        jobs = self.jobs
        if not jobs:
            self.query_one("#wi-jobs").mount(self._new_job(1))
        elif changed:  # a refresh with other partitions: each line takes the first
            for job in jobs:
                job.set_partitions(list(parts))
        self._recompute()

    # --- reading the form ----------------------------------------------------------------------

    def _target(self) -> int | None:
        """The association the jobs charge by default: the selected user row, else the viewer's."""
        standing = self._view
        tree = standing.snapshot.tree if standing else None
        if tree is None or standing is None:
            return None
        if self._row is not None and tree.is_user[self._row]:
            return self._row
        return int(standing.my_rows[0]) if len(standing.my_rows) else None

    def _plan_values(self) -> dict[str, str]:
        return {key: self.input(key).value for key, _, _ in PLAN_FIELDS}

    def _parse(self):  # noqa: ANN202 - (PlanForm, jobs, target)
        standing = self._view
        assert standing is not None and standing.snapshot.tree is not None
        tree = standing.snapshot.tree
        target = self._target()
        user = str(tree.user[target]) if target is not None else ""
        account = str(tree.account[target]) if target is not None else ""
        jobs = self.jobs
        form = parse_plan(self._plan_values(), [j.values() for j in jobs], self._partitions, user, account,
                          self._base, [j.extras for j in jobs], self._priced)
        return form, jobs, target

    # --- events --------------------------------------------------------------------------------

    @on(Select.Changed, ".f-partition")
    def _partition_changed(self, event: Select.Changed) -> None:
        editor = next((a for a in event.select.ancestors if isinstance(a, JobEditor)), None)
        if editor is not None:
            editor.partition_changed()
        self._recompute(DEBOUNCE_S)

    @on(Select.Changed, ".f-gpu_type")
    @on(Input.Changed)
    def _changed(self, event: Input.Changed | Select.Changed) -> None:
        if isinstance(event, Input.Changed) and event.input.id == "wi-path":
            return
        self._recompute(DEBOUNCE_S)

    @on(Button.Pressed, "#wi-add")
    async def _add(self) -> None:
        await self.query_one("#wi-jobs").mount(self._new_job(len(self.jobs) + 1))
        self._recompute(DEBOUNCE_S)

    @on(Button.Pressed, ".wi-dup")
    async def _duplicate(self, event: Button.Pressed) -> None:
        editor = next(a for a in event.button.ancestors if isinstance(a, JobEditor))
        copy = self._new_job(0, editor.values(), editor.extras)
        await self.query_one("#wi-jobs").mount(copy, after=editor)
        self._renumber()
        self._recompute(DEBOUNCE_S)

    @on(Button.Pressed, ".wi-remove")
    async def _remove(self, event: Button.Pressed) -> None:
        editor = next(a for a in event.button.ancestors if isinstance(a, JobEditor))
        self.query_one("#wi-scroll").focus()
        await editor.remove()
        self._renumber()
        self._recompute(DEBOUNCE_S)

    def _renumber(self) -> None:
        for i, job in enumerate(self.jobs):
            job.set_number(i + 1)

    # --- validation and the worker -------------------------------------------------------------

    def _recompute(self, delay: float = 0.0) -> None:
        """Validate the form at once; project a valid scenario in the worker ``delay`` s later.

        Every call makes a new request: a result for an older one (the form or the selection
        changed since) is dropped, and a worker still waiting out its delay is cancelled.
        """
        if self._view is None or self._view.snapshot.tree is None:
            return
        if not all(job.composed for job in self.jobs):  # a line just added: once its fields exist
            self.call_after_refresh(self._recompute, delay)
            return
        form, jobs, target = self._parse()
        standing = self._view
        key = (form.scenario, tuple(tuple(j.values().items()) for j in jobs), target)
        failed = self._worker is not None and self._worker.state is WorkerState.ERROR
        if key == self._form and standing is self._form_standing and not failed:
            return  # e.g. a Select's Changed after show() set it: already requested
        self._form, self._form_standing = key, standing
        self._request += 1
        self._worker = None
        self.workers.cancel_group(self, "whatif")
        self._show_errors(form.errors, jobs)
        tree = standing.snapshot.tree
        assert tree is not None
        who = tree.label(target) if target is not None else "nobody (select a user in the tree)"
        self._update("wi-title", f"Plan a campaign for {who} (jobs charge the user selected in the tree, else you, "
                                 "unless they name one) · Tab/Shift+Tab: fields · Esc: leave a field")
        if form.scenario is None:
            self._set_result("Fix the fields marked in red to see the projection.", pending=False)
            self._dim(True)
            return
        if not form.scenario.jobs:
            self._set_result("No jobs: add one to see what it would do.", pending=False)
            self._dim(True)
            return
        if self._result is None:
            self._set_result("Projecting the campaign...", pending=False)
        self._dim(True)
        self._worker = self._project(standing, form.scenario, self._request, delay)

    # An explicit description: by default @work repr()s the arguments, the whole Standing
    # (0.7 s at 100k associations, on the UI thread, per key).
    @work(thread=True, exclusive=True, group="whatif", name="what-if", exit_on_error=False,
          description="project the planned campaign, with and without its jobs")
    def _project(self, standing: Standing, sc: Scenario, request_id: int, delay: float) -> None:
        """Off the UI thread: wait ``delay`` s unless cancelled (a newer key), then project."""
        worker = get_current_worker()
        if delay and worker.cancelled_event.wait(delay):
            return
        try:  # a newer key stops it at its next step: else it shares the interpreter with the newer one
            result, error = project_plan(sc, standing.snapshot, SOURCE, self._baselines,
                                         cancelled=lambda: worker.is_cancelled), None
        except Cancelled:
            return
        except InputError as exc:  # a user, account or partition the cluster does not have
            result, error = None, exc
        if not worker.is_cancelled:
            self.post_message(PlanReady(request_id, result, error))

    def on_plan_ready(self, message: PlanReady) -> None:
        if message.request_id != self._request or self._view is None:
            return  # the form or the selection changed since the worker started
        if message.error is not None:
            self._show_projection_error(message.error)
            return
        assert message.result is not None
        self._draw(message.result)

    def worker_failed(self, worker: Worker, text: str) -> None:
        if worker is not self._worker:
            return  # an older request's: the form has changed since
        self._set_result(f"Could not project this campaign: {text}", pending=False)

    def _show_errors(self, errors: dict[str, str], jobs: list[JobEditor]) -> None:
        # Only messages that change are updated: each update relayouts the screen, per key.
        for key, _, _ in PLAN_FIELDS:
            message = errors.get(key, "")
            if self._texts.get(f"plan.{key}") != message:
                self._texts[f"plan.{key}"] = message
                self.one(f"#wi-plan .e-{key}").update(message)  # type: ignore[attr-defined]
                self.input(key).set_class(bool(message), "invalid")
        for i, job in enumerate(jobs):
            for key in ("partition", "gpu_type", *(k for k, _, _ in JOB_FIELDS)):
                message = errors.get(f"jobs[{i}].{key}", "")
                if self._texts.get(f"{job.id}.{key}") != message:
                    self._texts[f"{job.id}.{key}"] = message
                    job.one(f".e-{key}").update(message)  # type: ignore[attr-defined]
                    if key not in ("partition", "gpu_type"):
                        job.input(key).set_class(bool(message), "invalid")

    def _show_projection_error(self, error: InputError) -> None:
        """An error of the projection: beside its field when it names one (``plan:jobs[0].user``)."""
        where = error.source.removeprefix(f"{SOURCE}:")
        jobs = self.jobs
        if where.startswith("jobs[") and "]." in where:
            index, key = where[5:].split("].", 1)
            if index.isdigit() and int(index) < len(jobs):
                self._show_errors({where: error.message}, jobs)
        self._result = None
        self._set_result(f"Cannot project this campaign: {error}", pending=False)
        for plot in self.query(SeriesPlot):
            plot.display = False
        self._table = None
        self.query_one("#wi-table", Static).update("")

    # --- drawing -------------------------------------------------------------------------------

    def _focus_series(self, plan: PlanProjection) -> int:
        """The series shown in the plots and table: the selected association's, else the first."""
        target = self._target()
        return next((i for i, s in enumerate(plan.after.series) if s.row == target), 0)

    def _draw(self, plan: PlanProjection) -> None:
        self._result = plan
        standing = self._view
        unknown = {s.row: why for s in plan.after.series
                   if standing is not None and (why := standing.usage_unknown(s.row))}
        if unknown:  # price the jobs; never a fairshare projected from usage the source does not have
            self._set_result("\n".join(unknown_usage_lines(plan, unknown)), pending=False)
            self._dim(False)
            for widget in self.query_one("#wi-plots").query(SeriesPlot):
                widget.display = False
            self._table = None
            self.query_one("#wi-table", Static).update("")
            return
        index = self._focus_series(plan)
        label = plan.after.series[index].label if plan.after.series else ""
        lines = [f"Without → with the campaign (everything else as the cluster is now; "
                 f"half-life {plan.after.half_life_s / 86400:g} days):", *sentences(plan)]
        self._set_result("\n".join(lines), pending=False)
        self._dim(False)
        if not plan.after.series:
            return
        header, rows = table_rows(plan, index)
        table = Table(*header, title=f"{label}: without → with the campaign", title_justify="left",
                      box=None, padding=(0, 2, 0, 0), header_style="bold")
        for row in rows:
            table.add_row(*row)
        self._table = table
        self._show_table()
        # The plots in the next frame: the sentences and the table, then the plot in view, each
        # frame under ~50 ms of the UI thread rather than all of them in one.
        self.call_after_refresh(self._draw_plots, plan, index, label)

    def _show_table(self) -> None:
        """Put :attr:`_table` in ``#wi-table`` as text rendered once at the widget's width.

        A Rich ``Table`` in a Static is rendered whole again at every layout that follows a repaint
        (its height is measured by rendering it): with the dimming at each key, 15-45 ms of the UI
        thread per key at 20k's load, beside the worker. Its lines as a ``Text`` measure by counting.
        """
        widget = self.query_one("#wi-table", Static)
        table, width = self._table, widget.content_size.width
        self._table_width = width
        if table is None or not width:  # not laid out yet: Rich renders it at whatever width it gets
            widget.update(table if table is not None else "")
            return
        console = self.app.console
        lines = console.render_lines(table, console.options.update_width(width), pad=False)
        widget.update(Text("\n").join(Text.assemble(*((s.text, s.style or "") for s in line if not s.control),
                                                    no_wrap=True, overflow="crop") for line in lines))

    def _draw_plots(self, plan: PlanProjection, index: int, label: str) -> None:
        if plan is not self._result:
            return  # a newer result came in the meantime
        dates = [f"{plan.after.date(h):%d/%m/%Y %H:%M}" for h in plan.after.t_hours]
        shown = set()
        plots = self.query_one("#wi-plots")
        for metric in metrics(plan, index):
            plot_id = f"wi-plot-{metric.key}"
            found = plots.query(f"#{plot_id}")
            widget = found.first(SeriesPlot) if found else SeriesPlot(id=plot_id)
            if not found:
                plots.mount(widget)
            shown.add(plot_id)
            widget.display = True
            widget.show_figure(Figure(f"{label}: {metric.title}", dates, (
                ("without", list(map(float, metric.before))), ("with the campaign", list(map(float, metric.after))))))
        for widget in plots.query(SeriesPlot):
            if widget.id not in shown:
                widget.display = False

    def _update(self, widget_id: str, text: str) -> None:
        """Update a Static only if its text changes: each update relayouts the screen, per key."""
        if self._texts.get(widget_id) != text:
            self._texts[widget_id] = text
            self.one(f"#{widget_id}").update(text)  # type: ignore[attr-defined]

    def _set_result(self, text: str, pending: bool) -> None:
        self._update("wi-result", text)
        self.one("#wi-result").set_class(pending, "pending")

    def _dim(self, stale: bool) -> None:
        """Dim the plots and table while they show an older form's projection."""
        for widget in (self.one("#wi-plots"), self.one("#wi-table")):
            widget.set_class(stale, "pending")

    # --- files ---------------------------------------------------------------------------------

    def _file_message(self, text: str, error: bool) -> None:
        msg = self.query_one("#wi-file-msg", Static)
        msg.update(text)
        msg.set_class(error, "error")

    def _path(self) -> Path | None:
        text = self.query_one("#wi-path", Input).value.strip()
        if not text:
            self._file_message("Type a file path first (e.g. ~/plan.toml).", error=True)
            return None
        return Path(text).expanduser()

    @on(Button.Pressed, "#wi-save")
    def _save(self) -> None:
        path = self._path()
        if path is None or self._view is None or self._view.snapshot.tree is None:
            return
        form, _, _ = self._parse()
        if form.scenario is None:
            self._file_message(f"Not saved: {len(form.errors)} field(s) marked in red need fixing first.", error=True)
            return
        try:
            save_scenario(path, form.scenario)
        except OSError as exc:
            self._file_message(f"Not saved: {path}: {exc.strerror or exc}", error=True)
            return
        self._file_message(f"Saved {len(form.scenario.jobs)} job line(s) to {path}.", error=False)

    @on(Button.Pressed, "#wi-load")
    async def _load(self) -> None:
        path = self._path()
        if path is None or self._view is None:
            return
        try:
            sc = load_scenario(path)
        except InputError as exc:
            self._file_message(f"Not loaded: {exc}", error=True)
            return
        await self.load_scenario(sc)
        notes = [f"Loaded {len(sc.jobs)} job line(s) from {path}."]
        unknown = sorted({j.partition for j in sc.jobs if j.partition and j.partition not in self._partitions})
        if unknown:
            notes.append(f"Partitions this cluster does not have: {', '.join(unknown)} (choose one).")
        if sc.model is not None:
            notes.append("Its [model] is not used here: the pane projects the cluster loaded.")
        self._file_message(" ".join(notes), error=False)

    async def load_scenario(self, sc: Scenario) -> None:
        """Put ``sc`` in the editor (its other keys are kept for the projection and saving)."""
        self._base = sc
        for key, text in plan_fields_of(sc).items():
            self.query_one(f"#wi-{key}", Input).value = text
        box = self.query_one("#wi-jobs")
        await box.remove_children()
        editors = [self._new_job(i + 1, *fields_of_job(job)) for i, job in enumerate(sc.jobs)]
        if editors:
            await box.mount_all(editors)
        self._recompute()

    # --- for tests and the bench ---------------------------------------------------------------

    def job_inputs(self, index: int) -> Iterable[Input]:
        """The text fields of job line ``index``, in Tab order."""
        return self.jobs[index].query(Input)
