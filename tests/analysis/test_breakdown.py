"""The fairshare breakdown on the Slurm testsuite trees and on hand-made ones."""

from __future__ import annotations

import math
from datetime import datetime, timezone

import pytest

from tests.conftest import FIXTURES
from tests.treebuild import tree_from_text
from tui.analysis.breakdown import (
    describe_duration,
    explain_slurm,
    halving_usage_classic,
    halving_usage_level_fs,
)
from tui.analysis.standing import build_standing
from tui.engine import compute
from tui.engine.projection import add_usage
from tui.model import Job, PrioritySettings, Snapshot, path_to
from tui.sources.sshare import parse_sshare


def view_of(tree, algorithm, dampening=1, jobs=(), half_life_s=7 * 86400):
    settings = PrioritySettings(algorithm=algorithm, dampening=dampening, decay_half_life_s=half_life_s)
    return build_standing(Snapshot("test", "test", tree=tree, settings=settings, jobs=tuple(jobs)), me="")


def suite_tree(name):
    return parse_sshare((FIXTURES / "sshare" / name).read_bytes()).tree


def row_of(tree, account, user=""):
    return next(i for i in range(tree.size) if tree.account[i] == account and tree.user[i] == user)


def test_classic_parent_account_path_of_uhtastd2():
    tree = suite_tree("test24_3_classic.psv")
    row = row_of(tree, "AccountHTA", "UHTAStd2")
    ex = explain_slurm(view_of(tree, "classic"), row)
    assert [s.label for s in ex.steps] == ["root", "AccountH", "AccountHTA", "AccountHTA/UHTAStd2"]
    root, h, hta, me = ex.steps
    assert h.shares_formula == "(50/150) = 0.333333"
    assert h.usage_formula == "E = N (first level) = 110 / 210 = 0.523810"
    assert hta.transparent and hta.raw_shares == "parent" and hta.effective_usage == "0.523810"
    # NormShares skips the parent account: (30/170)*(50/150)
    assert me.shares_formula == "(30/170) × (50/150) = 0.058824"
    assert me.level_shares == 170
    assert me.usage_formula == ("E = N + (E_parent − N) × 30/170 = 0.047619 + (0.523810 − 0.047619)"
                                " × 30/170 = 0.131653")
    assert ex.factor_text == "0.211966"
    assert ex.factor_formula == "F = 2^(−E / S / d) = 2^(−0.131653 / 0.058824 / 1) = 0.211966"
    assert ex.rank is None
    # E/S = (1/21 + 10/119) / (1/17) = 2.238095
    assert ex.usage_ratio == pytest.approx(2.238095, abs=1e-6)
    assert "2.24x its share of the decayed usage (all past use, halved every 7 days)" in ex.summary


def test_classic_halving_on_the_testsuite_tree_matches_the_engine():
    tree = suite_tree("test24_3_classic.psv")
    row = row_of(tree, "AccountHTA", "UHTAStd2")
    ex = explain_slurm(view_of(tree, "classic"), row)
    # S = 1/17, E0 = 1/21 + 10/119, 1 - E0 - S = 17/21 => x = (1/17)*210/(17/21) = 4410/289 s
    assert ex.halving_hours * 3600 == pytest.approx(4410 / 289, rel=1e-9)
    after = compute(add_usage(tree, row, 4410 / 289), "classic")
    assert after.fairshare[row] == pytest.approx(0.211966 / 2, abs=1e-6)


def test_core_hours_per_halving_on_a_flat_hand_made_tree():
    # a: 1 of 10 shares, 18,000 of 100,000 core-hours => E/S = 0.18/0.1 = 1.8
    tree = tree_from_text(f"""
@a 1 {18_000 * 3600}
@b 9 {82_000 * 3600}
""")
    a = row_of(tree, "root", "a")
    ex = explain_slurm(view_of(tree, "classic", half_life_s=3 * 86400), a)
    # x = S d R / (1 - E0 - S d) = 0.1 * 100,000 / 0.72 = 13,888.9 h
    assert ex.halving_hours == pytest.approx(100_000 * 0.1 / 0.72, rel=1e-12)
    assert ex.usage_ratio == pytest.approx(1.8)
    assert ex.factor_text == f"{2 ** -1.8:f}" == "0.287175"
    assert ex.summary == ("root/a used 1.80x its share of the decayed usage (all past use, halved every 3 days);"
                          " fairshare 0.287175."
                          " It halves after 13,889 more SU (billing-hours).")
    after = compute(add_usage(tree, a, ex.halving_hours * 3600), "classic")
    assert after.fairshare[a] == pytest.approx(2 ** -1.8 / 2, rel=1e-12)


