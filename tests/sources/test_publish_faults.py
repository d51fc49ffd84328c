"""The publisher under faults: a command that hangs, a full disk, a stop mid-capture.

Each fault is real: an ``sshare`` on PATH that hangs (a shell script whose children sleep), a
tmpfs of 2 MiB filled to the brim (root only), a SIGTERM to a running publisher. Through each,
``current`` stays on the last good capture, the reason is logged once per change of state, no
temporary folder and no child process is left, and publishing resumes by itself when the fault
goes. (slurmctld stopped: tests/sandbox/test_publish_faults_live.py.)
"""

from __future__ import annotations

import functools
import io
import os
import random
import signal
import stat
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.needs import needs, root
from tui.sources import slurm_cli
from tui.sources.commands import run
from tui.sources.errors import SourceUnavailable
from tui.sources.publish import CURRENT, publish_every

SSHARE = FIXTURES / "slurm" / "live" / "fair_tree" / "sshare_a_l_P.psv"


def _script(path: Path, body: str) -> None:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)


def _answering(bin_dir: Path) -> None:
    """An sshare that answers as the sandbox's did (the other Slurm commands are missing: soft)."""
    _script(bin_dir / "sshare", f"exec /bin/cat '{SSHARE}'\n")


def _hanging(bin_dir: Path, marker: str) -> None:
    """An sshare that never answers, and has a child of its own that never ends either."""
    _script(bin_dir / "sshare", f"/bin/sleep 3601.{marker} &\n/bin/sleep 3602.{marker}\n")


def _processes(marker: str) -> list[int]:
    """PIDs whose command line holds ``marker`` (this test's fake commands and their children)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit() and entry.name != str(os.getpid()):
            try:
                cmdline = (entry / "cmdline").read_bytes()
            except OSError:
                continue  # gone meanwhile
            if marker.encode() in cmdline:
                found.append(int(entry.name))
    return found


def _leftovers(root_dir: Path) -> list[str]:
    return sorted(p.name for p in root_dir.iterdir() if p.name.startswith("."))


@pytest.fixture
def fake_slurm(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, str]:
    """A PATH holding only the fake sshare, and the marker in the command line of its processes."""
    marker = str(random.randrange(10**8, 10**9))
    bin_dir = tmp_path / f"bin{marker}"  # the script's own: /bin/sh BIN/sshare -a -l -P
    bin_dir.mkdir()
    _answering(bin_dir)
    monkeypatch.setenv("PATH", str(bin_dir))
    return bin_dir, marker


def _phases(steps: list[Callable[[], None]]) -> Callable[[float], None]:
    """A publisher's sleep that, between rounds, brings on or takes away the next fault."""
    todo = iter(steps)

    def between_rounds(seconds: float) -> None:
        next(todo)()

    return between_rounds


def test_a_hung_command_is_killed_with_its_children(fake_slurm: tuple[Path, str]) -> None:
    bin_dir, marker = fake_slurm
    _hanging(bin_dir, marker)
    started = time.monotonic()
    with pytest.raises(SourceUnavailable, match=r"sshare -a -l -P: no answer within 0.5 s"):
        run(["sshare", "-a", "-l", "-P"], timeout=0.5)
    assert time.monotonic() - started < 5
    # the script, its sleep and its background sleep: all gone (SIGKILL sent to the group; a loaded
    # machine may take a moment to run the killed processes' exits)
    deadline = time.monotonic() + 10
    while _processes(marker) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert _processes(marker) == []


def test_publishing_goes_on_through_a_hung_sshare(tmp_path: Path, fake_slurm: tuple[Path, str]) -> None:
    bin_dir, marker = fake_slurm
    pub = tmp_path / "pub"
    children: list[list[int]] = []

    def check_and(step: Callable[[], None]) -> Callable[[], None]:
        def both() -> None:
            children.append(_processes(marker))
            step()
        return both

    steps = [check_and(lambda: _hanging(bin_dir, marker)), check_and(lambda: None),
             check_and(lambda: _answering(bin_dir)), check_and(lambda: None)]
    out, err = io.StringIO(), io.StringIO()
    published = publish_every(pub, functools.partial(slurm_cli.capture, timeout=1.0), every_s=0, count=5, out=out,
                              err=err, sleep=_phases(steps))
    assert published == 3  # up, hung, hung, up, up
    paths = [line.split(" ", 1)[1] for line in out.getvalue().splitlines()]
    assert (pub / CURRENT).resolve() == Path(paths[-1])
    lines = err.getvalue().splitlines()
    assert len(lines) == 2, lines
    assert lines[0].startswith("fairtop: capture failed: sshare -a -l -P: no answer within 1 s (is slurmctld up and "
                               f"SLURM_CONF right?) (current stays on {paths[0]};")
    assert lines[1].startswith("fairtop: capture recovered after 2 failed rounds in ")
    assert lines[1].endswith(f": current {paths[1]}")
    assert children == [[], [], [], []]  # after each round, hung or not: no child left
    assert _leftovers(pub) == []


