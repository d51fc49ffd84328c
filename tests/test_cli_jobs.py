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
