"""A capture's zone: sacct prints wall-clock times without one, so the capture saves it and a reader
elsewhere (or with another TZ) reads the same instants."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from tests.conftest import ROOT
from tui.sources.errors import InputError
from tui.sources.sacct import load_saved_columns, load_saved_history
from tui.sources.saved import load_folder
from tui.sources.zone import ZONE_FILE, local_zone_name, saved_zone, zone_named

ALPHA = ROOT / "tests" / "fixtures" / "clusters" / "two_clusters" / "alpha"


@pytest.fixture
def tz(monkeypatch: pytest.MonkeyPatch) -> Iterator[pytest.MonkeyPatch]:
    """Set TZ for this process (``monkeypatch.setenv("TZ", ...)`` then ``time.tzset()``); put it back after."""
    yield monkeypatch
    monkeypatch.undo()
    time.tzset()


def _in(tz: pytest.MonkeyPatch, zone: str | None) -> None:
    if zone is None:
        tz.delenv("TZ", raising=False)
    else:
        tz.setenv("TZ", zone)
    time.tzset()


def test_zone_names() -> None:
    assert zone_named("UTC\n") is timezone.utc
    assert zone_named("+01:00").utcoffset(None) == timedelta(hours=1)
    assert zone_named("-0530").utcoffset(None) == timedelta(hours=-5, minutes=-30)
    berlin = zone_named("Europe/Berlin")
    assert datetime(2026, 7, 1, 12, tzinfo=berlin).utcoffset() == timedelta(hours=2)  # summer time
    assert datetime(2026, 11, 28, 12, tzinfo=berlin).utcoffset() == timedelta(hours=1)
    with pytest.raises(InputError, match=r"unknown time zone 'Mars/Olympus' \(an IANA name"):
        zone_named("Mars/Olympus")


def test_local_zone_name_follows_tz(tz: pytest.MonkeyPatch) -> None:
    _in(tz, "Europe/Berlin")
    assert local_zone_name() == "Europe/Berlin"
    _in(tz, ":America/New_York")  # glibc's "a file of the database" form
    assert local_zone_name() == "America/New_York"
    _in(tz, "")
    assert local_zone_name() == "UTC"
    _in(tz, "XYZ-3")  # a POSIX rule the database has no name for: its offset now (3 h east of UTC)
    assert local_zone_name() == "+03:00"


def test_a_capture_reads_the_same_instants_in_any_zone(tz: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """alpha was captured on a UTC machine: its sacct says alice's job started 2026-11-22T22:45:18."""
    assert (ALPHA / ZONE_FILE).read_text() == "UTC\n"
    start = datetime(2026, 11, 22, 22, 45, 18, tzinfo=timezone.utc).timestamp()
    bare = tmp_path / "bare"
    shutil.copytree(ALPHA, bare)
    (bare / ZONE_FILE).unlink()  # a capture made before fairtop saved its zone
    for zone in ("Europe/Berlin", "America/New_York", "UTC"):
        _in(tz, zone)
        jobs, _ = load_saved_history(ALPHA)
        alice = next(j for j in jobs if j.user == "alice")
        assert alice.start.timestamp() == start, zone
        cols = load_saved_columns(ALPHA)
        assert float(cols.start.min()) == start, zone
        assert load_folder(ALPHA).zone is timezone.utc
        # without the file the times are this machine's: 22:45:18 in Berlin is 21:45:18 UTC
        offset = datetime(2026, 11, 22, 22, 45, 18).astimezone().utcoffset()
        assert offset is not None
        assert next(j for j in load_saved_history(bare)[0] if j.user == "alice").start.timestamp() == \
            start - offset.total_seconds(), zone
        assert load_folder(bare).zone is None


