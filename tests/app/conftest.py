"""Fixtures for the app's Pilot tests: a small deterministic demo cluster, isolated XDG paths."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from datetime import datetime, timezone
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot

from tui import config
from tui.app.app import FairtopApp
from tui.config import Settings, State
from tui.sources.demo import demo_snapshot

ME = "alice"
SIZE = (120, 40)


@pytest.fixture(autouse=True)
def isolated_paths(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """No test reads or writes the real /etc, XDG config or state files."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.delenv(config.ENV_VAR, raising=False)
    monkeypatch.setattr(config, "SYSTEM_FILE", tmp_path / "etc" / "config.toml")
    return tmp_path


@pytest.fixture(autouse=True)
def every_move_drawn_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic frames: Pilot's keys come faster than a held key's, so without this a test's
    second cursor move would be drawn 0.1 s later, or not yet, depending on the machine's load.
    The held-key test sets its own threshold."""
    from tui.app.widgets import fairshare_tree

    monkeypatch.setattr(fairshare_tree, "HELD_KEY_S", 0.0)


@pytest.fixture(autouse=True)
def no_cursor_blink(monkeypatch: pytest.MonkeyPatch) -> None:
    """Deterministic frames: the prompt's cursor never blinks."""
    from textual.widgets import Input

    monkeypatch.setattr(Input, "cursor_blink", False)


def small_demo(me: str = ME, users: int = 400) -> Any:
    """A loader for a small, fixed demo cluster."""
    return partial(demo_snapshot, seed=0, users=users, accounts=80, me=me,
                   now=datetime(2025, 1, 15, tzinfo=timezone.utc))


@pytest.fixture
def make_app() -> Callable[..., FairtopApp]:
    """Build an app on the small demo; keyword arguments become Settings fields."""

    def build(loader: Callable[[], Any] | None = None, me: str = ME, **settings: Any) -> FairtopApp:
        return FairtopApp(Settings(**settings), loader or small_demo(me), me, State())

    return build


async def workers_done(pilot: Pilot) -> None:
    """Wait until no worker runs and the messages they posted are handled.

    Handling a worker's result can start another (a load shows the panes, whose workers compute),
    so this waits again until none is left. A failed or cancelled worker does not raise here: the
    app reports failures itself, and tests assert on what it shows.
    """
    app = pilot.app
    await pilot.pause()
    for _ in range(20):
        workers = [w for w in app.workers if not w.is_finished]
        if not workers:
            break
        await asyncio.gather(*(w.wait() for w in workers), return_exceptions=True)
        await pilot.pause()
    await pilot.pause()


async def until(pilot: Pilot, condition: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run (timers, after-refresh callbacks, workers) until ``condition`` holds or
    ``timeout`` s pass; the caller then asserts what it needs (a loaded CI machine is slow)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not condition() and loop.time() < deadline:
        await pilot.pause(0.05)
        await workers_done(pilot)


async def ready(pilot: Pilot, timeout: float = 10.0) -> None:
    """Wait for the load worker, the panes' workers, the messages they posted, and the timers a
    key left behind (the breakdown follows a selection only once it rests 0.15 s: on a loaded
    machine a key pressed soon after the load took that path, and the screen was read before the
    breakdown was asked for)."""
    await workers_done(pilot)
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while getattr(pilot.app, "settling", False) and loop.time() < deadline:
        await pilot.pause(0.05)
        await workers_done(pilot)
