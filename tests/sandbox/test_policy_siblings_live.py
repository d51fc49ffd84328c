"""Integration: ``fairtop replay`` against real Slurm, on sibling clusters fed one job stream.

Per release (22.05: Debian's binaries; 26.05: ``/opt/slurm-26.05.3``, marked ``slurm_release``),
seven clusters on one slurmdbd and MariaDB (``restart`` owns them, the others join with
``SANDBOX_JOIN``), each with its own slurmctld and slurmd, 12 CPUs (nothing waits),
``DebugFlags=Priority`` and ``scontrol setdebug verbose`` (every decay cycle in the log, classic's
too), ``CR_Core_Memory`` and 256 MB a job (the same AllocTRES everywhere). They differ from the
base in one setting each:

========  ==============================================================================
sibling   setting (base: Fair Tree, half-life 3 min, ``associations,limits``, CPU=1e6)
========  ==============================================================================
hl        ``PriorityDecayHalfLife`` 30 min                 -> ``--half-life 30``
classic   ``PriorityFlags=NO_FAIR_TREE``                   -> ``--algorithm classic``
nolim     ``AccountingStorageEnforce=associations``        -> ``--enforce-limits no``
qos       QOS UsageFactor 0.5 and 2, and NoDecay           -> ``--qos-usage-factor`` (names mapped)
bill      ``CPU=1e6,Mem=8e6G`` with ``MAX_TRES``            -> ``--billing burn=... --max-tres``
restart   slurmctld restarted mid-stream                   -> the law on its logged cycles
========  ==============================================================================

QOS live in the shared slurmdbd, so the siblings use differently named ones: the base (and every
sibling but ``qos``) submits ``sqa``/``sqb``/``sqc`` (UsageFactor 1), ``qos`` submits
``sqhalf``/``sqdbl``/``sqnd``; the replay maps ``sqa=0.5``, ``sqb=2`` and NoDecay on ``sqc``.

The joined controllers are restarted at once before the stream (``up.sh --recalc`` in parallel),
so their cycle grids fall within a second of each other; then every job goes to all seven
clusters at once (``usage.sh`` in parallel), ``restart`` is restarted 30 s in while the jobs run,
and one user's job still runs at the capture. Each cluster is captured (``fairtop capture``)
between two of its cycles.

What is asserted:

* **own**: each cluster's jobs replayed under its own settings on its own logged cycles give its
  sshare RawUsage within 1e-6 relative + 1, and the engine on that usage prints every other
  sshare column (NormShares, NormUsage, EffectvUsage, FairShare, LevelFS) as sshare did;
* **sibling**: ``fairtop replay --from BASE`` with the sibling's setting as flags (a subprocess,
  ``--format json``) lands within the noise below of the sibling's sshare (RawUsage; FairShare
  for classic; the NoDecay QOS's usage from ``scontrol show assoc_mgr``), and at least
  :data:`APART` times that noise away from the base's own sshare, for every user the setting
  touches (not the running job's usage without limits, not sb's billing under MAX_TRES: the
  same there). A restart is no flag: the base's jobs on ``restart``'s logged cycles land within
  the timing noise of its sshare.

The noise, per association, is the law applied to what differs between the two clusters' data,
nothing of sshare: ``timing`` = |replay(base's jobs) - replay(sibling's jobs)|, both under the
sibling's policy on the sibling's logged cycles (the clusters start the same job up to 3 s apart:
seven submissions on two cores; sacct's whole seconds are slurmctld's own ``time_t``, the very
numbers the law charged, so its 1-s rounding adds nothing), plus ``grid`` = |the same jobs on the
base's regular grid (what ``fairtop replay --from BASE`` uses) - on the sibling's cycles| (the
cycle-time differences: 0 where the grids fell on the same second, else one second's shift), plus
1e-6 relative + 2 (both sides truncated to whole numbers). For classic's FairShare, the noise is
classic's FairShare on the base's printed usage against on the sibling's (+1e-6, the printed
digits).

Measured in three runs (2-core machine, load 1 to 3, other sandboxes beside): start and end
differences 0 to 3 s; timing noise up to 6.6e6 and grid noise up to 3.6e6 billing-seconds (0.3 %
to 4 % of an association's usage); the smallest asserted distance from the base's own sshare was
10 times the noise (hl: the running job and the 25-s jobs), most are hundreds to 10^5 times;
classic's FairShare 63 to 25,000 times. The restart unknown (the base's regular grid) misses
``restart``'s sshare by 0.6 to 2e5 times the timing noise (a restart loses nothing: the downtime
is charged, only the grid moves): printed, not asserted. Wall time, the start and purge of the
seven clusters included: 22.05 213 to 261 s (setup 54 s), 26.05 174 to 216 s (setup 19 s); both
releases in one pytest run 472 s.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray

from tests.sandbox._sandbox import account_rows, first_env, last_ran, on_release, qos_usage, scripts, sh
from tui.analysis.history import check_raw_usage, job_table
from tui.analysis.reconcile import reconcile
from tui.engine import compute
from tui.engine.usage_law import UsagePolicy, cycle_grid, replay
from tui.model import Snapshot
from tui.slurm_releases import release as slurm_release
from tui.sources.ctld_log import parse_ctld_log
from tui.sources.sacct import AccountedJob, load_saved_history
from tui.sources.saved import load_folder

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox]

#: Release -> (folder prefix, first Slurm port (three per cluster), MariaDB port, SANDBOX_SLURM).
PLACES = {"22.05": ("/tmp/fairtop-sib-2205", 8417, 14906, ""),
          "26.05": ("/tmp/fairtop-sib-2605", 8517, 14916, "/opt/slurm-26.05.3")}
ACCT = "sib"
QOS_BASE = {"a": "sqa", "b": "sqb", "c": "sqc"}
QOS_SIB = {"a": "sqhalf", "b": "sqdbl", "c": "sqnd"}
BILL = "CPU=1000000,Mem=8000000G"
#: Each sibling's settings beyond the base's, and the ``fairtop replay`` flags that say them.
SIBLINGS: dict[str, tuple[dict[str, str], list[str]]] = {
    "restart": ({}, []),  # first: it owns the slurmdbd the others join
    "base": ({}, []),
    "hl": ({"SANDBOX_DECAY": "0:30:00"}, ["--half-life", "30"]),
    "classic": ({"SANDBOX_FLAGS": "NO_FAIR_TREE"}, ["--algorithm", "classic"]),
    "nolim": ({"SANDBOX_ENFORCE": "associations"}, ["--enforce-limits", "no"]),
    "qos": ({}, ["--qos-usage-factor", "sqa=0.5", "--qos-usage-factor", "sqb=2"]),
    "bill": ({"SANDBOX_BILLING": BILL, "SANDBOX_FLAGS": "MAX_TRES"}, ["--billing", f"burn={BILL}", "--max-tres"]),
}
#: (user, CPUs, seconds, QOS key): the job stream, submitted in this order to every cluster.
#: Submitted a few seconds after the aligned cycles, the jobs' last slices (from their last cycle
#: to their end: what ``limits`` charges) are 35 to 45 s, the short ones' all of their 25 s.
JOBS = (("sr", 1, 900, ""), ("sa", 1, 100, ""), ("sb", 2, 105, ""), ("ss", 1, 25, ""), ("ss", 1, 25, ""),
        ("qa", 1, 95, "a"), ("qb", 1, 95, "b"), ("qc", 1, 95, "c"))
USERS = ("sr", "sa", "sb", "ss", "qa", "qb", "qc")
REL = 1e-6
#: A sibling's replay is at least this many times its noise away from the base's own sshare.
APART = 5.0


@dataclass
class Cluster:
    """One sibling after the stream: its capture, jobs, logged cycles and QOS usage."""

    name: str
    env: dict[str, str]
    snap: Snapshot
    folder: Path
    last: float
    jobs: list[AccountedJob]
    cycles: list[float]
    starts: list[float]
    qos_usage: dict[str, float]

    def rows(self) -> dict[str, int]:
        return account_rows(self.snap.tree, ACCT)

    def printed(self) -> NDArray[np.float64]:
        assert self.snap.tree is not None
        return np.asarray(self.snap.tree.usage_raw, dtype=np.float64)

    def policy(self) -> UsagePolicy:
        return UsagePolicy.of(self.snap.settings, self.snap.partitions)


@dataclass
class Run:
    release: str
    clusters: dict[str, Cluster]
    seconds: float


def _envs(rel: str) -> dict[str, dict[str, str]]:
    prefix, port, db, slurm = PLACES[rel]
    common = {k: v for k, v in first_env().items() if not k.startswith("SANDBOX_")}
    if slurm:
        common["PATH"] = f"{slurm}/bin:{slurm}/sbin:{common.get('PATH', '')}"
    common.update(SANDBOX_SLURM=slurm, SANDBOX_DB_PORT=str(db), SANDBOX_DBD_PORT=str(port + 2), SANDBOX_RESTD="0",
                  SANDBOX_DECAY="0:03:00", SANDBOX_ENFORCE="associations,limits", SANDBOX_DEBUG_FLAGS="Priority",
                  SANDBOX_CPUS="12", SANDBOX_MEM_MB="4096", SANDBOX_SELECT_PARAMS="CR_Core_Memory",
                  SANDBOX_MEM="256M", SANDBOX_CALC_PERIOD="1")
    out = {}
    for k, (name, (extra, _)) in enumerate(SIBLINGS.items()):
        folder = f"{prefix}-{name}"
        env = {**common, "SANDBOX_DIR": folder, "SANDBOX_CLUSTER": f"s{name}", "SANDBOX_NODE": f"s{name}-node",
               "SANDBOX_CTLD_PORT": str(port + 3 * k), "SANDBOX_SLURMD_PORT": str(port + 3 * k + 1),
               "SLURM_CONF": f"{folder}/etc/slurm.conf", **extra}
        if name != "restart":
            env["SANDBOX_JOIN"] = f"{prefix}-restart"
        out[name] = env
    return out


def _down(envs: dict[str, dict[str, str]]) -> None:
    """Purge every sibling, the joined ones first (down.sh stops only the PIDs it recorded)."""
    for name in [*reversed(envs)]:
        subprocess.run([str(scripts() / "down.sh"), "--purge"], env=envs[name], capture_output=True, timeout=120,
                       check=False)


def _parallel(calls: list[tuple[dict[str, str], list[str]]]) -> list[str]:
    """Run the scripts or commands at once (each an argument list), their stdouts in order."""
    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(lambda c: sh(c[0], *c[1]), calls))


def _submit_everywhere(envs: dict[str, dict[str, str]], user: str, cpus: int, secs: int, q: str) -> None:
    calls = []
    for name, env in envs.items():
        qos = (QOS_SIB if name == "qos" else QOS_BASE).get(q, "")
        calls.append(({**env, "SANDBOX_QOS": qos} if qos else env, ["usage.sh", user, ACCT, str(cpus), str(secs)]))
    _parallel(calls)


def _running_only(envs: dict[str, dict[str, str]], user: str, timeout: float = 300) -> None:
    """Until every cluster's queue holds only ``user``'s jobs."""
    end = time.monotonic() + timeout
    for env in envs.values():
        while set(sh(env, "squeue", "-h", "-o", "%u").split()) - {user}:
            assert time.monotonic() < end, "jobs still queued"
            time.sleep(1)


def _next_cycle_everywhere(envs: dict[str, dict[str, str]], timeout: float = 150) -> None:
    seen = {n: last_ran(e) for n, e in envs.items()}
    end = time.monotonic() + timeout
    while any(last_ran(e) == seen[n] for n, e in envs.items()):
        assert time.monotonic() < end, "no decay cycle within the timeout"
        time.sleep(0.5)


def _capture(name: str, env: dict[str, str], tmp: Path) -> Cluster:
    """``fairtop capture`` between two of the cluster's cycles, its QOS usage, and its cycles
    (from its log) since the controller the stream started under."""
    folder = tmp / name
    for _ in range(3):
        cycle = last_ran(env)
        shutil.rmtree(folder, ignore_errors=True)
        sh(env, sys.executable, "-m", "tui.cli", "capture", str(folder), timeout=120)
        qos = qos_usage(env)
        if last_ran(env) == cycle:
            break
    (folder / "qos_usage.json").write_text(json.dumps(qos))
    log = Path(env["SANDBOX_DIR"], "log", "slurmctld.log").read_bytes()
    return load_cluster(name, env, folder, log, qos)


def load_cluster(name: str, env: dict[str, str], folder: Path, log: bytes, qos: dict[str, float]) -> Cluster:
    """A captured sibling: its capture, its jobs and its cycles from its log up to the capture's."""
    snap = load_folder(folder)
    jobs, last = load_saved_history(folder)
    assert last is not None, name
    cycle = last.timestamp()
    ctld = parse_ctld_log(log)
    jobs = [j for j in jobs if j.account == ACCT]
    first = min(j.start.timestamp() for j in jobs)
    anchor = max(s for s in ctld.starts if s < first)
    cycles = [c for c in ctld.cycles if math.floor(anchor) <= c <= cycle]
    period = snap.settings.calc_period_s
    if cycles and math.floor(anchor) <= cycles[0] - period < anchor + 2:
        cycles.insert(0, cycles[0] - period)  # the start's own cycle, run before the log level was raised
    assert cycles and cycles[-1] == cycle, (name, cycles[-3:], cycle)
    return Cluster(name, env, snap, folder, cycle, jobs, cycles, [s for s in ctld.starts if s >= anchor], qos)


