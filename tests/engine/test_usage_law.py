"""Slurm's usage law (tui.engine.usage_law): one hand-derived case per item of the law.

Every expected number is written out from the law itself (``d = 1 - 0.693/HL``, a running job
adds ``delta * d**delta * billing * UsageFactor`` at each cycle, ...), never from the module.
"""

from __future__ import annotations

import math
import random
from datetime import datetime, timezone

import numpy as np
import pytest

from tui.engine.usage_law import (
    JobTable,
    UsagePolicy,
    anchored_cycles,
    cycle_grid,
    job_usage_over_cycles,
    replay,
    reset_boundaries,
    subtree_sum,
)
from tui.model import Partition, PrioritySettings

HL = 3600.0
D = 1.0 - 0.693 / HL  # Slurm's per-second factor at a one-hour half-life
P = 60.0
#: root (0) <- acct (1) <- alice (2), bob (3)
PARENT = [-1, 0, 1, 1]


def policy(**kw: object) -> UsagePolicy:
    return UsagePolicy(half_life_s=HL, calc_period_s=P, **kw)  # type: ignore[arg-type]


def one(start: float, end: float, billing: float = 1000.0, qos: str = "", row: int = 2) -> JobTable:
    return JobTable.of([row], [start], [end], [billing], [qos])


GRID = np.arange(0.0, 601.0, P)  # cycles at 0, 60, ..., 600


def test_whole_cycle_charge_is_decayed_by_its_own_interval_spec_d1() -> None:
    # D1: a 4-CPU job through one whole 300-s cycle at HL 7-0 adds 300 * d**300 * 4
    pol = UsagePolicy(half_life_s=604800.0, calc_period_s=300.0)
    got = replay(one(-10.0, math.inf, 4.0), PARENT, [0.0, 300.0], pol)
    assert got.usage[2] == pytest.approx(1199.587570654, rel=1e-12)


def test_running_job_is_charged_every_cycle_then_decayed_to_the_last() -> None:
    # starts at 30, runs through 60 and 120, read at 180: charges 30*d^30 at 60, 60*d^60 at 120 and 180
    got = replay(one(30.0, math.inf), PARENT, [0.0, 60.0, 120.0, 180.0], policy())
    want = 1000.0 * (30 * D**30 * D**120 + 60 * D**60 * D**60 + 60 * D**60)
    assert got.usage[2] == pytest.approx(want, rel=1e-12)
    assert got.usage[1] == got.usage[0] == got.usage[2] and got.usage[3] == 0  # ancestors too


def test_short_job_tail_is_charged_only_with_limits() -> None:
    # 20 s between the cycles at 60 and 120, read after the cycle at 180
    with_limits = replay(one(70.0, 90.0), PARENT, [0.0, 60.0, 120.0, 180.0], policy(enforce_limits=True))
    assert with_limits.usage[2] == pytest.approx(1000.0 * 20 * D**20 * D**60 * D**60, rel=1e-12)
    without = replay(one(70.0, 90.0), PARENT, [0.0, 60.0, 120.0, 180.0], policy(enforce_limits=False))
    assert without.usage[2] == 0.0
    # a longer job without limits keeps what its cycles charged, loses its last slice (120..150)
    longer = replay(one(30.0, 150.0), PARENT, [0.0, 60.0, 120.0, 180.0], policy(enforce_limits=False))
    assert longer.usage[2] == pytest.approx(1000.0 * (30 * D**30 * D**120 + 60 * D**60 * D**60), rel=1e-12)


def test_qos_usage_factor_scales_the_charge() -> None:
    jobs = JobTable.of([2, 3, 2], [30.0, 30.0, 30.0], [math.inf] * 3, [1000.0] * 3, ["half", "double", "neg"])
    got = replay(jobs, PARENT, [0.0, 60.0], policy(qos_usage_factor={"half": 0.5, "double": 2.0, "neg": -1.0}))
    unit = 1000.0 * 30 * D**30
    assert got.usage[2] == pytest.approx(0.5 * unit + 1.0 * unit, rel=1e-12)  # a negative factor counts as 1
    assert got.usage[3] == pytest.approx(2.0 * unit, rel=1e-12)
    assert got.qos == pytest.approx({"half": 0.5 * unit, "double": 2.0 * unit, "neg": unit}, rel=1e-12)


