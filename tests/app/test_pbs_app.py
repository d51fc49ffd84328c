"""PBS Professional in the app: a saved PBS folder and ``--demo pbs`` in the tree, breakdown,
allocations and what-if panes, against ``fairtop report`` and the seed 002 worked example."""

from __future__ import annotations

import shutil
from datetime import datetime, timezone
from functools import partial
from pathlib import Path

import numpy as np
import pytest

from tests.app.conftest import ready
from tests.app.test_panes import shown
from tests.conftest import FIXTURES
from tui.analysis.pbs_breakdown import explain_pbs
from tui.analysis.standing import build_standing
from tui.app.app import FairtopApp
from tui.app.panes.allocations import AllocationsPane
from tui.app.panes.breakdown import BreakdownPane
from tui.app.panes.whatif import WhatIfPane
from tui.app.tree_rows import PBS_COLUMNS, TreeTable
from tui.app.widgets.fairshare_tree import FairshareTree
from tui.cli import main
from tui.config import Settings, State
from tui.model import Snapshot
from tui.sources.demo_pbs import demo_pbs_snapshot
from tui.sources.pbs import read_pbs
from tui.sources.registry import DemoSource, FolderSource

PBS = FIXTURES / "pbs"
SIZE = (150, 40)
#: Seed 002's published fairshare_tree_usage values (Altair white paper).
PUBLISHED_UF = {"B2": "0.500624", "B3": "0.438202", "L5": "0.333750"}


@pytest.fixture
def seed_dir(tmp_path: Path) -> Path:
    folder = tmp_path / "seed002"
    folder.mkdir()
    shutil.copyfile(PBS / "seed002_resource_group", folder / "resource_group")
    shutil.copyfile(PBS / "seed002_usage.txt", folder / "usage.txt")
    (folder / "sched_config").write_text("fair_share: true ALL\nunknown_shares: 10\n")
    return folder


