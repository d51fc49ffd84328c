"""Integration: regenerate a capture from the real Slurm 22.05 and 26.05 sandboxes and check the
engine on it (each printed as its release prints).

CI (``.ci/run``, as root) starts the sandbox and sets ``FAIRTOP_SANDBOX``; elsewhere this is
skipped with the reason shown by ``pytest -ra``.
"""

from __future__ import annotations

import os
import subprocess

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.sandbox._sandbox import on_release, release_env
from tests.slurm_oracle import mismatches
from tui.sources.saved import load_folder

pytestmark = [
    pytest.mark.sandbox,
    pytest.mark.skipif(not os.environ.get("FAIRTOP_SANDBOX"),
                       reason="FAIRTOP_SANDBOX not set: no real Slurm sandbox (CI starts one as root)"),
]


@pytest.mark.parametrize("release", [pytest.param(r, marks=on_release(r)) for r in ("22.05", "24.11", "26.05")])
def test_live_capture_matches_the_engine(tmp_path, release):
    script = ROOT / "tests" / "sandbox" / "run_live_capture.sh"
    env = release_env(release)
    if os.environ["FAIRTOP_SANDBOX"] not in ("", "1"):
        env["SANDBOX_SCRIPTS"] = os.environ["FAIRTOP_SANDBOX"]
    done = subprocess.run([str(script), str(FIXTURES / "slurm" / "live"), str(tmp_path)],
                          env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    for variant, algorithm in (("fair_tree", "fair_tree"), ("classic", "classic")):
        folder = tmp_path / variant
        assert load_folder(folder).settings.algorithm == algorithm
        assert (load_folder(folder).scheduler_version or "").startswith(release + ".")
        bad, checked = mismatches(folder)
        assert checked >= 4 * 12  # 12+ associations, 4+ computed columns each
        assert bad == []
        # usage really accrued: the three jobs ran
        assert load_folder(folder).tree.usage_raw[0] > 5_000_000
