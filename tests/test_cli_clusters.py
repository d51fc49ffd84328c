"""``--cluster NAME|a,b|all`` on the reports, and the cluster column of multi-cluster output.

On real output of two Slurm 22.05 clusters in one slurmdbd (tests/fixtures/clusters/two_clusters).
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from tests.app.conftest import isolated_paths  # noqa: F401 - the fixture, by name
from tests.conftest import FIXTURES
from tui.cli import main
from tui.sources.cluster_split import split_clusters
from tui.sources.sshare import parse_sshare

TWO = FIXTURES / "clusters" / "two_clusters"
MULTI = TWO / "sshare_M_alpha_beta.psv"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def two_folders(isolated_paths: Path) -> Path:  # noqa: F811 - the imported fixture, by name
    """A config listing both captures as [[cluster]] tables."""
    path = isolated_paths / "clusters.toml"
    path.write_text(f'[[cluster]]\nname = "alpha"\nsource = "folder:{TWO / "alpha"}"\n\n'
                    f'[[cluster]]\nname = "beta"\nsource = "folder:{TWO / "beta"}"\n')
    return path


def printed(name: str, column: str) -> dict[tuple[str, str], str]:
    table = parse_sshare(split_clusters(MULTI.read_bytes())[name])
    return {(str(a), str(u)): v for a, u, v in zip(table.tree.account, table.tree.user, table.column(column))}


def test_report_of_sshare_M_has_a_cluster_column_and_sshares_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(capsys, "report", "--sshare", str(MULTI), "--format", "csv")
    assert code == 0 and err == ""
    rows = list(csv.DictReader(io.StringIO(out)))
    assert list(rows[0])[0] == "cluster" and [r["cluster"] for r in rows] == ["alpha"] * 8 + ["beta"] * 7
    for r in rows:  # the engine's recomputation, per cluster, equals what sshare printed
        if r["user"]:
            want = printed(r["cluster"], "FairShare")[(r["account"], r["user"])]
            assert f"{float(r['fairshare']):.6f}" == want
    code, out, _ = run(capsys, "report", "--sshare", str(MULTI), "--cluster", "beta")
    lines = out.splitlines()
    assert code == 0 and lines[1].split()[:3] == ["Cluster", "Account", "User"]
    assert lines[7].split()[:4] == ["beta", "bio", "erin", "3"] and "\nalpha " not in out
    code, out, _ = run(capsys, "report", "--sshare", str(MULTI), "--cluster", "beta,alpha", "--format", "json")
    assert [(r["cluster"], r["user"]) for r in json.loads(out) if r["user"] in ("erin", "bob")] == \
        [("beta", "erin"), ("alpha", "bob")]
    code, _, err = run(capsys, "report", "--sshare", str(MULTI), "--cluster", "gamma")
    assert code == 2 and "no cluster 'gamma' here (found: alpha, beta)" in err
    # one cluster's plain output: --cluster names it
    code, out, _ = run(capsys, "report", "--sshare", str(TWO / "beta" / "sshare_a_l_P.psv"), "--cluster", "beta",
                       "--format", "csv")
    assert code == 0 and {r["cluster"] for r in csv.DictReader(io.StringIO(out))} == {"beta"}
    code, _, err = run(capsys, "report", "--from", str(TWO / "beta"), "--cluster", "all")
    assert code == 2 and "holds one cluster" in err


def test_report_of_configured_clusters(capsys: pytest.CaptureFixture[str], two_folders: Path) -> None:
    code, out, err = run(capsys, "--config", str(two_folders), "report", "--format", "json")
    assert code == 0, err
    rows = json.loads(out)
    assert {r["cluster"] for r in rows} == {"alpha", "beta"}
    # from the captures: assoc_mgr's 2-decimal usage, the same cluster's sshare rounded down
    bob = next(r for r in rows if r["user"] == "bob")
    assert bob["cluster"] == "alpha" and int(bob["raw_usage"]) == int(printed("alpha", "RawUsage")[("astro", "bob")])
    code, out, _ = run(capsys, "--config", str(two_folders), "report", "--cluster", "beta", "--format", "csv")
    assert code == 0 and {r["cluster"] for r in csv.DictReader(io.StringIO(out))} == {"beta"}
    code, _, err = run(capsys, "--config", str(two_folders), "report", "--cluster", "gama")
    assert code == 2 and "no [[cluster]] named 'gama'" in err


def test_history_per_cluster(capsys: pytest.CaptureFixture[str], two_folders: Path) -> None:
    code, out, err = run(capsys, "--config", str(two_folders), "history", "--cluster", "all", "--format", "csv",
                         "--days", "3660")
    assert code == 0, err
    rows = list(csv.DictReader(io.StringIO(out)))
    # sacct's jobs: alice 1 CPU x 3 s, bob 2 x 2, carol 1 x 4 on alpha; dave 2 x 3, frank 1 x 5 on beta
    assert {(r["cluster"], r["user"], float(r["usage"])) for r in rows} == {
        ("alpha", "alice", 3e6), ("alpha", "bob", 4e6), ("alpha", "carol", 4e6),
        ("beta", "dave", 6e6), ("beta", "frank", 5e6)}
    code, out, _ = run(capsys, "--config", str(two_folders), "history", "--cluster", "beta", "--format", "json")
    docs = json.loads(out)
    assert [d["cluster"] for d in docs] == ["beta"] and docs[0]["check"]["agrees"] is True
    code, out, _ = run(capsys, "--config", str(two_folders), "history", "--cluster", "alpha,beta")
    assert code == 0 and out.count("# largest relative difference") == 2
    assert any(line.startswith("beta    math/frank") for line in out.splitlines())


def test_whatif_on_one_configured_cluster(capsys: pytest.CaptureFixture[str], two_folders: Path,
                                          tmp_path: Path) -> None:
    plan = tmp_path / "plan.toml"
    plan.write_text('horizon = "2-0"\nstep = "1-0"\n[[jobs]]\nuser = "frank"\naccount = "math"\nbilling = 1000\n'
                    'walltime = "1:00:00"\n')
    code, out, err = run(capsys, "--config", str(two_folders), "whatif", str(plan), "--cluster", "beta",
                         "--format", "json")
    assert code == 0, err
    assert "frank" in out
    code, _, err = run(capsys, "--config", str(two_folders), "whatif", str(plan), "--cluster", "all")
    assert code == 2 and "one cluster" in err


def test_info_lists_the_clusters(capsys: pytest.CaptureFixture[str], two_folders: Path) -> None:
    code, out, _ = run(capsys, "--config", str(two_folders), "info")
    assert code == 0
    assert f"  alpha        folder {TWO / 'alpha'}\n  beta         folder {TWO / 'beta'}\n" in out
