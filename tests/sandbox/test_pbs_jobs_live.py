"""Integration (issue 35): why PBS jobs wait, on the real PBS server sandbox (tests/pbs_sandbox/up.sh).

On the one node (2 CPUs) four jobs: pbsu1's of 2 CPUs runs; pbsu2's of 2 CPUs waits for it
("Not Running: Not enough free nodes available"); pbsu3's is held by its owner (``qhold``: "Job held by
pbsu3 on ...", the server's comment; pbsu1's second, submitted held with ``qsub -h``, gets none);
pbsu4's asks for 4 CPUs ("Can Never Run: Insufficient amount of resource: ncpus (R: 4 A: 2 T: 2)").
``strict_ordering`` is turned on in sched_config for the test (pbs_sched re-reads it on SIGHUP), so
pbs_sched plans the top job and prints its ``estimated.start_time``; the file is restored afterwards
and the jobs deleted. fairtop reads the server as ``capture --pbs`` (and ``--pbs``) do and must
show, for each waiting job, the ``comment`` exactly as ``qstat -f`` prints it, and the start
estimate only where qstat printed ``estimated.start_time``, equal to it.

Uses the sandbox CI started (``FAIRTOP_PBS_SERVER``: its pbs.conf); skipped without it. About 30 s.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.needs import env, needs
from tests.sandbox.test_pbs_server import _env, _run  # the same sandbox, reached the same way
from tests.sources.test_pbs_jobs import printed
from tui.sources.pbs_folder import load_pbs_folder

CONF = os.environ.get("FAIRTOP_PBS_SERVER", "")
PREFIX = Path(os.environ.get("PBS_PREFIX", "/opt/openpbs"))
pytestmark = [pytest.mark.sandbox,
              needs(env("FAIRTOP_PBS_SERVER", "no PBS server sandbox: tests/pbs_sandbox/up.sh as root prints its "
                                              "pbs.conf; .ci/run does so"))]
#: name -> (user, cpus, extra qsub arguments)
JOBS = {"run": ("pbsu1", 2, ()), "queued": ("pbsu2", 2, ()), "held": ("pbsu3", 1, ()),
        "never": ("pbsu4", 4, ()), "submitted_held": ("pbsu1", 1, ("-h",))}
#: What each waiting job's comment starts with once the scheduler has seen it.
SETTLED = {"queued": "Not Running: ", "held": "Job held by pbsu3 on ", "never": "Can Never Run: "}


def _qsub(env: dict[str, str], user: str, cpus: int, extra: tuple[str, ...]) -> str:
    return _run(env, "runuser", "-u", user, "--", "env", f"PBS_CONF_FILE={CONF}", f"{PREFIX}/bin/qsub", *extra,
                "-j", "oe", "-o", "/dev/null", "-l", f"select=1:ncpus={cpus}", "-l", "walltime=00:10:00",
                "--", "/bin/sleep", "600").strip()


def _home(env: dict[str, str]) -> Path:
    for line in Path(CONF).read_text().splitlines():
        key, _, value = line.partition("=")
        if key.strip() == "PBS_HOME":
            return Path(value.strip())
    raise AssertionError(f"no PBS_HOME in {CONF}")


def _hup_scheduler(home: Path) -> None:
    """SIGHUP to pbs_sched (its PID from its lock file, checked by name): it re-reads sched_config."""
    pid = int((home / "sched_priv" / "sched.lock").read_text().split()[0])
    assert Path(f"/proc/{pid}/comm").read_text().strip() == "pbs_sched"
    os.kill(pid, 1)


def _qstat_json(env: dict[str, str], ids: list[str]) -> dict[str, dict]:
    """``qstat -f -F json`` of every job (given several job ids, OpenPBS's JSON form holds one only)."""
    jobs = json.loads(_run(env, "qstat", "-f", "-F", "json")).get("Jobs", {})
    return {k: v for k, v in jobs.items() if k in ids}


@pytest.fixture(scope="module")
def queue(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, str], dict[str, str], Path,
                                                                      dict[str, dict[str, str]]]]:
    env = _env()
    config = _home(env) / "sched_priv" / "sched_config"
    original = config.read_bytes()
    ids: dict[str, str] = {}
    try:
        lines = original.decode().splitlines(keepends=True)
        config.write_text("".join("strict_ordering: true\tALL\n" if line.startswith("strict_ordering:") else line
                                  for line in lines))
        _hup_scheduler(config.parent.parent)
        ids["run"] = _qsub(env, *JOBS["run"])
        deadline = time.monotonic() + 60
        while _qstat_json(env, [ids["run"]])[ids["run"]]["job_state"] != "R":
            assert time.monotonic() < deadline, "the running job did not start within 60 s"
            time.sleep(1)
        for name in ("queued", "held", "never", "submitted_held"):
            ids[name] = _qsub(env, *JOBS[name])
        _run(env, "runuser", "-u", "pbsu3", "--", "env", f"PBS_CONF_FILE={CONF}", f"{PREFIX}/bin/qhold", ids["held"])

        def settled() -> bool:
            jobs = _qstat_json(env, list(ids.values()))
            return all(str(jobs[ids[n]].get("comment", "")).startswith(s) for n, s in SETTLED.items()) and \
                "start_time" in jobs[ids["queued"]].get("estimated", {})
        deadline = time.monotonic() + 90  # a scheduling cycle each 10 s (scheduler_iteration) or on a submit
        while not settled():
            assert time.monotonic() < deadline, f"not settled in 90 s: {_qstat_json(env, list(ids.values()))}"
            time.sleep(1)
        before = printed(_run(env, "qstat", "-f", *ids.values()))
        folder = tmp_path_factory.mktemp("pbsjobs") / "cap"
        _run(env, sys.executable, "-m", "tui.cli", "capture", "--pbs", str(folder), timeout=120)
        after = printed(_run(env, "qstat", "-f", *ids.values()))
        keys = ("comment", "estimated.start_time", "estimated.exec_vnode")
        same = {k: v for k, v in before.items() if all(after[k].get(a) == v.get(a) for a in keys)}
        assert {ids[n] for n in SETTLED} <= set(same), f"qstat changed during the read: {before} -> {after}"
        yield env, ids, folder, same
    finally:
        if ids:
            subprocess.run(["qdel", "-W", "force", *ids.values()], env=env, capture_output=True, timeout=60, cwd="/")
        config.write_bytes(original)
        _hup_scheduler(config.parent.parent)


