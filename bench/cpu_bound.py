"""A CPU bound for one process under test: a cgroup with a CFS quota (root only).

On a shared 2-core machine the clients of a bench cannot offer ten times what an unbounded
service commits: they share its cores. Bounded to a fraction of one core, the service's capacity
is measured under that bound and the clients have the rest of the machine to offer a multiple
of it. The period is short (10 ms) so that a throttled process waits at most a few ms, not the
default 100 ms period's worth, which would show as latency of its own.
"""

from __future__ import annotations

import os
from pathlib import Path

PERIOD_US = 10_000
MIN_QUOTA_US = 1_000  # the kernel's least quota
_V1 = Path("/sys/fs/cgroup/cpu")


def _v2_root() -> Path | None:
    """The cgroup v2 hierarchy if it has the cpu controller (unified alone, or beside v1)."""
    for root in (Path("/sys/fs/cgroup"), Path("/sys/fs/cgroup/unified")):
        controllers = root / "cgroup.controllers"
        if controllers.exists() and "cpu" in controllers.read_text().split():
            return root
    return None


class CpuBound:
    """``percent`` of one core for the processes moved in with :meth:`add`; :meth:`close` removes
    the group (its processes go back to the root group)."""

    def __init__(self, percent: float) -> None:
        period = max(PERIOD_US, int(MIN_QUOTA_US * 100 / percent))  # a small share needs a longer period
        quota = max(MIN_QUOTA_US, round(period * percent / 100))
        name = f"fairtop-bench-{os.getpid()}"
        if (_V1 / "cpu.cfs_quota_us").exists():
            self.dir = _V1 / name
            self.dir.mkdir()
            (self.dir / "cpu.cfs_period_us").write_text(str(period))
            (self.dir / "cpu.cfs_quota_us").write_text(str(quota))
        elif (root := _v2_root()) is not None:
            self.dir = root / name
            self.dir.mkdir()
            (self.dir / "cpu.max").write_text(f"{quota} {period}")
        else:
            raise RuntimeError("no cgroup cpu controller to bound the service with")
        self.percent = percent

    def add(self, pid: int) -> None:
        """Move ``pid`` (all its threads; children it starts later follow it)."""
        (self.dir / "cgroup.procs").write_text(str(pid))

    def throttled_s(self) -> float:
        """Time the group's processes waited for their quota so far."""
        for line in (self.dir / "cpu.stat").read_text().splitlines():
            key, value = line.split()
            if key == "throttled_time":  # v1, ns
                return int(value) / 1e9
            if key == "throttled_usec":  # v2
                return int(value) / 1e6
        return 0.0

    def close(self) -> None:
        root = self.dir.parent
        for pid in (self.dir / "cgroup.procs").read_text().split():
            try:
                (root / "cgroup.procs").write_text(pid)
            except OSError:  # it ended meanwhile
                pass
        self.dir.rmdir()
