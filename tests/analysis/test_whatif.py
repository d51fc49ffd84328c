"""What one more job costs and what it does to a fairshare (hand-derived values)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tests.treebuild import tree_from_text
from tui.analysis.planner.immediate import whatif
from tui.analysis.planner.job_form import JobRequest, parse_job_form
from tui.analysis.standing import build_standing
from tui.engine import compute
from tui.engine.billing import job_cost
from tui.engine.projection import add_usage
from tui.model import Partition, PrioritySettings, Snapshot
from tui.sources.slurm_units import parse_tres_billing_weights
from tui.sources.sshare import parse_sshare

DOC = Partition("doc", parse_tres_billing_weights("CPU=1.0,Mem=0.25G,GRES/gpu=2.0"))


def view_of(tree, algorithm, weight_fairshare=0):
    settings = PrioritySettings(algorithm=algorithm, weight_fairshare=weight_fairshare)
    return build_standing(Snapshot("t", "t", tree=tree, settings=settings), me="")


def row_of(tree, account, user=""):
    return next(i for i in range(tree.size) if tree.account[i] == account and tree.user[i] == user)


def test_job_cost_slurm_conf_example_sum_and_max_tres():
    # slurm.conf.5: 1 CPU, 8 GB with CPU=1.0,Mem=0.25G,GRES/gpu=2.0 -> sum 3.0, MAX_TRES 2.0
    cost = job_cost(DOC, cpus=1, gpus=0, gpu_type="", mem_mb=8 * 1024, nodes=1, walltime_s=3600, max_tres=False)
    assert cost.billing_per_s == pytest.approx(3.0)
    assert cost.total == pytest.approx(10_800) and cost.total_hours == pytest.approx(3.0)
    peak = job_cost(DOC, 1, 0, "", 8 * 1024, 1, 3600, max_tres=True)
    assert peak.billing_per_s == pytest.approx(2.0) and peak.mode == "max_tres"
    # one GPU more: sum 1 + 2 + 2 = 5; MAX_TRES max(1, 2, 2) = 2
    assert job_cost(DOC, 1, 1, "", 8 * 1024, 1, 3600).billing_per_s == pytest.approx(5.0)
    assert job_cost(DOC, 1, 1, "", 8 * 1024, 1, 3600, "max_tres").billing_per_s == pytest.approx(2.0)


def test_job_cost_without_weights_and_with_typed_gpus():
    assert job_cost(None, 16, walltime_s=7200).billing_per_s == 16
    assert job_cost(Partition("plain"), 16, walltime_s=7200).total == 16 * 7200
    gpu = Partition("gpu", {"cpu": 1.15, "gres/gpu:a100": 209.1})
    cost = job_cost(gpu, cpus=16, gpus=4, gpu_type="A100", mem_mb=0, nodes=1, walltime_s=3600)
    assert cost.tres["gres/gpu:a100"] == 4 and cost.tres["gres/gpu"] == 4
    assert cost.billing_per_s == pytest.approx(16 * 1.15 + 4 * 209.1)  # 854.8


def test_whatif_classic_flat_tree_halves_the_factor():
    # a: 10 h of 40 h, 1 of 2 shares: E = 0.25, F = 2^-0.5. 8 CPUs for 10 h = 80 h -> E = 90/120
    tree = tree_from_text(f"@a 1 {10 * 3600}\n@b 1 {30 * 3600}")
    a = row_of(tree, "root", "a")
    cost = job_cost(None, cpus=8, walltime_s=10 * 3600)
    w = whatif(view_of(tree, "classic", weight_fairshare=10_000), a, cost)
    assert [(i.label, i.before, i.after) for i in w.increments] == [
        ("root/a", 36_000, 324_000), ("root", 144_000, 432_000)]
    assert w.fairshare_before == pytest.approx(2 ** -0.5)
    assert w.effective_usage_after == pytest.approx(0.75)
    assert w.fairshare_after == pytest.approx(2 ** -1.5)  # halved: 80 h = S*R/(1-E0-S)
    assert w.priority_fairshare_delta == pytest.approx(10_000 * (2 ** -1.5 - 2 ** -0.5))  # -3535.53
    assert w.rank_before is None and w.level_fs_before is None


def test_whatif_fair_tree_uga1_drops_to_rank_2():
    tree = parse_sshare((FIXTURES / "sshare" / "test24_4_fair_tree.psv").read_bytes()).tree
    row = row_of(tree, "aGA", "uGA1")
    w = whatif(view_of(tree, "fair_tree"), row, job_cost(None, cpus=1, walltime_s=20))
    assert [i.label for i in w.increments] == ["aGA/uGA1", "aGA", "aG", "root"]
    assert [i.after - i.before for i in w.increments] == [20, 20, 20, 20]
    # U = 24/30 = 0.8 -> LevelFS 0.625; uGA2 (6/30) now leads aGA, uG1 (LF 2) still first in aG
    assert w.level_fs_before == pytest.approx(1.25) and w.level_fs_after == pytest.approx(0.625)
    assert (w.rank_before, w.rank_after, w.users) == (4, 2, 21)
    assert w.fairshare_after == pytest.approx(2 / 21)


def test_add_usage_reaches_parent_accounts_and_leaves_the_original():
    tree = parse_sshare((FIXTURES / "sshare" / "test24_3_classic.psv").read_bytes()).tree
    row = row_of(tree, "AccountHTA", "UHTAStd2")
    changed = add_usage(tree, row, 5)
    diff = {tree.label(i): float(changed.usage_raw[i] - tree.usage_raw[i]) for i in range(tree.size)
            if changed.usage_raw[i] != tree.usage_raw[i]}
    assert diff == {"AccountHTA/UHTAStd2": 5, "AccountHTA": 5, "AccountH": 5, "root": 5}
    assert compute(tree, "classic").fairshare[row] == pytest.approx(0.211966, abs=1e-6)


def test_parse_job_form_valid_and_messages():
    parts = {"gpu": Partition("gpu", {"cpu": 1.0}, total_cpus=64, total_nodes=2,
                              tres_totals={"cpu": 64, "gres/gpu": 8}),
             "cpu": Partition("cpu", {"cpu": 1.0}, total_cpus=96, total_nodes=2, tres_totals={"cpu": 96})}
    req, errors = parse_job_form({"partition": "gpu", "nodes": "2", "cpus": "16", "gpus": "4",
                                  "gpu_type": "a100", "mem_gb": "64", "walltime": "1-00:00:00"}, parts)
    assert errors == {}
    assert req == JobRequest("gpu", 2, 16, 4, "a100", 64.0, 86400)
    cost = req.cost(parts)
    assert cost.tres == {"cpu": 32, "mem": 131072, "node": 2, "gres/gpu": 8, "gres/gpu:a100": 8}
    assert cost.billing_per_s == 32 and cost.total == 32 * 86400
    req, errors = parse_job_form({"partition": "nope", "nodes": "x", "cpus": "0", "gpus": "-1",
                                  "mem_gb": "", "walltime": "1:2:3:4"}, parts)
    assert req is None
    assert errors == {"partition": "unknown partition 'nope'", "nodes": "a whole number, not 'x'",
                      "cpus": "at least 1", "gpus": "at least 0", "mem_gb": "required",
                      "walltime": "not a Slurm time '1:2:3:4': minutes, hh:mm:ss or d-hh:mm"}
    _, errors = parse_job_form({"partition": "cpu", "nodes": "1", "cpus": "97", "gpus": "1",
                                "mem_gb": "4", "walltime": "UNLIMITED"}, parts)
    assert errors == {"cpus": "97 CPUs in all; cpu has 96", "gpus": "cpu has no GPUs",
                      "walltime": "a finite time limit (minutes, hh:mm:ss or d-hh:mm)"}
    _, errors = parse_job_form({"partition": "cpu", "nodes": "3", "cpus": "1", "mem_gb": "4",
                                "walltime": "60"}, parts)
    assert errors == {"nodes": "cpu has 2 nodes"}


def test_whatif_errors():
    with pytest.raises(ValueError):
        whatif(build_standing(Snapshot("c", "s"), me=""), 0, job_cost(None, 1))
    tree = tree_from_text("@a 1 10")
    with pytest.raises(ValueError):
        whatif(view_of(tree, "classic"), 9, job_cost(None, 1))
