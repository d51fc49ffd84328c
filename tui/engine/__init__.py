"""fairtop's fairshare engine: pure functions over numpy arrays, no I/O, no UI.

Entry point :func:`compute` picks the algorithm the cluster runs.
"""

from __future__ import annotations

from tui.engine.classic import classic
from tui.engine.fair_tree import fair_tree
from tui.engine.result import FairshareResult
from tui.model import AssocTree

__all__ = ["FairshareResult", "classic", "compute", "fair_tree"]


def compute(tree: AssocTree, algorithm: str = "fair_tree", dampening: float = 1) -> FairshareResult:
    """Fairshare of every association of ``tree``.

    Parameters
    ----------
    tree : AssocTree
    algorithm : {"fair_tree", "classic"}
        Fair Tree (Slurm's default) or classic (``PriorityFlags=NO_FAIR_TREE``).
    dampening : float
        FairShareDampeningFactor; used by classic only.
    """
    if algorithm == "fair_tree":
        return fair_tree(tree)
    if algorithm == "classic":
        return classic(tree, dampening)
    raise ValueError(f"unknown algorithm {algorithm!r} (use fair_tree or classic)")