def test_no_decay_qos_keeps_its_own_usage_but_the_association_decays() -> None:
    jobs = JobTable.of([2, 3], [30.0, 30.0], [90.0, 90.0], [1000.0, 1000.0], ["keep", "plain"])
    got = replay(jobs, PARENT, [0.0, 60.0, 120.0, 180.0], policy(no_decay_qos=frozenset({"keep"})))
    # 30 s charged at the cycle at 60, its tail 60..90 at its end: both decayed from 60 to 180
    decayed = 1000.0 * (30 * D**30 * D**120 + 30 * D**30 * D**120)
    assert got.usage[2] == pytest.approx(decayed, rel=1e-12)  # associations always decay
    assert got.usage[3] == pytest.approx(decayed, rel=1e-12)
    assert got.qos["keep"] == pytest.approx(1000.0 * 60, rel=1e-12)  # 60 s run, never decayed
    assert got.qos["plain"] == pytest.approx(decayed, rel=1e-12)


def test_reset_zeroes_usage_at_the_first_cycle_after_its_boundary() -> None:
    # a job from 30 on; a reset boundary at 100 takes effect at the cycle at 120, before its charge
    grid = [0.0, 60.0, 120.0, 180.0]
    got = replay(one(30.0, math.inf), PARENT, grid, policy(), resets=[100.0])
    assert got.usage[2] == pytest.approx(1000.0 * (60 * D**60 * D**60 + 60 * D**60), rel=1e-12)
    # a job that ended (tail charged at 90) before the reset cycle is gone entirely
    gone = replay(one(70.0, 90.0), PARENT, grid, policy(), resets=[100.0])
    assert gone.usage[2] == 0.0
    nothing = replay(one(70.0, 90.0), PARENT, grid, policy(), resets=[200.0])  # after the last cycle: no effect
    assert nothing.usage[2] > 0


def test_reset_boundaries_are_local_midnights() -> None:
    t0 = datetime(2026, 11, 18, 12, 0, tzinfo=timezone.utc).timestamp()  # a Wednesday
    t1 = datetime(2026, 11, 23, 12, 0, tzinfo=timezone.utc).timestamp()
    daily = reset_boundaries("DAILY", t0, t1, timezone.utc)
    assert [datetime.fromtimestamp(x, timezone.utc).day for x in daily] == [19, 20, 21, 22, 23]
    weekly = reset_boundaries("WEEKLY", t0, t1, timezone.utc)
    assert [datetime.fromtimestamp(x, timezone.utc).isoformat() for x in weekly] == ["2026-11-22T00:00:00+00:00"]
    assert reset_boundaries("NOW", 0, 1000, anchors=[50.0, 2000.0]).tolist() == [50.0]
    assert reset_boundaries("NONE", t0, t1).size == 0


def test_billing_from_alloc_tres_is_the_untruncated_double() -> None:
    # slurm.conf.5's and priority_multifactor.shtml's examples: CPU=1.0,Mem=0.25G
    w = {"cpu": 1.0, "mem": 0.25 / 1024, "gres/gpu": 2.0}
    sum_pol = UsagePolicy(tres_weights={"p": w})
    max_pol = UsagePolicy(tres_weights={"p": w}, billing_mode="max_tres")
    assert sum_pol.billing("p", {"cpu": 16, "mem": 1024, "billing": 16}) == 16.25  # sacct prints billing=16
    assert sum_pol.billing("p", {"cpu": 1, "mem": 60 * 1024}) == 16.0
    assert max_pol.billing("p", {"cpu": 1, "mem": 60 * 1024}) == 15.0
    assert sum_pol.billing("p", {"cpu": 1, "mem": 8 * 1024, "gres/gpu": 1}) == 5.0
    assert max_pol.billing("p", {"cpu": 1, "mem": 8 * 1024, "gres/gpu": 1}) == 2.0
    assert sum_pol.billing("other", {"cpu": 3, "mem": 100}) == 3.0  # no weights: the CPU count


def test_policy_of_a_snapshots_settings() -> None:
    settings = PrioritySettings(decay_half_life_s=3600, calc_period_s=60, flags=frozenset({"MAX_TRES"}),
                                accounting_enforce=frozenset({"associations"}), qos_usage_factors={"half": 0.5},
                                qos_no_decay=frozenset({"keep"}))
    pol = UsagePolicy.of(settings, [Partition("burn", {"cpu": 2.5}), Partition("debug")])
    assert (pol.enforce_limits, pol.billing_mode, pol.usage_factor("half"), pol.usage_factor("x")) == (
        False, "max_tres", 0.5, 1.0)
    assert dict(pol.tres_weights) == {"burn": {"cpu": 2.5}} and pol.no_decay_qos == {"keep"}
    assert UsagePolicy.of(PrioritySettings()).enforce_limits  # unknown: limits
    assert UsagePolicy.of(PrioritySettings(accounting_enforce=frozenset({"associations", "safe"}))).enforce_limits


