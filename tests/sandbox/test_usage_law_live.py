"""Integration: Slurm's usage law (tui.engine.usage_law) against a real slurmctld, 22.05 and 26.05.

One run of the sandbox (about four minutes) at a one-hour half-life, ``AccountingStorageEnforce=
associations`` (no ``limits``), a fractional billing weight ``CPU=1000.5`` and ``DebugFlags=
Priority`` (slurmctld then logs every decay cycle, so the replay runs on the controller's own
cycle times), with one user per law item, all at once on 16 CPUs:

* ``lawshort``: two 20-s jobs between two cycles: never charged without ``limits``;
* ``lawhalf`` / ``lawdbl``: a 75-s job in a QOS with UsageFactor 0.5 / 2;
* ``lawnd``: a 75-s job in a QOS with Flags=NoDecay (the QOS's usage is not decayed, the
  association's is);
* ``lawrq``: a job requeued after a cycle charged its first run (``sacct -D`` lists both runs);
* ``lawrun``: a job that runs through a slurmctld restart (the downtime is charged and decayed at
  the restart's first cycle, and the grid re-anchors) and is still running at the capture.

Each test asserts RawUsage agrees with sshare within 1e-6 relative + 1 and that the law without
its item does not. The run has its own sandbox per release (:data:`PLACES`: own folder and ports;
26.05 is marked ``slurm_release``), started and purged here: its restart with
``PriorityUsageResetPeriod=NOW`` zeroes every association's usage and its QOS stay behind, which
would spoil CI's sandbox for the modules after this one.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from tests.sandbox._sandbox import (
    account_rows,
    after_a_cycle,
    last_ran,
    on_release,
    own_env,
    purge_keeping_log,
    qos_usage,
    sh,
)
from tui.analysis.history import HistoryCheck, check_raw_usage, job_table
from tui.engine.usage_law import UsagePolicy, cycle_grid, replay
from tui.model import Snapshot
from tui.sources.ctld_log import parse_ctld_log
from tui.sources.sacct import AccountedJob, load_saved_history
from tui.sources.saved import load_folder

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox]

#: This module's sandbox per release: folder, first of three Slurm ports, MariaDB port (beside CI's
#: 6817-6819/13306 and the other tests' and engineers' sandboxes), SANDBOX_SLURM (empty: Debian's 22.05).
PLACES = {"22.05": ("/tmp/fairtop-law-sandbox", 8317, 14806, ""),
          "26.05": ("/tmp/fairtop-law-sandbox-2605", 8617, 15006, "/opt/slurm-26.05.3")}
USERS = ("lawshort", "lawhalf", "lawdbl", "lawnd", "lawrun", "lawrq")
REL = 1e-6


@dataclass
class Capture:
    """One ``fairtop capture`` pinned to a decay cycle, the QOS usage slurmctld held then and the
    controller's cycles up to it (from its log)."""

    acct: str
    snap: Snapshot
    last: datetime
    jobs: list[AccountedJob]
    cycles: list[float]
    starts: list[float]
    qos_usage: dict[str, float]

    def rows(self) -> dict[str, int]:
        return account_rows(self.snap.tree, self.acct)

    def check(self, **kw: object) -> HistoryCheck:
        assert self.snap.tree is not None
        args: dict[str, object] = {"cycles": self.cycles, "partitions": self.snap.partitions, "anchors": self.starts}
        args.update(kw)
        return check_raw_usage(self.jobs, self.snap.tree, self.snap.settings, self.last, self.snap.taken_at,
                               **args)  # type: ignore[arg-type]


@dataclass
class Run:
    """Before: the jobs done but lawrun's; after: a restart with PriorityUsageResetPeriod=NOW."""

    qos: dict[str, str]
    before: Capture
    after: Capture
    env: dict[str, str]
    requeued: str


def _submit(env: dict[str, str], user: str, acct: str, cpus: int, seconds: int, qos: str = "") -> str:
    run_env = {**env, "SANDBOX_QOS": qos} if qos else env
    return sh(run_env, "usage.sh", user, acct, str(cpus), str(seconds)).strip().split()[-1]


