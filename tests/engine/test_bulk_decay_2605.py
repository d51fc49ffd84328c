"""Slurm 26.05 at 2,040 associations over four consecutive decay cycles (tests/fixtures/slurm-26.05/
bulk_decay, `fairtop capture` folders; see that folder's README): every value sshare printed is
the engine's, blanks included, in every cycle; and from one cycle to the next every association's
usage decays by Slurm's factor for the time between the cycles."""

from __future__ import annotations

from datetime import datetime

import numpy as np
import pytest

from tests.conftest import FIXTURES
from tests.slurm_oracle import mismatches
from tui.analysis.standing import build_standing
from tui.engine.decay import decay_factor
from tui.sources.saved import load_folder

BULK = FIXTURES / "slurm-26.05" / "bulk_decay"
CYCLES = sorted(BULK.glob("cycle*"))


def _captured(folder) -> float:
    return datetime.fromisoformat((folder / "captured_at.txt").read_text().strip().replace("Z", "+00:00")).timestamp()


def test_four_cycles_of_two_thousand_associations():
    assert len(CYCLES) == 4
    snaps = [load_folder(c) for c in CYCLES]
    assert all(s.scheduler_version == "26.05.3" and s.tree is not None and s.tree.size >= 2_040 for s in snaps)
    assert all(s.settings.decay_half_life_s == 600 for s in snaps)


@pytest.mark.parametrize("folder", CYCLES, ids=lambda p: p.name)
def test_every_printed_value_of_every_cycle(folder):
    bad, checked = mismatches(folder)  # the engine alone on the raw inputs
    assert bad == [] and checked >= 4 * 2_040
    rec = build_standing(load_folder(folder)).reconciliation  # what fairtop shows
    assert rec is not None and rec.disagreements == ()


def test_usage_decays_by_slurms_factor_between_cycles():
    """Between two captures no job ran: each association's usage (assoc_mgr's, the controller's
    own doubles) is the previous one times Slurm's factor ``d**dt`` for one whole number of
    seconds ``dt`` between the two cycles, the same for all 2,040, and within two seconds of
    the time between the captures (each taken right after its cycle)."""
    snaps = [load_folder(c) for c in CYCLES]
    half = snaps[0].settings.decay_half_life_s
    d = decay_factor(half, 1)
    compared = 0
    for a, b, fa, fb in zip(snaps, snaps[1:], CYCLES, CYCLES[1:]):
        assert a.tree is not None and b.tree is not None
        before, after = a.tree.usage_raw.astype(np.float64), b.tree.usage_raw.astype(np.float64)
        used = before > 1e6
        dt = round(float(np.log(after[used][0] / before[used][0]) / np.log(d)))
        assert abs(dt - (_captured(fb) - _captured(fa))) <= 2
        # assoc_mgr prints two decimals: each side is within 0.005 of the controller's double
        np.testing.assert_allclose(after[used], before[used] * decay_factor(half, dt), rtol=1e-12, atol=0.011)
        compared += int(used.sum())
    assert compared >= 3 * 80
