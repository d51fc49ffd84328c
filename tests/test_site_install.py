"""The site install (contrib/site-install.sh) and its Lmod module (contrib/lmod/fairtop.lua), for real.

The wheel is built once from this checkout, installed with its dependencies into a venv of the
system python3 under a temporary ROOT (no system site-packages: a missing dependency fails here as
it would on a site), and a normal user (``nobody``) in a login shell with MODULEPATH at the module
folder loads the module and runs ``fairtop``. Root only: it runs ``runuser``, and needs Debian's
``lmod`` (``.ci/run`` installs it). About 40 s on the shared 2-core box (the pip install).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, ROOT
from tests.needs import file, needs, root

LMOD_INIT = Path("/usr/share/lmod/lmod/init/bash")
SYSTEM_PYTHON = "/usr/bin/python3"
USER = "nobody"


def _system_python() -> str | None:
    """None if the system python3 can make the site venv (3.11+, venv and ensurepip), else what is missing."""
    check = "import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))"
    if not Path(SYSTEM_PYTHON).exists():
        return f"no {SYSTEM_PYTHON} to make the site venv of"
    if not subprocess.run([SYSTEM_PYTHON, "-c", check], stderr=subprocess.DEVNULL).returncode:
        return None
    return f"no {SYSTEM_PYTHON} 3.11+ with venv to make the site venv of (apt-get install python3-venv)"


pytestmark = needs(root("runs runuser as a normal user"), file(LMOD_INIT, "apt-get install lmod; .ci/run does so"),
                   _system_python())


@pytest.fixture(scope="module")
def site() -> Iterator[dict[str, Path]]:
    """ROOT (the installs), MODULEFILES and a snapshot folder, all readable by every user."""
    top = Path(tempfile.mkdtemp(prefix="fairtop-site-", dir="/tmp"))  # pytest's tmp_path is root-only (0700)
    top.chmod(0o755)
    try:
        t0 = time.monotonic()
        wheels = top / "wheels"
        subprocess.run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", str(ROOT), "-w", str(wheels)],
                       check=True, capture_output=True, timeout=300)
        wheel = next(wheels.glob("fairtop-*.whl"))
        built = time.monotonic() - t0
        # --no-compile: a test run needs no .pyc (the recipe itself keeps pip's default and compiles them)
        env = {**os.environ, "PYTHON": SYSTEM_PYTHON, "PIP_INSTALL_ARGS": "--no-compile"}
        done = subprocess.run([str(ROOT / "contrib" / "site-install.sh"), str(wheel), str(top / "root"),
                               str(top / "modules")], env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, done.stderr[-2000:]
        print(f"site install: wheel {built:.1f} s, venv and pip install {time.monotonic() - t0 - built:.1f} s")
        shutil.copytree(FIXTURES / "slurm" / "live" / "fair_tree", top / "snapshot")
        subprocess.run(["chmod", "-R", "a+rX", str(top)], check=True)
        yield {"root": top / "root", "modules": top / "modules", "snapshot": top / "snapshot", "wheel": wheel}
    finally:
        shutil.rmtree(top, ignore_errors=True)


def _login_shell(site: dict[str, Path], script: str) -> subprocess.CompletedProcess[str]:
    """``script`` in a login shell of USER (bash: nobody's own shell is nologin), MODULEPATH kept."""
    env = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "MODULEPATH": str(site["modules"]), "LANG": "C.UTF-8"}
    return subprocess.run(["runuser", "-l", USER, "-s", "/bin/bash", "-w", "MODULEPATH", "-c", script], env=env,
                          capture_output=True, text=True, timeout=120, cwd="/")


def test_the_recipe_installs_the_wheel_with_all_its_dependencies(site: dict[str, Path]) -> None:
    version = site["wheel"].name.split("-")[1]
    prefix = site["root"] / version
    assert (prefix / "bin" / "fairtop").resolve() == (prefix / "venv" / "bin" / "fairtop").resolve()
    assert sorted(p.name for p in (prefix / "bin").iterdir()) == ["fairtop"]  # nothing else goes on PATH
    check = subprocess.run([str(prefix / "venv" / "bin" / "python"), "-m", "pip", "check"], capture_output=True,
                           text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    cfg = (prefix / "venv" / "pyvenv.cfg").read_text()
    assert "include-system-site-packages = false" in cfg
    lua = (site["modules"] / "fairtop" / f"{version}.lua").read_text()
    assert f'local root = "{site["root"]}"' in lua


def test_module_load_puts_a_working_fairtop_on_path_for_a_normal_user(site: dict[str, Path]) -> None:
    done = _login_shell(site, "command -v fairtop || echo none; module load fairtop && command -v fairtop && "
                              "command -v python3 && fairtop --version && "
                              f"fairtop standing --from {site['snapshot']} --user la && "
                              "module unload fairtop && (command -v fairtop || echo gone)")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    version = site["wheel"].name.split("-")[1]
    assert lines == [
        "none",
        f"{site['root']}/{version}/bin/fairtop",
        "/usr/bin/python3",  # the venv's python does not shadow the user's
        f"fairtop {version}",
        "la (grp, 1 of 2) · FairShare 0.250000 · 6 of 8 users ahead of you · held back by lab (5th of 5 in root) "
        "· 2 pending jobs, the nearest: partition parked is down (PartitionDown)",
        "gone",
    ]


def test_module_help_and_a_missing_version_say_what_they_are(site: dict[str, Path]) -> None:
    done = _login_shell(site, "module help fairtop 2>&1; module load fairtop/0.0.0 2>&1; echo rc=$?")
    assert "fairtop standing         your standing in one line" in done.stdout
    assert "rc=1" in done.stdout
