"""Decay and accrual against the spec's vectors (section 4) and the PEARC'20 usage ODE."""

from __future__ import annotations

import math
from datetime import datetime
from zoneinfo import ZoneInfo

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.decay import (
    decay_factor,
    decay_per_second,
    effective_half_life,
    exact_decay_factor,
    half_life_from_factor,
    next_reset,
)
from tui.engine.projection import (
    cycle_accrual,
    decay_rate,
    job_usage_over_cycles,
    usage_after_cycles,
    usage_ode,
    usage_ode_breaks,
)
from tui.sources.slurm_units import parse_slurm_minutes, parse_slurm_time

WEEK = 7 * 86400
DAY = 86400


# ---- spec 4.1 table ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("hl", "dt", "slurm", "exact"),
    [
        (604800, 60, 0.999931252324, 0.999931237763),
        (604800, 300, 0.999656308878, 0.999656236094),
        (604800, 86400, 0.905742656651, 0.905723664264),
        (604800, 604800, 0.500073397153, 0.5),
        (86400, 86400, 0.500072205878, 0.5),
    ],
)
def test_spec_decay_table(hl: int, dt: int, slurm: float, exact: float) -> None:
    # The table prints 12 decimals, so agreement to 5e-13 is "to the last printed digit".
    assert decay_factor(hl, dt) == pytest.approx(slurm, abs=5e-13)
    assert exact_decay_factor(hl, dt) == pytest.approx(exact, abs=5e-13)


def test_per_second_factor_for_seven_days() -> None:
    # 1 - 0.693/604800 = 1 - 1.1458333...e-6
    assert decay_per_second(WEEK) == pytest.approx(0.99999885416666667, abs=1e-17)
    assert decay_per_second(0) == 1.0
    assert decay_factor(0, 10 * WEEK) == 1.0


def test_slurm_removes_less_per_day_than_the_paper_says() -> None:
    # Seed 000 says 9.43 %/day (exact 1 - 2^(-1/7)); Slurm removes 9.4257 %.
    assert 1 - exact_decay_factor(WEEK, DAY) == pytest.approx(0.0942763, abs=5e-8)
    assert 1 - decay_factor(WEEK, DAY) == pytest.approx(0.0942573, abs=5e-8)


def test_no_decay_for_non_positive_interval_and_dbl_min_floor() -> None:
    assert decay_factor(WEEK, 0) == 1.0
    assert decay_factor(WEEK, -5) == 1.0
    # 1 - 0.693/1 = 0.307; 0.307**10**6 underflows to 0, Slurm floors at DBL_MIN.
    assert decay_factor(1, 10**6) == np.finfo(np.float64).tiny


def test_effective_half_life() -> None:
    # ln(1/2) / ln(1 - 0.693/604800) = 604928.1 s: usage halves 128 s late.
    assert effective_half_life(WEEK) == pytest.approx(604928.1019, abs=1e-3)
    assert decay_factor(WEEK, effective_half_life(WEEK)) == pytest.approx(0.5, abs=1e-14)
    assert effective_half_life(0) == math.inf


def test_half_life_from_factor_round_trips() -> None:
    assert half_life_from_factor(0.905742656651, DAY) == pytest.approx(WEEK, rel=1e-9)
    assert half_life_from_factor(0.5, WEEK, model="exact") == pytest.approx(WEEK, rel=1e-15)
    assert half_life_from_factor(1.0) == 0.0
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        half_life_from_factor(1.5)


@given(
    hl=st.integers(min_value=60, max_value=10**8),
    a=st.integers(min_value=0, max_value=10**6),
    b=st.integers(min_value=0, max_value=10**6),
)
def test_decay_composes(hl: int, a: int, b: int) -> None:
    # d^a * d^b = d^(a+b): splitting a cycle does not change the decay (up to rounding).
    assert decay_factor(hl, a) * decay_factor(hl, b) == pytest.approx(decay_factor(hl, a + b), rel=1e-12)


# ---- spec 4.7 / 4.9 accrual vectors --------------------------------------------------------


def test_d1_four_cpu_job_through_one_cycle() -> None:
    assert cycle_accrual(300, 4, WEEK) == pytest.approx(1199.587570654, abs=5e-10)


