"""Multifactor priority against the spec's hand examples J1-J4 (section 5.4) and sprio rules."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from tui.engine.priority import (
    PRIORITY_MAX,
    PriorityFactors,
    PriorityWeights,
    age_factor,
    job_priority,
    job_size_factor,
    normalized_factor,
    tres_factors,
)
from tui.formats.sprio import format_sprio_value, sprio_columns, sprio_normalized_columns
from tui.model import PrioritySettings

WEEK = 604800
# J1 weights and cluster: 100 nodes / 3200 CPUs; job: 2 nodes, 64 CPUs, pending one day.
J1_WEIGHTS = PriorityWeights(age=1000, fairshare=10000, jobsize=1000, partition=10000, qos=1000)


def j1_factors(**changes: object) -> PriorityFactors:
    base = dict(
        age=age_factor(86400, WEEK),
        fairshare=0.5,
        jobsize=job_size_factor(2, 64, 100, 3200),
        partition=normalized_factor(1, 1),
        qos=normalized_factor(5, 10),
    )
    base.update(changes)
    return PriorityFactors(**base)  # type: ignore[arg-type]


def test_j1_priority_and_sprio_columns() -> None:
    p = job_priority(j1_factors(), J1_WEIGHTS)
    assert p.age == pytest.approx(142.857142857, abs=1e-9)
    assert p.jobsize == pytest.approx(20.0, abs=1e-12)
    assert p.priority == 15662
    cols = sprio_columns(p)
    assert [cols[k] for k in ("AGE", "FAIRSHARE", "JOBSIZE", "PARTITION", "QOS")] == [
        "143",
        "5000",
        "20",
        "10000",
        "500",
    ]
    assert cols["PRIORITY"] == "15662"
    # The printed parts add up to 15663, one more than PRIORITY.
    assert sum(int(cols[k]) for k in ("AGE", "FAIRSHARE", "JOBSIZE", "PARTITION", "QOS")) == 15663


def test_j1_parts_are_unrounded() -> None:
    parts = job_priority(j1_factors(), J1_WEIGHTS).parts()
    assert parts["AGE"] == pytest.approx(1000 / 7, rel=1e-15)
    assert (parts["FAIRSHARE"], parts["PARTITION"], parts["QOS"], parts["TRES"]) == (5000.0, 10000.0, 500.0, 0.0)


def test_j1_sprio_normalized() -> None:
    p = job_priority(j1_factors(), J1_WEIGHTS)
    cols = sprio_normalized_columns(p)
    assert cols["PRIORITY"] == "0.00000364679311"
    assert cols["AGE"] == "0.1428571"
    assert cols["JOBSIZE"] == "0.0200000"
    assert cols["QOS"] == "0.5000000"
    assert cols["ASSOC"] == "0.0000000"  # weight 0: sprio prints 0


def test_j2_favor_small_and_relative_to_time() -> None:
    assert job_size_factor(2, 64, 100, 3200, favor_small=True) == pytest.approx(0.98, abs=1e-15)
    p = job_priority(j1_factors(jobsize=job_size_factor(2, 64, 100, 3200, favor_small=True)), J1_WEIGHTS)
    assert sprio_columns(p)["JOBSIZE"] == "980"
    assert p.priority == 15662 - 20 + 980
    # SMALL_RELATIVE_TO_TIME, 60-minute limit: max(2*3200/100, 64) / 60 / 3200 = 1/3000.
    rel = job_size_factor(2, 64, 100, 3200, small_relative_to_time=True, time_limit_min=60)
    assert rel == pytest.approx(1 / 3000, rel=1e-15)
    rel_small = job_size_factor(2, 64, 100, 3200, favor_small=True, small_relative_to_time=True, time_limit_min=60)
    assert rel_small == pytest.approx(0.999667, abs=5e-7)


def test_j3_tres_factor() -> None:
    weights = PriorityWeights(tres={"cpu": 2000.0})
    f = PriorityFactors(tres=tres_factors({"cpu": 64, "mem": 256000}, {"cpu": 3200}))
    assert f.tres == {"cpu": 0.02, "mem": 0.0}
    p = job_priority(f, weights)
    assert p.tres == {"cpu": pytest.approx(40.0)}
    assert sprio_columns(p)["TRES"] == "cpu=40"
    assert sprio_normalized_columns(p)["TRES"] == "cpu=0.02"
    assert p.priority == 40


def test_j4_nice_and_site_factor_then_floor() -> None:
    p = job_priority(j1_factors(site=50, nice=100), J1_WEIGHTS)
    assert p.priority == 15612  # 15662.857 + 50 - 100, truncated
    cols = sprio_columns(p)
    assert (cols["SITE"], cols["NICE"], cols["PRIORITY"]) == ("50", "100", "15612")
    # A job whose parts do not outweigh its nice value still gets 1 (0 is "held").
    floor = job_priority(PriorityFactors(nice=100), J1_WEIGHTS)
    assert floor.priority == 1
    assert floor.sprio_priority == 1


def test_cap_at_uint32() -> None:
    w = PriorityWeights(fairshare=4_000_000_000, qos=4_000_000_000)
    p = job_priority(PriorityFactors(fairshare=1.0, qos=1.0), w)
    assert p.priority == PRIORITY_MAX
    assert p.sprio_priority == 8_000_000_000  # sprio does not cap its own sum


def test_test24_7_full_and_half_factors() -> None:
    # testsuite/expect/test24.7: weights 4,000,000 (assoc, qos, cpu) and 60000 (partition).
    w = PriorityWeights(assoc=4_000_000, qos=4_000_000, partition=60_000, tres={"cpu": 4_000_000.0})
    full = PriorityFactors(assoc=1.0, qos=1.0, partition=1.0, tres={"cpu": 1.0})
    cols = sprio_columns(job_priority(full, w))
    assert (cols["ASSOC"], cols["PARTITION"], cols["QOS"], cols["TRES"]) == (
        "4000000",
        "60000",
        "4000000",
        "cpu=4000000",
    )
    half = job_priority(PriorityFactors(assoc=0.5, qos=0.5, partition=0.5, tres={"cpu": 0.5}), w)
    assert sprio_normalized_columns(half)["ASSOC"] == "0.5000000"
    assert sprio_normalized_columns(half)["TRES"] == "cpu=0.50"


def test_sprio_rounds_half_to_even() -> None:
    assert [format_sprio_value(x) for x in (0.5, 1.5, 2.5, 142.857, 2.4999)] == ["0", "2", "2", "143", "2"]


def test_age_factor() -> None:
    assert age_factor(0, WEEK) == 0.0
    assert age_factor(-10, WEEK) == 0.0  # accrue time in the future
    assert age_factor(WEEK / 2, WEEK) == 0.5
    assert age_factor(WEEK, WEEK) == 1.0
    assert age_factor(10 * WEEK, WEEK) == 1.0
    # FASRC: MaxAge 3 days, weight 10,000,000; 3.5 days pending -> capped at 10,000,000.
    assert age_factor(3.5 * 86400, 3 * 86400) * 10_000_000 == 10_000_000
    assert age_factor(1.5 * 86400, 3 * 86400) * 10_000_000 == 5_000_000


def test_job_size_edges() -> None:
    assert job_size_factor(100, 3200, 100, 3200) == 1.0
    assert job_size_factor(1, 0, 100, 3200) == 0.01  # cpu count unknown: node term only
    # 22.05 unsigned wrap: a favor-small job larger than the cluster clamps to 1, not 0.
    assert job_size_factor(200, 6400, 100, 3200, favor_small=True) == 1.0
    # No time limit known: Slurm divides by 1 minute.
    assert job_size_factor(1, 32, 100, 3200, small_relative_to_time=True) == 0.01
    with pytest.raises(ValueError, match="positive"):
        job_size_factor(1, 1, 0, 0)


def test_normalized_factor_and_no_normal() -> None:
    assert normalized_factor(0, 10) == 0.0
    assert normalized_factor(5, 10) == 0.5
    assert normalized_factor(20, 40, no_normal=True) == 20.0
    assert tres_factors({"CPU": 8}, {"cpu": 0}) == {"cpu": 0.0}
    assert tres_factors({"cpu": 8}, {}, no_normal=True) == {"cpu": 8.0}


def test_weights_from_settings() -> None:
    s = PrioritySettings(weight_age=1000, weight_fairshare=10000, weight_tres={"CPU": 2000.0})
    w = PriorityWeights.from_settings(s)
    assert (w.age, w.fairshare, w.qos, dict(w.tres)) == (1000, 10000, 0, {"cpu": 2000.0})


def test_tres_printed_in_slurm_array_order() -> None:
    w = PriorityWeights(tres={"gres/gpu": 1000.0, "mem": 1000.0, "cpu": 1000.0})
    p = job_priority(PriorityFactors(tres={"gres/gpu": 0.5, "mem": 0.25, "cpu": 0.125}), w)
    assert sprio_columns(p)["TRES"] == "cpu=125,mem=250,gres/gpu=500"


@given(
    fs=st.floats(0, 1),
    age=st.floats(0, 1),
    js=st.floats(0, 1),
    nice=st.integers(-10_000, 10_000),
)
def test_priority_is_truncated_clamped_sum(fs: float, age: float, js: float, nice: int) -> None:
    w = PriorityWeights(age=1000, fairshare=10000, jobsize=1000)
    p = job_priority(PriorityFactors(age=age, fairshare=fs, jobsize=js, nice=nice), w)
    exact = age * 1000 + fs * 10000 + js * 1000 - nice
    assert 1 <= p.priority <= PRIORITY_MAX
    assert p.priority == max(1, int(exact)) or abs(exact - round(exact)) < 1e-9


@given(fs1=st.floats(0, 1), fs2=st.floats(0, 1))
def test_priority_monotone_in_fairshare(fs1: float, fs2: float) -> None:
    lo, hi = sorted((fs1, fs2))
    assert job_priority(j1_factors(fairshare=lo), J1_WEIGHTS).priority <= job_priority(
        j1_factors(fairshare=hi), J1_WEIGHTS
    ).priority