def _release_params() -> list[object]:
    return [pytest.param(rel, marks=on_release(rel), id=rel) for rel in PLACES]


@pytest.fixture(scope="module", params=_release_params())
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    rel: str = request.param
    if PLACES[rel][3] and not Path(PLACES[rel][3], "sbin", "slurmctld").is_file():
        pytest.skip(f"Slurm {rel} not built at {PLACES[rel][3]} (shared/slurm-sandbox/build.sh)")
    tmp = tmp_path_factory.mktemp(f"sib{rel.replace('.', '')}")
    envs = _envs(rel)
    t0 = time.monotonic()
    _down(envs)  # what a killed run left
    try:
        for env in envs.values():  # "restart" first: the others join its slurmdbd
            sh(env, "up.sh", timeout=300)
        base = envs["base"]
        owner = envs["restart"]
        for q, factor in (("a", "1"), ("b", "1"), ("c", "1")):
            sh(base, "qos.sh", QOS_BASE[q], f"UsageFactor={factor}")
        sh(base, "qos.sh", QOS_SIB["a"], "UsageFactor=0.5")
        sh(base, "qos.sh", QOS_SIB["b"], "UsageFactor=2")
        sh(base, "qos.sh", QOS_SIB["c"], "Flags=NoDecay")
        spec = tmp / "spec.txt"
        spec.write_text(f"account root {ACCT} 50\n" + "".join(f"user {ACCT} {u} {k + 1}\n" for k, u in
                                                            enumerate(USERS)))
        sh(base, "tree.sh", str(spec))
        names = ",".join(e["SANDBOX_CLUSTER"] for n, e in envs.items() if n != "base")
        sh(base, "sacctmgr", "-i", "add", "account", ACCT, f"cluster={names}", "fairshare=50")
        for k, user in enumerate(USERS):
            sh(base, "sacctmgr", "-i", "add", "user", user, f"account={ACCT}", f"cluster={names}",
               f"fairshare={k + 1}")
        qos_list = ",".join([*QOS_BASE.values(), *QOS_SIB.values()])
        sh(base, "sacctmgr", "-i", "modify", "account", "root", "where", f"cluster={names}", "set",
           f"qos+={qos_list}")
        # the joined controllers restarted at once: their cycle grids, anchored at their starts, then
        # fall within a second or two of each other (fairtop replay --from BASE runs on the base's).
        # Not "restart": its up.sh rewrites the slurmdbd.conf the others read; it re-anchors later.
        _parallel([(env, ["up.sh", "--recalc"]) for name, env in envs.items() if name != "restart"])
        for env in envs.values():  # classic logs no Fair Tree dump: "Decay factor over N seconds"
            sh(env, "scontrol", "setdebug", "verbose")  # (verbose) then names its cycles
        setup = time.monotonic() - t0
        for user, cpus, secs, q in JOBS:
            _submit_everywhere(envs, user, cpus, secs, q)
        time.sleep(30)
        sh(owner, "up.sh", "--recalc", timeout=180)  # while every job but the short ones runs
        _running_only(envs, "sr")
        _next_cycle_everywhere(envs)
        with ThreadPoolExecutor(len(envs)) as pool:
            caps = list(pool.map(lambda item: _capture(item[0], item[1], tmp), envs.items()))
        print(f"\nsiblings {rel}: setup {setup:.0f} s, total {time.monotonic() - t0:.0f} s")
        yield Run(rel, {c.name: c for c in caps}, time.monotonic() - t0)
    finally:
        for name, env in envs.items():
            log = Path(env["SANDBOX_DIR"], "log", "slurmctld.log")
            if log.is_file():  # kept for a post-mortem: the sandboxes themselves are purged
                shutil.copy(log, tmp / f"slurmctld-{name}.log")
        _down(envs)


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _law(jobs: list[AccountedJob], onto: Cluster, policy: UsagePolicy, cycles: list[float] | NDArray[np.float64],
         until: float) -> NDArray[np.float64]:
    """``jobs`` (any cluster's) on ``onto``'s tree under ``policy`` over ``cycles``."""
    tree = onto.snap.tree
    assert tree is not None
    table, unmatched = job_table(jobs, tree, policy)
    assert not unmatched, unmatched
    return replay(table, tree.parent, np.asarray(cycles, dtype=np.float64), policy, until=until).usage


