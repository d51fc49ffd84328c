"""The Jobs pane (``6``, ``:jobs``) on the real Slurm 22.05 capture with a job pending for every
reason (tests/fixtures/pending_jobs), on the demo, and on a PBS folder."""

from __future__ import annotations

from tests.app.conftest import small_demo, workers_done
from tests.conftest import FIXTURES
from tui.app.app import FairtopApp
from tui.app.panes.jobs import JobsPane
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.app.widgets.line_table import LineTable
from tui.config import Settings, State
from tui.sources.saved import load_folder

CAPTURE = FIXTURES / "pending_jobs" / "capture"


def _app(user: str) -> FairtopApp:
    from tui.app.main import build_app
    from tui.cli import build_parser

    return build_app(build_parser().parse_args(["--from", str(CAPTURE), "--user", user]))


def _detail(pane: JobsPane) -> str:
    return str(pane.query_one("#jb-detail").content)


def _title(pane: JobsPane) -> str:
    return str(pane.query_one("#jb-title").content)


async def _press_6(pilot) -> JobsPane:  # noqa: ANN001 - Pilot
    """Once loaded, ``6``: the Jobs pane, its jobs explained."""
    await workers_done(pilot)
    await pilot.press("6")
    await workers_done(pilot)
    return pilot.app.query_one(JobsPane)


async def test_key_6_shows_my_pending_jobs_explained(isolated_paths) -> None:
    app = _app("wqb")
    async with app.run_test(size=(120, 40)) as pilot:
        pane = await _press_6(pilot)
        view = pane.view
        assert view is not None and view.user == "wqb"
        assert _title(pane).startswith("Jobs of wqb: 3 pending jobs, the nearest: 1st in debug; "
                                       "the scheduler estimates ")
        assert view.header.split() == ["Job", "Partition", "State", "Reason", "Place", "Held", "back", "by",
                                       "Start", "estimate"]
        assert [line.split()[:4] for line in view.lines] == [["6", "debug", "pending", "Resources"],
                                                            ["7", "debug", "pending", "Priority"],
                                                            ["8", "debug", "pending", "Priority"]]
        assert "1st: first in line" in view.lines[0]
        assert "2nd: 1 ahead, 1 yours nice" in view.lines[1]  # nice 500 against job 6's 0
        assert "3rd: 2 ahead, 2 yours nice" in view.lines[2]
        table = app.query_one(LineTable)
        assert table.has_focus and table.lines == view.lines
        detail = _detail(pane).splitlines()
        assert detail[0] == ("Job 6 (debug): Resources: it is next in line and waits for enough free resources "
                             "(CPUs, memory, GPUs, nodes).")
        assert detail[1] == "Place in debug: first in line."
        assert detail[3].startswith("Start estimate (the scheduler's, squeue --start): 2026-11-28 ")
        assert " on sandbox-node (read " in detail[3]
        await pilot.press("down")
        await pilot.pause()
        detail = _detail(pane).splitlines()
        assert detail[0].startswith("Job 7 (debug): Priority:")
        assert detail[1] == "Place in debug: 2nd; 1 job ahead of it, 1 of them yours."
        assert detail[2] == ("Priority 8,071 (sprio: fairshare 8,571, nice 500); against job 6 just ahead "
                             "(priority 8,571), nice holds it back most: 500 against 0.")
        assert "What would move it: the job just ahead (6) is your own: your fairshare moves both alike" in detail


async def test_jobs_command_and_another_users_jobs(isolated_paths) -> None:
    """``:jobs`` opens the pane; selecting wqa in the tree shows wqa's five pending jobs (every
    other reason) and the running one."""
    app = _app("wqb")
    async with app.run_test(size=(120, 40)) as pilot:
        await workers_done(pilot)
        snap = load_folder(CAPTURE)
        assert snap.tree is not None
        row = next(i for i in range(snap.tree.size) if snap.tree.label(i) == "wq/wqa")
        app.query_one(FairshareTree).go_to_row(row)
        await pilot.pause()
        await pilot.press("colon", *"jobs", "enter")
        await workers_done(pilot)
        pane = app.query_one(JobsPane)
        view = pane.view
        assert view is not None and view.user == "wqa"
        assert [line.split()[:4] for line in view.lines] == [
            ["16", "parked", "pending", "PartitionDown"], ["15", "debug", "pending", "BeginTime"],
            ["14", "debug", "pending", "Dependency"], ["11", "debug", "pending", "QOSMaxJobsPerUserLimit"],
            ["13", "debug", "pending", "JobHeldUser"], ["4", "debug", "running", "running"]]
        assert "none (begin time)" in view.lines[1]
        assert _title(pane).startswith("Jobs of wqa: 5 pending jobs, the nearest: partition parked is down "
                                       "(PartitionDown); 1 running")
        await pilot.press("down", "down")
        await pilot.pause()
        assert _detail(pane).splitlines()[0] == ("Job 14 (debug): Dependency: it waits for a job it depends on: "
                                                 "job 2 "
                                                 "must end successfully (not yet) (squeue: afterok:2(unfulfilled)).")
        await pilot.press("end")
        await pilot.pause()
        assert _detail(pane).startswith("Job 4 (debug) of wqa runs: started 2026-11-28 ")


