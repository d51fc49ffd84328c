"""What a Slurm snapshot's report shows, shared by ``fairtop report`` and ``fairtop serve-metrics``:
the tree, the engine's result, the algorithm and dampening, sshare's printed columns and the
warnings. One code path, so a value the scheduler left blank (per release) is blank in both."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from tui.engine import compute
from tui.engine.result import FairshareResult
from tui.model import AssocTree, Snapshot

__all__ = ["ReportInputs", "report_inputs"]


@dataclass(frozen=True)
class ReportInputs:
    """The inputs of :func:`tui.formats.sshare.report_blocks` for one snapshot."""

    tree: AssocTree
    result: FairshareResult
    algorithm: str
    damping: float
    printed: Mapping[str, Sequence[str]] | None
    """sshare's columns as text (None when the report asks another algorithm or dampening)."""
    notes: list[str]
    """Warnings: the snapshot's own, engine-vs-printed disagreements, order fixes."""


def report_inputs(snap: Snapshot, algorithm: str | None = None, damping: float | None = None) -> ReportInputs:
    """The tree (on the order sshare's printed values reveal), the engine's result and the
    printed columns of a Slurm snapshot; ``algorithm`` and ``damping`` default to the capture's."""
    assert snap.tree is not None
    damping = damping if damping is not None else snap.settings.dampening
    algorithm = algorithm or snap.settings.algorithm
    notes = list(snap.warnings)
    if snap.private is not None and snap.private.partial and snap.printed is not None:
        # PrivateData: siblings are missing, so the engine cannot recompute anything; only what
        # sshare printed is shown, and the rank (which needs every user) is left blank.
        printed = {**snap.printed, "Rank": ("",) * snap.tree.size}
        return ReportInputs(snap.tree, compute(snap.tree, algorithm, damping), algorithm, damping, printed, notes)
    if snap.printed is not None and (algorithm, damping) == (snap.settings.algorithm, snap.settings.dampening):
        # The scheduler's own numbers, as printed; the engine's run on the order they reveal.
        from tui.analysis.standing import build_standing

        standing = build_standing(snap)
        rec = standing.reconciliation
        if rec is not None and rec.disagreements:
            notes += [f"engine differs from sshare: {d.label} {d.column} engine {d.ours}, shown as printed {d.printed}"
                      for d in rec.disagreements]
        notes += [fix.sentence() for fix in standing.order_fixes]
        tree, result = standing.snapshot.tree, standing.fairshare
        assert tree is not None and result is not None
        return ReportInputs(tree, result, algorithm, damping, snap.printed, notes)
    return ReportInputs(snap.tree, compute(snap.tree, algorithm, damping), algorithm, damping, None, notes)
