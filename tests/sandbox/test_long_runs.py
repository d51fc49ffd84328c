"""Integration: the live source and the publisher do not grow over many cycles on real Slurm.

The short version of ``bench/soak_live.py`` (1,000 cycles each, figures in bench/README.md): 20
live reads (every command each time, the standing built each time) and 12 captures published
back to back, against the CI sandbox. Fails when resident memory grows 10% or more after warm-up,
when more file descriptors are open at the end than after warm-up, or when a child is left. About
60 s in CI (90 s under load).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.conftest import ROOT
from tests.sandbox._sandbox import SKIP, first_env

pytestmark = [pytest.mark.sandbox, SKIP]


def test_live_source_and_publisher_stay_flat_over_many_cycles() -> None:
    env = first_env()
    env["PYTHONPATH"] = str(ROOT)
    done = subprocess.run([sys.executable, str(ROOT / "bench" / "soak_live.py"), "--live", "20", "--publish", "12",
                           "--user", "alice", "--check"], env=env, cwd=ROOT, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith("live source, 20 cycles") and "12 published" in lines[1], lines
    assert all("children [0]" in line for line in lines), lines
