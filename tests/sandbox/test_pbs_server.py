"""Integration: fairtop's PBS path on a real OpenPBS server (``tests/pbs_sandbox/up.sh``: pbs_server
with its PostgreSQL datastore, pbs_sched with fairshare on, pbs_mom, one node). Jobs run with
``qsub`` as three users, so the scheduler itself accrues usage (``ncpus*walltime``) and decays it
(``fairshare_decay_time`` 20 s, factor 0.5). Then:

- ``fairtop capture --pbs`` on the server, and every entity's values (``pbsfs -g``), the whole
  ``pbsfs -p`` listing and ``pbsfs -c`` of every pair equal fairtop's, computed from the capture;
- ``capture --pbs --every 10s --keep 3`` publishes while a job runs, and two follower processes
  each read both snapshots, each equal to the ``pbsfs`` listing saved beside it;
- the planner's PBS projection (the capture's decay settings from ``sched_config``, its last decay
  from the usage file) equals the scheduler's own usage after two or more decays.

CI (``.ci/run``, as root) starts the sandbox and sets ``FAIRTOP_PBS_SERVER`` to its pbs.conf;
elsewhere this is skipped, in CI as root it fails. About two and a half minutes.
"""

from __future__ import annotations

import itertools
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT
from tests.needs import env, needs
from tui.engine.pbs import compute, decay_usage
from tui.engine.projection import project_pbs
from tui.formats.pbsfs import compare, entity, listing
from tui.model import PbsTree
from tui.sources.pbs_folder import load_pbs_folder

CONF = os.environ.get("FAIRTOP_PBS_SERVER", "")
PREFIX = Path(os.environ.get("PBS_PREFIX", "/opt/openpbs"))
pytestmark = [pytest.mark.sandbox,
              needs(env("FAIRTOP_PBS_SERVER", "no PBS server sandbox: tests/pbs_sandbox/up.sh as root prints its "
                                              "pbs.conf; .ci/run does so"))]
#: (user, cpus, seconds) of the jobs the fixture runs: two at once on the 2-CPU node, then one of 2 CPUs
JOBS = (("pbsu1", 1, 40), ("pbsu3", 1, 30), ("pbsu2", 2, 20))


def _env() -> dict[str, str]:
    assert CONF, "FAIRTOP_PBS_SERVER is not set: .ci/run starts tests/pbs_sandbox/up.sh as root and sets it"
    return {**os.environ, "PBS_CONF_FILE": CONF, "PYTHONPATH": str(ROOT),
            "PATH": f"{PREFIX}/bin:{PREFIX}/sbin:{os.environ.get('PATH', '')}"}


def _run(env: dict[str, str], *args: str, timeout: float = 60) -> str:
    done = subprocess.run(list(args), env=env, capture_output=True, text=True, timeout=timeout, cwd="/")
    assert done.returncode == 0, f"{' '.join(args)}: exit {done.returncode}: {done.stderr[-800:]}"
    return done.stdout


def _qsub(env: dict[str, str], user: str, cpus: int, seconds: int) -> str:
    return _run(env, "runuser", "-u", user, "--", "env", f"PBS_CONF_FILE={env['PBS_CONF_FILE']}",
                f"{PREFIX}/bin/qsub", "-j", "oe", "-o", "/dev/null", "-l", f"select=1:ncpus={cpus}",
                "-l", "walltime=00:02:00", "--", "/bin/sleep", str(seconds)).strip()


def _wait_finished(env: dict[str, str], jobs: list[str], timeout: float = 240) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        states = json.loads(_run(env, "qstat", "-x", "-f", "-F", "json", *jobs))["Jobs"]
        if all(j["job_state"] in ("F", "X") for j in states.values()):
            return
        time.sleep(2)
    raise AssertionError(f"jobs {jobs} not finished within {timeout:g} s")


def _capture(env: dict[str, str], folder: Path) -> PbsTree:
    _run(env, sys.executable, "-m", "tui.cli", "capture", "--pbs", str(folder))
    tree = load_pbs_folder(folder).pbs
    assert tree is not None
    return tree


