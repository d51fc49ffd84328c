"""What-if planning beyond the projection: node checks, billing, balance, a planned job's priority,
"if we stop", raw shares now, and the admin's control numbers. Every expected number is derived by
hand in the comment next to it."""

from __future__ import annotations

import math
from datetime import datetime, timedelta, timezone
from pathlib import Path

import numpy as np
import pytest

from tui.analysis.planner import format_whatif_csv, format_whatif_table, parse_scenario, run_scenario
from tui.analysis.planner.answers import admin_answer
from tui.analysis.planner.job_form import parse_job_form
from tui.analysis.planner.node_check import check_fit
from tui.analysis.planner.output import whatif_dict
from tui.model import (
    UNLIMITED,
    Allocation,
    AssocTree,
    Budget,
    Job,
    NodeType,
    Partition,
    PrioritySettings,
    Snapshot,
)
from tui.sources import registry, slurm_text
from tui.sources.errors import InputError

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=timezone.utc)
LIVE = Path(__file__).parents[1] / "fixtures" / "slurm" / "live" / "fair_tree"


@pytest.fixture(scope="module")
def demo() -> Snapshot:
    return registry.make("demo", "slurm").load()


# --------------------------------------------------------------------------------------------
# Nodes
# --------------------------------------------------------------------------------------------


def test_demo_partitions_know_their_nodes(demo: Snapshot) -> None:
    parts = {p.name: p for p in demo.partitions}
    assert parts["sapphire"].node_types == (NodeType(112, 990 * 1024.0, 0, "", 192),)
    assert parts["sapphire"].max_time_s == 3 * 86400
    assert {t.gpu_type for t in parts["seas_gpu"].node_types} == {"v100", "a40"}


@pytest.mark.parametrize(("shape", "key", "message"), [
    # the example: 500 CPUs per node on 112-core nodes
    (dict(part="sapphire", nodes=1, cpus=500), "cpus", "500 CPUs per node; the largest node in sapphire has 112"),
    (dict(part="sapphire", nodes=1, cpus=8, mem_mb=1000 * 1024), "mem",
     "1,000 GB of memory per node; the largest node in sapphire has 990"),
    (dict(part="gpu", nodes=1, cpus=8, gpus=8), "gpus", "8 GPUs per node; the largest node in gpu has 4"),
    (dict(part="sapphire", nodes=1, cpus=8, gpus=1), "gpus", "1 GPUs per node; sapphire has no GPUs"),
    (dict(part="seas_gpu", nodes=1, cpus=8, gpus=2, gpu_type="a100"), "gpus",
     "no a100 GPUs in seas_gpu (it has a40, v100)"),
    # 20 V100 nodes and 20 A40 nodes: 21 V100 nodes do not exist
    (dict(part="seas_gpu", nodes=21, cpus=8, gpus=2, gpu_type="v100"), "nodes",
     "21 nodes of this size; seas_gpu has 20 that fit"),
    (dict(part="sapphire", nodes=1, cpus=8, walltime_s=4 * 86400), "walltime",
     "4-00:00:00 is over sapphire's MaxTime of 3-00:00:00"),
])
def test_a_job_its_nodes_cannot_run_is_refused(demo: Snapshot, shape: dict, key: str, message: str) -> None:
    part = {p.name: p for p in demo.partitions}[shape.pop("part")]
    fit = check_fit(part, **shape)
    assert fit.ok is False and fit.errors == {key: message}


def test_a_fitting_job_fits_and_counts_the_nodes(demo: Snapshot) -> None:
    part = {p.name: p for p in demo.partitions}["seas_gpu"]
    fit = check_fit(part, 4, 48, 384 * 1024, 4, "", 7 * 86400)  # a whole node of either kind, MaxTime exactly
    assert fit.ok is True and fit.fitting_nodes == 40 and fit.unknown == ()


def test_without_node_data_the_check_says_unknown() -> None:
    part = Partition("batch", total_cpus=64, total_nodes=2)
    fit = check_fit(part, 1, 500, walltime_s=3600)
    assert fit.ok is None and fit.errors == {}
    assert fit.unknown == ("MaxNodes of batch unknown (not in the source)",
                           "MaxTime of batch unknown (not in the source)",
                           "node sizes of batch unknown (the source has neither scontrol show node nor slurm.conf "
                           "NodeName lines): CPUs, memory and GPUs per node not checked")


