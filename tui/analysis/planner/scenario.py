"""The scenario a researcher plans: jobs (shape, start, walltime, copies, repeats) over a horizon
sampled every ``step``, with the overrides it may carry (shares, settings, admin, model). Read and
written by :mod:`tui.analysis.planner.scenario_file`, run by :mod:`tui.analysis.planner.run`.
No Textual here.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

HOUR = 3600.0


# --------------------------------------------------------------------------------------------
# The scenario
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ScenarioJob:
    """One job line of a scenario (``count`` copies at once, ``repeat`` times ``every``)."""

    user: str = ""
    account: str = ""
    partition: str = ""
    nodes: int = 1
    cpus: float = 1
    """CPUs per node (standalone model: core-hours per hour per node)."""
    gpus: int = 0
    """GPUs per node."""
    gpu_type: str = ""
    mem_mb: float = 0.0
    """Memory per node, MB."""
    tres: dict[str, float] | None = None
    """The whole job's TRES (``cpu``, ``mem`` MB, ``node``, ``gres/gpu``), instead of the shape."""
    billing: float | None = None
    """Billing per second of one copy; overrides the partition's TRESBillingWeights."""
    start_s: int = 0
    walltime_s: int = 3600
    count: int = 1
    every_s: int = 0
    repeat: int = 1
    runtime_s: int | None = None
    """Expected run time (None: the walltime): usage and the debit stop there; the pre-debit is the walltime's."""
    qos_factor: float | None = None
    """The QOS's normalised priority (Priority / the largest), for the priority's QOS part."""
    site: float = 0.0
    """SiteFactor the job would carry (priority part)."""
    site_scale: float | None = None
    """SiteFactor at seed 004's site factor 1: the site part then follows the allocation's credit
    and time to expiry at each step (``site_rule``)."""
    site_rule: str = "power"

    def totals(self) -> dict[str, float]:
        """The whole job's TRES (per copy)."""
        if self.tres is not None:
            return dict(self.tres)
        out = {"cpu": float(self.cpus) * self.nodes, "mem": self.mem_mb * self.nodes, "node": float(self.nodes)}
        if self.gpus:
            out["gres/gpu"] = float(self.gpus * self.nodes)
            if self.gpu_type:
                out[f"gres/gpu:{self.gpu_type.lower()}"] = float(self.gpus * self.nodes)
        return out

    def runs(self) -> list[tuple[int, int]]:
        """``(start, end)`` seconds from now of every repeat."""
        run = self.walltime_s if self.runtime_s is None else min(self.runtime_s, self.walltime_s)
        return [(self.start_s + i * self.every_s, self.start_s + i * self.every_s + run)
                for i in range(self.repeat)]

    @property
    def run_s(self) -> int:
        """Seconds one copy runs (the runtime, capped at the walltime)."""
        return self.walltime_s if self.runtime_s is None else min(self.runtime_s, self.walltime_s)


@dataclass(frozen=True)
class Model:
    """Seed 000's standalone single-user model (Yalim, PEARC'20, section 3)."""

    halving_usage: float
    """u*, core-hours: F = 2**(-u/u*)."""
    half_life_s: int
    initial_usage: float = 0.0
    """Core-hours now."""


@dataclass(frozen=True)
class Admin:
    """``[admin]``: hold fairshare to halve every ``halving_usage`` (seed 000's control)."""

    halving_usage: float
    """u*, in the source's RawUsage unit (billing TRES-seconds)."""
    weeks: float = 4.0
    """How far to follow the dampening drift and the padding upkeep."""
    check_every_s: int = 4 * 3600
    """Upkeep check interval (the paper's 4 hours)."""
    upkeep_amount: float | None = None
    """Usage one upkeep job adds (None: 1.02 x one interval's decay of the padding, the paper's ratio)."""


@dataclass(frozen=True)
class SharesOverride:
    """Raw shares of one association set for the what-if."""

    account: str
    user: str
    raw_shares: int


@dataclass(frozen=True)
class SettingsOverride:
    """Cluster settings the scenario overrides (None: the source's)."""

    half_life_s: int | None = None
    calc_period_s: int | None = None
    algorithm: str | None = None
    dampening: float | None = None
    usage_reset_period: str | None = None
    pbs_decay_factor: float | None = None
    """PBS ``fairshare_decay_factor`` (default 0.5)."""
    pbs_decay_time_s: int | None = None
    """PBS ``fairshare_decay_time`` (default one day)."""


@dataclass(frozen=True)
class Scenario:
    """A campaign of jobs over a horizon."""

    horizon_s: int
    step_s: int
    jobs: tuple[ScenarioJob, ...] = ()
    model: Model | None = None
    shares: tuple[SharesOverride, ...] = ()
    settings: SettingsOverride = field(default_factory=SettingsOverride)
    target: float = 0.5
    """Fairshare a recovery is asked about."""
    others: str = "decay"
    """``decay``: every other association only decays; ``steady``: each keeps its usage;
    ``observed``: each keeps the pace seen between an earlier snapshot and this one."""
    rank_every_s: int | None = None
    """Fair Tree re-ranking interval (None: every step on small problems, else daily)."""
    running: bool = True
    """Charge the snapshot's running jobs until their time limit (as Slurm will)."""
    pending: tuple[str, ...] = ()
    """Job ids of the snapshot's pending jobs whose priority to follow (the first against the others)."""
    admin: Admin | None = None

    @property
    def times_s(self) -> np.ndarray:
        """``0, step, 2 step, ..., horizon`` (inclusive), seconds."""
        n = self.horizon_s // self.step_s
        out = np.arange(n + 1, dtype=np.float64) * self.step_s
        return out if out[-1] == self.horizon_s else np.append(out, float(self.horizon_s))
