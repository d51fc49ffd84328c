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


NEAR_TIE = """
acct_a 1
  @ua 1 {a}
  @ua2 1 {a2}
acct_b 3
  @ub 1 {b}
  @ub2 1 {b2}
"""


def _near_tie(truncate: bool):
    # Per share, acct_b used 100,000,000.833 and acct_a 100,000,000.9: b ranks first in truth.
    # sshare truncates RawUsage: 100,000,000 and 100,000,000.667 per share, and a ranks first.
    values = {"a": 60_000_000.5, "a2": 40_000_000.4, "b": 200_000_002.1, "b2": 100_000_000.4}
    if truncate:
        values = {k: float(int(v)) for k, v in values.items()}
    from tests.treebuild import tree_from_text

    return tree_from_text(NEAR_TIE.format(**values))


def test_order_undecided_by_inputs_comes_from_printed_fairshare() -> None:
    from tui.analysis.reconcile import order_from_printed
    from tui.formats.sshare import sshare_cells

    truth = _near_tie(truncate=False)
    printed = sshare_cells(truth, compute(truth, "fair_tree"))
    rows = _near_tie(truncate=True)
    a, b = 1, 4
    assert printed["LevelFS"][a] == printed["LevelFS"][b] == "1.000000"  # undecidable at 6 decimals
    before = reconcile(rows, compute(rows, "fair_tree"), printed)
    assert {d.column for d in before.disagreements} == {"FairShare"}  # a's users ranked first: wrong
    fixed, fixes = order_from_printed(rows, printed)
    assert [(f.first, f.second, f.level_fs) for f in fixes] == [("acct_b", "acct_a", "1.000000")]
    assert 0 < abs(fixes[0].delta) < 1  # within sshare's truncation of RawUsage
    after = reconcile(fixed, compute(fixed, "fair_tree"), printed)
    assert after.agrees and after.checked == 5 * rows.size
    # acct_b ranks first in truth: its users hold ranks 4 and 3 of 4, acct_a's 2 and 1
    assert [printed["FairShare"][i] for i in (2, 3, 5, 6)] == ["0.250000", "0.500000", "0.750000", "1.000000"]


def test_agreeing_order_is_left_alone() -> None:
    from tui.analysis.reconcile import order_from_printed
    from tui.formats.sshare import sshare_cells

    rows = _near_tie(truncate=True)
    printed = sshare_cells(rows, compute(rows, "fair_tree"))
    fixed, fixes = order_from_printed(rows, printed)
    assert fixed is rows and fixes == ()


def test_standing_takes_the_printed_order_and_reconciles() -> None:
    from tui.analysis.standing import build_standing
    from tui.formats.sshare import sshare_cells
    from tui.model import Snapshot

    truth = _near_tie(truncate=False)
    cells = sshare_cells(truth, compute(truth, "fair_tree"))
    snap = Snapshot("c", "saved", tree=_near_tie(truncate=True), printed={k: tuple(v) for k, v in cells.items()})
    standing = build_standing(snap, me="ub")
    assert standing.reconciliation is not None and standing.reconciliation.agrees
    assert [f.first for f in standing.order_fixes] == ["acct_b"]
    assert standing.fairshare.fairshare[5] == 0.75 and standing.snapshot.tree is not snap.tree
    assert "taken from sshare's printed FairShare (acct_b first)" in standing.order_fixes[0].sentence()
    from tui.analysis.breakdown import explain_slurm

    assert "both print LevelFS 1.000000" in explain_slurm(standing, 5).summary  # ub, under acct_b
    assert "both print LevelFS" not in explain_slurm(standing, 0).summary  # the root's path has neither


def test_only_a_last_digit_the_rounded_usage_cannot_resolve_is_within_precision() -> None:
    snap, printed = _printed()
    result = compute(snap.tree, "fair_tree")
    row = next(i for i, c in enumerate(printed["EffectvUsage"]) if c not in ("0.000000", "1.000000"))
    cell = printed["EffectvUsage"][row]
    # Usage in the millions (CPU-seconds x 1,000,000): a 1-billing-second error moves the ratio by
    # ~1e-6 of itself, far less than one unit in the sixth decimal here.
    printed["EffectvUsage"][row] = f"{float(cell) + 1e-6:.6f}"
    rec = reconcile(snap.tree, result, printed)
    assert [d.row for d in rec.disagreements] == [row] and rec.within_precision == ()
    # With usage known only to within 1e5 billing-seconds, that same digit is undecidable.
    rec = reconcile(snap.tree, result, printed, precision=1e5)
    assert rec.disagreements == () and [d.row for d in rec.within_precision] == [row]