def test_slurm_conf_nodes_of_the_real_capture() -> None:
    # slurm.conf: NodeName=sandbox-node CPUs=8 RealMemory=1024; PartitionName=debug Nodes=ALL MaxTime=INFINITE
    parts = {p.name: p for p in slurm_text.parse_slurm_conf_partitions((LIVE / "slurm.conf").read_bytes())}
    debug = parts["debug"]
    assert debug.node_types == (NodeType(8, 1024.0, 0, "", 1),)
    assert debug.max_time_s == UNLIMITED and debug.max_nodes == UNLIMITED and debug.total_cpus == 8
    assert check_fit(debug, 1, 9).errors == {"cpus": "9 CPUs per node; the largest node in debug has 8"}
    assert check_fit(debug, 2, 1).errors == {"nodes": "2 nodes of this size; debug has 1 that fit"}


def test_scontrol_show_node_and_partition_limits() -> None:
    nodes = slurm_text.parse_nodes(
        "NodeName=g01 Arch=x86_64 CoresPerSocket=32\n   CPUAlloc=0 CPUTot=64 CPULoad=0.01\n"
        "   Gres=gpu:a100:4(S:0-1)\n   RealMemory=512000 AllocMem=0 FreeMem=500000\n"
        "NodeName=g02 Arch=x86_64 CoresPerSocket=32\n   CPUTot=64 Gres=gpu:a100:4(S:0-1) RealMemory=512000\n"
        "NodeName=c01 CPUTot=128 Gres=(null) RealMemory=256000\n")
    assert nodes["g01"] == NodeType(64, 512000.0, 4, "a100") and nodes["c01"] == NodeType(128, 256000.0, 0, "")
    parts = slurm_text.parse_partitions(
        "PartitionName=gpu\n   MaxNodes=1 MaxTime=2-00:00:00 Nodes=g0[1-2]\n   TotalCPUs=128 TotalNodes=2\n"
        "PartitionName=cpu\n   MaxNodes=UNLIMITED MaxTime=UNLIMITED Nodes=c01,x99\n   TotalCPUs=128 TotalNodes=2\n")
    gpu, cpu = slurm_text.attach_node_types(parts, nodes)
    assert gpu.node_types == (NodeType(64, 512000.0, 4, "a100", 2),) and gpu.max_nodes == 1
    assert cpu.node_types == () and cpu.max_time_s == UNLIMITED  # x99 unknown: no partial judgement
    assert check_fit(gpu, 2, 8, gpus=1).errors == {"nodes": "2 nodes; gpu's MaxNodes is 1"}


def test_the_form_refuses_500_cpus_on_a_112_core_node(demo: Snapshot) -> None:
    parts = {p.name: p for p in demo.partitions}
    req, errors = parse_job_form({"partition": "sapphire", "nodes": "1", "cpus": "500", "mem_gb": "4",
                                  "walltime": "1:00:00"}, parts)
    assert req is None and errors == {"cpus": "500 CPUs per node; the largest node in sapphire has 112"}
    req, errors = parse_job_form({"partition": "sapphire", "nodes": "1", "cpus": "112", "mem_gb": "4",
                                  "walltime": "1:00:00"}, parts)
    assert errors == {} and req is not None and req.fit(parts).ok is True


def test_a_scenario_names_what_it_could_not_check() -> None:
    snap = _snapshot(partitions=(Partition("cpu", total_cpus=64, total_nodes=4),))
    sc = parse_scenario({"horizon": "1:00:00", "jobs": [{"user": "alice", "partition": "cpu", "cpus": 16}]})
    text = "\n".join(run_scenario(sc, snap, NOW, "p.toml").sentences())
    assert "jobs[0]: node sizes of cpu unknown" in text and "jobs[0]: MaxTime of cpu unknown" in text