def _mapped(sib: Cluster) -> UsagePolicy:
    """The sibling's policy with its QOS renamed to the base's."""
    pol = sib.policy()
    if sib.name != "qos":
        return pol
    back = {QOS_SIB[k]: QOS_BASE[k] for k in QOS_SIB}
    return replace(pol, qos_usage_factor={back.get(q, q): f for q, f in pol.qos_usage_factor.items()},
                   no_decay_qos=frozenset(back.get(q, q) for q in pol.no_decay_qos))


def _replay_cli(base: Cluster, flags: list[str]) -> list[dict[str, object]]:
    done = subprocess.run([sys.executable, "-m", "tui.cli", "replay", "--from", str(base.folder), *flags,
                           "--format", "json"], env=base.env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-1500:]
    return list(json.loads(done.stdout))


def _by_row(cap: Cluster, rows: list[dict[str, object]]) -> dict[int, dict[str, object]]:
    index = {(str(r["account"]), str(r["user"])): r for r in rows}
    tree = cap.snap.tree
    assert tree is not None
    return {i: index[(str(tree.account[i]), str(tree.user[i]))] for i in cap.rows().values()}


def _noise(base: Cluster, sib: Cluster, grid_too: bool = True) -> tuple[NDArray[np.float64], dict[str, float]]:
    """Per association: the timing and (``grid_too``) the grid noise of replaying the base's jobs
    as the sibling (module docstring), and the figures behind them."""
    pol = _mapped(sib)
    sib_pol = sib.policy()
    mine = _law(base.jobs, sib, pol, sib.cycles, sib.snap.taken_at.timestamp())
    theirs = _law(sib.jobs, sib, sib_pol, sib.cycles, sib.snap.taken_at.timestamp())
    grid = cycle_grid(base.last, pol.calc_period_s, base.cycles[0])
    on_base = _law(base.jobs, sib, pol, grid, base.snap.taken_at.timestamp())
    timing, gridn = np.abs(mine - theirs), np.abs(on_base - mine)
    a = sorted(base.jobs, key=lambda j: int(j.job_id.split("_")[0]) if j.job_id.split("_")[0].isdigit() else 0)
    b = sorted(sib.jobs, key=lambda j: int(j.job_id.split("_")[0]) if j.job_id.split("_")[0].isdigit() else 0)
    assert [j.user for j in a] == [j.user for j in b]
    ds = max(abs(x.start.timestamp() - y.start.timestamp()) for x, y in zip(a, b))
    de = max(abs(x.end.timestamp() - y.end.timestamp()) for x, y in zip(a, b) if x.end and y.end)
    printed = sib.printed()
    return timing + (gridn if grid_too else 0.0) + REL * np.abs(printed) + 2.0, {"start_s": ds, "end_s": de,
                                                          "timing": float(timing.max()), "grid": float(gridn.max())}


