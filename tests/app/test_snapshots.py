"""Snapshot tests of the main screens, under a truecolour and the 16-colour theme.

The demo cluster is fixed (seed 0, a fixed ``now``, user ``alice``), the terminal size is fixed,
the prompt's cursor does not blink (``conftest.no_cursor_blink``) and the demo source shows its
snapshot time rather than a ticking "updated N s ago", so every frame is reproducible.
Refresh the SVGs after an intended change with ``pytest tests/app/test_snapshots.py --snapshot-update``.
"""

from __future__ import annotations

from datetime import datetime, timezone
from functools import partial

import pytest
from textual.pilot import Pilot

from tests.app.conftest import ME, SIZE, ready
from tui.app.app import FairtopApp
from tui.config import Settings, State
from tui.sources.demo import demo_snapshot

NOW = datetime(2025, 1, 15, tzinfo=timezone.utc)
THEMES = ("dark", "ansi16")
#: Screen name -> keys pressed once the demo has loaded (``m`` selects alice's association).
SCREENS: dict[str, tuple[str, ...]] = {
    "tree": ("m",),
    "breakdown": ("m", "2"),
    "allocations": ("m", "3"),
    "whatif": ("m", "4"),
    "help": ("question_mark",),
}


def demo_app(theme: str) -> FairtopApp:
    """The app on the default-sized demo cluster, frozen in time."""
    loader = partial(demo_snapshot, seed=0, me=ME, now=NOW)
    return FairtopApp(Settings(theme=theme), loader, ME, State())


@pytest.mark.parametrize("theme", THEMES)
@pytest.mark.parametrize("screen", list(SCREENS))
def test_screen(snap_compare, screen: str, theme: str) -> None:
    async def run_before(pilot: Pilot) -> None:
        await ready(pilot)
        await pilot.press(*SCREENS[screen])
        await ready(pilot)  # the breakdown follows the selection on a short timer

    assert snap_compare(demo_app(theme), run_before=run_before, terminal_size=SIZE)


#: Terminal sizes an admin over SSH meets, from the smallest to a wide screen (issue 11).
SIZES = {"80x24": (80, 24), "200x60": (200, 60)}


@pytest.mark.parametrize("size", list(SIZES))
@pytest.mark.parametrize("screen", ["tree", "breakdown", "whatif"])
def test_screen_size(snap_compare, screen: str, size: str) -> None:
    """The tree (columns by priority at 80, the breakdown beside it at 200), the breakdown and the
    what-if planner."""

    async def run_before(pilot: Pilot) -> None:
        await ready(pilot)
        await pilot.press(*SCREENS[screen])
        await ready(pilot)

    assert snap_compare(demo_app("dark"), run_before=run_before, terminal_size=SIZES[size])
