"""What-if scenarios: a campaign of jobs projected over time (issue 9), without the UI.

API for the pane (extended, nothing renamed): :func:`parse_scenario` / :func:`load_scenario` /
:func:`save_scenario` / :func:`scenario_to_dict`; :func:`run_scenario` -> :class:`ScenarioResult` with

* ``series[i]`` (:class:`AssocSeries`, one per charged association): ``raw_usage``, ``fairshare``,
  ``rank``/``ahead``/``level_fs`` (Fair Tree), and now ``raw_usage_before``/``fairshare_before``/
  ``rank_before`` (the same projection without the scenario's jobs: plot "before vs after"),
  ``fairshare_stop`` (if the association stops now; both skipped, None, with
  ``run_scenario(..., compare=False)`` for a faster redraw), ``balance`` (a
  :class:`~tui.analysis.plan_balance.BalanceSeries`: ``.balance`` SU free per step, ``.held``,
  ``.refused`` ``[(job, hours)]``, ``.runs_out_h``, ``.account.label``) or ``balance_note`` saying why
  there is none (unknown or absent);
* ``planned[j]`` (:class:`~tui.analysis.plan_priority.PlannedPriority`, one per job line): ``priority``
  per step and its parts (``age``, ``fairshare`` series; ``jobsize``, ``partition``, ``qos``, ``tres``,
  ``site`` numbers; ``notes`` for parts the source cannot give);
* ``pending`` (the source's pending jobs' priority), ``shares_now`` (``[[shares]]``: fairshare today
  before -> after), ``admin`` (:class:`~tui.analysis.plan_answers.AdminAnswer`), ``costs`` (billing/s,
  SU charged and pre-debited per job line), ``notes`` (including what could not be checked), and
  :meth:`ScenarioResult.sentences` (the answers in words).

A job its partition's nodes cannot run (CPUs, memory, GPUs per node, node count, MaxNodes, MaxTime:
:mod:`tui.analysis.node_check`) raises :class:`InputError` naming ``file:jobs[i].key``. Saved
scenarios in the state file: :mod:`tui.analysis.scenario_store`.

A :class:`Scenario` is what a researcher plans: jobs (shape, start, walltime, copies, repeats)
over a horizon sampled every ``step``. It is read from and written to TOML::

    horizon = "30-0"          # Slurm time strings: D-HH:MM:SS, HH:MM:SS, MM (minutes)
    step = "1:00:00"
    target = 0.5              # fairshare a recovery is asked about (default 0.5)
    others = "decay"          # or "steady": everyone else keeps their usage where it is,
                              # or "observed": their pace between an earlier snapshot and now
    pending = ["61000419", "61000852"]   # pending jobs whose priority to follow (first vs others)
    running = true            # the source's running jobs keep charging until their time limit
                              # (not with others = "steady": its rates stand for all running work)

    [[jobs]]
    user = "alice"
    account = "chem"          # optional when the user has one association
    partition = "gpu"
    nodes = 1                 # cpus, gpus and mem are per node, as sbatch takes them
    cpus = 16
    gpus = 4
    mem = "128G"              # or a number of MB
    # tres = "cpu=16,mem=128G,gres/gpu=4,node=1"   # the whole job's TRES, instead of the above
    # billing = 5000.0        # billing per second of one copy: overrides the partition weights
    start = "2-0"             # from now
    walltime = "12:00:00"
    count = 20                # copies running at once
    every = "7-0"             # repeat the block every week ...
    repeat = 2                # ... twice in all
    runtime = "10:00:00"      # expected run time (default: the walltime): usage and the debit stop
                              # there; the allocation pre-debits the walltime
    qos_factor = 0.5          # the QOS's Priority / the largest (the priority's QOS part)
    site = 0                  # the SiteFactor the job would carry, or:
    # site_scale = 1000       # SiteFactor = site_scale x seed 004's site factor of its allocation
    # site_rule = "power"     # (credit left, time to expiry) by the "power" or "sigmoid" rule

    [[shares]]                # "with N raw shares": what-if on the tree itself
    account = "chem"
    user = "alice"
    raw_shares = 4

    [settings]                # override the cluster's (useful with --sshare, which has none)
    half_life = "7-0"
    calc_period = "5"
    algorithm = "fair_tree"   # or "classic"
    dampening = 1
    usage_reset_period = "NONE"

    [admin]                   # seed 000's control, for a target u*
    halving_usage = 1e9       # u*: fairshare halves every u* of usage (RawUsage units)
    weeks = 4                 # how far to follow the dampening drift and the padding upkeep
    check_every = "4:00:00"   # upkeep checks (the paper's 4 hours)
    # upkeep_amount = 5e7     # usage one upkeep job adds (default 1.02 x one interval's decay)

    [model]                   # without a source: seed 000's single-user model
    halving_usage = 10000     # u*: F = 2**(-u/u*), core-hours
    half_life = "7-0"
    initial_usage = 0         # core-hours; a job's cpus x nodes x count is its core-hours per hour

:func:`run_scenario` projects it with :mod:`tui.engine.projection`: with a Slurm snapshot under
Slurm's discrete law (every association decays, the jobs' associations and ancestors are
charged) and the cluster's fairshare algorithm; without one, the exact ODE solution of the
standalone model. Errors name the file and the key (``plan.toml:jobs[2].walltime``).
No Textual here.
"""

from __future__ import annotations

import math
import re
import tomllib
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import numpy as np

from tui.analysis.node_check import check_fit
from tui.analysis.plan_answers import AdminAnswer, SharesNow, admin_answer, shares_now
from tui.analysis.plan_balance import (
    BalanceRun,
    BalanceSeries,
    binding_account,
    project_balance,
    site_series,
    why_no_account,
)
from tui.analysis.plan_priority import PlannedPriority, planned_priority
from tui.engine.billing import billable_tres, billing_mode, normalize_tres_name
from tui.engine.decay import next_reset
from tui.engine.projection import (
    FairshareSeries,
    charge_series,
    decay_series,
    project_fairshare,
    project_usage,
    steady_rate,
)
from tui.model import AssocTree, Job, PrioritySettings, Snapshot
from tui.sources.errors import InputError
from tui.sources.slurm_units import parse_slurm_time

__all__ = [
    "AssocSeries",
    "Model",
    "Scenario",
    "ScenarioJob",
    "ScenarioResult",
    "SharesOverride",
    "SettingsOverride",
    "load_scenario",
    "parse_scenario",
    "recovery_time",
    "run_scenario",
    "save_scenario",
    "scenario_to_dict",
]

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


# --------------------------------------------------------------------------------------------
# TOML
# --------------------------------------------------------------------------------------------

_TOP = {"horizon", "step", "target", "others", "running", "pending", "rank_every", "jobs", "model", "shares",
        "settings", "admin"}
_JOB = {"user", "account", "partition", "nodes", "cpus", "gpus", "gpu_type", "mem", "tres", "billing",
        "start", "walltime", "count", "every", "repeat", "runtime", "qos_factor", "site", "site_scale", "site_rule"}
_ADMIN = {"halving_usage", "weeks", "check_every", "upkeep_amount"}
_MODEL = {"halving_usage", "half_life", "initial_usage"}
_SHARES = {"account", "user", "raw_shares"}
_SETTINGS = {"half_life", "calc_period", "algorithm", "dampening", "usage_reset_period", "pbs_decay_factor",
             "pbs_decay_time"}
_MEM = re.compile(r"\s*([0-9]*\.?[0-9]+)\s*([KMGTP]?)B?\s*", re.IGNORECASE)
_MEM_UNIT = {"": 1.0, "K": 1 / 1024, "M": 1.0, "G": 1024.0, "T": 1024.0**2, "P": 1024.0**3}


