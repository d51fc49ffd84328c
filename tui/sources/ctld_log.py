"""slurmctld's log -> its decay cycle times and its starts (the usage law's cycle grid).

With ``DebugFlags=Priority`` slurmctld logs every decay cycle: under Fair Tree at ``info`` the
tree it computed (``_ft_debug:`` lines, the root first), and at ``verbose`` (``SlurmctldDebug``
or ``scontrol setdebug verbose``) ``Decay factor over N seconds ...``. The cycle's time is the
whole second it woke at, so a line's time floored is the cycle's (the line follows within
milliseconds). A start is the ``slurmctld version ... started`` line; its first cycle runs at once
(and, without a saved ``priority_last_decay_ran``, charges nothing before it).

Log times are local wall-clock times without a zone; pass ``tz`` (default: this machine's).
"""

from __future__ import annotations

import math
import re
from datetime import datetime, tzinfo

from tui.sources.sshare import decode

__all__ = ["ControllerLog", "parse_ctld_log"]

_STAMP = re.compile(r"^\[([0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]+)?)\] (.*)$")
_CYCLE = re.compile(r"Decay factor over [0-9.e+]+ seconds|_ft_debug:\s+root \(root\)")
_START = re.compile(r"slurmctld version \S+ started")
_STOP = re.compile(r"Terminate signal \(SIGINT or SIGTERM\) received|Saving all slurm state")


class ControllerLog:
    """Cycle times, starts and stops found in a slurmctld log (epoch seconds, increasing)."""

    def __init__(self, cycles: list[float], starts: list[float], stops: list[float]) -> None:
        self.cycles = cycles
        """Decay cycles (whole seconds)."""
        self.starts = starts
        """Controller starts (with their fraction of a second)."""
        self.stops = stops
        """Controller shutdowns."""


def parse_ctld_log(data: bytes | str, tz: tzinfo | None = None, source: str = "slurmctld.log") -> ControllerLog:
    """The decay cycles, starts and stops of a slurmctld log (see the module docstring).

    One cycle logs both a ``Decay factor`` line and the Fair Tree dump; lines within 2 s of a
    cycle's first line belong to it.
    """
    cycles: list[float] = []
    starts: list[float] = []
    stops: list[float] = []
    last_line = -math.inf
    for line in decode(data, source).splitlines():
        m = _STAMP.match(line)
        if not m:
            continue
        when = datetime.fromisoformat(m.group(1))
        t = (when.replace(tzinfo=tz) if tz is not None else when.astimezone()).timestamp()
        text = m.group(2)
        if _START.search(text):
            starts.append(t)
            last_line = -math.inf
        elif _STOP.search(text):
            if not stops or t - stops[-1] > 5:
                stops.append(t)
        elif _CYCLE.search(text):
            if t - last_line > 2.0:
                cycles.append(float(math.floor(t)))
            last_line = t
    return ControllerLog(cycles, starts, stops)
