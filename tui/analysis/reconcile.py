"""Reconciliation: the engine's cells against the ones the scheduler printed.

Rule one of trust: a number the scheduler printed is shown as it printed it, and where the engine
disagrees the disagreement is named, never hidden. This module finds the disagreements; sources
that carry sshare's computed columns hand them in as printed strings. No Textual here.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tui.engine.result import FairshareResult
from tui.formats.sshare import sshare_cells
from tui.model import AssocTree

__all__ = ["COLUMNS", "Disagreement", "Reconciliation", "reconcile"]

#: sshare's computed columns the engine reproduces (RawShares and RawUsage are inputs).
COLUMNS = ("NormShares", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")


@dataclass(frozen=True)
class Disagreement:
    """One printed cell the engine computes differently."""

    row: int
    label: str
    column: str
    ours: str
    printed: str


@dataclass(frozen=True)
class Reconciliation:
    """Every compared cell's outcome."""

    disagreements: tuple[Disagreement, ...]
    checked: int
    """Cells compared (columns present in the printed output x rows)."""

    @property
    def agrees(self) -> bool:
        return not self.disagreements


def reconcile(tree: AssocTree, result: FairshareResult, printed: Mapping[str, Sequence[str]],
              dampening: float = 1) -> Reconciliation:
    """Compare the engine's sshare cells for ``tree`` with ``printed`` (header -> column cells,
    aligned with the tree's rows). Columns absent from ``printed`` are not compared."""
    ours = sshare_cells(tree, result, dampening)
    bad: list[Disagreement] = []
    checked = 0
    for column in COLUMNS:
        if column not in printed or column not in ours:
            continue
        for i, (got, want) in enumerate(zip(ours[column], printed[column])):
            checked += 1
            if got != want:
                bad.append(Disagreement(i, tree.label(i), column, got, want))
    return Reconciliation(tuple(bad), checked)
