"""Integration: a deleted association's usage stays with its account (a real 22.05 slurmctld).

Slurm's ``assoc_mgr`` keeps the usage of a removed user association: its account's RawUsage
already holds it (every cycle charges a job to its association and each ancestor), and the
removed row's own usage moves to the parent (``assoc_mgr.c``, SLURMDB_REMOVE_ASSOC). fairtop's law
charges a job whose association is gone to its account (:func:`tui.analysis.history.job_table`).

One sandbox of its own (:data:`PLACE`; about two and a half minutes): account ``del`` with users
``delgone`` and ``delstay``, each running a 75-s job on 2 CPUs across a decay cycle; then
``sacctmgr delete user delgone account=del``, one more cycle, and a capture. Asserted: sshare no
longer prints ``delgone``, and the account's RawUsage equals the law's within 1e-6 relative + 1
on the controller's logged cycle times, while the law without ``delgone``'s jobs (what a rebuild
that drops jobs of associations it cannot find would give) is far off.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.sandbox._sandbox import SKIP, after_a_cycle, first_env, purge_keeping_log, sh
from tui.analysis.history import HistoryCheck, check_raw_usage
from tui.model import Snapshot
from tui.sources.ctld_log import parse_ctld_log
from tui.sources.sacct import AccountedJob, load_saved_history, read_last_decay_ran
from tui.sources.saved import load_folder

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox, SKIP]

#: This module's sandbox: folder, first of three Slurm ports, MariaDB port.
PLACE = ("/tmp/fairtop-deleted-2205", 8827, 15216)
ACCT, GONE, STAY = "del", "delgone", "delstay"
REL = 1e-6


@dataclass
class Capture:
    snap: Snapshot
    jobs: list[AccountedJob]
    cycles: list[float]
    starts: list[float]
    last_cycle: float

    def check(self, jobs: list[AccountedJob] | None = None) -> HistoryCheck:
        assert self.snap.tree is not None
        last = datetime.fromtimestamp(self.last_cycle, tz=timezone.utc)
        return check_raw_usage(self.jobs if jobs is None else jobs, self.snap.tree, self.snap.settings, last,
                               self.snap.taken_at, cycles=self.cycles, partitions=self.snap.partitions,
                               anchors=self.starts)

    def row(self, check: HistoryCheck, user: str) -> tuple[float, float]:
        """(printed, rebuilt) RawUsage of ``ACCT``'s row for ``user`` ('' = the account itself)."""
        tree = self.snap.tree
        assert tree is not None
        for i in range(tree.size):
            if str(tree.account[i]) == ACCT and str(tree.user[i]) == user:
                return check.rows[i].printed, check.rows[i].rebuilt
        raise KeyError(user)


def _env() -> dict[str, str]:
    folder, port, db = PLACE
    env = {k: v for k, v in first_env().items() if not k.startswith("SANDBOX_") or k == "SANDBOX_SLURM"}
    env.update(SANDBOX_DIR=folder, SANDBOX_CTLD_PORT=str(port), SANDBOX_SLURMD_PORT=str(port + 1),
               SANDBOX_DBD_PORT=str(port + 2), SANDBOX_DB_PORT=str(db), SANDBOX_RESTD="0",
               SLURM_CONF=f"{folder}/etc/slurm.conf", SANDBOX_DECAY="1:00:00", SANDBOX_DEBUG_FLAGS="Priority",
               SANDBOX_CPUS="8")
    return env


def _last_ran(env: dict[str, str]) -> float:
    path = Path(env["SANDBOX_DIR"], "state", "ctld", "priority_last_decay_ran")
    return read_last_decay_ran(path.read_bytes())[0].timestamp() if path.exists() else 0.0


def _next_cycle(env: dict[str, str], timeout: float = 150) -> None:
    seen, end = _last_ran(env), time.monotonic() + timeout
    while _last_ran(env) == seen:
        assert time.monotonic() < end, "no decay cycle within the timeout"
        time.sleep(0.5)


@pytest.fixture(scope="module")
def cap(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Capture]:
    from tui.sources import slurm_cli

    tmp = tmp_path_factory.mktemp("deleted")
    env = _env()
    saved_env = {k: os.environ.get(k) for k in ("SLURM_CONF", "PATH")}
    sh(env, "down.sh", "--purge", timeout=120)  # a sandbox left by a killed run
    try:
        sh(env, "up.sh", timeout=300)
        spec = Path(env["SLURM_CONF"]).parent / "fairtop_deleted_spec.txt"
        spec.write_text(f"account root {ACCT} 10\nuser {ACCT} {GONE} 1\nuser {ACCT} {STAY} 1\n")
        sh(env, "tree.sh", str(spec))
        after_a_cycle(env, within=10)
        for user in (GONE, STAY):
            sh(env, "usage.sh", user, ACCT, "2", "75")
        end = time.monotonic() + 200
        while sh(env, "squeue", "-h", "-o", "%i").split():
            assert time.monotonic() < end, "the jobs did not end"
            time.sleep(1)
        _next_cycle(env)  # both jobs' last slices charged (Enforce has limits)
        sh(env, "sacctmgr", "-i", "delete", "user", f"name={GONE}", f"account={ACCT}")
        _next_cycle(env)
        os.environ["SLURM_CONF"] = env["SLURM_CONF"]
        os.environ["PATH"] = env["PATH"]
        for _ in range(3):  # between two cycles
            cycle = _last_ran(env)
            slurm_cli.capture(tmp / "capture", timeout=60)
            if _last_ran(env) == cycle:
                break
        snap = load_folder(tmp / "capture")
        jobs, _ = load_saved_history(tmp / "capture")
        jobs = [j for j in jobs if j.account == ACCT]
        log = parse_ctld_log(Path(env["SANDBOX_DIR"], "log", "slurmctld.log").read_bytes())
        first = min(j.start.timestamp() for j in jobs)
        anchor = max(s for s in log.starts if s < first)
        cycles = [c for c in log.cycles if anchor <= c <= cycle]
        assert cycles and cycles[-1] == cycle, (cycles[-3:], cycle)
        yield Capture(snap, jobs, cycles, [s for s in log.starts if s >= anchor], cycle)
    finally:
        for key, value in saved_env.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        purge_keeping_log(env, tmp)


def test_the_deleted_users_usage_stays_in_its_account(cap: Capture) -> None:
    assert {j.user for j in cap.jobs} == {GONE, STAY}
    with pytest.raises(KeyError):
        cap.row(cap.check(), GONE)  # sshare prints the association no more
    printed, rebuilt = cap.row(cap.check(), "")
    stay_printed, stay_rebuilt = cap.row(cap.check(), STAY)
    assert abs(stay_rebuilt - stay_printed) <= REL * stay_printed + 1.0, (stay_printed, stay_rebuilt)
    assert printed > 1.5 * stay_printed > 0  # the account still holds delgone's usage
    assert abs(rebuilt - printed) <= REL * printed + 1.0, (printed, rebuilt)


def test_without_the_deleted_users_jobs_the_account_is_far_off(cap: Capture) -> None:
    printed, _ = cap.row(cap.check(), "")
    _, without = cap.row(cap.check([j for j in cap.jobs if j.user != GONE]), "")
    assert abs(without - printed) > 0.3 * printed, (printed, without)
