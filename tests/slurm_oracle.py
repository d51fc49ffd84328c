"""Compare the engine's recomputation of a capture folder with the sshare output inside it."""

from __future__ import annotations

from pathlib import Path

from tui.analysis.reconcile import COLUMNS, reconcile
from tui.engine import compute
from tui.model import AssocTree
from tui.slurm_releases import SlurmRelease, release
from tui.sources.saved import load_folder
from tui.sources.sshare import SshareTable, parse_sshare

Mismatches = tuple[list[tuple[str, str, str, str]], int]


def mismatches(folder: Path) -> Mismatches:
    """Differing cells of a capture folder's sshare file (see :func:`cell_mismatches`).

    The engine sees only what ``fairtop report --from`` reads: raw shares, raw usage, the tree,
    slurmdbd's lft order and the folder's PriorityFlags and FairShareDampeningFactor.
    """
    snap = load_folder(folder)
    printed = parse_sshare((folder / "sshare_a_l_P.psv").read_bytes(), str(folder))
    return cell_mismatches(snap.tree, printed, snap.settings.algorithm, snap.settings.dampening,
                           release(snap.scheduler_version))


def cell_mismatches(tree: AssocTree, printed: SshareTable, algorithm: str, damping: float = 1,
                    slurm: SlurmRelease | None = None) -> Mismatches:
    """``(label, column, ours, sshare's)`` for every differing computed cell of ``printed``, and how
    many cells were compared (:func:`tui.analysis.reconcile.reconcile` on the engine's result,
    printed as the ``slurm`` release prints: blanks included)."""
    columns = {c: printed.column(c) for c in COLUMNS if c in printed.header}
    rec = reconcile(tree, compute(tree, algorithm, damping), columns, damping, release=slurm)
    return [(d.label, d.column, d.ours, d.printed) for d in rec.disagreements], rec.checked
