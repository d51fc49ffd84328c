"""Why a pending job waits (issue 35): Slurm's reasons in words, the queue's order, the job's own
numbers, from a real Slurm 22.05.8 capture (tests/fixtures/pending_jobs) and hand-made queues."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import datetime, timedelta, timezone

import pytest

from tests.conftest import FIXTURES
from tui.analysis.jobs import REASON_CODES, PendingJob, Queue, describe, explain_pending, hidden_jobs, pending_summary
from tui.analysis.planner import day_reached, recovery
from tui.analysis.standing import build_standing
from tui.analysis.summary import user_summary
from tui.model import Job, PrivateView
from tui.sources.saved import load_folder

CAPTURE = FIXTURES / "pending_jobs" / "capture"
T0 = datetime(2026, 11, 28, 3, 0, tzinfo=timezone.utc)


@pytest.fixture(scope="module")
def snap():  # type: ignore[no-untyped-def]
    return load_folder(CAPTURE)


def _mine(snap, user: str) -> dict[str, PendingJob]:  # type: ignore[no-untyped-def]
    now = snap.taken_at + timedelta(seconds=30)
    return {p.job.job_id: p for p in explain_pending(build_standing(snap, user), now=now)}


# --- the reasons ------------------------------------------------------------------------------


def test_every_code_slurm_prints_has_words() -> None:
    # 26.05's table (src/common/job_state_reason.c) in its order, 22.05's codes it dropped, and the
    # man page's WaitingForScheduling
    assert len(REASON_CODES) == len(set(REASON_CODES)) == 222
    assert REASON_CODES[:5] == ("None", "Prolog", "Priority", "Dependency", "Resources")
    assert {"MpiPortsBusy", "NvidiaImexChannels", "PowerReserved", "FrontEndDown"} <= set(REASON_CODES)
    for code in REASON_CODES:
        m = describe(code)
        assert m.kind != "unknown" and m.code == code and m.sentence and m.move, code


@pytest.mark.parametrize(("code", "limit", "tres", "scope"), [
    ("AssocGrpBillingMinutes", "GrpTRESMins", "billing", "assoc"),
    ("AssocGrpCPUMinutesLimit", "GrpTRESMins", "cpu", "assoc"),
    ("AssocGrpCpuLimit", "GrpTRES", "cpu", "assoc"),
    ("QOSGrpMemoryRunMinutes", "GrpTRESRunMins", "mem", "qos"),
    ("AssocMaxGRESPerNode", "MaxTRESPerNode", "gres", "assoc"),
    ("QOSMaxCpuPerUserLimit", "MaxTRESPerUser", "cpu", "qos"),
    ("QOSMinCpuNotSatisfied", "MinTRESPerJob", "cpu", "qos"),
    ("MaxBillingRunMinsPerAccount", "MaxTRESRunMinsPerAccount", "billing", "qos"),
])
def test_limit_codes_are_taken_apart(code: str, limit: str, tres: str, scope: str) -> None:
    m = describe(code)
    assert m.limit is not None and (m.limit.limit, m.limit.tres, m.limit.scope) == (limit, tres, scope)


def test_printed_words_and_unknown_codes() -> None:
    m = describe("ReqNodeNotAvail, UnavailableNodes:n[1-2]")
    assert (m.code, m.kind, m.detail) == ("ReqNodeNotAvail", "nodes", "UnavailableNodes:n[1-2]")
    words = "Nodes required for job are DOWN, DRAINED or reserved for jobs in higher priority partitions"
    assert (describe(words).code, describe(words).kind, describe(words).detail) == ("Resources", "queue", words)
    assert describe("priority").code == "Priority"  # Slurm compares reason names without case
    odd = describe("Frobnicated")
    assert (odd.kind, odd.code) == ("unknown", "Frobnicated") and "'Frobnicated'" in odd.sentence


# --- the queue's order ------------------------------------------------------------------------


def _job(job_id: str, prio: int, reason: str = "Priority", user: str = "u1", part: str = "p",
         submit: datetime = T0) -> Job:
    return Job(job_id, user, "a", part, "PENDING", {"cpu": 1.0}, submit_time=submit, priority=prio, reason=reason)


def test_slurms_order_priority_then_submit_then_id_then_task() -> None:
    jobs = [
        _job("5", 100, user="u1"),                                 # 100, t0, id 5
        _job("3", 100, user="u2"),                                 # 100, t0, id 3: before 5
        _job("20", 100, submit=T0 - timedelta(seconds=1)),         # 100, earlier: before 3 though a higher id
        _job("9", 200, "Resources", user="u2"),                    # the front
        _job("7_10", 50, user="u2"), _job("7_2", 50, user="u2"),   # one array: task 2 before task 10
        _job("8", 300, "AssocMaxJobsLimit"),                       # higher, but cannot start now
        _job("1", 0, "JobHeldUser"),
        _job("4", 1000, part="other"),                             # another partition
        Job("6", "u3", "a", "p", "RUNNING", {}, priority=10_000),  # running: not in the queue
    ]
    q = Queue(jobs)
    by_id = {j.job_id: j for j in jobs}

    def place(job_id: str):  # type: ignore[no-untyped-def]
        got = q.place(by_id[job_id])
        assert got is not None
        return got.ahead, got.own_ahead, got.blocked_ahead, got.just_ahead.job_id if got.just_ahead else None

    assert place("9") == (0, 0, 1, None)
    assert place("20") == (1, 0, 1, "9")
    assert place("3") == (2, 1, 1, "20")
    assert place("5") == (3, 1, 1, "3")          # u1: job 20 is its own
    assert place("7_2") == (4, 2, 1, "5")
    assert place("7_10") == (5, 3, 1, "7_2")
    assert place("4") == (0, 0, 0, None)
    assert q.place(by_id["6"]) is None


def test_a_job_in_several_partitions_is_in_line_in_each() -> None:
    jobs = [_job("1", 500, part="a,b"), _job("2", 100, part="b", user="u2"), _job("3", 100, part="a", user="u2")]
    q = Queue(jobs)
    assert [q.place(j).ahead for j in jobs] == [0, 1, 1]  # type: ignore[union-attr]


def test_unknown_priorities_and_reasons_are_said() -> None:
    q = Queue([_job("1", 100), replace(_job("2", 50), priority=None), _job("3", 10)])
    got = q.place(_job("3", 10))
    assert got is not None and got.ahead is None and "no priority" in got.unknown
    q = Queue([replace(_job("1", 100), reason=None), _job("2", 50)])
    got = q.place(_job("2", 50))
    assert got is not None and (got.ahead, got.reasons_unknown) == (1, 1)


def test_privatedata_jobs_hides_the_others(snap) -> None:  # type: ignore[no-untyped-def]
    mine = tuple(j for j in snap.jobs if j.user == "wqb")
    own = replace(snap, jobs=mine, private_data=frozenset({"jobs"}))
    assert hidden_jobs(own, "wqb").startswith("PrivateData=jobs: squeue shows you only your own jobs")
    assert hidden_jobs(replace(snap, private_data=frozenset({"jobs"})), "wqb") == ""  # an operator sees all
    view = replace(snap, private=PrivateView(frozenset({"jobs", "usage"}), "wqb"))
    assert hidden_jobs(view, "wqb").startswith("PrivateData=jobs: your view")
    got = {p.job.job_id: p for p in explain_pending(build_standing(own, "wqb"))}
    place = got["8"].place
    assert place is not None and (place.ahead, place.own_ahead) == (None, 2)
    assert "Place in debug: unknown (PrivateData=jobs" in got["8"].lines[1]
    assert got["8"].lines[1].endswith("; 2 of your own jobs are ahead of it.")


# --- a real capture: every reason with its numbers ----------------------------------------------


def test_the_capture_reads_reasons_limits_and_budgets(snap) -> None:  # type: ignore[no-untyped-def]
    reasons = {j.job_id: j.reason for j in snap.jobs if j.state == "PENDING"}
    assert reasons == {"6": "Resources", "7": "Priority", "8": "Priority", "9": "AssocMaxJobsLimit",
                       "10": "AssocGrpCpuLimit", "11": "QOSMaxJobsPerUserLimit", "12": "AssocGrpBillingMinutes",
                       "13": "JobHeldUser", "14": "Dependency", "15": "BeginTime", "16": "PartitionDown"}
    assert {(b.account, b.tres, b.limit_minutes, b.used_minutes) for b in snap.budgets} == {
        ("wqspent", "billing", 1000, 16665)}
    assert {(x.account, x.user, x.name, x.tres, x.limit, x.used) for x in snap.limits} == {
        ("wq", "wqc", "MaxJobs", "", 1, 1), ("wqcpu", "", "GrpTRES", "cpu", 1, 1)}


def test_a_spent_budget_in_numbers(snap) -> None:  # type: ignore[no-untyped-def]
    p = _mine(snap, "wqd")["12"]
    # assoc_mgr: GrpTRESMins=billing=1000(16665): a 1-CPU second at 1,000,000 billing per CPU-second
    assert p.why == ("AssocGrpBillingMinutes: account wqspent's allocation is spent: 0 of 1,000 billing-minutes "
                     "left (GrpTRESMins=billing=1,000, 16,665 used).")
    top_up, decay = p.moves
    # Slurm holds it while used >= limit: the limit must pass 16,665, so +15,666; under "safe"
    # this job's 1,000,000 billing x 5 minutes must fit as well
    assert top_up.startswith("a top-up: GrpTRESMins raised by at least 15,666 billing-minutes, above the 16,665 used")
    assert "with AccountingStorageEnforce=safe, 5,015,666" in top_up
    # 16,665 -> 1,000 takes log2(16.665) half-lives of 7 days: 28.41 days after the capture
    when = snap.taken_at + timedelta(days=7 * math.log2(16665 / 1000))
    assert f"around {when.astimezone():%Y-%m-%d %H:%M}" in decay and "fairtop's reckoning" in decay
    assert p.short() == "blocked by a limit (AssocGrpBillingMinutes); the scheduler estimates " + \
        f"{p.job.start_time.astimezone():%H:%M}"  # type: ignore[union-attr]


def test_job_count_and_grptres_limits_in_numbers(snap) -> None:  # type: ignore[no-untyped-def]
    assert _mine(snap, "wqc")["9"].why == ("AssocMaxJobsLimit: user wqc's association in account wq has 1 job "
                                           "counted against its MaxJobs=1.")
    assert _mine(snap, "wqe")["10"].why == ("AssocGrpCpuLimit: account wqcpu has 1 of its 1 CPUs in use by running "
                                            "jobs (GrpTRES=cpu=1); this job asks for 1 more.")
    qos = _mine(snap, "wqa")["11"].why
    assert "you run 1 job in QOS one; fairtop does not read the QOS's limits" in qos


def test_hold_dependency_begin_and_partition(snap) -> None:  # type: ignore[no-untyped-def]
    got = _mine(snap, "wqa")
    assert got["13"].moves == ("releasing it: scontrol release 13",) and "priority 0" in got["13"].why
    assert "job 2 must end successfully (not yet) (squeue: afterok:2(unfulfilled))" in got["14"].why
    begin = got["15"].job.eligible_time
    assert begin is not None and f"it may start from {begin.astimezone():%Y-%m-%d %H:%M}" in got["15"].why
    assert got["15"].estimate.startswith("Start estimate: none yet (squeue's StartTime is its begin time")
    assert "(partition parked)" in got["16"].why
    assert got["16"].lines[1] == ("Place in parked: not in line until its reason clears; then 0 jobs now in line "
                                  "would be ahead of it (0 yours).")


def test_place_parts_and_the_schedulers_estimate(snap) -> None:  # type: ignore[no-untyped-def]
    got = _mine(snap, "wqb")
    first, second, third = got["6"], got["7"], got["8"]
    assert first.lines[1] == "Place in debug: first in line."
    # 8,571 > 8,071 (nice 500) > 7,571 (nice 1,000), all three wqb's; the limited and held jobs
    # of priority 7,142 and 0 come after them
    assert third.lines[1] == "Place in debug: 3rd; 2 jobs ahead of it, 2 of them yours."
    assert third.held_back_by is not None and (third.held_back_by.factor, third.held_back_by.mine,
                                               third.held_back_by.theirs) == ("NICE", 1000, 500)
    assert second.moves[-1] == "the job just ahead (6) is your own: your fairshare moves both alike"
    assert first.estimate == ("Start estimate (the scheduler's, squeue --start): 2026-11-28 "
                              f"{first.job.start_time.astimezone():%H:%M:%S} on sandbox-node "  # type: ignore[union-attr]
                              f"(read {snap.taken_at.astimezone():%H:%M:%S}, 30 s ago).")
    assert pending_summary(list(got.values())[:0]) == "no pending jobs"
    line = user_summary(build_standing(snap, "wqb"))
    assert line is not None
    assert line.parts[-1] == ("3 pending jobs, the nearest: 1st in debug; the scheduler estimates "
                              f"{first.job.start_time.astimezone():%H:%M}")  # type: ignore[union-attr]
    assert [f["ahead"] for f in line.facts["pending"]] == [0, 1, 2]  # type: ignore[union-attr]


def test_priority_behind_another_user_gives_fairshares_recovery_day(snap) -> None:  # type: ignore[no-untyped-def]
    # wqe's job 10 as if it waited its turn behind wqb's job 8: 7,571 - 4,285 = 3,286 apart
    jobs = tuple(replace(j, reason="Priority") if j.job_id == "10" else j for j in snap.jobs)
    standing = build_standing(replace(snap, jobs=jobs), "wqe")
    (p,) = explain_pending(standing)
    assert p.place is not None and p.place.just_ahead is not None and p.place.just_ahead.job_id == "8"
    assert p.held_back_by is not None and p.held_back_by.words == "fairshare"  # 4,286 against 8,571
    row = int(standing.my_rows[0])
    now = float(standing.fairshare.fairshare[row])  # type: ignore[union-attr]
    target = now + (7571 - 4285 + 1) / 10_000
    move = p.moves[-1]
    assert move.startswith(f"passing job 8 (priority 7,571, 3,287 above this job's 4,285 counting the tie) takes a "
                           f"fairshare factor of {target:.4f} (now {now:.4f}, PriorityWeightFairshare=10,000)")
    # Fair Tree: 3/7 now (wqe ranks 3rd of 7 users); 0.7573 takes 6/7, five users passed as its usage decays
    assert f"{now:.6f}" == "0.428571"
    rec = recovery(standing, row, half_lives=8, points=65)
    day = day_reached(rec, target)
    assert day is not None and 0 < day < 56
    assert f"around {rec.date_at(day).astimezone():%Y-%m-%d %H:%M}" in move and "not the scheduler's" in move
    assert p.short() == f"4th in debug, held back by fairshare; the scheduler estimates " \
        f"{p.job.start_time.astimezone():%H:%M}"  # type: ignore[union-attr]


def test_without_reasons_the_line_stays_as_before(snap) -> None:  # type: ignore[no-untyped-def]
    jobs = tuple(replace(j, reason=None) for j in snap.jobs)
    line = user_summary(build_standing(replace(snap, jobs=jobs), "wqb"))
    assert line is not None and line.parts[-1] == "3 pending jobs, top priority 8.6k"


def test_a_job_without_a_reason_says_why_it_has_none(snap) -> None:  # type: ignore[no-untyped-def]
    """Unknown, with the source's reason for it: the demo makes none up; a squeue without the column gives none."""
    from tui.sources.demo import demo_snapshot

    demo = demo_snapshot(seed=0, me="alice", now=T0)
    (job,) = explain_pending(build_standing(demo, "alice"), now=T0)
    assert job.why == "reason unknown (the demo cluster makes up no scheduler reasons)"
    assert _mine(snap, "wqc")["9"].why.startswith("AssocMaxJobsLimit: ")
    blank = replace(snap, jobs=tuple(replace(j, reason=None) for j in snap.jobs))
    first = {p.job.job_id: p for p in explain_pending(build_standing(blank, "wqc"), now=blank.taken_at)}["9"]
    assert first.why.startswith("reason unknown (the source's squeue has no Reason column")