class _Reader:
    """Typed getters that raise :class:`InputError` naming ``file:key``."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, key: str, message: str) -> InputError:
        return InputError(f"{self.source}:{key}", message)

    def unknown(self, table: dict[str, Any], allowed: set[str], prefix: str) -> None:
        for key in table:
            if key not in allowed:
                import difflib

                near = difflib.get_close_matches(key, sorted(allowed), n=1)
                hint = f"; did you mean {near[0]!r}?" if near else f"; expected one of {', '.join(sorted(allowed))}"
                raise self.fail(f"{prefix}{key}", f"unknown key{hint}")

    def table(self, data: dict[str, Any], key: str, allowed: set[str]) -> dict[str, Any] | None:
        """The sub-table ``[key]`` checked for unknown keys; None when absent."""
        if key not in data:
            return None
        t = data[key]
        if not isinstance(t, dict):
            raise self.fail(key, f"a table ([{key}])")
        self.unknown(t, allowed, f"{key}.")
        return t

    def time(self, table: dict[str, Any], key: str, name: str, default: int | None = None,
             positive: bool = False) -> int | None:
        if key not in table:
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, str)):
            raise self.fail(name, f"a Slurm time string (\"D-HH:MM:SS\", \"HH:MM:SS\", minutes), not {value!r}")
        try:
            secs = parse_slurm_time(str(value))
        except ValueError:
            raise self.fail(name, f"not a Slurm time {value!r}: use D-HH:MM:SS, HH:MM:SS or minutes") from None
        if secs is None:
            raise self.fail(name, "must be finite")
        if positive and secs <= 0:
            raise self.fail(name, "must be longer than 0")
        return secs

    def number(self, table: dict[str, Any], key: str, name: str, default: float | None = None,
               low: float | None = None, integer: bool = False) -> float | None:
        if key not in table:
            return default
        value = table[key]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or (integer and not isinstance(value, int)):
            raise self.fail(name, f"{'a whole number' if integer else 'a number'}, not {value!r}")
        if not math.isfinite(value):
            raise self.fail(name, "must be finite")
        if low is not None and value < low:
            raise self.fail(name, f"at least {low:g}, not {value!r}")
        return value

    def text(self, table: dict[str, Any], key: str, name: str, default: str = "") -> str:
        if key not in table:
            return default
        value = table[key]
        if not isinstance(value, str):
            raise self.fail(name, f"a string, not {value!r}")
        return value.strip()

    def mem(self, table: dict[str, Any], key: str, name: str) -> float:
        if key not in table:
            return 0.0
        value = table[key]
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0:
            return float(value)
        m = _MEM.fullmatch(value) if isinstance(value, str) else None
        if not m:
            raise self.fail(name, f"memory per node as \"64G\", \"500M\" or a number of MB, not {value!r}")
        return float(m.group(1)) * _MEM_UNIT[m.group(2).upper()]

    def tres(self, table: dict[str, Any], key: str, name: str) -> dict[str, float] | None:
        if key not in table:
            return None
        value = table[key]
        if not isinstance(value, str) or not value.strip():
            raise self.fail(name, f"a TRES string such as \"cpu=16,mem=64G,gres/gpu=4\", not {value!r}")
        out: dict[str, float] = {}
        for item in value.split(","):
            k, sep, v = item.partition("=")
            try:
                tres_name = normalize_tres_name(k)
                if not sep:
                    raise ValueError
                if tres_name == "mem":
                    out["mem"] = self.mem({"m": v}, "m", name)
                else:
                    count = float(v)
                    if not math.isfinite(count) or count < 0:
                        raise ValueError
                    out[tres_name] = count
            except (ValueError, InputError):
                raise self.fail(name, f"bad TRES entry {item.strip()!r}: expected TYPE[/NAME]=COUNT") from None
        out.setdefault("node", 1.0)
        return out


def parse_scenario(data: dict[str, Any], source: str = "scenario") -> Scenario:
    """Validate a scenario read from TOML (or built by the pane) into a :class:`Scenario`.

    Raises
    ------
    InputError
        Naming ``source:key`` (e.g. ``plan.toml:jobs[1].walltime``) and what was expected.
    """
    rd = _Reader(source)
    rd.unknown(data, _TOP, "")
    horizon = rd.time(data, "horizon", "horizon", positive=True)
    if horizon is None:
        raise rd.fail("horizon", "required: how far to project, e.g. \"30-0\" for 30 days")
    step = rd.time(data, "step", "step", default=max(1, horizon // 100), positive=True)
    assert step is not None
    if horizon // step > 200_000:
        raise rd.fail("step", f"{horizon // step} steps over the horizon; use a longer step")
    target = rd.number(data, "target", "target", 0.5, low=0.0)
    assert target is not None
    if target > 1:
        raise rd.fail("target", f"a fairshare in [0, 1], not {target!r}")
    others = rd.text(data, "others", "others", "decay")
    if others not in ("decay", "steady", "observed"):
        raise rd.fail("others", f"\"decay\", \"steady\" or \"observed\", not {others!r}")
    rank_every = rd.time(data, "rank_every", "rank_every", None, positive=True)
    running = data.get("running", True)
    if not isinstance(running, bool):
        raise rd.fail("running", f"true or false, not {running!r}")
    pending = data.get("pending", [])
    if not isinstance(pending, list) or not all(isinstance(x, (str, int)) and not isinstance(x, bool)
                                                for x in pending):
        raise rd.fail("pending", f"a list of job ids, not {pending!r}")

    jobs_raw = data.get("jobs", [])
    if not isinstance(jobs_raw, list) or not all(isinstance(j, dict) for j in jobs_raw):
        raise rd.fail("jobs", "an array of tables ([[jobs]])")
    jobs = []
    for i, j in enumerate(jobs_raw):
        p = f"jobs[{i}]."
        rd.unknown(j, _JOB, p)
        nodes = int(rd.number(j, "nodes", p + "nodes", 1, low=1, integer=True) or 1)
        job = ScenarioJob(
            user=rd.text(j, "user", p + "user"),
            account=rd.text(j, "account", p + "account"),
            partition=rd.text(j, "partition", p + "partition"),
            nodes=nodes,
            cpus=float(rd.number(j, "cpus", p + "cpus", 1, low=0) or 0),
            gpus=int(rd.number(j, "gpus", p + "gpus", 0, low=0, integer=True) or 0),
            gpu_type=rd.text(j, "gpu_type", p + "gpu_type"),
            mem_mb=rd.mem(j, "mem", p + "mem"),
            tres=rd.tres(j, "tres", p + "tres"),
            billing=rd.number(j, "billing", p + "billing", None, low=0),
            start_s=int(rd.time(j, "start", p + "start", 0) or 0),
            walltime_s=int(rd.time(j, "walltime", p + "walltime", 3600, positive=True) or 0),
            count=int(rd.number(j, "count", p + "count", 1, low=1, integer=True) or 1),
            every_s=int(rd.time(j, "every", p + "every", 0) or 0),
            repeat=int(rd.number(j, "repeat", p + "repeat", 1, low=1, integer=True) or 1),
            runtime_s=rd.time(j, "runtime", p + "runtime", None, positive=True),
            qos_factor=rd.number(j, "qos_factor", p + "qos_factor", None, low=0),
            site=float(rd.number(j, "site", p + "site", 0.0) or 0.0),
            site_scale=rd.number(j, "site_scale", p + "site_scale", None, low=0),
            site_rule=rd.text(j, "site_rule", p + "site_rule", "power"),
        )
        if job.site_rule not in ("power", "sigmoid"):
            raise rd.fail(p + "site_rule", f"\"power\" or \"sigmoid\" (seed 004), not {job.site_rule!r}")
        if job.runtime_s is not None and job.runtime_s > job.walltime_s:
            raise rd.fail(p + "runtime", "longer than the walltime: Slurm ends the job at its time limit")
        if job.repeat > 1 and job.every_s <= 0:
            raise rd.fail(p + "every", f"needed with repeat = {job.repeat}: the time between repeats")
        if job.repeat * job.count > 100_000:
            raise rd.fail(p + "repeat", "more than 100,000 runs in one job line")
        jobs.append(job)

    model = None
    if (m := rd.table(data, "model", _MODEL)) is not None:
        u_star = rd.number(m, "halving_usage", "model.halving_usage", None, low=0)
        if u_star is None or u_star <= 0:
            raise rd.fail("model.halving_usage", "required: u* > 0, the usage that halves fairshare (core-hours)")
        hl = rd.time(m, "half_life", "model.half_life", 7 * 86400)
        model = Model(float(u_star), int(hl or 0), float(rd.number(m, "initial_usage", "model.initial_usage", 0.0,
                                                                      low=0) or 0.0))

    shares = []
    raw_shares = data.get("shares", [])
    if not isinstance(raw_shares, list) or not all(isinstance(s, dict) for s in raw_shares):
        raise rd.fail("shares", "an array of tables ([[shares]])")
    for i, s in enumerate(raw_shares):
        p = f"shares[{i}]."
        rd.unknown(s, _SHARES, p)
        n = rd.number(s, "raw_shares", p + "raw_shares", None, low=0, integer=True)
        if n is None:
            raise rd.fail(p + "raw_shares", "required: the raw shares to try")
        acct = rd.text(s, "account", p + "account")
        if not acct:
            raise rd.fail(p + "account", "required")
        shares.append(SharesOverride(acct, rd.text(s, "user", p + "user"), int(n)))

    settings = SettingsOverride()
    if (st := rd.table(data, "settings", _SETTINGS)) is not None:
        algorithm = rd.text(st, "algorithm", "settings.algorithm") or None
        if algorithm not in (None, "fair_tree", "classic"):
            raise rd.fail("settings.algorithm", f"\"fair_tree\" or \"classic\", not {algorithm!r}")
        reset = rd.text(st, "usage_reset_period", "settings.usage_reset_period") or None
        if reset is not None and reset.upper() not in ("NONE", "NOW", "DAILY", "WEEKLY", "MONTHLY",
                                                       "QUARTERLY", "YEARLY"):
            raise rd.fail("settings.usage_reset_period",
                          f"NONE, DAILY, WEEKLY, MONTHLY, QUARTERLY or YEARLY, not {reset!r}")
        pbs_f = rd.number(st, "pbs_decay_factor", "settings.pbs_decay_factor", None, low=0)
        if pbs_f is not None and not 0 < pbs_f < 1:
            raise rd.fail("settings.pbs_decay_factor", f"between 0 and 1 (exclusive), not {pbs_f!r}")
        settings = SettingsOverride(rd.time(st, "half_life", "settings.half_life"),
                                    rd.time(st, "calc_period", "settings.calc_period", None, positive=True),
                                    algorithm, rd.number(st, "dampening", "settings.dampening", None, low=1),
                                    reset, pbs_f, rd.time(st, "pbs_decay_time", "settings.pbs_decay_time", None,
                                                          positive=True))
    admin = None
    if (a := rd.table(data, "admin", _ADMIN)) is not None:
        u_star = rd.number(a, "halving_usage", "admin.halving_usage", None, low=0)
        if not u_star:
            raise rd.fail("admin.halving_usage", "required: u* > 0, the usage that halves fairshare (RawUsage units)")
        admin = Admin(float(u_star), float(rd.number(a, "weeks", "admin.weeks", 4.0, low=0) or 0.0),
                      int(rd.time(a, "check_every", "admin.check_every", 4 * 3600, positive=True) or 0),
                      rd.number(a, "upkeep_amount", "admin.upkeep_amount", None, low=0))
    return Scenario(int(horizon), int(step), tuple(jobs), model, tuple(shares), settings, float(target), others,
                    rank_every, running, tuple(str(x) for x in pending), admin)


def load_scenario(path: str | Path) -> Scenario:
    """Read a scenario TOML file (errors name the file and the key)."""
    p = str(path)
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except OSError as exc:
        raise InputError(p, exc.strerror or str(exc)) from None
    except UnicodeDecodeError:
        raise InputError(p, "not UTF-8 text") from None
    except tomllib.TOMLDecodeError as exc:
        raise InputError(p, f"not valid TOML: {exc}") from None
    return parse_scenario(data, p)


def _time_text(secs: int) -> str:
    """Seconds as a Slurm ``D-HH:MM:SS`` string (what :func:`parse_slurm_time` reads back)."""
    d, rest = divmod(int(secs), 86400)
    h, rest = divmod(rest, 3600)
    m, s = divmod(rest, 60)
    return f"{d}-{h:02d}:{m:02d}:{s:02d}"


def scenario_to_dict(sc: Scenario) -> dict[str, Any]:
    """The TOML table of a scenario (defaults left out); :func:`parse_scenario` reads it back."""
    out: dict[str, Any] = {"horizon": _time_text(sc.horizon_s), "step": _time_text(sc.step_s)}
    if sc.target != 0.5:
        out["target"] = sc.target
    if sc.others != "decay":
        out["others"] = sc.others
    if sc.rank_every_s is not None:
        out["rank_every"] = _time_text(sc.rank_every_s)
    if not sc.running:
        out["running"] = False
    if sc.pending:
        out["pending"] = list(sc.pending)
    default = ScenarioJob()
    jobs = []
    for j in sc.jobs:
        t: dict[str, Any] = {}
        for key in ("user", "account", "partition", "nodes", "gpus", "gpu_type", "count", "repeat"):
            if getattr(j, key) != getattr(default, key):
                t[key] = getattr(j, key)
        if j.cpus != default.cpus:
            t["cpus"] = int(j.cpus) if float(j.cpus).is_integer() else j.cpus
        if j.mem_mb:
            t["mem"] = j.mem_mb
        if j.tres is not None:
            t["tres"] = ",".join(f"{k}={v:g}" for k, v in j.tres.items())
        if j.billing is not None:
            t["billing"] = j.billing
        t["start"] = _time_text(j.start_s)
        t["walltime"] = _time_text(j.walltime_s)
        if j.every_s:
            t["every"] = _time_text(j.every_s)
        if j.runtime_s is not None:
            t["runtime"] = _time_text(j.runtime_s)
        if j.qos_factor is not None:
            t["qos_factor"] = j.qos_factor
        if j.site:
            t["site"] = j.site
        if j.site_scale is not None:
            t["site_scale"] = j.site_scale
        if j.site_rule != "power":
            t["site_rule"] = j.site_rule
        jobs.append(t)
    if jobs:
        out["jobs"] = jobs
    if sc.shares:
        out["shares"] = [{"account": s.account, "user": s.user, "raw_shares": s.raw_shares} for s in sc.shares]
    times = {k: v for k, v in (("half_life", sc.settings.half_life_s), ("calc_period", sc.settings.calc_period_s))
             if v is not None}
    st: dict[str, Any] = {k: _time_text(v) for k, v in times.items()}
    if sc.settings.pbs_decay_time_s is not None:
        st["pbs_decay_time"] = _time_text(sc.settings.pbs_decay_time_s)
    for key in ("algorithm", "dampening", "usage_reset_period", "pbs_decay_factor"):
        if getattr(sc.settings, key) is not None:
            st[key] = getattr(sc.settings, key)
    if st:
        out["settings"] = st
    if sc.admin is not None:
        adm: dict[str, Any] = {"halving_usage": sc.admin.halving_usage, "weeks": sc.admin.weeks,
                               "check_every": _time_text(sc.admin.check_every_s)}
        if sc.admin.upkeep_amount is not None:
            adm["upkeep_amount"] = sc.admin.upkeep_amount
        out["admin"] = adm
    if sc.model is not None:
        out["model"] = {"halving_usage": sc.model.halving_usage, "half_life": _time_text(sc.model.half_life_s),
                        "initial_usage": sc.model.initial_usage}
    return out


def save_scenario(path: str | Path, sc: Scenario) -> None:
    """Write a scenario as TOML (tomli-w; comments are not kept)."""
    import tomli_w

    Path(path).write_text(tomli_w.dumps(scenario_to_dict(sc)), encoding="utf-8")


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True, eq=False)
class AssocSeries:
    """One charged association over the horizon."""

    account: str
    user: str
    row: int
    """Row in the snapshot's tree (-1 in the standalone model)."""
    raw_usage: np.ndarray
    """sshare RawUsage units (billing TRES-seconds); core-hours in the standalone model."""
    fairshare: np.ndarray
    level_fs: np.ndarray | None = None
    rank: np.ndarray | None = None
    ahead: np.ndarray | None = None
    """Users with a better Fair Tree rank."""
    priority_fairshare: np.ndarray | None = None
    """The job priority's FAIRSHARE part, ``PriorityWeightFairshare * F`` (when the weight is known)."""
    tree_usage: np.ndarray | None = None
    """PBS ``fairshare_tree_usage``."""
    raw_usage_before: np.ndarray | None = None
    """The same projection without the scenario's jobs ("before"; the source's running jobs stay)."""
    fairshare_before: np.ndarray | None = None
    rank_before: np.ndarray | None = None
    fairshare_stop: np.ndarray | None = None
    """If the association stops now: no campaign and (with ``others`` = steady/observed) no own pace."""
    balance: BalanceSeries | None = None
    """The binding allocation or Slurm budget over the horizon (None: see ``balance_note``)."""
    balance_note: str = ""
    """Why there is no balance (unknown or absent), when ``balance`` is None."""

    @property
    def label(self) -> str:
        return f"{self.account}/{self.user}" if self.user else (self.account or "you")