def test_halving_with_dampening_and_when_impossible():
    # d = 2: x = 0.2 * R / (1 - 0.18 - 0.2)
    assert halving_usage_classic(0.18, 0.1, 100_000, 2) == pytest.approx(20_000 / 0.62)
    tree = tree_from_text("@a 1 180\n@b 9 820")
    a = row_of(tree, "root", "a")
    x = halving_usage_classic(0.18, 0.1, 1000, 2)
    assert compute(add_usage(tree, a, x), "classic", 2).fairshare[a] == pytest.approx(2 ** -0.9 / 2)
    assert halving_usage_classic(0.9, 0.5, 1000) == math.inf  # E cannot grow by S*d = 0.5
    assert math.isnan(halving_usage_classic(0.1, 0.0, 1000))  # no shares: already 0
    assert halving_usage_level_fs(4, 10) == 20  # U 0.4 -> 24/30 = 0.8
    assert halving_usage_level_fs(5, 10) == math.inf
    assert math.isnan(halving_usage_level_fs(0, 10))


def test_fair_tree_uga1_level_by_level():
    tree = suite_tree("test24_4_fair_tree.psv")
    row = row_of(tree, "aGA", "uGA1")
    ex = explain_slurm(view_of(tree, "fair_tree"), row)
    assert [s.label for s in ex.steps] == ["root", "aG", "aGA", "aGA/uGA1"]
    _, ag, aga, me = ex.steps
    assert ag.shares_formula == "S = 8/208 = 0.038462"
    assert ag.usage_formula == "U = usage / usage(root) = 20 / 240 = 0.083333"
    assert ag.level_fs_formula == "LevelFS = S / U = 0.038462 / 0.083333 = 0.461538"
    # root level sorted: u1, aE, aF (inf), aB, u2, aA, aD, aG, aC
    assert (ag.position, ag.siblings) == (8, 9)
    assert (aga.position, aga.siblings, aga.level_fs) == (2, 2, "1.000000")
    # aG's two children (uG1, aGA) both have LevelFS 1.0: all tied, so the place reads as a tie
    assert aga.tied == 2 and aga.place_text == "tied with all 2 (equal LevelFS)"
    assert aga.note == "its first user keeps the rank of the user reached just before"
    assert ag.place_text == "place 8 of 9" and me.place_text == "place 1 of 2"
    assert me.level_fs == "1.250000" and (me.position, me.siblings) == (1, 2)
    assert me.usage_formula == "U = usage / usage(aGA) = 4 / 10 = 0.400000"
    assert (ex.rank, ex.users, ex.factor_text) == (4, 21, "0.190476")
    assert ex.factor_formula == "F = rank / N = 4/21 = 0.190476"
    assert ex.usage_ratio == pytest.approx(0.8)
    assert ex.halving_hours == pytest.approx(20 / 3600)  # 4*10/(10-8) s
    # 21 users, rank 21 best; uGA1 holds rank 4, so ranks 5..21 (17 users, no ties) are ahead of it.
    assert ex.summary.startswith("aGA/uGA1 ranks 4 of 21 (21 is best: 17 users are ahead): fairshare 4/21 = 0.190476. "
                                 "Within aGA it used 0.80x its share")
    after = compute(add_usage(tree, row, 20), "fair_tree")
    assert float(after.level_fs[row]) == pytest.approx(0.625)


