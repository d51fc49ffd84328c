"""Integration: Slurm's usage law (tui.engine.usage_law) against a real 22.05 slurmctld.

One run of the sandbox (about four minutes) at a one-hour half-life, ``AccountingStorageEnforce=
associations`` (no ``limits``), a fractional billing weight ``CPU=1000.5`` and ``DebugFlags=
Priority`` (slurmctld then logs every decay cycle, so the replay runs on the controller's own
cycle times), with one user per law item, all at once on 16 CPUs:

* ``lawshort``: two 20-s jobs between two cycles: never charged without ``limits``;
* ``lawhalf`` / ``lawdbl``: a 75-s job in a QOS with UsageFactor 0.5 / 2;
* ``lawnd``: a 75-s job in a QOS with Flags=NoDecay (the QOS's usage is not decayed, the
  association's is);
* ``lawrun``: a job that runs through a slurmctld restart (the downtime is charged and decayed at
  the restart's first cycle, and the grid re-anchors) and is still running at the capture.

Each test asserts RawUsage agrees with sshare within 1e-6 relative + 1 and that the law without
its item does not. The sandbox's settings are restored afterwards and the account deleted.
"""

from __future__ import annotations

import math
import os
import re
import subprocess
import time
from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from pathlib import Path

import numpy as np
import pytest

from tests.sandbox._sandbox import SKIP, after_a_cycle, cluster_name, first_env, sh, unique
from tui.analysis.history import HistoryCheck, check_raw_usage, job_table
from tui.engine.usage_law import UsagePolicy, cycle_grid, replay
from tui.model import Snapshot
from tui.sources.ctld_log import parse_ctld_log
from tui.sources.sacct import AccountedJob, load_saved_history, read_last_decay_ran
from tui.sources.saved import load_folder

pytestmark = [pytest.mark.sandbox, SKIP]

USERS = ("lawshort", "lawhalf", "lawdbl", "lawnd", "lawrun")
REL = 1e-6


@dataclass
class Run:
    """What the scenario left: the capture and the controller's cycles."""

    env: dict[str, str]
    acct: str
    qos: dict[str, str]
    snap: Snapshot
    last: datetime
    jobs: list[AccountedJob]
    cycles: list[float]
    starts: list[float]
    qos_usage: dict[str, float]

    def rows(self) -> dict[str, int]:
        tree = self.snap.tree
        assert tree is not None
        return {str(tree.user[i]) or str(tree.account[i]): i for i in range(tree.size)
                if str(tree.account[i]) == self.acct}

    def check(self, **kw: object) -> HistoryCheck:
        assert self.snap.tree is not None
        args: dict[str, object] = {"cycles": self.cycles, "partitions": self.snap.partitions}
        args.update(kw)
        return check_raw_usage(self.jobs, self.snap.tree, self.snap.settings, self.last, self.snap.taken_at,
                               **args)  # type: ignore[arg-type]


def _qos_usage(env: dict[str, str]) -> dict[str, float]:
    text = sh(env, "scontrol", "show", "assoc_mgr", "flags=qos")
    return {m.group(1): float(m.group(2)) for m in re.finditer(r"QOS=(\S+)\(\d+\)\s+UsageRaw=([0-9.]+)", text)}


def _submit(env: dict[str, str], user: str, acct: str, cpus: int, seconds: int, qos: str = "") -> str:
    run_env = {**env, "SANDBOX_QOS": qos} if qos else env
    return sh(run_env, "usage.sh", user, acct, str(cpus), str(seconds)).strip().split()[-1]


