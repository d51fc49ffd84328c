"""slurmctld's log -> its decay cycle times and its starts (the usage law's cycle grid).

With ``DebugFlags=Priority`` slurmctld logs every decay cycle: under Fair Tree at ``info`` the
tree it computed (``_ft_debug:`` lines, the root first), and at ``verbose`` (``SlurmctldDebug``
or ``scontrol setdebug verbose``) ``Decay factor over N seconds ...``. The cycle's time is the
whole second it woke at, so a line's time floored is the cycle's (the line follows within
milliseconds). A start is the ``slurmctld version ... started`` line; its first cycle runs at once
(and, without a saved ``priority_last_decay_ran``, charges nothing before it).

A reconfigure (``scontrol reconfigure``, SIGHUP) is logged as ``Reconfigure signal (SIGHUP)
received``. Up to 23.02 slurmctld rereads its config in place and its cycles go on (a 22.05 reconfigure
forces no cycle: ../shared/slurm-sandbox/README.md). From 23.11 it
re-execs itself, and the log says so as a restart does: on a real 26.05.3 (``DebugFlags=Priority``,
PriorityCalcPeriod 1 minute, tests/fixtures/slurm-26.05/ctld_log/reconfigure_2605)

    [06:52:52.283] ... _ft_debug:     root (root):  inf          <- a cycle on the old grid
    [06:52:53.890] Processing Reconfiguration Request
    [06:52:53.890] Reconfigure signal (SIGHUP) received
    [06:52:53.917] Saving all slurm state                          <- a stop
    [06:52:54.033] Attempting to reconfigure
    [06:52:54.063] slurmctld version 26.05.3 started on cluster    <- a start
    [06:52:54.105] ... _apply_new_usage: job 1 ran for 2 seconds   <- charged from the last cycle
    [06:52:54.105] ... _ft_debug:     root (root):  inf          <- its first cycle, at once
    [06:53:54.105] ... _ft_debug:     root (root):  inf          <- the grid re-anchored (not 06:53:52)

so the re-exec is read as a stop and a start (an anchor of :func:`tui.engine.usage_law.anchored_cycles`),
and :attr:`ControllerLog.reconfigures` lists the reconfigures themselves (a 22.05 one is not followed
by a start, and its grid goes on).

Log times are local wall-clock times without a zone; pass ``tz`` (default: this machine's).
``fairtop capture`` saves the lines this module reads (:func:`priority_lines`) as
``slurmctld_cycles.log``, each time with its zone (``+00:00``), so a capture read elsewhere keeps
its times (:func:`load_saved_log`).
"""

from __future__ import annotations

import math
import re
from datetime import datetime, tzinfo
from pathlib import Path

from tui.sources.sshare import decode

__all__ = ["CYCLES_FILE", "ControllerLog", "load_saved_log", "parse_ctld_log", "priority_lines"]

CYCLES_FILE = "slurmctld_cycles.log"
"""A capture's copy of the log's cycle, start and stop lines (:func:`priority_lines`)."""

_STAMP = re.compile(r"^\[([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?"
                    r"(?:[+-][0-9]{2}:[0-9]{2})?)\] (.*)$")
_CYCLE = re.compile(r"Decay factor over [0-9.e+]+ seconds|_ft_debug:\s+root \(root\)")
_START = re.compile(r"slurmctld version \S+ started")
_STOP = re.compile(r"Terminate signal \(SIGINT or SIGTERM\) received|Saving all slurm state")
_RECONF = re.compile(r"Reconfigure signal \(SIGHUP\) received|Processing Reconfiguration Request")


class ControllerLog:
    """Cycle times, starts and stops found in a slurmctld log (epoch seconds, increasing)."""

    def __init__(self, cycles: list[float], starts: list[float], stops: list[float],
                 reconfigures: list[float] | None = None) -> None:
        self.cycles = cycles
        """Decay cycles (whole seconds)."""
        self.starts = starts
        """Controller starts (with their fraction of a second), a 23.11+ reconfigure's re-exec among them."""
        self.stops = stops
        """Controller shutdowns (a 23.11+ reconfigure's state save among them)."""
        self.reconfigures = reconfigures or []
        """Reconfigure requests (SIGHUP)."""

    def reexecs(self) -> list[float]:
        """The starts that a reconfigure caused (a 23.11+ re-exec): within 10 s after one."""
        return [s for s in self.starts if any(0 <= s - r <= 10 for r in self.reconfigures)]


def parse_ctld_log(data: bytes | str, tz: tzinfo | None = None, source: str = "slurmctld.log") -> ControllerLog:
    """The decay cycles, starts, stops and reconfigures of a slurmctld log (see the module docstring).

    One cycle logs both a ``Decay factor`` line and the Fair Tree dump; lines within 2 s of a
    cycle's first line belong to it.
    """
    cycles: list[float] = []
    starts: list[float] = []
    stops: list[float] = []
    reconfigures: list[float] = []
    last_line = -math.inf
    for line in decode(data, source).splitlines():
        m = _STAMP.match(line)
        if not m:
            continue
        when = datetime.fromisoformat(m.group(1))
        if when.tzinfo is None:
            when = when.replace(tzinfo=tz) if tz is not None else when.astimezone()
        t = when.timestamp()
        text = m.group(2)
        if _START.search(text):
            starts.append(t)
            last_line = -math.inf
        elif _RECONF.search(text):
            if not reconfigures or t - reconfigures[-1] > 5:
                reconfigures.append(t)
        elif _STOP.search(text):
            if not stops or t - stops[-1] > 5:
                stops.append(t)
        elif _CYCLE.search(text):
            if t - last_line > 2.0:
                cycles.append(float(math.floor(t)))
            last_line = t
    return ControllerLog(cycles, starts, stops, reconfigures)


def priority_lines(data: bytes | str, tz: tzinfo | None = None, source: str = "slurmctld.log") -> bytes:
    """The lines of a slurmctld log that :func:`parse_ctld_log` reads (cycles, starts, stops), each
    time given its zone (``tz``, default this machine's): what a capture saves (:data:`CYCLES_FILE`),
    a few lines a cycle instead of the whole log (no job, user or node names)."""
    keep = []
    for line in decode(data, source).splitlines():
        m = _STAMP.match(line)
        if not m or not any(p.search(m.group(2)) for p in (_CYCLE, _START, _STOP, _RECONF)):
            continue
        when = datetime.fromisoformat(m.group(1))
        if when.tzinfo is None:
            when = when.replace(tzinfo=tz) if tz is not None else when.astimezone()
        text = m.group(2)
        keep.append(f"[{when.isoformat(timespec='milliseconds')}] {text}\n")
    return "".join(keep).encode()


def load_saved_log(folder: str | Path) -> ControllerLog | None:
    """A capture's saved cycles (:data:`CYCLES_FILE`), or None when it has none (a capture not on the
    controller's host, or of a controller without ``DebugFlags=Priority``)."""
    path = Path(folder) / CYCLES_FILE
    if not path.is_file():
        return None
    log = parse_ctld_log(path.read_bytes(), source=str(path))
    return log if log.cycles else None
