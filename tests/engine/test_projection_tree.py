"""The vectorised what-if projection (issue 9): Slurm's discrete law, the continuous model,
resets, and fairshare at every step against fresh engine computes on a real capture."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tui.engine import compute
from tui.engine.decay import decay_factor
from tui.engine.projection import (
    add_usage,
    charge_series,
    decay_series,
    job_usage_over_cycles,
    project_usage,
    usage_ode,
)
from tui.engine.fairshare_projection import project_fairshare
from tui.model import AssocTree
from tui.sources import registry

HOUR = 3600.0
DAY = 86400.0
WEEK = 7 * DAY


@pytest.mark.parametrize(("start", "end"), [
    (0.0, 3 * HOUR), (0.0, math.inf), (90.0, 1000.0), (600.0, 900.0), (1234.5, 1240.0),
    (300.0, 4 * 300.0), (7.0, 7.0), (50.0, 250.0), (3 * HOUR + 17, 9 * HOUR - 5),
])
@pytest.mark.parametrize("half_life", [3600.0, WEEK, 0.0])
def test_slurm_law_matches_the_cycle_by_cycle_recursion(start: float, end: float, half_life: float) -> None:
    cycles = np.arange(0, 200) * 300.0
    ref = job_usage_over_cycles(cycles, start, end, 4.0, half_life).astype(np.float64)
    got = charge_series(cycles, [start], [end], [4.0], half_life, 300.0)[0]
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0)


def test_slurm_law_between_cycles_holds_the_last_cycle() -> None:
    cycles = np.arange(0, 30) * 300.0
    ref = job_usage_over_cycles(cycles, 100.0, 4000.0, 2.0, WEEK).astype(np.float64)
    t = cycles[:-1] + 299.0
    np.testing.assert_allclose(charge_series(t, [100.0], [4000.0], [2.0], WEEK, 300.0)[0], ref[:-1], rtol=1e-12)


def test_short_half_life_over_a_long_horizon_underflows_cleanly() -> None:
    t = np.arange(0, 91 * 24) * HOUR
    g = charge_series(t, [0.0], [DAY], [1e6], 3600.0, 60.0)[0]
    assert np.all(np.isfinite(g)) and g[-1] == 0.0
    # Steady state of a running job: B * P d^P / (1 - d^P), the geometric limit.
    g = charge_series(t, [0.0], [math.inf], [1.0], 3600.0, 60.0)[0]
    q = float(decay_factor(3600.0, 60.0))
    assert g[-1] == pytest.approx(60.0 * q / (1 - q), rel=1e-12)


def test_continuous_law_is_the_exact_ode() -> None:
    t = np.linspace(0, 10 * WEEK, 1001)
    got = charge_series(t, [2 * DAY], [9 * DAY], [28.0], WEEK, law="continuous")[0]
    ref = usage_ode(t, [0.0, 2 * DAY, 9 * DAY], [0.0, 28.0, 0.0], WEEK)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)


def test_reset_zeroes_usage_and_restarts_running_charges() -> None:
    # A reset at 1000 s: Slurm zeroes at the first cycle at or after it (1200 s), and that
    # cycle charges the running job for [900, 1200] from zero.
    t = np.arange(0, 20) * 300.0
    g = charge_series(t, [0.0], [math.inf], [1.0], WEEK, 300.0, resets_s=[1000.0])[0]
    fresh = job_usage_over_cycles(t[3:], 900.0, math.inf, 1.0, WEEK).astype(np.float64)
    np.testing.assert_allclose(g[4:], fresh[1:], rtol=1e-12)
    assert g[3] > g[4]
    d = decay_series(t, WEEK, 300.0, resets_s=[1000.0])
    assert d[3] > 0 and np.all(d[4:] == 0)
    # A job that ended before the reset cycle leaves nothing.
    g = charge_series(t, [0.0], [1100.0], [1.0], WEEK, 300.0, resets_s=[1000.0])[0]
    assert g[3] > 0 and np.all(g[4:] == 0)


def test_others_can_keep_a_constant_rate() -> None:
    tree = AssocTree.from_rows([(-1, False, "root", "", 1, 100.0), (0, False, "a", "", 1, 100.0),
                                (1, True, "a", "u", 1, 60.0), (1, True, "a", "v", 1, 40.0)])
    t = np.arange(0, 49) * HOUR
    proj = project_usage(tree, [], [], [], [], t, WEEK, 300.0, rate=[0, 0, 2.0, 0])
    unit = charge_series(t, [0.0], [math.inf], [1.0], WEEK, 300.0)[0]
    u = proj.of([0, 1, 2, 3]).astype(np.float64)
    np.testing.assert_allclose(u[:, 2], 60.0 * proj.decay + 2 * unit)
    np.testing.assert_allclose(u[:, 0], 100.0 * proj.decay + 2 * unit)  # ancestors get it too
    np.testing.assert_allclose(u[:, 3], 40.0 * proj.decay)


@pytest.fixture(scope="module")
def deep4():
    return registry.make("folder", "tests/fixtures/slurm/deep4/fair_tree").load()


@pytest.mark.parametrize("algorithm", ["fair_tree", "classic"])
def test_projected_job_equals_fresh_engine_on_a_real_capture(deep4, algorithm: str) -> None:
    # A 4-CPU job of 1e6 billing per CPU-second (the sandbox's weights) for 30 hours,
    # starting in 2 hours, on d4 (fpga, under hw, under eng): at every hourly step the
    # projection equals a fresh compute of the same tree with every usage decayed and the
    # job's own usage (Slurm's cycle recursion) added to d4 and its ancestors.
    tree = deep4.tree
    s = deep4.settings
    row = next(i for i in range(tree.size) if tree.is_user[i] and tree.user[i] == "d4")
    t = np.arange(0, 73) * HOUR
    start, end, billing = 2 * HOUR, 32 * HOUR, 4e6
    proj = project_usage(tree, [row], [start], [end], [billing], t, s.decay_half_life_s, s.calc_period_s)
    watch = [row, int(tree.parent[row]), next(i for i in range(tree.size) if tree.user[i] == "d1")]
    series = project_fairshare(tree, proj, watch, algorithm, s.dampening, rank_every=1)
    job = job_usage_over_cycles(np.arange(0, 72 * 60 + 1) * 60.0, start, end, billing,
                                s.decay_half_life_s).astype(np.float64)[::60]
    assert job.max() > 0.5 * tree.usage_raw[row]  # the job matters
    for k in range(t.size):
        decayed = AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw,
                            tree.usage_raw * np.longdouble(decay_factor(s.decay_half_life_s, t[k])),
                            tree.sibling_order)
        fresh = compute(add_usage(decayed, row, job[k]), algorithm, s.dampening)
        np.testing.assert_allclose(series.usage[k].astype(float),
                                   add_usage(decayed, row, job[k]).usage_raw[watch].astype(float), rtol=1e-12)
        ok = ~np.isnan(fresh.fairshare[watch])
        np.testing.assert_allclose(series.fairshare[k][ok], fresh.fairshare[watch][ok], rtol=1e-12)
        if algorithm == "fair_tree":
            assert list(series.rank[k]) == list(fresh.rank[watch])
            np.testing.assert_allclose(series.level_fs[k].astype(float), fresh.level_fs[watch].astype(float),
                                       rtol=1e-12)
    if algorithm == "fair_tree":
        # d4 falls behind while the job runs (and a week half-life keeps it there for days).
        r = series.rank[:, 0]
        assert r[30] < r[0] and r[-1] == r[30]
        assert series.ahead[0, 0] == series.users - r[0]  # no ties in this tree


def test_fair_tree_rank_is_held_between_recomputations(deep4) -> None:
    tree, s = deep4.tree, deep4.settings
    row = next(i for i in range(tree.size) if tree.user[i] == "d4")
    t = np.arange(0, 49) * HOUR
    proj = project_usage(tree, [row], [0.0], [20 * HOUR], [4e6], t, s.decay_half_life_s, s.calc_period_s)
    every = project_fairshare(tree, proj, [row], rank_every=1)
    daily = project_fairshare(tree, proj, [row], rank_every=24)
    assert list(np.flatnonzero(daily.ranked)) == [0, 24, 48]
    for k in range(t.size):
        assert daily.rank[k, 0] == every.rank[24 * (k // 24), 0]
    np.testing.assert_array_equal(daily.level_fs, every.level_fs)  # exact at every step


@pytest.mark.parametrize("law", ["slurm", "continuous"])
def test_steady_rate_holds_every_usage(deep4, law: str) -> None:
    from tui.engine.projection import steady_rate

    tree, s = deep4.tree, deep4.settings
    t = np.arange(0, 15) * DAY
    proj = project_usage(tree, [], [], [], [], t, s.decay_half_life_s, s.calc_period_s, law,
                         rate=steady_rate(tree, s.decay_half_life_s, s.calc_period_s, law))
    for k in (0, 7, 14):
        np.testing.assert_allclose(proj.at(k).astype(float), tree.usage_raw.astype(float), rtol=1e-9)


@pytest.mark.parametrize("others", ["decay", "rate", "reset"])
def test_projection_equals_fresh_engine_on_a_random_tree(others: str) -> None:
    # bench/engine.py's random tree (parent and zero shares, depth up to 6): ranks of the
    # charged users, users elsewhere and the charged accounts equal a fresh Fair Tree (incremental
    # re-ranking) and a fresh classic (path-only, dampening 3) on the projected usage, with pure
    # decay, constant rates and a reset.
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    from engine import random_tree

    tree = random_tree(3000, seed=5)
    users = np.flatnonzero(tree.is_user)
    rng = np.random.default_rng(1)
    charged = rng.choice(users, 6, replace=False)
    t = np.arange(0, 15) * DAY
    rate = rng.uniform(0, 50, tree.size) * tree.is_user if others == "rate" else None
    resets = [5.5 * DAY] if others == "reset" else []
    proj = project_usage(tree, charged, rng.uniform(0, 5, 6) * DAY, rng.uniform(6, 9, 6) * DAY,
                         rng.uniform(1e3, 1e5, 6), t, WEEK, 300.0, resets_s=resets, rate=rate)
    watch = np.concatenate([charged, rng.choice(users, 10, replace=False), tree.parent[charged]])
    series = project_fairshare(tree, proj, watch, rank_every=1)
    classic = project_fairshare(tree, proj, watch, "classic", dampening=3)
    for k in range(t.size):
        now = AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw, proj.at(k))
        fresh = compute(now)
        assert list(series.rank[k]) == list(fresh.rank[watch]), k
        np.testing.assert_allclose(classic.fairshare[k], compute(now, "classic", 3).fairshare[watch], rtol=1e-12)
    assert len({tuple(series.rank[k]) for k in range(t.size)}) > 1  # the ranks do move


def test_pbs_projection_equals_a_step_by_step_simulation() -> None:
    # Seed 002's tree: L5 (under B3 under B2) runs 4 CPUs (cput: 4 CPU-seconds a second) from
    # hour 5 for 40 hours; decays halve every node each day (the first in 10 hours). A plain
    # simulation (accrue each minute, decay at each decay time, floor at 1) and the engine's
    # compute() on its tree give the same usage and factor.
    from dataclasses import replace

    from tests.conftest import FIXTURES
    from tui.engine import pbs
    from tui.engine.projection import project_pbs
    from tui.sources.pbs import read_pbs

    tree = read_pbs(str(FIXTURES / "pbs" / "seed002_resource_group"), str(FIXTURES / "pbs" / "seed002_usage.txt"))
    names = list(tree.name)
    l5, l4 = names.index("L5"), names.index("L4")
    t = np.arange(0, 73) * HOUR
    got = project_pbs(tree, [l5], [5 * HOUR], [45 * HOUR], [4.0], t, [l5, l4, names.index("B3")],
                      first_decay_s=10 * HOUR)
    usage = tree.usage.astype(np.float64).copy()
    path = [l5]
    while tree.parent[path[-1]] >= 0:
        path.append(int(tree.parent[path[-1]]))
    mult = pbs.decay_multiplier(0.5)
    for minute in range(72 * 60 + 1):
        now = minute * 60.0
        if minute % 60 == 0:
            fs = pbs.compute(replace(tree, usage=usage.copy()))
            k = minute // 60
            np.testing.assert_allclose(got.usage[k], usage[[l5, l4, names.index("B3")]], rtol=1e-9)
            np.testing.assert_allclose(got.factor[k], fs.factor[[l5, l4, names.index("B3")]], rtol=1e-6)
        if 5 * HOUR <= now < 45 * HOUR:
            usage[path] += 4.0 * 60
        if (now + 60 - 10 * HOUR) % DAY == 0 and now + 60 >= 10 * HOUR:
            usage = np.maximum(usage * mult, 1.0)
    assert got.factor[44, 0] < got.factor[4, 0]  # L5 loses standing while it runs


def test_observed_rate_recovers_the_rates_that_made_the_usage(deep4) -> None:
    from tui.engine.projection import observed_rate

    tree, s = deep4.tree, deep4.settings
    rate = np.where(tree.is_user, np.arange(tree.size) % 5 * 10.0, 0.0)
    t = np.array([0.0, 2 * DAY])
    proj = project_usage(tree, [], [], [], [], t, s.decay_half_life_s, s.calc_period_s, rate=rate)
    got = observed_rate(tree.usage_raw, proj.at(1), tree.parent, 2 * DAY, s.decay_half_life_s, s.calc_period_s)
    np.testing.assert_allclose(got, rate, atol=1e-6)


@pytest.mark.parametrize("scenario", ["live", "deep4"])
def test_real_sandbox_decay_between_two_captures(scenario: str) -> None:
    # Two captures of one sandbox run, no job running in between: Slurm decayed every
    # association by d**dt between its last decay cycles (last_decay_cycle.txt; 72 or 73 s,
    # PriorityCalcPeriod=1 minute, half-life 7 days). The projection of the first capture by
    # that interval gives the second capture's UsageRaw (scontrol prints 2 decimals: both
    # roundings, 0.01 at most).
    from datetime import datetime as dt

    base = f"tests/fixtures/slurm/{scenario}"
    a = registry.make("folder", f"{base}/fair_tree").load()
    b = registry.make("folder", f"{base}/classic").load()

    def cycle(variant: str) -> float:
        text = open(f"{base}/{variant}/last_decay_cycle.txt").read().split()
        return dt.fromisoformat(f"{text[0]}T{text[1][:15]}+00:00").timestamp()

    gap = int(cycle("classic")) - int(cycle("fair_tree"))  # time_t: whole seconds
    assert gap in (72, 73)
    hl = a.settings.decay_half_life_s
    proj = project_usage(a.tree, [], [], [], [], [0.0, gap], hl, float(gap))
    assert list(b.tree.account) == list(a.tree.account) and list(b.tree.user) == list(a.tree.user)
    np.testing.assert_allclose(proj.at(1).astype(float), b.tree.usage_raw.astype(float), atol=0.0101, rtol=0)
    # ...and not the exact exponential 2**(-dt/HL), which is off by more than the rounding here.
    exact = a.tree.usage_raw.astype(float) * 2.0 ** (-gap / hl)
    assert np.max(np.abs(exact - b.tree.usage_raw.astype(float))) > 0.1


def test_real_sandbox_job_across_calc_periods() -> None:
    # tests/sandbox/record_decay.py on Slurm 22.05.8 with PriorityDecayHalfLife=1:00:00 and a
    # 1-minute PriorityCalcPeriod: pdu1 ran 2 CPUs (2e6 billing/s) for 230 s, pdu2 1 CPU for
    # 100 s and ended 1 s after a cycle. Seven cycles were recorded, 60 s apart, from the first
    # after pdu1 started. Both the cycle loop and the closed-form projection, started from zero
    # usage at the last cycle before the jobs, give every recorded UsageRaw to its 2 printed
    # decimals, through the running cycles, the end charge and the decay after.
    import json

    rec = json.loads(open("tests/fixtures/slurm/decay_1h/record.json").read())
    cycles = np.array([int(s["cycle_mtime"]) for s in rec["samples"]], dtype=float)  # time_t of each cycle
    assert list(np.diff(cycles)) == [60.0] * 6
    now = cycles[0] - 120  # a cycle before both jobs started
    hl = 3600.0
    jobs = {}
    for user, billing in (("pdu1", 2e6), ("pdu2", 1e6)):
        _, start, end, cpus, state = rec["sacct"][user].split("|")
        assert state == "COMPLETED" and float(cpus) * 1e6 == billing
        jobs[user] = (float(start), float(end), billing)
        seen = np.array([float(s["assoc_mgr"][f"pdecay/{user}"]) for s in rec["samples"]])
        loop = job_usage_over_cycles(np.concatenate([[now, now + 60], cycles]), float(start), float(end), billing,
                                     hl).astype(float)[2:]
        closed = charge_series(cycles - now, [float(start) - now], [float(end) - now], [billing], hl, 60.0)[0]
        np.testing.assert_allclose(loop, seen, atol=0.0051, rtol=0)
        np.testing.assert_allclose(closed, seen, atol=0.0051, rtol=0)
        # sshare's RawUsage is the truncated value.
        assert [int(s["sshare"][f"pdecay/{user}"]) for s in rec["samples"]] == [int(x) for x in np.floor(seen)]
    # The account and the root carry the sum; the tree projection says the same.
    tree = AssocTree.from_rows([(-1, False, "root", "", 1, 0.0), (0, False, "pdecay", "", 10, 0.0),
                                (1, True, "pdecay", "pdu1", 1, 0.0), (1, True, "pdecay", "pdu2", 1, 0.0)])
    proj = project_usage(tree, [2, 3], [jobs[u][0] - now for u in ("pdu1", "pdu2")],
                         [jobs[u][1] - now for u in ("pdu1", "pdu2")], [2e6, 1e6], cycles - now, hl, 60.0)
    seen_root = np.array([float(s["assoc_mgr"]["root/"]) for s in rec["samples"]])
    np.testing.assert_allclose(proj.of([0]).astype(float)[:, 0], seen_root, atol=0.011, rtol=0)


def test_jobs_charged_once_project_exactly_as_when_charged_with_the_others() -> None:
    """``precharge`` + ``then`` (the planner keeps the running jobs' charges per snapshot) gives the
    very arrays one call with every job gives: same charges, paths and usage, bit for bit."""
    from tui.engine.projection import precharge, project_usage

    snap = registry.make("demo", "slurm").load()
    tree = snap.tree
    rng = np.random.default_rng(5)
    users = np.flatnonzero(tree.is_user)
    rows = rng.choice(users, size=40)
    start = rng.uniform(-3600, 5 * 86400, size=40).clip(0)
    end = start + rng.uniform(600, 3 * 86400, size=40)
    bill = rng.uniform(1, 500, size=40)
    t = np.arange(0, 14 * 86400 + 1, 6 * 3600.0)
    hl, period = 3 * 86400, 300
    whole = project_usage(tree, rows, start, end, bill, t, hl, period)
    later = precharge(tree, rows[25:], start[25:], end[25:], bill[25:], t, hl, period)
    split = project_usage(tree, rows[:25], start[:25], end[:25], bill[:25], t, hl, period, then=later)
    assert np.array_equal(whole.charges, split.charges) and np.array_equal(whole.rows, split.rows)
    assert all(np.array_equal(a, b) for a, b in zip(whole.paths, split.paths, strict=True))
    watch = rows[:10]
    assert np.array_equal(whole.of(watch), split.of(watch))
    with pytest.raises(ValueError, match="other times"):
        project_usage(tree, [], [], [], [], t[:-1], hl, period, then=later)


def test_a_trace_of_the_running_jobs_gives_the_same_fairshare_bit_for_bit() -> None:
    """The planner keeps the LevelFS its source's running jobs give (``fair_tree_trace``); an edit's
    projection recomputes only the rows its own jobs reach. Its series equal those of the whole
    projection bit for bit, and its ranks a fresh Fair Tree's at every step; own jobs share rows
    with the running ones (same users). A trace that does not fit (other times, other shares)
    is ignored, not misused."""
    from dataclasses import replace

    from tui.engine.projection import precharge
    from tui.engine.rank_trace import fair_tree_trace

    snap = registry.make("demo", "slurm").load()
    tree = snap.tree
    rng = np.random.default_rng(11)
    users = np.flatnonzero(tree.is_user)
    rows = rng.choice(users, size=60)
    start = np.zeros(60)
    end = rng.uniform(600, 4 * DAY, size=60)
    bill = rng.uniform(1, 900, size=60)
    t = np.arange(0, 10 * DAY + 1, 6 * HOUR)
    hl, period = 2 * DAY, 300
    running = precharge(tree, rows, start, end, bill, t, hl, period)
    alone = project_usage(tree, [], [], [], [], t, hl, period, then=running)
    trace = fair_tree_trace(tree, alone, rank_every=2)
    own = [int(rows[0]), int(rows[1]), int(rng.choice(users))]  # two of them already running
    edit = project_usage(tree, own, [0.0, DAY, 2 * DAY], [3 * DAY, 2 * DAY, 5 * DAY], [400.0, 50.0, 2000.0], t,
                         hl, period, then=running)
    watch = own + [int(x) for x in rng.choice(users, 8, replace=False)] + [int(tree.parent[own[0]])]
    quick = project_fairshare(tree, edit, watch, rank_every=2, trace=trace)
    whole = project_fairshare(tree, edit, watch, rank_every=2)
    for name in ("usage", "fairshare", "level_fs", "rank", "ahead", "ranked"):
        assert np.array_equal(getattr(quick, name), getattr(whole, name), equal_nan=name == "fairshare"), name
    for k in np.flatnonzero(quick.ranked):
        now = AssocTree(tree.parent, tree.is_user, tree.account, tree.user, tree.shares_raw, edit.at(int(k)),
                        tree.sibling_order)
        assert list(quick.rank[k]) == list(compute(now).rank[watch]), k
    assert len({tuple(quick.rank[k]) for k in range(t.size)}) > 1  # the ranks do move
    # The trace without the edit (the planner's "before") is the projection of the running jobs alone.
    before = project_fairshare(tree, alone, watch, rank_every=2, trace=trace)
    assert np.array_equal(before.rank, project_fairshare(tree, alone, watch, rank_every=2).rank)
    # Other times, or other shares (a planner's [[shares]]): the trace does not fit and is not used.
    shares = tree.shares_raw.copy()
    shares[1:] = rng.permutation(shares[1:])
    other = replace(tree, shares_raw=shares)
    assert not np.array_equal(project_fairshare(other, edit, watch, rank_every=2).rank, whole.rank)
    for tr, pr in ((other, edit), (tree, project_usage(tree, own, [0.0] * 3, [DAY] * 3, [1.0] * 3, t[:-1], hl, period,
                                                       then=precharge(tree, rows, start, end, bill, t[:-1], hl,
                                                                      period)))):
        assert np.array_equal(project_fairshare(tr, pr, watch, rank_every=2, trace=trace).rank,
                              project_fairshare(tr, pr, watch, rank_every=2).rank)


def test_a_projection_without_jobs_still_ranks(deep4) -> None:
    """No job at all (a planner following pending jobs only): every usage decays alike, so the
    ranks are today's, held; not zeros because nothing moved."""
    tree, s = deep4.tree, deep4.settings
    proj = project_usage(tree, [], [], [], [], np.arange(0, 5) * DAY, s.decay_half_life_s, s.calc_period_s)
    users = [int(x) for x in np.flatnonzero(tree.is_user)]
    series = project_fairshare(tree, proj, users)
    now = compute(tree).rank[users]
    assert now.min() >= 1
    for k in range(5):
        assert list(series.rank[k]) == list(now)


def test_level_fs_in_blocks_of_steps_equals_one_step_at_a_time(deep4, monkeypatch) -> None:
    # rank_trace computes the reached rows' LevelFS for a block of steps at once; a block of one
    # step (the old loop) must give the same long doubles, ranks and users ahead.
    from tui.engine import rank_trace

    tree, s = deep4.tree, deep4.settings
    row = next(i for i in range(tree.size) if tree.is_user[i] and tree.user[i] == "d4")
    t = np.arange(0, 73) * HOUR
    proj = project_usage(tree, [row], [2 * HOUR], [32 * HOUR], [4e6], t, s.decay_half_life_s, s.calc_period_s)
    whole = project_fairshare(tree, proj, [row], "fair_tree", rank_every=1)
    monkeypatch.setattr(rank_trace, "_BLOCK", 1)
    stepwise = project_fairshare(tree, proj, [row], "fair_tree", rank_every=1)
    assert whole.level_fs is not None and stepwise.level_fs is not None
    assert np.array_equal(whole.level_fs, stepwise.level_fs)
    assert np.array_equal(whole.rank, stepwise.rank) and np.array_equal(whole.ahead, stepwise.ahead)
    assert len(set(whole.rank[:, 0].tolist())) > 1  # the job moves d4's rank
