"""The engine against real Slurm 22.05: every capture in tests/fixtures/slurm/ (see its README)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.slurm_oracle import mismatches
from tui.sources.saved import load_folder

CAPTURES = sorted(p.parent for p in (FIXTURES / "slurm").glob("*/*/sshare_a_l_P.psv"))


def test_at_least_three_trees_each_under_both_algorithms_and_dampened_classic_captures():
    scenarios = {p.parent.name for p in CAPTURES}
    assert len(scenarios) >= 3
    damped = set()
    for scenario in scenarios:
        settings = [load_folder(p).settings for p in CAPTURES if p.parent.name == scenario]
        assert {s.algorithm for s in settings} == {"fair_tree", "classic"}
        if any(s.algorithm == "classic" and s.dampening != 1 for s in settings):
            damped.add(scenario)
    assert len(damped) >= 3


@pytest.mark.parametrize("folder", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_printed_value_equals_real_sshare(folder):
    bad, checked = mismatches(folder)
    rows = len((folder / "sshare_a_l_P.psv").read_text().splitlines()) - 1
    assert checked >= rows * 4
    assert bad == []