def _wait_only(env: dict[str, str], *jobs: str, timeout: float = 200) -> None:
    """Until no job but ``jobs`` is in the queue."""
    end = time.monotonic() + timeout
    while True:
        ids = sh(env, "squeue", "-h", "-o", "%i").split()
        if set(ids) <= set(jobs):
            return
        assert time.monotonic() < end, f"jobs still queued: {ids}"
        time.sleep(1)


def _law_env(rel: str) -> dict[str, str]:
    """The environment of this module's own sandbox of release ``rel``: the law's settings, its
    folder and ports."""
    return own_env(*PLACES[rel], SANDBOX_DECAY="1:00:00", SANDBOX_ENFORCE="associations",
                   SANDBOX_DEBUG_FLAGS="Priority", SANDBOX_CPUS="16", SANDBOX_BILLING_CPU="1000.5",
                   SANDBOX_BILLING="CPU=1000.5")


@pytest.fixture(scope="module", params=[pytest.param(rel, marks=on_release(rel), id=rel) for rel in PLACES])
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    rel: str = request.param
    if PLACES[rel][3] and not Path(PLACES[rel][3], "sbin", "slurmctld").is_file():
        pytest.skip(f"Slurm {rel} not built at {PLACES[rel][3]} (shared/slurm-sandbox/build.sh)")
    tmp = tmp_path_factory.mktemp("law" + rel.replace(".", ""))
    law = _law_env(rel)
    acct = "law"  # a fresh sandbox: no earlier run's jobs to avoid
    qos = {"half": "qhalf", "dbl": "qdbl", "nd": "qnd"}
    sh(law, "down.sh", "--purge", timeout=120)  # a sandbox left by a killed run
    with pytest.MonkeyPatch.context() as mp:  # SLURM_CONF and PATH of this sandbox, put back after
        try:
            sh(law, "up.sh", timeout=300)
            sh(law, "qos.sh", qos["half"], "UsageFactor=0.5")
            sh(law, "qos.sh", qos["dbl"], "UsageFactor=2")
            sh(law, "qos.sh", qos["nd"], "Flags=NoDecay")
            spec = Path(law["SLURM_CONF"]).parent / "fairtop_law_spec.txt"
            spec.write_text(f"account root {acct} 50\n" + "".join(f"user {acct} {u} 1\n" for u in USERS))
            sh(law, "tree.sh", str(spec))
            after_a_cycle(law, within=10)  # the short jobs then start and end well inside one period
            long_job = _submit(law, "lawrun", acct, 1, 900)
            _submit(law, "lawshort", acct, 1, 20)
            _submit(law, "lawshort", acct, 1, 20)
            _submit(law, "lawhalf", acct, 2, 75, qos["half"])
            _submit(law, "lawdbl", acct, 2, 75, qos["dbl"])
            _submit(law, "lawnd", acct, 2, 75, qos["nd"])
            requeued = _submit(law, "lawrq", acct, 1, 900)
            jobs_started = last_ran(law)
            while last_ran(law) == jobs_started:  # its first run charged by a cycle, then requeued
                time.sleep(0.5)
            sh(law, "scontrol", "requeue", requeued)
            _wait_only(law, long_job, requeued)
            mp.setenv("SLURM_CONF", law["SLURM_CONF"])
            mp.setenv("PATH", law["PATH"])
            before = _capture(law, tmp / "before", acct)
            reset = {**law, "SANDBOX_RESET_PERIOD": "NOW"}
            sh(reset, "up.sh", timeout=180)  # a restart (slurm.conf changed) while lawrun's job runs
            restart_cycle = last_ran(reset)
            while last_ran(reset) == restart_cycle:  # one more cycle on the re-anchored grid
                time.sleep(0.5)
            time.sleep(3)  # lawrun's job then runs on past the last cycle when captured
            after = _capture(reset, tmp / "after", acct)
            yield Run(qos, before, after, law, requeued)
        finally:
            purge_keeping_log(law, tmp)


