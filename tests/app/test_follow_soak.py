"""Long runs without growth, short version (bench/soak.py app runs 1,000 captures of 20,000 and
2,000 associations): the app following a published folder whose captures switch between 2,000
and 200 associations (a 20,000 one takes seconds to show on a loaded machine), 30 times. After
the first 10 (warm-up: imports, caches, the interpreter's arenas), the process's resident memory
grows under 10 % and its open fds and child processes stay where they were.

The 1,000-capture bench stepped up late when a refresh built a second 20,000-association standing
beside the shown one (Python's allocator kept the arenas of that peak; test_refresh.py checks a
refresh of an unchanged capture builds nothing), and held 8 MB more than needed while glibc's
heap kept the large arrays' pages: 30 small captures show neither, so this checks glibc's
setting is in force after the run (tui/app/allocator.py)."""

from __future__ import annotations

from pathlib import Path

from tests.resources import flat, large_blocks_mapped
from tui.app.allocator import heap

from .follow import follow

SWITCHES, WARM_UP = 30, 10


async def test_following_30_captures_holds_no_more(tmp_path: Path) -> None:
    samples = await follow(tmp_path / "published", SWITCHES, sizes=(2_000, 200))
    assert len(samples) == SWITCHES
    assert flat(samples[:WARM_UP], samples[WARM_UP:]) == [], samples
    if heap() is not None:  # glibc's malloc; a fresh interpreter's probe: tests/app/test_allocator.py
        assert large_blocks_mapped() is not False  # None: this process's heap is too roomy to tell
