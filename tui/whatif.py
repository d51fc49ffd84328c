"""What-if: what one more job costs and what it does to a fairshare, right now.

:func:`job_cost` bills a job shape on a partition (spec 4.4, via :mod:`tui.engine.billing`);
:func:`whatif` adds that usage to an association and every direct ancestor up to the root (spec
1.2, the direct-parent chain, ``parent`` accounts included) and recomputes the whole tree with
:func:`tui.engine.compute`, since a job moves every sibling's normalized usage and every rank.
It is the *immediate* effect: the usage is charged at once and nothing decays. The projection
over time is a later issue (``tui.engine.projection``).

:func:`parse_job_form` turns the what-if pane's text fields into a :class:`JobRequest`, with one
message per bad field. No Textual here.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tui.engine import compute
from tui.engine.billing import BillingMode, billable_tres, billing_mode
from tui.engine.decay import parse_slurm_time
from tui.explain import path_to
from tui.model import AssocTree, Partition
from tui.view import ClusterView

__all__ = [
    "JobCost",
    "JobRequest",
    "UsageIncrement",
    "WhatIf",
    "add_usage",
    "job_cost",
    "parse_job_form",
    "whatif",
]


@dataclass(frozen=True)
class JobCost:
    """Billing of one job shape on one partition."""

    partition: str
    tres: dict[str, float]
    """Allocated totals of the whole job (``cpu``, ``mem`` MB, ``node``, ``gres/gpu``...)."""
    mode: BillingMode
    billing_per_s: float
    """Billable TRES ``B``: billing units charged per second of run time."""
    walltime_s: int

    @property
    def total(self) -> float:
        """Raw usage the job adds if it runs to its limit: ``B * walltime`` billing TRES-seconds
        (before decay and the QOS UsageFactor)."""
        return self.billing_per_s * self.walltime_s

    @property
    def total_hours(self) -> float:
        """:attr:`total` in billing-hours (SU; core-hours when billed by CPU)."""
        return self.total / 3600.0


def job_cost(partition: Partition | None, cpus: int, gpus: int = 0, gpu_type: str = "", mem_mb: float = 0,
             nodes: int = 1, walltime_s: int = 3600, max_tres: bool | BillingMode = False) -> JobCost:
    """Billing units per second and in total of a job (spec 4.4).

    Parameters
    ----------
    partition : Partition or None
        Its ``billing_weights`` (TRESBillingWeights); None or no weights bills the CPU count.
    cpus, gpus : int
        Totals over the whole job (Slurm bills ``tres_alloc_cnt``, not per node).
    gpu_type : str
        E.g. ``"a100"``: the job also holds ``gres/gpu:a100`` (Slurm tracks typed GRES as a
        TRES of its own, so a weight on either name applies, both if both are weighted).
    mem_mb : float
        Total memory of the job in MB.
    nodes : int
        Node count.
    walltime_s : int
        Time limit in seconds (the job is assumed to run to it).
    max_tres : bool or {"sum", "max_tres", "max_tres_gres"}
        True for PriorityFlags=MAX_TRES, or a billing mode from
        :func:`tui.engine.billing.billing_mode`.
    """
    tres: dict[str, float] = {"cpu": float(cpus), "mem": float(mem_mb), "node": float(nodes)}
    if gpus:
        tres["gres/gpu"] = float(gpus)
        if gpu_type:
            tres[f"gres/gpu:{gpu_type.lower()}"] = float(gpus)
    mode: BillingMode = (("max_tres" if max_tres else "sum") if isinstance(max_tres, bool) else max_tres)
    weights = partition.billing_weights if partition is not None else None
    per_s = float(billable_tres(tres, weights, mode))
    return JobCost(partition.name if partition else "", tres, mode, per_s, int(walltime_s))


@dataclass(frozen=True)
class UsageIncrement:
    """Raw usage of one association before and after the job (billing TRES-seconds)."""

    row: int
    label: str
    before: float
    after: float


@dataclass(frozen=True)
class WhatIf:
    """The immediate effect of a job on an association's fairshare."""

    cost: JobCost
    row: int
    label: str
    increments: tuple[UsageIncrement, ...]
    """The row first, then each direct ancestor up to the root: all get the same increment."""
    fairshare_before: float
    fairshare_after: float
    effective_usage_before: float
    effective_usage_after: float
    level_fs_before: float | None = None
    level_fs_after: float | None = None
    rank_before: int | None = None
    rank_after: int | None = None
    users: int = 0
    priority_fairshare_delta: float = 0.0
    """Change of the job priority's FAIRSHARE part: ``PriorityWeightFairshare * dF``."""


def add_usage(tree: AssocTree, row: int, amount: float) -> AssocTree:
    """A copy of ``tree`` with ``amount`` added to ``row`` and every direct ancestor (spec 1.2)."""
    usage = tree.usage_raw.copy()
    usage[path_to(tree, row)] += np.longdouble(amount)
    return AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw, usage,
                     tree.sibling_order)


def whatif(view: ClusterView, row: int, cost: JobCost) -> WhatIf:
    """Charge ``cost.total`` to ``row`` at once and recompute the engine on the changed tree.

    Parameters
    ----------
    view : ClusterView
        Current snapshot and its results.
    row : int
        Association that runs the job (normally a user row).
    cost : JobCost
        From :func:`job_cost`.

    Raises
    ------
    ValueError
        Without a Slurm tree, or for a row outside it.
    """
    tree, res = view.snapshot.tree, view.fairshare
    if tree is None or res is None:
        raise ValueError("no Slurm association tree in this snapshot")
    if not 0 <= row < tree.size:
        raise ValueError(f"row {row} is not in the association tree")
    settings = view.snapshot.settings
    changed = add_usage(tree, row, cost.total)
    after = compute(changed, res.algorithm, settings.dampening)
    incs = tuple(UsageIncrement(r, tree.label(r), float(tree.usage_raw[r]), float(changed.usage_raw[r]))
                 for r in reversed(path_to(tree, row)))
    lf_b = lf_a = None
    if res.level_fs is not None:
        lf_b, lf_a = float(res.level_fs[row]), float(after.level_fs[row])
    rank_b = rank_a = None
    if res.rank is not None and tree.is_user[row]:
        rank_b, rank_a = int(res.rank[row]), int(after.rank[row])
    f_b, f_a = float(res.fairshare[row]), float(after.fairshare[row])
    delta = settings.weight_fairshare * (f_a - f_b) if not (math.isnan(f_a) or math.isnan(f_b)) else 0.0
    return WhatIf(cost, row, tree.label(row), incs, f_b, f_a, float(res.effective_usage[row]),
                  float(after.effective_usage[row]), lf_b, lf_a, rank_b, rank_a, tree.user_count, delta)


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
    return JobRequest(part, nodes, cpus, gpus, fields.get("gpu_type", "").strip(), mem, int(wall)), {}