@dataclass(frozen=True)
class CostLine:
    """What one job line costs, before decay."""

    index: int
    billing_per_s: float
    """Billable TRES of one copy, per second."""
    runs: int
    """``count * repeat``."""
    billing_seconds: float
    """Charged: billing x run time (the runtime, else the walltime) x runs."""
    held_billing_seconds: float | None = None
    """Pre-debited at the starts: billing x walltime x runs (None: the same as charged)."""

    @property
    def su(self) -> float:
        """Service units (billing-hours)."""
        return self.billing_seconds / 3600.0


@dataclass(frozen=True, eq=False)
class PendingPriority:
    """A pending job's priority over the horizon (multifactor, the cluster's weights)."""

    job_id: str
    account: str
    user: str
    priority: np.ndarray
    """AGE (growing to PriorityMaxAge) + FAIRSHARE (the projected factor) + the other parts held."""
    age: np.ndarray
    fairshare: np.ndarray


@dataclass(frozen=True, eq=False)
class ScenarioResult:
    """A scenario's projection and the answers people ask of it."""

    now: datetime
    t_hours: np.ndarray
    series: tuple[AssocSeries, ...]
    law: str
    """``slurm`` (discrete decay cycles) or ``continuous`` (standalone model)."""
    algorithm: str
    """``fair_tree``, ``classic`` or ``model`` (F = 2**(-u/u*))."""
    half_life_s: int
    users: int
    ranked: np.ndarray
    """Steps at which Fair Tree ranks were recomputed (held in between)."""
    costs: tuple[CostLine, ...]
    campaign_end_h: float
    """Hours from now at which the last job ends (0 without jobs)."""
    target: float
    usage_unit: str
    notes: tuple[str, ...] = ()
    recovery_h: tuple[float | None, ...] = ()
    """Per series: hours from now at which fairshare is back to ``target`` after the campaign."""
    pending: tuple[PendingPriority, ...] = ()
    planned: tuple[PlannedPriority, ...] = ()
    """Per job line: its priority while pending, submitted at its start offset, part by part."""
    shares_now: tuple[SharesNow, ...] = ()
    """With ``[[shares]]``: each charged association's fairshare today before -> after."""
    admin: AdminAnswer | None = None

    @property
    def total_billing_seconds(self) -> float:
        return float(sum(c.billing_seconds for c in self.costs))

    def date(self, hours: float) -> datetime:
        return self.now + timedelta(hours=float(hours))

    def sentences(self) -> list[str]:
        """Plain answers: cost, fairshare before -> after, the lowest point, recovery."""
        out = []
        total = self.total_billing_seconds
        if self.costs:
            unit = {"model": "core-hours", "pbs": f"{self.usage_unit}-hours"}.get(self.algorithm, "SU (billing-hours)")
            held = sum(c.held_billing_seconds if c.held_billing_seconds is not None else c.billing_seconds
                       for c in self.costs)
            out.append(f"campaign: {sum(c.runs for c in self.costs)} job runs, {total / 3600:,.1f} {unit}"
                       + (f" = {total:,.0f} billing TRES-seconds" if self.law == "slurm" else "")
                       + (f" (pre-debited at the starts: {held / 3600:,.1f} SU)" if abs(held - total) > 1e-9 else "")
                       + f", last job ends {self.date(self.campaign_end_h):%Y-%m-%d %H:%M}")
        end_k = min(int(np.searchsorted(self.t_hours, self.campaign_end_h)), self.t_hours.size - 1)
        for s, rec in zip(self.series, self.recovery_h or (None,) * len(self.series)):
            f = s.fairshare
            if np.all(np.isnan(f)):
                continue
            lo = int(np.nanargmin(f))
            when = "campaign end" if self.campaign_end_h <= self.t_hours[-1] else "the horizon's end"
            line = (f"{s.label}: fairshare {f[0]:.4f} now -> {f[end_k]:.4f} at {when} "
                    f"({self.date(self.t_hours[end_k]):%Y-%m-%d}); lowest {f[lo]:.4f} on "
                    f"{self.date(self.t_hours[lo]):%Y-%m-%d %H:%M}")
            if s.rank is not None:
                line += f"; rank {s.rank[0]} -> {s.rank[end_k]} of {self.users}"
            out.append(line)
            if rec is not None:
                out.append(f"{s.label}: fairshare back to {self.target:g} on {self.date(rec):%Y-%m-%d}")
            elif f[lo] < self.target:
                out.append(f"{s.label}: fairshare not back to {self.target:g} by "
                           f"{self.date(self.t_hours[-1]):%Y-%m-%d} (end of the horizon)")
            out.extend(self._before_after(s, end_k))
        out.extend(f"{x.label}: with the scenario's raw shares, fairshare now {x.before:.6f} -> {x.after:.6f}"
                   + (f" (rank {x.rank_before} -> {x.rank_after} of {self.users})" if x.rank_before is not None else "")
                   for x in self.shares_now)
        for p in self.planned:
            out.append(self._planned_line(p))
            out.extend(f"job {p.job} ({p.user}) vs pending job {b.job_id} ({b.user}): " + self._passes_planned(p, b)
                       for b in self.pending)
        if self.admin is not None:
            out.extend(self.admin.sentences())
        if len(self.pending) > 1:
            a = self.pending[0]
            for b in self.pending[1:]:
                out.append(f"job {a.job_id} ({a.user}): priority {a.priority[0]:,.0f} now vs job {b.job_id} ({b.user}) "
                           f"{b.priority[0]:,.0f}; " + self._passes(a, b))
        out.extend(self.notes)
        return out

    def _before_after(self, s: AssocSeries, end_k: int) -> list[str]:
        """The campaign's cost in fairshare, what stopping now gives, and the balance."""
        out = []
        fb = s.fairshare_before
        if fb is not None and self.costs and not np.isnan(fb[end_k]):
            out.append(f"{s.label}: the campaign costs fairshare {fb[end_k]:.4f} -> {s.fairshare[end_k]:.4f} "
                       f"(without -> with it, {self.date(self.t_hours[end_k]):%Y-%m-%d})")
        stop = s.fairshare_stop
        if stop is not None and not np.all(np.isnan(stop)):
            if stop[0] >= self.target:
                out.append(f"{s.label}: if it stops now, fairshare is already {stop[0]:.4f} (>= {self.target:g})")
            else:
                hit = np.flatnonzero(np.nan_to_num(stop, nan=-1.0) >= self.target)
                out.append(f"{s.label}: if it stops now, fairshare {stop[0]:.4f} is back to {self.target:g} on "
                           f"{self.date(self.t_hours[hit[0]]):%Y-%m-%d %H:%M}" if hit.size else
                           f"{s.label}: if it stops now, fairshare {stop[0]:.4f} is not back to {self.target:g} by "
                           f"{self.date(self.t_hours[-1]):%Y-%m-%d}" + (
                               " (it hardly moves: when everyone only decays, ratios stay put; try "
                               "others = \"steady\")"
                               if stop[-1] - stop[0] < 0.01 else ""))
        b = s.balance
        if b is None:
            if s.balance_note:
                out.append(f"{s.label}: {s.balance_note}")
            return out
        line = (f"{s.label}: {b.account.label}: {b.balance[0]:,.1f} SU free now -> {b.balance[end_k]:,.1f} SU at "
                f"{self.date(self.t_hours[end_k]):%Y-%m-%d}")
        if b.refused:
            job, h = b.refused[0]
            line += (f"; refuses jobs[{job}] on {self.date(h):%Y-%m-%d %H:%M} (its pre-debit exceeds the balance): "
                     f"runs out then, {len(b.refused)} runs refused in all")
        else:
            line += "; no job refused"
        pace = b.runs_out_with_pace_h(self.t_hours)
        if pace is not None:
            line += (f"; with the group's own pace ({b.account.pace_su_per_day:,.1f} SU/day) it runs out on "
                     f"{self.date(pace):%Y-%m-%d}")
        out.append(line)
        return out

    def _planned_line(self, p: PlannedPriority) -> str:
        k0 = int(np.searchsorted(self.t_hours, p.submit_h))
        if k0 >= self.t_hours.size:
            return f"job {p.job} ({p.user}): submitted after the horizon"
        if not np.any(np.nan_to_num(p.priority)):
            return (f"job {p.job} ({p.user}): priority 0 from every factor: every PriorityWeight is 0 (Slurm's "
                    "default, or the source has no scontrol show config), so jobs go by submit time")
        site = float(p.site[k0]) if isinstance(p.site, np.ndarray) else p.site
        held = [f"{k} {v:,.0f}" for k, v in (("JOBSIZE", p.jobsize), ("PARTITION", p.partition), ("QOS", p.qos),
                                              ("TRES", p.tres), ("SITE", site)) if v]
        line = (f"job {p.job} ({p.user}): priority {p.priority[k0]:,.0f} at submission "
                f"({self.date(self.t_hours[k0]):%Y-%m-%d %H:%M}: FAIRSHARE {p.fairshare[k0]:,.0f}, AGE {p.age[k0]:,.0f}"
                + "".join(f", {x}" for x in held) + f") -> {p.priority[-1]:,.0f} at the horizon's end")
        return line + "".join(f"; {n}" for n in p.notes)

    def _passes_planned(self, a: PlannedPriority, b: PendingPriority) -> str:
        ok = ~np.isnan(a.priority)
        hit = np.flatnonzero(ok & (np.nan_to_num(a.priority, nan=-np.inf) > b.priority))
        if not hit.size:
            return f"does not pass it by {self.date(self.t_hours[-1]):%Y-%m-%d} (end of the horizon)"
        k0 = int(np.flatnonzero(ok)[0])
        if hit[0] == k0:
            return "ahead from its submission"
        return f"passes it on {self.date(self.t_hours[hit[0]]):%Y-%m-%d %H:%M}"

    def _passes(self, a: PendingPriority, b: PendingPriority) -> str:
        if a.priority[0] > b.priority[0]:
            return "already ahead"
        hit = np.flatnonzero(a.priority > b.priority)
        if not hit.size:
            return f"does not pass it by {self.date(self.t_hours[-1]):%Y-%m-%d} (end of the horizon)"
        return f"passes it on {self.date(self.t_hours[hit[0]]):%Y-%m-%d %H:%M}"