def test_restart_decays_and_charges_the_downtime_in_one_step() -> None:
    # controller up at 0.4 (cycles 0, 60, 120), down, up again at 250.7: cycles 250, 310, 370
    grid = anchored_cycles([0.4, 250.7], P, 400.0, stops=[150.0])
    assert grid.tolist() == [0.0, 60.0, 120.0, 250.0, 310.0, 370.0]
    got = replay(one(100.0, math.inf), PARENT, grid, policy())
    # 20 s at 120, the 130-s gap charged at 250 as one slice (d**130 inside), then 60 + 60
    want = 1000.0 * (20 * D**20 * D**250 + 130 * D**130 * D**120 + 60 * D**60 * D**60 + 60 * D**60)
    assert got.usage[2] == pytest.approx(want, rel=1e-12)
    # on the regular grid the same job would be charged per 60 s: a different number
    regular = replay(one(100.0, math.inf), PARENT, np.arange(0.0, 371.0, 10.0), policy())
    assert abs(regular.usage[2] - want) > 1.0


def test_running_at_capture_and_ended_after_the_last_cycle() -> None:
    grid = [0.0, 60.0, 120.0]
    running = replay(one(100.0, math.inf), PARENT, grid, policy(), until=150.0)
    assert running.usage[2] == pytest.approx(1000.0 * 20 * D**20, rel=1e-12)  # up to the last cycle only
    ended = replay(one(100.0, 140.0), PARENT, grid, policy(), until=150.0)
    assert ended.usage[2] == pytest.approx(1000.0 * (20 * D**20 + 20 * D**20), rel=1e-12)  # tail undecayed
    later = replay(one(130.0, 140.0), PARENT, grid, policy(), until=150.0)
    assert later.usage[2] == pytest.approx(1000.0 * 10 * D**10, rel=1e-12)
    not_yet = replay(one(130.0, math.inf), PARENT, grid, policy(), until=150.0)
    assert not_yet.usage[2] == 0.0


def test_a_job_ending_in_a_cycles_second_ran_through_that_cycle() -> None:
    # ends at 120, the cycle's own second: charged 60 s by that cycle, nothing more at its end
    got = replay(one(60.0, 120.0), PARENT, [0.0, 60.0, 120.0, 180.0], policy(enforce_limits=False))
    assert got.usage[2] == pytest.approx(1000.0 * 60 * D**60 * D**60, rel=1e-12)


def test_requeued_job_runs_are_each_charged() -> None:
    runs = JobTable.of([2, 2], [10.0, 70.0], [40.0, 100.0], [1000.0, 1000.0])  # two runs of one job (sacct -D)
    got = replay(runs, PARENT, [0.0, 60.0, 120.0], policy())
    assert got.usage[2] == pytest.approx(1000.0 * (30 * D**30 * D**120 + 30 * D**30 * D**60), rel=1e-12)


def test_no_decay_half_life_zero() -> None:
    got = replay(one(30.0, math.inf), PARENT, GRID, UsagePolicy(half_life_s=0.0, calc_period_s=P))
    assert got.usage[2] == pytest.approx(1000.0 * 570.0, rel=1e-12)


def test_subtree_sum_and_unknown_rows() -> None:
    assert subtree_sum([1.0, 2.0, 4.0, 8.0], PARENT).tolist() == [15.0, 14.0, 4.0, 8.0]
    got = replay(JobTable.of([-1, 3], [30.0, 30.0], [math.inf] * 2, [1.0, 1.0]), PARENT, [0.0, 60.0], policy())
    assert got.usage[0] == got.usage[3] == pytest.approx(30 * D**30) and got.per_job[0] > 0  # -1: charged nowhere


def test_cycle_grid_ends_at_the_last_cycle() -> None:
    assert cycle_grid(1000.0, 300.0, 350.0).tolist() == [100.0, 400.0, 700.0, 1000.0]
    assert cycle_grid(1000.0, 300.0, 1000.0).tolist() == [1000.0]


@pytest.mark.parametrize("seed", range(4))
def test_replay_matches_the_cycle_by_cycle_loop_on_irregular_grids(seed: int) -> None:
    rng = random.Random(seed)
    grid = np.cumsum([0.0] + [rng.choice([60, 60, 60, 61, 59, 400, 3000]) for _ in range(300)])
    for limits in (True, False):
        starts, ends = [], []
        for _ in range(30):
            s = float(rng.randint(1, int(grid[-1]) - 10))
            e = math.inf if rng.random() < 0.2 else s + rng.choice([5, 20, 200, 5000])
            starts.append(s)
            ends.append(min(e, float(grid[-1]) - 1) if math.isfinite(e) else e)
        got = replay(JobTable.of([2] * 30, starts, ends, [7.0] * 30), PARENT, grid, policy(enforce_limits=limits))
        want = sum(float(job_usage_over_cycles(grid, s, e, 7.0, HL, enforce_limits=limits)[-1])
                   for s, e in zip(starts, ends))
        assert got.usage[2] == pytest.approx(want, rel=1e-9)