def test_the_comment_and_estimate_are_qstats(queue) -> None:  # type: ignore[no-untyped-def]
    _, ids, folder, shown = queue
    jobs = {j.job_id: j for j in load_pbs_folder(folder).jobs}
    for name in SETTLED:
        job, text = jobs[ids[name]], shown[ids[name]]
        assert job.state == "PENDING" and job.reason == text["comment"], name
        est = text.get("estimated.start_time")
        assert (job.start_time.strftime("%a %b %d %H:%M:%S %Y") if job.start_time else None) == est, name
        assert job.sched_nodes == text.get("estimated.exec_vnode"), name
    assert jobs[ids["queued"]].start_time is not None  # strict_ordering: the top job is planned
    assert "comment" not in shown[ids["submitted_held"]] and jobs[ids["submitted_held"]].reason is None
    assert jobs[ids["run"]].state == "RUNNING"


def test_fairtop_jobs_and_standing_show_them(queue) -> None:  # type: ignore[no-untyped-def]
    env, ids, folder, shown = queue

    def fairtop(*args: str) -> str:
        return _run(env, sys.executable, "-m", "tui.cli", *args, timeout=120)

    queued = fairtop("--from", str(folder), "jobs", "--user", "pbsu2")
    assert f"Job {ids['queued']} (workq): PBS says: {shown[ids['queued']]['comment']!r}: no node has the free " \
           "resources it asks for now." in queued
    (job,) = [j for j in load_pbs_folder(folder).jobs if j.job_id == ids["queued"]]
    assert job.start_time is not None
    start = f"{job.start_time.astimezone():%Y-%m-%d %H:%M:%S}"
    assert f"Start estimate (PBS's, qstat -f estimated.start_time): {start} on " \
           f"{shown[ids['queued']]['estimated.exec_vnode']}" in queued
    never = fairtop("--from", str(folder), "jobs", "--user", "pbsu4")
    assert f"PBS says: {shown[ids['never']]['comment']!r}: the scheduler judged it can never run as submitted: " \
           "it asks for 4 ncpus; 2 available now, 2 in total." in never
    assert "Start estimate: unknown: PBS printed no estimated.start_time" in never
    held = fairtop("--pbs", "jobs", "--user", "pbsu3")  # live: the same read as capture --pbs
    assert f"PBS says: {shown[ids['held']]['comment']!r}: pbsu3 held it (qhold) on " in held
    assert f"What would move it: releasing it: qrls {ids['held']}" in held
    assert f"Job {ids['submitted_held']} (workq): PBS printed no comment for it" in \
        fairtop("--from", str(folder), "jobs", "--user", "pbsu1")
    line = fairtop("--from", str(folder), "standing", "--user", "pbsu2")
    assert line.rstrip().endswith(f"1 pending job: Not enough free nodes available; the scheduler estimates "
                                  f"{job.start_time.astimezone():%H:%M}")
