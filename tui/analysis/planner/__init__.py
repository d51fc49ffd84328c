"""What-if scenarios: a campaign of jobs projected over time (issue 9), without the UI.

API for the pane (extended, nothing renamed): :func:`parse_scenario` / :func:`load_scenario` /
:func:`save_scenario` / :func:`scenario_to_dict`; :func:`run_scenario` -> :class:`ScenarioResult` with

* ``series[i]`` (:class:`AssocSeries`, one per charged association): ``raw_usage``, ``fairshare``,
  ``rank``/``ahead``/``level_fs`` (Fair Tree), and now ``raw_usage_before``/``fairshare_before``/
  ``rank_before`` (the same projection without the scenario's jobs: plot "before vs after"),
  ``fairshare_stop`` (if the association stops now; both skipped, None, with
  ``run_scenario(..., compare=False)`` for a faster redraw), ``balance`` (a
  :class:`~tui.analysis.planner.balance.BalanceSeries`: ``.balance`` SU free per step, ``.held``,
  ``.refused`` ``[(job, hours)]``, ``.runs_out_h``, ``.account.label``) or ``balance_note`` saying why
  there is none (unknown or absent);
* ``planned[j]`` (:class:`~tui.analysis.planner.priority.PlannedPriority`, one per job line): ``priority``
  per step and its parts (``age``, ``fairshare`` series; ``jobsize``, ``partition``, ``qos``, ``tres``,
  ``site`` numbers; ``notes`` for parts the source cannot give);
* ``pending`` (the source's pending jobs' priority), ``shares_now`` (``[[shares]]``: fairshare today
  before -> after), ``admin`` (:class:`~tui.analysis.planner.answers.AdminAnswer`), ``costs`` (billing/s,
  SU charged and pre-debited per job line), ``notes`` (including what could not be checked), and
  :meth:`ScenarioResult.sentences` (the answers in words).

A job its partition's nodes cannot run (CPUs, memory, GPUs per node, node count, MaxNodes, MaxTime:
:mod:`tui.analysis.planner.node_check`) raises :class:`InputError` naming ``file:jobs[i].key``. Saved
scenarios in the state file: :mod:`tui.analysis.planner.store`.

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

from tui.analysis.planner.compare import (
    Baselines,
    Cancelled,
    PlanProjection,
    metrics,
    project_plan,
    sentences,
    table_rows,
    unknown_usage_lines,
)
from tui.analysis.planner.form import (
    JOB_FIELDS,
    NO_EXTRAS,
    PLAN_FIELDS,
    JobExtras,
    fields_of_job,
    parse_plan,
    plan_fields_of,
)
from tui.analysis.planner.output import format_whatif_csv, format_whatif_json, format_whatif_table
from tui.analysis.planner.recovery_days import Recovery, day_reached, recovery
from tui.analysis.planner.result import ScenarioResult
from tui.analysis.planner.run import run_scenario
from tui.analysis.planner.scenario import Scenario, ScenarioJob, SettingsOverride
from tui.analysis.planner.scenario_file import load_scenario, parse_scenario, save_scenario, scenario_to_dict
from tui.analysis.planner.store import drop_scenario, store_scenario, stored_scenarios

__all__ = [
    "Cancelled",
    "Baselines",
    "JOB_FIELDS",
    "JobExtras",
    "NO_EXTRAS",
    "PLAN_FIELDS",
    "PlanProjection",
    "Recovery",
    "Scenario",
    "ScenarioJob",
    "ScenarioResult",
    "SettingsOverride",
    "day_reached",
    "drop_scenario",
    "fields_of_job",
    "format_whatif_csv",
    "format_whatif_json",
    "format_whatif_table",
    "load_scenario",
    "metrics",
    "parse_plan",
    "parse_scenario",
    "plan_fields_of",
    "project_plan",
    "recovery",
    "run_scenario",
    "save_scenario",
    "scenario_to_dict",
    "sentences",
    "store_scenario",
    "stored_scenarios",
    "table_rows",
    "unknown_usage_lines",
]
