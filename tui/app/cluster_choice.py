"""One cluster the app can show (see :mod:`tui.app.clusters`); apart so that the mixins' host
protocol can name it without a cycle."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from tui.model import Snapshot


@dataclass(frozen=True)
class Cluster:
    """One cluster the app can show: its name and how to read it."""

    name: str
    """The config's ``[[cluster]]`` name ("" for a session with one source)."""
    loader: Callable[[], Snapshot]
    """Reads its source (in the load worker's thread)."""
    live: bool = False
    """Read again every ``refresh_rate`` seconds."""
    source_name: str = ""
    """``name`` or ``name:value`` of its source, for the state file."""
    on_reload: Callable[[], None] | None = None
    """``r``: a live source asks every command at its next read."""
    stages: Callable[[], Iterable[tuple[Snapshot, tuple[str, ...]]]] | None = None
    """Reads its source in stages (a live source: the tree from sshare first)."""
    instant: bool = False
    """Its snapshot is made in memory in a blink (the demo): the first read runs before the first
    frame, on the UI thread, so that frame already shows the data."""
