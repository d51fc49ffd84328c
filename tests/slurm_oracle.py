"""Compare the engine's recomputation of a capture folder with the sshare output inside it."""

from __future__ import annotations

from pathlib import Path

from tui.engine import compute
from tui.formats.sshare import sshare_cells
from tui.sources.saved import load_folder
from tui.model import AssocTree
from tui.sources.sshare import SshareTable, parse_sshare

COLUMNS = ("NormShares", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")


Mismatches = tuple[list[tuple[str, str, str, str]], int]


def mismatches(folder: Path) -> Mismatches:
    """Differing cells of a capture folder's sshare file (see :func:`cell_mismatches`).

    The engine sees only what ``fairtop report --from`` reads: raw shares, raw usage, the tree,
    slurmdbd's lft order and the folder's PriorityFlags and FairShareDampeningFactor.
    """
    snap = load_folder(folder)
    printed = parse_sshare((folder / "sshare_a_l_P.psv").read_bytes(), str(folder))
    return cell_mismatches(snap.tree, printed, snap.settings.algorithm, snap.settings.dampening)


def cell_mismatches(tree: AssocTree, printed: SshareTable, algorithm: str, damping: float = 1) -> Mismatches:
    """``(label, column, ours, sshare's)`` for every differing computed cell of ``printed``, and how
    many cells were compared, recomputing ``tree`` with the engine."""
    ours = sshare_cells(tree, compute(tree, algorithm, damping), damping)
    bad, checked = [], 0
    for column in COLUMNS:
        if column not in printed.header:
            continue
        for i, (got, want) in enumerate(zip(ours[column], printed.column(column))):
            checked += 1
            if got != want:
                bad.append((tree.label(i), column, got, want))
    return bad, checked
