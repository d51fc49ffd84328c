"""Long runs without growth, short version (bench/soak.py app runs 1,000 captures of 20,000 and
2,000 associations): the app following a published folder whose captures switch between 2,000
and 200 associations (a 20,000 one takes seconds to show on a loaded machine), 30 times. After
the first 10 (warm-up: imports, caches, the interpreter's arenas), the process's resident memory
grows under 10 % and its open fds and child processes stay where they were.

The 1,000-capture bench grew late, by steps, because glibc served 20,000-association arrays from
its heap once a freed capture had raised its mmap threshold (tui/app/allocator.py): 30 captures
do not show that, so the test checks the setting that prevents it is in force after the run."""

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
    if heap() is not None:  # glibc's malloc
        assert large_blocks_mapped()