def test_d2_seven_days_of_five_minute_cycles() -> None:
    assert usage_after_cycles(1_000_000, 7 * 288, 300, WEEK) == pytest.approx(500_073.397, abs=5e-4)
    # The closed form agrees with Slurm's repeated multiplication.
    u = 1_000_000.0
    for _ in range(7 * 288):
        u *= decay_factor(WEEK, 300)
    assert usage_after_cycles(1_000_000, 7 * 288, 300, WEEK) == pytest.approx(u, rel=1e-13)


def test_d3_jobs_charged_at_end_then_decayed_by_two_cycles() -> None:
    # Cycles at 17:37:00, 17:38:00, 17:39:00; job 1 ran 17:37:30-33 (2e6 billing),
    # job 2 17:37:36-38 (1e6).  Slurm reported 5999154.43 and 1999720.44.
    t0 = 17 * 3600 + 37 * 60
    cycles = [t0, t0 + 60, t0 + 120]
    u1 = job_usage_over_cycles(cycles, t0 + 30, t0 + 33, 2_000_000, WEEK)
    u2 = job_usage_over_cycles(cycles, t0 + 36, t0 + 38, 1_000_000, WEEK)
    assert float(u1[-1]) == pytest.approx(5_999_154.434, abs=5e-4)
    assert float(u2[-1]) == pytest.approx(1_999_720.436, abs=5e-4)
    assert int(u1[-1] + u2[-1]) == 7_998_874  # root RawUsage (truncated)


def test_d4_two_cycles_of_a_running_job() -> None:
    u = job_usage_over_cycles([0, 300, 600], 0, math.inf, 4, WEEK)
    assert float(u[1]) == pytest.approx(1199.5876, abs=5e-5)
    assert float(u[2]) == pytest.approx(2398.7629, abs=5e-5)
    assert math.floor(float(u[2]) / 60) == 39  # GrpTRESRaw billing=39 (nominal 40)


def test_job_starting_mid_cycle_is_charged_for_its_own_interval() -> None:
    d = decay_per_second(WEEK)
    u = job_usage_over_cycles([0, 300, 600], 100, math.inf, 2, WEEK, usage0=1000.0)
    assert float(u[1]) == pytest.approx(1000 * d**300 + 200 * d**200 * 2, rel=1e-15)
    assert float(u[2]) == pytest.approx(float(u[1]) * d**300 + 300 * d**300 * 2, rel=1e-15)


def test_job_outside_the_window_adds_nothing() -> None:
    # Started after the last cycle, or ended before the first: only decay.
    d300 = decay_factor(WEEK, 300)
    late = job_usage_over_cycles([0, 300], 400, math.inf, 4, WEEK, usage0=100.0)
    early = job_usage_over_cycles([0, 300], -500, -100, 4, WEEK, usage0=100.0)
    assert float(late[1]) == float(early[1]) == pytest.approx(100 * d300, rel=1e-15)
    with pytest.raises(ValueError, match="before it starts"):
        job_usage_over_cycles([0, 300], 10, 5, 4, WEEK)


def test_qos_usage_factor() -> None:
    assert cycle_accrual(300, 4, WEEK, 0.5) == pytest.approx(1199.587570654 / 2, abs=1e-9)
    assert cycle_accrual(300, 4, WEEK, -1) == pytest.approx(1199.587570654, abs=1e-9)  # <0 -> 1


def test_accrual_vectorises() -> None:
    got = cycle_accrual(np.array([300, 300, 0]), np.array([4, 8, 4]), WEEK)
    np.testing.assert_allclose(got, [1199.587570654, 2399.175141308, 0.0], atol=1e-9)


def test_usage_after_cycles_with_constant_job_and_no_decay() -> None:
    assert usage_after_cycles(10.0, 12, 300, 0, increment=1200.0) == 10.0 + 12 * 1200.0
    # Constant job, with decay: u_n = a (1 - q^n) / (1 - q) from zero.
    q = decay_factor(WEEK, 300)
    a = cycle_accrual(300, 4, WEEK)
    assert usage_after_cycles(0.0, 2, 300, WEEK, increment=a) == pytest.approx(a * q + a, rel=1e-15)


# ---- spec 4.6 PriorityUsageResetPeriod ------------------------------------------------------


def test_weekly_reset_example() -> None:
    assert next_reset("WEEKLY", datetime(2026, 11, 18)) == datetime(2026, 11, 22)
    assert next_reset("weekly", datetime(2026, 11, 18, 17, 35)) == datetime(2026, 11, 22)
    # From a Sunday reset: the next Sunday, not the same day.
    assert next_reset("WEEKLY", datetime(2026, 11, 22)) == datetime(2026, 11, 29)


