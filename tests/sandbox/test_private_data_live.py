"""Integration (issue 24): a real Slurm with PrivateData=usage,jobs,users,accounts in slurm.conf
and slurmdbd.conf, on 22.05 and on 26.05. A publisher (``fairtop capture --every``, as root)
publishes; each normal user then reads what fairtop shows them from it, as themselves, and that
must name no association, user, account or job that their own sshare, sacctmgr, scontrol,
squeue, sprio and sacct do not show them. They still get their own standing.

Each release gets a fresh sandbox of its own (PrivateData is read by slurmdbd only when it
starts), on its own folder and ports, stopped at the end: about 2 minutes each. CI (as root)
runs it where the release's sandbox is up (22.05: FAIRTOP_SANDBOX; 26.05: FAIRTOP_SANDBOX_2605).
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tests.sandbox._sandbox import fairtop_for, on_release, release_env, scripts, sh
from tui.sources.private_data import visible_names

pytestmark = [pytest.mark.sandbox, pytest.mark.own_sandbox]

PRIVATE = "usage,jobs,users,accounts"
#: release -> its own folder and ports (beside CI's sandboxes of the same release)
PLACES = {"22.05": ("/tmp/fairtop-private-2205", 7937, 13526), "26.05": ("/tmp/fairtop-private-2605", 7947, 13536)}
USERS = ("la", "lb", "lc", "ld", "lf")
COMPARED = ("sshare_a_l_P.psv", "sacctmgr_assoc_hdr.psv", "assoc_mgr.txt", "squeue.txt", "sprio_l.txt",
            "sacct_a_P.psv")

#: Run as a user: what fairtop reads for them from a publication (the folder it chose, the names
#: its files show, and their summary line).
READER = r"""
import json, sys
from pathlib import Path
from tui.sources import registry
from tui.sources.private_data import visible_names
from tui.analysis.standing import build_standing
from tui.analysis.summary import user_summary
source = registry.make("folder", sys.argv[1], me=sys.argv[2])
source.check()
folder = Path(source.folder())
files = {p.name: p.read_bytes() for p in folder.iterdir() if p.name in sys.argv[3].split(",")}
line = user_summary(build_standing(source.load(), sys.argv[2]))
print(json.dumps({"folder": str(folder), "names": sorted(visible_names(files)), "summary": line and line.text}))
"""


def _private_env(release: str) -> dict[str, str]:
    base = release_env(release)
    folder, port, db = PLACES[release]
    env = {k: v for k, v in base.items() if not k.startswith("SANDBOX_") or k == "SANDBOX_SLURM"}
    env.update(SANDBOX_DIR=folder, SANDBOX_CTLD_PORT=str(port), SANDBOX_SLURMD_PORT=str(port + 1),
               SANDBOX_DBD_PORT=str(port + 2), SANDBOX_DB_PORT=str(db), SANDBOX_RESTD="0",
               SANDBOX_PRIVATE=PRIVATE, SLURM_CONF=f"{folder}/etc/slurm.conf")
    return env


@pytest.fixture(scope="module", params=[pytest.param(r, marks=on_release(r)) for r in ("22.05", "26.05")])
def cluster(request: pytest.FixtureRequest) -> Iterator[dict[str, str]]:
    env = _private_env(request.param)
    sh(env, "down.sh", "--purge", timeout=120)  # a sandbox left by a killed run
    try:
        sh(env, "up.sh", timeout=300)
        sh(env, "tree.sh", str(FIXTURES / "slurm" / "private" / "spec.txt"), timeout=300)
        for user, account, cpus, secs in (("la", "grp", "2", "3"), ("lc", "lsub", "1", "2"), ("ld", "root", "2", "1")):
            sh(env, "usage.sh", user, account, cpus, secs)
        for user, account in (("la", "grp"), ("lb", "grp"), ("ld", "root")):
            sh(env, "usage.sh", "--pending", user, account)
        sh(env, "sacctmgr", "-i", "add", "coordinator", "account=grp", "names=lc")
        sh(env, "usage.sh", "--wait", timeout=300)
        env["RELEASE"] = request.param
        yield env
    finally:
        subprocess.run([str(scripts() / "down.sh"), "--purge"], env=env, capture_output=True, timeout=120, check=False)


def _as(user: str, env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["runuser", "-u", user, "--", "env", f"SLURM_CONF={env['SLURM_CONF']}",
                           f"PATH={env['PATH']}", "HOME=/tmp", *args], capture_output=True, text=True, timeout=120,
                          check=False)


def _open_dir() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="fairtop-private-", dir="/tmp"))
    folder.chmod(0o777)  # every user writes their own capture below it
    return folder


def test_each_user_reads_no_more_than_their_own_commands_show(cluster: dict[str, str]) -> None:
    env = cluster
    top = _open_dir()
    try:
        pub = top / "pub"
        done = subprocess.run([*shlex.split(fairtop_for("root", env)), "capture", "--every", "10s", "--count", "1",
                               str(pub)], env=env, capture_output=True, text=True, timeout=180, check=False)
        assert done.returncode == 0, done.stderr
        assert "PrivateData=accounts,jobs,usage,users: the whole capture is readable by the publisher only" \
               in done.stderr
        current = pub / "current"
        assert json.loads((current / "privacy.json").read_text())["layout"] == "per-user"
        seen_by = {}
        for user in USERS:
            own = top / f"own-{user}"
            mine = _as(user, env, *shlex.split(fairtop_for(user, env)), "capture", str(own))
            assert mine.returncode == 0, mine.stderr
            truth = visible_names({p.name: p.read_bytes() for p in own.iterdir() if p.name in COMPARED})
            python = shlex.split(fairtop_for(user, env))[:-2]  # "env PYTHONPATH=... python" without "-m tui.cli"
            got = _as(user, env, *python, "-c", READER, str(current), user, ",".join(COMPARED))
            assert got.returncode == 0, got.stderr
            read = json.loads(got.stdout)
            assert read["folder"] == str(current / "users" / user)
            extra = set(read["names"]) - truth
            assert not extra, f"{env['RELEASE']}: {user} reads {sorted(extra)} that their own commands hide"
            assert f"user:{user}" in read["names"]
            seen_by[user] = read
            # the whole capture and the other users' views stay closed to them
            for other in ("all/sshare_a_l_P.psv", f"users/{'lb' if user != 'lb' else 'la'}/sshare_a_l_P.psv"):
                assert _as(user, env, "cat", str(current / other)).returncode != 0, other
            assert _as(user, env, "ls", str(current / "users")).returncode != 0  # who has a view: not listed
        # they still get their own standing: FairShare as sshare printed it, their place among all users
        assert "of 8 users ahead of you" in seen_by["la"]["summary"] and "FairShare 0.2" in seen_by["la"]["summary"]
        assert {"user:la", "user:lb", "account:grp"} <= set(seen_by["lc"]["names"])  # lc coordinates grp
        assert "user:ld" not in seen_by["lc"]["names"] and "user:lb" not in seen_by["la"]["names"]
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)


def test_a_one_off_capture_of_a_private_cluster_is_the_owners_only(cluster: dict[str, str]) -> None:
    top = _open_dir()
    try:
        done = subprocess.run([*shlex.split(fairtop_for("root", cluster)), "capture", str(top / "cap")],
                              env=cluster, capture_output=True, text=True, timeout=180, check=False)
        assert done.returncode == 0, done.stderr
        assert os.stat(top / "cap").st_mode & 0o777 == 0o700
        assert "readable by you only (mode 0700)" in done.stderr
    finally:
        subprocess.run(["rm", "-rf", str(top)], check=False)


def test_fairtop_with_no_flag_opens_this_cluster_as_the_user_sees_it(cluster: dict[str, str]) -> None:
    """No source flag, no config: live Slurm (sshare answers here), and la's own standing from la's own
    commands: FairShare as sshare printed it, nobody else's numbers."""
    home = _open_dir()
    try:
        fairtop = shlex.split(fairtop_for("la", cluster))
        line = _as("la", cluster, "env", f"XDG_CONFIG_HOME={home}", *fairtop, "standing")
        assert line.returncode == 0, line.stderr
        own = _as("la", cluster, "sshare", "-P", "-n", "-A", "grp", "-u", "la", "-o", "FairShare")
        fairshare = own.stdout.split()[0]
        want = f"la (grp, 1 of 2) · FairShare {fairshare} · users ahead unknown (PrivateData="
        assert line.stdout.startswith(want), line.stdout
        info = _as("la", cluster, "env", f"XDG_CONFIG_HOME={home}", *fairtop, "info")
        assert "source:       slurm  (found: sshare is on PATH and scontrol ping says: Slurmctld(primary)" \
            in info.stdout
    finally:
        subprocess.run(["rm", "-rf", str(home)], check=False)