async def test_the_demo_says_it_makes_up_no_reasons() -> None:
    app = FairtopApp(Settings(), small_demo("alice"), "alice", State())
    async with app.run_test(size=(120, 40)) as pilot:
        pane = await _press_6(pilot)
        view = pane.view
        assert view is not None and view.user == "alice"
        assert _title(pane).startswith("Jobs of alice (demo user): 1 pending job: reason unknown; 1 running")
        assert [line.split()[:4] for line in view.lines] == [["61001012", "icelake", "pending", "unknown"],
                                                            ["61001407", "gpu_requeue", "running", "running"]]
        assert _detail(pane).splitlines()[:3] == [
            "Job 61001012 (icelake): reason unknown (the demo cluster makes up no scheduler reasons)",
            "Place in icelake: first in line.",
            "Priority 6,673,063 (sprio: age 4,478,549, fairshare 2,194,514)."]


async def test_pbs_says_what_it_lacks(isolated_paths) -> None:
    from tui.app.main import build_app
    from tui.cli import build_parser

    app = build_app(build_parser().parse_args(["--demo", "pbs", "--user", "alice"]))
    async with app.run_test(size=(120, 40)) as pilot:
        pane = await _press_6(pilot)
        assert _title(pane) == ("Jobs: PBS demo: the demo cluster makes up no PBS queue, so there are no jobs to "
                                "explain.")
        assert not pane.query_one(LineTable).display


async def test_pbs_capture_with_qstat_lists_the_users_queued_jobs(isolated_paths, tmp_path) -> None:
    import shutil

    from tui.app.main import build_app
    from tui.cli import build_parser
    from tui.sources.pbs_jobs import QSTAT_FILE

    # the PBS sandbox's tree and a queue recorded on it (tests/fixtures/pbs_qstat/README.md)
    (tmp_path / "resource_group").write_text("physics 100 root 60\nchem 200 root 40\npbsu1 1001 physics 30\n"
                                             "pbsu2 1002 physics 10\npbsu3 1003 chem 20\npbsu4 1004 chem 20\n")
    (tmp_path / "usage.txt").write_text("pbsu1 1\npbsu2 1\npbsu3 1\npbsu4 1\n")
    shutil.copy(FIXTURES / "pbs_qstat" / "qstat_f.json", tmp_path / QSTAT_FILE)
    app = build_app(build_parser().parse_args(["--from", str(tmp_path), "--user", "pbsu3"]))
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await _press_6(pilot)
        assert pane.view is not None
        assert [line.split()[:3] for line in pane.view.lines] == [["2.fairtop-pbs", "workq", "pending"]]
        assert _detail(pane).splitlines()[0] == (
            "Job 2.fairtop-pbs (workq): PBS says: 'Job held by pbsu3 on Sat Nov 28 06:40:59 2026': pbsu3 held it "
            "(qhold) on Sat Nov 28 06:40:59 2026.")
        assert "What would move it: releasing it: qrls 2.fairtop-pbs" in _detail(pane)
    empty = tmp_path / "noqueue"
    empty.mkdir()
    for name in ("resource_group", "usage.txt"):
        shutil.copy(tmp_path / name, empty / name)
    app = build_app(build_parser().parse_args(["--from", str(empty), "--user", "pbsu3"]))
    async with app.run_test(size=(140, 40)) as pilot:
        pane = await _press_6(pilot)
        assert _title(pane) == (f"Jobs: PBS folder {empty} holds no qstat -f output ('fairtop capture --pbs' "
                                "saves it as qstat_f.json), so there are no jobs to explain.")


async def test_a_new_snapshot_keeps_the_highlighted_job(isolated_paths) -> None:
    """A live refresh (a new snapshot with the same jobs): the pane explains again, the lines are
    not set again, and job 7 stays highlighted with its words below. The same snapshot again
    (``r`` on a folder that has not changed) is not even explained again."""
    from dataclasses import replace

    app = _app("wqb")
    async with app.run_test(size=(120, 40)) as pilot:
        pane = await _press_6(pilot)
        await pilot.press("down")
        await pilot.pause()
        before = pane.view
        table = app.query_one(LineTable)
        app.action_reload()
        await workers_done(pilot)
        assert pane.view is before  # the folder's very snapshot: nothing to do
        standing = app.standing
        assert standing is not None
        lines = table.lines
        pane.show(replace(standing, snapshot=replace(standing.snapshot)), app.query_one(FairshareTree).selected_row)
        await workers_done(pilot)
        assert pane.view is not None and pane.view is not before and pane.view.lines == before.lines
        assert table.lines is lines and table.cursor == 1  # unchanged lines are not set again
        assert _detail(pane).startswith("Job 7 (debug): Priority:")
