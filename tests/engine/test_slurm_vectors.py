"""Slurm's own testsuite vectors (test24.1/3/4) and the spec's real-22.05 and hand examples."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.slurm_oracle import cell_mismatches
from tests.treebuild import tree_from_text
from tui.engine import compute
from tui.formats.sshare import sshare_cells
from tui.sources.sshare import parse_sshare


def mismatches(path, algorithm, damping=1):
    table = parse_sshare(path.read_bytes(), str(path))
    return cell_mismatches(table.tree, table, algorithm, damping)


@pytest.mark.parametrize("name, algorithm, columns", [
    ("test24_1_classic", "classic", 4),   # NormShares NormUsage EffectvUsage FairShare
    ("test24_3_classic", "classic", 4),
    ("test24_4_fair_tree", "fair_tree", 5),
])
def test_slurm_testsuite_expected_output(name, algorithm, columns):
    path = FIXTURES / "sshare" / f"{name}.psv"
    bad, checked = mismatches(path, algorithm)
    rows = len(parse_sshare(path.read_bytes()).cells)
    assert checked == rows * columns
    assert bad == []


def test_classic_dampening_hand_values():
    # spec C3: test24.1 with FairShareDampeningFactor=2
    table = parse_sshare((FIXTURES / "sshare" / "test24_1_classic.psv").read_bytes())
    cells = sshare_cells(table.tree, compute(table.tree, "classic", 2), 2)
    fs = dict(zip((table.tree.label(i) for i in range(table.tree.size)), cells["FairShare"]))
    assert fs["AccountC/User2"] == "0.148651"   # 2**(-5.5/2)
    assert fs["AccountA"] == "0.677128"         # 2**(-(0.45/0.4)/2)
    assert fs["root"] == "0.707107"             # 2**(-1/2)


REAL_C5 = """\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare
root|||1.000000|7998874||1.000000|0.500000
 root|root|1|0.333333|0|0.000000|0.000000|1.000000
 ta||1|0.333333|5999154|0.750000|0.750000|0.210224
  ta|fsrta0|0|0.000000|0|0.000000|0.000000|0.000000
  ta|fsrta1|1|0.333333|5999154|0.750000|0.750000|0.210224
 tb||1|0.333333|1999720|0.250000|0.250000|0.594603
  tb|fsrtb1|1|0.333333|1999720|0.250000|0.250000|0.594603
"""

REAL_F5 = """\
Account|User|RawShares|NormShares|RawUsage|NormUsage|EffectvUsage|FairShare|LevelFS
root|||0.000000|7998297||1.000000||
 root|root|1|0.333333|0|0.000000|0.000000|1.000000|inf
 ta||1|0.333333|5998721|0.750000|0.750000||0.444445
  ta|fsrta0|0|0.000000|0|0.000000|0.000000|0.250000|0.000000
  ta|fsrta1|1|1.000000|5998721|0.750000|1.000000|0.500000|1.000000
 tb||1|0.333333|1999576|0.250000|0.250000||1.333332
  tb|fsrtb1|1|1.000000|1999576|0.250000|1.000000|0.750000|1.000000
"""


@pytest.mark.parametrize("text, algorithm", [(REAL_C5, "classic"), (REAL_F5, "fair_tree")])
def test_real_slurm_22_05_outputs_from_the_spec(tmp_path, text, algorithm):
    path = tmp_path / "sshare.psv"
    path.write_text(text)
    bad, checked = mismatches(path, algorithm)
    assert checked >= 28
    assert bad == []


def fair_tree_fs(tree):
    result = compute(tree, "fair_tree")
    return {tree.label(i): round(float(result.fairshare[i]), 6)
            for i in range(tree.size) if tree.is_user[i]}


F2_TREE = """
@root 1
ta 1
  @fsrta1 1
  @fsrta0 0
tb 1
  @fsrtb1 1