def recovery_time(t_hours: np.ndarray, fairshare: np.ndarray, target: float) -> float | None:
    """When fairshare is back to ``target``: the first sampled time after its lowest point with
    fairshare at least ``target`` (None: the lowest point is above the target, or it is not
    back within the samples)."""
    f = np.where(np.isnan(fairshare), np.inf, fairshare)
    lo = int(np.argmin(f))
    if f[lo] >= target:
        return None
    hit = np.flatnonzero(f[lo:] >= target)
    return float(t_hours[lo + hit[0]]) if hit.size else None


# --------------------------------------------------------------------------------------------
# Running a scenario
# --------------------------------------------------------------------------------------------


def _find_row(tree: AssocTree, account: str, user: str, where: str) -> int:
    if user:
        rows = np.flatnonzero(tree.is_user & (tree.user == user))
        if account:
            rows = rows[tree.account[rows] == account]
        if rows.size == 0:
            known = sorted({str(a) for a in tree.account[tree.is_user & (tree.user == user)]})
            hint = f" (its accounts: {', '.join(known)})" if known else ""
            raise InputError(f"{where}.user", f"no association of user {user!r}"
                             + (f" in account {account!r}" if account else "") + hint)
        if rows.size > 1:
            raise InputError(f"{where}.account", f"user {user!r} has {rows.size} associations "
                             f"({', '.join(str(a) for a in tree.account[rows])}): say which account")
        return int(rows[0])
    if not account:
        raise InputError(f"{where}.user", "required: the user (or at least the account) the job charges")
    rows = np.flatnonzero(~tree.is_user & (tree.account == account))
    if rows.size == 0:
        raise InputError(f"{where}.account", f"no account {account!r} in the association tree")
    return int(rows[0])


