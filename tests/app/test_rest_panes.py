"""The panes on slurmrestd snapshots (real 22.05 captures): pending jobs with the API's priority
and no parts, and no fairshare where the usage is unknown."""

from __future__ import annotations

from dataclasses import replace

from tests.app.test_panes import PaneApp, set_fields, settle, show_text, shown
from tests.conftest import FIXTURES
from tests.sources.test_rest_sshare import ADDED, _combined
from tui.analysis.standing import build_standing
from tui.app.panes.breakdown import BreakdownPane
from tui.app.panes.whatif import WhatIfPane

LIVE = FIXTURES / "slurm" / "live" / "fair_tree"


def _row(tree, label: str) -> int:
    return [tree.label(i) for i in range(tree.size)].index(label)


async def test_breakdown_lists_rest_jobs_with_the_api_priority_and_says_there_are_no_parts() -> None:
    snap, _ = _combined(LIVE)
    standing = build_standing(snap, "la")
    text = await show_text(BreakdownPane(), standing, _row(snap.tree, "qsub/la"))
    assert "Pending jobs (priority as the scheduler holds it; the source has no sprio output, so the parts" in text
    assert "8 on parked: 10,000" in text  # sprio printed PRIORITY 10000 for job 8


async def _whatif_text(standing, row: int) -> str:
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 60)) as pilot:
        pane.show(standing, row)
        await settle(pilot)
        set_fields(pane, {"horizon": "1-0", "step": "6:00:00"}, cpus="2", mem_gb="1", walltime="1:00:00")
        await settle(pilot)
        return " ".join(shown(pane).split())


async def test_whatif_prices_the_job_but_shows_no_fairshare_without_usage() -> None:
    snap, _ = _combined(LIVE)
    rest_only = replace(snap, printed=None, capabilities=frozenset({"partitions", "jobs"}), source="slurmrestd (x)")
    text = await _whatif_text(build_standing(rest_only, "la"), _row(snap.tree, "grp/la"))
    # debug: billing by CPU, 2 CPUs x 3,600 s
    assert "Job 1: 2.00 billing units/s × 1 run(s) = 7,200 billing-seconds = 2.0 SU" in text
    assert ("Fairshare of grp/la without → with the campaign: unknown, slurmrestd (x) gives no usage "
            "(--slurmrestd-sshare, --slurm or --from DIR have it)") in text
    assert "fairshare back to" not in text and "users ahead" not in text
    # with sshare's usage the same job has a fairshare without and with the campaign
    text = await _whatif_text(build_standing(snap, "la"), _row(snap.tree, "grp/la"))
    assert "campaign: unknown" not in text and "grp/la: without → with the campaign" in text


async def test_whatif_on_an_association_sshare_does_not_list() -> None:
    snap, _ = _combined(ADDED / "after", ADDED / "before")
    text = await _whatif_text(build_standing(snap, "lg"), _row(snap.tree, "qnew/lg"))
    assert "unknown, sshare does not list this association (slurmrestd does)" in text


async def test_jobs_pane_explains_rest_jobs_with_the_api_reason() -> None:
    from tui.app.panes.jobs import JobsPane

    snap, _ = _combined(LIVE)
    pane = JobsPane()
    text = await show_text(pane, build_standing(snap, "la"), _row(snap.tree, "qsub/la"))
    assert "Jobs of la: 2 pending jobs, the nearest: partition parked is down (PartitionDown); 0 running" in text
    assert pane.view is not None
    assert [line.split()[:4] for line in pane.view.lines] == [["8", "parked", "pending", "PartitionDown"],
                                                             ["4", "parked", "pending", "PartitionDown"]]
    assert ("Job 8 (parked): PartitionDown: its partition is DOWN: it accepts jobs but starts none "
            "(partition parked).") in text


async def test_jobs_pane_says_slurmrestd_gives_no_priority_parts() -> None:
    from tui.app.panes.jobs import JobsPane

    snap, _ = _combined(LIVE)
    rest = replace(snap, capabilities=frozenset({"usage", "printed", "jobs", "partitions"}), source="slurmrestd (x)")
    text = await show_text(JobsPane(), build_standing(rest, "la"), _row(snap.tree, "qsub/la"))
    assert "Priority 10,000; its parts: unknown (slurmrestd (x) gives no sprio parts)." in text  # job 8
    assert "sprio lists no line" not in text
