"""sacct -P parsing (usage history) on the real captures."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from tests.conftest import FIXTURES
from tui.sources.errors import InputError
from tui.sources.sacct import load_saved_history, parse_sacct, read_last_cycle, read_last_decay_ran, sacct_command

LIVE = FIXTURES / "slurm" / "live" / "fair_tree"
UTC = timezone.utc


def test_started_jobs_with_billing_from_alloc_tres() -> None:
    jobs = parse_sacct((LIVE / "sacct_a_P.psv").read_bytes(), "sacct_a_P.psv", UTC)
    assert [(j.job_id, j.account, j.user, j.billing, j.elapsed_s) for j in jobs] == [
        ("1", "grp", "la", 2e6, 3), ("2", "lsub", "lc", 1e6, 2), ("3", "root", "ld", 3e6, 1)]
    assert jobs[0].start == datetime(2026, 11, 21, 18, 42, 34, tzinfo=UTC)
    assert jobs[0].end == datetime(2026, 11, 21, 18, 42, 37, tzinfo=UTC)
    assert jobs[0].state == "COMPLETED"


def test_steps_are_skipped() -> None:
    jobs = parse_sacct((LIVE / "sacct_a_P_steps.psv").read_bytes(), "steps", UTC)
    assert [j.job_id for j in jobs] == ["1", "2", "3"]


def test_running_job_and_cpus_fallback() -> None:
    text = ("JobID|User|Account|AllocCPUS|State|Start|End|Elapsed\n"
            "7|u|a|4|RUNNING|2026-01-02T03:04:05|Unknown|1-00:00:10\n")
    (job,) = parse_sacct(text, "t", UTC)
    assert job.end is None and job.billing == 4.0 and job.elapsed_s == 86410


@pytest.mark.parametrize("text, why", [
    ("", "empty"),
    ("JobID|User|Start\n1|u|x\n", "header"),
    ("JobID|User|Account|AllocTRES|Start|End\n1|u|a|billing=1|2026-01-01T00:00:00\n", "cells"),
    ("JobID|User|Account|AllocTRES|Start|End\n1|u|a|billing=1|yesterday|Unknown\n", "not a time"),
    ("JobID|User|Account|AllocTRES|Start|End\n1|u|a|billing=x|2026-01-01T00:00:00|Unknown\n", "billing"),
])
def test_bad_input_is_one_input_error(text: str, why: str) -> None:
    with pytest.raises(InputError):
        parse_sacct(text, "bad.psv", UTC)


def test_last_cycle_and_folder() -> None:
    assert read_last_cycle("2026-11-21 18:43:43.056289599 +0000") == datetime(2026, 11, 21, 18, 43, 43, tzinfo=UTC)
    jobs, last = load_saved_history(LIVE, UTC)
    assert len(jobs) == 3 and last == datetime(2026, 11, 21, 18, 43, 43, tzinfo=UTC)


def test_missing_sacct_says_how_to_save_one(tmp_path) -> None:
    with pytest.raises(InputError, match="sacct -a -P -X"):
        load_saved_history(tmp_path)


def test_live_command_is_an_argument_list() -> None:
    args = sacct_command(datetime(2026, 1, 2, 3, 4, 5), user="a b;rm -rf /", account="x")
    assert args[:6] == ["sacct", "-a", "-P", "-X", "-D", "--starttime=2026-01-02T03:04:05"]
    assert "--user=a b;rm -rf /" in args and "--accounts=x" in args


def test_requeued_runs_running_jobs_qos_and_alloc_tres() -> None:
    # sacct -a -P -X -D: job 7 ran twice (requeued), job 8 still runs
    text = ("JobID|User|Account|Partition|QOS|AllocCPUS|AllocTRES|State|Start|End|ElapsedRaw\n"
            "7|u|a|burn|half|2|billing=2001,cpu=2,mem=100M,node=1|REQUEUED|2026-01-01T00:00:00|2026-01-01T00:00:30|30\n"
            "7|u|a|burn|half|2|billing=2001,cpu=2,mem=100M,node=1|COMPLETED|2026-01-01T00:01:00|2026-01-01T00:01:50|50\n"
            "8|v|a|burn|normal|1|billing=1000,cpu=1,node=1|RUNNING|2026-01-01T00:02:00|Unknown|10\n")
    jobs = parse_sacct(text, tz=timezone.utc)
    assert [(j.job_id, j.state, j.elapsed_s) for j in jobs] == [("7", "REQUEUED", 30), ("7", "COMPLETED", 50),
                                                                 ("8", "RUNNING", 10)]
    assert jobs[2].end is None and jobs[0].qos == "half" and jobs[0].partition == "burn"
    assert jobs[0].alloc_tres == {"billing": 2001.0, "cpu": 2.0, "mem": 100.0, "node": 1.0}


def test_priority_last_decay_ran_state_file() -> None:
    data = (1795833594).to_bytes(8, "big") + (1795833534).to_bytes(8, "big")
    ran, reset = read_last_decay_ran(data)
    assert (ran.timestamp(), reset.timestamp()) == (1795833594, 1795833534)
    with pytest.raises(InputError, match="8 bytes"):
        read_last_decay_ran(data[:8])
