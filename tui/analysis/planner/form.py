"""The planner's editor as a scenario: text fields in, a :class:`Scenario` and per-field messages out.

The what-if pane edits a campaign as text (one row of fields per job line, plus the horizon,
step and target); this module validates it field by field, so the pane can show each message
beside its field, and turns a loaded :class:`Scenario` back into field texts. The job shape
(partition, nodes, CPUs, GPUs, memory, walltime) is checked by :func:`parse_job_form`, like the
single-job editor; the campaign fields (count, start, every, repeat) here. Whether the user and
account exist is the projection's to say (:func:`run_scenario` names ``jobs[i].user``), in the
worker. No Textual here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace

from tui.analysis.planner.job_form import parse_job_form
from tui.analysis.planner.scenario import Scenario, ScenarioJob
from tui.model import Partition
from tui.sources.slurm_units import parse_slurm_time

__all__ = ["JOB_FIELDS", "NO_EXTRAS", "PLAN_FIELDS", "JobExtras", "PlanForm", "fields_of_job", "parse_plan",
           "plan_fields_of", "time_text"]

#: (key, label, default) of a job line's text fields; amounts are per node, as sbatch takes them.
#: The partition and GPU type are choices (the pane's selects), user and account default to the
#: association selected in the tree when left empty.
JOB_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("count", "Count", "1"),
    ("nodes", "Nodes", "1"),
    ("cpus", "CPUs/node", "4"),
    ("gpus", "GPUs/node", "0"),
    ("mem_gb", "Mem GB/node", "16"),
    ("walltime", "Walltime", "24:00:00"),
    ("start", "Start in", "0"),
    ("every", "Every", ""),
    ("repeat", "Repeat", "1"),
    ("user", "User", ""),
    ("account", "Account", ""),
)
#: (key, label, default) of the scenario's own fields.
PLAN_FIELDS: tuple[tuple[str, str, str], ...] = (
    ("horizon", "Horizon", "30-0"),
    ("step", "Step", "6:00:00"),
    ("target", "Target fairshare", "0.5"),
)
MAX_RUNS = 100_000
"""Runs (count x repeat) one job line may have, as :func:`parse_scenario` allows."""
MAX_STEPS = 20_000
"""Steps over the horizon the pane projects (the CLI allows more; a plot shows a few hundred)."""


@dataclass(frozen=True)
class JobExtras:
    """What a job line read from a file has that the editor has no field for: kept as it was."""

    tres: dict[str, float] | None = None
    billing: float | None = None


NO_EXTRAS = JobExtras()
"""A job line typed in the editor."""


@dataclass(frozen=True)
class PlanForm:
    """The editor's content, validated."""

    scenario: Scenario | None
    """None while any field is wrong."""
    errors: dict[str, str]
    """Field -> message; keys ``horizon``, ``step``, ``target`` and ``jobs[i].FIELD``."""


