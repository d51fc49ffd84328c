"""UI-thread CPU of drawing one what-if result: ``python bench/whatif_draw.py [-n 3] [--against REV]``.

The app on a demo of ``--associations`` (default 20,000), 120x40 in ``App.run_test``; ``m`` then
``4`` opens the planner on alice's association, and once its projection is in, the pane's
``_draw`` is called again with it ``--draws`` times (the first is not counted), 0.6 s apart. Per
draw, the main thread's CPU time (``time.thread_time``: what the UI thread spent, whatever the
other processes on the machine do to the wall clock) of the ``_draw`` call and of each screen
update and layout that follow it (Textual's ``Screen._on_timer_update`` and ``_refresh_layout``, a
layout inside an update counted once). Work in other threads (the projection, a plot's build) is not counted.
``longest_step`` is the largest of those single callbacks: the event loop could answer nothing
for at least that long; ``total`` is their sum. ``--against REV`` also measures the tree of git
revision REV (``bench/report.py``'s ``export``), each checkout in its own process, taking turns.
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

CHILD = r"""
import asyncio, sys, time
from textual.screen import Screen
from tui.app.app import FairtopApp
from tui.config import Settings, State
from tui.sources.demo import demo_snapshot
from datetime import datetime, timezone

from ui_steps import timed_steps
steps = timed_steps(Screen)  # a layout inside a screen update counts once, in it

async def main(associations, draws):
    users = associations * 9 // 10
    snap = demo_snapshot(0, now=datetime(2025, 1, 15, tzinfo=timezone.utc), me="alice",
                         users=users, accounts=associations - users)
    app = FairtopApp(Settings(theme="dark"), lambda: snap, "alice", State())
    async with app.run_test(size=(120, 40)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press("m", "4")
        pane = app.query_one("#pane-whatif")
        while pane._result is None:
            await pilot.pause(0.05)
        await pilot.pause(0.5)
        for i in range(draws):
            steps.clear()
            t = time.thread_time()
            pane._draw(pane._result)
            call = time.thread_time() - t
            await asyncio.sleep(0.6)
            if i:
                print(1e3 * call, 1e3 * max([call, *steps]), 1e3 * (call + sum(steps)), flush=True)

asyncio.run(main(int(sys.argv[1]), int(sys.argv[2])))
"""

FIGURES = ("draw_call", "longest_step", "total")


def measure(src: Path, associations: int, draws: int) -> list[list[float]]:
    """One process on the checkout at ``src``: per draw, the figures of :data:`FIGURES` in ms."""
    home = tempfile.mkdtemp(prefix="fairtop-bench-")  # no user config or state of the machine's
    out = subprocess.run([sys.executable, "-P", "-c", CHILD, str(associations), str(draws)], cwd=src,
                         capture_output=True, text=True, timeout=600, check=True,
                         env={"PYTHONPATH": f"{src}:{ROOT / 'bench'}", "PATH": "/usr/bin:/bin", "HOME": home}).stdout
    return [[float(x) for x in line.split()] for line in out.splitlines() if line.strip()]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="processes per checkout (default 3)")
    parser.add_argument("--draws", type=int, default=6, help="draws per process, the first not counted (default 6)")
    parser.add_argument("--associations", type=int, default=20_000, help="size of the demo (default 20,000)")
    parser.add_argument("--against", metavar="REV", help="also measure git revision REV (e.g. main)")
    args = parser.parse_args()
    trees = {"this tree": ROOT}
    if args.against:
        sys.path.insert(0, str(ROOT / "bench"))
        from report import export

        trees[args.against] = export(args.against)
    runs: dict[str, list[list[float]]] = {name: [] for name in trees}
    for _ in range(args.n):
        for name, src in trees.items():
            runs[name] += measure(src, args.associations, args.draws)
    print(f"{args.associations:,} associations, {args.n} processes x {args.draws - 1} draws; UI-thread CPU, ms")
    print()
    print("| tree | " + " | ".join(f"{f}: median (min-max)" for f in FIGURES) + " |")
    print("|---|" + "---:|" * len(FIGURES))
    for name, rows in runs.items():
        cells = [f"{statistics.median(c):.1f} ({min(c):.1f}-{max(c):.1f})" for c in zip(*rows)]
        print(f"| {name} | " + " | ".join(cells) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
