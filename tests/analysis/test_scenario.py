"""What-if scenarios (issue 9): seed 000's Figure 3, the exact ODE against integration, TOML
round trips and errors, and a Slurm scenario on a real capture."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import numpy as np
import pytest

from tests.conftest import FIXTURES
from tui.analysis.planner import Scenario, ScenarioJob, load_scenario, parse_scenario, run_scenario, save_scenario
from tui.analysis.planner.run import recovery_time
from tui.analysis.planner.scenario import Model
from tui.engine.decay import decay_factor
from tui.engine.projection import job_usage_over_cycles
from tui.sources import registry
from tui.sources.errors import InputError

HOUR = 3600
DAY = 86400
WEEK = 7 * DAY
NOW = datetime(2026, 11, 22, tzinfo=timezone.utc)

# Seed 000, Figure 3: c(t) = 28 cores in weeks [0, 2], 56 in [2.5, 4), 84 in [4, 5), 28 in
# [5, 6.5]: job 1 (one node, 28 cores) weeks 0-2, job 2 (two nodes) weeks 2.5-5, job 3 (one
# node) weeks 4-6.5. u* = 10,000 core-hours, one-week half-life.
FIGURE3 = """
horizon = "70-0"
step = "1:00:00"
[model]
halving_usage = 10000
half_life = "7-0"
[[jobs]]
cpus = 28
walltime = "14-0"
[[jobs]]
nodes = 2
cpus = 28
start = "17-12:00:00"
walltime = "17-12:00:00"
[[jobs]]
cpus = 28
start = "28-0"
walltime = "17-12:00:00"
"""


def figure3_minimum() -> float:
    """The true minimum of Figure 3, by hand: u at the end of week 5, piece by piece (hours)."""
    lam = math.log(2) / 168.0
    u2 = 28 / lam * (1 - 2.0**-2)                    # 28 cores for two half-lives from 0
    u25 = u2 * 2.0**-0.5                             # half a week of decay alone
    u4 = 56 / lam + (u25 - 56 / lam) * 2.0**-1.5     # 56 cores for 1.5 weeks
    u5 = 84 / lam + (u4 - 84 / lam) * 2.0**-1       # 84 cores for one week
    return 2.0 ** (-u5 / 1e4)


@pytest.fixture
def figure3(tmp_path):
    path = tmp_path / "figure3.toml"
    path.write_text(FIGURE3)
    return run_scenario(load_scenario(path), None, NOW, str(path))


def test_figure3_true_minimum_is_0_349_at_the_end_of_week_5_not_0_85(figure3) -> None:
    f = figure3.series[0].fairshare
    k = int(np.argmin(f))
    assert figure3.t_hours[k] == 5 * 168                      # the end of week 5 (84 cores stop)
    assert figure3_minimum() == pytest.approx(0.348614523268, rel=1e-10)
    assert f[k] == pytest.approx(figure3_minimum(), rel=1e-12)
    assert figure3.series[0].raw_usage[k] == pytest.approx(15202.954215, rel=1e-9)  # core-hours
    # The paper says fairshare "never goes below 0.85"; with its own parameters even job 1
    # alone takes it to 2**(-0.5093) = 0.702 at week 2.
    assert f.min() < 0.85 and f[2 * 168] == pytest.approx(2.0 ** (-28 * 168 / math.log(2) * 0.75 / 1e4))
    # Job 3 running alone (28 cores) lets usage fall: its steady state c/lambda = 6,786 core-hours
    # is below the usage at week 5.
    u = figure3.series[0].raw_usage
    assert np.all(np.diff(u[5 * 168: int(6.5 * 168)]) < 0)


def test_figure3_answers(figure3) -> None:
    text = "\n".join(figure3.sentences())
    assert "44,688.0 core-hours" in text                      # 28*336 + 56*420 + 28*420
    assert "lowest 0.3486 on 2026-12-27 00:00" in text
    # Back to 0.5 after the minimum while job 3 still runs: u = -u* log2(0.5) = 10,000 core-hours.
    rec = figure3.recovery_h[0]
    assert 5 * 168 < rec < 6.5 * 168
    u = figure3.series[0].raw_usage
    k = int(np.searchsorted(figure3.t_hours, rec))
    assert u[k] <= 10_000 < u[k - 1]
    assert f"fairshare back to 0.5 on {figure3.date(rec):%Y-%m-%d}" in text


def test_exact_ode_agrees_with_fine_step_integration(figure3) -> None:
    # RK4 on du/dt = c(t) - lambda u with 0.05 h steps (the breaks fall on steps).
    lam = math.log(2) / 168.0
    breaks = [(0, 28.0), (336, 0.0), (420, 56.0), (672, 84.0), (840, 28.0), (1092, 0.0)]

    def c(t: float) -> float:
        return [r for b, r in breaks if b <= t + 1e-9][-1]

    h, u, t = 0.05, 0.0, 0.0
    exact = figure3.series[0].raw_usage
    worst = 0.0
    for hour in range(1, 70 * 24 + 1):
        for _ in range(20):
            rate = c(t)  # constant over each step (pieces start on step boundaries)
            k1 = rate - lam * u
            k2 = rate - lam * (u + h / 2 * k1)
            k3 = rate - lam * (u + h / 2 * k2)
            k4 = rate - lam * (u + h * k3)
            u += h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
            t += h
        worst = max(worst, abs(u - exact[hour]) / exact[hour])
    assert worst < 1e-9


def test_model_recovery_beyond_the_horizon_is_exact(tmp_path) -> None:
    # 28 cores for two weeks, a one-week horizon: back to 0.9 long after, in closed form.
    sc = Scenario(WEEK, HOUR, (ScenarioJob(cpus=28, walltime_s=2 * WEEK),), Model(1e4, WEEK), target=0.9)
    res = run_scenario(sc, None, NOW)
    lam = math.log(2) / 168
    u_end = 28 / lam * 0.75
    expect = 336 + 168 * math.log2(u_end / (-1e4 * math.log2(0.9)))
    assert res.recovery_h[0] == pytest.approx(expect, rel=1e-12)


def test_toml_round_trip(tmp_path) -> None:
    sc = parse_scenario({
        "horizon": "30-0", "step": "6:00:00", "target": 0.4, "others": "steady",
        "jobs": [{"user": "alice", "account": "chem", "partition": "gpu", "nodes": 2, "cpus": 16, "gpus": 4,
                  "mem": "128G", "start": "2-0", "walltime": "12:00:00", "count": 20, "every": "7-0",
                  "repeat": 2},
                 {"user": "bob", "tres": "cpu=8,mem=16G,gres/gpu=1", "billing": 12.5}],
        "shares": [{"account": "chem", "user": "alice", "raw_shares": 4}],
        "settings": {"half_life": "3-0", "algorithm": "classic", "dampening": 2},
    })
    assert sc.jobs[0].mem_mb == 128 * 1024 and sc.jobs[0].totals()["gres/gpu"] == 8
    assert sc.jobs[1].tres == {"cpu": 8.0, "mem": 16384.0, "gres/gpu": 1.0, "node": 1.0}
    assert [r for r in sc.jobs[0].runs()] == [(2 * DAY, 2 * DAY + 12 * HOUR), (9 * DAY, 9 * DAY + 12 * HOUR)]
    path = tmp_path / "s.toml"
    save_scenario(path, sc)
    assert load_scenario(path) == sc
    assert sc.times_s[-1] == 30 * DAY and len(sc.times_s) == 121


@pytest.mark.parametrize(("data", "key", "words"), [
    ({"step": "1:00:00"}, "horizon", "required"),
    ({"horizon": "abc"}, "horizon", "not a Slurm time"),
    ({"horizon": "1-0", "jobs": [{"walltime": "x"}]}, "jobs[0].walltime", "not a Slurm time"),
    ({"horizon": "1-0", "jobs": [{"walltim": "1:00:00"}]}, "jobs[0].walltim", "did you mean 'walltime'"),
    ({"horizon": "1-0", "jobs": [{"cpus": -1}]}, "jobs[0].cpus", "at least 0"),
    ({"horizon": "1-0", "jobs": [{"count": 1.5}]}, "jobs[0].count", "whole number"),
    ({"horizon": "1-0", "jobs": [{"mem": "lots"}]}, "jobs[0].mem", "memory per node"),
    ({"horizon": "1-0", "jobs": [{"repeat": 3}]}, "jobs[0].every", "needed with repeat"),
    ({"horizon": "1-0", "jobs": [{"tres": "cpu"}]}, "jobs[0].tres", "bad TRES entry"),
    ({"horizon": "1-0", "model": {"half_life": "7-0"}}, "model.halving_usage", "required"),
    ({"horizon": "1-0", "others": "grow"}, "others", "\"decay\", \"steady\" or \"observed\""),
    ({"horizon": "1-0", "settings": {"algorithm": "fifo"}}, "settings.algorithm", "fair_tree"),
])
def test_errors_name_the_key(data, key, words) -> None:
    with pytest.raises(InputError) as exc:
        parse_scenario(data, "plan.toml")
    assert str(exc.value).startswith(f"plan.toml:{key}: ")
    assert words in str(exc.value)


def test_no_source_and_no_model() -> None:
    with pytest.raises(InputError, match="no source and no \\[model\\]"):
        run_scenario(Scenario(DAY, HOUR), None, NOW, "plan.toml")


@pytest.fixture(scope="module")
def deep4():
    return registry.make("folder", str(FIXTURES / "slurm" / "deep4" / "fair_tree")).load()


def test_slurm_scenario_on_a_real_capture(deep4) -> None:
    # d4 runs 20 copies of a 2-CPU job on the sandbox's partition (CPU=1000000, given as billing)
    # for 6 hours from tomorrow; usage in sshare's units (billing TRES-seconds).
    sc = parse_scenario({"horizon": "3-0", "step": "1:00:00", "jobs": [
        {"user": "d4", "billing": 2e6, "cpus": 2, "start": "1-0", "walltime": "6:00:00", "count": 20}]})
    res = run_scenario(sc, deep4, NOW)
    # The capture has no partition listing: its slurm.conf gives burn's weights (1,000,000 a CPU).
    burn = parse_scenario({"horizon": "1-0", "jobs": [{"user": "d4", "cpus": 2, "partition": "burn"}]})
    assert run_scenario(burn, deep4, NOW).costs[0].billing_per_s == 2e6
    unpriced = parse_scenario({"horizon": "1-0", "jobs": [{"user": "d4", "cpus": 2}]})
    no_partitions = replace(deep4, partitions=())
    assert "jobs[0] billed their CPU count" in "\n".join(run_scenario(unpriced, no_partitions, NOW).sentences())
    assert res.costs[0].billing_per_s == 2e6 and res.total_billing_seconds == 2e6 * 20 * 6 * HOUR
    s = res.series[0]
    tree, st = deep4.tree, deep4.settings
    row = s.row
    assert (s.account, s.user) == ("fpga", "d4") and s.raw_usage[0] == float(tree.usage_raw[row])
    job = job_usage_over_cycles(np.arange(0, 72 * 60 + 1) * 60.0, DAY, DAY + 6 * HOUR, 40e6,
                                st.decay_half_life_s).astype(float)[::60]
    expect = float(tree.usage_raw[row]) * np.asarray(decay_factor(st.decay_half_life_s, res.t_hours * HOUR)) + job
    np.testing.assert_allclose(s.raw_usage, expect, rtol=1e-12)
    assert s.rank[0] > s.rank[30] and res.users == tree.user_count


def test_recovery_needs_others_to_keep_running(deep4) -> None:
    # d2 (asic, fairshare 0.5, rank 12 of 24) runs 4 hours at 1000 billing/s from tomorrow.
    # If everyone only decays, every ratio is frozen once the job ends: d2 stays at rank 4.
    # If everyone keeps their usage (others = "steady"), d2's extra usage decays away.
    jobs = [{"user": "d2", "billing": 1000, "start": "1-0", "walltime": "4:00:00"}]
    decay = run_scenario(parse_scenario({"horizon": "30-0", "step": "6:00:00", "jobs": jobs}), deep4, NOW)
    steady = run_scenario(parse_scenario({"horizon": "30-0", "step": "6:00:00", "jobs": jobs, "others": "steady"}),
                          deep4, NOW)
    d, s = decay.series[0], steady.series[0]
    assert (d.rank[0], d.rank[5], d.rank[-1]) == (12, 4, 4) and d.fairshare[0] == 0.5
    assert decay.recovery_h == (None,)
    assert "asic/d2: fairshare not back to 0.5 by 2026-12-22" in "\n".join(decay.sentences())
    assert (s.rank[5], s.rank[-1]) == (4, 12)
    assert steady.recovery_h == (96.0,)
    assert "asic/d2: fairshare back to 0.5 on 2026-11-26" in steady.sentences()


def test_unknown_user_and_partition_name_the_job(deep4) -> None:
    with pytest.raises(InputError, match=r"^p.toml:jobs\[0\].user: no association of user 'nobody'"):
        run_scenario(parse_scenario({"horizon": "1-0", "jobs": [{"user": "nobody"}]}), deep4, NOW, "p.toml")
    demo = registry.make("demo", "slurm").load()
    with pytest.raises(InputError, match=r"^p.toml:jobs\[0\].partition: unknown partition 'gpux' \(known: "):
        run_scenario(parse_scenario({"horizon": "1-0", "jobs": [{"user": "llim", "partition": "gpux"}]}), demo, NOW,
                     "p.toml")


def test_billing_from_the_partition_weights() -> None:
    # Demo partition sapphire: CPU=0.6, Mem=0.0663 per GB (per MB here): 112 CPUs + 500 GB.
    demo = registry.make("demo", "slurm").load()
    sc = parse_scenario({"horizon": "1-0", "jobs": [{"user": "llim", "partition": "sapphire", "cpus": 112,
                                                    "mem": "500G", "walltime": "12:00:00", "count": 20}]})
    res = run_scenario(sc, demo, NOW)
    w = {p.name: p.billing_weights for p in demo.partitions}["sapphire"]
    per_s = 112 * w["cpu"] + 500 * 1024 * w["mem"]
    assert res.costs[0].billing_per_s == pytest.approx(per_s)
    assert res.total_billing_seconds == pytest.approx(per_s * 20 * 12 * HOUR)


def test_with_more_raw_shares_the_same_campaign_costs_less(deep4) -> None:
    base = {"horizon": "2-0", "step": "1:00:00", "settings": {"algorithm": "classic"},
            "jobs": [{"user": "d2", "billing": 1000, "walltime": "1-0"}]}
    one = run_scenario(parse_scenario(base), deep4, NOW).series[0].fairshare
    more = run_scenario(parse_scenario({**base, "shares": [{"account": "asic", "user": "d2", "raw_shares": 8}]}),
                        deep4, NOW).series[0].fairshare
    assert np.all(more > one)


def test_recovery_time_is_after_the_lowest_point() -> None:
    t = np.arange(6.0)
    assert recovery_time(t, np.array([0.6, 0.55, 0.3, 0.45, 0.52, 0.7]), 0.5) == 4.0
    assert recovery_time(t, np.array([0.6, 0.55, 0.53, 0.52, 0.51, 0.7]), 0.5) is None
    assert recovery_time(t, np.array([0.6, 0.4, 0.3, 0.3, 0.3, 0.3]), 0.5) is None


def test_running_jobs_keep_charging_until_their_time_limit() -> None:
    # The demo's running job of epark (64 CPUs on icelake, 7-day limit, started 2026-11-19
    # 13:51:54) charges epark until 2026-11-26 13:51:54; with running = false epark only decays.
    demo = registry.make("demo", "slurm").load()
    job = next(j for j in demo.jobs if j.state == "RUNNING" and j.user == "epark")
    now = job.start_time + timedelta(days=3)
    base = {"horizon": "5-0", "step": "1:00:00", "jobs": [{"user": "epark", "account": job.account, "billing": 0.0}]}
    on = run_scenario(parse_scenario(base), demo, now).series[0].raw_usage
    off = run_scenario(parse_scenario({**base, "running": False}), demo, now).series[0].raw_usage
    assert on[0] == off[0]
    hl = demo.settings.decay_half_life_s
    np.testing.assert_allclose(off / off[0], np.asarray(decay_factor(hl, np.arange(121) * 3600.0)), rtol=1e-12)
    assert np.all(on[1:] > off[1:])
    # Charged until the limit (4 days after "now"), then decaying like everything else.
    grow = np.diff(on - off)
    assert np.all(grow[:96] > 0) and np.all(grow[97:] < 0)


def test_pbs_scenario() -> None:
    from tui.model import Snapshot
    from tui.sources.pbs import read_pbs

    tree = read_pbs(str(FIXTURES / "pbs" / "seed002_resource_group"), str(FIXTURES / "pbs" / "seed002_usage.txt"))
    snap = Snapshot(cluster="pbs", source="seed002", pbs=tree)
    sc = parse_scenario({"horizon": "3-0", "step": "1:00:00", "jobs": [{"user": "L5", "cpus": 4, "walltime": "1-0"}],
                         "settings": {"pbs_decay_factor": 0.5, "pbs_decay_time": "1-0"}})
    res = run_scenario(sc, snap, NOW)
    [s] = res.series
    assert (s.account, s.user) == ("B3", "L5") and res.law == "pbs"
    assert s.raw_usage[0] == 100 and s.raw_usage[24] == pytest.approx((100 + 4 * 86400) * 0.5)
    assert s.fairshare[24] < s.fairshare[0] and s.tree_usage is not None
    assert "campaign: 1 job runs, 96.0 cput-hours" in res.sentences()[0]
    with pytest.raises(InputError, match=r"jobs\[0\].user: no PBS entity 'zz'"):
        run_scenario(parse_scenario({"horizon": "1-0", "jobs": [{"user": "zz"}]}), snap, NOW)


def test_pbs_scenario_takes_the_decay_from_the_captured_sched_config() -> None:
    """Unsaid in the scenario, the decay is the site's (sched_config, as captured), not 0.5 a day."""
    import dataclasses

    from tui.model import Snapshot
    from tui.sources.pbs import read_pbs

    tree = read_pbs(str(FIXTURES / "pbs" / "seed002_resource_group"), str(FIXTURES / "pbs" / "seed002_usage.txt"))
    site = dataclasses.replace(tree, decay_factor=0.5, decay_time_s=6 * 3600)
    job = {"user": "L5", "cpus": 2, "walltime": "1:00:00"}
    sc = parse_scenario({"horizon": "1-0", "step": "1:00:00", "jobs": [job]})
    [d] = run_scenario(sc, Snapshot(cluster="pbs", source="seed002", pbs=tree), NOW).series
    assert d.raw_usage[24] == pytest.approx((100 + 2 * 3600) * 0.5, rel=1e-12)  # OpenPBS's defaults: once, x0.5
    [s] = run_scenario(sc, Snapshot(cluster="pbs", source="seed002", pbs=site), NOW).series
    assert s.raw_usage[24] == pytest.approx((100 + 2 * 3600) * 0.5 ** 4, rel=1e-12)  # every 6 h: four times
    said = parse_scenario({"horizon": "1-0", "step": "1:00:00", "jobs": [job],
                           "settings": {"pbs_decay_factor": 0.5, "pbs_decay_time": "1-0"}})
    [o] = run_scenario(said, Snapshot(cluster="pbs", source="seed002", pbs=site), NOW).series
    assert o.raw_usage[24] == d.raw_usage[24]  # the scenario's own settings win


