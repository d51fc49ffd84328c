"""Capture folders: load_folder, report --from over every real capture, the CLI's errors."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from pathlib import Path

import pytest
from _samples import ASSOC_MGR, CONFIG, SACCTMGR, SPRIO, SQUEUE, SSHARE

from tests.conftest import FIXTURES
from tui.analysis.standing import build_standing
from tui.cli import main
from tui.engine import compute
from tui.formats.sshare import sshare_cells
from tui.sources import saved
from tui.sources.partial_sshare import is_partial
from tui.sources.errors import InputError

SLURM = Path(__file__).resolve().parents[1] / "fixtures" / "slurm"
#: Every capture folder (``<scenario>/<variant>/``) committed from the sandbox.
#: Whole-cluster captures (a PrivateData user's own capture lists only some rows: test_private_data).
VARIANTS = sorted(p.parent for p in SLURM.glob("*/*/sshare_a_l_P.psv") if not is_partial(p.read_bytes()))


def _ids(paths: list[Path]) -> list[str]:
    return [f"{p.parent.name}/{p.name}" for p in paths]


def _printed(value: float | str | None) -> str:
    """A JSON value of ``fairtop report`` back to the cell sshare prints: null is an empty cell,
    the string "inf" is inf, a number has six decimals."""
    if value is None:
        return ""
    return value if isinstance(value, str) else f"{value:f}"


@pytest.mark.skipif(not VARIANTS, reason="no capture folders under tests/fixtures/slurm/<scenario>/<variant>/")
@pytest.mark.parametrize("folder", VARIANTS, ids=_ids(VARIANTS))
def test_report_from_reproduces_sshare(folder: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``fairtop report --from`` gives every NormShares/NormUsage/EffectvUsage/LevelFS/FairShare
    cell sshare printed, inf and empty cells included, in JSON and in CSV."""
    table = saved.load_table(folder)
    assert main(["report", "--from", str(folder), "--format", "json"]) == 0
    text = capsys.readouterr().out
    rows = json.loads(text)
    assert main(["report", "--from", str(folder), "--format", "csv"]) == 0
    csv_rows = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert len(rows) == len(csv_rows) == table.tree.size
    # numbers as sshare prints them: six decimals, never a double's long tail (0.30000000000000004)
    assert not re.search(r"\d\.\d{7,}", text)
    printed = dict(zip(table.header, zip(*table.cells)))
    mismatches = []
    for col, key in (("NormShares", "norm_shares"), ("NormUsage", "norm_usage"), ("EffectvUsage", "effective_usage"),
                     ("LevelFS", "level_fs"), ("FairShare", "fairshare")):
        if col not in printed:
            continue
        for i, (row, csv_row) in enumerate(zip(rows, csv_rows)):
            want, got = printed[col][i], _printed(row[key])
            if got != want or csv_row[key] != want:
                mismatches.append(f"line {table.line_numbers[i]} {table.tree.label(i)} {col}: sshare {want!r}, "
                                  f"fairtop json {got!r}, csv {csv_row[key]!r}")
    assert not mismatches, f"{folder}: {len(mismatches)} cells differ:\n" + "\n".join(mismatches)
    for i, row in enumerate(rows):  # RawShares as printed (RawUsage comes from assoc_mgr's 2 decimals)
        assert ("" if row["raw_shares"] is None else str(row["raw_shares"])) == printed["RawShares"][i]


@pytest.mark.skipif(not VARIANTS, reason="no capture folders under tests/fixtures/slurm/<scenario>/<variant>/")
@pytest.mark.parametrize("folder", VARIANTS, ids=_ids(VARIANTS))
def test_load_folder_real(folder: Path) -> None:
    snap = saved.load_folder(folder)
    assert snap.tree is not None and snap.cluster
    assert snap.tree.sibling_order is not None  # sacctmgr_assoc_hdr.psv has LFT
    conf = (folder / "scontrol_show_config.txt").read_text()
    assert (snap.settings.algorithm == "classic") == ("NO_FAIR_TREE" in conf or "DEPTH_OBLIVIOUS" in conf)
    # every cell sshare prints, also in the table layout (whole table, not just json); where the
    # 2-decimal usage cannot decide a tie or a last digit (near_tie), the engine on the printed order
    standing = build_standing(snap)
    near = {(d.row, d.column): d.printed for d in standing.reconciliation.within_precision}
    tree = standing.snapshot.tree
    cells = sshare_cells(tree, compute(tree, snap.settings.algorithm, snap.settings.dampening), snap.settings.dampening)
    table = saved.load_table(folder)
    for col in ("NormShares", "EffectvUsage", "FairShare"):
        assert [near.get((i, col), c) for i, c in enumerate(cells[col])] == table.column(col), col
    assert len(near) <= 1  # near_tie's div02g3/u02300 EffectvUsage; none elsewhere
    sprio = (folder / "sprio_l.txt").read_text().strip().splitlines()
    assert sum(1 for j in snap.jobs if j.factors) == len(sprio) - 1