def _wait_only(env: dict[str, str], job: str, timeout: float = 200) -> None:
    """Until no job but ``job`` is in the queue."""
    end = time.monotonic() + timeout
    while True:
        ids = sh(env, "squeue", "-h", "-o", "%i").split()
        if ids == [job] or not ids:
            return
        assert time.monotonic() < end, f"jobs still queued: {ids}"
        time.sleep(1)


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    from tui.sources import slurm_cli

    tmp = tmp_path_factory.mktemp("law")
    env = first_env()
    law = {**env, "SANDBOX_DECAY": "1:00:00", "SANDBOX_ENFORCE": "associations", "SANDBOX_DEBUG_FLAGS": "Priority",
           "SANDBOX_CPUS": "16", "SANDBOX_BILLING_CPU": "1000.5", "SANDBOX_BILLING": "CPU=1000.5"}
    acct = unique("law")
    qos = {"half": unique("lawhalf"), "dbl": unique("lawdbl"), "nd": unique("lawnd")}
    long_job = ""
    saved_env = {k: os.environ.get(k) for k in ("SLURM_CONF", "PATH")}
    try:
        sh(law, "up.sh", timeout=180)
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
        _wait_only(law, long_job)
        sh(law, "up.sh", "--recalc", timeout=180)  # a restart while lawrun's job runs
        restart_cycle = last_ran(law)
        while last_ran(law) == restart_cycle:  # one more cycle on the re-anchored grid
            time.sleep(0.5)
        time.sleep(3)  # lawrun's job then runs on past the last cycle when captured
        os.environ["SLURM_CONF"] = law["SLURM_CONF"]
        os.environ["PATH"] = law["PATH"]
        for _ in range(3):  # fairtop capture: sshare, sacct -D, the QOS table, the last cycle
            before = last_ran(law)
            slurm_cli.capture(tmp / "cap", timeout=60)
            qos_usage = _qos_usage(law)
            if last_ran(law) == before:
                break
        snap = load_folder(tmp / "cap")
        jobs, last = load_saved_history(tmp / "cap")
        assert last is not None and last.timestamp() == before, "the capture saved no last decay cycle"
        log = parse_ctld_log(Path(law["SANDBOX_DIR"], "log", "slurmctld.log").read_bytes())
        jobs = [j for j in jobs if j.account == acct]
        first_start = min(j.start.timestamp() for j in jobs)
        anchor = max(s for s in log.starts if s < first_start)  # the controller our jobs started under
        cycles = [c for c in log.cycles if anchor <= c <= last.timestamp()]
        assert cycles and cycles[-1] == last.timestamp(), (cycles[-3:], last)
        yield Run(law, acct, qos, snap, last, jobs, cycles, log.starts, qos_usage)
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        if long_job:
            subprocess.run(["scancel", long_job], env=law, check=False, capture_output=True)
        try:
            sh(env, "sacctmgr", "-i", "delete", "account", f"name={acct}", f"cluster={cluster_name(env)}")
        except AssertionError:
            pass  # never made, or jobs still ending
        sh(env, "up.sh", timeout=180)  # back to the settings the sandbox was started with


def last_ran(env: dict[str, str]) -> float:
    """slurmctld's last decay cycle (its state file's own time_t)."""
    path = Path(env["SANDBOX_DIR"], "state", "ctld", "priority_last_decay_ran")
    return read_last_decay_ran(path.read_bytes())[0].timestamp() if path.exists() else 0.0


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


def test_every_association_matches_sshare(run: Run, capsys: pytest.CaptureFixture[str]) -> None:
    rows = run.rows()
    check = run.check()
    rel = _agree(check, rows, (run.acct, *USERS))
    with capsys.disabled():  # the measured differences, for pytest -s
        print("\nusage law vs sshare (relative):", rel, "last gaps:", np.diff(run.cycles[-6:]).tolist())
    assert check.rows[rows["lawhalf"]].printed > 1e4 and check.rows[rows["lawrun"]].printed > 1e4


def test_short_jobs_without_limits_charge_nothing(run: Run) -> None:
    rows = run.rows()
    assert run.snap.settings.accounting_enforce == {"associations"}
    assert run.check().rows[rows["lawshort"]].printed == 0  # sshare: two 20-s jobs, RawUsage 0
    assert len([j for j in run.jobs if j.user == "lawshort"]) == 2
    limits = replace(run.snap.settings, accounting_enforce=frozenset({"associations", "limits"}))
    check = check_raw_usage(run.jobs, run.snap.tree, limits, run.last, run.snap.taken_at,  # type: ignore[arg-type]
                            cycles=run.cycles, partitions=run.snap.partitions)
    _disagree(check, rows, "lawshort")  # charging their end slices would give them 2 x 20 s


