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


NEAR_TIE = FIXTURES / "slurm" / "near_tie" / "fair_tree"


async def test_pane_shows_sshare_s_numbers_for_a_real_near_tie() -> None:
    """2,080 associations from the sandbox; tie5a and tie5b (and tb5x, tb5y) tie in slurmctld's
    long double but not in the 2-decimal usage: the pane shows every printed cell, unmarked."""
    from tests.app.conftest import ready
    from tests.app.test_tree_pane import lines
    from tui.app.app import FairtopApp
    from tui.app.widgets.fairshare_tree import FairshareTree
    from tui.config import Settings, State

    snap = load_folder(NEAR_TIE)
    app = FairtopApp(Settings(), lambda: snap, "tb5x", State())
    rows = {" ".join(line.split("|")[:2]).strip(): line.split("|") for line in
            (NEAR_TIE / "sshare_a_l_P.psv").read_text().splitlines()[1:]}
    async with app.run_test(size=(200, 40)) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        assert tree.table is not None and tree.table.size == len(rows) >= 2000
        app.action_set_filter("tie5|t[ab]5")
        await pilot.pause()
        shown = [ln for ln in lines(tree)[1:] if ln.strip()]
        for account, user in (("tie5a", ""), ("tie5a", "ta5x"), ("tie5a", "ta5y"), ("tie5b", ""),
                              ("tie5b", "tb5x"), ("tie5b", "tb5y"), ("tie5b", "tb5z")):
            cells = rows[f"{account} {user}".strip()]
            name = user or account
            line = next(ln for ln in shown if f" {name} " in f" {ln} ")
            # NormShares, RawUsage, EffectvUsage, FairShare, LevelFS exactly as printed, none marked
            for cell in filter(None, (cells[3], cells[4], cells[6], cells[7], cells[8])):
                assert cell in line.split(), (name, cell, line)
            assert "≠" not in line
        assert app.standing is not None and app.standing.reconciliation.agrees