def _folder(tmp_path: Path, **files: str) -> Path:
    names = {"sshare": "sshare_a_l_P.psv", "config": "scontrol_show_config.txt", "assoc": "sacctmgr_assoc_hdr.psv",
             "assoc_mgr": "assoc_mgr.txt", "sprio": "sprio_l.txt", "squeue": "squeue.txt"}
    for key, text in files.items():
        (tmp_path / names[key]).write_text(text)
    return tmp_path


def test_only_sshare_gives_warnings(tmp_path: Path) -> None:
    snap = saved.load_folder(_folder(tmp_path, sshare=SSHARE))
    assert snap.tree is not None and snap.tree.size == 8 and snap.tree.sibling_order is None
    assert snap.settings.algorithm == "classic"  # no LevelFS column, no config
    assert any("scontrol_show_config.txt" in w for w in snap.warnings)
    assert any("sacctmgr_assoc_hdr.psv" in w for w in snap.warnings)
    assert snap.cluster == tmp_path.name and snap.jobs == ()


def test_empty_file_with_err_is_a_warning(tmp_path: Path) -> None:
    folder = _folder(tmp_path, sshare=SSHARE, sprio="")
    (folder / "sprio_l.txt.err").write_text("sprio: error: Access/permission denied\n")
    snap = saved.load_folder(folder)
    assert any("sprio_l.txt is empty (sprio: error: Access/permission denied)" in w for w in snap.warnings)


def test_sacctmgr_without_the_association_falls_back(tmp_path: Path) -> None:
    snap = saved.load_folder(_folder(tmp_path, sshare=SSHARE, assoc=SACCTMGR))
    assert snap.tree is not None and snap.tree.sibling_order is None
    assert any("no association" in w for w in snap.warnings)


def test_sibling_order_from_lft(tmp_path: Path) -> None:
    rows = ["Account|User|ParentName|LFT", "root|||1", "root|root||14", "chem|||root|10".replace("|||", "||"),
            "chem|carol||11", "phys||root|2", "phys|alice||3", "astro||phys|4", "astro|bob||5"]
    snap = saved.load_folder(_folder(tmp_path, sshare=SSHARE, assoc="\n".join(rows) + "\n"))
    assert snap.tree is not None
    assert snap.tree.sibling_order.tolist() == [1, 14, 10, 11, 2, 3, 4, 5]
    assert not [w for w in snap.warnings if "sacctmgr" in w]


def test_assoc_mgr_usage_must_agree(tmp_path: Path) -> None:
    # the sample assoc_mgr is of another tree: it is reported and sshare's usage kept
    snap = saved.load_folder(_folder(tmp_path, sshare=SSHARE, assoc_mgr=ASSOC_MGR))
    assert snap.tree is not None and snap.tree.usage_raw[2] == 5999154
    assert any("assoc_mgr.txt" in w for w in snap.warnings)


def test_malformed_optional_file_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"scontrol_show_config.txt:2"):
        saved.load_folder(_folder(tmp_path, sshare=SSHARE, config="PriorityType = a\nPriorityFlags = NOPE\n"))


def test_missing_folder_and_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="no such folder"):
        saved.load_folder(tmp_path / "nope")
    with pytest.raises(InputError, match="no sshare_a_l_P.psv"):
        saved.load_folder(tmp_path)


def test_report_folder_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert "NO_FAIR_TREE" in CONFIG  # the sample is the sandbox's classic variant
    folder = _folder(tmp_path, sshare=SSHARE, config=CONFIG, sprio=SPRIO, squeue=SQUEUE)

    def report(*extra: str) -> str:
        assert main(["report", "--from", str(folder), *extra]) == 0
        return capsys.readouterr().out

    table = report()
    assert "classic, FairShareDampeningFactor 1" in table.splitlines()[0]
    assert json.loads(report("--format", "json"))[0]["account"] == "root"
    assert report("--format", "csv").startswith("account,user,")
    assert "fair tree" in report("--algorithm", "fair_tree").splitlines()[0]
    assert "FairShareDampeningFactor 5" in report("--damping", "5").splitlines()[0]


