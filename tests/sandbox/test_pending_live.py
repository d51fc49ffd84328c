"""Integration (issue 35): why pending jobs wait, on a real Slurm 22.05 and 26.05.

One fresh sandbox (8 CPUs, backfill every second) of its own folder and ports, one scenario that
makes pending jobs held by every reason at once: Priority, Resources, a spent GrpTRESMins
(AssocGrpBillingMinutes), an association MaxJobs (AssocMaxJobsLimit), a QOS MaxJobsPerUser
(QOSMaxJobsPerUserLimit), an association GrpTRES cpu (AssocGrpCpuLimit), a user hold, a dependency,
a begin time, a down partition, and (last) a drained node. fairtop reads the cluster as it does
live (the capture runs the live refresh's commands) and must show:

* each job's reason exactly as squeue prints it, and a known meaning for it;
* the scheduler's start estimate exactly as ``squeue --start`` prints it;
* as first in line in the partition the job the scheduler then starts when resources free up;
* the same reasons and estimates read through slurmrestd (the sandbox runs it), in every
  ``slurm/vX/jobs`` version the server offers and fairtop supports (22.05: v0.0.36-v0.0.38; 26.05:
  v0.0.42-v0.0.45), and in ``fairtop jobs --slurmrestd``.

About a minute and a half per release: up.sh, the tree, one priority cycle (the jobs' priorities),
a few seconds of scheduling. Each release runs on a sandbox of its own (folder and ports in
:data:`PLACES`; moved with FAIRTOP_PENDING_DIR / FAIRTOP_PENDING_PORT / FAIRTOP_PENDING_DB_PORT, and
for 26.05 the same names with ``_2605``): 22.05 is skipped without FAIRTOP_SANDBOX, 26.05 without
FAIRTOP_SANDBOX_2605 (CI sets both as root; 26.05's binaries are the ones that file names, else
/opt/slurm-26.05.3).

``python -m tests.sandbox.test_pending_live OUT`` runs the scenario (on a sandbox started the same
way) and saves its capture into OUT: tests/fixtures/pending_jobs was made so.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.sandbox._sandbox import RELEASES, first_env, on_release, scripts, sh
from tui.analysis.jobs import describe, explain_pending, pending_summary
from tui.analysis.standing import build_standing
from tui.analysis.summary import user_summary
from tui.model import Job, Snapshot
from tui.sources.saved import load_folder
from tui.sources.slurmrestd import SUPPORTED_VERSIONS, RestClient, jobs_from_json, live_snapshot

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox]

SPEC = FIXTURES / "pending_jobs" / "spec.txt"
#: release -> (folder, slurmctld port (slurmd, slurmdbd: the next two), MariaDB port) of its own sandbox.
PLACES = {"22.05": (os.environ.get("FAIRTOP_PENDING_DIR", "/tmp/fairtop-pending-2205"),
                    int(os.environ.get("FAIRTOP_PENDING_PORT", "7957")),
                    os.environ.get("FAIRTOP_PENDING_DB_PORT", "13546")),
          "26.05": (os.environ.get("FAIRTOP_PENDING_DIR_2605", "/tmp/fairtop-pending-2605"),
                    int(os.environ.get("FAIRTOP_PENDING_PORT_2605", "8117")),
                    os.environ.get("FAIRTOP_PENDING_DB_PORT_2605", "14606"))}
#: squeue's Reason for each job the scenario makes (by its name).
EXPECTED = {"resources": "Resources", "priority": "Priority", "priority2": "Priority",
            "spent": "AssocGrpBillingMinutes", "maxjobs": "AssocMaxJobsLimit", "qosjobs": "QOSMaxJobsPerUserLimit",
            "grpcpu": "AssocGrpCpuLimit", "held": "JobHeldUser", "after": "Dependency", "later": "BeginTime",
            "down": "PartitionDown"}


#: Where build.sh installs each newer release (CI's build of .ci/slurm-releases.sh).
BUILT = {"26.05": "/opt/slurm-26.05.3"}


def _prefix(release: str) -> str:
    """Where ``release``'s Slurm is installed: "" for Debian's 22.05, else the SANDBOX_SLURM of the
    file CI's variable names (its build), else build.sh's default prefix."""
    if release == "22.05":
        return ""
    given = os.environ.get(RELEASES[release], "")
    lines = Path(given).read_text().splitlines() if given and Path(given).is_file() else []
    found = [line.split("=", 1)[1].strip() for line in lines if line.startswith("SANDBOX_SLURM=")]
    return found[0] if found else BUILT[release]


def _env(release: str = "22.05") -> dict[str, str]:
    folder, port, db_port = PLACES[release]
    env = {k: v for k, v in first_env().items() if not k.startswith("SANDBOX_")}
    env.update(SANDBOX_DIR=folder, SANDBOX_CTLD_PORT=str(port), SANDBOX_SLURMD_PORT=str(port + 1),
               SANDBOX_DBD_PORT=str(port + 2), SANDBOX_DB_PORT=db_port, SANDBOX_RESTD="1", SANDBOX_CPUS="8",
               SLURM_CONF=f"{folder}/etc/slurm.conf")
    if prefix := _prefix(release):
        env.update(SANDBOX_SLURM=prefix, PATH=f"{prefix}/bin:{prefix}/sbin:{env.get('PATH', '')}")
    return env


def _submit(env: dict[str, str], user: str, name: str, *args: str) -> str:
    out = sh(env, "runuser", "-u", user, "--", "sbatch", "--parsable", "-J", name, "-o", "/dev/null", "-e",
             "/dev/null", "--chdir=/tmp", *args)
    return out.strip().split(";")[0]


def _squeue(env: dict[str, str], *fields: str) -> dict[str, list[str]]:
    """Job name -> the fields (``-O NAME:|,...``) squeue prints for it."""
    out = sh(env, "squeue", "-a", "-h", "-O", ",".join(f"{f}:|" for f in ("Name", *fields)))
    return {cells[0]: cells[1:-1] for cells in (line.split("|") for line in out.splitlines())}


def _wait(what: str, ready, timeout: float = 120) -> None:  # type: ignore[no-untyped-def]
    end = time.monotonic() + timeout
    while not ready():
        assert time.monotonic() < end, f"timed out waiting for {what}"
        time.sleep(0.5)


def make_scenario(env: dict[str, str]) -> dict[str, str]:
    """Start the sandbox and make the waiting jobs; job name -> id."""
    sh(env, "down.sh", "--purge", timeout=120)  # a sandbox left by a killed run
    sh(env, "up.sh", timeout=300)
    conf = Path(env["SLURM_CONF"])
    conf.write_text(conf.read_text() + "SchedulerParameters=bf_interval=1\n")  # estimates within a second
    sh(env, "scontrol", "reconfigure")
    sh(env, "tree.sh", str(SPEC), timeout=300)
    sh(env, "qos.sh", "one", "MaxJobsPerUser=1")
    ids = {"spend": _submit(env, "wqd", "spend", "-A", "wqspent", "-p", "burn", "-n1", "-t", "1", "--wrap", "sleep 1")}
    _wait("the spending job to end", lambda: "spend" not in _squeue(env, "State"))
    run = ("-n1", "-t", "20", "--wrap", "sleep 900")
    ids["run_c"] = _submit(env, "wqc", "run_c", "-A", "wq", *run)
    ids["run_e"] = _submit(env, "wqe", "run_e", "-A", "wqcpu", *run)
    ids["run_q"] = _submit(env, "wqa", "run_q", "-A", "wq", "--qos", "one", *run)
    ids["filler"] = _submit(env, "wqf", "filler", "-A", "wqfill", "-n5", "-t", "10", "--wrap", "sleep 900")
    _wait("the running jobs", lambda: all(_squeue(env, "State").get(n, [""])[0] == "RUNNING"
                                          for n in ("run_c", "run_e", "run_q", "filler")))
    five = ("-n5", "-t", "5", "--wrap", "sleep 900")
    # one user's three, so their order is their Nice whatever a priority cycle does to fairshare
    ids["resources"] = _submit(env, "wqb", "resources", "-A", "wq", *five)
    ids["priority"] = _submit(env, "wqb", "priority", "-A", "wq", "--nice=500", *five)
    ids["priority2"] = _submit(env, "wqb", "priority2", "-A", "wq", "--nice=1000", *five)
    one = ("-n1", "-t", "5", "--wrap", "sleep 1")
    ids["maxjobs"] = _submit(env, "wqc", "maxjobs", "-A", "wq", *one)
    ids["grpcpu"] = _submit(env, "wqe", "grpcpu", "-A", "wqcpu", *one)
    ids["qosjobs"] = _submit(env, "wqa", "qosjobs", "-A", "wq", "--qos", "one", *one)
    ids["spent"] = _submit(env, "wqd", "spent", "-A", "wqspent", "-p", "burn", *one)
    # first in the main scheduler's queue, so it meets its limit before the node is set aside for
    # debug's first job (else its reason flips to "Nodes required for job are DOWN, DRAINED or
    # reserved for jobs in higher priority partitions" on every main pass, back on every backfill pass)
    sh(env, "scontrol", "update", f"jobid={ids['spent']}", "nice=-10000")
    ids["held"] = _submit(env, "wqa", "held", "-A", "wq", "-H", *one)
    ids["after"] = _submit(env, "wqa", "after", "-A", "wq", f"--dependency=afterok:{ids['run_c']}", *one)
    ids["later"] = _submit(env, "wqa", "later", "-A", "wq", "--begin=now+1hour", *one)
    ids["down"] = _submit(env, "wqa", "down", "-A", "wq", "-p", "parked", *one)

    def settled() -> bool:  # every reason set, priorities past the first cycle, backfill's estimates made
        got = _squeue(env, "Reason", "PriorityLong", "StartTime")
        return all(got.get(n, [""])[0] == r for n, r in EXPECTED.items()) and \
            int(got["priority"][1]) > 1 and got["resources"][2] != "N/A"
    _wait("every reason and a priority cycle", settled, timeout=150)
    return ids


def capture(env: dict[str, str], out: Path) -> Snapshot:
    """What fairtop's live refresh reads (the same commands, through ``capture``), read back."""
    code = "import sys; from tui.sources.slurm_cli import capture; capture(sys.argv[1])"
    done = subprocess.run([sys.executable, "-c", code, str(out)], env={**env, "PYTHONPATH": str(ROOT)},
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-1500:]
    return load_folder(out)