def _capture(env: dict[str, str], folder: Path, acct: str) -> Capture:
    """``fairtop capture`` (sshare, sacct -D, the QOS table, the last cycle) between two cycles,
    and the cycles since the controller our jobs started under, from its log."""
    from tui.sources import slurm_cli

    for _ in range(3):
        cycle = last_ran(env)
        slurm_cli.capture(folder, timeout=60)
        held = qos_usage(env)
        if last_ran(env) == cycle:
            break
    snap = load_folder(folder)
    jobs, last = load_saved_history(folder)
    assert last is not None and last.timestamp() == cycle, "the capture saved no last decay cycle"
    log = parse_ctld_log(Path(env["SANDBOX_DIR"], "log", "slurmctld.log").read_bytes())
    jobs = [j for j in jobs if j.account == acct]
    first_start = min(j.start.timestamp() for j in jobs)
    anchor = max(s for s in log.starts if s < first_start)
    cycles = [c for c in log.cycles if math.floor(anchor) <= c <= last.timestamp()]
    assert cycles and cycles[-1] == last.timestamp(), (cycles[-3:], last)
    return Capture(acct, snap, last, jobs, cycles, [s for s in log.starts if s >= anchor], held)


def _agree(check: HistoryCheck, rows: dict[str, int], names: tuple[str, ...]) -> dict[str, float]:
    """Rebuilt vs printed of ``names``: within 1e-6 relative + 1; their relative differences."""
    got = {}
    for name in names:
        row = check.rows[rows[name]]
        assert abs(row.diff) <= REL * row.printed + 1.0, (name, row.printed, row.rebuilt)
        got[name] = 0.0 if row.printed == 0 else row.diff / row.printed
    return got


def _disagree(check: HistoryCheck, rows: dict[str, int], name: str) -> None:
    row = check.rows[rows[name]]
    assert abs(row.diff) > REL * row.printed + 1.0, (name, row.printed, row.rebuilt)


def _with(cap: Capture, **settings: object) -> HistoryCheck:
    """The check of ``cap`` under other settings (the law without one of its items)."""
    changed = replace(cap.snap.settings, **settings)  # type: ignore[arg-type]
    assert cap.snap.tree is not None
    return check_raw_usage(cap.jobs, cap.snap.tree, changed, cap.last, cap.snap.taken_at, cycles=cap.cycles,
                           partitions=cap.snap.partitions, anchors=cap.starts)