def test_cli_bad_input_exit_2(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--from", str(tmp_path / "missing")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("fairtop: ") and "no such folder" in err
    _folder(tmp_path, sshare=SSHARE.replace("|60|", "|sixty|"))
    assert main(["report", "--from", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "sshare_a_l_P.psv:4: RawShares" in err


def test_cli_report_from_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _folder(tmp_path, sshare=SSHARE, config=CONFIG.replace("NO_FAIR_TREE", ""))
    assert main(["report", "--from", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"# {tmp_path}: fair tree") and "Rank" in out


@pytest.mark.skipif(not VARIANTS, reason="no capture folders under tests/fixtures/slurm/<scenario>/<variant>/")
def test_every_file_of_a_real_folder_corrupted(tmp_path: Path) -> None:
    """Each file fairtop reads, truncated or with junk bytes: InputError or a snapshot, nothing else."""
    src = VARIANTS[0]
    for name in saved.FILES.values():
        if not (src / name).exists():
            continue
        data = (src / name).read_bytes()
        for bad in (data[: len(data) // 2], data[:7], b"\xff\xfe" + data, data.replace(b"|", b"", 3),
                    data.replace(b"\n", b"\n  ", 2)):
            shutil.rmtree(tmp_path / "f", ignore_errors=True)
            shutil.copytree(src, tmp_path / "f")
            (tmp_path / "f" / name).write_bytes(bad)
            try:
                saved.load_folder(tmp_path / "f")
            except InputError:
                pass


def test_live_capture_partitions_from_slurm_conf_and_jobs_attached() -> None:
    # The sandbox capture has slurm.conf but no scontrol_show_partition.txt, and plain squeue/sprio
    # (no account column): burn and parked bill 1,000,000 per CPU on the one 8-CPU node.
    snap = saved.load_folder(FIXTURES / "slurm" / "live" / "fair_tree")
    parts = {p.name: (p.billing_weights, p.total_cpus, p.total_nodes) for p in snap.partitions}
    assert parts == {"debug": ({}, 8, 1), "burn": ({"cpu": 1e6}, 8, 1), "parked": ({"cpu": 1e6}, 8, 1)}
    assert any("read from slurm.conf" in w for w in snap.warnings)
    by_id = {j.job_id: j for j in snap.jobs}
    assert (by_id["7"].user, by_id["7"].account) == ("le", "lsub")  # le has one association
    assert by_id["8"].account == ""  # la has several: not guessed
    assert any("2 job(s) listed without an account" in w for w in snap.warnings)


def test_expand_hostlist_and_slurm_conf_defaults() -> None:
    from tui.sources.slurm_text import expand_hostlist, parse_slurm_conf_partitions

    assert expand_hostlist("node[01-03,7],gpu1") == ["node01", "node02", "node03", "node7", "gpu1"]
    conf = ("NodeName=c[1-4] CPUs=48\nNodeName=g1 CPUs=64  # gpu\nPartitionName=DEFAULT TRESBillingWeights=CPU=2\n"
            "PartitionName=cpu Nodes=c[1-4]\nPartitionName=gpu Nodes=g1 TRESBillingWeights=CPU=1,GRES/gpu=10\n")
    got = {p.name: (p.billing_weights, p.total_cpus, p.total_nodes) for p in parse_slurm_conf_partitions(conf)}
    assert got == {"cpu": ({"cpu": 2.0}, 192, 4), "gpu": ({"cpu": 1.0, "gres/gpu": 10.0}, 64, 1)}
    with pytest.raises(InputError, match="slurm.conf:1"):
        parse_slurm_conf_partitions("NodeName=c[4-1] CPUs=2\n")


def test_budgets_from_assoc_mgr_limits_and_usage(tmp_path: Path) -> None:
    # The sandbox capture with a GrpTRESMins limit put on user ld (used 49,995 billing-minutes).
    live = FIXTURES / "slurm" / "live" / "fair_tree"
    mgr = (live / "assoc_mgr.txt").read_text()
    ld = mgr.index("UserName=ld(")
    mgr = mgr[:ld] + mgr[ld:].replace("billing=N(49995)", "billing=60000(49995)", 1)
    mgr = mgr.replace("GrpTRESRunMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(0)",
                      "GrpTRESRunMins=cpu=N(0),mem=N(0),energy=N(0),node=N(0),billing=N(120)", 1)
    snap = saved.load_folder(_folder(tmp_path, sshare=(live / "sshare_a_l_P.psv").read_text(), assoc_mgr=mgr))
    assert [(b.account, b.user, b.tres, b.limit_minutes, b.used_minutes, b.remaining_minutes)
            for b in snap.budgets] == [("root", "ld", "billing", 60000, 49995, 10005)]


def test_budgets_from_sshare_alone_have_no_usage(tmp_path: Path) -> None:
    text = (FIXTURES / "slurm" / "live" / "fair_tree" / "sshare_a_l_P.psv").read_text().splitlines()
    cells = text[2].split("|")
    cells[9] = "billing=200000"  # GrpTRESMins of root/ld
    text[2] = "|".join(cells)
    snap = saved.load_folder(_folder(tmp_path, sshare="\n".join(text) + "\n"))
    assert [(b.account, b.user, b.tres, b.limit_minutes, b.used_minutes, b.running_minutes)
            for b in snap.budgets] == [("root", "ld", "billing", 200000, None, 0)]
