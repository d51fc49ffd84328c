"""The what-if editor's fields as a job request: validation with one message per bad field.

API: :func:`parse_job_form(fields, partitions)` -> ``(JobRequest | None, errors)`` refuses a job
its partition's nodes cannot run (CPUs, memory, GPUs per node, node count, MaxTime, via
:func:`tui.analysis.planner.node_check.check_fit`); :meth:`JobRequest.fit(partitions)` gives the same
check's :class:`~tui.analysis.planner.node_check.Fit`, whose ``unknown`` says what the source could not
check (show it: a check that could not be made is never a silent pass).

No Textual here: the pane passes its fields' text and shows the messages.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

from tui.analysis.planner.node_check import Fit, check_fit
from tui.engine.billing import JobCost, billing_mode, job_cost
from tui.model import Partition
from tui.sources.slurm_units import parse_slurm_time

__all__ = ["JobRequest", "parse_job_form"]


@dataclass(frozen=True)
class JobRequest:
    """A job shape as the what-if editor takes it (per-node amounts, like ``sbatch``)."""

    partition: str
    nodes: int = 1
    cpus_per_node: int = 1
    gpus_per_node: int = 0
    gpu_type: str = ""
    mem_gb_per_node: float = 4.0
    walltime_s: int = 3600

    def fit(self, partitions: Mapping[str, Partition]) -> Fit:
        """Check against the partition's nodes and limits (``unknown`` when the source lacks them)."""
        part = partitions.get(self.partition)
        if part is None:
            return Fit({}, (f"partition {self.partition!r} unknown: its nodes not checked",))
        return check_fit(part, self.nodes, self.cpus_per_node, self.mem_gb_per_node * 1024, self.gpus_per_node,
                         self.gpu_type, self.walltime_s)

    def cost(self, partitions: Mapping[str, Partition], flags: frozenset[str] = frozenset()) -> JobCost:
        """Bill this request on its partition (totals = per node x nodes)."""
        return job_cost(partitions.get(self.partition), self.cpus_per_node * self.nodes,
                        self.gpus_per_node * self.nodes, self.gpu_type, self.mem_gb_per_node * 1024 * self.nodes,
                        self.nodes, self.walltime_s, billing_mode(flags))


def _int(text: str, name: str, low: int, errors: dict[str, str]) -> int:
    try:
        value = int(text.strip())
    except ValueError:
        errors[name] = f"a whole number, not {text.strip()!r}" if text.strip() else "required"
        return low
    if value < low:
        errors[name] = f"at least {low}"
    return value


def parse_job_form(fields: Mapping[str, str],
                   partitions: Mapping[str, Partition]) -> tuple[JobRequest | None, dict[str, str]]:
    """Validate the editor's text fields.

    Parameters
    ----------
    fields : mapping of str to str
        Keys ``partition``, ``nodes``, ``cpus``, ``gpus``, ``gpu_type``, ``mem_gb``, ``walltime``
        (a Slurm time: minutes, ``hh:mm:ss``, ``d-hh:mm``...). CPUs, GPUs and memory per node.
    partitions : mapping of str to Partition
        Known partitions, to check the name and node and CPU counts where the partition says.

    Returns
    -------
    (JobRequest or None, dict of field name to message)
        The request when every field is valid, else None and a message per bad field.
    """
    errors: dict[str, str] = {}
    part = fields.get("partition", "").strip()
    if part not in partitions:
        errors["partition"] = "choose a partition" if not part else f"unknown partition {part!r}"
    nodes = _int(fields.get("nodes", "1"), "nodes", 1, errors)
    cpus = _int(fields.get("cpus", "1"), "cpus", 1, errors)
    gpus = _int(fields.get("gpus", "0") or "0", "gpus", 0, errors)
    mem_text = fields.get("mem_gb", "").strip()
    try:
        mem = float(mem_text)
        if not math.isfinite(mem) or mem <= 0:
            errors["mem_gb"] = "more than 0 GB"
    except ValueError:
        mem = 0.0
        errors["mem_gb"] = f"a number of GB, not {mem_text!r}" if mem_text else "required"
    wall_text = fields.get("walltime", "").strip()
    try:
        wall = parse_slurm_time(wall_text) if wall_text else None
        if wall is None:
            errors["walltime"] = "a finite time limit (minutes, hh:mm:ss or d-hh:mm)"
        elif wall <= 0:
            errors["walltime"] = "longer than 0"
    except ValueError:
        wall = 0
        errors["walltime"] = f"not a Slurm time {wall_text!r}: minutes, hh:mm:ss or d-hh:mm"
    p = partitions.get(part)
    if p is not None and "nodes" not in errors and p.total_nodes and nodes > p.total_nodes:
        errors["nodes"] = f"{part} has {p.total_nodes} nodes"
    if p is not None and "cpus" not in errors and "nodes" not in errors and p.total_cpus \
            and cpus * nodes > p.total_cpus:
        errors["cpus"] = f"{cpus * nodes} CPUs in all; {part} has {p.total_cpus}"
    gpu_total = p.tres_totals.get("gres/gpu") if p is not None else None
    if p is not None and gpus and "gpus" not in errors and p.tres_totals and not gpu_total:
        errors["gpus"] = f"{part} has no GPUs"
    if errors:
        return None, errors
    assert wall is not None  # else errors["walltime"] is set
    req = JobRequest(part, nodes, cpus, gpus, fields.get("gpu_type", "").strip(), mem, int(wall))
    refused = {("mem_gb" if k == "mem" else k): v for k, v in req.fit(partitions).errors.items()}
    if refused:
        return None, refused
    return req, {}
