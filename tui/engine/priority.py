"""Multifactor job priority and its parts, as slurmctld computes it and sprio prints it (spec 5).

Read from Slurm 22.05 ``priority_multifactor.c`` (``set_priority_factors``,
``_get_priority_internal``, ``_get_tres_factors``) and ``src/sprio/print.c``::

    prio = W_age*age + W_assoc*assoc + W_fs*fs + W_js*js + W_part*part + W_qos*qos
           + sum_i W_tres[i]*tres[i] + site - nice
    job priority = (uint32) clamp(prio, 1, 4294967295)          (truncation)

sprio shows each weighted part with ``%.0f`` (round half to even) and PRIORITY as
``(long long)`` of its own sum, so the displayed parts need not add up to the displayed total.

Factor functions take plain numbers (or numpy arrays where noted); :func:`job_priority` combines
them. Nothing here reads the clock: ages are passed in seconds.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

import numpy as np

from tui.engine._numeric import scalar_or_array
from tui.model import PrioritySettings

if TYPE_CHECKING:  # numpy.typing: annotations only, not imported at run time
    from numpy.typing import ArrayLike, NDArray

__all__ = [
    "NICE_OFFSET",
    "PRIORITY_MAX",
    "PriorityWeights",
    "PriorityFactors",
    "JobPriority",
    "age_factor",
    "job_size_factor",
    "normalized_factor",
    "tres_factors",
    "job_priority",
]

#: Slurm stores nice and site factor offset by this (``slurm.h``).
NICE_OFFSET = 0x80000000
#: Largest job priority (uint32); larger sums are clamped to it.
PRIORITY_MAX = 0xFFFFFFFF
_U32 = 1 << 32

#: Order of the built-in TRES in Slurm's TRES array (sprio prints TRES in array order).
_TRES_ORDER = ("cpu", "mem", "energy", "node", "billing", "fs/disk", "vmem", "pages")


@dataclass(frozen=True)
class PriorityWeights:
    """``PriorityWeight*`` settings (uint32 in Slurm; TRES weights are doubles)."""

    age: int = 0
    assoc: int = 0
    fairshare: int = 0
    jobsize: int = 0
    partition: int = 0
    qos: int = 0
    tres: Mapping[str, float] = field(default_factory=dict)
    """PriorityWeightTRES by lower-case TRES name, e.g. ``{"cpu": 1000.0, "gres/gpu": 3000.0}``."""

    @classmethod
    def from_settings(cls, settings: PrioritySettings) -> PriorityWeights:
        """Weights from a snapshot's :class:`tui.model.PrioritySettings`."""
        return cls(
            age=settings.weight_age,
            assoc=settings.weight_assoc,
            fairshare=settings.weight_fairshare,
            jobsize=settings.weight_jobsize,
            partition=settings.weight_partition,
            qos=settings.weight_qos,
            tres={k.lower(): float(v) for k, v in settings.weight_tres.items()},
        )


@dataclass(frozen=True)
class PriorityFactors:
    """Unweighted factors of one job, each in [0, 1] unless a NO_NORMAL_* flag is set.

    ``site`` and ``nice`` are the plain signed values (SiteFactor, ``--nice``), not the
    ``NICE_OFFSET``-shifted numbers Slurm stores.
    """

    age: float = 0.0
    assoc: float = 0.0
    fairshare: float = 0.0
    jobsize: float = 0.0
    partition: float = 0.0
    qos: float = 0.0
    tres: Mapping[str, float] = field(default_factory=dict)
    site: int = 0
    nice: int = 0