def test_the_planners_series_is_the_same_law_as_the_replay() -> None:
    from tui.engine.usage_law import charge_series

    # jobs in seconds from now (now = a cycle); times 0, 60, ..., 600
    starts, ends = [10.0, 70.0, 0.0, 130.0, 50.0], [30.0, 250.0, np.inf, 580.0, 180.0]
    for limits in (True, False):
        series = charge_series(GRID, starts, ends, [1000.0] * 5, HL, P, enforce_limits=limits)
        for k in range(1, GRID.size):
            got = replay(JobTable.of([2] * 5, starts, ends, [1000.0] * 5), PARENT,
                         GRID[: k + 1], policy(enforce_limits=limits))
            assert series[:, k] == pytest.approx(got.per_job, rel=1e-9, abs=1e-9)
    short = charge_series([60.0], [10.0], [30.0], [1000.0], HL, P, enforce_limits=False)
    assert short[0, 0] == 0.0  # a job between two cycles, without limits: never charged


@pytest.mark.parametrize("limits", [True, False])
@pytest.mark.parametrize("resets", [(), (30000.5, 61000.0)])
def test_replay_at_reads_each_sample_as_replay_does(limits: bool, resets: tuple[float, ...]) -> None:
    """One pass read at several cycles (the Policy screen's plot) equals a replay truncated at each:
    jobs short and long, running, ending on a cycle and between, a re-anchored (irregular) grid, a
    sample read after its cycle, two readings of one cycle, usage resets, QOS factors."""
    from tui.engine.usage_law import replay_at

    rng = np.random.default_rng(1)
    n = 50
    parent = np.r_[-1, np.zeros(9, dtype=np.int64), rng.integers(1, 10, 40)]
    J = 3000
    start = np.floor(rng.uniform(0, 100000, J))
    end = start + np.floor(rng.pareto(1.2, J) * 600 + 30)
    end[rng.random(J) < 0.05] = np.inf
    end[:20] = 300.0 * np.ceil(start[:20] / 300.0 + 2)  # on a cycle
    jobs = JobTable.of(rng.integers(0, n, J), start, end, rng.uniform(1, 10, J), list(rng.choice(["a", "b"], J)))
    grid = cycle_grid(100000, 300, 0)
    cycles = np.r_[grid[:200], grid[200:] + 7]  # a restart re-anchored the grid
    policy = UsagePolicy(half_life_s=5 * 3600, enforce_limits=limits, qos_usage_factor={"b": 0.5})
    samples = np.array([10, 50, 51, 120, 120, 200, cycles.size - 1])
    untils = cycles[samples].copy()
    untils[4] += 100.0
    untils[-1] += 200.0
    got = replay_at(jobs, parent, cycles, policy, samples, untils, resets)
    assert got.shape == (samples.size, n)
    for m, k in enumerate(samples):
        want = replay(jobs, parent, cycles[:k + 1], policy, until=untils[m], resets=resets).usage
        np.testing.assert_allclose(got[m], want, rtol=1e-10, atol=1e-6)
    assert got[-1, 0] > 1e6  # real usage
    assert bool(got[4, 0] > got[3, 0]) is limits  # a job ending after the cycle, read then: its last slice (limits)


@pytest.mark.parametrize("grid", ["logged", "uneven"])
@pytest.mark.parametrize("side", ["left", "right"])
def test_bucket_search_is_searchsorted(grid: str, side: str) -> None:
    """The replay's cycle lookup (buckets, then a few steps) finds what a binary search finds: on a
    logged grid (whole seconds, a period apart but for the wake-up's jitter) and an uneven one (its
    fallback), for times between, on and around cycles, outside the grid and running jobs' inf."""
    from tui.engine.usage_law import _search

    rng = np.random.default_rng(7)
    if grid == "logged":
        c = np.floor(1.8e9 + 300.0 * np.arange(25921) + rng.random(25921))
    else:
        c = 1.8e9 + np.cumsum(rng.integers(1, 600, 20000)).astype(np.float64)
    x = np.r_[rng.uniform(c[0] - 1000, c[-1] + 1000, 100000), c, c + 0.5, c - 0.5, [np.inf, -np.inf]]
    np.testing.assert_array_equal(_search(c, x, side), np.searchsorted(c, x, side=side))
