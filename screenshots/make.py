"""Make the README's screenshots from the real app on the demo cluster.

Run: ``.venv/bin/python screenshots/make.py [OUT_DIR]`` (default: this folder). Deterministic:
fixed seed, fixed clock, fixed terminal size, a fixed user.
"""

from __future__ import annotations

import asyncio
import sys
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

from tui.app.app import FairtopApp
from tui.config import Settings, State
from tui.sources.demo import demo_snapshot

SIZE = (120, 40)
ME = "alice"
#: (file stem, theme, keys pressed after loading)
SHOTS: tuple[tuple[str, str, tuple[str, ...]], ...] = (
    ("tree-dark", "dark", ("m",)),
    ("tree-ansi16", "ansi16", ("m",)),
    ("tree-light-sorted", "light", ("F", "slash", *"chem", "enter")),
    ("help", "dark", ("question_mark",)),
)


async def shoot(out: Path, stem: str, theme: str, keys: tuple[str, ...]) -> Path:
    """Run the app headless, press ``keys``, save ``out/stem.svg``."""
    loader = partial(demo_snapshot, seed=0, me=ME, now=datetime(2025, 1, 15, tzinfo=timezone.utc))
    app = FairtopApp(Settings(theme=theme), loader, ME, State())
    async with app.run_test(size=SIZE) as pilot:
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.press(*keys)
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