def time_text(secs: int) -> str:
    """Seconds as the shortest Slurm time string :func:`parse_slurm_time` reads back."""
    d, rest = divmod(int(secs), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    if d:
        return f"{d}-{h:02d}:{m:02d}:{s:02d}" if s else f"{d}-{h:02d}:{m:02d}" if m else f"{d}-{h}"
    return f"{h}:{m:02d}:{s:02d}"


def _time(text: str, name: str, errors: dict[str, str], positive: bool = False) -> int:
    """A Slurm time field; empty is 0."""
    text = text.strip()
    if not text:
        if positive:
            errors[name] = "required"
        return 0
    try:
        secs = parse_slurm_time(text)
    except ValueError:
        errors[name] = f"not a Slurm time {text!r}: minutes, hh:mm:ss or d-hh:mm"
        return 0
    if secs is None:
        errors[name] = "a finite time"
        return 0
    if positive and secs <= 0:
        errors[name] = "longer than 0"
    return int(secs)


def _count(text: str, name: str, errors: dict[str, str]) -> int:
    text = text.strip() or "1"
    try:
        value = int(text)
    except ValueError:
        errors[name] = f"a whole number, not {text!r}"
        return 1
    if value < 1:
        errors[name] = "at least 1"
    return value


def _job(i: int, fields: Mapping[str, str], partitions: Mapping[str, Partition], priced: bool,
         extras: JobExtras, errors: dict[str, str]) -> ScenarioJob | None:
    p = f"jobs[{i}]."
    mine: dict[str, str] = {}
    # A file's job without memory is valid (memory not billed); the single-job form wants > 0.
    no_mem = fields.get("mem_gb", "").strip() in ("0", "0.0")
    request, shape_errors = parse_job_form({**fields, "mem_gb": "1"} if no_mem else fields, partitions)
    mine.update(shape_errors)
    count = _count(fields.get("count", ""), "count", mine)
    repeat = _count(fields.get("repeat", ""), "repeat", mine)
    start = _time(fields.get("start", ""), "start", mine)
    every = _time(fields.get("every", ""), "every", mine)
    if "repeat" not in mine and "every" not in mine and repeat > 1 and every <= 0:
        mine["every"] = f"needed with repeat {repeat}: the time between repeats"
    if "count" not in mine and "repeat" not in mine and count * repeat > MAX_RUNS:
        mine["repeat"] = f"{count * repeat:,} runs; at most {MAX_RUNS:,} per job line"
    errors.update({p + k: v for k, v in mine.items()})
    if request is None or mine:
        return None
    return ScenarioJob(
        user=fields.get("user", "").strip(), account=fields.get("account", "").strip(),
        partition=request.partition if priced else "", nodes=request.nodes, cpus=float(request.cpus_per_node),
        gpus=request.gpus_per_node, gpu_type=request.gpu_type,
        mem_mb=0.0 if no_mem else request.mem_gb_per_node * 1024.0,
        tres=extras.tres, billing=extras.billing, start_s=start, walltime_s=request.walltime_s, count=count,
        every_s=every, repeat=repeat)


def parse_plan(plan: Mapping[str, str], jobs: Sequence[Mapping[str, str]], partitions: Mapping[str, Partition],
               default_user: str, default_account: str, base: Scenario | None = None,
               extras: Sequence[JobExtras] = (), priced: bool = True) -> PlanForm:
    """Validate the editor.

    Parameters
    ----------
    plan : mapping of str to str
        ``horizon``, ``step`` (Slurm times) and ``target`` (a fairshare in [0, 1]).
    jobs : sequence of mappings of str to str
        One per job line: the keys of :data:`JOB_FIELDS` plus ``partition`` and ``gpu_type``.
    partitions : mapping of str to Partition
        The partitions a job may name (checked by :func:`parse_job_form`).
    default_user, default_account : str
        The association an empty ``user`` (and ``account``) field charges.
    base : Scenario, optional
        A loaded scenario whose keys the editor has no field for (shares, settings, others, ...)
        are kept.
    extras : sequence of JobExtras
        Per job line, what it carries from a file (``tres``, ``billing``).
    priced : bool
        False when the partitions are a stand-in (no partition data): jobs name none and are
        billed by their CPU count.
    """
    errors: dict[str, str] = {}
    horizon = _time(plan.get("horizon", ""), "horizon", errors, positive=True)
    step = _time(plan.get("step", ""), "step", errors, positive=True)
    if "horizon" not in errors and "step" not in errors:
        if step > horizon:
            errors["step"] = "no longer than the horizon"
        elif horizon // step > MAX_STEPS:
            errors["step"] = f"{horizon // step:,} steps; at most {MAX_STEPS:,}: use a longer step"
    target_text = plan.get("target", "").strip() or "0.5"
    try:
        target = float(target_text)
        if not (math.isfinite(target) and 0 <= target <= 1):
            errors["target"] = "a fairshare in [0, 1]"
    except ValueError:
        target = 0.5
        errors["target"] = f"a number in [0, 1], not {target_text!r}"
    parsed = []
    for i, fields in enumerate(jobs):
        filled = dict(fields)
        if not filled.get("user", "").strip() and not filled.get("account", "").strip():
            filled["user"], filled["account"] = default_user, default_account
        job = _job(i, filled, partitions, priced, extras[i] if i < len(extras) else NO_EXTRAS, errors)
        parsed.append(job)
    if errors:
        return PlanForm(None, errors)
    sc = base or Scenario(horizon, step)
    return PlanForm(replace(sc, horizon_s=horizon, step_s=step, target=target,
                            jobs=tuple(j for j in parsed if j is not None)), {})


def _number(x: float) -> str:
    return str(int(x)) if float(x).is_integer() else f"{x:g}"


def fields_of_job(job: ScenarioJob) -> tuple[dict[str, str], JobExtras]:
    """A scenario's job line as the editor's field texts, and what the editor has no field for."""
    fields = {
        "partition": job.partition, "gpu_type": job.gpu_type, "count": str(job.count), "nodes": str(job.nodes),
        "cpus": _number(job.cpus), "gpus": str(job.gpus),
        "mem_gb": _number(round(job.mem_mb / 1024.0, 6)),
        "walltime": time_text(job.walltime_s), "start": time_text(job.start_s) if job.start_s else "0",
        "every": time_text(job.every_s) if job.every_s else "", "repeat": str(job.repeat),
        "user": job.user, "account": job.account,
    }
    return fields, JobExtras(job.tres, job.billing)


def plan_fields_of(sc: Scenario) -> dict[str, str]:
    """A scenario's horizon, step and target as the editor's texts."""
    return {"horizon": time_text(sc.horizon_s), "step": time_text(sc.step_s), "target": f"{sc.target:g}"}