# --------------------------------------------------------------------------------------------
# Billing
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(("flags", "expected"), [
    # 16 CPUs x 1 + 128 GB x 0.25/GB + 4 GPUs x 10 = 16 + 32 + 40
    (frozenset(), 88.0),
    # MAX_TRES: the largest of cpu 16, mem 32, gres/gpu 40
    (frozenset({"MAX_TRES"}), 40.0),
])
def test_billing_from_tres_billing_weights(flags: frozenset[str], expected: float) -> None:
    part = Partition("gpu", billing_weights=slurm_text.parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=10"),
                     node_types=(NodeType(64, 512 * 1024.0, 4, "a100", 2),), max_time_s=UNLIMITED, max_nodes=UNLIMITED)
    snap = _snapshot(partitions=(part,), settings=PrioritySettings(algorithm="classic", flags=flags,
                                                                           decay_half_life_s=0))
    sc = parse_scenario({"horizon": "2:00:00", "jobs": [{"user": "alice", "partition": "gpu", "cpus": 16,
                                                         "mem": "128G", "gpus": 4, "walltime": "1:00:00"}]})
    res = run_scenario(sc, snap, NOW)
    assert res.costs[0].billing_per_s == expected and res.costs[0].su == expected  # one hour
    # every billing-second lands in RawUsage (hl 0: no decay)
    assert res.series[0].raw_usage[-1] == pytest.approx(1000.0 + expected * 3600)


# --------------------------------------------------------------------------------------------
# Balance
# --------------------------------------------------------------------------------------------


def _snapshot(partitions: tuple[Partition, ...] = (), settings: PrioritySettings | None = None,
              allocations: tuple[Allocation, ...] = (), budgets: tuple[Budget, ...] = (),
              jobs: tuple[Job, ...] = (), alice: float = 1000.0, bob: float = 1000.0) -> Snapshot:
    """root -> lab (1 share) -> alice, root -> other (1 share) -> bob."""
    tree = AssocTree.from_rows([(-1, False, "root", "", 1, alice + bob), (0, False, "lab", "", 1, alice),
                                (1, True, "lab", "alice", 1, alice), (0, False, "other", "", 1, bob),
                                (3, True, "other", "bob", 1, bob)])
    st = settings or PrioritySettings(algorithm="classic", decay_half_life_s=0)
    return Snapshot("t", "test", NOW, tree, st, partitions, jobs, allocations, budgets)


def test_balance_pre_debits_debits_and_refuses() -> None:
    # 100 SU granted, 40 used, 10 held: 50 SU free. A copy bills 10/s: pre-debit 10 x 3600 s = 600 min
    # = 10 SU; it runs 30 min and is debited 300 min = 5 SU.
    # t=0: 3 start (50 - 30 = 20); 0.5 h: 3 end (50 - 15 = 35); 1 h: 3 start (5); 1.5 h: end (20);
    # 2 h: 2 start (0), the third is refused; 2.5 h: 2 end (10).
    alloc = Allocation("7", "lab", 100.0, 40.0, 10.0, NOW - timedelta(days=10), NOW + timedelta(days=10))
    snap = _snapshot(allocations=(alloc,))
    sc = parse_scenario({"horizon": "3:00:00", "step": "0:30:00", "jobs": [
        {"user": "alice", "billing": 10.0, "walltime": "1:00:00", "runtime": "0:30:00", "count": 3,
         "every": "1:00:00", "repeat": 3}]})
    res = run_scenario(sc, snap, NOW)
    b = res.series[0].balance
    assert b is not None and b.account.label == "allocation 7 of lab"
    assert b.balance.tolist() == pytest.approx([20, 35, 5, 20, 0, 10, 10])
    assert b.held.tolist() == pytest.approx([30, 0, 30, 0, 20, 0, 0])
    assert b.refused == ((0, 2.0),) and b.runs_out_h == 2.0
    # the refused copy does not run: 8 copies x 10/s x 1800 s of usage, not 9
    assert res.series[0].raw_usage[-1] == pytest.approx(1000.0 + 8 * 10 * 1800)
    text = "\n".join(res.sentences())
    assert "lab/alice: allocation 7 of lab: 20.0 SU free now" in text
    assert "refuses jobs[0] on 2026-06-01 14:00 (its pre-debit exceeds the balance)" in text
    assert "1 job runs refused by the allocation are left out of the usage" in text
    d = whatif_dict(res)["series"][0]
    assert d["balance"] == pytest.approx([20, 35, 5, 20, 0, 10, 10]) and d["balance_source"] == "allocation 7 of lab"
    assert d["balance_refused"] == [{"job": 0, "hours": 2.0}]
    assert format_whatif_csv(res).splitlines()[0].endswith(",balance,priority")
    assert "balance SU" in format_whatif_table(res)