def _job_billing(job: ScenarioJob, snap: Snapshot, where: str) -> float:
    if job.billing is not None:
        return float(job.billing)
    parts = {p.name: p for p in snap.partitions}
    part = parts.get(job.partition) if job.partition else None
    if job.partition and parts and part is None:
        raise InputError(f"{where}.partition", f"unknown partition {job.partition!r} (known: "
                         f"{', '.join(sorted(parts))})")
    weights = part.billing_weights if part is not None else None
    return float(billable_tres(job.totals(), weights, billing_mode(snap.settings.flags)))


def _check_shape(job: ScenarioJob, snap: Snapshot, where: str) -> list[str]:
    """Refuse a job its partition cannot run (totals, then each node's CPUs, memory and GPUs, the
    node count, MaxNodes and MaxTime: :func:`tui.analysis.node_check.check_fit`); say what the
    source could not check (a note per unknown), never pass it silently."""
    part = {p.name: p for p in snap.partitions}.get(job.partition)
    label = where.rsplit(":", 1)[-1]
    if part is None:
        why = ("no partition given" if not job.partition else "the source has no partitions" if not snap.partitions
               else f"partition {job.partition!r} is not in the source")
        return [f"{label}: {why}: nodes and limits not checked"]
    totals = job.totals()
    limits = [("nodes", "node", float(part.total_nodes), "nodes"), ("cpus", "cpu", float(part.total_cpus), "CPUs"),
              ("mem", "mem", part.tres_totals.get("mem", 0.0), "MB of memory"),
              ("gpus", "gres/gpu", part.tres_totals.get("gres/gpu", 0.0), "GPUs")]
    for key, tres, total, what in limits:
        need = totals.get(tres, 0.0)
        if key == "gpus" and need and not total and part.tres_totals:
            raise InputError(f"{where}.gpus", f"partition {part.name!r} has no GPUs")
        if total and need > total:
            raise InputError(f"{where}.{key}", f"{need:,.0f} {what} in all; partition {part.name!r} has {total:,.0f}")
    nodes = max(1, round(totals.get("node", 1.0)))
    gpu_type = job.gpu_type or next((k.split(":", 1)[1] for k in totals if k.startswith("gres/gpu:")), "")
    fit = check_fit(part, nodes, totals.get("cpu", 0.0) / nodes, totals.get("mem", 0.0) / nodes,
                    math.ceil(totals.get("gres/gpu", 0.0) / nodes), gpu_type, job.walltime_s)
    for key, why in fit.errors.items():
        field_ = "tres" if job.tres is not None and key != "walltime" else key
        raise InputError(f"{where}.{field_}", why)
    return [f"{label}: {u}" for u in fit.unknown]


