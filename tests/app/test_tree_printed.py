"""The tree shows what the scheduler printed (rule one), marks disagreements, and says "unknown"
where the source has no usage (rule two)."""

from __future__ import annotations

from dataclasses import replace

from tests.conftest import FIXTURES
from tui.analysis.breakdown import explain_slurm
from tui.analysis.standing import build_standing
from tui.app.app import standing_notes
from tui.app.tree_rows import TreeTable
from tui.sources.saved import load_folder

LIVE = FIXTURES / "slurm" / "live" / "fair_tree"


def test_cells_are_sshare_printed_text() -> None:
    snap = load_folder(LIVE)
    table = TreeTable.from_standing(build_standing(snap, "ld"))
    assert list(table.cells["fairshare"]) == list(snap.printed["FairShare"])
    assert list(table.cells["raw_usage"]) == list(snap.printed["RawUsage"])  # truncated, as sshare prints
    assert table.cells["level_fs"][1] == "0.916665" and table.cells["raw_usage"][0] == "10998950"


def test_a_disagreement_shows_the_printed_value_marked_and_named() -> None:
    snap = load_folder(LIVE)
    printed = dict(snap.printed)
    printed["EffectvUsage"] = ("1.000000", "0.272729", *snap.printed["EffectvUsage"][2:])  # engine: 0.272728
    standing = build_standing(replace(snap, printed=printed), "ld")
    table = TreeTable.from_standing(standing)
    assert table.cells["eff_usage"][1] == "0.272729≠"
    assert standing_notes(standing) == [
        f"1 of {standing.reconciliation.checked:,} printed cells differ from fairtop's engine (shown as the "
        "scheduler printed them, marked ≠), e.g. root/ld EffectvUsage: printed 0.272729, engine 0.272728"]


def test_no_usage_means_unknown_not_fabricated() -> None:
    snap = load_folder(LIVE)
    rest = replace(snap, printed=None, capabilities=frozenset({"partitions"}), source="slurmrestd (x)")
    standing = build_standing(rest, "ld")
    table = TreeTable.from_standing(standing)
    assert table.cells["fairshare"][1] == "unknown" and table.cells["rank"][1] == "unknown"
    assert table.cells["norm_shares"][1] == "0.250000"  # shares are real
    assert table.cells["fairshare"][0] == ""  # the root prints no FairShare anyway
    assert "gives no usage" in standing_notes(standing)[0]
    assert "fairshare is unknown" in explain_slurm(standing, 1).summary