def test_ledger_rounds_seconds_up_to_minutes() -> None:
    # 0.51/s x 100 s = 51 s -> 1 minute held and debited (seconds round up, seed 004)
    alloc = Allocation("7", "lab", 1.0, 0.0, 0.0)
    sc = parse_scenario({"horizon": "0:10:00", "step": "0:05:00",
                         "jobs": [{"user": "alice", "billing": 0.51, "walltime": "0:01:40"}]})
    b = run_scenario(sc, _snapshot(allocations=(alloc,)), NOW).series[0].balance
    assert b is not None and b.balance.tolist() == pytest.approx([59 / 60, 59 / 60, 59 / 60])


def test_slurm_budget_holds_time_limit_minutes_and_its_usage_decays() -> None:
    # GrpTRESMins billing=1000, used 400, running jobs commit 100: 500 minutes free. A copy of 1.9/s
    # for 3 h holds (uint64) 1 x 180 = 180 min: two start (140 left), the third is refused.
    budget = Budget("lab", "", "billing", 1000, 400, 100)
    snap = _snapshot(budgets=(budget,))
    sc = parse_scenario({"horizon": "4:00:00", "step": "1:00:00",
                         "jobs": [{"user": "alice", "billing": 1.9, "walltime": "3:00:00", "count": 3}]})
    b = run_scenario(sc, snap, NOW).series[0].balance
    assert b is not None and b.account.label == "GrpTRESMins billing of lab"
    assert b.refused == ((0, 0.0),)
    # no decay (half-life 0): after 3 h the holds are gone and 2 x 1.9 x 180 = 684 min were used
    assert b.balance.tolist() == pytest.approx([140 / 60] * 3 + [(500 - 684) / 60] * 2)


def test_no_balance_is_said_not_guessed() -> None:
    sc = parse_scenario({"horizon": "1:00:00", "jobs": [{"user": "alice", "billing": 1.0}]})
    res = run_scenario(sc, _snapshot(), NOW)
    assert res.series[0].balance is None
    assert whatif_dict(res)["series"][0]["balance_note"] == \
        "balance unknown: the source has no allocations and no GrpTRESMins budgets"
    limit_only = _snapshot(budgets=(Budget("lab", "", "billing", 1000, None),))
    assert "the source prints the GrpTRESMins limit but not the usage" in \
        run_scenario(sc, limit_only, NOW).series[0].balance_note


# --------------------------------------------------------------------------------------------
# Priority
# --------------------------------------------------------------------------------------------


def test_planned_priority_parts_and_when_it_passes_a_pending_job() -> None:
    # Classic, alice's usage 0: F = 1 -> FAIRSHARE 10,000. bob (usage 100 of 100, shares 1/2):
    # F = 2**(-1/0.5) = 0.25 -> 2,500. Planned job (no charge): PARTITION 500 x 1/2 = 250, QOS 2,000 x
    # 0.5 = 1,000, TRES 100 x 16/64 = 25, SITE 7; AGE 1,000 x t/1 day. Bob's pending job: AGE full
    # (1,000), FAIRSHARE 2,500, QOS 8,000 = 11,500. Alice: 11,282 + 1,000 t/day > 11,500 from
    # t > 0.218 day = 5.23 h: first hourly step 6 h.
    st = PrioritySettings(algorithm="classic", decay_half_life_s=0, max_age_s=86400, weight_age=1000,
                          weight_fairshare=10_000, weight_partition=500, weight_qos=2000, weight_tres={"cpu": 100.0})
    parts = (Partition("cpu", priority_job_factor=1, tres_totals={"cpu": 64.0}),
             Partition("hi", priority_job_factor=2))
    pending = Job("99", "bob", "other", "hi", "PENDING", {"cpu": 1.0},
                  factors={"AGE": 1000.0, "FAIRSHARE": 2500.0, "QOS": 8000.0})
    snap = _snapshot(parts, st, jobs=(pending,), alice=0.0, bob=100.0)
    sc = parse_scenario({"horizon": "12:00:00", "step": "1:00:00", "pending": ["99"], "jobs": [
        {"user": "alice", "partition": "cpu", "cpus": 16, "billing": 0.0, "qos_factor": 0.5, "site": 7,
         "walltime": "1:00:00"}]})
    res = run_scenario(sc, snap, NOW)
    p = res.planned[0]
    assert (p.partition, p.qos, p.tres, p.site, p.jobsize) == (250.0, 1000.0, 25.0, 7.0, 0.0)
    assert p.fairshare.tolist() == pytest.approx([10_000.0] * 13)
    assert p.priority.tolist() == pytest.approx([11_282 + 1000 * min(h / 24, 1) for h in range(13)])
    assert res.pending[0].priority.tolist() == pytest.approx([11_500.0] * 13)
    text = "\n".join(res.sentences())
    assert "job 0 (alice) vs pending job 99 (bob): passes it on 2026-06-01 18:00" in text
    d = whatif_dict(res)
    assert d["series"][0]["priority_parts"]["QOS"] == 1000.0 and d["planned"][0]["submit_hours"] == 0.0