def _apply_shares(tree: AssocTree, shares: tuple[SharesOverride, ...], source: str) -> AssocTree:
    if not shares:
        return tree
    raw = tree.shares_raw.copy()
    for i, s in enumerate(shares):
        row = _find_row(tree, s.account, s.user, f"{source}:shares[{i}]")
        raw[row] = s.raw_shares
    return AssocTree(tree.parent, tree.is_user, tree.account, tree.user, raw, tree.usage_raw, tree.sibling_order)


def _resets(period: str, now: datetime, horizon_s: float) -> list[float]:
    """Reset times (seconds from now) within the horizon; the last reset is taken to be now."""
    out: list[float] = []
    if period.strip().upper() in ("NONE", "NOW", ""):
        return out
    local = now.astimezone() if now.tzinfo is not None else now
    nxt = next_reset(period, local)
    while nxt is not None:
        offset = (nxt - local).total_seconds()
        if offset > horizon_s:
            break
        if offset > 0:
            out.append(offset)
        nxt = next_reset(period, nxt)
    return out


def _running_charges(tree: AssocTree, snap: Snapshot, now: datetime) -> list[tuple[int, float, float]]:
    """``(row, end s from now, billing/s)`` of the snapshot's running jobs with a time limit."""
    from tui.engine.billing import job_billing

    parts = {p.name: p for p in snap.partitions}
    rows = {(str(tree.account[i]), str(tree.user[i])): int(i) for i in np.flatnonzero(tree.is_user)}
    out = []
    for job in snap.jobs:
        row = rows.get((job.account, job.user))
        if job.state != "RUNNING" or row is None or job.start_time is None or job.time_limit_s <= 0:
            continue
        end = (job.start_time - now).total_seconds() + job.time_limit_s
        if end <= 0:
            continue
        part = parts.get(job.partition)
        if (part is None or not part.billing_weights) and "billing" in job.tres:
            b = float(job.tres["billing"])
        else:
            b = job_billing(job, part, snap.settings.flags)
        out.append((row, end, b))
    return out


def run_scenario(sc: Scenario, snapshot: Snapshot | None = None, now: datetime | None = None,
                 source: str = "scenario", earlier: Snapshot | None = None, *,
                 compare: bool = True) -> ScenarioResult:
    """Project a scenario: with a Slurm snapshot, Slurm's law over the whole tree; without one,
    the standalone model (``[model]``).

    Parameters
    ----------
    sc : Scenario
    snapshot : Snapshot, optional
        A Slurm snapshot (its tree, settings and partitions).
    now : datetime, optional
        Time 0 (default: the snapshot's ``taken_at``, else the current time).
    source : str
        The scenario's file name, for error messages.
    earlier : Snapshot, optional
        An older snapshot of the same cluster, for ``others = "observed"``.
    compare : bool
        Also project "before" (without the jobs) and "if we stop" (Slurm sources); False skips
        them (``*_before`` and ``fairshare_stop`` are then None) for a faster redraw.

    Raises
    ------
    InputError
        A job naming an unknown user, account or partition; no source and no ``[model]``.
    """
    now = now or (snapshot.taken_at if snapshot is not None else datetime.now(timezone.utc))
    t = sc.times_s
    runs = [(i, s, e) for i, j in enumerate(sc.jobs) for s, e in j.runs()]
    campaign_end_h = max((e for _, _, e in runs), default=0) / HOUR
    if snapshot is not None and snapshot.tree is None and snapshot.pbs is not None:
        return _run_pbs(sc, snapshot, now, t, runs, campaign_end_h, source)
    if snapshot is None or snapshot.tree is None:
        if sc.model is None:
            raise InputError(source, "no source and no [model] table: give --demo, --from DIR, --slurm or "
                             "--sshare FILE, or a [model] with halving_usage and half_life")
        return _run_model(sc, now, t, runs, campaign_end_h)
    tree = _apply_shares(snapshot.tree, sc.shares, source)
    st = snapshot.settings
    o = sc.settings
    hl = o.half_life_s if o.half_life_s is not None else st.decay_half_life_s
    period = o.calc_period_s if o.calc_period_s is not None else st.calc_period_s
    algorithm = o.algorithm or st.algorithm
    damp = o.dampening if o.dampening is not None else st.dampening
    resets = _resets(o.usage_reset_period or st.usage_reset_period, now, sc.horizon_s)

    rows_of = [_find_row(tree, j.account, j.user, f"{source}:jobs[{i}]") for i, j in enumerate(sc.jobs)]
    bill = [_job_billing(j, snapshot, f"{source}:jobs[{i}]") for i, j in enumerate(sc.jobs)]
    unpriced = [i for i, j in enumerate(sc.jobs) if j.billing is None and not snapshot.partitions]
    shape_notes = [n for i, j in enumerate(sc.jobs) for n in _check_shape(j, snapshot, f"{source}:jobs[{i}]")]
    watch = list(dict.fromkeys(rows_of))
    balances = _balances(sc, snapshot, tree, now, watch, rows_of, bill, t, hl, period)
    started = _started_copies(sc, runs, rows_of, watch, balances)
    costs = tuple(CostLine(i, bill[i], j.count * j.repeat, bill[i] * j.count * j.repeat * j.run_s,
                           bill[i] * j.count * j.repeat * j.walltime_s)
                  for i, j in enumerate(sc.jobs))
    rate = steady_rate(tree, hl, period) if sc.others == "steady" else None
    if sc.others == "observed":
        rate = _observed(tree, snapshot, earlier, hl, period, source)
    running = _running_charges(tree, snapshot, now) if sc.running and sc.others == "decay" else []
    base_rows = [row for row, _, _ in running]
    base_start = [0.0] * len(running)
    base_end = [end for _, end, _ in running]
    base_bill = [b for _, _, b in running]
    c_rows = [rows_of[i] for i, _, _ in runs] + base_rows
    c_start = [float(s) for _, s, _ in runs] + base_start
    c_end = [float(e) for _, _, e in runs] + base_end
    c_bill = [bill[i] * n for (i, _, _), n in zip(runs, started)] + base_bill
    proj = project_usage(tree, c_rows, c_start, c_end, c_bill, t, hl, period, "slurm", resets, rate)
    pend_jobs = _pending_jobs(sc, snapshot, tree, source)
    extra = [row for _, row in pend_jobs if row not in watch]
    if sc.rank_every_s is not None:
        every = max(1, round(sc.rank_every_s / sc.step_s))
    else:
        every = 1 if t.size * tree.size <= 5_000_000 else max(1, round(86400 / sc.step_s))
    fs: FairshareSeries = project_fairshare(tree, proj, watch + extra, algorithm, damp, every)
    base_fs: FairshareSeries | None = fs
    if runs and compare:  # before: the same projection without the scenario's jobs
        base = project_usage(tree, base_rows, base_start, base_end, base_bill, t, hl, period, "slurm", resets, rate)
        base_fs = project_fairshare(tree, base, watch, algorithm, damp, every)
    stop_fs = base_fs
    if not compare:
        base_fs = stop_fs = None
    elif rate is not None:  # "if we stop": the charged associations' own pace ends too
        rate_stop = np.array(rate, dtype=np.float64)
        rate_stop[watch] = 0.0
        stop = project_usage(tree, base_rows, base_start, base_end, base_bill, t, hl, period, "slurm", resets,
                             rate_stop)
        stop_fs = project_fairshare(tree, stop, watch, algorithm, damp, every)
    w = st.weight_fairshare
    col = {row: c for c, row in enumerate(watch + extra)}
    pend = tuple(_pending_priority(job, row, t, fs.fairshare[:, col[row]], st) for job, row in pend_jobs)
    parts = {p.name: p for p in snapshot.partitions}
    planned = tuple(planned_priority(i, str(tree.account[rows_of[i]]), str(tree.user[rows_of[i]]), t,
                                     fs.fairshare[:, col[rows_of[i]]], st, parts, j.partition, j.totals(), j.start_s,
                                     j.walltime_s, j.qos_factor, _site(j, balances.get(rows_of[i]), t))
                    for i, j in enumerate(sc.jobs))
    series = []
    for c, row in enumerate(watch):
        f = fs.fairshare[:, c]
        bal = balances.get(row)
        series.append(AssocSeries(
            str(tree.account[row]), str(tree.user[row]) if tree.is_user[row] else "", row,
            fs.usage[:, c].astype(np.float64), f,
            None if fs.level_fs is None else fs.level_fs[:, c].astype(np.float64),
            None if fs.rank is None else fs.rank[:, c],
            None if fs.ahead is None else fs.ahead[:, c],
            w * f if w else None,
            raw_usage_before=None if base_fs is None else base_fs.usage[:, c].astype(np.float64),
            fairshare_before=None if base_fs is None else base_fs.fairshare[:, c],
            rank_before=None if base_fs is None or base_fs.rank is None else base_fs.rank[:, c],
            fairshare_stop=None if stop_fs is None else stop_fs.fairshare[:, c],
            balance=bal if isinstance(bal, BalanceSeries) else None,
            balance_note=bal if isinstance(bal, str) else ""))
    t_h = t / HOUR
    notes = list(shape_notes)
    if unpriced:
        notes.append("partition billing weights unknown: " + ", ".join(f"jobs[{i}]" for i in unpriced)
                     + " billed their CPU count (set billing = per second)")
    if running:
        notes.append(f"{len(running)} running jobs keep charging until their time limits")
    if algorithm == "fair_tree" and every > 1:
        notes.append(f"Fair Tree ranks recomputed every {every * sc.step_s / HOUR:g} h and held in between")
    if resets:
        notes.append("usage reset (PriorityUsageResetPeriod) on "
                     + ", ".join(f"{now + timedelta(seconds=r):%Y-%m-%d}" for r in resets))
    if sc.others == "decay" and runs:
        notes.append("everyone else only decays; with others = \"steady\" they keep their usage")
    if sc.others == "observed" and earlier is not None:
        notes.append(f"everyone keeps the pace seen since {earlier.taken_at:%Y-%m-%d %H:%M}")
    notes.extend(f"jobs[{p.job}]: site_scale given but no dated allocation binds it: SITE is its site "
                 f"({sc.jobs[p.job].site:g})" for p in planned
                 if sc.jobs[p.job].site_scale is not None and not isinstance(p.site, np.ndarray))
    refused_runs = sum(sc.jobs[i].count for i, _, _ in runs) - sum(started)
    if refused_runs:
        notes.append(f"{refused_runs} job runs refused by the allocation are left out of the usage")
    rec = tuple(recovery_time(t_h, s.fairshare, sc.target) if runs else None for s in series)
    shares = tuple(shares_now(snapshot.tree, tree, watch, algorithm, damp)) if sc.shares else ()
    admin = None
    if sc.admin is not None:
        users = tree.is_user
        mean_rate = 0.0 if rate is None else float(np.asarray(rate, dtype=np.float64)[users].mean())
        admin = admin_answer(tree, sc.admin.halving_usage, hl, sc.admin.weeks, sc.admin.check_every_s,
                             sc.admin.upkeep_amount, mean_rate)
    return ScenarioResult(now, t_h, tuple(series), "slurm", algorithm, int(hl), tree.user_count, fs.ranked, costs,
                          campaign_end_h, sc.target, "billing TRES-seconds", tuple(notes), rec, pend, planned,
                          shares, admin)