def test_pending_job_priority_and_when_it_passes_another() -> None:
    # Demo jobs: 61004321 (michellel) is behind 61000852 (ahmedl) now; ahmedl's age caps at
    # PriorityMaxAge first, so michellel's job passes it. With no campaign and every usage
    # decaying alike, the fairshare parts hold and the crossing is where the AGE lines say.
    demo = registry.make("demo", "slurm").load()
    st = demo.settings
    sc = parse_scenario({"horizon": "7-0", "step": "1:00:00", "running": False, "pending": ["61004321", "61000852"]})
    res = run_scenario(sc, demo, NOW)
    a, b = res.pending
    jobs = {j.job_id: j for j in demo.jobs}
    t = res.t_hours * HOUR
    for p in (a, b):
        f = jobs[p.job_id].factors
        assert np.all(p.fairshare == p.fairshare[0])  # the engine's factor, held
        assert st.weight_fairshare * p.fairshare[0] == pytest.approx(f["FAIRSHARE"], abs=1)  # = sprio's part
        expect = st.weight_fairshare * p.fairshare[0] + st.weight_age * np.minimum(
            1.0, f["AGE"] / st.weight_age + t / st.max_age_s)
        np.testing.assert_allclose(p.priority, expect, rtol=1e-12)
        assert p.priority[0] == pytest.approx(jobs[p.job_id].priority, abs=2)  # sprio's own total
    k = int(np.argmax(a.priority > b.priority))
    assert a.priority[0] < b.priority[0] and k > 0
    assert f"job 61004321 (michellel): priority {a.priority[0]:,.0f} now vs job 61000852 (ahmedl) " \
           f"{b.priority[0]:,.0f}; passes it on {res.date(res.t_hours[k]):%Y-%m-%d %H:%M}" in res.sentences()
    with pytest.raises(InputError, match=r"pending\[0\]: no pending job '1'"):
        run_scenario(parse_scenario({"horizon": "1-0", "pending": [1]}), demo, NOW)


