"""Integration: a deleted association's usage stays with its account (real 22.05 and 26.05 slurmctlds).

Slurm's ``assoc_mgr`` keeps the usage of a removed user association: its account's RawUsage
already holds it (every cycle charges a job to its association and each ancestor), and the
removed row's own usage moves to the parent's ``leaf_usage``, which decays with it and is added
back whenever the parents are rebuilt (``assoc_mgr.c``, SLURMDB_REMOVE_ASSOC; "Otherwise accounts
could boost their fairshare by removing users"). fairtop's law charges a job whose association is
gone to its account (:func:`tui.analysis.history.job_table`).

One sandbox of its own per release (:data:`PLACES`; about three minutes each): account ``del``
with users ``delgone`` and ``delstay``, each running a 75-s job on 2 CPUs across a decay cycle;
then ``sacctmgr delete user delgone account=del``, one more cycle, and a capture. Asserted: sshare
no longer prints ``delgone``, and the account's RawUsage equals the law's within 1e-6 relative + 1
on the controller's logged cycle times, while the law without ``delgone``'s jobs (what a rebuild
that drops jobs of associations it cannot find would give) is far off.

The grid starts with the controller's own first cycle, which runs in the second it starts: its
logged time is that whole second, so it is taken from ``floor(start)`` on (a filter from the
start's fractional time drops it whenever both fall in one second, and the law then charges
nothing before the next cycle: 40,875,240 rebuilt against 145,317,356 printed, in 2 of 5 runs).
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.sandbox._sandbox import account_rows, after_a_cycle, last_ran, on_release, own_env, purge_keeping_log, sh
from tui.analysis.history import HistoryCheck, check_raw_usage
from tui.model import Snapshot
from tui.sources.ctld_log import parse_ctld_log
from tui.sources.sacct import SACCT_FILE, AccountedJob, load_saved_history
from tui.sources.saved import load_folder
from tui.sources.zone import ZONE_FILE, local_zone_name

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox]

#: This module's sandbox per release: folder, first of three Slurm ports, MariaDB port,
#: SANDBOX_SLURM (empty: Debian's 22.05).
PLACES = {"22.05": ("/tmp/fairtop-deleted-2205", 8827, 15216, ""),
          "26.05": ("/tmp/fairtop-deleted-2605", 8847, 15226, "/opt/slurm-26.05.3")}
ACCT, GONE, STAY = "del", "delgone", "delstay"
REL = 1e-6


@dataclass
class Capture:
    snap: Snapshot
    jobs: list[AccountedJob]
    cycles: list[float]
    starts: list[float]
    last_cycle: float
    folder: Path
    """The capture, made in this machine's zone."""
    elsewhere: Path
    """The same cluster captured with TZ=America/New_York: sacct prints New York's wall-clock times."""

    def check(self, jobs: list[AccountedJob] | None = None) -> HistoryCheck:
        assert self.snap.tree is not None
        last = datetime.fromtimestamp(self.last_cycle, tz=timezone.utc)
        return check_raw_usage(self.jobs if jobs is None else jobs, self.snap.tree, self.snap.settings, last,
                               self.snap.taken_at, cycles=self.cycles, partitions=self.snap.partitions,
                               anchors=self.starts)

    def row(self, check: HistoryCheck, user: str) -> tuple[float, float]:
        """(printed, rebuilt) RawUsage of ``ACCT``'s row for ``user`` ('' = the account itself);
        KeyError where sshare prints no such row."""
        i = account_rows(self.snap.tree, ACCT)[user or ACCT]
        return check.rows[i].printed, check.rows[i].rebuilt


def _env(rel: str) -> dict[str, str]:
    return own_env(*PLACES[rel], SANDBOX_DECAY="1:00:00", SANDBOX_DEBUG_FLAGS="Priority", SANDBOX_CPUS="8")


def _next_cycle(env: dict[str, str], timeout: float = 150) -> None:
    seen, end = last_ran(env), time.monotonic() + timeout
    while last_ran(env) == seen:
        assert time.monotonic() < end, "no decay cycle within the timeout"
        time.sleep(0.5)


@pytest.fixture(scope="module", params=[pytest.param(rel, marks=on_release(rel), id=rel) for rel in PLACES])
def cap(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Capture]:
    from tui.sources import slurm_cli

    rel: str = request.param
    if PLACES[rel][3] and not Path(PLACES[rel][3], "sbin", "slurmctld").is_file():
        pytest.skip(f"Slurm {rel} not built at {PLACES[rel][3]} (shared/slurm-sandbox/build.sh)")
    tmp = tmp_path_factory.mktemp("deleted" + rel.replace(".", ""))
    env = _env(rel)
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
        with pytest.MonkeyPatch.context() as mp:
            mp.setenv("SLURM_CONF", env["SLURM_CONF"])
            mp.setenv("PATH", env["PATH"])
            for _ in range(3):  # between two cycles
                cycle = last_ran(env)
                slurm_cli.capture(tmp / "capture", timeout=60)
                if last_ran(env) == cycle:
                    break
            try:
                mp.setenv("TZ", "America/New_York")
                time.tzset()
                slurm_cli.capture(tmp / "elsewhere", timeout=60)
            finally:
                mp.undo()
                time.tzset()
        snap = load_folder(tmp / "capture")
        jobs, _ = load_saved_history(tmp / "capture")
        jobs = [j for j in jobs if j.account == ACCT]
        log = parse_ctld_log(Path(env["SANDBOX_DIR"], "log", "slurmctld.log").read_bytes())
        first = min(j.start.timestamp() for j in jobs)
        anchor = max(s for s in log.starts if s < first)
        cycles = [c for c in log.cycles if math.floor(anchor) <= c <= cycle]  # the start's own cycle too
        assert cycles and cycles[-1] == cycle, (cycles[-3:], cycle)
        yield Capture(snap, jobs, cycles, [s for s in log.starts if s >= anchor], cycle, tmp / "capture",
                      tmp / "elsewhere")
    finally:
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


def test_a_capture_in_another_zone_reads_the_same_instants(cap: Capture) -> None:
    """sacct prints wall-clock times in the zone it runs in and does not say which; the capture
    does (``timezone.txt``), so both captures give the law the same jobs."""
    assert (cap.folder / ZONE_FILE).read_text() == local_zone_name() + "\n"
    assert (cap.elsewhere / ZONE_FILE).read_text() == "America/New_York\n"
    here = {j.job_id: j for j in cap.jobs}
    there = {j.job_id: j for j in load_saved_history(cap.elsewhere)[0] if j.account == ACCT}
    assert {k: (j.start, j.end) for k, j in there.items()} == {k: (j.start, j.end) for k, j in here.items()}
    # what sacct printed differs by New York's offset (-5 h in winter, -4 h in summer)
    job = next(iter(here.values()))
    shown = job.start.astimezone(ZoneInfo("America/New_York")).strftime("%Y-%m-%dT%H:%M:%S")
    assert f"|{shown}|" in (cap.elsewhere / SACCT_FILE).read_text()
    assert f"|{shown}|" not in (cap.folder / SACCT_FILE).read_text() or local_zone_name() == "America/New_York"