def test_planned_priority_says_which_parts_it_cannot_know() -> None:
    st = PrioritySettings(algorithm="classic", decay_half_life_s=0, weight_fairshare=1000, weight_qos=10,
                          weight_assoc=5, weight_jobsize=3)
    sc = parse_scenario({"horizon": "1:00:00", "jobs": [{"user": "alice", "billing": 0.0, "start": "0:30:00"}]})
    p = run_scenario(sc, _snapshot(settings=st), NOW).planned[0]
    assert math.isnan(p.priority[0])  # not submitted before its start offset
    assert [n.split(":")[0] for n in p.notes] == ["JOBSIZE left out", "QOS left out", "ASSOC left out"]


# --------------------------------------------------------------------------------------------
# The answers
# --------------------------------------------------------------------------------------------


def test_if_we_stop_fairshare_is_back_when_our_usage_has_decayed_to_the_others() -> None:
    # Classic, alice 3,000 and bob 1,000, each half the shares: F = 2**(-2 x 3/4) = 0.3536. Alice stops,
    # bob keeps his usage (others = "steady"): F = 0.5 when alice's usage is down to bob's, i.e.
    # d**t = 1/3 with d = 1 - 0.693/86400: t = ln 3 / -ln d = 136,970 s = 38.05 h -> step 39 h.
    st = PrioritySettings(algorithm="classic", decay_half_life_s=86400, calc_period_s=300)
    sc = parse_scenario({"horizon": "3-0", "step": "1:00:00", "others": "steady",
                         "jobs": [{"user": "alice", "billing": 0.0}]})
    res = run_scenario(sc, _snapshot(settings=st, alice=3000.0, bob=1000.0), NOW)
    stop = res.series[0].fairshare_stop
    assert stop is not None and stop[0] == pytest.approx(2 ** -1.5)
    t = math.log(3) / -math.log(1 - 0.693 / 86400)
    assert 38 * 3600 < t < 39 * 3600
    assert stop[38] < 0.5 <= stop[39]
    assert "lab/alice: if it stops now, fairshare 0.3536 is back to 0.5 on 2026-06-03 03:00" in res.sentences()


def test_fairshare_with_n_raw_shares_now() -> None:
    # Classic, alice 3,000 and bob 1,000 of 4,000. With lab at 3 shares of 4 (3/4 x 1): F = 2**(-(3/4)/(3/4))
    # = 0.5, before 2**(-(3/4)/(1/2)) = 0.3536.
    sc = parse_scenario({"horizon": "1:00:00", "jobs": [{"user": "alice", "billing": 0.0}],
                         "shares": [{"account": "lab", "raw_shares": 3}]})
    res = run_scenario(sc, _snapshot(alice=3000.0, bob=1000.0), NOW)
    x = res.shares_now[0]
    assert (x.before, x.after) == (pytest.approx(2 ** -1.5), pytest.approx(0.5))
    assert "lab/alice: with the scenario's raw shares, fairshare now 0.353553 -> 0.500000" in res.sentences()


def test_campaign_cost_in_su_and_fairshare() -> None:
    # Classic, no decay, alice 1,000 and bob 1,000. A 2-hour job at 0.5/s: 3,600 billing-seconds
    # = 1 SU. After it alice has 4,600 of 5,600: F = 2**(-(46/56)/(1/2)) = 0.3202, before 0.5.
    sc = parse_scenario({"horizon": "3:00:00", "step": "1:00:00",
                         "jobs": [{"user": "alice", "billing": 0.5, "walltime": "2:00:00"}]})
    res = run_scenario(sc, _snapshot(), NOW)
    s = res.series[0]
    assert res.costs[0].su == 1.0 and s.fairshare_before is not None
    assert s.fairshare_before[2] == pytest.approx(0.5) and s.fairshare[2] == pytest.approx(2 ** (-2 * 4600 / 5600))
    assert "lab/alice: the campaign costs fairshare 0.5000 -> 0.3202 (without -> with it, 2026-06-01)" \
        in res.sentences()