# --------------------------------------------------------------------------------------------
# Own: each cluster's jobs under its own policy are its sshare
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(SIBLINGS))
def test_own_replay_is_its_sshare(run: Run, name: str) -> None:
    cap = run.clusters[name]
    tree = cap.snap.tree
    assert tree is not None
    rows = cap.rows()
    check = check_raw_usage(cap.jobs, tree, cap.snap.settings, None, cap.snap.taken_at, cycles=cap.cycles,
                            partitions=cap.snap.partitions, anchors=cap.starts)
    for label, i in rows.items():
        row = check.rows[i]
        assert abs(row.diff) <= REL * row.printed + 1.0, (name, label, row.printed, row.rebuilt)
    assert check.rows[rows["sa"]].printed > 1e7
    rebuilt = np.array([r.rebuilt for r in check.rows])
    usage = np.where(np.isin(np.arange(tree.size), list(rows.values())), np.floor(rebuilt + 1e-9),
                     np.asarray(tree.usage_raw, dtype=np.float64))
    ours = replace(tree, usage_raw=usage.astype(np.longdouble))
    settings = cap.snap.settings
    assert cap.snap.printed is not None
    agreed = reconcile(ours, compute(ours, settings.algorithm, settings.dampening), cap.snap.printed,
                       settings.dampening, skip=cap.snap.usage_unknown,
                       release=slurm_release(cap.snap.scheduler_version))
    assert agreed.checked >= 4 * len(rows) and not agreed.disagreements, agreed.disagreements[:5]


