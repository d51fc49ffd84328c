"""Recovery curve: your usage decays while everyone else's holds steady."""

from __future__ import annotations

import numpy as np
import pytest

from tests.treebuild import tree_from_text
from tui.analysis.planner import recovery
from tui.analysis.planner.recovery_days import days_to_reach
from tui.analysis.standing import build_standing
from tui.model import PrioritySettings, Snapshot

FLAT = """
@a 1 100
@b 1 100
"""


def view_of(text: str, algorithm: str = "classic", half_life_s: int = 86400):
    snap = Snapshot("t", "test", tree=tree_from_text(text),
                    settings=PrioritySettings(algorithm=algorithm, decay_half_life_s=half_life_s))
    return build_standing(snap, me="a")


def test_classic_flat_tree_after_one_half_life_by_hand():
    # HL 1 day: Slurm's factor over 86400 s is (1 - 0.693/86400)**86400 = 0.500072205878 (spec 4.1).
    # u_a = 50.00722058783; E = u_a / (u_a + 100) = 0.33336542329; F = 2**(-E/0.5) = 0.62993250107
    rec = recovery(view_of(FLAT), row=1, half_lives=4, points=5)
    assert rec.days.tolist() == [0, 1, 2, 3, 4]
    assert rec.fairshare[0] == 0.5                      # E = S = 0.5 now
    assert rec.usage[1] == pytest.approx(50.00722058783, rel=1e-12)
    assert rec.fairshare[1] == pytest.approx(0.62993250107, rel=1e-10)
    assert np.all(np.diff(rec.fairshare) > 0)           # recovers monotonically
    assert days_to_reach(rec, 0.6) == 1.0
    assert days_to_reach(rec, 0.99) is None


def test_fair_tree_rank_climbs_past_a_steady_sibling():
    # a used more than b (LevelFS 0.5/0.6 < 0.5/0.4): rank 1 of 2 now; once a's usage has decayed
    # below b's 40 (after ~0.6 half-lives), a ranks first: fairshare 1.0.
    rec = recovery(view_of("@a 1 60\n@b 1 40\n", "fair_tree"), row=1, half_lives=2, points=5)
    # samples at 0, 0.5, 1, 1.5, 2 half-lives: 60*2**-0.5 = 42.4 is still above 40
    assert rec.fairshare.tolist() == [0.5, 0.5, 1.0, 1.0, 1.0]


def test_no_decay_means_nothing_recovers():
    rec = recovery(view_of(FLAT, half_life_s=0), row=1, points=3)
    assert rec.fairshare.tolist() == [0.5, 0.5, 0.5]
    assert rec.half_life_days == 0


def test_bad_row_is_an_error():
    with pytest.raises(ValueError, match="not in the association tree"):
        recovery(view_of(FLAT), row=99)


def test_day_reached_interpolates_and_dates_from_the_snapshot() -> None:
    from datetime import datetime, timezone

    from tui.analysis.planner import Recovery, day_reached

    start = datetime(2025, 1, 15, tzinfo=timezone.utc)
    rec = Recovery(np.array([0.0, 2.0, 4.0]), np.array([9.0, 3.0, 1.0]), np.array([0.2, 0.4, 0.6]), 3.0, start)
    # 0.5 lies halfway between day 2 (0.4) and day 4 (0.6): day 3, 2025-01-18
    assert day_reached(rec, 0.5) == 3.0
    assert rec.date_at(3.0) == datetime(2025, 1, 18, tzinfo=timezone.utc)
    assert day_reached(rec, 0.2) == 0.0 and day_reached(rec, 0.7) is None
    assert rec.has_fairshare
    account = Recovery(rec.days, rec.usage, np.full(3, np.nan), 3.0, start)
    assert not account.has_fairshare