def test_qos_usage_factor(run: Run) -> None:
    rows = run.rows()
    factors = run.snap.settings.qos_usage_factors  # from the capture's sacctmgr_qos.psv
    assert (factors[run.qos["half"]], factors[run.qos["dbl"]]) == (0.5, 2.0)
    assert run.qos["nd"] in run.snap.settings.qos_no_decay
    _agree(run.check(), rows, ("lawhalf", "lawdbl"))
    plain = replace(run.snap.settings, qos_usage_factors={})
    without = check_raw_usage(run.jobs, run.snap.tree, plain, run.last, run.snap.taken_at,  # type: ignore[arg-type]
                              cycles=run.cycles, partitions=run.snap.partitions)
    _disagree(without, rows, "lawhalf")
    _disagree(without, rows, "lawdbl")


def test_no_decay_qos_keeps_its_usage_undecayed(run: Run) -> None:
    rows = run.rows()
    _agree(run.check(), rows, ("lawnd",))  # the association decays as any other
    nd = run.qos["nd"]
    policy = replace(UsagePolicy.of(run.snap.settings, run.snap.partitions), no_decay_qos=frozenset({nd}))
    table, _ = job_table(run.jobs, run.snap.tree, policy)  # type: ignore[arg-type]
    kept = replay(table, run.snap.tree.parent, run.cycles, policy).qos[nd]  # type: ignore[union-attr]
    printed = run.qos_usage[nd]
    assert printed > 1e4 and abs(kept - printed) <= REL * printed + 1.0, (kept, printed)
    decayed = replay(table, run.snap.tree.parent, run.cycles, replace(policy, no_decay_qos=frozenset())).qos[nd]  # type: ignore[union-attr]
    assert abs(decayed - printed) > REL * printed + 1.0, (decayed, printed)
    half = run.qos["half"]  # a QOS without NoDecay decays: its usage is its job's decayed charge
    assert abs(run.qos_usage[half] - replay(table, run.snap.tree.parent, run.cycles, replace(
        policy, qos_usage_factor={half: 0.5})).qos[half]) <= REL * run.qos_usage[half] + 1.0  # type: ignore[union-attr]


def test_restart_reanchors_the_grid_and_charges_the_downtime(run: Run) -> None:
    rows = run.rows()
    gaps = np.diff(run.cycles)
    assert np.any(gaps % 60 != 0), gaps  # the restart's first cycle is off the old grid
    _agree(run.check(), rows, ("lawrun",))
    regular = cycle_grid(run.cycles[-1], 60, run.cycles[0]).tolist()
    _disagree(run.check(cycles=regular), rows, "lawrun")


def test_a_job_running_at_the_capture_is_charged_up_to_the_last_cycle(run: Run) -> None:
    rows = run.rows()
    mine = [j for j in run.jobs if j.user == "lawrun"]
    assert len(mine) == 1 and mine[0].end is None and mine[0].state == "RUNNING"
    _agree(run.check(), rows, ("lawrun",))
    # charged up to the capture instead (as if it ended then): beyond the tolerance
    if math.isclose(run.snap.taken_at.timestamp(), run.last.timestamp(), abs_tol=1.0):
        pytest.skip("captured within a second of the cycle")
    ended = [replace(j, end=run.snap.taken_at) if j.user == "lawrun" else j for j in run.jobs]
    limits = replace(run.snap.settings, accounting_enforce=frozenset({"limits"}))
    later = check_raw_usage(ended, run.snap.tree, limits, run.last, run.snap.taken_at,  # type: ignore[arg-type]
                            cycles=run.cycles, partitions=run.snap.partitions)
    _disagree(later, rows, "lawrun")


def test_billing_is_recomputed_from_alloc_tres(run: Run) -> None:
    rows = run.rows()
    assert any(p.billing_weights == {"cpu": 1000.5} for p in run.snap.partitions)
    assert {j.billing for j in run.jobs if j.user == "lawrun"} == {1000.0}  # sacct: the truncated integer
    _agree(run.check(), rows, ("lawrun",))
    _disagree(run.check(partitions=()), rows, "lawrun")  # sacct's billing= alone is 0.05 % short
