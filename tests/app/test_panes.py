"""Each pane mounted alone in a tiny app, asserting on the text it shows."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.widget import Widget
from textual.widgets import DataTable, Input, Static

from tests.app.conftest import workers_done
from tests.conftest import FIXTURES
from tests.treebuild import tree_from_text
from tui.analysis.standing import build_standing
from tui.app.panes.allocations import AllocationsPane
from tui.app.panes.breakdown import BreakdownPane
from tui.app.panes.whatif import WhatIfPane
from tui.model import Allocation, Partition, PrioritySettings, Snapshot
from tui.sources.sshare import parse_sshare

NOW = datetime(2026, 3, 1, tzinfo=timezone.utc)


class PaneApp(App):
    """Hosts one pane."""

    def __init__(self, pane: Widget) -> None:
        super().__init__()
        self.pane = pane

    def compose(self) -> ComposeResult:
        yield self.pane


async def settle(pilot) -> None:
    """Let change messages run, the panes' workers finish (the what-if one after its debounce),
    then the messages they post and the layout they cause."""
    await workers_done(pilot)


def shown(pane: Widget) -> str:
    """The text of every Static in the pane, as rendered (whole widget, scrolled or not)."""
    out = []
    for w in pane.query(Static):
        size = w.outer_size  # padding and border included: render_lines crops the whole box
        if size.width and size.height:
            out += [s.text.rstrip() for s in w.render_lines(Region(0, 0, size.width, size.height))]
    return "\n".join(out)


async def reshow(pilot, pane: Widget, standing, row: int | None) -> str:
    """Show ``row`` in a mounted pane and return its text once laid out."""
    pane.show(standing, row)
    await settle(pilot)
    return shown(pane)


async def show_text(pane: Widget, standing, row: int | None, size: tuple[int, int] = (140, 60)) -> str:
    """Mount ``pane`` alone, show ``row`` of ``standing`` and return the pane's text."""
    async with PaneApp(pane).run_test(size=size) as pilot:
        return await reshow(pilot, pane, standing, row)


def suite_standing(name, algorithm, **kw):
    tree = parse_sshare((FIXTURES / "sshare" / name).read_bytes()).tree
    snap = Snapshot("test", "test", taken_at=NOW, tree=tree,
                    settings=PrioritySettings(algorithm=algorithm), **kw)
    return build_standing(snap, me="")


def row_of(tree, account, user=""):
    return next(i for i in range(tree.size) if tree.account[i] == account and tree.user[i] == user)


async def test_breakdown_classic_uhtastd2():
    standing = suite_standing("test24_3_classic.psv", "classic")
    text = await show_text(BreakdownPane(), standing, row_of(standing.snapshot.tree, "AccountHTA", "UHTAStd2"))
    assert "Why AccountHTA/UHTAStd2 (user) has its fairshare · classic" in text
    assert "NormShares   (30/170) × (50/150) = 0.058824" in text
    assert "× 30/170 = 0.131653" in text
    assert "FairShare: F = 2^(−E / S / d) = 2^(−0.131653 / 0.058824 / 1) = 0.211966" in text
    assert "transparent: its children sit at its parent's level" in text
    assert "No pending jobs." in text


async def test_breakdown_fair_tree_uga1_and_no_selection():
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    pane = BreakdownPane()
    async with PaneApp(pane).run_test(size=(140, 60)) as pilot:
        text = await reshow(pilot, pane, standing, row_of(standing.snapshot.tree, "aGA", "uGA1"))
        empty = await reshow(pilot, pane, standing, None)
    assert "LevelFS      LevelFS = S / U = 0.500000 / 0.400000 = 1.250000" in text
    assert "place 8 of 9" in text
    # aGA ties uG1 (LevelFS 1.0, the only two at aG's level): the heading says all are tied
    assert "aGA  shares 10 of 20 · usage 10  tied with all 2 (equal LevelFS)" in text
    assert "its first user keeps the rank of the user reached just before" in text
    # how the places make the rank: 17 users before aG, uG1 before aGA, none before uGA1 = 18;
    # 21 - 18 = 3, and the tie keeps uG1's rank 4
    assert "aG: 8th of 9 in root: 17 users under the 7 siblings placed before it" in text
    assert "N − users reached first = 21 − 18 = 3" in text
    assert "FairShare: F = rank / N = 4/21 = 0.190476" in text
    assert "aGA/uGA1 ranks 4 of 21 (21 is best: 17 users are ahead)" in text
    assert empty.strip() == "Select an association in the tree."