def test_fair_tree_parent_rows_and_accounts():
    tree = suite_tree("test24_4_fair_tree.psv")
    v = view_of(tree, "fair_tree")
    ex = explain_slurm(v, row_of(tree, "aDA", "uDA2"))
    assert [s.label for s in ex.steps] == ["root", "aD", "aDA", "aDA/uDA2"]
    assert ex.steps[2].transparent
    # uDA2 sits at aD's level: S = 30/170, U = 10/110
    assert ex.steps[3].shares_formula == "S = 30/170 = 0.176471"
    assert ex.steps[3].usage_formula == "U = usage / usage(aD) = 10 / 110 = 0.090909"
    assert ex.steps[3].level_fs == "1.941176"
    assert (ex.rank, ex.factor_text) == (8, "0.380952")
    acct = explain_slurm(v, row_of(tree, "aB"))
    assert acct.rank is None and acct.factor_text == "" and not acct.is_user
    assert acct.steps[-1].level_fs == "2.769231"


def test_pending_jobs_priority_parts_highest_first():
    tree = suite_tree("test24_4_fair_tree.psv")
    t = datetime(2026, 1, 1, tzinfo=timezone.utc)
    jobs = [
        Job("11", "uGA1", "aGA", "cpu", "PENDING", {"cpu": 4}, 3600, t, None, 1500,
            {"AGE": 500.0, "FAIRSHARE": 1000.0}),
        Job("12", "uGA1", "aGA", "cpu", "PENDING", {"cpu": 4}, 3600, t, None, 2500,
            {"AGE": 1500.0, "FAIRSHARE": 1000.0}),
        Job("13", "uGA1", "aGA", "cpu", "RUNNING", {"cpu": 4}, 3600, t, t),
        Job("14", "uGA2", "aGA", "cpu", "PENDING", {"cpu": 4}, 3600, t, None, 9000, {"AGE": 9000.0}),
    ]
    ex = explain_slurm(view_of(tree, "fair_tree", jobs=jobs), row_of(tree, "aGA", "uGA1"))
    assert [j.job_id for j in ex.jobs] == ["12", "11"]
    assert ex.jobs[0].parts == (("AGE", 1500.0), ("FAIRSHARE", 1000.0))
    acct = explain_slurm(view_of(tree, "fair_tree", jobs=jobs), row_of(tree, "aGA"))
    assert [j.job_id for j in acct.jobs] == ["14", "12", "11"]


def test_errors_and_helpers():
    with pytest.raises(ValueError, match="no Slurm"):
        explain_slurm(build_standing(Snapshot("c", "s"), me=""), 0)
    tree = tree_from_text("@a 1 10")
    with pytest.raises(ValueError, match="row 5"):
        explain_slurm(view_of(tree, "classic"), 5)
    assert path_to(suite_tree("test24_3_classic.psv"), 0) == [0]
    assert describe_duration(604800) == "7 days"
    assert describe_duration(50400) == "14 hours"
    assert describe_duration(129600) == "36 hours"
    assert describe_duration(90) == "90 seconds"
    ex = explain_slurm(view_of(tree, "classic", half_life_s=0), 1)
    assert "of the usage since the last reset" in ex.summary


def test_root_row():
    tree = suite_tree("test24_3_classic.psv")
    ex = explain_slurm(view_of(tree, "classic"), 0)
    assert [s.label for s in ex.steps] == ["root"]
    assert ex.factor_formula == "the root has no factor of its own"
    assert ex.summary == ("root is the whole cluster: 0.0583 SU (billing-hours) of decayed usage (all past use, halved"
                          " every 7 days), shared among 12 user associations.")


def test_a_value_26_05_leaves_blank_is_labelled_as_fairtops() -> None:
    """Slurm 26.05 (classic) prints no FairShare for accounts: the breakdown still explains the
    account's factor, labelled as fairtop's own; on 22.05, where sshare printed it, no label."""
    from tests.conftest import FIXTURES
    from tui.analysis.breakdown import explain_slurm
    from tui.analysis.standing import build_standing
    from tui.sources.saved import load_folder

    for where, labelled in (("slurm-26.05", True), ("slurm", False)):
        snap = load_folder(FIXTURES / where / "nested_parent" / "classic")
        assert snap.tree is not None
        row = next(i for i in range(snap.tree.size) if str(snap.tree.account[i]) == "aa" and not snap.tree.is_user[i])
        text = explain_slurm(build_standing(snap), row).factor_formula
        assert text.startswith("F = 2^(−E / S / d) = 2^(−0.1")
        assert ("fairtop's own: Slurm 26.05.3's sshare prints no FairShare for accounts" in text) == labelled
