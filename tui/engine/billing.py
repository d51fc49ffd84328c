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
import re
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Literal

import numpy as np
from numpy.typing import ArrayLike, NDArray

from tui.engine._numeric import scalar_or_array

if TYPE_CHECKING:
    from tui.model import Job, Partition

__all__ = [
    "BillingMode",
    "billing_mode",
    "normalize_tres_name",
    "parse_tres_billing_weights",
    "format_tres_billing_weights",
    "billable_tres",
    "job_billing",
    "mem_weight_per_gb",
]

BillingMode = Literal["sum", "max_tres", "max_tres_gres"]
"""``sum`` (default), ``max_tres`` (PriorityFlags=MAX_TRES) or ``max_tres_gres`` (25.05+)."""

#: Unit suffixes and their power of 1024 (``get_unit_type``: "\\0KMGTP").
_UNITS = {"K": 1, "M": 2, "G": 3, "T": 4, "P": 5}
#: TRES types whose base unit is the megabyte (``slurmdb_get_tres_base_unit``).
_MEGA_BASE = frozenset({"mem", "bb"})
#: Types counted "per node" under MAX_TRES (``assoc_mgr_tres_weighted``).
_NODE_TYPES = frozenset({"cpu", "mem", "node"})
#: A C ``strtod`` decimal number (inf/nan/hex are refused here on purpose: no site means them).
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


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


def parse_tres_billing_weights(text: str | None) -> dict[str, float]:
    """Parse a ``TRESBillingWeights`` string into weights per TRES base unit.

    A unit suffix K/M/G/T/P divides the weight by 1024**k relative to the TRES base unit: memory
    and burst buffers count in MB, so ``Mem=0.25G`` is 0.25/1024 per MB (0.25 per GB), and
    ``Mem=0.25M`` is 0.25 per MB; for other TRES the base is a count, so ``CPU=1K`` is
    1/1024 per CPU. A suffix at or below the base unit (``Mem=2K``) changes nothing, as in
    Slurm. Only the first character after the number is read (``Mem=0.25GB`` = ``0.25G``).

    Parameters
    ----------
    text : str or None
        E.g. ``"CPU=1.0,Mem=0.25G,GRES/gpu=2.0"``. Empty or None: no weights.

    Returns
    -------
    dict of str to float
        ``{"cpu": 1.0, "mem": 0.000244140625, "gres/gpu": 2.0}``. A TRES listed twice keeps
        its last weight (Slurm overwrites the array slot).

    Raises
    ------
    ValueError
        On an entry without ``=``, without a number, or with an unknown unit suffix. (Slurm
        also refuses TRES types the cluster does not track; that is not known here.)
    """
    weights: dict[str, float] = {}
    if not text or not text.strip():
        return weights
    for item in text.split(","):
        item = item.strip()
        if not item:
            continue  # strtok skips empty fields
        tres, sep, value = item.partition("=")
        if not sep or not tres.strip() or not value.strip():
            raise ValueError(f"TRESBillingWeights entry {item!r} is not TYPE[/NAME]=WEIGHT[K|M|G|T|P]")
        key = normalize_tres_name(tres)
        value = value.strip()
        m = _NUMBER.match(value)
        if not m:
            raise ValueError(f"TRESBillingWeights entry {item!r}: {value!r} is not a number")
        weight = float(m.group())
        rest = value[m.end() :]
        if rest:
            unit = rest[0].upper()
            if unit not in _UNITS:
                raise ValueError(
                    f"TRESBillingWeights entry {item!r}: unknown unit {rest[0]!r} (use K, M, G, T or P)"
                )
            base = 2 if key.split("/", 1)[0] in _MEGA_BASE else 0
            steps = _UNITS[unit] - base
            if steps > 0:
                weight /= 1024.0**steps
        weights[key] = weight
    return weights


def format_tres_billing_weights(weights: Mapping[str, float]) -> str:
    """Inverse of :func:`parse_tres_billing_weights` without unit suffixes (``repr`` floats).

    Parameters
    ----------
    weights : mapping of str to float
        Weights per base unit.

    Returns
    -------
    str
        ``"cpu=1.0,mem=0.000244140625"``; parsing it gives the same weights back.
    """
    return ",".join(f"{k}={float(v)!r}" for k, v in weights.items())


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
