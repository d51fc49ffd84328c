"""Integration: ``--slurmrestd-sshare`` against the real sandbox's slurmrestd and sshare.

The combined snapshot must show, for every association, exactly what ``sshare -a -l -P`` prints,
with no cell the engine computes differently, and a pending job submitted for the test must
appear attached to its association with the priority the REST API gives (and squeue prints).

CI (``.ci/run``, as root) starts the sandbox and sets ``FAIRTOP_SANDBOX``; elsewhere this is
skipped. The sandbox is left as found: the one job submitted is cancelled. Takes a few seconds.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import numpy as np
import pytest

from tests.sandbox._sandbox import SKIP, scripts
from tui.analysis.breakdown import explain_slurm
from tui.analysis.standing import build_standing
from tui.app.tree_rows import PRINTED_COLUMNS, TreeTable
from tui.sources import registry
from tui.sources.saved import printed_columns
from tui.sources.slurmrestd import RestClient
from tui.sources.sshare import parse_sshare

pytestmark = [pytest.mark.sandbox, SKIP]

SANDBOX_DIR = Path(os.environ.get("SANDBOX_DIR", "/tmp/slurm-sandbox"))
SOCKET = SANDBOX_DIR / "run" / "slurmrestd.sock"


@pytest.fixture
def slurm_env(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    if not SOCKET.is_socket():
        pytest.skip(f"no slurmrestd socket at {SOCKET} (sandbox started with SANDBOX_RESTD=0?)")
    monkeypatch.setenv("SLURM_CONF", str(SANDBOX_DIR / "etc" / "slurm.conf"))
    return dict(os.environ)


def _sshare(env: dict[str, str]) -> bytes:
    return subprocess.run(["sshare", "-a", "-l", "-P"], env=env, capture_output=True, timeout=30, check=True).stdout


def _user_with_login(env: dict[str, str]) -> tuple[str, str]:
    """A user association whose user exists on this machine (sbatch runs as that user)."""
    tree = parse_sshare(_sshare(env)).tree
    for i in np.flatnonzero(tree.is_user):
        user = str(tree.user[i])
        if subprocess.run(["id", user], capture_output=True).returncode == 0:
            return str(tree.account[i]), user
    pytest.skip("the sandbox has no user association with a Unix user")


def test_combined_snapshot_shows_sshare_and_the_pending_job(slurm_env: dict[str, str]) -> None:
    account, user = _user_with_login(slurm_env)
    done = subprocess.run([str(scripts() / "usage.sh"), "--pending", user, account], env=slurm_env,
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    job_id = done.stdout.strip().splitlines()[-1].split(";")[0]
    try:
        for _ in range(3):  # sshare asked before and after: the same decay cycle
            before = _sshare(slurm_env)
            source = registry.make("slurmrestd_sshare", str(SOCKET))
            snap = source.load()
            if _sshare(slurm_env) == before:
                break
        else:
            pytest.fail("sshare changed during every one of three reads (PriorityCalcPeriod too short?)")
        table = parse_sshare(before)
        tree = snap.tree
        assert tree is not None and snap.printed is not None
        assert [tree.label(i) for i in range(tree.size)] == [table.tree.label(i) for i in range(table.tree.size)]
        assert snap.usage_unknown == ()
        assert not [w for w in snap.warnings if "not in" in w]
        assert snap.printed == printed_columns(table)
        standing = build_standing(snap)
        assert standing.reconciliation is not None and standing.reconciliation.disagreements == ()
        cells = TreeTable.from_standing(standing).cells
        parent = standing.fairshare.structure.use_parent  # type: ignore[union-attr]
        for header, col in PRINTED_COLUMNS.items():
            if header in table.header:
                want = list(table.column(header))
                if header == "LevelFS":  # sshare prints nothing for a `parent` row; the tree says "parent"
                    want = ["parent" if p and w == "" else w for p, w in zip(parent, want)]
                assert cells[col].tolist() == want, header

        with RestClient(socket=str(SOCKET)) as client:
            api = {str(j["job_id"]): j for j in client.get_json("/slurm/v0.0.38/jobs")["jobs"]}
        squeue = subprocess.run(["squeue", "-h", "-j", job_id, "-o", "%Q"], env=slurm_env, capture_output=True,
                                text=True, timeout=30, check=True).stdout.strip()
        (job,) = [j for j in snap.jobs if j.job_id == job_id]
        assert (job.state, job.account, job.user, job.partition) == ("PENDING", account, user, "parked")
        assert job.priority == api[job_id]["priority"] == int(squeue)
        row = next(i for i in np.flatnonzero(tree.is_user) if tree.account[i] == account and tree.user[i] == user)
        assert job_id in [p.job_id for p in explain_slurm(standing, int(row)).jobs]
    finally:
        subprocess.run(["scancel", job_id], env=slurm_env, capture_output=True, timeout=30)
