"""``./dev`` with a Python that is too old: it says so and how to fix it (a real Python 3.10)."""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _old_python() -> str | None:
    """A real Python 3.10 on this machine (pyenv or PATH), or None."""
    candidates = [*sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.10.*/bin/python3.10"))),
                  shutil.which("python3.10")]
    for found in filter(None, candidates):
        out = subprocess.run([found, "-c", "import sys; print(sys.version_info[:2])"], capture_output=True,
                             text=True)
        if out.returncode == 0 and out.stdout.strip() == "(3, 10)":
            return found
    return None


OLD = _old_python()
needs_old = pytest.mark.skipif(OLD is None, reason="no Python 3.10 here (PATH or ~/.pyenv) to make a too-old venv")


def _dev(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", str(ROOT / "dev"), *args], env={**os.environ, **env}, capture_output=True,
                          text=True, timeout=120)


@needs_old
def test_a_venv_made_by_an_old_python_is_named_with_the_fix(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run([OLD, "-m", "venv", "--without-pip", str(venv)], check=True)
    out = _dev({"FAIRTOP_VENV": str(venv)}, "demo")
    assert out.returncode == 1 and out.stdout == ""
    first, second = out.stderr.splitlines()
    assert re.fullmatch(rf"dev: {re.escape(str(venv))} was made by Python 3\.10\.\d+; fairtop needs 3\.11\+\.", first)
    assert second == f"dev: remove it and run again with a newer Python: rm -rf {venv} && PYTHON=python3.11 ./dev demo"


@needs_old
def test_an_old_python_makes_no_venv(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    out = _dev({"FAIRTOP_VENV": str(venv), "PYTHON": str(OLD)}, "test")
    assert out.returncode == 1
    assert out.stderr.startswith(f"dev: {OLD} is Python 3.10.") and "PYTHON=python3.11 ./dev test" in out.stderr
    assert not venv.exists()
