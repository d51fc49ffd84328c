"""Compare the engine's recomputation of a capture folder with the sshare output inside it."""

from __future__ import annotations

from pathlib import Path

from tui.engine import compute
from tui.report import sshare_cells
from tui.sources.saved import load_folder
from tui.sources.sshare import parse_sshare

COLUMNS = ("NormShares", "NormUsage", "EffectvUsage", "FairShare", "LevelFS")


def mismatches(folder: Path) -> tuple[list[tuple[str, str, str, str]], int]:
    """``(label, column, ours, sshare's)`` for every differing cell, and how many were compared.

    The engine sees only what ``fairtop report --from`` reads: raw shares, raw usage, the tree,
    slurmdbd's lft order and the folder's PriorityFlags and FairShareDampeningFactor.
    """
    snap = load_folder(folder)
    printed = parse_sshare((folder / "sshare_a_l_P.psv").read_bytes(), str(folder))
    settings = snap.settings
    ours = sshare_cells(snap.tree, compute(snap.tree, settings.algorithm, settings.dampening),
                        settings.dampening)
    bad, checked = [], 0
    for column in COLUMNS:
        if column not in printed.header:
            continue
        for i, (got, want) in enumerate(zip(ours[column], printed.column(column))):
            checked += 1
            if got != want:
                bad.append((snap.tree.label(i), column, got, want))
    return bad, checked