def allocations():
    start = NOW - timedelta(days=30)
    return (
        Allocation("7", "aGA", 1000.0, 300.0, 100.0, start, start + timedelta(days=365),
                   {"uGA1": 200.0, "uGA2": 100.0}, failures=2),
        Allocation("8", "aB", 500.0, 0.0, 0.0, start, start + timedelta(days=365)),
    )


async def test_allocations_pane_shows_balance_bar_burn_and_users():
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree", allocations=allocations())
    pane = AllocationsPane()
    async with PaneApp(pane).run_test(size=(140, 50)) as pilot:
        pane.show(standing, row_of(standing.snapshot.tree, "aGA", "uGA1"))
        await settle(pilot)
        text = shown(pane)
        table = pane.query_one(DataTable)
        rows = [table.get_row_at(i) for i in range(table.row_count)]
        pane.show(standing, None)
        await settle(pilot)
        every = shown(pane)
    assert "Allocations of aGA/uGA1 and the accounts above it (SU = billing-hours; a: every allocation)" in text
    assert "test: its own allocations" in text
    # 40 cells: 30% used, 10% pre-debited, 60% remaining
    assert "█" * 12 + "▒" * 4 + "░" * 24 + "  used 300 · pre-debited 100 · remaining 600 of 1,000 SU" in text
    assert "burn 10.0 SU/day over 30 days · runs out 2026-04-30 at this rate" in text
    assert "2 jobs refused for insufficient balance" in text
    assert "aB" not in text
    assert rows == [["uGA1", "200", "66.7%"], ["uGA2", "100", "33.3%"]]
    assert "Allocations of all projects" in every and "allocation 8" in every


async def test_allocations_pane_none_for_row():
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree", allocations=allocations())
    text = await show_text(AllocationsPane(), standing, row_of(standing.snapshot.tree, "aC", "uC1"), (120, 30))
    assert "No allocation is charged through aC/uC1 and the accounts above it (2 allocations here)" in text


def two_user_standing(algorithm: str = "classic"):
    """root/a: 10 h of 40 h of usage with 1 of 2 shares, no decay (half-life 0), a 64-CPU partition
    billing 1 per CPU: a job's usage is hand-derived."""
    tree = tree_from_text(f"@a 1 {10 * 3600}\n@b 1 {30 * 3600}")
    part = Partition("cpu", {"cpu": 1.0}, total_cpus=64, total_nodes=4, tres_totals={"cpu": 64.0})
    snap = Snapshot("t", "t", taken_at=NOW, tree=tree, partitions=(part,),
                    settings=PrioritySettings(algorithm=algorithm, decay_half_life_s=0))
    return build_standing(snap, me="a")


def set_fields(pane: WhatIfPane, plan: dict[str, str], job: int = 0, **fields: str) -> None:
    for key, value in plan.items():
        pane.query_one(f"#wi-{key}", Input).value = value
    for key, value in fields.items():
        pane.jobs[job].input(key).value = value


async def test_whatif_pane_projects_the_campaign_before_and_after():
    # 8 CPUs x 10 h = 80 SU on root/a: usage 10 -> 50 -> 90 h of 40 -> 80 -> 120 h in all, so
    # EffectvUsage 0.25 -> 0.625 -> 0.75 and the classic factor 2**(-U/0.5): 0.707107 -> 0.420448 -> 0.353553.
    standing = two_user_standing()
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 120)) as pilot:
        pane.show(standing, None)  # no selection: the viewer's own association
        await settle(pilot)
        set_fields(pane, {"horizon": "10:00:00", "step": "5:00:00"}, cpus="8", walltime="10:00:00")
        await settle(pilot)
        text = shown(pane)
        assert pane.jobs[0].value("partition") == "cpu"
        set_fields(pane, {"horizon": "soon"}, cpus="0")
        await settle(pilot)
        bad = shown(pane)
        assert pane.jobs[0].input("cpus").has_class("invalid")
        assert pane.query_one("#wi-horizon", Input).has_class("invalid")
    flat = " ".join(text.split())
    assert "job 1: 1 run × 10 h at 8.00 billing/s = 80.0 SU" in flat
    assert ("root/a on 2026-03-01 10:00 (campaign end): fairshare 0.7071 → 0.3536, usage 10.0 → 90.0 SU "
            "(without → with the campaign)") in flat
    assert "root/a: lowest with the campaign on 2026-03-01 10:00: fairshare 0.7071 → 0.3536" in flat
    assert "root/a: fairshare not back to 0.5 by 2026-03-01 (end of the horizon)" in flat
    assert "2026-03-01 00:00 10.0 → 10.0 0.7071 → 0.7071" in flat
    assert "2026-03-01 05:00 10.0 → 50.0 0.7071 → 0.4204" in flat
    assert "2026-03-01 10:00 10.0 → 90.0 0.7071 → 0.3536" in flat
    bad = " ".join(bad.split())
    assert "at least 1" in bad
    assert "not a Slurm time 'soon'" in bad
    assert "Fix the fields marked in red to see the projection." in bad


