"""The planner's analysis: editor texts -> scenario with one message per field, and a campaign
projected with and without its jobs (hand-derived on a two-user tree without decay)."""

from __future__ import annotations

import dataclasses
from datetime import datetime, timezone

import numpy as np
import pytest

from tests.treebuild import tree_from_text
from tui.analysis.planner import (
    JOB_FIELDS,
    Baselines,
    Cancelled,
    PlanProjection,
    ScenarioJob,
    fields_of_job,
    metrics,
    parse_plan,
    project_plan,
    table_rows,
)
from tui.analysis.planner.form import time_text
from tui.analysis.planner.result import AssocSeries
from tui.model import Partition, PrioritySettings, Snapshot

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)
CPU = Partition("cpu", {"cpu": 1.0}, total_cpus=64, total_nodes=4, tres_totals={"cpu": 64.0})
PLAN = {"horizon": "10:00:00", "step": "5:00:00", "target": "0.5"}


def job_fields(**over: str) -> dict[str, str]:
    return {k: d for k, _, d in JOB_FIELDS} | {"partition": "cpu", "gpu_type": ""} | over


def snapshot() -> Snapshot:
    # root/a 10 h and root/b 30 h, one share each; no decay; 1 billing per CPU-second
    tree = tree_from_text(f"@a 1 {10 * 3600}\n@b 1 {30 * 3600}")
    return Snapshot("t", "t", taken_at=NOW, tree=tree, partitions=(CPU,),
                    settings=PrioritySettings(algorithm="classic", decay_half_life_s=0))


def test_time_text_reads_back() -> None:
    assert [time_text(s) for s in (0, 90, 3600, 86400, 2 * 86400 + 3600, 86400 + 60, 86400 + 1)] == [
        "0:00:00", "0:01:30", "1:00:00", "1-0", "2-1", "1-00:01", "1-00:00:01"]


def test_each_bad_field_has_its_message_and_defaults_fill_the_association() -> None:
    parts = {"cpu": CPU}
    form = parse_plan({"horizon": "1-0", "step": "2-0", "target": "2"},
                      [job_fields(cpus="100", count="0", every="x"), job_fields(repeat="3")], parts, "a", "root")
    assert form.scenario is None
    assert form.errors == {"step": "no longer than the horizon", "target": "a fairshare in [0, 1]",
                           "jobs[0].cpus": "100 CPUs in all; cpu has 64", "jobs[0].count": "at least 1",
                           "jobs[0].every": "not a Slurm time 'x': minutes, hh:mm:ss or d-hh:mm",
                           "jobs[1].every": "needed with repeat 3: the time between repeats"}
    ok = parse_plan(PLAN, [job_fields(cpus="8", mem_gb="0", start="1:00:00"), job_fields(user="b", account="")],
                    parts, "a", "root")
    assert ok.errors == {}
    assert ok.scenario is not None
    first, second = ok.scenario.jobs
    assert (first.user, first.account, first.cpus, first.mem_mb, first.start_s) == ("a", "root", 8.0, 0.0, 3600)
    assert (second.user, second.account) == ("b", "")  # a named user keeps its own (empty) account
    assert ok.scenario.horizon_s == 36000 and ok.scenario.step_s == 18000


def test_a_job_line_round_trips_through_the_fields() -> None:
    job = ScenarioJob(user="a", account="root", partition="cpu", nodes=2, cpus=8, gpus=0, mem_mb=65536,
                      start_s=2 * 86400, walltime_s=12 * 3600, count=20, every_s=7 * 86400, repeat=2)
    fields, extras = fields_of_job(job)
    form = parse_plan(PLAN, [fields], {"cpu": CPU}, "x", "y", extras=[extras])
    assert form.scenario is not None and form.scenario.jobs == (job,)


def test_before_and_after_over_time() -> None:
    # 8 CPUs for 10 h on root/a: usage 10 -> 50 -> 90 h against 40 -> 80 -> 120 h in all;
    # classic F = 2**(-(U/0.5)): 0.707107 -> 0.420448 -> 0.353553; without it 0.707107 throughout.
    snap = snapshot()
    form = parse_plan(PLAN, [job_fields(cpus="8", walltime="10:00:00")], {"cpu": CPU}, "a", "root")
    assert form.scenario is not None
    plan = project_plan(form.scenario, snap)
    (usage, fairshare) = metrics(plan, 0)[:2]
    assert np.allclose(usage.after, [10, 50, 90]) and np.allclose(usage.before, [10, 10, 10])
    assert np.allclose(fairshare.after, [2 ** -0.5, 2 ** -1.25, 2 ** -1.5], rtol=1e-12)
    assert np.allclose(fairshare.before, 2 ** -0.5, rtol=1e-12)
    header, rows = table_rows(plan, 0)
    assert header[:3] == ["date", "usage (SU, decayed)", "fairshare"]
    assert rows[-1][:3] == ["2026-03-01 10:00", "10.0 → 90.0", "0.7071 → 0.3536"]