def _balances(sc: Scenario, snap: Snapshot, tree: AssocTree, now: datetime, watch: list[int], rows_of: list[int],
              bill: list[float], t: np.ndarray, hl: float, period: float) -> dict[int, BalanceSeries | str]:
    """Per charged association: its balance over the horizon, or why it is unknown."""
    out: dict[int, BalanceSeries | str] = {}
    for row in watch:
        acct = binding_account(snap, tree, row, now)
        if acct is None:
            out[row] = why_no_account(snap, tree, row)
            continue
        brs: list[BalanceRun] = []
        for i, j in enumerate(sc.jobs):
            if rows_of[i] != row:
                continue
            per_s = bill[i] if acct.tres == "billing" else j.totals().get(acct.tres, 0.0)
            for s, e in j.runs():
                brs.append(BalanceRun(i, float(s), float(e), per_s, float(j.walltime_s), j.count))
        out[row] = project_balance(acct, brs, t, lambda x: decay_series(x, hl, period))
    return out


def _site(job: ScenarioJob, bal: BalanceSeries | str | None, t: np.ndarray) -> float | np.ndarray:
    """The job line's site part: fixed, or seed 004's factor of its allocation x ``site_scale``."""
    if job.site_scale is None:
        return job.site
    series = site_series(bal, t, job.site_scale, job.site_rule) if isinstance(bal, BalanceSeries) else None
    return job.site if series is None else series


def _started_copies(sc: Scenario, runs: list[tuple[int, int, int]], rows_of: list[int], watch: list[int],
                    balances: dict[int, BalanceSeries | str]) -> list[int]:
    """Copies of each run (in ``runs`` order) the allocation lets start (all, without one)."""
    taken: dict[int, int] = {row: 0 for row in watch}
    out = []
    for i, _, _ in runs:
        row = rows_of[i]
        bal = balances.get(row)
        n = sc.jobs[i].count
        if isinstance(bal, BalanceSeries):
            k = taken[row]
            n = sum(bal.started[k:k + n])
            taken[row] = k + sc.jobs[i].count
        out.append(n)
    return out


def _observed(tree: AssocTree, snap: Snapshot, earlier: Snapshot | None, hl: float, period: float,
              source: str) -> np.ndarray:
    """Own rates between ``earlier`` and ``snap``; associations absent from ``earlier`` get 0."""
    from tui.engine.projection import observed_rate

    if earlier is None or earlier.tree is None:
        raise InputError(f"{source}:others", "\"observed\" needs an earlier snapshot of the cluster (--since DIR)")
    dt = (snap.taken_at - earlier.taken_at).total_seconds()
    if dt <= 0:
        raise InputError(f"{source}:others", f"the earlier snapshot ({earlier.taken_at:%Y-%m-%d %H:%M}) is not "
                         f"older than this one ({snap.taken_at:%Y-%m-%d %H:%M})")
    old = earlier.tree
    key_then = {(str(old.account[i]), str(old.user[i]), bool(old.is_user[i])): i for i in range(old.size)}
    d = float(decay_series([dt], hl, period)[0])
    now_u = tree.usage_raw.astype(np.float64)
    then = now_u / d if d > 0 else now_u.copy()  # absent then: no rate
    for i in range(tree.size):
        j = key_then.get((str(tree.account[i]), str(tree.user[i]), bool(tree.is_user[i])))
        if j is not None:
            then[i] = float(old.usage_raw[j])
    return observed_rate(then, now_u, tree.parent, dt, hl, period)