async def test_whatif_pane_fair_tree_users_ahead():
    standing = suite_standing("test24_4_fair_tree.psv", "fair_tree")
    tree = standing.snapshot.tree
    pane = WhatIfPane()
    async with PaneApp(pane).run_test(size=(150, 120)) as pilot:
        pane.show(standing, row_of(tree, "aGA", "uGA1"))
        await settle(pilot)
        # no partitions: billed by CPU count; 1 CPU for 20 s = the LevelFS halving of uGA1, which
        # takes it from rank 4 to 2 of 21 (17 -> 19 users ahead) at the first calc period
        set_fields(pane, {"horizon": "10", "step": "5"}, cpus="1", walltime="0:20")
        await settle(pilot)
        text = " ".join(shown(pane).split())
        account = await reshow(pilot, pane, standing, row_of(tree, "aGA"))
    assert "aGA/uGA1: users ahead 17 → 19 of 21" in text
    assert "Plan a campaign for aGA/uGA1" in text
    assert "Plan a campaign for " in account and "aGA/uGA1" not in account.split("\n")[0]


async def test_panes_in_the_real_shell_on_the_demo(make_app) -> None:
    from textual.widgets import TabbedContent

    from tests.app.conftest import ME, SIZE, ready, until
    from tui.app.widgets.fairshare_tree import FairshareTree

    app = make_app()
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await ready(pilot)
        tree = app.query_one(FairshareTree)
        await pilot.press("m")  # jump to me: selects the viewer's association
        await settle(pilot)
        assert tree.selected_row in app.standing.my_rows
        tabs = app.query_one(TabbedContent)
        texts = {}
        waits = {"breakdown": f"/{ME} ranks ", "alloc": "llocation", "whatif": "job 1: 1 run"}
        for tab in ("breakdown", "alloc", "whatif"):
            tabs.active = tab
            await settle(pilot)
            # the pane is built when its tab opens; the breakdown follows the selection on a timer
            await until(pilot, lambda t=tab: bool(app.query(f"#pane-{t}"))
                        and waits[t] in " ".join(shown(app.query_one(f"#pane-{t}")).split()))
            texts[tab] = shown(app.query_one(f"#pane-{tab}"))  # hidden tabs render blank
        assert isinstance(app.query_one("#pane-breakdown"), BreakdownPane)
        assert isinstance(app.query_one("#pane-alloc"), AllocationsPane)
        assert isinstance(app.query_one("#pane-whatif"), WhatIfPane)
        assert f"/{ME} ranks " in texts["breakdown"]
        assert "Allocations of " in texts["alloc"] or "No allocation" in texts["alloc"]
        assert "job 1: 1 run × 24 h" in " ".join(texts["whatif"].split())
        assert not [n for n in app._notifications if n.severity == "error"], tree.selected_row


async def test_allocations_pane_shows_slurm_budgets_with_real_usage(tmp_path) -> None:
    # The sandbox capture with GrpTRESMins billing=60000 on root/ld, which used 49,995 minutes.
    from tui.sources.saved import load_folder

    live = FIXTURES / "slurm" / "live" / "fair_tree"
    mgr = (live / "assoc_mgr.txt").read_text()
    ld = mgr.index("UserName=ld(")
    (tmp_path / "assoc_mgr.txt").write_text(mgr[:ld] + mgr[ld:].replace("billing=N(49995)", "billing=60000(49995)", 1))
    (tmp_path / "sshare_a_l_P.psv").write_bytes((live / "sshare_a_l_P.psv").read_bytes())
    standing = build_standing(load_folder(tmp_path), me="ld")
    row = next(i for i in range(standing.snapshot.tree.size) if standing.snapshot.tree.user[i] == "ld")
    text = await show_text(AllocationsPane(), standing, row)
    assert "Slurm budgets (GrpTRESMins against decayed usage)" in text
    assert ("root/ld: GrpTRESMins billing=60,000 · used 49,995 billing-minutes (833.2 SU) (83%) · "
            "left 10,005 billing-minutes (166.8 SU)") in " ".join(text.split())
    assert "no service-unit allocations loaded (its Slurm budgets are below)" in text
