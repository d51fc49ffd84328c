"""Integration: two real slurmctlds (different ports and names) in one slurmdbd.

A second cluster joins the CI sandbox; each gets a small tree and short jobs. fairtop's snapshots
from one ``sshare -M a,b`` (each cluster's other commands with ``-M``) must carry exactly what
that sshare printed, for both; and the app, from one config listing both, shows and switches
them. The joined cluster is stopped, purged and removed from slurmdbd afterwards; the accounts
made in the CI sandbox's cluster are deleted. About a minute (one priority cycle).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.app.conftest import SIZE, ready
from tests.sandbox._sandbox import SKIP, charged, cluster_name, join_env, on_release, release_env, sh, unique, wait_all
from tui.analysis.standing import build_standing
from tui.sources.cluster_split import split_clusters
from tui.sources.slurm_cli import live_snapshots
from tui.sources.sshare import parse_sshare

pytestmark = [pytest.mark.sandbox, SKIP]


@pytest.fixture(scope="module", params=[pytest.param(r, marks=on_release(r)) for r in ("22.05", "24.11", "26.05")])
def two(request: pytest.FixtureRequest) -> Iterator[dict[str, object]]:
    first = release_env(request.param)
    second = join_env(None if request.param == "22.05" else first)
    a = cluster_name(first)
    b = second["SANDBOX_CLUSTER"]
    acct_a, acct_b = unique("mca"), unique("mcb")
    try:
        # Both clusters as the CI sandbox was started (Fair Tree): an earlier test may have left the
        # first on another PriorityFlags variant, and sshare -M formats every cluster's rows by the
        # local slurm.conf's flags (a classic local conf prints FairShare for a Fair Tree cluster's accounts).
        sh(first, "up.sh", timeout=120)
        sh(second, "up.sh", timeout=120)
        for env, spec in ((first, f"account root {acct_a} 40\nuser {acct_a} mcuser1 1\nuser {acct_a} mcuser2 3\n"),
                          (second, f"account root {acct_b} 70\nuser {acct_b} mcuser3 1\n")):
            path = Path(env["SLURM_CONF"]).parent / "fairtop_two_clusters_spec.txt"
            path.write_text(spec)
            sh(env, "tree.sh", str(path))
        sh(first, "usage.sh", "mcuser1", acct_a, "1", "2")
        sh(first, "usage.sh", "mcuser2", acct_a, "1", "3")
        sh(second, "usage.sh", "mcuser3", acct_b, "2", "2")
        wait_all(first, second)
        yield {"first": first, "second": second, "a": a, "b": b, "accounts": (acct_a, acct_b)}
    finally:
        sh(second, "down.sh", "--purge", timeout=120)
        for cmd in (["sacctmgr", "-i", "delete", "account", f"name={acct_a}", f"cluster={a}"],
                    ["sacctmgr", "-i", "delete", "cluster", b]):
            try:
                sh(first, *cmd)
            except AssertionError:
                pass  # nothing made yet (the join failed): nothing to remove


def sshare_M(env: dict[str, str], a: str, b: str) -> bytes:
    return sh(env, "sshare", "-M", f"{a},{b}", "-a", "-l", "-P").encode()


def test_one_sshare_M_snapshot_per_cluster_equals_what_sshare_printed(two, monkeypatch) -> None:  # noqa: ANN001
    env, a, b = two["first"], two["a"], two["b"]
    monkeypatch.setenv("SLURM_CONF", env["SLURM_CONF"])
    monkeypatch.setenv("PATH", env["PATH"])  # this release's sshare
    for _ in range(3):  # the printed values move once a minute: compare within one cycle
        before = sshare_M(env, a, b)
        snaps = live_snapshots([a, b])
        if sshare_M(env, a, b) == before:
            break
    assert list(snaps) == [a, b]
    printed = split_clusters(before)
    acct_a, acct_b = two["accounts"]
    for name, acct in ((a, acct_a), (b, acct_b)):
        snap, table = snaps[name], parse_sshare(printed[name], name)
        users = charged(env, name, acct)
        assert snap.cluster == name and snap.tree is not None and snap.printed is not None
        assert [(str(x), str(u)) for x, u in zip(snap.tree.account, snap.tree.user)] == \
            [(str(x), str(u)) for x, u in zip(table.tree.account, table.tree.user)]
        for column, cells in snap.printed.items():
            assert list(cells) == table.column(column), column
        # usage from assoc_mgr (2 decimals, rounded: x.996 prints as x+1.00), sshare prints it truncated
        printed_usage = [int(c) for c in table.column("RawUsage")]
        assert all(int(u) == p or (u == p + 1 and u == int(u)) for u, p in zip(snap.tree.usage_raw, printed_usage)), \
            ([float(u) for u in snap.tree.usage_raw], printed_usage)
        mine = {str(u): float(snap.tree.usage_raw[i]) for i, u in enumerate(snap.tree.user)
                if str(snap.tree.account[i]) == acct and u}
        assert set(mine) == set(users) and len(users) == (2 if name == a else 1)
        for user, want in users.items():  # CPUs x seconds x 1e6 (burn), a little decayed (7-day half-life)
            assert want * 0.999 < mine[user] <= want, user
        rec = build_standing(snap, "").reconciliation
        assert rec is not None and rec.checked > 10 and rec.disagreements == ()


async def test_app_shows_and_switches_both_clusters(two, tmp_path, monkeypatch) -> None:  # noqa: ANN001
    from tui.app.main import build_app
    from tui.cli import build_parser

    env, a, b = two["first"], two["a"], two["b"]
    monkeypatch.setenv("SLURM_CONF", env["SLURM_CONF"])
    monkeypatch.setenv("PATH", env["PATH"])
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    conf = tmp_path / "clusters.toml"
    conf.write_text(f'[[cluster]]\nname = "{a}"\nsource = "slurm"\n\n[[cluster]]\nname = "{b}"\nsource = "slurm"\n')
    app = build_app(build_parser().parse_args(["--config", str(conf), "--user", "mcuser3"]))
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        assert str(app.query_one("#status").render()).startswith(f"cluster {a} (1/2) · updated ")
        assert app.standing.snapshot.cluster == a and "mcuser1" in set(map(str, app.standing.snapshot.tree.user))
        await pilot.press("c")
        await ready(pilot)
        status = str(app.query_one("#status").render())
        assert status.startswith(f"cluster {b} (2/2)") and "me: mcuser3" in status and "not found" not in status
        users = set(map(str, app.standing.snapshot.tree.user))
        assert app.standing.snapshot.cluster == b and "mcuser3" in users and "mcuser1" not in users
        await pilot.press("colon", *f"cluster {a}", "enter")
        await ready(pilot)
        assert app.standing.snapshot.cluster == a