"""


def test_tied_accounts_are_not_merged_and_follow_children_list_order():
    # spec F2, verified on real 22.05.8: no usage, so every LevelFS is inf (zero shares: 0).
    # After a live 'sacctmgr add' the children_list is sorted (ta before tb) ...
    assert fair_tree_fs(tree_from_text(F2_TREE, order=["ta", "tb"])) == {
        "root/root": 1.0, "ta/fsrta1": 1.0, "ta/fsrta0": 0.5, "tb/fsrtb1": 0.5}
    # ... after a slurmctld restart it is slurmdbd's lft order (tb before ta).
    assert fair_tree_fs(tree_from_text(F2_TREE, order=["tb", "ta"])) == {
        "root/root": 1.0, "ta/fsrta1": 1.0, "ta/fsrta0": 0.25, "tb/fsrtb1": 1.0}


F3_TREE = """
A 3
  @a1 1 30
  @a2 1 0
B 1
  @b1 1 10
  @b2 1 0
"""


def test_account_tie_with_usage_depends_on_order():
    # spec F3: LF_A = LF_B = 1.0 exactly
    assert fair_tree_fs(tree_from_text(F3_TREE, order=["A", "B"])) == {
        "A/a2": 1.0, "A/a1": 0.75, "B/b2": 0.75, "B/b1": 0.25}
    assert fair_tree_fs(tree_from_text(F3_TREE, order=["B", "A"])) == {
        "B/b2": 1.0, "B/b1": 0.75, "A/a2": 0.75, "A/a1": 0.25}


def test_user_ties_account_first_child_keeps_rank():
    # spec F4: user u and account C both at LevelFS 1.0
    tree = tree_from_text("""
@u 1 10
C 1
  @c1 1 4
  @c2 1 6
""")
    assert fair_tree_fs(tree) == {"root/u": 1.0, "C/c1": 1.0, "C/c2": round(1 / 3, 6)}
    result = compute(tree, "fair_tree")
    lf = dict(zip((tree.label(i) for i in range(tree.size)), result.level_fs))
    assert float(lf["C/c1"]) == pytest.approx(1.25)
    assert float(lf["C/c2"]) == pytest.approx(0.5 / 0.6)


def test_long_double_breaks_the_mathematical_tie_of_ud2_and_ud3():
    # spec 3.5: (40/170)/(20/110) < (50/170)/(25/110) in long double although both are 22/17
    table = parse_sshare((FIXTURES / "sshare" / "test24_4_fair_tree.psv").read_bytes())
    result = compute(table.tree, "fair_tree")
    labels = [table.tree.label(i) for i in range(table.tree.size)]
    lf = dict(zip(labels, result.level_fs))
    rank = dict(zip(labels, result.rank))
    assert lf["aD/uD2"] < lf["aD/uD3"]
    assert lf["aD/uD3"] == lf["aDA/uDA3"]
    assert (rank["aD/uD3"], rank["aDA/uDA3"], rank["aD/uD2"]) == (7, 7, 5)


def test_fasrc_test_lab_line_within_rounding_of_printed_inputs():
    # seed 003: test_lab NormShares 0.001363, EffectvUsage 0.000572, FairShare 0.747627.
    from tui.engine.classic import fairshare_factor

    lo = float(fairshare_factor(0.0005725, 0.0013625))
    hi = float(fairshare_factor(0.0005715, 0.0013635))
    mid = float(fairshare_factor(0.000572, 0.001363))
    assert lo <= 0.747627 <= hi
    assert abs(mid - 0.747627) < 2e-4


def test_parent_user_directly_under_root_shows_root_ratio_under_fair_tree():
    # _normalize_assoc_shares_fair_tree: shares of F(a) = root over root's level_shares (NO_VAL)
    tree = tree_from_text("""
@p parent 5
@q 1 5
""")
    result = compute(tree, "fair_tree")
    cells = sshare_cells(tree, result)
    assert cells["NormShares"][1] == "0.000000"
    assert cells["LevelFS"][1] == ""            # parent rows print no LevelFS
    assert cells["FairShare"][1] == "1.000000"  # parent users sort first (LevelFS +inf)
    classic_cells = sshare_cells(tree, compute(tree, "classic"))
    assert classic_cells["NormShares"][1] == "1.000000"  # classic: the root's 1.0
