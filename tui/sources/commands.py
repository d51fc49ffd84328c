"""Run one Slurm client command: from an argument list (never a shell string), with a timeout.

Each command runs in its own process group, and the whole group is killed when it times out, when
the caller is interrupted, and after it exits: a wrapper script's children (a site's ``sshare``
that calls ssh, a hung ``sleep``) die with it instead of living on, orphaned, one per try.

:func:`run` and :class:`Output` live here so that :mod:`tui.sources.sacct` and
:mod:`tui.sources.slurm_cli` can both use them without importing each other;
``slurm_cli`` re-exports them.
"""

from __future__ import annotations

import os
import signal
import subprocess
import threading
from dataclasses import dataclass

from tui.sources.errors import SourceUnavailable

__all__ = ["DEFAULT_TIMEOUT", "Output", "kill_running", "refuse_new_commands", "run", "run_in_group"]

#: Seconds each command may take (slurmctld's own MessageTimeout default is 10 s).
DEFAULT_TIMEOUT = 20.0
#: stderr phrases of Slurm clients that could not reach slurmctld/slurmdbd.
_NO_ANSWER = ("Unable to contact slurm controller", "Socket timed out", "Connection refused",
              "Problem talking to the database", "Zero Bytes were transmitted", "Unable to establish connection")


_refused: list[str] = []
"""Why no command may start any more (empty while they may); set once, by the ending session."""
_refused_lock = threading.Lock()


def refuse_new_commands(reason: str) -> None:
    """From now on :func:`run` starts no command and raises :class:`SourceUnavailable` saying
    ``reason``: the session is ending (its terminal is gone), and a live source's refresh or a
    worker still running must not ask slurmctld for nobody."""
    with _refused_lock:
        if not _refused:
            _refused.append(reason)


_running: set[int] = set()
"""Process groups of the commands running now (their leaders' PIDs)."""


def kill_running() -> int:
    """Kill every command running now, with its children (a caller stopping before they answer:
    interrupted, or its deadline passed). Returns how many groups were signalled."""
    with _refused_lock:
        groups = list(_running)
    return sum(_kill_group(pgid) for pgid in groups)


def _kill_group(pgid: int) -> bool:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        return False  # all gone already
    return True


@dataclass(frozen=True)
class Output:
    """One command's result."""

    args: tuple[str, ...]
    returncode: int
    stdout: bytes
    stderr: str

    @property
    def first_error(self) -> str:
        lines = self.stderr.strip().splitlines()
        return lines[0].strip() if lines else ""


def _cmdline(args: list[str] | tuple[str, ...]) -> str:
    return " ".join(args)


def run_in_group(args: list[str], timeout: float) -> tuple[int, bytes, bytes]:
    """Run ``args`` (no shell, no input) in a process group of its own; return its exit status,
    stdout and stderr. Answered, timed out or interrupted, the whole group is killed: nothing it
    started outlives it. Raises ``subprocess.TimeoutExpired`` and ``OSError`` (not started)."""
    proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            shell=False, start_new_session=True)  # own session: no terminal for it either
    with _refused_lock:
        _running.add(proc.pid)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    finally:
        _kill_group(proc.pid)  # its id names no other group while any member of this one lives
        with _refused_lock:
            _running.discard(proc.pid)
        proc.stdout.close()  # type: ignore[union-attr]  # PIPE: never None
        proc.stderr.close()  # type: ignore[union-attr]
        proc.wait()
    return proc.returncode, stdout, stderr


def run(args: list[str], timeout: float = DEFAULT_TIMEOUT, check: bool = True) -> Output:
    """Run one Slurm client command (no shell) and return its output.

    Parameters
    ----------
    args : list of str
        The command and its arguments, e.g. ``["sshare", "-a", "-l", "-P"]``.
    timeout : float
        Seconds before the command is killed.
    check : bool
        Raise on a non-zero exit.

    Raises
    ------
    SourceUnavailable
        The command is not installed, timed out, or (with ``check``) exited non-zero; the message
        names the command and gives stderr's first line.
    """
    if _refused:
        raise SourceUnavailable(f"{args[0]}: not started: {_refused[0]}")
    try:
        returncode, stdout, stderr = run_in_group(args, timeout)
    except FileNotFoundError:
        raise SourceUnavailable(f"{args[0]}: command not found (is the Slurm client installed and on PATH?)") from None
    except PermissionError:
        raise SourceUnavailable(f"{args[0]}: permission denied") from None
    except subprocess.TimeoutExpired:
        raise SourceUnavailable(f"{_cmdline(args)}: no answer within {timeout:g} s "
                                "(is slurmctld up and SLURM_CONF right?)") from None
    except OSError as exc:
        raise SourceUnavailable(f"{args[0]}: {exc.strerror or exc}") from None
    out = Output(tuple(args), returncode, stdout, stderr.decode("utf-8", "replace"))
    if check and out.returncode != 0:
        raise SourceUnavailable(_failure(out))
    return out


def _failure(out: Output) -> str:
    why = out.first_error or "no message"
    if any(p in out.stderr for p in _NO_ANSWER):
        return f"{_cmdline(out.args)}: the Slurm controller does not answer: {why}"
    return f"{_cmdline(out.args)}: exit status {out.returncode}: {why}"
