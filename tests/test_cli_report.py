"""``fairtop report``: the engine's command-line face, run through ``tui.cli.main``."""

from __future__ import annotations

import csv
import io
import json

import pytest

from tests.conftest import FIXTURES
from tui.cli import main
from tui.model import NO_VAL, USE_PARENT

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
    assert list(rows[0]) == ["account", "user", "raw_shares", "norm_shares", "raw_usage", "norm_usage",
                             "effective_usage", "level_fs", "fairshare", "rank"]
    by = {(r["account"], r["user"]): r for r in rows}
    root = by[("root", "")]
    assert root["raw_shares"] is None and root["fairshare"] is None and root["norm_usage"] is None
    u1 = by[("root", "u1")]    # sshare: root|u1|10|0.048077|0|0.000000|0.000000|1.000000|inf
    assert u1["level_fs"] == "inf" and u1["fairshare"] == 1.0 and u1["norm_usage"] == 0.0 and u1["rank"] == 21
    uga1 = by[("aGA", "uGA1")]
    assert uga1["fairshare"] == 0.190476 and uga1["level_fs"] == 1.25
    assert by[("root", "u2")]["norm_usage"] == 0.041667      # as sshare prints it: 10/240 to six decimals
    assert by[("aD", "uD1")]["raw_shares"] == "parent" and by[("aD", "uD1")]["level_fs"] is None
    assert by[("aA", "")]["fairshare"] is None and by[("aA", "")]["rank"] is None  # accounts: no FairShare, no rank
    # the table's Rank column: tied users share a rank (the five at FairShare 1.0: 21), uC1 is last (1)
    assert {r["user"] for r in rows if r["rank"] == 21} == {"u1", "aE1", "aE2", "uF1", "uF2"}
    assert by[("aC", "uC1")]["rank"] == 1 and by[("aGA", "uGA2")]["rank"] == 2


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
    assert lines[0] == ("account,user,raw_shares,norm_shares,raw_usage,norm_usage,effective_usage,level_fs,"
                        "fairshare,rank")
    user2 = next(line for line in lines if line.startswith("AccountC,User2,"))
    assert user2.split(",")[-3:] == ["", "0.148651", ""]  # classic: no LevelFS, no rank


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


def _old_style_json(tree, result, damping) -> str:
    """The report as the first version wrote it: one dict per row, ``json.dumps(indent=1)``
    (the pure-Python encoder), values from the cells sshare prints. The streamed writer must
    mean the same."""
    from tui.formats.sshare import sshare_cells

    cells = sshare_cells(tree, result, damping)

    def value(text: str):
        return None if text == "" else "inf" if text == "inf" else float(text)

    rows = []
    for i in range(tree.size):
        raw = int(tree.shares_raw[i])
        rows.append({
            "account": str(tree.account[i]), "user": str(tree.user[i]),
            "raw_shares": "parent" if raw == USE_PARENT else None if raw == NO_VAL else raw,
            "norm_shares": value(cells["NormShares"][i]), "raw_usage": int(tree.usage_raw[i]),
            "norm_usage": value(cells["NormUsage"][i]), "effective_usage": value(cells["EffectvUsage"][i]),
            "level_fs": value(cells["LevelFS"][i]) if "LevelFS" in cells else None,
            "fairshare": value(cells["FairShare"][i]),
            "rank": int(result.rank[i]) if result.rank is not None and tree.is_user[i] else None,
        })
    return json.dumps(rows, indent=1)


@pytest.mark.parametrize("name, algorithm", [("test24_4_fair_tree.psv", "fair_tree"),
                                             ("test24_3_classic.psv", "classic"),
                                             ("test24_1_classic.psv", "classic")])
@pytest.mark.parametrize("block", [1, 7, 20_000])
def test_streamed_json_and_csv_mean_what_dicts_meant(name, algorithm, block):
    """Blocks of any size (one row, a size that splits the tree unevenly, all at once) give the
    objects of the dict-per-row encoding, and CSV the same cells."""
    from tui.engine import compute
    from tui.formats.sshare import REPORT_COLUMNS, report_blocks
    from tui.formats.tabular import write_columns_csv, write_columns_json
    from tui.sources.sshare import parse_sshare

    tree = parse_sshare((SSHARE / name).read_bytes(), name).tree
    result = compute(tree, algorithm, 1)
    out = io.StringIO()
    write_columns_json(report_blocks(tree, result, 1, size=block), ("account", "user"), out)
    new = json.loads(out.getvalue())
    assert new == json.loads(_old_style_json(tree, result, 1))
    assert out.getvalue().count("\n") == tree.size + 2  # one row a line between "[" and "]"
    out = io.StringIO()
    write_columns_csv(report_blocks(tree, result, 1, size=block), REPORT_COLUMNS, out)
    rows = list(csv.DictReader(io.StringIO(out.getvalue())))
    assert [r["fairshare"] for r in rows] == ["" if r["fairshare"] is None else f"{r['fairshare']:f}" for r in new]


def test_names_that_need_quoting_survive_json_and_csv():
    from tui.formats.tabular import write_columns_csv, write_columns_json

    cols = {"account": ['a,"b"', "plain", "ü\n"], "fairshare": ["0.500000", "", "inf"]}
    out = io.StringIO()
    write_columns_json([cols], ("account",), out)
    assert json.loads(out.getvalue()) == [{"account": 'a,"b"', "fairshare": 0.5},
                                          {"account": "plain", "fairshare": None},
                                          {"account": "ü\n", "fairshare": "inf"}]
    out = io.StringIO()
    write_columns_csv([cols], list(cols), out)
    assert list(csv.reader(io.StringIO(out.getvalue()))) == [["account", "fairshare"], ['a,"b"', "0.500000"],
                                                             ["plain", ""], ["ü\n", "inf"]]
    out = io.StringIO()
    write_columns_json([{"account": [], "fairshare": []}], ("account",), out)
    assert json.loads(out.getvalue()) == []


@pytest.mark.parametrize("fmt", ["table", "json", "csv"])
def test_warnings_go_to_stderr_in_every_format(tmp_path, capsys, fmt):
    """A capture without scontrol_show_partition.txt: the warning is on stderr, stdout is the
    report alone (json and csv parse; the table has no '# warning' line)."""
    import shutil

    folder = tmp_path / "capture"
    shutil.copytree(FIXTURES / "slurm" / "deep4" / "fair_tree", folder)
    (folder / "scontrol_show_partition.txt").unlink(missing_ok=True)
    code, out, err = run(capsys, "report", "--from", str(folder), "--format", fmt)
    assert code == 0
    assert "fairtop: warning: scontrol_show_partition.txt not saved" in err
    assert all(line.startswith("fairtop: warning: ") for line in err.splitlines())
    assert "# warning" not in out and "fairtop: warning" not in out
    if fmt == "json":
        assert len(json.loads(out)) == out.count("\n") - 2 == 46  # deep4: 46 associations
    elif fmt == "csv":
        assert out.startswith("account,user,raw_shares,")


def test_plain_and_escaped_text_columns_side_by_side():
    """A plain column (its quotes in the keys) beside one that needs escaping, in both orders."""
    from tui.formats.tabular import write_columns_json

    for cols in ({"account": ["a", "b"], "user": ["x\\y", 'q"']}, {"user": ["x\\y", "é"], "account": ["a", "b"]}):
        out = io.StringIO()
        write_columns_json([cols], ("account", "user"), out)
        assert json.loads(out.getvalue()) == [dict(zip(cols, row)) for row in zip(*cols.values())]