def fairtop_jobs(env: dict[str, str], user: str) -> str:
    """``fairtop --slurmrestd SOCKET jobs --user USER``: what the command prints on the REST source."""
    done = subprocess.run([sys.executable, "-m", "tui.cli", "--slurmrestd", rest_socket(env), "jobs", "--user", user],
                          env={**env, "PYTHONPATH": str(ROOT)}, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 0, done.stderr[-1500:]
    return done.stdout


@dataclass(frozen=True)
class Rest:
    """What slurmrestd gave in the same window as the capture."""

    snapshot: Snapshot
    """The REST source's snapshot (``fairtop --slurmrestd``: its newest jobs version)."""
    jobs: dict[str, list[Job]]
    """Plugin version -> that version's jobs."""
    wqb: str
    """``fairtop --slurmrestd SOCKET jobs --user wqb``'s output."""


def rest_socket(env: dict[str, str]) -> str:
    """slurmrestd's socket in the sandbox (newer releases: run as the user slurmrestd, root may use it)."""
    run = Path(env["SANDBOX_DIR"]) / "run"
    return str(run / "restd" / "slurmrestd.sock" if env.get("SANDBOX_SLURM") else run / "slurmrestd.sock")


def rest_jobs(env: dict[str, str]) -> dict[str, list[Job]]:
    """Plugin version -> the jobs of its ``slurm/vX/jobs``, for every version the server offers and
    fairtop supports."""
    with RestClient(socket=rest_socket(env)) as client:
        paths = client.get_json("/openapi/v3")["paths"]
        out = {}
        for path in paths:
            parts = path.strip("/").split("/")
            if len(parts) == 3 and parts[0] == "slurm" and parts[2] == "jobs" and parts[1] in SUPPORTED_VERSIONS:
                out[parts[1]] = jobs_from_json(client.get_json(path), f"slurmrestd {path}")
    assert out, f"slurmrestd offers no slurm/vX/jobs fairtop supports: {sorted(paths)}"
    return out


@pytest.fixture(scope="module", params=[pytest.param(r, marks=on_release(r), id=r) for r in PLACES])
def scenario(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
             ) -> Iterator[tuple[dict[str, str], dict[str, str], Snapshot, dict[str, list[str]], Rest]]:
    env = _env(request.param)
    try:
        ids = make_scenario(env)
        fields = ("JobID", "Reason", "StartTime", "SchedNodes")
        before = _squeue(env, *fields)
        snap = capture(env, tmp_path_factory.mktemp("pending"))
        rest = Rest(live_snapshot(socket=rest_socket(env)), rest_jobs(env), fairtop_jobs(env, "wqb"))
        after = _squeue(env, *fields)
        # what squeue printed around fairtop's read: where it changed in between, the job is left out
        printed = {name: cells for name, cells in before.items() if after.get(name) == cells}
        assert set(EXPECTED) <= set(printed), f"squeue changed during the read: {before} -> {after}"
        yield env, ids, snap, printed, rest
    finally:
        subprocess.run([str(scripts() / "down.sh"), "--purge"], env=env, capture_output=True, timeout=120,
                       check=False)


def _start_of(env: dict[str, str], job_id: str) -> str:
    """START_TIME as ``squeue --start`` prints it for the job."""
    out = sh(env, "squeue", "--start", "-h", "-j", job_id, "-o", "%S")
    return out.strip()


def test_the_reason_is_squeues_and_fairtop_knows_it(scenario) -> None:  # type: ignore[no-untyped-def]
    env, ids, snap, printed, _ = scenario
    jobs = {j.job_id: j for j in snap.jobs}
    for name, reason in EXPECTED.items():
        job = jobs[ids[name]]
        assert job.reason == printed[name][1] == reason, name
        assert describe(job.reason).code == reason  # a known code, not "shown as printed"
    held = jobs[ids["held"]]
    assert held.priority == 0
    assert jobs[ids["after"]].dependency == f"afterok:{ids['run_c']}(unfulfilled)"
    words = {p.job.job_id: p for user in ("wqa", "wqb", "wqc", "wqd", "wqe")
             for p in explain_pending(build_standing(snap, user))}
    spent = words[ids["spent"]]
    assert "account wqspent's allocation is spent: 0 of 1,000 billing-minutes left" in spent.why
    assert any("a top-up: GrpTRESMins raised by at least" in m for m in spent.moves)
    assert "user wqc's association in account wq has 1 job counted against its MaxJobs=1" in words[ids["maxjobs"]].why
    assert "account wqcpu has 1 of its 1 CPUs in use by running jobs (GrpTRES=cpu=1); this job asks for 1 more" in \
        words[ids["grpcpu"]].why
    assert "you run 1 job in QOS one" in words[ids["qosjobs"]].why
    assert f"job {ids['run_c']} must end successfully (not yet)" in words[ids["after"]].why
    assert words[ids["held"]].moves == (f"releasing it: scontrol release {ids['held']}",)


def test_the_start_estimate_is_squeue_starts(scenario) -> None:  # type: ignore[no-untyped-def]
    env, ids, snap, printed, _ = scenario
    jobs = {j.job_id: j for j in snap.jobs}
    estimated = 0
    for name in EXPECTED:
        job = jobs[ids[name]]
        start = _start_of(env, ids[name])  # squeue --start's own column: the same value as -O StartTime
        assert start == printed[name][2], name
        shown = job.start_time.astimezone().replace(tzinfo=None).isoformat() if job.start_time else "N/A"
        assert shown == start, name
        estimated += start != "N/A"
        nodes = printed[name][3]
        assert job.sched_nodes == (None if nodes == "(null)" else nodes)
    assert estimated >= 3  # backfill planned the jobs in line (and the begin time is printed too)
    (resources,) = explain_pending(build_standing(snap, "wqb"), [jobs[ids["resources"]]])
    assert f"{datetime.fromisoformat(printed['resources'][2]):%Y-%m-%d %H:%M:%S} on sandbox-node" in resources.estimate


def _shown(at: datetime | None) -> str:
    """A start time as squeue prints it (local time, seconds; N/A for none)."""
    return at.astimezone().replace(tzinfo=None).isoformat() if at else "N/A"


def test_slurmrestd_gives_squeues_reason_and_estimate_in_every_version(scenario) -> None:  # type: ignore[no-untyped-def]
    env, ids, _, printed, rest = scenario
    newest = "v0.0.45" if env.get("SANDBOX_SLURM") else "v0.0.38"  # 26.05 : 22.05
    assert newest in rest.jobs, sorted(rest.jobs)
    for version, got in rest.jobs.items():
        jobs = {j.job_id: j for j in got}
        for name, reason in EXPECTED.items():
            job = jobs[ids[name]]
            assert (job.reason, _shown(job.start_time)) == (printed[name][1], printed[name][2]) == \
                (reason, printed[name][2]), (version, name)
    # what fairtop jobs / standing / the summary line say on the REST source: squeue's reason and estimate
    jobs = {j.job_id: j for j in rest.snapshot.jobs}
    for user in ("wqa", "wqb", "wqc", "wqd", "wqe"):
        explained = explain_pending(build_standing(rest.snapshot, user))
        for p in explained:
            name = next(n for n, i in ids.items() if i == p.job.job_id)
            if name not in EXPECTED:
                continue
            assert p.job.reason == printed[name][1] and p.meaning is not None and p.meaning.code == EXPECTED[name]
            assert _shown(p.job.start_time) == printed[name][2], name
            start = printed[name][2]
            if name in ("resources", "priority", "priority2") and start != "N/A":  # the queue's, planned by backfill
                assert f"{datetime.fromisoformat(start):%Y-%m-%d %H:%M:%S}" in p.estimate, (name, p.estimate)
        if user == "wqb":
            assert explained[0].job.job_id == ids["resources"]
            at = datetime.fromisoformat(printed["resources"][2])
            short = pending_summary(explained)
            assert short.endswith(f"the nearest: 1st in debug; the scheduler estimates {at:%H:%M}"), short
            assert user_summary(build_standing(rest.snapshot, user)).text.endswith(short)  # the line, standing
    assert jobs[ids["after"]].dependency == f"afterok:{ids['run_c']}(unfulfilled)"
    assert f"Job {ids['resources']} (debug): Resources: " in rest.wqb  # read in the same window as squeue
    at = datetime.fromisoformat(printed["resources"][2])
    assert f"Start estimate (the scheduler's, squeue --start): {at:%Y-%m-%d %H:%M:%S}" in rest.wqb


def test_the_first_in_line_is_the_job_the_scheduler_starts_next(scenario) -> None:  # type: ignore[no-untyped-def]
    env, ids, snap, _, _ = scenario
    places = {p.job.job_id: p.place for user in ("wqa", "wqb", "wqc", "wqd", "wqe")
              for p in explain_pending(build_standing(snap, user))}
    first = [job_id for job_id, place in places.items() if place is not None and place.ahead == 0
             and place.partition == "debug"]
    assert first == [ids["resources"]]
    # the two others wait behind it in their Nice's order, the user's own jobs ahead of them counted
    second, third = places[ids["priority"]], places[ids["priority2"]]
    assert (second.ahead, second.own_ahead, third.ahead, third.own_ahead) == (1, 1, 2, 2)
    assert third.just_ahead is not None and third.just_ahead.job_id == ids["priority"]
    sh(env, "scancel", ids["filler"])  # 5 CPUs free: room for one of the three
    _wait("a job to start", lambda: any(_squeue(env, "State").get(n, [""])[0] == "RUNNING"
                                        for n in ("resources", "priority", "priority2")), timeout=60)
    state = _squeue(env, "State")
    assert [n for n in ("resources", "priority", "priority2") if state[n][0] == "RUNNING"] == ["resources"]


def test_a_drained_node_is_shown_as_squeue_prints_it(scenario, tmp_path) -> None:  # type: ignore[no-untyped-def]
    env, ids, _, _, _ = scenario
    sh(env, "scontrol", "update", "nodename=sandbox-node", "state=drain", "reason=fairtop-test")
    ids["drained"] = _submit(env, "wqb", "drained", "-A", "wq", "-w", "sandbox-node", "-n1", "-t", "5",
                             "--wrap", "sleep 1")
    _wait("its reason", lambda: _squeue(env, "Reason").get("drained", ["None"])[0] not in ("None", ""))
    printed = _squeue(env, "Reason")["drained"][0]
    snap = capture(env, tmp_path / "drained")
    (job,) = [j for j in snap.jobs if j.job_id == ids["drained"]]
    assert job.reason == printed
    assert job.req_nodes == "sandbox-node"
    meaning = describe(printed)
    assert meaning.kind == "nodes" or meaning.detail, printed  # known: not "shown as printed" only
    (why,) = [p for p in explain_pending(build_standing(snap, "wqb")) if p.job.job_id == ids["drained"]]
    assert "asks for nodes sandbox-node by name" in why.why


if __name__ == "__main__":  # record the fixture: python -m tests.sandbox.test_pending_live OUT
    environment = _env()
    make_scenario(environment)
    capture(environment, Path(sys.argv[1]))
    print(sh(environment, "squeue", "--start"))
