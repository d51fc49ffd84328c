"""Reconciliation with the scheduler's printed cells, on a real Slurm 22.05 capture."""

from __future__ import annotations

from tests.conftest import FIXTURES
from tui.analysis.reconcile import reconcile
from tui.engine import compute
from tui.sources.saved import load_folder
from tui.sources.sshare import parse_sshare

FOLDER = FIXTURES / "slurm" / "nested_parent" / "fair_tree"


def _printed() -> tuple[object, dict[str, list[str]]]:
    snap = load_folder(FOLDER)
    table = parse_sshare((FOLDER / "sshare_a_l_P.psv").read_bytes(), "sshare")
    return snap, {c: table.column(c) for c in ("NormShares", "EffectvUsage", "FairShare", "LevelFS")}


def test_real_capture_agrees_cell_for_cell() -> None:
    snap, printed = _printed()
    rec = reconcile(snap.tree, compute(snap.tree, "fair_tree"), printed)
    assert rec.agrees and rec.checked == 4 * snap.tree.size


def test_a_changed_cell_is_named_with_both_values() -> None:
    snap, printed = _printed()
    printed["FairShare"][3] = "0.250000"  # sshare printed 0.240000 for root/u2
    rec = reconcile(snap.tree, compute(snap.tree, "fair_tree"), printed)
    assert [(d.row, d.label, d.column, d.ours, d.printed) for d in rec.disagreements] == [
        (3, "root/u2", "FairShare", "0.240000", "0.250000")]
    assert not rec.agrees
