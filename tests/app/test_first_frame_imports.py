"""The first frame waits for nothing it does not draw: a start on a login node pays every import
in file system calls (a round trip each on NFS or Lustre), so the demo's first data frame must not
import the panes behind other tabs, the planner, the plotting library or the HTTP client.

One subprocess starts the app headless on the demo, waits for the tree's rows, and lists what
``sys.modules`` holds of the modules below.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

NOT_AT_FIRST_FRAME = ("httpx", "plotext", "textual_plotext", "tui.analysis.planner", "tui.allocations.client",
                      "tui.app.panes.breakdown", "tui.app.panes.whatif", "tui.app.panes.history",
                      "tui.app.panes.allocations", "tui.engine.projection", "sqlite3",
                      "numpy.ma", "numpy.typing",
                      # config's package folder without importlib.resources (11 modules, zipfile)
                      "importlib.resources", "zipfile",
                      # the demo's history (sacct's parser), the breakdown, the reconciliation of
                      # printed values, the CSV/JSON writers, passwords, the help screen, `:` commands
                      "tui.sources.sacct", "tui.sources.slurm_text", "tui.analysis.breakdown",
                      "tui.analysis.reconcile", "tui.formats.tabular", "json", "csv", "tui.security.passwords",
                      "tui.app.screens.help", "shlex", "getpass")
"""Modules (and their submodules) the first frame of the tree tab at 120x40 has no use for: each
costs a start ~7 file system calls (the folder, the source twice, the ``.pyc`` and its fstats)."""

FIRST_FRAME = """
import asyncio, gc, sys
gc.disable()  # as run_app does: the app turns the collector back on once its first frame is drawn
from functools import partial
from tui.app.app import FairtopApp
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.config import Settings, State
from tui.sources.demo import demo_snapshot

async def main() -> None:
    app = FairtopApp(Settings(), partial(demo_snapshot, users=400, accounts=80, me="alice"), "alice", State())
    async with app.run_test(size=(120, 40)) as pilot:
        for _ in range(200):
            await pilot.pause(0.05)
            if len(app.query_one(FairshareTree).order):
                break
        print("rows", len(app.query_one(FairshareTree).order))
        print("collector", gc.isenabled())
asyncio.run(main())
print(" ".join(sorted(sys.modules)))
"""


def test_the_first_frame_imports_only_what_it_draws(tmp_path: Path) -> None:
    env = {"XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(tmp_path / "state"),
           "PATH": "/usr/bin:/bin", "HOME": str(tmp_path)}
    run = subprocess.run([sys.executable, "-c", FIRST_FRAME], capture_output=True, text=True, check=False,
                         cwd=ROOT, env=env, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    out = run.stdout.splitlines()
    rows = int(out[-3].split()[1])
    assert rows > 100  # the frame was drawn with data
    assert out[-2] == "collector True"  # held off for the start only
    loaded = out[-1].split()
    assert "tui.app.widgets.fairshare_tree" in loaded and "numpy" in loaded  # the list is the real one
    early = [m for m in loaded if any(m == name or m.startswith(name + ".") for name in NOT_AT_FIRST_FRAME)]
    assert early == []


LAUNCHER = """
import sys
from tui import cli
try:
    cli.main()
except SystemExit:
    pass
print(sys.path[0])
"""


def test_the_console_script_takes_its_folder_off_sys_path(tmp_path: Path) -> None:
    # Every top-level import stats sys.path[0] first: a bin folder there cost ~120 calls a start.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for name, kept in (("fairtop", False), ("run.py", True)):  # a user's own script keeps its folder
        (bin_dir / name).write_text(LAUNCHER)
        run = subprocess.run([sys.executable, str(bin_dir / name), "--version"], capture_output=True, text=True,
                             check=True, env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}, timeout=60)
        first = run.stdout.splitlines()[-1]
        assert (first == str(bin_dir)) is kept, (name, first)
        assert run.stdout.startswith("fairtop ")  # main() ran and printed its version
