"""A live source in stages: the tree is drawn from the first stage (sshare's output) while the
other commands still run, the status line names them, and their warnings wait for the whole snapshot."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace

from tests.app.conftest import ME, SIZE, small_demo
from tests.app.test_refresh import status, wait_until
from tui.app.app import FairtopApp
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.config import Settings, State
from tui.model import Snapshot


class TwoStages:
    """The demo snapshot first without its jobs (and with a warning an early stage would carry),
    then, once ``gate`` opens, whole."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.snap = small_demo()()

    def __call__(self) -> Iterator[tuple[Snapshot, tuple[str, ...]]]:
        early = replace(self.snap, jobs=(), warnings=("squeue: no job list",))
        yield early, ("sacctmgr", "sprio", "squeue")
        assert self.gate.wait(10)
        yield self.snap, ()


async def test_tree_is_drawn_before_the_slow_commands_return() -> None:
    source = TwoStages()
    app = FairtopApp(Settings(source="slurm", refresh_rate=60), lambda: source.snap, ME, State(),
                     live=True, stages=source)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        tree = app.query_one(FairshareTree)
        await wait_until(pilot, lambda: tree.table is not None)
        assert tree.table.size == source.snap.tree.size
        assert "loading sacctmgr, sprio, squeue…" in status(app)
        assert app.standing is not None and app.standing.snapshot.jobs == ()
        assert not any("no job list" in n.message for n in app._notifications)  # not said while loading
        source.gate.set()
        await wait_until(pilot, lambda: "updated 0 s ago" in status(app))
        assert "loading" not in status(app) and len(app.standing.snapshot.jobs) == len(source.snap.jobs)
