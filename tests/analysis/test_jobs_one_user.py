"""The one-user path (``fairtop jobs``, ``fairtop standing``: ``Source.one_user``): squeue read as
columns, ``Job`` made for the user's jobs and the jobs just ahead only, explains exactly as the
path that makes every job, on the real 22.05 capture (tests/fixtures/pending_jobs)."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.analysis.jobs import explain_pending
from tui.analysis.standing import build_standing
from tui.analysis.summary import user_summary
from tui.sources.saved import load_folder

CAPTURE = FIXTURES / "pending_jobs" / "capture"
NOW = datetime(2026, 11, 28, 4, 0, tzinfo=timezone.utc)
USERS = ("wqa", "wqb", "wqc", "wqd", "wqe", "wqf")


@pytest.mark.parametrize("user", USERS)
def test_columns_and_objects_explain_alike(user: str) -> None:
    every = load_folder(CAPTURE)
    one = load_folder(CAPTURE, one_user=user)
    assert every.queue is None and one.queue is not None and len(one.queue) == 15
    assert {j.user for j in one.jobs} <= {user}
    assert sorted(j.job_id for j in one.jobs) == sorted(j.job_id for j in every.jobs if j.user == user)
    expected = explain_pending(build_standing(every, user), now=NOW)
    got = explain_pending(build_standing(one, user), now=NOW)
    assert got == expected  # the jobs ahead too, with their sprio factors
    assert [p.lines for p in got] == [p.lines for p in expected]
    a, b = user_summary(build_standing(every, user)), user_summary(build_standing(one, user))
    assert a is not None and b is not None and (a.text, a.facts) == (b.text, b.facts)


def test_the_job_just_ahead_carries_its_sprio_parts() -> None:
    got = explain_pending(build_standing(load_folder(CAPTURE, one_user="wqb"), "wqb"), now=NOW)
    seventh = next(p for p in got if p.job.job_id == "7")
    assert seventh.place is not None and seventh.place.just_ahead is not None
    assert seventh.place.just_ahead.job_id == "6"
    assert seventh.place.just_ahead.factors["FAIRSHARE"] == 8571.0
    assert seventh.held_back_by is not None and (seventh.held_back_by.factor, seventh.held_back_by.mine,
                                                 seventh.held_back_by.theirs) == ("NICE", 500.0, 0.0)


def test_sprio_listing_a_job_squeue_does_not_reads_every_job(tmp_path: Path) -> None:
    """A job submitted between the two commands: the object path adds it as pending, so the
    columns step aside."""
    folder = tmp_path / "capture"
    shutil.copytree(CAPTURE, folder)
    sprio = folder / "sprio_l.txt"
    sprio.write_text(sprio.read_text() + "             99 debug          wqz       9999          0          0"
                     "          0       9999          0          0          0           0                     \n")
    one = load_folder(folder, one_user="wqb")
    assert one.queue is None and "99" in {j.job_id for j in one.jobs}


def test_live_slurm_serves_one_user_the_same_way() -> None:
    """``fairtop jobs --slurm`` (``SlurmSource.one_user``): the live refresh's outputs (here the
    capture's, the commands faked) give the columns, and the same explanations."""
    from tests.sources.test_live_cadence import FakeCluster
    from tui.sources.registry import SlurmSource
    from tui.sources.slurm_cli import LiveSlurm, Output

    class Capture(FakeCluster):
        def run(self, args: list[str], timeout: float) -> Output:
            path = CAPTURE / self.by_args[tuple(args)]
            return Output(tuple(args), 0, path.read_bytes() if path.exists() else b"", "")

    def read(one_user: bool):  # noqa: ANN202 - a Snapshot
        fake = Capture()
        source = SlurmSource(me="wqb")
        source._live = LiveSlurm(runner=fake.run, clock=fake.clock)
        source.one_user = one_user
        return source.load()

    every, one = read(False), read(True)
    assert every.queue is None and one.queue is not None and {j.user for j in one.jobs} == {"wqb"}
    expected = explain_pending(build_standing(every, "wqb"), now=NOW)
    assert explain_pending(build_standing(one, "wqb"), now=NOW) == expected and len(expected) == 3


def test_sprio_lines_are_found_by_job_id_without_parsing() -> None:
    from tui.sources.saved import _sprio_lines

    text = (CAPTURE / "sprio_l.txt").read_text()
    found = _sprio_lines(text)
    assert found is not None and sorted(found.first, key=int) == ["6", "7", "8", "9", "10", "11", "12", "16"]
    assert found.of("7").splitlines()[1].split()[:4] == ["7", "debug", "wqb", "8071"]
    twice = _sprio_lines(text + "              7 burn           wqb       8071          0          0          0"
                                "       8571          0          0          0         500\n")
    assert twice is not None and twice.more == {"7": [1, 8]}
    assert [line.split()[1] for line in twice.of("7").splitlines()[1:]] == ["debug", "burn"]
    assert _sprio_lines("not sprio\n") is None