def test_admin_dampening_drift_and_padding_upkeep() -> None:
    # 4 users, usage 100..400: mean 250. u* = 1000: d = 4 now; with no new usage the mean halves every
    # week (continuous model) so d doubles: 8, 16. Padding w = u* x 4 = 4000 (5 users with it).
    tree = AssocTree.from_rows([(-1, False, "root", "", 1, 1000.0)] + [(0, True, "root", f"u{i}", 1, 100.0 * i)
                                                                        for i in range(1, 5)])
    a = admin_answer(tree, 1000.0, 7 * 86400, weeks=2)
    assert (a.mean_usage, a.dampening_now, a.slurm_dampening, a.padding) == (250.0, 4.0, 4, 4000.0)
    assert a.drift.tolist() == pytest.approx([4.0, 8.0, 16.0]) and a.drift_slurm.tolist() == [4, 8, 16]
    # upkeep: 1.02 x what 4 h of Slurm decay removes, (1 - (1 - 0.693/604800)**14400) x 4000 = 65.72
    keep = (1 - 0.693 / 604800) ** 14400
    assert a.upkeep_amount == pytest.approx(1.02 * 4000 * (1 - keep))
    assert a.upkeep.worst_slip(4000.0) < 0.02  # the paper's "within 2 %"
    assert int(a.upkeep.ran.sum()) == 84  # 2 weeks of 4-hour checks: 85 checks, all but the first top up


def test_admin_answer_in_a_scenario() -> None:
    sc = parse_scenario({"horizon": "1:00:00", "admin": {"halving_usage": 4000, "weeks": 1},
                         "jobs": [{"user": "alice", "billing": 0.0}]})
    res = run_scenario(sc, _snapshot(settings=PrioritySettings(algorithm="classic")), NOW)
    assert res.admin is not None and res.admin.dampening_now == 4.0  # mean of 1,000 and 1,000
    d = whatif_dict(res)["admin"]
    assert d["slurm_dampening"] == 4 and d["padding"] == 8000.0 and d["upkeep_every_hours"] == 4.0
    assert any(s.startswith("admin: for fairshare halving every 4,000") for s in res.sentences())


def test_new_keys_are_checked() -> None:
    with pytest.raises(InputError, match=r"p.toml:jobs\[0\].runtime.*longer than the walltime"):
        parse_scenario({"horizon": "1-0", "jobs": [{"walltime": "1:00:00", "runtime": "2:00:00"}]}, "p.toml")
    with pytest.raises(InputError, match=r"p.toml:admin.halving_usage.*required"):
        parse_scenario({"horizon": "1-0", "admin": {"weeks": 2}}, "p.toml")
    with pytest.raises(InputError, match=r"p.toml:admin.week.*did you mean 'weeks'"):
        parse_scenario({"horizon": "1-0", "admin": {"halving_usage": 1, "week": 2}}, "p.toml")


def test_the_demo_user_s_allocation_over_a_gpu_campaign(demo: Snapshot) -> None:
    # eps_hoang_lab's allocation has 82,652 SU free. The gpu partition bills a 16-CPU, 128 GB, 4-GPU
    # node at B/s; 20 copies of 12 h pre-debit 20 x ceil(ceil(B x 43,200) / 60) minutes.
    sc = parse_scenario({"horizon": "3-0", "step": "1:00:00", "jobs": [
        {"user": "khoang", "partition": "gpu", "cpus": 16, "gpus": 4, "mem": "128G", "walltime": "12:00:00",
         "runtime": "10:00:00", "count": 20, "start": "1-0"}]})
    res = run_scenario(sc, demo, demo.taken_at)
    b = res.series[0].balance
    rate = res.costs[0].billing_per_s
    hold = math.ceil(math.ceil(rate * 43200) / 60)
    debit = math.ceil(math.ceil(rate * 36000) / 60)
    assert b is not None and b.balance[0] == pytest.approx(82_652.0)
    assert b.balance[25] == pytest.approx(82_652.0 - 20 * hold / 60)
    assert b.balance[-1] == pytest.approx(82_652.0 - 20 * debit / 60)
    assert np.all(np.diff(res.series[0].raw_usage_before[24:36]) <= 0)  # no campaign: decays


