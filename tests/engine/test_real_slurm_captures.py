"""The engine against real Slurm 22.05 and 26.05: every capture in tests/fixtures/slurm/ and
tests/fixtures/slurm-26.05/ (see their READMEs), each printed as its release prints."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.slurm_oracle import mismatches
from tui.analysis.standing import build_standing
from tui.sources.saved import load_folder

#: The recorded scenarios (not the PrivateData fixture: a user's own capture lists only their rows, and
#: its whole capture is one tree under one algorithm; tests/sources/test_private_data.py reads them).
CAPTURES = sorted(p.parent for p in FIXTURES.glob("slurm*/*/*/sshare_a_l_P.psv")
                  if (p.parents[2].name == "slurm" or p.parents[2].name.startswith("slurm-"))
                  and p.parents[1].name != "private")
RELEASES = sorted({p.parent.parent.name for p in CAPTURES})  # slurm (22.05), slurm-26.05, ...
NEAR_TIE = "near_tie"
"""Fair Tree only: ties slurmctld decided in long double from usage the inputs print rounded."""
ONE_ALGORITHM = (NEAR_TIE, "bulk_decay", "replay", "ctld_log")
"""Scenarios recorded under Fair Tree alone: the near ties, the bulk decay, the reconfigure log (26.05) and the
replay's worked example (docs/admin/replay.md), each checked value by value below like the others."""


@pytest.mark.parametrize("where", RELEASES)
def test_at_least_three_trees_each_under_both_algorithms_and_dampened_classic_captures(where):
    captures = [p for p in CAPTURES if p.parent.parent.name == where]
    scenarios = {p.parent.name for p in captures if p.parent.name not in ONE_ALGORITHM}
    assert len(scenarios) >= 3
    damped = set()
    for scenario in scenarios:
        settings = [load_folder(p).settings for p in captures if p.parent.name == scenario]
        assert {s.algorithm for s in settings} == {"fair_tree", "classic"}
        if any(s.algorithm == "classic" and s.dampening != 1 for s in settings):
            damped.add(scenario)
    assert len(damped) >= 3


@pytest.mark.parametrize("folder", CAPTURES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_every_printed_value_equals_real_sshare(folder):
    """The engine alone, on the printed inputs (no order taken from the printed values)."""
    bad, checked = mismatches(folder)
    rows = len((folder / "sshare_a_l_P.psv").read_text().splitlines()) - 1
    assert checked >= rows * 4
    if folder.parent.name == NEAR_TIE:
        # The exact ties slurmctld found (tie<d>a = tie<d>b, tb<d>x = tb<d>y) are near-ties in
        # the 2-decimal usage: the later users get ranks of their own. Nothing else differs.
        assert {(label, column) for label, column, _, _ in bad} == {
            (f"tie{d}b/tb{d}{u}", "FairShare") for d in (1, 3, 5, 8) for u in "xz"}
    else:
        assert bad == []


@pytest.mark.parametrize("folder", CAPTURES, ids=lambda p: f"{p.parent.parent.name}/{p.parent.name}/{p.name}")
def test_no_capture_leaves_an_engine_disagreement_after_the_printed_orders(folder):
    """What fairtop shows: the engine on the orders (and ties) sshare's printed values reveal.
    Any cell left would be an engine defect (the tree marks it, report names it)."""
    standing = build_standing(load_folder(folder))
    rec = standing.reconciliation
    assert rec is not None and rec.checked >= 4 * standing.snapshot.tree.size
    assert rec.disagreements == ()
    if folder.parent.name == NEAR_TIE:
        assert [(f.first, f.second, f.tied) for f in standing.order_fixes if f.accounts] == [("tie5a", "tie5b", True)]
        assert {f.second for f in standing.order_fixes if not f.accounts} == {f"tie{d}b/tb{d}x" for d in (1, 3, 5, 8)}
        # One EffectvUsage sits on a rounding boundary the 2-decimal usage cannot resolve.
        assert [(d.label, d.ours, d.printed) for d in rec.within_precision] == [
            ("div02g3/u02300", "0.272727", "0.272728")]
    else:
        assert standing.order_fixes == () and rec.within_precision == ()


def test_the_releases_are_what_the_captures_say():
    """Each fixture folder's captures come from the release it is named for (scontrol's SLURM_VERSION)."""
    for folder in CAPTURES:
        want = {"slurm": "22.05"}.get(folder.parent.parent.name, folder.parent.parent.name.removeprefix("slurm-"))
        assert (load_folder(folder).scheduler_version or "").startswith(want + "."), folder
    assert "slurm-26.05" in RELEASES
