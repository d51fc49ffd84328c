"""``fairtop report``: the engine's command-line face, run through ``tui.cli.main``."""

from __future__ import annotations

import json

import pytest

from tests.conftest import FIXTURES
from tui.cli import main

SSHARE = FIXTURES / "sshare"
PBS = FIXTURES / "pbs"


def run(capsys, *argv):
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_json_rows_for_fair_tree(capsys):
    code, out, err = run(capsys, "report", "--sshare", str(SSHARE / "test24_4_fair_tree.psv"), "--format", "json")
    assert code == 0 and err == ""
    rows = json.loads(out)
    assert len(rows) == 35
    assert set(rows[0]) == {"account", "user", "raw_shares", "norm_shares", "raw_usage", "effective_usage",
                            "level_fs", "fairshare"}
    by = {(r["account"], r["user"]): r for r in rows}
    assert by[("root", "")]["raw_shares"] is None and by[("root", "")]["fairshare"] is None
    u1 = by[("root", "u1")]
    assert u1["level_fs"] is None and u1["fairshare"] == 1.0      # inf -> null
    uga1 = by[("aGA", "uGA1")]
    assert round(uga1["fairshare"], 6) == 0.190476 and round(uga1["level_fs"], 6) == 1.25
    assert by[("aD", "uD1")]["raw_shares"] == "parent" and by[("aD", "uD1")]["level_fs"] is None
    assert by[("aA", "")]["fairshare"] is None                    # accounts: empty under Fair Tree


def test_algorithm_comes_from_the_header_and_classic_has_no_level_fs(capsys):
    code, out, _ = run(capsys, "report", "--sshare", str(SSHARE / "test24_3_classic.psv"), "--format", "json")
    rows = {(r["account"], r["user"]): r for r in json.loads(out)}
    assert code == 0
    assert all(r["level_fs"] is None for r in rows.values())
    assert round(rows[("AccountHTA", "UHTAStd2")]["fairshare"], 6) == 0.211966
    assert round(rows[("AccountHTA", "UHTAStd2")]["norm_shares"], 6) == 0.058824


def test_damping_changes_classic_fairshare(capsys):
    code, out, _ = run(capsys, "report", "--sshare", str(SSHARE / "test24_1_classic.psv"),
                       "--damping", "2", "--format", "csv")
    assert code == 0
    lines = out.splitlines()
    assert lines[0] == "account,user,raw_shares,norm_shares,raw_usage,effective_usage,level_fs,fairshare"
    user2 = next(line for line in lines if line.startswith("AccountC,User2,"))
    assert round(float(user2.split(",")[-1]), 6) == 0.148651


def test_table_shows_sshare_cells_and_rank(capsys):
    code, out, _ = run(capsys, "report", "--sshare", str(SSHARE / "test24_4_fair_tree.psv"))
    assert code == 0
    assert "printed (sshare) order" in out.splitlines()[0]
    line = next(x for x in out.splitlines() if " uGA2 " in x)
    assert line.split()[-3:] == ["0.095238", "0.833333", "2"]


def test_pbs_report_seed_002(capsys):
    code, out, _ = run(capsys, "report", "--pbs-resource-group", str(PBS / "seed002_resource_group"),
                       "--pbs-usage", str(PBS / "seed002_usage.txt"), "--pbs-unknown-shares", "10",
                       "--format", "json")
    assert code == 0
    rows = {r["name"]: r for r in json.loads(out)}
    assert rows["B2"]["fairshare_tree_usage"] == 0.500624
    assert rows["B3"]["fairshare_tree_usage"] == 0.438202
    assert rows["L5"]["fairshare_tree_usage"] == 0.333750
    assert rows["L5"]["percentage"] == 10.000001
    assert rows["L5"]["usage_per_perc"] == pytest.approx(1000, abs=0.01)


@pytest.mark.parametrize("content, message", [
    (b"", "empty"),
    (b"\x00\x01binary", "binary"),
    (b"\xff\xfe\xfd", "not UTF-8"),
    (b"Account|User|RawShares\nroot||\n", "no column RawUsage"),
    (b"Account|User|RawShares|RawUsage\nroot|||10\n a||x|5\n", "RawShares must be"),
    (b"Account|User|RawShares|RawUsage\nroot|||10\n a||1|5\n   b||1|5\n", "indentation"),
    (b"Account|User|RawShares|RawUsage\nroot|||10\n a||1\n", "expected 4 fields"),
    (b"Account|User|RawShares|RawUsage\nroot|||10\n a||1|1e999\n", "finite"),
    (b"Account|User|RawShares|RawUsage\nroot|||10\n a||1|5\n  b|u|1|5\n", "listed under 'b'"),
])
def test_bad_input_is_one_line_naming_file_and_exit_2(tmp_path, capsys, content, message):
    path = tmp_path / "bad.psv"
    path.write_bytes(content)
    code, out, err = run(capsys, "report", "--sshare", str(path))
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and str(path) in err and message in err
    assert "Traceback" not in err


def test_missing_file_and_missing_usage(capsys):
    code, _, err = run(capsys, "report", "--sshare", "/nonexistent/sshare.psv")
    assert code == 2 and "/nonexistent/sshare.psv" in err
    code, _, err = run(capsys, "report", "--pbs-resource-group", str(PBS / "seed002_resource_group"))
    assert code == 2 and "--pbs-usage" in err


def test_bad_damping_is_rejected_by_argparse(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["report", "--sshare", str(SSHARE / "test24_1_classic.psv"), "--damping", "0"])
    assert exc.value.code == 2


@pytest.mark.parametrize("make", ["missing", "empty", "file"])
def test_bad_from_fails_before_the_app_starts(tmp_path, capsys, monkeypatch, make):
    from tui import config

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "cfg"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(config, "SYSTEM_FILE", tmp_path / "etc.toml")
    target = tmp_path / "capture"
    if make == "empty":
        target.mkdir()
    elif make == "file":
        target.write_text("x")
    assert main(["--from", str(target)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "fairtop capture" in err and str(target) in err
    assert not config.state_file().exists()  # nothing remembered