def test_restart_and_running_job_are_in_the_stream(run: Run) -> None:
    cap = run.clusters["restart"]
    assert len(cap.starts) >= 2  # the restart mid-stream
    assert np.any(np.diff(cap.cycles) % 60 != 0), np.diff(cap.cycles)  # re-anchored off the old grid
    for c in run.clusters.values():
        [job] = [j for j in c.jobs if j.user == "sr"]
        assert job.end is None and job.state == "RUNNING"


# --------------------------------------------------------------------------------------------
# Sibling: the base replayed as the sibling is the sibling's sshare, apart from the base's own
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["hl", "nolim", "qos", "bill"])
def test_base_replayed_as_a_sibling_is_the_siblings_sshare(run: Run, name: str,
                                                            capsys: pytest.CaptureFixture[str]) -> None:
    base, sib = run.clusters["base"], run.clusters[name]
    noise, figures = _noise(base, sib)
    got = _by_row(base, _replay_cli(base, SIBLINGS[name][1]))
    bases, sibs = base.printed(), sib.printed()
    brows, srows = base.rows(), sib.rows()
    ratios = {}
    for label, i in brows.items():
        j = srows[label]
        value = float(got[i]["raw_usage"])  # type: ignore[arg-type]
        assert abs(value - sibs[j]) <= noise[j], (name, label, value, sibs[j], noise[j])
        ratios[label] = abs(value - bases[i]) / noise[j]
    # what the setting changes: not the running job's usage without limits (its end is not
    # reached), only the factored QOS, not sb's billing (2 CPUs and 256 MB: the same under MAX_TRES)
    moved = {"hl": USERS, "nolim": ("sa", "sb", "ss", "qa", "qb", "qc"), "qos": ("qa", "qb"),
             "bill": ("sr", "sa", "ss", "qa", "qb", "qc")}[name]
    with capsys.disabled():
        print(f"\n{run.release} {name}: noise {figures}, distance from base / noise:",
              {k: f"{v:.0f}" for k, v in ratios.items()})
    for label in moved:
        assert ratios[label] >= APART, (name, label, ratios)


