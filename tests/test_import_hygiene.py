"""The engine, model, config, view and sources never import Textual (the app is one consumer)."""

from __future__ import annotations

import subprocess
import sys

import pytest

MODULES = ["tui.engine", "tui.model", "tui.config", "tui.view", "tui.sources", "tui.themes"]


@pytest.mark.parametrize("module", MODULES)
def test_no_textual(module: str) -> None:
    code = (
        "import importlib, pkgutil, sys\n"
        f"m = importlib.import_module({module!r})\n"
        "for info in pkgutil.walk_packages(getattr(m, '__path__', []), m.__name__ + '.'):\n"
        "    importlib.import_module(info.name)\n"
        "bad = sorted(n for n in sys.modules if n == 'textual' or n.startswith('textual.'))\n"
        "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "", f"{module} imports {out.stdout.strip()}"
