"""A planned job's multifactor priority over a what-if horizon, part by part.

API (used by :func:`tui.analysis.planner.run.run_scenario`; the pane reads ``ScenarioResult.planned``):

* :func:`planned_priority(...)` -> :class:`PlannedPriority`: the priority the job line would have
  while pending, submitted at its start offset: AGE grows from 0 at submission to
  ``PriorityWeightAge`` at ``PriorityMaxAge``; FAIRSHARE follows the projected fairshare of its
  association; JOBSIZE, PARTITION, QOS, TRES and the site factor are the cluster's weights times the
  job's factors (:mod:`tui.engine.priority`). A part the source cannot give (QOS priority, the
  association's priority, the cluster's size for JOBSIZE) with a non-zero weight is left out and
  named in ``notes``: never a guessed number.

No Textual here.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from tui.engine.priority import age_factor, job_size_factor, normalized_factor, tres_factors
from tui.model import Partition, PrioritySettings

__all__ = ["PlannedPriority", "cluster_size", "planned_priority"]


@dataclass(frozen=True, eq=False)
class PlannedPriority:
    """One job line's priority at every step (weighted parts, as sprio prints them)."""

    job: int
    """Job line index in the scenario."""
    account: str
    user: str
    submit_h: float
    """Hours from now at which it is taken to be submitted (its start offset)."""
    priority: np.ndarray
    """Sum of the parts; NaN before submission."""
    age: np.ndarray
    fairshare: np.ndarray
    jobsize: float
    partition: float
    qos: float
    tres: float
    site: float | np.ndarray
    """SiteFactor: the job line's ``site``, or seed 004's factor of its allocation at each step."""
    notes: tuple[str, ...] = ()

    def parts(self) -> dict[str, object]:
        """The parts by sprio header (series for AGE and FAIRSHARE, numbers for the rest)."""
        return {"AGE": self.age, "FAIRSHARE": self.fairshare, "JOBSIZE": self.jobsize, "PARTITION": self.partition,
                "QOS": self.qos, "TRES": self.tres, "SITE": self.site}


def cluster_size(partitions: tuple[Partition, ...]) -> tuple[int, int] | None:
    """Nodes and CPUs of the whole cluster (Slurm's ``node_record_count`` and ``cluster_cpus``),
    from the partitions' node lists and node shapes; None when the source does not give them."""
    from tui.sources.slurm_text import expand_hostlist

    cpus: dict[str, int] = {}
    for p in partitions:
        if not p.node_list or p.node_list.upper() == "ALL" or not p.node_types:
            return None
        try:
            names = expand_hostlist(p.node_list)
        except ValueError:
            return None
        if len(p.node_types) != 1:  # which name has which shape is not kept: only uniform partitions
            return None
        for n in names:
            cpus[n] = p.node_types[0].cpus
    return (len(cpus), sum(cpus.values())) if cpus else None


def planned_priority(job: int, account: str, user: str, t_s: np.ndarray, fairshare: np.ndarray,
                     settings: PrioritySettings, partitions: Mapping[str, Partition], partition: str,
                     totals: Mapping[str, float], start_s: float, walltime_s: float,
                     qos_factor: float | None = None, site: float | np.ndarray = 0.0) -> PlannedPriority:
    """Priority parts of a planned job line at each time ``t_s`` (seconds from now).

    Parameters
    ----------
    fairshare : array
        The association's projected fairshare factor at each step (NaN counts as 0, as Slurm does
        for a job whose association has none).
    totals : mapping
        The whole job's TRES (``cpu``, ``mem`` MB, ``node``, ``gres/gpu``).
    qos_factor : float, optional
        The QOS's normalised priority (QOS Priority / the largest), when the scenario gives it.
    site : float or array
        The site factor (SiteFactor) the job would carry, fixed or at each step.
    """
    st = settings
    notes: list[str] = []
    t = np.asarray(t_s, dtype=np.float64)
    wait = t - float(start_s)
    age = np.where(wait >= 0, st.weight_age * np.asarray(age_factor(wait, st.max_age_s)), np.nan)
    f = np.where(np.isnan(fairshare), 0.0, fairshare)
    fs = np.where(wait >= 0, st.weight_fairshare * f, np.nan)
    flags = {x.upper() for x in st.flags}
    part = partitions.get(partition)
    js = 0.0
    if st.weight_jobsize:
        size = cluster_size(tuple(partitions.values()))
        if size is None:
            notes.append(f"JOBSIZE left out: PriorityWeightJobSize is {st.weight_jobsize:,} but the cluster's "
                         "nodes and CPUs are not in the source")
        else:
            js = st.weight_jobsize * job_size_factor(
                int(totals.get("node", 1)), int(totals.get("cpu", 0)), size[0], size[1], favor_small=st.favor_small,
                small_relative_to_time="SMALL_RELATIVE_TO_TIME" in flags, time_limit_min=int(walltime_s // 60))
    pp = 0.0
    if st.weight_partition:
        if part is None:
            notes.append(f"PARTITION left out: partition {partition!r} not in the source")
        else:
            top = max(p.priority_job_factor for p in partitions.values())
            pp = st.weight_partition * normalized_factor(part.priority_job_factor, top,
                                                         no_normal="NO_NORMAL_PART" in flags)
    qos = 0.0
    if st.weight_qos:
        if qos_factor is None:
            notes.append(f"QOS left out: PriorityWeightQOS is {st.weight_qos:,}; give qos_factor (the QOS's "
                         "Priority over the largest) in the job line")
        else:
            qos = st.weight_qos * float(qos_factor)
    if st.weight_assoc:
        notes.append(f"ASSOC left out: PriorityWeightAssoc is {st.weight_assoc:,} but association priorities "
                     "are not in the source")
    tres = 0.0
    if st.weight_tres:
        if part is None or not part.tres_totals:
            notes.append("TRES left out: the partition's TRES totals are not in the source")
        else:
            fac = tres_factors(totals, part.tres_totals, no_normal="NO_NORMAL_TRES" in flags)
            w = {k.lower(): float(v) for k, v in st.weight_tres.items()}
            tres = float(sum(v * w.get(k, 0.0) for k, v in fac.items()))
    site_part: float | np.ndarray = site if isinstance(site, np.ndarray) else float(site)
    total = age + fs + js + pp + qos + tres + site_part
    return PlannedPriority(job, account, user, float(start_s) / 3600.0, total, age, fs, js, pp, qos, tres,
                           site_part, tuple(notes))
