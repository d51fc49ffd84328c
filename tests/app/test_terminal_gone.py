"""A session whose terminal is gone ends: fairtop in a real tmux pane, the tmux server killed.

Killing the server closes the pane's pseudo-terminal, as a dropped SSH connection closes the
login's. Started directly in the pane, fairtop used to die of the SIGHUP; started through
``runuser`` (as through ``su``, ``sudo`` or ``nohup``) SIGHUP does not reach it or is ignored,
and it ran on at most of a core, reading the dead terminal in a loop. Either way it must be gone
within 5 s, having spent under 1 s of CPU meanwhile.
"""

from __future__ import annotations

import os
import pwd
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (Debian package tmux)")

ROOT = Path(__file__).resolve().parents[2]
ALICE_ROW = re.compile(r"^ {4,}alice +\S.*[0-9]", re.MULTILINE)
TICKS = os.sysconf("SC_CLK_TCK")


def _stat(pid: int) -> tuple[str, float] | None:
    """``(state, CPU seconds)`` of ``pid`` from /proc, or None once it is reaped."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except (FileNotFoundError, ProcessLookupError):
        return None
    return fields[0], (int(fields[11]) + int(fields[12])) / TICKS  # state, utime + stime


def _children(pid: int) -> list[int]:
    try:
        return [int(p) for p in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    except FileNotFoundError:
        return []


def _descendants(pid: int) -> list[int]:
    return [d for child in _children(pid) for d in (child, *_descendants(child))]


def _fairtop_pid(pane_pid: int) -> int:
    """The Python process under the pane (the pane's own process, or runuser's child)."""
    for pid in [pane_pid, *_descendants(pane_pid)]:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[1:3] == [b"-m", b"tui.cli"]:
                return pid
        except FileNotFoundError:
            continue
    raise AssertionError(f"no fairtop process under pane pid {pane_pid}")


def _orphan_ends(tmp: Path, prefix: list[str]) -> None:
    tmp.chmod(0o777)  # the unprivileged user keeps its state and config here
    env = {"XDG_STATE_HOME": str(tmp / "state"), "XDG_CONFIG_HOME": str(tmp / "config"),
           "HOME": str(tmp), "TERM": "xterm-256color", "PYTHONDONTWRITEBYTECODE": "1"}
    tmux = ["tmux", "-L", f"fairtop-gone-{uuid.uuid4().hex[:8]}"]
    argv = [*prefix, sys.executable, "-m", "tui.cli", "--demo", "--user", "alice"]
    subprocess.run([*tmux, "new-session", "-d", "-s", "t", "-x", "120", "-y", "40", "-c", str(ROOT),
                    *(f"-e{k}={v}" for k, v in env.items()), *argv], check=True, env={**os.environ, **env})
    pid = None
    try:
        info = subprocess.run([*tmux, "display-message", "-p", "-t", "t", "#{pid} #{pane_pid}"],
                              capture_output=True, text=True, check=True).stdout.split()
        server, pane = int(info[0]), int(info[1])
        end = time.monotonic() + 60
        screen = ""
        while not ALICE_ROW.search(screen):
            assert time.monotonic() < end, f"fairtop did not draw its first screen:\n{screen}"
            time.sleep(0.1)
            screen = subprocess.run([*tmux, "capture-pane", "-p", "-t", "t"], capture_output=True, text=True).stdout
        pid = _fairtop_pid(pane)
        time.sleep(0.5)  # the first screen's work done
        before = _stat(pid)
        assert before is not None
        os.kill(server, signal.SIGKILL)
        gone_by = time.monotonic() + 5
        last = before
        while (now := _stat(pid)) is not None and now[0] != "Z" and time.monotonic() < gone_by:
            last = now
            time.sleep(0.05)
        assert now is None or now[0] == "Z", f"fairtop (pid {pid}) still runs 5 s after its terminal went away"
        spent = (now or last)[1] - before[1]
        assert spent < 1.0, f"fairtop spent {spent:.2f} s of CPU after its terminal went away"
        pid = None
    finally:
        if pid is not None and _stat(pid) is not None:
            os.kill(pid, signal.SIGKILL)
        subprocess.run([*tmux, "kill-server"], capture_output=True)


def test_a_session_started_in_the_pane_ends_with_its_terminal(tmp_path: Path) -> None:
    _orphan_ends(tmp_path, [])


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("runuser") is None,
                    reason="needs root and runuser to start fairtop as another user")
def test_a_session_started_through_runuser_ends_with_its_terminal(open_tmp: Path) -> None:
    _orphan_ends(open_tmp, ["runuser", "-u", _runuser_user(), "--"])


@pytest.fixture
def open_tmp() -> Iterator[Path]:
    """A folder the unprivileged user can reach: pytest's tmp_path lies under a 0700 folder as root (and a
    ``nobody`` that could not reach its config folder died of the PermissionError before its first screen)."""
    top = Path(tempfile.mkdtemp(prefix="fairtop-gone-", dir="/tmp"))
    yield top
    shutil.rmtree(top, ignore_errors=True)  # the user's own files in it are root's to remove


def _runuser_user() -> str:
    """``nobody`` if it may run this interpreter, else root (a pyenv under /root): runuser's
    watching parent, which keeps SIGHUP from fairtop, is the same for both."""
    try:
        pwd.getpwnam("nobody")
    except KeyError:
        return "root"
    probe = subprocess.run(["runuser", "-u", "nobody", "--", sys.executable, "-c", "import tui"], cwd=ROOT,
                           capture_output=True)
    return "nobody" if probe.returncode == 0 else "root"


# --- the watch itself, on a pseudo-terminal and a pipe of its own --------------------------------

def _watch_reports(fd: int, close: int) -> str:
    from tui.app.terminal_watch import TerminalWatch

    told: list[str] = []
    done = threading.Event()
    watch = TerminalWatch(lambda reason: (told.append(reason), done.set()), [fd], grace_s=60, period_s=0.2)
    watch.start()
    try:
        time.sleep(0.3)
        assert told == []  # a live terminal (or pipe) is not reported, however long it is idle
        os.close(close)
        assert done.wait(5), "the watch did not notice"
    finally:
        watch.stop()  # else it ends pytest once its grace is over
    return told[0]


def test_the_watch_reports_a_hung_up_terminal_and_a_closed_pipe() -> None:
    primary, secondary = os.openpty()
    try:
        assert _watch_reports(secondary, primary) == "the terminal hung up"
    finally:
        os.close(secondary)
    read_end, write_end = os.pipe()
    try:
        assert _watch_reports(read_end, write_end) == "its input closed"
    finally:
        os.close(read_end)


def test_the_watch_ends_a_process_whose_shutdown_hangs() -> None:
    """``on_gone`` returns but the process does not end (Textual blocked writing to the dead
    terminal): the watch ends it, 129, once its grace is over."""
    code = ("import os, time; from tui.app.terminal_watch import TerminalWatch\n"
            "p, s = os.openpty()\n"
            "TerminalWatch(lambda reason: None, [s], grace_s=0.5, period_s=0.2).start()\n"
            "os.close(p); time.sleep(60)\n")
    started = time.monotonic()
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, timeout=30)
    assert proc.returncode == 129
    assert time.monotonic() - started < 20


def test_no_command_starts_once_the_session_ends(tmp_path: Path) -> None:
    """In a process of its own: the refusal lasts for the rest of the process."""
    code = ("import sys; from tui.sources.commands import refuse_new_commands, run\n"
            "from tui.sources.errors import SourceUnavailable\n"
            "run(['touch', sys.argv[1]])\n"
            "refuse_new_commands('the terminal hung up')\n"
            "try:\n    run(['touch', sys.argv[2]])\nexcept SourceUnavailable as exc:\n    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "before"), str(tmp_path / "after")],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    assert out == "touch: not started: the terminal hung up\n"
    assert (tmp_path / "before").exists() and not (tmp_path / "after").exists()