def _leaves(tree: PbsTree) -> np.ndarray:
    return np.setdiff1d(np.arange(len(tree.name)), tree.parent[tree.parent >= 0])


@pytest.fixture(scope="module")
def env() -> Iterator[dict[str, str]]:
    """The sandbox after the users' jobs ran to the end."""
    env = _env()
    jobs = [_qsub(env, *job) for job in JOBS]
    _wait_finished(env, jobs)
    yield env


def test_capture_after_real_jobs_equals_pbsfs_on_every_entity(env: dict[str, str], tmp_path: Path) -> None:
    for attempt in range(3):  # the scheduler may rewrite the usage file between the capture and pbsfs
        folder = tmp_path / f"cap{attempt}"
        tree = _capture(env, folder)
        names = [str(n) for n in tree.name[1:]]
        printed = {n: _run(env, "pbsfs", "-g", n) for n in names}
        pairs = {(a, b): _run(env, "pbsfs", "-c", a, b) for a, b in itertools.combinations(names, 2)}
        now = _run(env, "pbsfs", "-p")
        home = Path(_run(env, "sh", "-c", '. "$PBS_CONF_FILE"; echo "$PBS_HOME"').strip())
        if (home / "sched_priv" / "usage").read_bytes() == (folder / "usage").read_bytes():
            break
    else:
        raise AssertionError("the scheduler rewrote its usage file during each of 3 captures")
    users = {str(n): float(u) for n, u in zip(tree.name, tree.usage) if str(n).startswith("pbsu")}
    # a short job may end before its second cycle (PBS counts usage between cycles) or decay back to 1
    assert sum(users[u] > 1 for u, _, _ in JOBS) >= 2, f"the jobs accrued no usage: {users}"
    fs = compute(tree)
    assert now == listing(tree, fs) == (folder / "pbsfs.txt").read_text()
    for name, text in printed.items():  # fairshare_tree_usage, usage/perc, percentage, the path
        assert text == entity(tree, name, fs), name
    for (a, b), text in pairs.items():  # the most deserving of every pair
        assert text == compare(tree, a, b, fs), (a, b)
    assert tree.decay_factor == 0.5 and tree.decay_time_s == 20 and tree.usage_res == "ncpus*walltime"


#: A follower: a fairtop source on the publisher's symlink, read on the app's refresh until it has
#: seen ``n`` snapshots; prints the folder and the usage of every entity of each.
FOLLOWER = r"""
import json, sys, time
from pathlib import Path
from tui.sources import registry
link, n = Path(sys.argv[1]), int(sys.argv[2])
deadline = time.monotonic() + 90
while not link.exists() and time.monotonic() < deadline:
    time.sleep(0.2)
source = registry.make("folder", str(link))
seen, last = [], None
while len(seen) < n and time.monotonic() < deadline:
    snap = source.load()
    if snap is not last:
        seen.append({"folder": str(link.resolve()),
                     "usage": {str(k): float(u) for k, u in zip(snap.pbs.name, snap.pbs.usage)}})
        last = snap
    time.sleep(0.2)
print(json.dumps(seen))
"""