@pytest.mark.parametrize(("job", "key", "words"), [
    ({"partition": "sapphire", "nodes": 200}, "nodes", "200 nodes in all; partition 'sapphire' has 192"),
    ({"partition": "test", "nodes": 8, "cpus": 200}, "cpus", "1,600 CPUs in all; partition 'test' has 896"),
    ({"partition": "sapphire", "gpus": 1}, "gpus", "partition 'sapphire' has no GPUs"),
    ({"partition": "gpu_test", "nodes": 4, "gpus": 5}, "gpus", "20 GPUs in all; partition 'gpu_test' has 16"),
])
def test_a_job_larger_than_its_partition_is_refused(job, key, words) -> None:
    demo = registry.make("demo", "slurm").load()
    sc = parse_scenario({"horizon": "1-0", "jobs": [{"user": "llim", **job}]})
    with pytest.raises(InputError, match=rf"^p.toml:jobs\[0\].{key}: {words}"):
        run_scenario(sc, demo, NOW, "p.toml")


def test_more_per_node_than_the_nodes_have_is_refused() -> None:
    # 500 CPUs on one sapphire node: the demo's sapphire nodes have 112 cores (and 990 GB) each.
    demo = registry.make("demo", "slurm").load()
    sc = parse_scenario({"horizon": "1-0", "jobs": [{"user": "llim", "partition": "sapphire", "cpus": 500}]})
    with pytest.raises(InputError, match=r"p.toml:jobs\[0\].cpus.*500 CPUs per node; the largest node in sapphire "
                                         r"has 112"):
        run_scenario(sc, demo, NOW, "p.toml")
