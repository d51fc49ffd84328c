"""The site-wide snapshot: a publisher with atomic captures, and sessions that follow it."""

from __future__ import annotations

import io
import shutil
import stat
from datetime import datetime, timezone
from pathlib import Path

import pytest

from tests.conftest import FIXTURES
from tui.cli import main
from tui.sources import registry
from tui.sources.publish import CURRENT, publish_every, publish_once

CAPTURES = [FIXTURES / "slurm" / "live" / "fair_tree", FIXTURES / "slurm" / "live" / "classic"]


def _copier(sources: list[Path]):
    """A capture function that writes the real sandbox captures in turn."""
    turn = iter(sources * 10)

    def capture(folder: Path) -> str:
        shutil.copytree(next(turn), folder, dirs_exist_ok=True)
        return "captured\n"

    return capture


def test_publish_is_atomic_and_keeps_the_newest(tmp_path: Path) -> None:
    root = tmp_path / "pub"
    capture = _copier(CAPTURES)
    times = [datetime(2026, 11, 22, 12, m, tzinfo=timezone.utc) for m in range(4)]
    paths = [publish_once(root, capture, keep=2, now=t)[0] for t in times]
    assert [p.name for p in paths] == ["20261122T120000Z", "20261122T120100Z", "20261122T120200Z",
                                      "20261122T120300Z"]
    assert (root / CURRENT).is_symlink() and (root / CURRENT).resolve() == paths[-1]
    assert sorted(p.name for p in root.iterdir()) == ["20261122T120200Z", "20261122T120300Z", CURRENT]


def test_a_failed_capture_leaves_current_on_the_last_good_one(tmp_path: Path) -> None:
    root = tmp_path / "pub"
    good, _ = publish_once(root, _copier(CAPTURES[:1]), keep=3)

    def broken(folder: Path) -> str:
        assert folder.is_dir() and stat.S_IMODE(folder.stat().st_mode) == 0o700  # nobody reads it half-made
        (folder / "sshare_a_l_P.psv").write_text("half")
        raise RuntimeError("sshare: Unable to contact slurm controller")

    out, err = io.StringIO(), io.StringIO()
    assert publish_every(root, broken, every_s=10, count=1, out=out, err=err, sleep=lambda s: None) == 0
    assert out.getvalue() == ""
    assert err.getvalue() == (f"fairtop: capture failed: sshare: Unable to contact slurm controller (current stays "
                              f"on {good}; retried every 10 s, said again only when the reason changes)\n")
    assert (root / CURRENT).resolve() == good
    assert sorted(p.name for p in root.iterdir()) == [good.name, CURRENT]  # no temporary folder left


def test_failures_are_logged_once_per_reason_and_the_recovery_once(tmp_path: Path) -> None:
    """Six rounds: down, down, down for another reason, down, up, up: three lines on stderr, not six."""
    root = tmp_path / "pub"
    copy = _copier(CAPTURES[:1])
    reasons = iter(["sshare: Unable to contact slurm controller"] * 2 + ["sshare: Socket timed out"] * 2)

    def flaky(folder: Path) -> str:
        reason = next(reasons, None)
        if reason:
            raise RuntimeError(reason)
        return copy(folder)

    now = [0.0]  # a clock that the publisher's sleep moves on: each round starts 300 s after the last

    def sleep(seconds: float) -> None:
        now[0] += seconds

    out, err = io.StringIO(), io.StringIO()
    assert publish_every(root, flaky, every_s=300, count=6, out=out, err=err, sleep=sleep,
                         clock=lambda: now[0]) == 2
    published = [line.split(" ", 1)[1] for line in out.getvalue().splitlines()]
    assert len(published) == 2 and (root / CURRENT).resolve() == Path(published[1])
    lines = err.getvalue().splitlines()
    assert lines == [
        "fairtop: capture failed: sshare: Unable to contact slurm controller (nothing published yet; retried "
        "every 5 min 0 s, said again only when the reason changes)",
        "fairtop: capture failed: sshare: Socket timed out (nothing published yet; retried every 5 min 0 s, said "
        "again only when the reason changes)",
        f"fairtop: capture recovered after 4 failed rounds in 20 min 0 s: current {published[0]}",
    ]


def test_two_sessions_follow_one_publisher(tmp_path: Path) -> None:
    root = tmp_path / "pub"
    capture = _copier(CAPTURES)  # Fair Tree, then classic
    publish_once(root, capture, keep=5, now=datetime(2026, 11, 22, 12, 0, tzinfo=timezone.utc))
    sessions = [registry.make("folder", str(root / CURRENT)) for _ in range(2)]
    assert all(s.is_live() for s in sessions)  # a symlink is followed
    first = [s.load() for s in sessions]
    assert [f.settings.algorithm for f in first] == ["fair_tree", "fair_tree"]
    assert all(s.load() is f for s, f in zip(sessions, first))  # nothing new: no re-read
    publish_once(root, capture, keep=5, now=datetime(2026, 11, 22, 12, 5, tzinfo=timezone.utc))
    assert [s.load().settings.algorithm for s in sessions] == ["classic", "classic"]


def test_cli_publishes_with_fake_slurm_commands(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    sshare = bin_dir / "sshare"
    sshare.write_text(f"#!/bin/sh\n/bin/cat '{CAPTURES[0] / 'sshare_a_l_P.psv'}'\n")
    sshare.chmod(sshare.stat().st_mode | stat.S_IEXEC)
    monkeypatch.setenv("PATH", str(bin_dir))
    assert main(["capture", "--every", "5m", "--count", "1", str(tmp_path / "pub")]) == 0
    line = capsys.readouterr().out
    assert line.startswith(f"current {tmp_path / 'pub'}/") and line.count("\n") == 1
    assert main(["report", "--from", str(tmp_path / "pub" / CURRENT), "--format", "csv"]) == 0
    assert capsys.readouterr().out.startswith("account,user,")
    with pytest.raises(SystemExit) as exit_info:  # argparse: a period of at least 10 s
        main(["capture", "--every", "1s", str(tmp_path / "x")])
    assert exit_info.value.code == 2 and "at least 10 s" in capsys.readouterr().err
