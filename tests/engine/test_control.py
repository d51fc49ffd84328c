"""Fairshare control analytics against Yalim, PEARC'20 (seed 000): Table 1, Table 2 and the text."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.control import (
    dampening_for_target,
    fairshare_at,
    halving_usage,
    mean_usage,
    mean_usage_interval,
    padding,
    padding_decay,
    slurm_dampening_for_target,
    time_to_decay,
    usage_for_fairshare,
)

HOUR = 3600
DAY = 86400
WEEK = 7 * DAY

# Table 2: user, fairshare (6 decimals, as sshare prints), raw usage (hours), printed ubar.
TABLE2 = [
    ("u0", 0.000043, 147787.583, 10188.520),
    ("u1", 0.000169, 127655.753, 10187.449),
    ("u2", 0.000367, 116211.920, 10183.369),
    ("u3", 0.001165, 99399.131, 10199.538),
    ("u4", 0.003002, 85328.210, 10182.534),
    ("u5", 0.026259, 53479.864, 10184.615),
    ("u6", 0.057793, 41881.796, 10182.881),
    ("u7", 0.105710, 33016.212, 10184.480),
    ("u8", 0.127456, 30261.039, 10182.290),
    ("u9", 0.131575, 29793.799, 10182.284),
]


@pytest.mark.parametrize(("user", "f", "u", "printed"), TABLE2, ids=[r[0] for r in TABLE2])
def test_table2_printed_mean_is_inside_the_rounding_interval(user: str, f: float, u: float, printed: float) -> None:
    # Sound check: F is only known to +-5e-7 and u to +-5e-4; the printed ubar (itself rounded
    # to +-5e-4) must be reachable from some inputs that round to the printed ones.
    lo, hi = mean_usage_interval(f, u)
    assert lo - 5e-4 <= printed <= hi + 5e-4


@pytest.mark.parametrize(("user", "f", "u", "printed"), TABLE2, ids=[r[0] for r in TABLE2])
def test_table2_recomputed_from_printed_inputs(user: str, f: float, u: float, printed: float) -> None:
    # Tighter: the paper evidently divided by -log2 of the *printed* F. Then the only slack is
    # ubar's own rounding (5e-4) plus u's rounding carried through the division (5e-4 / -log2 F).
    # That is at most 6.7e-4 hours; u8 uses 98 % of it, the rest at most 64 %.
    tol = 5e-4 + 5e-4 / -math.log2(f)
    assert mean_usage(f, u) == pytest.approx(printed, abs=tol)


def test_table2_rounding_interval_is_wide_for_small_fairshare() -> None:
    # d ubar / ubar = dF / (F ln2 (-log2 F)): +-0.116 % at F = 0.000043, i.e. about +-11.8 h.
    lo, hi = mean_usage_interval(0.000043, 147787.583)
    assert (lo, hi) == (pytest.approx(10176.68, abs=0.01), pytest.approx(10200.25, abs=0.01))
    # ...and narrow for F = 0.131575 (+-0.02 h).
    lo, hi = mean_usage_interval(0.131575, 29793.799)
    assert hi - lo == pytest.approx(0.039, abs=0.001)


def test_table2_mean_row_is_not_the_mean_of_the_rows() -> None:
    # The paper prints MEAN 10,188.681; the ten ubar values average 10,185.796.
    got = mean_usage(np.array([r[1] for r in TABLE2]), np.array([r[2] for r in TABLE2]))
    assert got.mean() == pytest.approx(10185.796, abs=5e-4)
    assert abs(got.mean() - 10188.681) > 2.8


def test_text_example_10182_3_hours() -> None:
    # "fairshare 0.131575 after 29798.8 compute hours ... u* = 10 182.3 hours": Table 2's u9 has
    # 29,793.799 hours, which gives 10,182.3; 29,798.8 (a typo) would give 10,184.0.
    assert round(mean_usage(0.131575, 29793.8), 1) == 10182.3
    assert round(mean_usage(0.131575, 29798.8), 1) == 10184.0


def test_sign_convention() -> None:
    # ubar = u / (-log2 F); the paper's "u / log2 F" would be negative for any F < 1.
    assert mean_usage(0.5, 10_000.0) == 10_000.0
    assert mean_usage(0.25, 10_000.0) == 5_000.0
    assert math.isnan(mean_usage(1.0, 0.0))
    assert math.isnan(mean_usage(0.0, 5.0))


# ---- Table 1 and section 2.1 -----------------------------------------------------------


@pytest.mark.parametrize(
    ("n_users", "target_h", "w_s", "first_day_s"),
    [
        (2501, 10_000, 90e9, 8.485e9),
        (2501, 20_000, 180e9, 16.970e9),
        (3001, 10_000, 108e9, 10.182e9),
        (5001, 10_000, 180e9, 16.970e9),
    ],
)
def test_table1_paddings_and_first_day_decay(n_users: int, target_h: int, w_s: float, first_day_s: float) -> None:
    w = padding(target_h * HOUR, n_users)
    assert w == w_s
    # The paper's decay is the exact 2^(-1/7) per day (3 decimals of 1e9 printed).
    assert padding_decay(w, 1, 7) == pytest.approx(first_day_s, abs=0.5e6)
    # Slurm's 1 - 0.693/HL removes 0.02 % less: 90e9 * (1 - 0.905742656651).
    slurm = padding_decay(w, DAY, WEEK, model="slurm")
    assert slurm == pytest.approx(w * (1 - 0.905742656651), rel=1e-11)
    assert slurm < padding_decay(w, DAY, WEEK)


def test_first_day_decay_values() -> None:
    # Exact: 90e9 (1 - 2^(-1/7)) = 8,484,870,216.2484 s. The paper's "D = 8484870.2484" is this
    # number with "216" lost. Slurm (7-0 half-life) removes 8,483,160,901.37 s instead.
    assert padding_decay(90e9, 1, 7) == pytest.approx(8_484_870_216.2484, abs=5e-5)
    assert padding_decay(90e9, DAY, WEEK, model="slurm") == pytest.approx(8_483_160_901.37, abs=0.01)
    assert 1 - 2 ** (-1 / 7) == pytest.approx(0.0943, abs=5e-5)  # "approx 0.0943 u(0)"


def test_padding_in_hours() -> None:
    # "w = (N-1) 10^4, which is 25 x 10^6 core-hours ... with 2 501 users"
    assert padding(10_000, 2501) == 25e6


def test_upkeep_interval_four_hours_five_minutes() -> None:
    # "it takes roughly four hours and five minutes for w to decay 1.5e9 raw seconds"
    t = time_to_decay(90e9, 1.5e9, 7 * 24)  # hours
    assert t == pytest.approx(4.0736, abs=5e-5)  # 4 h 4.4 min
    slurm = time_to_decay(90e9, 1.5e9, WEEK, model="slurm") / HOUR
    assert slurm == pytest.approx(4.0745, abs=5e-5)
    with pytest.raises(ValueError, match=r"\[0, w\)"):
        time_to_decay(1.0, 2.0, 7)


# ---- dampening (section 2.2) and the fairshare curve (section 3) -----------------------


def test_dampening_factor() -> None:
    # Natural mean ~700 hours on Agave, target 10,000: d = 14.29; Slurm takes an integer.
    assert dampening_for_target(10_000, 700) == pytest.approx(14.2857, abs=5e-5)
    assert slurm_dampening_for_target(10_000, 700) == 14
    assert slurm_dampening_for_target(10_000, 20_000) == 1  # cannot go below 1
    assert slurm_dampening_for_target(10_000, 0.0) == 65535
    assert halving_usage(700, dampening_for_target(10_000, 700)) == pytest.approx(10_000)


def test_fairshare_curve() -> None:
    assert fairshare_at(0, 10_000) == 1.0
    assert fairshare_at(10_000, 10_000) == 0.5
    assert fairshare_at(30_000, 10_000) == 0.125
    assert usage_for_fairshare(0.125, 10_000) == pytest.approx(30_000)
    # sshare's 6 decimals print 0 once F < 5e-7: after 20.93 u* ("until ~20 ubar").
    assert usage_for_fairshare(5e-7, 1.0) == pytest.approx(20.93, abs=5e-3)


@given(
    u=st.floats(min_value=1e-3, max_value=1e7),
    ustar=st.floats(min_value=1.0, max_value=1e6),
)
def test_mean_usage_inverts_the_fairshare_curve(u: float, ustar: float) -> None:
    f = fairshare_at(u, ustar)
    if 0 < f < 1:  # 2^(-u/u*) can round to 1 or underflow
        assert mean_usage(f, u) == pytest.approx(ustar, rel=1e-6)


# --- Figure 1: upkeep of the padding with checks every 4 hours ---------------------------------

from tui.engine.control import dampening_drift, padding_upkeep  # noqa: E402


@pytest.mark.parametrize("model", ["exact", "slurm"])
def test_figure1_four_hourly_upkeep_holds_the_padding_within_2_percent(model: str) -> None:
    # w = u* (N-1) = 10,000 h x 2,500 = 90e9 core-seconds; an upkeep job adds 1.5e9; a check
    # every 4 hours for a month (Figure 1's span), one-week half-life.
    w = padding(10_000 * HOUR, 2501)
    up = padding_upkeep(w, 1.5e9, 4 * HOUR, WEEK, 30 * DAY, model)
    assert up.worst_slip(w) < 0.02
    assert up.worst_slip(w) == pytest.approx(0.01666, abs=2e-5)  # one check's decay of w + slack
    assert up.ran.sum() == 179 and len(up.times) == 181
    # Checking every 6 hours is not enough: 6 h of decay (2.2e9) outruns one upkeep job.
    assert padding_upkeep(w, 1.5e9, 6 * HOUR, WEEK, 30 * DAY, model).worst_slip(w) > 0.3


def test_dampening_drifts_up_as_the_mean_decays() -> None:
    d = dampening_drift(10_000, 700, [0, 7, 14], 7)
    np.testing.assert_allclose(d, [10_000 / 700, 2 * 10_000 / 700, 4 * 10_000 / 700])
    # With a steady mean rate the factor settles at u* lambda / c.
    d = dampening_drift(10_000, 700, [1e6], 7, mean_rate=100)
    assert d[0] == pytest.approx(10_000 * math.log(2) / 7 / 100)
