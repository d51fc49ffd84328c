"""What the app shows: a snapshot together with the engine's results for it.

Built off the UI thread (the engine is pure), handed to the app in one piece, never mutated.
No Textual here.
"""

from __future__ import annotations

import getpass
from dataclasses import dataclass, field

import numpy as np

from tui.engine import compute
from tui.engine.result import FairshareResult
from tui.model import Snapshot


def current_user() -> str:
    """The Unix user running fairtop (``--user`` overrides it in the CLI)."""
    try:
        return getpass.getuser()
    except Exception:  # no passwd entry, no env: a container without a user name
        return ""


@dataclass(frozen=True, eq=False)
class ClusterView:
    """A snapshot, its fairshare results, and whose view it is."""

    snapshot: Snapshot
    fairshare: FairshareResult | None
    """Engine results aligned with ``snapshot.tree`` rows (None without a Slurm tree)."""
    me: str = ""
    my_rows: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    """Rows of ``snapshot.tree`` that are user associations of ``me``."""

    @property
    def algorithm(self) -> str:
        return self.snapshot.settings.algorithm


def build_view(snapshot: Snapshot, me: str | None = None) -> ClusterView:
    """Run the engine on ``snapshot`` with the cluster's algorithm and dampening factor."""
    me = current_user() if me is None else me
    tree = snapshot.tree
    if tree is None:
        return ClusterView(snapshot, None, me)
    result = compute(tree, snapshot.settings.algorithm, snapshot.settings.dampening)
    mine = np.flatnonzero(tree.is_user & (tree.user == me)) if me else np.zeros(0, dtype=np.int64)
    return ClusterView(snapshot, result, me, mine)