def test_a_cancelled_projection_stops_at_a_ranked_step_and_one_not_cancelled_is_the_same() -> None:
    # The pane's worker stops a projection a newer key made stale (a thread cannot be killed).
    snap = dataclasses.replace(snapshot(), settings=PrioritySettings(algorithm="fair_tree", decay_half_life_s=0))
    form = parse_plan(PLAN, [job_fields(cpus="8", walltime="10:00:00")], {"cpu": CPU}, "a", "root")
    assert form.scenario is not None
    asked: list[int] = []

    def at_the_second_step() -> bool:
        asked.append(1)
        return len(asked) == 2

    with pytest.raises(Cancelled):
        project_plan(form.scenario, snap, cancelled=at_the_second_step)
    assert len(asked) == 2
    plain, kept = project_plan(form.scenario, snap), project_plan(form.scenario, snap, cancelled=lambda: False)
    for a, b in zip(plain.after.series, kept.after.series, strict=True):
        assert np.array_equal(a.fairshare, b.fairshare) and np.array_equal(a.ahead, b.ahead)
        assert np.array_equal(a.raw_usage, b.raw_usage)
    assert plain.after.series[0].ahead is not None and plain.after.series[0].fairshare[-1] < 1


def test_baselines_are_reused_while_only_shapes_change() -> None:
    snap = snapshot()
    cache = Baselines()
    plans = []
    for cpus in ("8", "16"):
        form = parse_plan(PLAN, [job_fields(cpus=cpus, walltime="10:00:00")], {"cpu": CPU}, "a", "root")
        assert form.scenario is not None
        plans.append(project_plan(form.scenario, snap, baselines=cache))
    assert plans[0].before is plans[1].before
    assert plans[0].after.series[0].raw_usage[-1] != plans[1].after.series[0].raw_usage[-1]
    other = snapshot()  # another snapshot: recomputed
    assert project_plan(plans[0].scenario, other, baselines=cache).before is not plans[0].before


def test_extra_series_become_metrics_by_name() -> None:
    # A numeric series this module does not know (a quantity added later) gets a metric by its name.
    @dataclasses.dataclass(frozen=True, eq=False)
    class WithExtra(AssocSeries):
        reserve: np.ndarray | None = None

    snap = snapshot()
    form = parse_plan(PLAN, [job_fields(cpus="8", walltime="10:00:00")], {"cpu": CPU}, "a", "root")
    assert form.scenario is not None
    plan = project_plan(form.scenario, snap)

    def add(result, values):  # noqa: ANN001, ANN202
        s = result.series[0]
        extra = WithExtra(**{f.name: getattr(s, f.name) for f in dataclasses.fields(s)}, reserve=np.array(values))
        return dataclasses.replace(result, series=(extra,))

    plan = PlanProjection(plan.scenario, add(plan.before, [100.0, 100, 100]), add(plan.after, [100.0, 60, 20]))
    extra = [m for m in metrics(plan, 0) if m.key == "reserve"]
    assert len(extra) == 1 and extra[0].title == "reserve" and extra[0].change(2) == "100 → 20"


def test_the_pane_gets_the_allocation_balance_and_the_planned_priority() -> None:
    # The demo's allocation 1005 of chem_horvath_lab: 1,000,000 SU granted, 87,002 used and 98
    # pre-debited, so 912,900 SU free before the campaign; the campaign's four 12-hour copies are
    # pre-debited at their start (t = 0), so from the first step the balance is 912,900 less the
    # campaign's SU (the job runs its whole walltime: charged = held).
    from tui.analysis.planner import JOB_FIELDS
    from tui.sources.demo import demo_snapshot

    snap = demo_snapshot()
    fields = {k: d for k, _, d in JOB_FIELDS} | {
        "partition": "sapphire", "count": "4", "cpus": "112", "mem_gb": "100", "walltime": "12:00:00",
        "user": "hlevy", "account": "chem_horvath_lab"}
    form = parse_plan({"horizon": "2-0", "step": "12:00:00", "target": "0.5"}, [fields],
                      {p.name: p for p in snap.partitions}, "hlevy", "chem_horvath_lab")
    assert form.scenario is not None
    plan = project_plan(form.scenario, snap)
    by_key = {m.key: m for m in metrics(plan, 0)}
    balance = by_key["balance"]
    assert balance.title == "balance of allocation 1005 of chem_horvath_lab (SU free)"
    assert balance.before.tolist() == [912_900.0] * 5
    su = plan.after.costs[0].su
    assert su > 0 and np.allclose(balance.after, 912_900.0 - su)
    prio = by_key["planned_priority"]
    assert prio.title == "priority of job 1 if pending"
    assert np.all(np.diff(prio.after) > 0)  # AGE grows while it waits (PriorityMaxAge is longer)
    assert "fairshare_before" not in by_key and "fairshare_stop" not in by_key  # the pane's own 'without'
