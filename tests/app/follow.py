"""The app following a published folder for a long time, for the soak test and bench/soak.py.

A publisher (:func:`tui.sources.publish.publish_once`, as ``fairtop capture --every`` runs it)
writes captures into ``root`` that switch between ``sizes`` associations (bench/sources.py's
Fair Tree generator); the real app, built as ``fairtop --from ROOT/current`` builds it, runs
headless and follows ``current``. After each capture the driver does what the refresh timer
does every ``refresh_rate`` (at least 2 s: 1,000 captures would take over half an hour), waits
until the app shows the new tree, and samples this process (tests/resources.py).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

from bench.sources import sshare_text
from tests.resources import Held, held
from tui.app.main import build_app
from tui.cli import build_parser
from tui.sources.publish import CURRENT, publish_once
from tui.sources.saved import FILES

SIZE = (120, 40)
_CONFIG = "PriorityType            = priority/multifactor\nPriorityFlags           = FAIR_TREE\n"


def capture_of(rows: int) -> Callable[[Path], str]:
    """A capture of a Fair Tree cluster of ``rows`` associations (sshare and the config)."""
    data = sshare_text(rows)

    def capture(folder: Path) -> str:
        (folder / FILES["sshare"]).write_bytes(data)
        (folder / FILES["config"]).write_text(_CONFIG)
        return ""

    return capture


async def follow(root: Path, switches: int, sizes: tuple[int, int] = (20_000, 2_000),
                 report: Callable[[int, Held, float], None] | None = None, timeout_s: float = 60.0) -> list[Held]:
    """Publish ``switches`` captures after the first, the app following each; returns this
    process's sample after each one the app showed."""
    captures = [capture_of(n) for n in sizes]
    publish_once(root, captures[0], keep=3)
    app = build_app(build_parser().parse_args(["--from", str(root / CURRENT), "--user", "user1"]))
    assert app.live, "a folder reached through a symlink is followed"
    samples: list[Held] = []
    async with app.run_test(size=SIZE) as pilot:

        async def shown(rows: int) -> None:
            end = time.monotonic() + timeout_s
            while not (app.standing is not None and len(app.standing.snapshot.tree.parent) == rows
                       and not any(w.group == "load" and w.is_running for w in app.workers)):
                assert time.monotonic() < end, f"the app did not show the capture of {rows:,} associations"
                await pilot.pause(0.02)
            await pilot.pause()

        await shown(sizes[0])
        for k in range(1, switches + 1):
            rows = sizes[k % len(sizes)]
            t0 = time.perf_counter()
            publish_once(root, captures[k % len(sizes)], keep=3)
            app._refresh_live_source()  # what the "refresh" interval calls
            await shown(rows)
            samples.append(held(os.getpid()))
            if report:
                report(k, samples[-1], time.perf_counter() - t0)
    return samples