def test_a_capture_in_a_summer_time_zone(tz: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """Printed in Berlin, a July time is UTC+2 and a November one UTC+1, wherever it is read."""
    folder = tmp_path / "berlin"
    shutil.copytree(ALPHA, folder)
    text = (folder / "sacct_a_P.psv").read_text().replace("2026-11-22T22:45:18", "2026-07-01T12:00:00")
    (folder / "sacct_a_P.psv").write_text(text)
    (folder / ZONE_FILE).write_text("Europe/Berlin\n")
    _in(tz, "Asia/Tokyo")
    jobs, _ = load_saved_history(folder)
    by_user = {j.user: j for j in jobs}
    assert by_user["alice"].start == datetime(2026, 7, 1, 10, 0, tzinfo=timezone.utc)
    assert by_user["bob"].start == datetime(2026, 11, 22, 21, 45, 24, tzinfo=timezone.utc)
    cols = load_saved_columns(folder)
    assert sorted(cols.start.tolist())[:2] == [datetime(2026, 7, 1, 10, tzinfo=timezone.utc).timestamp(),
                                                    datetime(2026, 11, 22, 21, 45, 24, tzinfo=timezone.utc).timestamp()]


def test_an_unknown_saved_zone_is_an_error(tmp_path: Path) -> None:
    (tmp_path / ZONE_FILE).write_text("Nowhere/Land\n")
    with pytest.raises(InputError, match="timezone.txt: unknown time zone 'Nowhere/Land'"):
        saved_zone(tmp_path)
    assert saved_zone(tmp_path / "absent") is None


PENDING = ROOT / "tests" / "fixtures" / "pending_jobs" / "capture"


def test_squeue_times_of_a_capture_are_read_in_its_zone(tz: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """squeue prints job 12's submit time 2026-11-28T03:08:58 and its estimate 03:18:57 in the
    capture's zone: UTC for the saved capture, New York's when the file says so, whoever reads it,
    by both of the source's readers (every job, and one user's columns)."""
    ny = tmp_path / "ny"
    shutil.copytree(PENDING, ny)
    (ny / ZONE_FILE).write_text("America/New_York\n")
    _in(tz, "Asia/Tokyo")
    for folder, hours in ((PENDING, 0), (ny, 5)):  # New York is UTC-5 in November
        shift = timedelta(hours=hours)
        for one_user in ("", "wqd"):
            snap = load_folder(folder, one_user)
            job = next(j for j in snap.jobs if j.job_id == "12")
            assert job.submit_time == datetime(2026, 11, 28, 3, 8, 58, tzinfo=timezone.utc) + shift, (folder, one_user)
            assert job.start_time == datetime(2026, 11, 28, 3, 18, 57, tzinfo=timezone.utc) + shift
        assert snap.queue is not None  # one user's read keeps the queue as columns
        assert float(snap.queue.submit.min()) == (datetime(2026, 11, 28, 3, 8, 55, tzinfo=timezone.utc)
                                                  + shift).timestamp()  # the earliest printed: 03:08:55


def test_pbs_qstat_times_of_a_capture_are_read_in_its_zone(tz: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """qstat -f -F json prints ctime strings ("Sat Nov 28 06:45:59 2026") in the server host's zone:
    ``capture --pbs`` saves it beside qstat_f.json, and the estimate keeps its instant."""
    from tui.sources.pbs_folder import load_pbs_folder
    from tui.sources.pbs_jobs import QSTAT_FILE

    (tmp_path / "resource_group").write_text("physics 100 root 60\npbsu2 1002 physics 10\n")
    (tmp_path / "usage.txt").write_text("pbsu2 1\n")
    shutil.copy(ROOT / "tests" / "fixtures" / "pbs_qstat" / "qstat_f.json", tmp_path / QSTAT_FILE)
    (tmp_path / ZONE_FILE).write_text("America/New_York\n")
    _in(tz, "Asia/Tokyo")
    job = next(j for j in load_pbs_folder(tmp_path).jobs if j.job_id == "1.fairtop-pbs")
    assert job.start_time == datetime(2026, 11, 28, 11, 45, 59, tzinfo=timezone.utc)  # 06:45:59 in New York


def test_the_jobs_pane_shows_times_as_the_cluster_printed_them(tz: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """squeue printed job 12's estimate 03:18:57 in New York: a reader in Tokyo sees 03:18, as printed,
    in the table, the title and the explanation, and the time it was read at on New York's clock."""
    from tui.analysis.jobs.view import jobs_view
    from tui.analysis.standing import build_standing

    ny = tmp_path / "ny"
    shutil.copytree(PENDING, ny)
    (ny / ZONE_FILE).write_text("America/New_York\n")
    _in(tz, "Asia/Tokyo")
    snap = load_folder(ny)
    view = jobs_view(build_standing(snap, "wqb"), "wqd", now=snap.taken_at + timedelta(minutes=15))
    assert view.title.endswith("the scheduler estimates 03:18; 0 running")
    assert view.lines[0].split()[-5:] == ["11-28", "03:18", "(15", "min", "old)"]
    estimate = next(line for line in view.details[0].splitlines() if line.startswith("Start estimate"))
    taken = snap.taken_at.astimezone(ZoneInfo("America/New_York"))
    assert estimate.startswith("Start estimate (the scheduler's, squeue --start): 2026-11-28 03:18:57")
    assert f"(read {taken:%H:%M:%S}, " in estimate
