"""PBS Professional fairshare engine against published and hand-derived values (spec section 7.8).

Vectors: P1 (pbsfs.8B man page), P2 (OpenPBS PTL ``pbs_fairshare.py``), P3 (seed 002, Altair
white paper), P4 (an entity unknown to resource_group), P5 (decay).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from tui.engine.pbs import (
    compare_path,
    compute,
    decay_multiplier,
    decay_usage,
    decays_due,
    fairshare_factor,
    fairshare_tree_usage,
    formula_keywords,
    percentages,
    usage_per_perc,
)
from tui.engine.pbs_tree import GroupEntry, TreeShapeError, build_tree, file_records, load_usage
from tui.formats import pbsfs

FIX = Path(__file__).resolve().parents[1] / "fixtures" / "pbs"

P1_GROUPS = [GroupEntry("group1", 10, "root", 40), GroupEntry("group2", 20, "root", 60),
             GroupEntry("pbsuser", 11, "group1", 50), GroupEntry("pbsuser1", 12, "group1", 50),
             GroupEntry("pbsuser2", 21, "group2", 60), GroupEntry("pbsuser3", 22, "group2", 40)]
P1_USAGE = [("pbsuser", 100.0), ("pbsuser1", 100.0), ("pbsuser3", 1000.0)]

P3_GROUPS = [GroupEntry(n, int(c), p, int(s)) for n, c, p, s in (
    line.split() for line in """B1 100 root 10
