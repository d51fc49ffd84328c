"""``fairtop jobs``: why the user's pending jobs wait, from the source fairtop reads (a real Slurm 22.05
capture of every reason: tests/fixtures/pending_jobs)."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from tui.cli import main

CAPTURE = FIXTURES / "pending_jobs" / "capture"


@pytest.fixture(autouse=True)
def _no_config(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", "/nonexistent")
    for name in ("FAIRTOP_CONFIG", "FAIRTOP_USER"):
        monkeypatch.delenv(name, raising=False)


def test_each_pending_job_explained(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "--from", str(CAPTURE), "--user", "wqb"]) == 0
    out = capsys.readouterr().out
    head, first, second, third = out.rstrip("\n").split("\n\n")
    assert head.startswith("wqb: 3 pending jobs, the nearest: 1st in debug; the scheduler estimates ")
    assert first.splitlines()[:2] == [
        "Job 6 (debug): Resources: it is next in line and waits for enough free resources (CPUs, memory, GPUs, nodes).",
        "Place in debug: first in line."]
    assert second.splitlines()[1] == "Place in debug: 2nd; 1 job ahead of it, 1 of them yours."
    assert third.splitlines()[0].startswith("Job 8 (debug): Priority:")


def test_no_pending_job_and_an_unreadable_source(capsys: pytest.CaptureFixture[str], tmp_path) -> None:
    assert main(["jobs", "--from", str(CAPTURE), "--user", "wqf"]) == 0  # wqf's only job runs
    assert capsys.readouterr().out == f"wqf: no pending jobs in {CAPTURE}\n"
    assert main(["jobs", "--from", str(tmp_path / "nothing"), "--user", "wqb"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("fairtop jobs: ") and len(err.splitlines()) == 1


def test_json_and_csv_give_a_row_per_pending_job(capsys: pytest.CaptureFixture[str]) -> None:
    import csv
    import io
    import json

    assert main(["jobs", "--from", str(CAPTURE), "--user", "wqb", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    # squeue.txt: jobs 6, 7, 8 of wqb, priorities 8571/8071/7571, Nice 0/500/1000, StartTime as printed
    assert [(r["job_id"], r["priority"], r["reason"], r["ahead"], r["own_ahead"]) for r in rows] == [
        ("6", 8571, "Resources", 0, 0), ("7", 8071, "Priority", 1, 1), ("8", 7571, "Priority", 2, 2)]
    assert [r["start_estimate"] for r in rows] == [
        "2026-11-28T03:18:57+00:00", "2026-11-28T03:23:00+00:00", "2026-11-28T03:28:00+00:00"]
    assert [(r["held_back_by"], r["factor"], r["factor_mine"], r["factor_theirs"]) for r in rows] == [
        (None, None, None, None), ("nice", "NICE", 500.0, 0.0), ("nice", "NICE", 1000.0, 500.0)]  # sprio_l.txt
    assert rows[0]["sched_nodes"] == "sandbox-node" and rows[0]["reason_words"].startswith("Resources: it is next")
    assert main(["jobs", "--from", str(CAPTURE), "--user", "wqb", "--format", "csv"]) == 0
    table = list(csv.DictReader(io.StringIO(capsys.readouterr().out)))
    assert [(r["job_id"], r["priority"], r["held_back_by"]) for r in table] == [
        ("6", "8571", ""), ("7", "8071", "nice"), ("8", "7571", "nice")]
    assert main(["jobs", "--from", str(CAPTURE), "--user", "wqf", "--format", "json"]) == 0  # only a running job
    assert capsys.readouterr().out == "[]\n"


def test_table_lists_pending_then_running_as_the_pane_does(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["jobs", "--from", str(CAPTURE), "--user", "wqb", "--format", "table"]) == 0
    title, header, *lines = capsys.readouterr().out.splitlines()
    assert title.startswith("Jobs of wqb: 3 pending jobs, the nearest: 1st in debug;") and title.endswith("0 running")
    assert header.split() == ["Job", "Partition", "State", "Reason", "Place", "Held", "back", "by", "Start",
                              "estimate"]
    assert [line.split()[:4] for line in lines] == [["6", "debug", "pending", "Resources"],
                                                    ["7", "debug", "pending", "Priority"],
                                                    ["8", "debug", "pending", "Priority"]]
    assert "2nd: 1 ahead, 1 yours" in lines[1] and "nice" in lines[1]