def test_publisher_and_two_followers_see_the_schedulers_new_usage(env: dict[str, str], tmp_path: Path) -> None:
    root = tmp_path / "pub"
    job = _qsub(env, "pbsu4", 1, 45)  # usage the scheduler adds at each cycle while the publisher runs
    deadline = time.monotonic() + 60
    while "usage\t\t\t: 1 (" in _run(env, "pbsfs", "-g", "pbsu4"):  # running, and counted once
        assert time.monotonic() < deadline, "pbsu4's job accrued nothing within 60 s"
        time.sleep(1)
    followers = [subprocess.Popen([sys.executable, "-c", FOLLOWER, str(root / "current"), "2"], env=env, cwd=ROOT,
                                  stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    try:
        publisher = _run(env, sys.executable, "-m", "tui.cli", "capture", "--pbs", "--every", "10s", "--count", "2",
                         "--keep", "3", str(root), timeout=120)
        published = [line.split(" ", 1)[1] for line in publisher.splitlines() if line.startswith("current ")]
        assert len(published) == 2 and published[0] != published[1]
        outs = [f.communicate(timeout=90) for f in followers]
    finally:
        for f in followers:
            if f.poll() is None:
                f.kill()
        _wait_finished(env, [job])
    usages = []
    for folder in published:
        tree = load_pbs_folder(folder).pbs
        assert tree is not None
        assert (Path(folder) / "pbsfs.txt").read_text() == listing(tree)  # the scheduler's own listing
        usages.append({str(k): float(u) for k, u in zip(tree.name, tree.usage)})
    assert usages[1] != usages[0], "the scheduler's usage did not move between the captures"
    for out, err in outs:
        seen = json.loads(out or "[]")
        assert [s["folder"] for s in seen] == published, err  # each snapshot, in order, none missed
        assert [s["usage"] for s in seen] == usages


def test_planner_projection_equals_the_schedulers_decay(env: dict[str, str], tmp_path: Path) -> None:
    before = _capture(env, tmp_path / "before")
    taken = load_pbs_folder(tmp_path / "before").taken_at.timestamp()
    assert before.last_decay and before.decay_time_s and before.decay_factor
    period = before.decay_time_s
    deadline = time.monotonic() + 4 * period + 30
    while True:  # until the scheduler has decayed at least twice more
        time.sleep(5)
        after = _capture(env, tmp_path / f"after{int(time.monotonic())}")
        assert after.last_decay is not None
        if after.last_decay - before.last_decay >= 2 * period:
            break
        assert time.monotonic() < deadline, "pbs_sched did not decay twice within 4 periods"
    decays, rest = divmod(after.last_decay - before.last_decay, period)
    assert rest == 0  # the scheduler keeps its decays on the period's grid
    leaves = _leaves(before)
    moved = before.usage[leaves] > 1
    assert moved.any(), "nothing left to decay"
    assert np.array_equal(after.usage[leaves], decay_usage(before.usage, before.decay_factor, decays)[leaves])
    # the planner: no job, from the first capture's moment to just after the scheduler's last decay
    at = after.last_decay - taken + 0.5
    res = project_pbs(before, [], [], [], [], np.array([at]), leaves, before.decay_factor, float(period),
                      before.last_decay + period - taken)
    assert np.array_equal(res.usage[0], after.usage[leaves]), (res.usage[0], after.usage[leaves])


def test_fairtop_with_no_flag_on_the_pbs_server_opens_it(env: dict[str, str], tmp_path: Path) -> None:
    """Issue 24: no source flag, no config, on the PBS server: the live PBS source (its files and
    pbsfs), never the demo; its listing equals pbsfs -p's; fairtop info says why."""
    no_slurm = {**env, "PATH": ":".join(p for p in env["PATH"].split(":")
                                         if not (Path(p) / "sshare").exists()) + ":/opt/openpbs/bin",
                "XDG_CONFIG_HOME": str(tmp_path)}
    for attempt in range(3):  # the scheduler may rewrite its usage between the two reads
        live = _run(no_slurm, sys.executable, "-m", "tui.cli", "report", "--format", "json")
        _capture(env, tmp_path / f"cap{attempt}")
        saved = _run(env, sys.executable, "-m", "tui.cli", "report", "--format", "json", "--from",
                     str(tmp_path / f"cap{attempt}"))
        if live == saved:
            break
    else:
        raise AssertionError(f"fairtop report (no flag) differs from a capture's report:\n{live}\n{saved}")
    assert all(f'"{user}"' in live for user, _, _ in JOBS)  # the server's own users, not the demo's
    info = _run(no_slurm, sys.executable, "-m", "tui.cli", "info")
    assert "source:       pbs  (found: PBS Professional is here (qstat, pbsfs" in info, info