def report_rows(capsys, *argv: str) -> list[list[str]]:
    """``fairtop report ...``'s table as [name, Shares, Perc%, Usage, TreeUsage, Usage/Perc, Factor]."""
    assert main(["report", *argv]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["Entity", "Shares", "Perc%", "Usage", "TreeUsage", "Usage/Perc", "Factor"]
    return [line.split() for line in lines[1:]]


def folder_app(folder: Path, me: str = "L5") -> FairtopApp:
    return FairtopApp(Settings(), FolderSource(str(folder), me=me).load, me, State())


async def pane_texts(folder: Path, *views: tuple[str, type]) -> list[str]:
    """Open the app on ``folder``, press ``m`` (me: L5), then per (key, pane class) the pane's text."""
    app = folder_app(folder)
    out = []
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        await pilot.press("m")
        for key, pane in views:
            await pilot.press(key)
            await ready(pilot)
            out.append(shown(app.query_one(pane)))
    return out


def table_rows(table: TreeTable) -> list[list[str]]:
    return [[str(table.cells[c.id][r]) for c in table.columns] for r in range(table.size)]


async def test_pbs_folder_tree_equals_both_reports_cell_for_cell(seed_dir, capsys):
    from_dir = report_rows(capsys, "--from", str(seed_dir))
    from_files = report_rows(capsys, "--pbs-resource-group", str(seed_dir / "resource_group"),
                             "--pbs-usage", str(seed_dir / "usage.txt"), "--pbs-unknown-shares", "10")
    assert from_dir == from_files and len(from_dir) == 14  # TREEROOT, 12 entities, unknown
    app = folder_app(seed_dir)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        table = tree.table
        assert app.standing.algorithm == "pbs" and table.columns == PBS_COLUMNS
        assert [c.title for c in tree.columns] == ["Entity", "Shares", "Perc%", "Usage", "TreeUsage",
                                                  "Usage/Perc", "Factor"]
        assert table_rows(table) == from_dir  # every cell, in pbsfs order
        by_name = {r[0]: r for r in table_rows(table)}
        for name, uf in PUBLISHED_UF.items():
            assert by_name[name][4] == uf
        assert by_name["L5"][1:] == ["10", "10.000001", "100", "0.333750", "1000", "0.098927"]
        assert by_name["TREEROOT"][3] == "801" and by_name["unknown"][2] == "10.000000"
        # drawn on screen: "m" goes to me (L5), its line shows the same cells, indented by depth
        await pilot.press("m")
        row = tree.selected_row
        assert str(table.names[row]) == "L5"
        line = tree._row_strip(row, False, SIZE[0], tree.layout_for(SIZE[0])).text
        # 2 spaces a level (TREEROOT's children are indented under it), then the marker
        assert line.startswith("        L5 ") and line.split()[1:7] == by_name["L5"][1:]
        assert "14 entities" in str(app.query_one("#status").render())
        # the line about me: L5's factor as the report prints it, and the leaf entities (groups
        # excluded: TREEROOT, B1-B4) the report gives a higher factor
        leaves = {"L1", "L2", "L3", "L4", "L5", "L6", "L7", "L8", "unknown"}
        higher = sum(float(r[6]) > float(by_name["L5"][6]) for r in from_dir if r[0] in leaves)
        assert str(app.query_one("#me-summary").content) == (
            f"L5 · fairshare_factor 0.098927 · {higher} of 9 entities have a higher factor"
                " · pending jobs unknown (no qstat -f in this source: a capture made before fairtop read it)")


async def test_pbs_sort_keys_use_the_same_letters(seed_dir):
    app = folder_app(seed_dir)
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("E")  # EffectvUsage's key: TreeUsage on PBS, descending
        assert (tree.sort_column, tree.sort_descending) == ("fairshare_tree_usage", True)
        names = [str(tree.table.names[r]) for r in tree.rows_shown]
        assert names[:2] == ["TREEROOT", "B2"]  # B2 0.500624 leads TREEROOT's children
        await pilot.press("colon", *"sort perc", "enter")
        assert tree.sort_column == "percentage"
        await pilot.press("s")  # cycles through the PBS columns
        assert tree.sort_column == "usage"
        await pilot.press("slash", *"^L[0-9]$", "enter")
        assert int(tree.matches.sum()) == 8


async def test_pbs_breakdown_of_L5_shows_the_path_and_published_numbers(seed_dir):
    (text,) = await pane_texts(seed_dir, ("2", BreakdownPane))
    assert "Why L5 has its fairshare · PBS Professional" in text
    assert "20 / 100 × 100.000000% = 20.000000%" in text  # B2
    assert "usage / U_root = 401 / 801 = 0.500624" in text
    assert "0.250936 + (0.500624 − 0.250936) × 0.750000 = 0.438202" in text  # B3
    assert "10 / 15 × 15.000001% = 10.000001%" in text  # L5
    assert "0.124844 + (0.438202 − 0.124844) × 0.666667 = 0.333750" in text
    assert "2^-(fairshare_tree_usage / percentage) = 2^-(0.333750 / 0.100000) = 0.098927" in text
    # pbsfs -g L5, and its path lines, as the seed publishes them
    for line in ("801 / 1.000 = 801", "401 / 0.200 = 2005", "201 / 0.150 = 1340", "100 / 0.100 = 1000",
                 "usage/perc", "Percentage", "10.000001%"):
        assert line in text
    assert text.index("TREEROOT") < text.index("B2") < text.index("B3") < text.index("L5  shares 10 of 15")


def test_pbs_explanation_matches_pbsfs_g_published():
    """The analysis gives pbsfs -g L5's numbers (seed 002's published output, whitespace aside)."""
    tree = read_pbs(PBS / "seed002_resource_group", PBS / "seed002_usage.txt", unknown_shares=10)
    ex = explain_pbs(build_standing(Snapshot("s", "t", pbs=tree)), "L5")
    published = (PBS / "seed002_pbsfs_g_L5_published.txt").read_text()
    assert [s.name for s in ex.steps] == ["TREEROOT", "B2", "B3", "L5"]
    assert [s.tree_usage for s in ex.steps[1:]] == ["0.500624", "0.438202", "0.333750"]
    assert [s.percentage for s in ex.steps] == ["100.000000", "20.000000", "15.000001", "10.000001"]
    assert [s.usage_per_perc for s in ex.steps] == ["801", "2005", "1340", "1000"]
    assert [s.sibling_shares for s in ex.steps] == [None, 100, 100, 15]
    for ours, theirs in zip(ex.steps, published.split("Path from root:")[1].strip().splitlines()):
        assert ours.path_line.split() == theirs.split()
    assert ex.factor_text == "0.098927"  # 2^-(0.33375 / 0.1)
    assert ex.factor == pytest.approx(2 ** -(0.33375 / 0.1), abs=1e-5)
    zero = explain_pbs(build_standing(Snapshot("s", "t", pbs=tree)), "L2")
    assert zero.factor == 0 and zero.steps[-1].usage_per_perc == "-1"
    with pytest.raises(KeyError, match="Fairshare Entity nobody does not exist."):
        explain_pbs(build_standing(Snapshot("s", "t", pbs=tree)), "nobody")


async def test_pbs_allocations_and_whatif_say_what_is_missing(seed_dir):
    alloc, whatif = await pane_texts(seed_dir, ("3", AllocationsPane), ("4", WhatIfPane))
    assert "PBS Professional snapshot: no service-unit allocations" in alloc
    assert "PBS Professional snapshot: no partitions, billing weights or jobs, so no what-if" in whatif
    assert "(here cput)" in " ".join(whatif.split())
    assert "Partition" not in whatif and "Cost" not in whatif  # the job form is hidden


async def test_demo_pbs_app_starts_and_shows_rows():
    loader = partial(demo_pbs_snapshot, me="alice", now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    app = FairtopApp(Settings(), loader, "alice", State())
    async with app.run_test(size=SIZE) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        snap = app.standing.snapshot
        assert snap.cluster == "demo-pbs" and tree.table.size == len(snap.pbs.name) > 100
        assert len(tree.rows_shown) > 5 and "demo (PBS Professional) · pbs" in app.sub_title
        first = [str(tree.table.names[r]) for r in tree.rows_shown[:2]]
        assert first[0] == "TREEROOT"
        await pilot.press("m")
        row = tree.selected_row
        assert str(tree.table.names[row]) == "alice" and tree.me_mask[row]
        # the tree shows exactly what the report table prints for the demo
        from tui.formats.pbsfs import format_pbs_table, pbs_rows

        printed = [line.split() for line in format_pbs_table(pbs_rows(snap.pbs)).splitlines()[1:]]
        assert table_rows(tree.table) == printed
        assert np.isnan(tree.table.fairshare[0])  # no bar for TREEROOT


def test_demo_source_pbs_builds_a_pbs_table():
    standing = build_standing(DemoSource("pbs").load())
    table = TreeTable.from_standing(standing)
    assert table.noun == "entities" and table.columns == PBS_COLUMNS
    assert np.array_equal(table.is_user, ~table.has_children)  # leaves count as users
    assert table.has_children[0] and table.depth[0] == 0
