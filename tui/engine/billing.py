"""Billable TRES: how much raw usage per second a job is charged (spec 4.4).

``TRESBillingWeights`` on a partition turns a job's allocated TRES into one number, the billable
TRES ``B``; a job accrues ``B`` billing TRES-seconds of raw usage per second (before decay and
the QOS UsageFactor, see :mod:`tui.engine.decay`). Without weights a job is billed its CPU count.

Read from Slurm 22.05 ``slurm_get_tres_weight_array`` / ``_tres_weight_item``
(slurm_protocol_api.c) and ``assoc_mgr_tres_weighted`` (assoc_mgr.c).

TRES names are normalised to lower case, ``type`` or ``type/name``: ``cpu``, ``mem`` (MB),
``node``, ``energy``, ``gres/gpu``, ``license/matlab``, ``bb/cray``, ``fs/disk``, ...
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

import numpy as np

from tui.engine._numeric import scalar_or_array
from tui.model import Job, Partition

if TYPE_CHECKING:  # numpy.typing: annotations only, not imported at run time
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "JobCost",
    "job_cost",
    "BillingMode",
    "billing_mode",
    "normalize_tres_name",
    "billable_tres",
    "job_billing",
    "mem_weight_per_gb",
]

BillingMode = Literal["sum", "max_tres", "max_tres_gres"]
"""``sum`` (default), ``max_tres`` (PriorityFlags=MAX_TRES) or ``max_tres_gres`` (25.05+)."""

#: Types counted "per node" under MAX_TRES (``assoc_mgr_tres_weighted``).
_NODE_TYPES = frozenset({"cpu", "mem", "node"})


def normalize_tres_name(name: str) -> str:
    """Lower-case ``type[/name]`` (Slurm matches TRES with ``xstrcasecmp``).

    Parameters
    ----------
    name : str
        E.g. ``"CPU"``, ``"GRES/gpu"``, ``"Mem"``.

    Returns
    -------
    str
        E.g. ``"cpu"``, ``"gres/gpu"``, ``"mem"``.
    """
    t = name.strip().lower()
    if not t or t.startswith("/") or t.endswith("/"):
        raise ValueError(f"empty TRES type or name in {name!r}")
    return t


def billing_mode(flags: Iterable[str]) -> BillingMode:
    """The billing mode given ``PriorityFlags`` (upper or lower case).

    ``MAX_TRES_GRES`` exists from Slurm 25.05; it wins over ``MAX_TRES`` when both are set.
    """
    up = {f.strip().upper() for f in flags}
    if "MAX_TRES_GRES" in up:
        return "max_tres_gres"
    if "MAX_TRES" in up:
        return "max_tres"
    return "sum"


def billable_tres(
    tres: Mapping[str, ArrayLike],
    weights: Mapping[str, float] | None,
    mode: BillingMode = "sum",
) -> NDArray[np.float64] | float:
    """Billable TRES of a job (``assoc_mgr_tres_weighted``), vectorised over jobs.

    Parameters
    ----------
    tres : mapping of str to array_like
        Allocated totals of the whole job (not per node): ``cpu`` count, ``mem`` in MB,
        ``node`` count, ``gres/gpu`` count, ... Values may be arrays (one entry per job).
        Keys are matched case-insensitively; ``billing`` is ignored (it is the output).
    weights : mapping of str to float or None
        Weights per base unit, as from :func:`parse_tres_billing_weights`. Empty or None:
        the job is billed its CPU count.
    mode : {"sum", "max_tres", "max_tres_gres"}
        ``sum``: ``sum(count * weight)``. ``max_tres``: the largest of the weighted cpu, mem,
        node and every ``gres/*`` (never below 0, the C code starts the max at 0.0) plus the sum
        of all other TRES (licenses, bb, fs, ...). ``max_tres_gres`` (25.05+): the max only over
        cpu, mem and node; gres are summed.

    Returns
    -------
    float or ndarray
        Billable TRES per second, billing units. Slurm stores ``(uint64)B`` as the job's
        ``billing`` TRES but charges usage with the untruncated double.
    """
    counts = {normalize_tres_name(k): np.asarray(v, dtype=np.float64) for k, v in tres.items()}
    if not weights:
        return scalar_or_array(np.asarray(counts.get("cpu", 0.0), dtype=np.float64))
    w = {normalize_tres_name(k): float(v) for k, v in weights.items()}
    node_max: NDArray[np.float64] | np.float64 = np.float64(0.0)
    total: NDArray[np.float64] | np.float64 = np.float64(0.0)
    for key, count in counts.items():
        if key == "billing" or key not in w:
            continue
        value = count * w[key]
        kind = key.split("/", 1)[0]
        in_max = (mode == "max_tres" and (kind in _NODE_TYPES or kind == "gres")) or (
            mode == "max_tres_gres" and kind in _NODE_TYPES
        )
        if in_max:
            node_max = np.maximum(node_max, value)
        else:
            total = total + value
    return scalar_or_array(np.asarray(node_max + total, dtype=np.float64))


def job_billing(job: Job, partition: Partition | None, flags: Iterable[str] = ()) -> float:
    """Billable TRES of a snapshot job on its partition (thin wrapper of :func:`billable_tres`).

    Parameters
    ----------
    job : tui.model.Job
        Its ``tres`` are the allocated totals (running) or the request (pending).
    partition : tui.model.Partition or None
        Supplies ``billing_weights``; None or no weights bills the CPU count.
    flags : iterable of str
        ``PriorityFlags`` (for MAX_TRES / MAX_TRES_GRES).

    Returns
    -------
    float
        Billing units per second.
    """
    weights = partition.billing_weights if partition is not None else None
    return float(billable_tres(job.tres, weights, billing_mode(flags)))


def mem_weight_per_gb(cores: int, core_weight: float, mem_gb: float) -> float:
    """Memory weight that makes a node's memory cost as much as its cores (FASRC rule).

    ``cores * core_weight / mem_gb``: filling a node's memory bills the same as filling its
    cores. Write it as ``Mem=<value>G`` in ``TRESBillingWeights``.

    Parameters
    ----------
    cores : int
        Cores per node.
    core_weight : float
        Billing weight per core (``CPU=`` weight).
    mem_gb : float
        Memory per node in GB.

    Returns
    -------
    float
        Billing units per GB of memory.
    """
    if mem_gb <= 0 or not math.isfinite(mem_gb):
        raise ValueError(f"node memory must be positive, got {mem_gb!r} GB")
    return cores * core_weight / mem_gb


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
        """:attr:`total` in SU (billing-hours)."""
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