@pytest.mark.parametrize(
    ("period", "last", "expected"),
    [
        ("DAILY", datetime(2026, 11, 18, 15, 0), datetime(2026, 11, 19)),
        ("MONTHLY", datetime(2026, 11, 18, 15, 0), datetime(2026, 12, 1)),
        ("MONTHLY", datetime(2026, 12, 5), datetime(2027, 1, 1)),
        ("QUARTERLY", datetime(2026, 3, 31), datetime(2026, 4, 1)),
        ("QUARTERLY", datetime(2026, 5, 2), datetime(2026, 7, 1)),
        ("QUARTERLY", datetime(2026, 9, 30), datetime(2026, 10, 1)),
        ("QUARTERLY", datetime(2026, 11, 18), datetime(2027, 1, 1)),
        ("YEARLY", datetime(2026, 1, 1), datetime(2027, 1, 1)),
    ],
)
def test_reset_periods(period: str, last: datetime, expected: datetime) -> None:
    assert next_reset(period, last) == expected


def test_reset_none_now_and_junk() -> None:
    assert next_reset("NONE", datetime(2026, 11, 18)) is None
    assert next_reset("NOW", datetime(2026, 11, 18)) is None
    with pytest.raises(ValueError, match="FORTNIGHTLY"):
        next_reset("FORTNIGHTLY", datetime(2026, 11, 18))


def test_daily_reset_skips_missed_days() -> None:
    # Controller down from the 18th to the 21st noon: one reset, at the 21st 00:00.
    got = next_reset("DAILY", datetime(2026, 11, 18, 15), now=datetime(2026, 11, 21, 12))
    assert got == datetime(2026, 11, 21)


def test_weekly_reset_across_dst_follows_slurm_seconds_arithmetic() -> None:
    tz = ZoneInfo("Europe/Berlin")
    # Spring forward on Sun 2026-03-29: 7*86400 s after Sun 00:00 CET is Sun 04-05 01:00 CEST.
    first = next_reset("WEEKLY", datetime(2026, 3, 25, 12, tzinfo=tz))
    assert first == datetime(2026, 3, 29, 0, tzinfo=tz)
    second = next_reset("WEEKLY", first)
    assert (second.month, second.day, second.hour) == (4, 5, 1)
    # Fall back on Sun 2026-10-25: the week after is Sat 10-31 23:00 CET, and since that is a
    # Saturday the one after is Sun 11-01 00:00, an hour later (Slurm resets twice).
    oct25 = datetime(2026, 10, 25, 0, tzinfo=tz)
    sat = next_reset("WEEKLY", oct25)
    assert (sat.month, sat.day, sat.hour) == (10, 31, 23)
    assert next_reset("WEEKLY", sat) == datetime(2026, 11, 1, 0, tzinfo=tz)


# ---- Slurm time strings ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("7-0", 7 * DAY),
        ("14-00:00:00", 14 * DAY),
        ("90", 90 * 60),
        ("5:30", 5 * 60 + 30),
        ("1:02:03", 3723),
        ("2-12", 2 * DAY + 12 * 3600),
        ("1-2:30", DAY + 2 * 3600 + 30 * 60),
        ("0", 0),
    ],
)
def test_parse_slurm_time(text: str, seconds: int) -> None:
    assert parse_slurm_time(text) == seconds


def test_parse_slurm_time_infinite_and_rounding() -> None:
    assert parse_slurm_time("UNLIMITED") is None
    assert parse_slurm_time("infinite") is None
    assert parse_slurm_minutes("5:30") == 6  # time_str2mins rounds seconds up
    assert parse_slurm_minutes("7-0") == 10080


@pytest.mark.parametrize("junk", ["", "7d", "1:2:3:4", "1-2-3", "1:2-3", "-5", "abc", "1.5"])
def test_parse_slurm_time_rejects_junk(junk: str) -> None:
    with pytest.raises(ValueError, match="not a Slurm time"):
        parse_slurm_time(junk)


# ---- continuous model (PEARC'20 eq. 8-9) ----------------------------------------------------