def test_every_association_matches_sshare(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    for cap in (run.before, run.after):
        rows = cap.rows()
        rel = _agree(cap.check(), rows, (cap.acct, *USERS))
        with capsys.disabled():  # the measured differences, for pytest -s
            print(f"\nusage law vs sshare (rebuilt - printed) / printed, {cap.snap.settings.usage_reset_period}:",
                  {k: f"{v:.1e}" for k, v in rel.items()}, "last gaps (s):", np.diff(cap.cycles[-4:]).tolist())
    assert run.before.check().rows[run.before.rows()["lawhalf"]].printed > 1e4


def test_short_jobs_without_limits_charge_nothing(run: Run) -> None:
    cap = run.before
    rows = cap.rows()
    assert cap.snap.settings.accounting_enforce == {"associations"}
    assert cap.check().rows[rows["lawshort"]].printed == 0  # sshare: two 20-s jobs, RawUsage 0
    assert len([j for j in cap.jobs if j.user == "lawshort"]) == 2
    _disagree(_with(cap, accounting_enforce=frozenset({"associations", "limits"})), rows, "lawshort")


def test_qos_usage_factor(run: Run) -> None:
    cap = run.before
    rows = cap.rows()
    factors = cap.snap.settings.qos_usage_factors  # from the capture's sacctmgr_qos.psv
    assert (factors[run.qos["half"]], factors[run.qos["dbl"]]) == (0.5, 2.0)
    _agree(cap.check(), rows, ("lawhalf", "lawdbl"))
    without = _with(cap, qos_usage_factors={})
    _disagree(without, rows, "lawhalf")
    _disagree(without, rows, "lawdbl")


def test_no_decay_qos_keeps_its_usage_undecayed(run: Run) -> None:
    cap = run.before
    tree = cap.snap.tree
    assert tree is not None
    nd, half = run.qos["nd"], run.qos["half"]
    assert nd in cap.snap.settings.qos_no_decay
    _agree(cap.check(), cap.rows(), ("lawnd",))  # the association decays as any other
    policy = UsagePolicy.of(cap.snap.settings, cap.snap.partitions)
    table, _ = job_table(cap.jobs, tree, policy)
    qos = replay(table, tree.parent, cap.cycles, policy).qos
    printed = cap.qos_usage[nd]
    assert printed > 1e4 and abs(qos[nd] - printed) <= REL * printed + 1.0, (qos[nd], printed)
    assert abs(qos[half] - cap.qos_usage[half]) <= REL * cap.qos_usage[half] + 1.0  # no NoDecay: decayed
    decayed = replay(table, tree.parent, cap.cycles, replace(policy, no_decay_qos=frozenset())).qos[nd]
    assert abs(decayed - printed) > REL * printed + 1.0, (decayed, printed)
    assert run.after.qos_usage[nd] == 0  # PriorityUsageResetPeriod resets a NoDecay QOS too (22.05 code)


def test_reset_now_zeroes_usage_at_the_restarts_first_cycle(run: Run) -> None:
    cap = run.after
    rows = cap.rows()
    assert cap.snap.settings.usage_reset_period == "NOW"
    check = cap.check()
    _agree(check, rows, ("lawhalf", "lawdbl", "lawnd", "lawrun", cap.acct))
    assert check.rows[rows["lawhalf"]].printed == 0 and check.rows[rows["lawrun"]].printed > 1e4
    _disagree(cap.check(anchors=()), rows, "lawhalf")  # the reset unknown: their old usage, decayed


def test_restart_reanchors_the_grid_and_charges_the_downtime(run: Run) -> None:
    cap = run.after
    rows = cap.rows()
    gaps = np.diff(cap.cycles)
    assert np.any(gaps % 60 != 0), gaps  # the restart's first cycle is off the old grid
    _agree(cap.check(), rows, ("lawrun",))
    regular = cycle_grid(cap.cycles[-1], 60, cap.cycles[0]).tolist()
    _disagree(cap.check(cycles=regular), rows, "lawrun")


@pytest.mark.parametrize("which", ["before", "after"])
def test_a_job_running_at_the_capture_is_charged_up_to_the_last_cycle(run: Run, which: str) -> None:
    cap: Capture = getattr(run, which)
    rows = cap.rows()
    mine = [j for j in cap.jobs if j.user == "lawrun"]
    assert len(mine) == 1 and mine[0].end is None and mine[0].state == "RUNNING"
    _agree(cap.check(), rows, ("lawrun",))
    if math.isclose(cap.snap.taken_at.timestamp(), cap.last.timestamp(), abs_tol=1.0):
        pytest.skip("captured within a second of the cycle")
    # charged up to the capture instead (as if it ended then, with limits): beyond the tolerance
    ended = replace(cap, jobs=[replace(j, end=cap.snap.taken_at) if j.user == "lawrun" else j for j in cap.jobs])
    _disagree(_with(ended, accounting_enforce=frozenset({"limits"})), rows, "lawrun")


def test_billing_is_recomputed_from_alloc_tres(run: Run) -> None:
    cap = run.before
    rows = cap.rows()
    assert any(p.billing_weights == {"cpu": 1000.5} for p in cap.snap.partitions)
    assert {j.billing for j in cap.jobs if j.user == "lawrun"} == {1000.0}  # sacct: the truncated integer
    _agree(cap.check(), rows, ("lawrun", "lawhalf"))
    _disagree(cap.check(partitions=()), rows, "lawrun")  # sacct's billing= alone is 0.05 % short


def test_a_requeued_jobs_every_run_counts(run: Run) -> None:
    cap = run.before
    rows = cap.rows()
    runs = [j for j in cap.jobs if j.user == "lawrq"]
    assert runs[0].state == "REQUEUED" and runs[0].end is not None, runs  # sacct -D: the first run too
    _agree(cap.check(), rows, ("lawrq",))
    assert cap.check().rows[rows["lawrq"]].printed > 1e4
    plain = sh(run.env, "sacct", "-a", "-P", "-X", "-n", "-j", run.requeued, "-o", "JobID,State").split()
    assert len(plain) == 1 and len(runs) >= 2 or runs[-1].state == "REQUEUED", (plain, runs)  # sacct: last run only
    _disagree(replace(cap, jobs=[j for j in cap.jobs if j is not runs[0]]).check(), rows, "lawrq")  # without -D