@dataclass(frozen=True)
class JobPriority:
    """A job's weighted priority parts and totals.

    Attributes
    ----------
    age, assoc, fairshare, jobsize, partition, qos : float
        Weighted parts (factor x weight), unrounded.
    tres : dict of str to float
        Weighted TRES parts, only the non-zero ones (sprio omits zeros).
    site, nice : int
        SiteFactor and nice, added and subtracted after the weighted sum.
    priority : int
        The job's priority as slurmctld stores it (uint32, truncated, >= 1).
    sprio_sum : float
        sprio's own client-side sum (different addition order; floored at 1, not capped).
    weights : PriorityWeights
        The weights used, for the normalised (``sprio -n``) standing.
    """

    age: float
    assoc: float
    fairshare: float
    jobsize: float
    partition: float
    qos: float
    tres: dict[str, float]
    site: int
    nice: int
    priority: int
    sprio_sum: float
    weights: PriorityWeights

    @property
    def sprio_priority(self) -> int:
        """PRIORITY column of ``sprio`` (``%Y``): ``(long long)`` of :attr:`sprio_sum`."""
        return math.trunc(self.sprio_sum)

    @property
    def sprio_normalized(self) -> float:
        """PRIORITY column of ``sprio -n`` (``%y``): :attr:`sprio_sum` / 4294967295."""
        return self.sprio_sum / float(PRIORITY_MAX)

    def parts(self) -> dict[str, float]:
        """Weighted parts keyed by sprio header, unrounded (for ``tui.model.Job.factors``).

        ``TRES`` is the sum of the weighted TRES parts; SITE and NICE are the plain values.
        """
        return {
            "SITE": float(self.site),
            "AGE": self.age,
            "ASSOC": self.assoc,
            "FAIRSHARE": self.fairshare,
            "JOBSIZE": self.jobsize,
            "PARTITION": self.partition,
            "QOS": self.qos,
            "NICE": float(self.nice),
            "TRES": sum(self.tres.values(), 0.0),
        }


# --------------------------------------------------------------------------------------------
# Factors
# --------------------------------------------------------------------------------------------


def age_factor(wait_s: ArrayLike, max_age_s: float) -> NDArray[np.float64] | float:
    """Age factor from the time a job has been accruing age.

    Parameters
    ----------
    wait_s : array_like
        ``now - accrue_time`` in seconds (negative counts as 0). A job with no accrue time
        (held, dependency not met, over an accrue limit) gets no age factor at all: pass 0.
    max_age_s : float
        ``PriorityMaxAge`` in seconds (default 7-0 = 604800).

    Returns
    -------
    float or ndarray
        ``wait / max_age`` below ``max_age``, else 1.0.
    """
    w = np.maximum(np.asarray(wait_s, dtype=np.float64), 0.0)
    # diff is a uint32 of whole seconds in Slurm; fractional inputs are kept for planning.
    out = np.where(w < max_age_s, w / float(max_age_s) if max_age_s > 0 else 1.0, 1.0)
    return scalar_or_array(out)


def job_size_factor(
    min_nodes: int,
    cpus: int,
    cluster_nodes: int,
    cluster_cpus: int,
    *,
    favor_small: bool = False,
    small_relative_to_time: bool = False,
    time_limit_min: int | None = None,
) -> float:
    """Job-size factor (``set_priority_factors``, 22.05).

    Parameters
    ----------
    min_nodes : int
        Nodes the job asks for (``min_nodes``).
    cpus : int
        ``total_cpus`` if allocated, else ``max_cpus`` if set, else ``min_cpus``; 0 if unknown.
    cluster_nodes, cluster_cpus : int
        Nodes and CPUs in the cluster (``node_record_count``, ``cluster_cpus``).
    favor_small : bool
        ``PriorityFavorSmall=YES``.
    small_relative_to_time : bool
        ``PriorityFlags=SMALL_RELATIVE_TO_TIME``.
    time_limit_min : int, optional
        Job time limit in minutes, or the partition's MaxTime when the job has none; Slurm uses 1
        when neither is known. Only used with ``small_relative_to_time``.

    Returns
    -------
    float
        In [0, 1]. Favor large: ``(min_nodes/nodes + cpus/cluster_cpus) / 2``; favor small:
        ``((nodes - min_nodes)/nodes + (cluster_cpus - cpus)/cluster_cpus) / 2``; either way only
        the node term when ``cpus == 0``. Relative to time:
        ``max(min_nodes*cluster_cpus/nodes, cpus) / time_limit / cluster_cpus``, or 1 minus that.

    Notes
    -----
    22.05 subtracts unsigned 32-bit integers in the favor-small branch; a job larger than the
    cluster wraps around to a huge factor that is then clamped to 1.0. That is reproduced here
    (23.02 guards it).
    """
    if cluster_nodes <= 0 or cluster_cpus <= 0:
        raise ValueError("cluster_nodes and cluster_cpus must be positive")
    if small_relative_to_time:
        js = min_nodes * cluster_cpus / cluster_nodes
        if cpus > js:
            js = float(cpus)
        js /= time_limit_min if time_limit_min else 1
        js /= cluster_cpus
        if favor_small:
            js = 1.0 - js
    elif favor_small:
        js = ((cluster_nodes - min_nodes) % _U32) / cluster_nodes
        if cpus:
            js += ((cluster_cpus - cpus) % _U32) / cluster_cpus
            js /= 2
    else:
        js = min_nodes / cluster_nodes
        if cpus:
            js += cpus / cluster_cpus
            js /= 2
    return min(max(js, 0.0), 1.0)


