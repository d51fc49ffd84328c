"""Make the README's screenshots from the real app on the demo cluster.

Run: ``.venv/bin/python screenshots/make.py [OUT_DIR]`` (default: this folder). Deterministic:
fixed seed, fixed clock, fixed terminal size, a fixed user.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime, timezone
from dataclasses import replace
from functools import partial
from pathlib import Path

from tui.app.app import FairtopApp
from tui.config import Settings, State
from tui.model import Snapshot
from tui.sources.demo import demo_snapshot
from tui.sources.demo_pbs import demo_pbs_snapshot

SIZE = (120, 40)
ME = "alice"
PANES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("tree", ("m",)),
    ("breakdown", ("m", "2")),
    ("allocations", ("m", "3")),
    ("whatif", ("m", "4")),
    ("help", ("question_mark",)),
)
"""(pane, keys pressed after loading): ``m`` selects the user's own association first."""
#: (file stem, theme, keys pressed after loading): every pane in dark and ansi16, plus one light.
SHOTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    *((f"{pane}-{theme}", theme, keys) for pane, keys in PANES for theme in ("dark", "ansi16")),
    ("tree-light-sorted", "light", ("F", "slash", *"chem", "enter")),
    ("pbs-tree-dark", "dark", ("m",)),
    ("pbs-breakdown-dark", "dark", ("m", "2")),
    ("history-dark", "dark", ("m", "5")),
    ("jobs-dark", "dark", ("m", "6", "down")),
    ("policy-dark", "dark", ("m", "P", *"2-0", "enter")),
)
PENDING = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "pending_jobs" / "capture"
"""The Jobs pane is shot on the real Slurm 22.05 capture with a job pending for every reason (the
demo makes up no reasons), as its user ``wqb``, read 15 minutes after it was taken."""
SIZES = {"policy-dark": (120, 56)}
"""Taller shots: the Policy screen's form, table and both plots."""


async def shoot(out: Path, stem: str, theme: str, keys: tuple[str, ...]) -> Path:
    """Run the app headless, press ``keys``, save ``out/stem.svg``."""
    now = datetime(2025, 1, 15, tzinfo=timezone.utc)
    me = ME
    if stem.startswith("pbs-"):
        loader = partial(demo_pbs_snapshot, me=ME, now=now)
    elif stem.startswith("jobs-"):
        from tui.app.panes import jobs
        from tui.sources.saved import load_folder

        def loader() -> Snapshot:  # the folder as the repository names it, not this checkout's path
            return replace(load_folder(PENDING), source="tests/fixtures/pending_jobs/capture")

        me = "wqb"
        jobs.CLOCK = lambda: datetime(2026, 11, 28, 3, 24, 43, tzinfo=timezone.utc)
    else:
        loader = partial(demo_snapshot, seed=0, me=ME, now=now)
    app = FairtopApp(Settings(theme=theme), loader, me, State())
    async with app.run_test(size=SIZES.get(stem, SIZE)) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press(*keys)
        await app.workers.wait_for_complete()
        await pilot.pause(0.3)  # the breakdown follows the selection after a short rest
        await app.workers.wait_for_complete()  # ... and computes in a worker
        await pilot.pause()
        await app.workers.wait_for_complete()  # the plots on screen build their figures in a thread
        await pilot.pause()
        return Path(app.save_screenshot(f"{stem}.svg", str(out)))


def main(argv: list[str]) -> int:
    out = Path(argv[0]) if argv else Path(__file__).resolve().parent
    out.mkdir(parents=True, exist_ok=True)
    for stem, theme, keys in SHOTS:
        print(asyncio.run(shoot(out, stem, theme, keys)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