def test_a_saved_capture_checks_its_nodes_from_slurm_conf() -> None:
    # The sandbox capture has slurm.conf but no scontrol_show_partition.txt: one 8-CPU, 1 GB node.
    from tui.sources.saved import load_folder

    snap = load_folder(LIVE)
    burn = {p.name: p for p in snap.partitions}["burn"]
    assert burn.node_types == (NodeType(8, 1024.0, 0, "", 1),) and burn.max_time_s == UNLIMITED
    user = str(snap.tree.user[np.flatnonzero(snap.tree.is_user)[0]])
    account = str(snap.tree.account[np.flatnonzero(snap.tree.is_user)[0]])
    job = {"user": user, "account": account, "partition": "burn", "walltime": "1:00:00"}
    with pytest.raises(InputError, match=r"jobs\[0\].mem: 2 GB of memory per node; the largest node in burn has 1"):
        run_scenario(parse_scenario({"horizon": "2:00:00", "jobs": [{**job, "mem": "2G"}]}), snap)
    res = run_scenario(parse_scenario({"horizon": "2:00:00", "jobs": [{**job, "cpus": 8}]}), snap)
    assert res.costs[0].billing_per_s == 8_000_000  # TRESBillingWeights=CPU=1000000
    assert not any("not checked" in n or "unknown" in n for n in res.notes)


def test_many_copies_are_replayed_as_groups() -> None:
    # 10,000 SU; a copy pre-debits 0.5/s x 2 h = 60 min = 1 SU and is debited the same at its end.
    # 1,000 copies every 6 h: ten runs fit (10 x 1,000 SU), the 11th (at 60 h) and later are refused.
    snap = _snapshot(allocations=(Allocation("7", "lab", 1e4, 0.0, 0.0),))
    sc = parse_scenario({"horizon": "30-0", "step": "1:00:00", "jobs": [
        {"user": "alice", "billing": 0.5, "walltime": "2:00:00", "count": 1000, "every": "6:00:00", "repeat": 100}]})
    b = run_scenario(sc, snap, NOW).series[0].balance
    assert b is not None and b.runs_out_h == 60.0 and len(b.refused) == 90 * 1000
    assert b.balance[0] == 9000.0 and b.balance[1] == 9000.0 and b.balance[2] == 9000.0 and b.balance[6] == 8000.0
    assert b.balance[-1] == 0.0


def test_site_factor_follows_the_allocation() -> None:
    # 100 SU granted, 50 free: credit factor 0.5. It ends in 10 days, the latest active one in 20:
    # temporal factor 1 - (10 - t)/(20 - t): 0.5 now, 2/3 at day 5. Power rule (seed 004 Figure 2):
    # 0.5**0.5 x 0.5**2 = 0.17678 -> SiteFactor 176.78 at scale 1,000; day 5: 0.70711 x 0.44444 = 314.27.
    mine = Allocation("7", "lab", 100.0, 40.0, 10.0, NOW - timedelta(days=1), NOW + timedelta(days=10))
    other = Allocation("8", "other", 10.0, 0.0, 0.0, NOW - timedelta(days=1), NOW + timedelta(days=20))
    snap = _snapshot(allocations=(mine, other))
    sc = parse_scenario({"horizon": "5-0", "step": "1-0", "jobs": [
        {"user": "alice", "billing": 0.0, "site_scale": 1000, "walltime": "1:00:00"}]})
    p = run_scenario(sc, snap, NOW).planned[0]
    assert isinstance(p.site, np.ndarray)
    assert p.site[0] == pytest.approx(1000 * 0.5**0.5 * 0.5**2)
    assert p.site[5] == pytest.approx(1000 * 0.5**0.5 * (2 / 3) ** 2)
    no_alloc = run_scenario(sc, _snapshot(), NOW)
    assert "jobs[0]: site_scale given but no dated allocation binds it: SITE is its site (0)" in no_alloc.notes