def test_sigterm_stops_a_publisher_mid_capture_leaving_nothing(tmp_path: Path,
                                                              fake_slurm: tuple[Path, str]) -> None:
    bin_dir, marker = fake_slurm
    _hanging(bin_dir, marker)
    pub = tmp_path / "pub"
    pub.mkdir()
    publisher = subprocess.Popen(
        [sys.executable, "-c", "from tui.cli import main; raise SystemExit(main())", "capture", "--every", "10s",
         "--timeout", "60s", str(pub)], cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while len(_processes(marker)) < 3 and time.monotonic() < deadline:  # sh, sleep and the background sleep
            time.sleep(0.1)
        temporary = _leftovers(pub)
        assert len(_processes(marker)) == 3 and len(temporary) == 1 and temporary[0].endswith(".tmp")
        publisher.send_signal(signal.SIGTERM)
        stopped = time.monotonic()
        _, stderr = publisher.communicate(timeout=10)
        assert time.monotonic() - stopped < 3
    finally:
        if publisher.poll() is None:
            publisher.kill()
        for pid in _processes(marker):  # a failed run leaves no sleeper behind
            os.kill(pid, signal.SIGKILL)
    assert publisher.returncode == 128 + signal.SIGTERM, stderr
    assert _processes(marker) == []
    assert list(pub.iterdir()) == []  # the temporary folder removed with it


def test_a_publisher_sweeps_what_a_killed_one_left(tmp_path: Path, fake_slurm: tuple[Path, str]) -> None:
    pub = tmp_path / "pub"
    (pub / ".20261126T093000Z.tmp").mkdir(parents=True)
    (pub / ".20261126T093000Z.tmp" / "sshare_a_l_P.psv").write_text("half")
    (pub / ".current.tmp").symlink_to("20261126T093000Z")
    (pub / ".keep-me").write_text("not the publisher's")
    err = io.StringIO()
    assert publish_every(pub, slurm_cli.capture, every_s=0, count=1, out=io.StringIO(), err=err) == 1
    assert _leftovers(pub) == [".keep-me"]
    assert err.getvalue().count("left by a publisher stopped mid-capture") == 2


@needs(root("mounting a small tmpfs to fill the disk"))
def test_publishing_goes_on_through_a_full_disk(tmp_path: Path, fake_slurm: tuple[Path, str]) -> None:
    disk = tmp_path / "disk"
    disk.mkdir()
    mounted = subprocess.run(["/bin/mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(disk)], capture_output=True,
                             text=True, check=False)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs: {mounted.stderr.strip()}")
    try:
        pub, filler = disk / "pub", disk / "filler"
        seen: list[Path] = []

        def fill() -> None:  # all but 12 KiB: a capture's first files fit, the rest do not
            free = os.statvfs(disk).f_bavail * os.statvfs(disk).f_frsize
            filler.write_bytes(b"\0" * (free - 12 * 1024))

        def look() -> None:
            seen.append((pub / CURRENT).resolve())

        def free_space() -> None:
            look()
            filler.unlink()

        out, err = io.StringIO(), io.StringIO()
        published = publish_every(pub, slurm_cli.capture, every_s=0, count=4, out=out, err=err,
                                  sleep=_phases([fill, look, free_space]))
        paths = [Path(line.split(" ", 1)[1]) for line in out.getvalue().splitlines()]
        assert published == 2 and seen == [paths[0], paths[0]]  # up, full, full, up
        assert (paths[0] / "commands.txt").is_file()  # what stayed current is whole
        assert (pub / CURRENT).resolve() == paths[1]
        lines = err.getvalue().splitlines()
        assert len(lines) == 2, lines
        assert lines[0].startswith(f"fairtop: capture failed: {pub}: cannot write: No space left on device "
                                   f"(current stays on {paths[0]};")
        assert lines[1].startswith("fairtop: capture recovered after 2 failed rounds in ")
        assert _leftovers(pub) == []
    finally:
        subprocess.run(["/bin/umount", str(disk)], check=True)
