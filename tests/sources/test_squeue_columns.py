"""squeue read as columns (issue 35's speed target): the same jobs, the same places in the queue as
the Job-per-line path, on the real capture tests/fixtures/pending_jobs and on generated queues."""

from __future__ import annotations

import random
import time
from dataclasses import replace

import pytest

from tests.conftest import FIXTURES
from tui.analysis.jobs import Queue, explain_pending, hidden_jobs
from tui.analysis.standing import build_standing
from tui.sources.saved import load_folder
from tui.sources.slurm_text import parse_squeue
from tui.sources.squeue_columns import squeue_columns

CAPTURE = FIXTURES / "pending_jobs" / "capture"
HEADER = ("JOBID|PARTITION|USER|ACCOUNT|STATE|TIME_LIMIT|SUBMIT_TIME|START_TIME|PRIORITY|TRES_ALLOC|REASON|"
          "SCHEDNODES|DEPENDENCY|REQ_NODES|NICE|QOS|ELIGIBLE_TIME|")
REASONS = ["Priority"] * 6 + ["Resources", "JobHeldUser", "Dependency", "BeginTime", "AssocMaxJobsLimit", "",
                              "None", "ReqNodeNotAvail, UnavailableNodes:n1"]


def _same_places(text: str) -> int:
    jobs = parse_squeue(text)
    cols = squeue_columns(text)
    assert cols is not None
    assert cols.jobs(range(len(cols))) == jobs
    by_objects, by_columns = Queue(jobs), Queue.of_columns(cols)
    assert len(by_objects) == len(by_columns) == sum(j.state == "PENDING" for j in jobs)
    assert by_columns.partitions == by_objects.partitions
    for job in jobs:
        assert by_columns.place(job) == by_objects.place(job), job.job_id
        assert by_columns.place(job, "hidden") == by_objects.place(job, "hidden")
    return len(by_objects)


def test_the_real_capture_reads_and_places_the_same() -> None:
    assert _same_places((CAPTURE / "squeue.txt").read_text()) > 0


def test_the_capture_explained_from_its_columns(tmp_path) -> None:  # type: ignore[no-untyped-def]
    # squeue's columns and the user's own jobs only: the same explanations as every job's Job
    # (the capture's sprio factors left out on both sides: the columns' jobs just ahead have none)
    snap = load_folder(CAPTURE)
    text = (CAPTURE / "squeue.txt").read_text()
    cols = squeue_columns(text)
    assert cols is not None
    whole = replace(snap, jobs=tuple(parse_squeue(text)))
    for user in sorted(set(cols.user)):
        own = replace(snap, jobs=tuple(cols.jobs(cols.rows_of(user))), queue=cols)
        now = snap.taken_at
        assert explain_pending(build_standing(own, user), now=now) == explain_pending(build_standing(whole, user),
                                                                                      now=now)
        assert hidden_jobs(own, user) == hidden_jobs(whole, user)


def _queue_text(n: int, seed: int) -> str:
    rnd = random.Random(seed)
    base = 1_795_000_000
    lines = [HEADER]
    job = 1000
    for k in range(n):
        job += 1
        state = "RUNNING" if rnd.random() < 0.1 else "PENDING"
        part = rnd.choice(["burn", "gpu", "short", "burn,gpu", "gpu,short"])
        if rnd.random() < 0.15:  # a job array's task; an unsplit array's range now and then
            job_id = f"{job - rnd.randrange(3)}_{rnd.randrange(20)}" if rnd.random() < 0.8 else f"{job}_[1-5]"
        else:
            job_id = str(job)
        # few distinct priorities and times: ties go to the submit time, then the id, then the task
        prio = str(rnd.choice((100, 200, 300, rnd.randrange(1, 10_000)))) if k % 97 or part != "short" else "N/A"
        submit = time.strftime("%Y-%m-%dT%H:%M:%S", time.localtime(base + rnd.randrange(5) * 60))
        if rnd.random() < 0.02:
            submit = "N/A"
        reason = rnd.choice(REASONS)
        lines.append(f"{job_id}|{part}|u{rnd.randrange(30)}|lab|{state}|1-00:00:00|{submit}|N/A|{prio}|"
                     f"cpu=1,mem=4G,node=1,billing=1|{reason}|(null)|(null)||0|normal|{submit}|")
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_generated_1000_job_queue_places_the_same(seed: int) -> None:
    assert _same_places(_queue_text(1000, seed)) > 800


def test_pending_only_and_empty_queues() -> None:
    text = _queue_text(200, 7)
    pending = "\n".join(line for line in text.splitlines() if "|RUNNING|" not in line) + "\n"
    assert _same_places(pending) > 0
    cols = squeue_columns(HEADER + "\n")
    assert cols is not None and len(cols) == 0 and len(Queue.of_columns(cols)) == 0


@pytest.mark.parametrize("text", [
    "JOBID PARTITION NAME USER ST TIME NODES NODELIST(REASON)\n1 burn x alice PD 0:00 1 (Priority)\n",
    HEADER + "\n1|burn|alice|lab|PENDING|1:00|N/A|N/A|5|cpu=1|Priority|\n",  # too few fields
    HEADER + "\n1|burn|alice|lab|WAITING|1:00|N/A|N/A|5|cpu=1|Priority|||||||\n",  # unknown state
    HEADER + "\n1|burn|alice|lab|PENDING|1:00|yesterday|N/A|5|cpu=1|Priority||||||||\n",  # not a time
    HEADER + "\n1|burn|alice|lab|PENDING|1:00|N/A|N/A|5|cpu=1|Priorité||||||||\n",  # not ASCII
    "JOBID|USER|STATE|\n1|alice|PENDING|\n",  # no priority, submit time, reason
])
def test_what_the_columns_do_not_read_goes_to_the_line_reader(text: str) -> None:
    assert squeue_columns(text) is None
