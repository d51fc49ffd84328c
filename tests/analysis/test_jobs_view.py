"""The Jobs pane's answer without the UI (:mod:`tui.analysis.jobs.view`), on the real 22.05
capture with a job pending for every reason (tests/fixtures/pending_jobs)."""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime, timezone

from tests.conftest import FIXTURES
from tui.analysis.jobs import jobs_lacks, jobs_user, jobs_view
from tui.analysis.standing import build_standing
from tui.model import PrivateView
from tui.sources.saved import load_folder

CAPTURE = FIXTURES / "pending_jobs" / "capture"
NOW = datetime(2026, 11, 28, 3, 24, 43, tzinfo=timezone.utc)


def test_whose_jobs_follow_the_selected_user_row() -> None:
    standing = build_standing(load_folder(CAPTURE), "wqb")
    tree = standing.snapshot.tree
    assert tree is not None
    labels = [tree.label(i) for i in range(tree.size)]
    assert jobs_user(standing, labels.index("wqspent/wqd")) == "wqd"
    assert jobs_user(standing, labels.index("wqspent")) == "wqb"  # an account: the viewer's own
    assert jobs_user(standing, None) == jobs_user(standing, 0) == "wqb"


def test_a_spent_budget_in_the_table_and_in_words() -> None:
    view = jobs_view(build_standing(load_folder(CAPTURE), "wqb"), "wqd", now=NOW)
    # squeue printed 2026-11-28T03:18:57 in the capture's zone (its timezone.txt: UTC): shown as printed,
    # whatever the reader's TZ (CI runs this module under TZ=Europe/Berlin too)
    assert view.title == ("Jobs of wqd: 1 pending job: blocked by a limit (AssocGrpBillingMinutes); the scheduler "
                          "estimates 03:18; 0 running")
    assert view.lines[0].split() == ["12", "burn", "pending", "AssocGrpBillingMinutes", "after:", "0", "ahead",
                                     "11-28", "03:18", "(15", "min", "old)"]
    assert view.details[0].splitlines()[0] == (
        "Job 12 (burn): AssocGrpBillingMinutes: account wqspent's allocation is spent: 0 of 1,000 billing-minutes "
        "left (GrpTRESMins=billing=1,000, 16,665 used).")


def test_what_a_source_lacks_in_one_line() -> None:
    snap = load_folder(CAPTURE)
    assert jobs_lacks(snap) is None
    assert jobs_lacks(replace(snap, capabilities=frozenset({"usage"}))) == (
        f"{snap.source} gives no queue (no squeue output, or a live squeue has not answered yet): "
        "no jobs to explain.")


def test_under_private_data_another_users_jobs_are_not_in_the_view() -> None:
    snap = load_folder(CAPTURE)
    own = replace(snap, jobs=tuple(j for j in snap.jobs if j.user == "wqb"),
                  private=PrivateView(frozenset({"jobs"}), reader="wqb"))
    view = jobs_view(build_standing(own, "wqb"), "wqd", now=NOW)
    assert view.lines == [] and view.title == (
        "Jobs of wqd: not in your view (PrivateData=jobs: your view holds only your own jobs, so the jobs of "
        "others ahead cannot be counted)")
