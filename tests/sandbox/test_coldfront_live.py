"""Integration: a real ColdFront's budget pushed into a real Slurm as ColdFront pushes it
(``coldfront slurm_dump``, then ``sacctmgr load``), a job run on that account, and fairtop's
reconciliation of ColdFront's usage with what Slurm counts and enforces (GrpTRESMins against
GrpTRESRaw, read by the live Slurm source). Skipped without ``FAIRTOP_SANDBOX`` (CI starts a
sandbox as root) or without the test ColdFront. About a minute.

From the dump the test loads the cluster line (renamed to the sandbox's cluster, without the
options ColdFront's test data puts there: its University Metered HPC resource's own slurm_specs,
GrpTRESMins=cpu=60 for the whole cluster) and the lines of account cgray-metered, byte for byte.
"""

from __future__ import annotations

import pwd
import subprocess
import time
from pathlib import Path

import pytest

from tests.coldfront.conftest import coldfront  # noqa: F401 - the real ColdFront, for this module too
from tests.coldfront.site import Site
from tests.coldfront.test_client import view
from tests.sandbox._sandbox import SKIP, cluster_name, first_env, sh
from tui import config
from tui.analysis.coldfront import coldfront_lines, reconcile, slurm_budgets

pytestmark = [pytest.mark.sandbox, SKIP]

ACCOUNT, USER = "cgray-metered", "cgray"


def _load(dump: str, env: dict[str, str], folder: Path) -> str:
    """The dump's lines for ACCOUNT (its line under root, and its own block of users), loaded
    into the sandbox's cluster; the account's line."""
    lines = dump.splitlines()
    [account] = [line for line in lines if line.startswith(f"Account - '{ACCOUNT}'")]
    at = lines.index(f"Parent - '{ACCOUNT}'")
    block = [lines[at]]
    for line in lines[at + 1:]:
        if not line.startswith("User - "):
            break
        block.append(line)
    text = "\n".join([f"Cluster - '{cluster_name(env)}'", "Parent - 'root'", account, *block]) + "\n"
    (folder / "load.cfg").write_text(text)
    sh(env, "sacctmgr", "-i", "load", f"file={folder / 'load.cfg'}")
    return account


def _used(env: dict[str, str]) -> int:
    """GrpTRESRaw cpu of ACCOUNT's own association (its GrpTRESMins=cpu=LIMIT(USED)); -1: none."""
    out = sh(env, "scontrol", "show", "assoc_mgr", "flags=assoc", f"accounts={ACCOUNT}")
    for record in out.split("ClusterName=")[1:]:
        if " UserName= " not in record:
            continue  # a user's association
        for token in record.split():
            if token.startswith("GrpTRESMins="):
                for item in token.removeprefix("GrpTRESMins=").split(","):
                    if item.startswith("cpu="):
                        return int(item.split("(")[1].rstrip(")"))
    return -1


def test_slurm_dump_budget_in_slurm_beside_coldfronts_usage(
        coldfront: Site, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # noqa: F811 - the fixture
    env = first_env()
    try:  # before the association: slurmctld takes a user's uid when the association arrives
        pwd.getpwnam(USER)
    except KeyError:
        subprocess.run(["useradd", "-M", "-s", "/bin/sh", USER], check=True, timeout=30)
    line = _load(coldfront.slurm_dump(tmp_path)["metered-hpc"], env, tmp_path)
    assert line == f"Account - '{ACCOUNT}':GrpTRESMins=cpu=9000000"
    before = _used(env)
    sh(env, "usage.sh", USER, ACCOUNT, "2", "40")
    deadline = time.monotonic() + 150
    while (used := _used(env)) <= before:
        assert time.monotonic() < deadline, f"GrpTRESRaw cpu of {ACCOUNT} stayed {used}"
        time.sleep(1)

    for key in ("SLURM_CONF", "PATH"):
        monkeypatch.setenv(key, env[key])
    budgets, where = slurm_budgets(config.make_source(config.Settings(source="slurm")))
    assert budgets is not None, where
    [budget] = [b for b in budgets if b.account == ACCOUNT and not b.user and b.tres == "cpu"]
    assert (budget.limit_minutes, budget.used_minutes) == (9_000_000, used)

    cf = view(coldfront, USER)
    [r] = [x for x in reconcile(cf.allocations, budgets) if x.budget is not None]
    assert r.attribute.budget == 150000.0 and r.attribute.usage == 41234.5  # ColdFront's, from XDMoD
    assert r.slurm_used_hours == used / 60 and r.difference_hours == pytest.approx(used / 60 - 41234.5)
    assert "not ColdFront's budget" not in r.cause  # the limit Slurm enforces is ColdFront's budget x 60
    assert r.cause.startswith("Slurm's usage decays with PriorityDecayHalfLife")
    left = 9_000_000 - used
    assert r.enforced_by == (f"Slurm: jobs of {ACCOUNT} start until GrpTRESRaw cpu reaches GrpTRESMins "
                             f"cpu=9,000,000 ({left:,} min = {left / 60:,.1f} h left); ColdFront's number stops "
                             "nothing")
    assert f"    Slurm's own usage (GrpTRESRaw cpu): {used / 60:,.1f} h · difference " \
           f"{used / 60 - 41234.5:+,.1f} h" in coldfront_lines(cf, [r])