L1 101 B1 10
L2 102 B1 0
B2 200 root 20
L3 201 B2 10
L4 202 B2 15
B3 210 B2 75
L5 211 B3 10
L6 212 B3 5
L7 1 root 40
B4 300 root 20
L8 301 B4 5""".splitlines())]
P3_USAGE = [(f"L{k}", 100.0) for k in range(1, 9)]


def p1(unknown_shares: int = 0, extra: list[tuple[str, float]] | None = None):
    return load_usage(build_tree(P1_GROUPS, unknown_shares), P1_USAGE + (extra or []))


def p3():
    return load_usage(build_tree(P3_GROUPS, unknown_shares=10), P3_USAGE)


def by_name(tree, values) -> dict[str, float]:
    return {str(n): v for n, v in zip(tree.name, values)}


def squash(text: str) -> list[str]:
    """Lines with runs of blanks collapsed: published examples are whitespace-stylised."""
    return [" ".join(line.split()).replace(" :", ":") for line in text.strip("\n").splitlines()]


# --- P3: seed 002, the Altair white paper's worked example -------------------------------------

def test_seed002_internal_usage_is_one_plus_leaves():
    usage = by_name(t := p3(), t.usage)
    assert (usage["TREEROOT"], usage["B2"], usage["B3"], usage["B1"], usage["unknown"]) == (801, 401, 201, 201, 1)


def test_seed002_fairshare_tree_usage_path_to_l5():
    t = p3()
    uf = by_name(t, fairshare_tree_usage(t))
    assert ["%f" % uf[n] for n in ("B2", "B3", "L5")] == ["0.500624", "0.438202", "0.333750"]


def test_seed002_pbsfs_g_l5_matches_the_paper():
    out = pbsfs.entity(p3(), "L5")
    assert "Percentage\t\t: 10.000001%\n" in out  # float 0.1 * 0.75 * 0.2 * 100, not 10.000000
    published = (FIX / "seed002_pbsfs_g_L5_published.txt").read_text()
    # the paper used fairshare_usage_res ncpus*pow(walltime,0.85); fairtop defaults to cput
    assert squash(out.replace("(cput)", "(ncpus*pow(walltime,0.85))")) == squash(published)


def test_seed002_percentages_and_order():
    t = p3()
    lines = pbsfs.listing(t).splitlines()[1:]
    assert [ln.split()[0] for ln in lines] == ["TREEROOT", "B4", "L8", "L7", "B2", "B3", "L6", "L5", "L4", "L3",
                                               "B1", "L2", "L1", "unknown"]
    assert [ln.rsplit(" ", 1)[1] for ln in lines] == ["100.000%", "20.000%", "20.000%", "40.000%", "20.000%",
                                                      "15.000%", "5.000%", "10.000%", "3.000%", "2.000%",
                                                      "10.000%", "0.000%", "10.000%", "10.000%"]


def test_seed002_round_half_even_on_display():
    # The paper's snippet: L1 = L2 = 10.5 show as 10 each, B1 = 1 + 21 = 22.
    t = load_usage(build_tree(P3_GROUPS, 10), [("L1", 10.5), ("L2", 10.5)])
    text = pbsfs.listing(t)
    assert "B1        : Grp: 0      cgrp: 100  Shares: 10     Usage: 22     Perc: 10.000%" in text
    assert "L1        : Grp: 100    cgrp: 101  Shares: 10     Usage: 10     Perc: 10.000%" in text
    assert "%.0f %.0f" % (11.5, 12.5) == "12 12"  # half to even, as glibc printf


# --- P1: pbsfs(8B) man page ---------------------------------------------------------------------

def test_p1_listing_byte_for_byte():
    assert pbsfs.listing(p1()) == (FIX / "man_pbsfs.txt").read_text()


def test_p1_entity_pbsuser3_byte_for_byte_and_published():
    out = pbsfs.entity(p1(), "pbsuser3")
    assert out == (FIX / "man_pbsfs_g_pbsuser3.txt").read_text()
    assert squash(out) == squash((FIX / "man_pbsfs_g_published.txt").read_text())
    # the same product in double would print 24.000001%: the float matters
    assert "%f" % (float(np.float32(0.4)) * float(np.float32(0.6)) * 100) == "24.000001"


def test_p1_tree():
    assert pbsfs.tree_text(p1()) == (FIX / "man_pbsfs_t.txt").read_text()


@pytest.mark.parametrize(("e1", "e2", "expected"), [
    ("pbsuser", "pbsuser1", "pbsuser == pbsuser1\n"),
    ("pbsuser2", "pbsuser", "pbsuser\n"),      # decided at depth 1: group1 502.5 < group2 1668.3
    ("pbsuser3", "pbsuser2", "pbsuser2\n"),    # same group: 2.78 < 4166.7
    ("group1", "pbsuser", "group1 == pbsuser\n"),  # an ancestor: a prefix path is equal
])
def test_p1_compare(e1, e2, expected):
    assert pbsfs.compare(p1(), e1, e2) == expected


def test_missing_entity_message():
    with pytest.raises(KeyError, match="Fairshare Entity nobody does not exist."):
        pbsfs.entity(p1(), "nobody")


# --- P2: PTL pbs_fairshare.py formula keywords ----------------------------------------------

USERS = ["pbsuser", "pbsuser1", "pbsuser2", "pbsuser3"]


def test_p2_formula_keywords():
    t = p1()
    fs = compute(t)
    uf, perc, factor = by_name(t, fs.tree_usage), by_name(t, fs.tree_percentage), by_name(t, fs.factor)
    assert ["%f" % uf[u] for u in USERS] == ["0.125312", "0.125312", "0.500416", "0.832973"]
    assert ["%.4f" % uf[u] for u in USERS] == ["0.1253", "0.1253", "0.5004", "0.8330"]
    assert ["%g" % perc[u] for u in USERS] == ["0.2", "0.2", "0.36", "0.24"]
    assert ["%.4f" % factor[u] for u in USERS] == ["0.6477", "0.6477", "0.3816", "0.0902"]
    # The formula sees the keywords printed with %f; pow(2, -(uf/perc)) on those gives the same.
    kw = {u: formula_keywords(fs, list(t.name).index(u)) for u in USERS}
    assert kw["pbsuser3"] == {"fairshare_perc": 0.24, "fair_share_perc": 0.24, "fairshare_tree_usage": 0.832973,
                              "fairshare_factor": 0.090201}
    assert ["%.4f" % 2 ** -(kw[u]["fairshare_tree_usage"] / kw[u]["fairshare_perc"]) for u in USERS] == [
        "0.6477", "0.6477", "0.3816", "0.0902"]
    order = sorted(USERS, key=lambda u: -factor[u])
    assert order == ["pbsuser", "pbsuser1", "pbsuser2", "pbsuser3"]
    # fairshare_factor + walltime/ncpus with (ncpus, walltime s) per user
    jobs = {"pbsuser2": (1, 60), "pbsuser3": (2, 60), "pbsuser": (3, 120), "pbsuser1": (4, 120)}
    value = {u: kw[u]["fairshare_factor"] + w / c for u, (c, w) in jobs.items()}
    assert {u: "%.4f" % v for u, v in value.items()} == {
        "pbsuser2": "60.3816", "pbsuser3": "30.0902", "pbsuser": "40.6477", "pbsuser1": "30.6477"}
    assert sorted(value, key=lambda u: -value[u]) == ["pbsuser2", "pbsuser", "pbsuser1", "pbsuser3"]


def test_p2_test_pbsfs_unused_entity_first():
    t = load_usage(build_tree([GroupEntry("u0", 11, "root", 10), GroupEntry("u1", 12, "root", 10)]),
                   [("u0", 100.0)])
    assert compare_path(t, "u0", "u1") == 1 and compare_path(t, "u1", "u0") == -1


def test_p2_decay_keeps_usage_at_one():
    assert decay_usage(np.array([1.0, 1.5, 4.0]), 0.5).tolist() == [1.0, 1.0, 2.0]


# --- P4: an entity not in resource_group ------------------------------------------------------

def test_p4_unknown_entity():
    t = p1(unknown_shares=10, extra=[("alice", 50.0)])
    i = list(t.name).index("alice")
    assert (t.resgroup[i], t.cresgroup[i], t.shares[i], t.name[t.parent[i]]) == (1, -1, 1, "unknown")
    usage = by_name(t, t.usage)
    assert (usage["TREEROOT"], usage["unknown"]) == (1251, 51)
    perc = by_name(t, percentages(t)[1])
    assert {n: "%.3f" % (perc[n] * 100) for n in ("group2", "group1", "unknown", "alice")} == {
        "group2": "54.545", "group1": "36.364", "unknown": "9.091", "alice": "9.091"}
    fs = compute(t)
    assert "%f" % by_name(t, fs.tree_usage)["alice"] == "0.040767"
    upp = by_name(t, fs.usage_per_perc)
    assert "%.0f %.0f" % (upp["alice"], upp["pbsuser"]) == "550 550"
    assert pbsfs.compare(t, "alice", "pbsuser") == "pbsuser\n"  # unknown 561 vs group1 552.75
    assert pbsfs.compare(t, "alice", "pbsuser3") == "alice\n"


def test_unknown_entities_prepended_and_unknown_last():
    t = load_usage(build_tree(P1_GROUPS), [("alice", 5.0), ("bob", 7.0)])
    assert list(t.name[-3:]) == ["unknown", "bob", "alice"]
    # with unknown_shares 0 they have no share: never more deserving than a real entity
    assert compare_path(t, "bob", "pbsuser2") == 1
    assert pbsfs.compare(t, "alice", "bob") == "alice == bob\n"  # both perc 0: equal
    assert by_name(t, compute(t).factor)["bob"] == 0.0


# --- percentages and fairshare_factor edge cases ---------------------------------------------

def test_zero_share_group_zeroes_its_subtree():
    t = load_usage(build_tree([GroupEntry("z", 5, "root", 0), GroupEntry("y", 6, "z", 10),
                               GroupEntry("a", 7, "root", 10)]), [("y", 9.0)])
    fs = compute(t)
    perc, upp = by_name(t, fs.tree_percentage), by_name(t, fs.usage_per_perc)
    assert (perc["z"], perc["y"], perc["a"]) == (0.0, 0.0, 1.0)
    assert (upp["y"], by_name(t, fs.factor)["y"]) == (-1.0, 0.0)
    assert pbsfs.entity(t, "y").endswith("y         :     6          9 / 0.000 = -1\n")


def test_fairshare_factor_half_at_exact_share():
    assert fairshare_factor(np.float32([0.25, 0.0]), np.float32([0.25, 0.0])).tolist() == [0.5, 0.0]


def test_usage_per_perc_is_double_over_float():
    # pbsuser3: tree_percentage 0.4f * 0.6f = 0.24000000953674316; 1000 / that = 4166.66650109...
    got = usage_per_perc(np.array([1000.0]), np.float32([0.4]) * np.float32([0.6]))[0]
    assert got == 1000 / 0.24000000953674316 == 4166.666501098215  # a double would give 4166.666666666667


# --- compare_path: ties continue to the next depth ---------------------------------------------

def test_compare_path_tie_is_broken_one_level_down():
    groups = [GroupEntry("g1", 1, "root", 50), GroupEntry("g2", 2, "root", 50), GroupEntry("a", 3, "g1", 1),
              GroupEntry("b", 4, "g2", 1), GroupEntry("c", 5, "g2", 1)]
    t = load_usage(build_tree(groups), [("a", 100.0), ("b", 60.0), ("c", 40.0)])
    # depth 1: g1 101/0.5 == g2 101/0.5 -> tie; depth 2: a 100/0.5 = 200 < b 60/0.25 = 240
    assert compare_path(t, "a", "b") == -1
    assert compare_path(t, "b", "a") == 1
    assert compare_path(t, "c", "a") == -1  # 40/0.25 = 160 < 200
    # temp_usage, not usage, decides: a job started for c this cycle (+30) flips it
    temp = t.usage + np.where(np.isin(t.name, ["TREEROOT", "g2", "c"]), 30.0, 0.0)
    assert compare_path(t, "c", "a", temp_usage=temp) == 1  # g2 131 > g1 101 at depth 1


# --- tree construction and the file-load rule --------------------------------------------------

def test_children_in_reverse_file_order():
    t = build_tree(P1_GROUPS)
    assert list(t.name) == ["TREEROOT", "group2", "pbsuser3", "pbsuser2", "group1", "pbsuser1", "pbsuser",
                            "unknown"]
    assert (t.resgroup.tolist(), t.cresgroup.tolist(), t.shares.tolist()) == (
        [-1, 0, 20, 20, 0, 10, 10, 0], [0, 20, 22, 21, 10, 12, 11, 1], [-1, 60, 40, 60, 40, 50, 50, 0])
    assert t.usage.tolist() == [1.0] * 8


@pytest.mark.parametrize("bad", [GroupEntry("unknown", 3, "root", 1), GroupEntry("x", 3, "nobody", 1)])
def test_build_tree_rejects(bad):
    with pytest.raises(TreeShapeError) as err:
        build_tree([GroupEntry("a", 1, "root", 1), bad])
    assert err.value.index == 1


def test_leaves_at_one_are_never_written_and_write_order():
    t = p1()
    # rec_write_usage: node, its siblings, then children (last sibling's first)
    assert file_records(t) == [("pbsuser1", 100.0), ("pbsuser", 100.0), ("pbsuser3", 1000.0)]


def test_internal_record_is_set_not_added():
    # A record naming a group sets it; leaves read later still add to it (read order matters).
    t = load_usage(build_tree(P1_GROUPS), [("pbsuser", 100.0), ("group1", 7.0), ("pbsuser1", 10.0)])
    usage = by_name(t, t.usage)
    assert (usage["group1"], usage["TREEROOT"]) == (17.0, 111.0)


def test_trim_drops_unknown_entities():
    t = load_usage(build_tree(P1_GROUPS), [("alice", 5.0), ("pbsuser", 3.0)], trim=True)
    assert "alice" not in set(t.name) and by_name(t, t.usage)["TREEROOT"] == 4.0


# --- P5: decay --------------------------------------------------------------------------------

def test_p5_two_decays_in_memory_then_reread():
    t = p1()
    decayed = by_name(t, decay_usage(t.usage, 0.5, times=2))
    assert decayed == {"TREEROOT": 300.25, "group2": 250.25, "pbsuser3": 250.0, "pbsuser2": 1.0,
                       "group1": 50.25, "pbsuser1": 25.0, "pbsuser": 25.0, "unknown": 1.0}
    written = file_records(type(t)(**{**t.__dict__, "usage": decay_usage(t.usage, 0.5, times=2)}))
    reread = load_usage(build_tree(P1_GROUPS), written)
    usage = by_name(reread, reread.usage)
    assert (usage["group1"], usage["group2"], usage["TREEROOT"]) == (51.0, 251.0, 301.0)


def test_p5_decay_timing_is_strict():
    t0 = 1_700_000_000
    assert decays_due(t0, t0 + 200_000, 86_400) == (2, t0 + 172_800)
    assert decays_due(t0, t0 + 86_400, 86_400) == (0, t0)  # not strictly more than decay_time
    assert decays_due(t0, t0 + 86_401, 86_400) == (1, t0 + 86_400)
    assert decays_due(t0, t0 + 172_800, 86_400) == (1, t0 + 172_800)


def test_p5_decay_factor_is_a_float():
    assert decay_multiplier(0.9) == 0.8999999761581421
    assert decay_usage(np.array([1000.0]), 0.9)[0] == 1000.0 * 0.8999999761581421
