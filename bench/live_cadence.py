"""What one live session costs slurmctld and slurmdbd: commands issued over a simulated hour.

Replays the live source against the real sandbox capture (tests/fixtures/slurm/live, whose
PriorityCalcPeriod is 1 minute) on a simulated clock, with the app's refresh every
``refresh_rate`` seconds, and counts the commands. The comparison is the earlier behaviour: all
seven commands on every refresh (every 5 s). Run: ``.venv/bin/python bench/live_cadence.py``.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.sources.test_live_cadence import FakeCluster  # noqa: E402
from tui.sources.slurm_cli import Cadence, LiveSlurm  # noqa: E402


def simulate(refresh_s: float, hours: float = 1.0) -> tuple[Counter[str], float]:
    fake = FakeCluster()
    live = LiveSlurm(Cadence(jobs_s=refresh_s), runner=fake.run, clock=fake.clock)
    t0 = fake.now
    spent = 0.0
    while fake.now - t0 < hours * 3600:
        start = time.perf_counter()
        live.read()
        spent += time.perf_counter() - start
        fake.now += refresh_s
    return Counter(name for _, name in live.issued), spent


def main() -> None:
    for refresh in (30.0, 5.0):
        counts, spent = simulate(refresh)
        total = sum(counts.values())
        print(f"refresh_rate {refresh:g} s, calc period 60 s: {total} commands in an hour = {total / 60:.1f}/min "
              f"(sacctmgr {counts['sacctmgr_assoc_hdr.psv'] / 60:.2f}/min); {spent:.2f} s building snapshots")
        for name, n in sorted(counts.items()):
            print(f"    {name:<30} {n:>4}")
    print(f"before (all 7 commands every 5 s): {7 * 720} commands in an hour = {7 * 12:.1f}/min "
          f"(sacctmgr 12.0/min)")


if __name__ == "__main__":
    main()
