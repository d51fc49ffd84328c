"""Does a job fit its partition's nodes? Cores, memory and GPUs per node, node count, MaxTime.

API (used by :mod:`tui.analysis.planner.job_form`, :mod:`tui.analysis.planner.scenario` and the what-if pane):

* :func:`check_fit(partition, nodes, cpus, mem_mb, gpus, gpu_type, walltime_s)` -> :class:`Fit`:
  ``errors`` maps a field (``nodes``, ``cpus``, ``mem``, ``gpus``, ``walltime``) to why Slurm would
  refuse the job, naming the limit ("500 CPUs per node; the largest node in sapphire has 112");
  ``unknown`` lists what could not be checked because the source lacks it (node shapes without
  ``scontrol show node`` or slurm.conf, MaxTime without ``scontrol show partition``). A check
  never passes silently: ``Fit.ok`` is True, False, or None (nothing refused, something unknown).

Per-node amounts are what ``sbatch`` takes (``--cpus-per-node``-like CPUs, ``--mem``, ``--gpus-per-node``).
No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass

from tui.model import UNLIMITED, NodeType, Partition

__all__ = ["Fit", "check_fit", "time_text"]


@dataclass(frozen=True)
class Fit:
    """The outcome of :func:`check_fit`."""

    errors: dict[str, str]
    """Field -> why the job cannot run there (empty: nothing refused)."""
    unknown: tuple[str, ...] = ()
    """What could not be checked, and why."""
    fitting_nodes: int | None = None
    """Nodes of the partition that could host one node of the job (None: node shapes unknown)."""

    @property
    def ok(self) -> bool | None:
        """False: refused; None: nothing refused but some check could not be made; True: fits."""
        if self.errors:
            return False
        return None if self.unknown else True


def time_text(secs: int) -> str:
    """Seconds as Slurm's ``D-HH:MM:SS``."""
    d, rest = divmod(int(secs), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}"


def _n(x: float) -> str:
    return f"{x:,.0f}" if float(x).is_integer() else f"{x:,.1f}"


def _fits(t: NodeType, cpus: float, mem_mb: float, gpus: int, gpu_type: str) -> bool:
    return (cpus <= t.cpus and mem_mb <= t.mem_mb and gpus <= t.gpus
            and (not gpus or not gpu_type or t.gpu_type == gpu_type.lower()))


def check_fit(part: Partition, nodes: int, cpus: float, mem_mb: float = 0.0, gpus: int = 0, gpu_type: str = "",
              walltime_s: int | None = None) -> Fit:
    """Check one job against ``part``'s nodes and limits.

    Parameters
    ----------
    part : Partition
        With ``node_types``, ``max_time_s`` and ``max_nodes`` where the source has them.
    nodes : int
        Nodes the job asks for.
    cpus, mem_mb, gpus : float, float, int
        Per node (memory in MB; 0 means the job does not say, and is not checked).
    gpu_type : str
        E.g. ``a100``: only nodes with that GPU type count.
    walltime_s : int, optional
        The job's time limit.
    """
    errors: dict[str, str] = {}
    unknown: list[str] = []
    name = part.name
    if part.max_nodes is None:
        unknown.append(f"MaxNodes of {name} unknown (not in the source)")
    elif part.max_nodes != UNLIMITED and nodes > part.max_nodes:
        errors["nodes"] = f"{nodes} nodes; {name}'s MaxNodes is {part.max_nodes}"
    if walltime_s is not None:
        if part.max_time_s is None:
            unknown.append(f"MaxTime of {name} unknown (not in the source)")
        elif part.max_time_s != UNLIMITED and walltime_s > part.max_time_s:
            errors["walltime"] = f"{time_text(walltime_s)} is over {name}'s MaxTime of {time_text(part.max_time_s)}"
    types = part.node_types
    if not types:
        unknown.append(f"node sizes of {name} unknown (the source has neither scontrol show node nor slurm.conf "
                       "NodeName lines): CPUs, memory and GPUs per node not checked")
        return Fit(errors, tuple(unknown))
    per_node: tuple[tuple[str, float, str, list[float]], ...] = (
        ("cpus", cpus, "CPUs", [float(t.cpus) for t in types]),
        ("mem", mem_mb / 1024, "GB of memory", [t.mem_mb / 1024 for t in types]),
        ("gpus", float(gpus), "GPUs", [float(t.gpus) for t in types]))
    for key, need, what, sizes in per_node:
        most = max(sizes)
        if need > most:
            errors[key] = (f"{_n(need)} {what} per node; {name} has no GPUs" if key == "gpus" and most == 0 else
                           f"{_n(need)} {what} per node; the largest node in {name} has {_n(most)}")
    if gpus and gpu_type and not any(t.gpu_type == gpu_type.lower() for t in types) and "gpus" not in errors:
        kinds = sorted({t.gpu_type for t in types if t.gpus and t.gpu_type})
        errors["gpus"] = f"no {gpu_type} GPUs in {name}" + (f" (it has {', '.join(kinds)})" if kinds else "")
    fitting = sum(t.count for t in types if _fits(t, cpus, mem_mb, gpus, gpu_type))
    if not errors and fitting == 0:
        errors["cpus"] = f"no node in {name} has {_n(cpus)} CPUs, {_n(mem_mb / 1024)} GB and {gpus} GPUs together"
    elif not errors and nodes > fitting:
        errors["nodes"] = f"{nodes} nodes of this size; {name} has {fitting} that fit"
    return Fit(errors, tuple(unknown), fitting)