def _pending_jobs(sc: Scenario, snap: Snapshot, tree: AssocTree, source: str) -> list[tuple[Job, int]]:
    by_id = {j.job_id: j for j in snap.jobs}
    rows = {(str(tree.account[i]), str(tree.user[i])): int(i) for i in np.flatnonzero(tree.is_user)}
    out = []
    for i, jid in enumerate(sc.pending):
        job = by_id.get(jid)
        if job is None or job.state != "PENDING":
            raise InputError(f"{source}:pending[{i}]", f"no pending job {jid!r} in the source"
                             + ("" if job is None else f" (it is {job.state})"))
        row = rows.get((job.account, job.user))
        if row is None:
            raise InputError(f"{source}:pending[{i}]", f"job {jid}'s association {job.account}/{job.user} "
                             "is not in the tree")
        if not job.factors:
            # slurmrestd gives the total only: the parts that move (AGE, FAIRSHARE) are unknown
            raise InputError(f"{source}:pending[{i}]", f"job {jid} has no priority parts in the source (only "
                             f"its total, {job.priority}): its priority over time is unknown; use a source "
                             "with sprio (--slurm, --from DIR)")
        out.append((job, row))
    return out


def _pending_priority(job: Job, row: int, t: np.ndarray, fairshare: np.ndarray,
                      st: PrioritySettings) -> PendingPriority:
    """Priority of a pending job at each time: its sprio parts, with AGE growing from today's
    value at one PriorityMaxAge's worth per ``max_age`` and FAIRSHARE from the projection."""
    parts = {k.upper(): float(v) for k, v in job.factors.items()}
    age0 = parts["AGE"] / st.weight_age if st.weight_age > 0 and "AGE" in parts else 0.0
    age = np.minimum(1.0, age0 + t / st.max_age_s) if st.max_age_s > 0 else np.ones_like(t)
    held = sum(v for k, v in parts.items() if k not in ("AGE", "FAIRSHARE"))
    f = np.where(np.isnan(fairshare), 0.0, fairshare)
    prio = held + st.weight_age * age + st.weight_fairshare * f
    return PendingPriority(job.job_id, job.account, job.user, prio, age, fairshare)


def _run_pbs(sc: Scenario, snap: Snapshot, now: datetime, t: np.ndarray, runs: list[tuple[int, int, int]],
             campaign_end_h: float, source: str) -> ScenarioResult:
    """PBS Professional: a job charges the entity named by its ``user`` (or ``account``) at
    ``billing`` usage units per second, else its CPU count (``cput``)."""
    from tui.engine.projection import project_pbs

    tree = snap.pbs
    assert tree is not None
    names = {str(n): i for i, n in enumerate(tree.name)}
    rows_of = []
    for i, j in enumerate(sc.jobs):
        name = j.user or j.account
        if name not in names:
            key = "user" if j.user else "account"
            raise InputError(f"{source}:jobs[{i}].{key}", f"no PBS entity {name!r} in the fairshare tree")
        rows_of.append(names[name])
    rate = [j.billing if j.billing is not None else j.totals().get("cpu", 0.0) for j in sc.jobs]
    o = sc.settings
    # the scenario's settings, else the captured sched_config's, else the scheduler's defaults
    f = next(v for v in (o.pbs_decay_factor, tree.decay_factor, 0.5) if v is not None)
    period = next(v for v in (o.pbs_decay_time_s, tree.decay_time_s, 86400) if v is not None)
    first = None
    if tree.last_decay:
        first = max(0.0, tree.last_decay + period - now.timestamp())
    watch = list(dict.fromkeys(rows_of))
    res = project_pbs(tree, [rows_of[i] for i, _, _ in runs], [s for _, s, _ in runs], [e for _, _, e in runs],
                      [rate[i] * sc.jobs[i].count for i, _, _ in runs], t, watch, f, period, first)
    parent = np.asarray(tree.parent)
    series = tuple(AssocSeries(str(tree.name[parent[row]]) if parent[row] >= 0 else "", str(tree.name[row]), row,
                               res.usage[:, c], res.factor[:, c], tree_usage=res.tree_usage[:, c].astype(np.float64))
                   for c, row in enumerate(watch))
    costs = tuple(CostLine(i, rate[i], j.count * j.repeat, rate[i] * j.count * j.repeat * j.walltime_s)
                  for i, j in enumerate(sc.jobs))
    t_h = t / HOUR
    rec = tuple(recovery_time(t_h, s.fairshare, sc.target) if runs else None for s in series)
    notes = (f"PBS: usage x {f:g} every {period / 3600:g} h; accrual counted to each job's end",) + _not_here(sc, "PBS")
    return ScenarioResult(now, t_h, series, "pbs", "pbs", int(period), int(np.count_nonzero(
        np.bincount(parent[1:], minlength=len(parent)) == 0)), np.ones(t.size, bool), costs, campaign_end_h,
        sc.target, tree.usage_res, notes, rec)


def _run_model(sc: Scenario, now: datetime, t: np.ndarray, runs: list[tuple[int, int, int]],
               campaign_end_h: float) -> ScenarioResult:
    """Seed 000's model in hours: ``du/dt = c(t) - lambda u``, exact; ``F = 2**(-u/u*)``."""
    assert sc.model is not None
    m = sc.model
    hl_h = m.half_life_s / HOUR
    th = t / HOUR
    rate = [sc.jobs[i].cpus * sc.jobs[i].nodes * sc.jobs[i].count for i, _, _ in runs]
    u = m.initial_usage * decay_series(th, hl_h, law="continuous")
    if runs:
        u = u + charge_series(th, [s / HOUR for _, s, _ in runs], [e / HOUR for _, _, e in runs], rate, hl_h,
                              law="continuous").sum(axis=0)
    f = np.exp2(-u / m.halving_usage)
    costs = tuple(CostLine(i, j.cpus * j.nodes, j.count * j.repeat, j.cpus * j.nodes * j.count * j.repeat
                           * j.walltime_s) for i, j in enumerate(sc.jobs))
    rec = recovery_time(th, f, sc.target) if runs else None
    if runs and rec is None and f.min() < sc.target:  # not within the horizon: exact, after the campaign
        rec = model_recovery_h(campaign_end_h, m, sc.target, sc, runs)
    series = AssocSeries("", "", -1, u, f)
    return ScenarioResult(now, th, (series,), "continuous", "model", m.half_life_s, 1, np.ones(th.size, bool),
                          costs, campaign_end_h, sc.target, "core-hours", _not_here(sc, "the standalone model"), (rec,))


def _not_here(sc: Scenario, where: str) -> tuple[str, ...]:
    """Say which asked-for answers need a Slurm source (never drop a question silently)."""
    out = []
    if sc.admin is not None:
        out.append(f"[admin] not answered in {where}: the dampening and padding need a Slurm tree's users")
    if sc.shares:
        out.append(f"[[shares]] not applied in {where}: raw shares are Slurm's")
    if sc.pending:
        out.append(f"pending not followed in {where}: it needs the source's sprio")
    return tuple(out)


def model_recovery_h(end_h: float, m: Model, target: float, sc: Scenario,
                     runs: list[tuple[int, int, int]]) -> float | None:
    """Exact time (hours) at which ``F = 2**(-u/u*)`` is back to ``target`` once the last job
    ends: ``u`` then only decays, ``u(t) = u_end 2**(-(t - end)/HL)``."""
    if not 0 < target < 1:
        return None if target >= 1 else end_h
    hl_h = m.half_life_s / HOUR
    rate = [sc.jobs[i].cpus * sc.jobs[i].nodes * sc.jobs[i].count for i, _, _ in runs]
    u_end = float(m.initial_usage * decay_series([end_h], hl_h, law="continuous")[0]
                  + charge_series([end_h], [s / HOUR for _, s, _ in runs], [e / HOUR for _, _, e in runs],
                                  rate, hl_h, law="continuous").sum())
    u_target = -m.halving_usage * math.log2(target)
    if u_end <= u_target:
        return end_h
    if hl_h <= 0:
        return None
    return end_h + hl_h * math.log2(u_end / u_target)

