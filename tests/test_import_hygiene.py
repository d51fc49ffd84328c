"""Layering: every module outside ``tui.app`` loads without Textual (one subprocess).

The allowed imports between the layers are import-linter contracts in ``pyproject.toml``
(``lint-imports``, run by ``.ci/run``); this test checks what actually lands in ``sys.modules``,
which also catches a third-party module that pulls Textual in. (Rich is not checked here:
httpx imports it for its own command line when it is installed; that our modules never import
Rich outside the app is an import-linter contract.)
"""

from __future__ import annotations

import pkgutil
import subprocess
import sys
from pathlib import Path

import tui

ROOT = Path(__file__).resolve().parents[1]


def headless_modules() -> list[str]:
    """Every module of the package except the app's."""
    names = [info.name for info in pkgutil.walk_packages(tui.__path__, "tui.")]
    return sorted(n for n in names if n != "tui.app" and not n.startswith("tui.app."))


def test_headless_modules_never_import_textual() -> None:
    modules = headless_modules()
    assert {"tui.engine.projection", "tui.analysis.breakdown", "tui.formats.sshare", "tui.sources.registry",
            "tui.cli", "tui.config"} <= set(modules)
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "print(','.join(sorted(n for n in sys.modules if n.split('.')[0] == 'textual')))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert out.stdout.strip() == ""