def test_no_decay_qos_replayed(run: Run) -> None:
    """The NoDecay QOS's own usage: the base's jobs under the mapped policy give the ``qos``
    sibling's, apart from the base's decayed one."""
    base, sib = run.clusters["base"], run.clusters["qos"]
    pol = _mapped(sib)
    tree = sib.snap.tree
    assert tree is not None
    table, _ = job_table(base.jobs, tree, pol)
    mine = replay(table, tree.parent, np.asarray(sib.cycles), pol, until=sib.snap.taken_at.timestamp()).qos
    table2, _ = job_table(sib.jobs, tree, sib.policy())
    theirs = replay(table2, tree.parent, np.asarray(sib.cycles), sib.policy(),
                    until=sib.snap.taken_at.timestamp()).qos
    printed, own = sib.qos_usage[QOS_SIB["c"]], base.qos_usage[QOS_BASE["c"]]
    assert abs(theirs[QOS_SIB["c"]] - printed) <= REL * printed + 1
    noise = abs(mine[QOS_BASE["c"]] - theirs[QOS_SIB["c"]]) + REL * printed + 2
    assert abs(mine[QOS_BASE["c"]] - printed) <= noise
    assert abs(own - printed) >= APART * noise, (own, printed, noise)


def test_classic_replay_prints_the_classic_siblings_fairshare(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    base, sib = run.clusters["base"], run.clusters["classic"]
    got = _by_row(base, _replay_cli(base, SIBLINGS["classic"][1]))
    assert sib.snap.printed is not None and base.snap.printed is not None
    brows, srows = base.rows(), sib.rows()
    tree = sib.snap.tree
    assert tree is not None
    # the FairShare noise: classic on the sibling's usage against classic on the base's usage
    assert base.snap.tree is not None
    where = {(str(base.snap.tree.account[i]), str(base.snap.tree.user[i])): i for i in range(base.snap.tree.size)}
    b_usage = np.array([base.printed()[where[(str(tree.account[j]), str(tree.user[j]))]] for j in range(tree.size)])
    fs_sib = np.asarray(compute(sib.snap.tree, "classic", 1.0).fairshare, dtype=np.float64)  # type: ignore[arg-type]
    fs_b = np.asarray(compute(replace(tree, usage_raw=b_usage.astype(np.longdouble)), "classic", 1.0).fairshare,
                      dtype=np.float64)
    far = {}
    for user in USERS:
        i, j = brows[user], srows[user]
        value = float(got[i]["fairshare"])  # type: ignore[arg-type]
        printed = float(sib.snap.printed["FairShare"][j])
        own = float(base.snap.printed["FairShare"][i])
        noise = abs(fs_sib[j] - fs_b[j]) + 1e-6
        assert abs(value - printed) <= noise, (user, value, printed, noise)
        far[user] = abs(value - own) / noise
    with capsys.disabled():
        print(f"\n{run.release} classic: FairShare distance from base / noise:",
              {k: f"{v:.0f}" for k, v in far.items()})
    assert max(far.values()) >= APART, far


def test_restart_base_on_the_restarted_cycles(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    """The restart is no flag: the base's jobs on the restarted sibling's logged cycles give its
    sshare within the jobs' timing noise alone (the cycles are the sibling's own); on the base's
    regular grid (the restart unknown) they miss it by the figure printed."""
    base, sib = run.clusters["base"], run.clusters["restart"]
    noise, figures = _noise(base, sib, grid_too=False)
    until = sib.snap.taken_at.timestamp()
    mine = _law(base.jobs, sib, sib.policy(), sib.cycles, until)
    regular = cycle_grid(base.last, 60, base.cycles[0])
    unknown = _law(base.jobs, sib, sib.policy(), regular, base.snap.taken_at.timestamp())
    sibs = sib.printed()
    ratios = {}
    for label, j in sib.rows().items():
        assert abs(mine[j] - sibs[j]) <= noise[j], (label, mine[j], sibs[j], noise[j])
        ratios[label] = abs(unknown[j] - sibs[j]) / noise[j]
    with capsys.disabled():
        print(f"\n{run.release} restart: noise {figures}, restart unknown (the base's grid) - sshare / noise:",
              {k: f"{v:.1f}" for k, v in ratios.items()})
    assert len(sib.starts) >= 2
