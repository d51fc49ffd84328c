"""contrib/site-install.sh refuses an interpreter other users cannot run (issue 33).

The venv's ``python`` links to the interpreter that made it; one under a home directory (pyenv, conda, a
module) gives every other user ``bad interpreter: Permission denied`` after ``module load fairtop``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import ROOT

SCRIPT = ROOT / "contrib" / "site-install.sh"
SYSTEM_PYTHON = Path("/usr/bin/python3")  # a link to it keeps it a plain interpreter, not a venv's
pytestmark = pytest.mark.skipif(not SYSTEM_PYTHON.exists(), reason=f"no {SYSTEM_PYTHON}")


@pytest.fixture
def top() -> Iterator[Path]:
    """A folder every user can pass (pytest's tmp_path is 0700 as root)."""
    top = Path(tempfile.mkdtemp(prefix="fairtop-site-python-", dir="/tmp"))
    top.chmod(0o755)
    yield top
    shutil.rmtree(top)


def _install(python: Path, top: Path) -> subprocess.CompletedProcess[str]:
    wheel = top / "fairtop-0.1.0-py3-none-any.whl"
    wheel.write_bytes(b"")  # an empty wheel: pip fails on it, after the interpreter's check
    return subprocess.run([str(SCRIPT), str(wheel), str(top / "root"), str(top / "modules")],
                          env={**os.environ, "PYTHON": str(python)}, capture_output=True, text=True, timeout=120)


def test_an_interpreter_behind_a_private_directory_is_refused_in_one_line(top: Path) -> None:
    home = top / "home"  # as root's own home is
    home.mkdir()
    home.chmod(0o700)
    (home / "python3").symlink_to(SYSTEM_PYTHON)
    done = _install(home / "python3", top)
    assert done.returncode == 1
    assert done.stdout == ""
    assert done.stderr == (f"{SCRIPT}: other users cannot run {home}/python3: {home}/python3 ({home} is closed to "
                           f"them); pass a system interpreter: PYTHON=/usr/bin/python3 {SCRIPT} "
                           f"{top}/fairtop-0.1.0-py3-none-any.whl {top}/root {top}/modules\n")
    assert not (top / "root").exists()


def test_the_same_interpreter_in_an_open_directory_passes_the_check(top: Path) -> None:
    (top / "python3").symlink_to(SYSTEM_PYTHON)
    done = _install(top / "python3", top)
    assert "other users cannot run" not in done.stderr
    assert (top / "root" / "0.1.0" / "venv" / "bin" / "python").exists()  # made, then pip failed on the empty wheel
    assert done.returncode != 0
