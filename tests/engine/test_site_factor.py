"""Site factor (seed 004) against values derived by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tui.engine.site_factor import (
    credit_factor,
    power_rule,
    sigmoid,
    sigmoid_rule,
    site_factor,
    temporal_factor,
)


def test_credit_factor_is_the_unused_share() -> None:
    # 150 of 200 used -> 1/4 left; nothing granted -> 0; overdrawn -> clipped to 0
    assert credit_factor([150, 0, 10, 300], [200, 0, 40, 200]).tolist() == [0.25, 0.0, 0.75, 0.0]


def test_temporal_factor_against_the_longest() -> None:
    # 10, 40 and 0 days to expiry: 1 - 10/40, 1 - 40/40, 1 - 0/40
    assert temporal_factor([10, 40, 0]).tolist() == [0.75, 0.0, 1.0]
    assert temporal_factor([0, 0]).tolist() == [1.0, 1.0]


def test_power_rule_seed_exponents() -> None:
    # f_c = 1/4, f_t = 1/2: sqrt(1/4) * (1/2)**2 = 1/2 * 1/4 = 1/8
    assert power_rule(0.25, 0.5) == pytest.approx(0.125)
    # symmetric N = 2: (0.5 * 0.5)**2 = 1/16
    assert power_rule(0.5, 0.5, 2, 2) == pytest.approx(1 / 16)


def test_sigmoid_hand_values() -> None:
    # l = 2 ln 2 (e^l = 4), x0 = 0 (e^{l x0} = 1), x = 1/2 (e^{lx} = 2):
    # (2 - 1)(4 + 1) / ((4 - 1)(2 + 1)) = 5/9
    assert sigmoid(0.5, 2 * math.log(2), 0.0) == pytest.approx(5 / 9, rel=1e-12)
    # x = x0 = 1/2: (e^{l/2} - 1) e^{l/2} (e^{l/2} + 1) / ((e^l - 1) 2 e^{l/2}) = 1/2 for every l
    for slope in (0.5, 5, 50, 500):
        assert sigmoid(0.5, slope, 0.5) == pytest.approx(0.5, rel=1e-12)
    # the ends are fixed, whatever l and x0
    for slope, x0 in ((5, 0.25), (50, 0.75), (1000, 0.9)):
        assert sigmoid([0.0, 1.0], slope, x0).tolist() == pytest.approx([0.0, 1.0])
    # l -> 0 is the identity
    x = np.linspace(0, 1, 11)
    assert sigmoid(x, 0.0, 0.3) == pytest.approx(x)
    assert sigmoid(x, 1e-6, 0.3) == pytest.approx(x, abs=1e-6)


def test_sigmoid_large_l_is_a_step_at_x0() -> None:
    assert sigmoid([0.7, 0.8], 1000, 0.75).tolist() == pytest.approx([0.0, 1.0])


def test_sigmoid_rule_seed_parameters() -> None:
    # f_t = 1/2, far below x0_t = 0.75 with l_t = 50: S ~ 50 * e^{-12.5} ~ 3.7e-6 ... credit plays no role
    assert sigmoid_rule(1.0, 0.5) < 1e-5
    # f_c = f_t = 1: S(1) * S(1) = 1
    assert sigmoid_rule(1.0, 1.0) == pytest.approx(1.0)
    # f_t = 0.75 = x0_t: S_t = (e^{37.5} - 1)(e^{50} + e^{37.5}) / ((e^{50} - 1)(2 e^{37.5}))
    #   = 1/2 (1 - e^{-37.5})(1 + e^{-12.5}) / (1 - e^{-50}) = 1/2 (1 + 3.7e-6): near 1/2, not at it
    expected = 0.5 * (1 - math.exp(-37.5)) * (1 + math.exp(-12.5)) / (1 - math.exp(-50))
    assert sigmoid(0.75, 50, 0.75) == pytest.approx(expected, rel=1e-12)
    assert expected - 0.5 == pytest.approx(0.5 * math.exp(-12.5), rel=1e-6)


def test_site_factor_combines() -> None:
    # used/granted 150/200 -> f_c 1/4; expiries 10 and 40 -> f_t 3/4 and 0
    s = site_factor([150, 0], [200, 100], [10, 40])
    assert s.tolist() == pytest.approx([0.5 * 0.75**2, 0.0])
    with pytest.raises(ValueError):
        site_factor([1], [2], [3], rule="linear")