def test_scontrol_show_node_free_text_fields_are_skipped() -> None:
    # The layout of Slurm 23.02's scontrol show node: OS= and Reason= hold spaces; CPUEfctv is what
    # jobs can use (CPUTot minus the cores kept for the system).
    text = (
        "NodeName=sandbox-node Arch=x86_64 CoresPerSocket=1 \n"
        "   CPUAlloc=0 CPUEfctv=6 CPUTot=8 CPULoad=0.50\n"
        "   AvailableFeatures=(null)\n   Gres=(null)\n"
        "   NodeAddr=127.0.0.1 NodeHostName=vm Version=23.02.7\n"
        "   OS=Linux 6.1.0-18-amd64 #1 SMP PREEMPT_DYNAMIC Debian 6.1.76-1 (2024-02-01) \n"
        "   RealMemory=1024 AllocMem=0 FreeMem=1000 Sockets=8 Boards=1\n"
        "   CfgTRES=cpu=8,mem=1G,billing=8\n"
        "   Reason=draining for maintenance [root@2026-11-22T10:00:00]\n\n")
    assert slurm_text.parse_nodes(text) == {"sandbox-node": NodeType(6, 1024.0, 0, "")}


def test_questions_the_standalone_model_cannot_answer_are_said() -> None:
    sc = parse_scenario({"horizon": "1-0", "model": {"halving_usage": 1e4}, "admin": {"halving_usage": 1e4},
                         "jobs": [{"cpus": 28}]})
    res = run_scenario(sc, None, NOW)
    assert res.notes == ("[admin] not answered in the standalone model: the dampening and padding need a Slurm "
                         "tree's users",)
    assert whatif_dict(res)["series"][0]["balance_note"] == "no balance in this model"


def test_the_group_s_pace_runs_the_allocation_out() -> None:
    # 100 SU granted 10 days ago, 40 used: 4 SU/day. 60 SU free, the campaign holds and debits 10 SU
    # (10/s for an hour) at once: 50 SU left, gone at the group's pace after 12.5 days -> day 13 step.
    alloc = Allocation("7", "lab", 100.0, 40.0, 0.0, NOW - timedelta(days=10), NOW + timedelta(days=100))
    sc = parse_scenario({"horizon": "20-0", "step": "1-0", "jobs": [{"user": "alice", "billing": 10.0}]})
    res = run_scenario(sc, _snapshot(allocations=(alloc,)), NOW)
    b = res.series[0].balance
    assert b is not None and b.account.pace_su_per_day == 4.0 and b.balance[1] == 50.0
    assert b.runs_out_with_pace_h(res.t_hours) == 13 * 24.0
    assert any("with the group's own pace (4.0 SU/day) it runs out on 2026-06-14" in x for x in res.sentences())


def test_compare_false_skips_before_and_stop() -> None:
    sc = parse_scenario({"horizon": "3:00:00", "step": "1:00:00",
                         "jobs": [{"user": "alice", "billing": 0.5, "walltime": "2:00:00"}]})
    fast = run_scenario(sc, _snapshot(), NOW, compare=False)
    full = run_scenario(sc, _snapshot(), NOW)
    assert fast.series[0].fairshare_before is None and fast.series[0].fairshare_stop is None
    assert fast.series[0].fairshare.tolist() == full.series[0].fairshare.tolist()
    assert "campaign costs fairshare" not in "\n".join(fast.sentences())


def test_job_size_part_from_the_cluster_s_nodes() -> None:
    # Partitions a = n[1-4] and b = n[3-6] of 16-CPU nodes: the cluster is 6 nodes, 96 CPUs. A job of
    # 2 nodes x 16 CPUs, favouring large jobs: (2/6 + 32/96) / 2 = 1/3 -> 3,000 x 1/3 = 1,000.
    node = NodeType(16, 64_000.0, 0, "", 4)
    parts = (Partition("a", node_list="n[1-4]", node_types=(node,)), Partition("b", node_list="n[3-6]",
                                                                               node_types=(node,)))
    st = PrioritySettings(algorithm="classic", decay_half_life_s=0, weight_jobsize=3000)
    sc = parse_scenario({"horizon": "1:00:00", "jobs": [{"user": "alice", "partition": "a", "nodes": 2, "cpus": 16,
                                                         "billing": 0.0}]})
    p = run_scenario(sc, _snapshot(parts, st), NOW).planned[0]
    assert p.jobsize == pytest.approx(1000.0) and p.notes == ()