def test_ode_steady_state_is_c_over_lambda() -> None:
    lam = decay_rate(168.0)  # per hour for a one-week half-life
    assert lam == pytest.approx(math.log(2) / 168)
    u = usage_ode([0.0, 168.0, 168.0 * 60], [0.0], [28.0], 168.0)
    # After one half-life from zero: half the steady state; after 60 half-lives: the steady state.
    assert u[1] == pytest.approx(0.5 * 28 / lam, rel=1e-14)
    assert u[2] == pytest.approx(28 / lam, rel=1e-14)
    # Starting above the steady state decays down to it.
    assert usage_ode(168.0, [0.0], [28.0], 168.0, u0=2 * 28 / lam) == pytest.approx(1.5 * 28 / lam)


def test_ode_paper_figure3_schedule_by_hand() -> None:
    # c = 28 cores on [0,2) weeks, 0 on [2,2.5), 56 on [2.5,4), 84 on [4,5), 28 on [5,6.5), 0 after.
    # Hours, one-week half-life: lambda = ln2/168; steady state of 28 cores = 28*168/ln2.
    ss = 28 * 168 / math.log(2)  # 6786.4 core-hours
    u2 = ss * (1 - 2**-2)
    u25 = u2 * 2**-0.5
    u4 = 2 * ss + (u25 - 2 * ss) * 2**-1.5
    u5 = 3 * ss + (u4 - 3 * ss) * 2**-1
    assert u2 == pytest.approx(5089.8, abs=0.05)
    breaks = np.array([0, 2, 2.5, 4, 5, 6.5]) * 168
    rates = [28, 0, 56, 84, 28, 0]
    got = usage_ode(np.array([2, 2.5, 4, 5]) * 168, breaks, rates, 168.0)
    np.testing.assert_allclose(got, [u2, u25, u4, u5], rtol=1e-13)
    # With u* = 10,000 core-hours the fairshare 2^(-u/u*) bottoms out at 0.3486 at week 5
    # (u = 15,202.95 core-hours); the paper's "never goes below 0.85" does not follow from its c(t).
    assert u5 == pytest.approx(15202.95, abs=0.005)
    assert 2 ** (-u5 / 10_000) == pytest.approx(0.3486, abs=5e-5)


def _rk4(breaks: np.ndarray, rates: list[float], lam: float, t_end: float, h: float) -> float:
    """Classic RK4, stepping exactly onto every break so the right-hand side is smooth."""
    u = 0.0
    edges = list(breaks) + [t_end]
    for i in range(len(breaks)):
        a, b = edges[i], edges[i + 1]
        n = max(1, round((b - a) / h))
        step = (b - a) / n
        c = rates[i]

        def f(x: float, c: float = c) -> float:
            return c - lam * x

        for _ in range(n):
            k1 = f(u)
            k2 = f(u + step / 2 * k1)
            k3 = f(u + step / 2 * k2)
            k4 = f(u + step * k3)
            u += step / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    return u


def test_ode_exact_solution_matches_fine_numerical_integration() -> None:
    breaks = np.array([0.0, 30.0, 45.0, 100.0, 130.0])
    rates = [5.0, 0.0, 12.5, 3.0, 0.0]
    hl = 24.0
    for t_end in (30.0, 77.7, 160.0):
        want = _rk4(breaks[breaks < t_end], rates, decay_rate(hl), t_end, h=0.01)
        assert usage_ode(t_end, breaks, rates, hl) == pytest.approx(want, rel=1e-10)


def test_ode_without_decay_is_linear() -> None:
    assert usage_ode_breaks([0, 10, 20], [3, 1, 0], 0.0, u0=5.0).tolist() == [5.0, 35.0, 45.0]
    assert usage_ode(25.0, [0, 10, 20], [3, 1, 0], 0.0, u0=5.0) == 45.0


def test_ode_rejects_times_before_the_first_break() -> None:
    with pytest.raises(ValueError, match="before the first break"):
        usage_ode([-1.0], [0.0], [1.0], 10.0)


@given(
    u0=st.floats(min_value=0, max_value=1e9),
    c=st.floats(min_value=0, max_value=1e6),
    t1=st.floats(min_value=0, max_value=500),
    t2=st.floats(min_value=0, max_value=500),
)
def test_ode_flow_property(u0: float, c: float, t1: float, t2: float) -> None:
    # Solving to t1 and restarting from there equals solving to t1+t2 directly.
    a = usage_ode(t1, [0.0], [c], 100.0, u0=u0)
    b = usage_ode(t2, [0.0], [c], 100.0, u0=float(a))
    assert b == pytest.approx(usage_ode(t1 + t2, [0.0], [c], 100.0, u0=u0), rel=1e-9, abs=1e-6)