def normalized_factor(value: float, max_value: float, *, no_normal: bool = False) -> float:
    """Partition, QOS or association factor: ``value / max over the cluster``.

    Parameters
    ----------
    value : float
        The job's partition ``PriorityJobFactor``, QOS ``Priority`` or association ``Priority``.
    max_value : float
        Largest such value over all partitions / QOS / associations.
    no_normal : bool
        ``PriorityFlags=NO_NORMAL_PART`` / ``NO_NORMAL_QOS`` / ``NO_NORMAL_ASSOC``: use the raw
        value.

    Returns
    -------
    float
        0 when ``value`` is 0 (Slurm skips the factor then).
    """
    if not value:
        return 0.0
    if no_normal:
        return float(value)
    return float(value) / float(max_value) if max_value else 0.0


def tres_factors(
    counts: Mapping[str, float], partition_totals: Mapping[str, float], *, no_normal: bool = False
) -> dict[str, float]:
    """TRES factors: the job's count of each TRES over the partition's total.

    Parameters
    ----------
    counts : mapping of str to float
        Allocated counts if the job has them, else requested (``cpu``, ``mem`` MB, ``gres/gpu``...).
    partition_totals : mapping of str to float
        The partition's TRES totals (``TRES=`` of ``scontrol show partition``).
    no_normal : bool
        ``PriorityFlags=NO_NORMAL_TRES``: the raw count.

    Returns
    -------
    dict of str to float
        Factor per TRES name (lower case); 0 where the partition total is unknown or 0.
    """
    totals = {k.lower(): float(v) for k, v in partition_totals.items()}
    out: dict[str, float] = {}
    for name, value in counts.items():
        key = name.lower()
        if no_normal:
            out[key] = float(value)
        elif value and totals.get(key):
            out[key] = float(value) / totals[key]
        else:
            out[key] = 0.0
    return out


# --------------------------------------------------------------------------------------------
# Combination
# --------------------------------------------------------------------------------------------


def _tres_sort_key(name: str) -> tuple[int, str]:
    return (_TRES_ORDER.index(name), "") if name in _TRES_ORDER else (len(_TRES_ORDER), name)


def job_priority(factors: PriorityFactors, weights: PriorityWeights) -> JobPriority:
    """Weigh a job's factors and sum them the way slurmctld and sprio do.

    Parameters
    ----------
    factors : PriorityFactors
        Unweighted factors (see the factor functions in this module).
    weights : PriorityWeights
        ``PriorityWeight*`` settings.

    Returns
    -------
    JobPriority
        Weighted parts, the controller's uint32 priority, and sprio's sum.

    Notes
    -----
    slurmctld adds ``age + assoc + fs + js + part + qos + tres + site - nice``; sprio adds
    ``age + assoc + fs + js + part + qos + site - nice`` and then each TRES part. Both orders
    are kept, so the last bit of the double sums matches. Priority is floored at 1 (0 means
    held) and capped at 4294967295.
    """
    age = factors.age * float(weights.age)
    assoc = factors.assoc * float(weights.assoc)
    fs = factors.fairshare * float(weights.fairshare)
    js = factors.jobsize * float(weights.jobsize)
    part = factors.partition * float(weights.partition)
    qos = factors.qos * float(weights.qos)

    tres_w = {k.lower(): float(v) for k, v in weights.tres.items()}
    tres: dict[str, float] = {}
    tres_sum = 0.0
    tres_f = {k.lower(): float(v) for k, v in factors.tres.items()}
    for name in sorted(tres_f, key=_tres_sort_key):
        part_value = tres_f[name] * tres_w.get(name, 0.0)
        tres_sum += part_value
        if part_value:
            tres[name] = part_value

    site, nice = int(factors.site), int(factors.nice)
    prio = age + assoc + fs + js + part + qos + tres_sum + float(site) - float(nice)
    prio = max(prio, 1.0)
    as_int = min(int(prio), PRIORITY_MAX)  # (uint64_t) truncation, then the 32-bit cap

    shown = age + assoc + fs + js + part + qos + float(site) - float(nice)
    for v in tres.values():
        shown += v
    shown = max(shown, 1.0)

    return JobPriority(
        age=age,
        assoc=assoc,
        fairshare=fs,
        jobsize=js,
        partition=part,
        qos=qos,
        tres=tres,
        site=site,
        nice=nice,
        priority=as_int,
        sprio_sum=shown,
        weights=weights,
    )
