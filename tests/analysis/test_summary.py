"""The first screen's summary line and the places that make a Fair Tree rank.

Values are the demo cluster's (seed 0, user alice, the snapshot tests' fixed time) and the
Slurm testsuite's test24.4 tree (spec §3.6 F1), derived by hand below.
"""

from __future__ import annotations

from datetime import datetime, timezone

import numpy as np
import pytest

from tests.conftest import FIXTURES
from tui.analysis.breakdown import explain_slurm
from tui.analysis.rank_path import fs_subtree_users, ordinal, rank_path
from tui.analysis.standing import build_standing
from tui.analysis.summary import compact_number, user_summary
from tui.model import PrioritySettings, Snapshot
from tui.sources.demo import demo_snapshot
from tui.sources.sshare import parse_sshare

NOW = datetime(2025, 1, 15, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def demo():
    return build_standing(demo_snapshot(seed=0, me="alice", now=NOW), "alice")


def test_demo_summary_for_alice(demo) -> None:
    s = user_summary(demo)
    assert s is not None and s.row == int(demo.my_rows[0])
    # FairShare as sshare prints it (874/2501); 2,501 - 874 = 1,627 users hold a higher rank;
    # mech_vargas_lab is last (5th of 5) among mech's labs; one pending job at 8,601,704;
    # allocation 1024: 500,000 SU granted, 281,596 left = 56%, and at 1,034 SU/day it lasts to
    # its end on 2025-06-18.
    # made-up numbers: the line says whose they are (never the viewer's own name alone)
    assert s.text == ("alice (demo user) · FairShare 0.349460 · 1,627 of 2,501 users ahead of you · "
                      "held back by "
                      "mech_vargas_lab (5th of 5 in mech) · 1 pending job, priority 8.6M · allocation "
                      "mech_vargas_lab 56% left (lasts to its end, 2025-06-18)")


def test_demo_rank_path_adds_up_to_alices_rank(demo) -> None:
    path = rank_path(demo, int(demo.my_rows[0]))
    assert path is not None
    places = [(lv.name, lv.within, lv.place, lv.count, lv.tied, lv.users_ahead) for lv in path.levels]
    assert places == [("seas", "root", 7, 8, 1, 1349), ("mech", "seas", 6, 11, 1, 218),
                      ("mech_vargas_lab", "mech", 5, 5, 1, 60), ("alice", "mech_vargas_lab", 2, 24, 24, 1)]
    # 1,349 + 218 + 60 + 1 users are reached first: rank 2,501 - 1,628 = 873 without ties; all 24
    # users of the lab are `parent` (LevelFS +inf), tied, so alice keeps ahmedj's 874.
    assert (path.visited_before, path.rank_without_ties, path.rank, path.ahead) == (1628, 873, 874, 1627)
    assert path.levels[-1].place_text == "tied with all 24 in mech_vargas_lab"
    assert path.lines()[-2:] == ["N − users reached first = 2,501 − 1,628 = 873",
                                 "a tie (equal LevelFS) with the user reached just before keeps that user's rank: 874"]


def test_fs_subtree_users_count_every_user_once(demo) -> None:
    tree, res = demo.snapshot.tree, demo.fairshare
    below = fs_subtree_users(tree, res)
    assert below[0] == tree.user_count == 2501
    # `parent` accounts hold nobody: their users sit under their fairshare parent
    assert not below[res.structure.use_parent & ~tree.is_user].any()
    top = np.flatnonzero(res.structure.fs_parent == 0)
    assert below[top].sum() == 2501


def test_test24_4_uga1_rank_by_a_tie() -> None:
    tree = parse_sshare((FIXTURES / "sshare" / "test24_4_fair_tree.psv").read_bytes()).tree
    st = build_standing(Snapshot("t", "t", tree=tree, settings=PrioritySettings(algorithm="fair_tree")))
    row = next(i for i in range(tree.size) if tree.account[i] == "aGA" and tree.user[i] == "uGA1")
    path = rank_path(st, row)
    assert path is not None
    # root level: u1, aE, aF, aB, u2, aA, aD before aG (8th of 9): 1 + 2 + 2 + 2 + 1 + 3 + 6 = 17 users;
    # in aG, uG1 (a user, sorted first on the tie at LevelFS 1.0) before aGA; uGA1 first in aGA.
    assert [(lv.name, lv.place, lv.count, lv.tied, lv.users_ahead) for lv in path.levels] == [
        ("aG", 8, 9, 1, 17), ("aGA", 2, 2, 2, 1), ("uGA1", 1, 2, 1, 0)]
    # 21 - 18 = 3 without ties; aGA ties uG1, so its first user keeps uG1's rank 4 (spec rule 2)
    assert (path.rank_without_ties, path.rank, path.ahead) == (3, 4, 17)
    assert path.held_back_by() is path.levels[0]
    first = explain_slurm(st, row).rank_lines[0]
    assert first == "aG: 8th of 9 in root: 17 users under the 7 siblings placed before it"


def test_helpers() -> None:
    assert [ordinal(n) for n in (1, 2, 3, 4, 11, 12, 13, 21, 22, 101, 111)] == [
        "1st", "2nd", "3rd", "4th", "11th", "12th", "13th", "21st", "22nd", "101st", "111th"]
    assert [compact_number(x) for x in (8_601_704, 12_400, 950, 2.5e9)] == ["8.6M", "12.4k", "950", "2.5G"]


def test_summary_without_usage_or_user(demo) -> None:
    from dataclasses import replace

    blind = replace(demo, snapshot=replace(demo.snapshot, capabilities=frozenset({"partitions"})))
    s = user_summary(blind)
    assert s is not None
    assert s.parts[:3] == ("alice (demo user)",
                           "FairShare unknown (built-in demo cluster (seed 0) gives no usage)",
                           "pending jobs unknown (the source gives no queue)")
    nobody = build_standing(demo.snapshot, "nobody")
    assert user_summary(nobody).text == "nobody: no association in this snapshot"
    assert user_summary(build_standing(demo.snapshot, "")) is None


def test_test24_4_uf1_ties_through_two_levels() -> None:
    """Spec §3.6 F1: u1, aE and aF (LevelFS inf, no usage) lead the root level and all rank 21/21."""
    tree = parse_sshare((FIXTURES / "sshare" / "test24_4_fair_tree.psv").read_bytes()).tree
    st = build_standing(Snapshot("t", "t", tree=tree, settings=PrioritySettings(algorithm="fair_tree")))
    row = next(i for i in range(tree.size) if tree.account[i] == "aF" and tree.user[i] == "uF1")
    ex = explain_slurm(st, row)
    af, uf1 = ex.steps[1:]
    assert af.place_text == "place 3 of 9 · tied with 2 others"
    assert af.note == ("tied with aE, placed just before it (equal LevelFS); its first user keeps the rank of "
                       "the user reached just before")
    assert uf1.place_text == "tied with all 2 (equal LevelFS)" and uf1.note == ""
    # u1 (1 user) and aE (2 users) come first: 21 - 3 = 18 without ties; the ties keep u1's 21
    assert ex.rank_lines == (
        "aF: 3rd of 9 (tied with 2 others) in root: 3 users under the 2 siblings placed before it",
        "uF1: tied with all 2 in aF: 0 users reached before it",
        "N − users reached first = 21 − 3 = 18",
        "a tie (equal LevelFS) with the user reached just before keeps that user's rank: 21")
    assert ex.rank == 21


def test_a_tie_before_you_does_not_hold_you_back() -> None:
    """The real near-tie capture: u07133 has no usage and is 32nd of 50 users in div07g1 only by
    the order among the 47 tied at LevelFS inf; a tie keeps the rank (2020, one user ahead). What
    holds it back is the one account above div07 at the top (div07 is 2nd of 11), not its usage.
    u07136 (usage 0.375 of its account's) is last of the 50 on its own LevelFS."""
    from tui.sources.registry import make

    snap = make("folder", str(FIXTURES / "slurm" / "near_tie" / "fair_tree")).load()
    s = user_summary(build_standing(snap, "u07133"))
    assert s is not None
    assert "1 of 2,021 users ahead of you · held back by div07 (2nd of 11 in root)" in s.text
    path = rank_path(build_standing(snap, "u07133"), s.row)
    assert path is not None and [lv.higher for lv in path.levels][-1] == 0
    s = user_summary(build_standing(snap, "u07136"))
    assert s is not None
    assert "50 of 2,021 users ahead of you · held back by your own usage (50th of 50 in div07g1)" in s.text
