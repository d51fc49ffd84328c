"""The allocations pane: service-unit balances of the projects above the selected association.

Renders :class:`tui.analysis.allocations.AllocationStatus` values: a text bar of used / pre-debited /
remaining SU, the burn rate and projected exhaustion, refused jobs, and use by user.
"""

from __future__ import annotations

from datetime import datetime

from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widget import Widget
from textual.markup import escape
from textual.widgets import DataTable, Static

from tui.analysis.allocations import AllocationStatus, allocations_for, balance_bar, budget_line, budgets_for
from tui.app.panes.base import PaneFrame
from tui.analysis.standing import Standing

BAR_WIDTH = 40
PBS_TEXT = ("PBS Professional snapshot: no service-unit allocations, projects or billing, so no balances "
            "to show. It holds the fairshare tree and each entity's usage only (Tree, 1; Breakdown, 2).")


def _day(t: datetime | None) -> str:
    return t.strftime("%Y-%m-%d") if t is not None else "?"


def status_markup(s: AllocationStatus) -> str:
    """The heading, balance bar and burn lines of one allocation (Textual markup)."""
    used, pre, rest = balance_bar(s, BAR_WIDTH)
    a = s.allocation
    lines = [
        f"[b]{escape(s.project)}[/b]  [$text-muted]allocation {escape(a.allocation_id)} · "
        f"{_day(a.start)} → {_day(a.end)}[/]",
        f"[$error]{used}[/][$warning]{pre}[/][$success]{rest}[/]  "
        f"used {s.used:,.0f} · pre-debited {s.pre_debited:,.0f} · remaining {s.remaining:,.0f} "
        f"of {s.granted:,.0f} SU",
    ]
    if s.burn_per_day is None:
        burn = "burn rate: not started yet"
    else:
        burn = f"burn {s.burn_per_day:,.1f} SU/day over {s.elapsed_days:,.0f} days"
    if s.exhausted:
        burn += " · [$error]exhausted[/]"
    elif s.exhaustion is not None:
        burn += f" · [$warning]runs out {_day(s.exhaustion)}[/] at this rate"
    elif s.burn_per_day:
        burn += " · lasts past the end at this rate"
    lines.append(burn)
    if s.failures:
        lines.append(f"[$error]{s.failures} job{'s' if s.failures != 1 else ''} refused for "
                     "insufficient balance[/]")
    return "\n".join(lines)


class AllocationsPane(PaneFrame):
    """Allocation balances for the selected association's accounts (all when none is selected)."""

    DEFAULT_CSS = """
    AllocationsPane .al-block { height: auto; padding-bottom: 1; }
    AllocationsPane .al-status { color: $foreground; }
    AllocationsPane DataTable { height: auto; max-height: 12; background: $surface; }
    """

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="al-scroll"):
            yield Static("No allocations loaded.", id="al-title", classes="pane-title", markup=False)

    def show(self, standing: Standing, row: int | None) -> None:
        """List the allocations charged through ``row``'s account or the accounts above it."""
        snap = standing.snapshot
        if standing.algorithm == "pbs":
            self.query_one("#al-scroll", VerticalScroll).remove_children(".al-block")
            self.query_one("#al-title", Static).update(PBS_TEXT)
            return
        statuses = allocations_for(snap.allocations, snap.tree, row, snap.taken_at)
        scope = "all projects"
        if snap.tree is not None and row is not None:
            scope = f"{snap.tree.label(row)} and the accounts above it"
        title = self.query_one("#al-title", Static)
        scroll = self.query_one("#al-scroll", VerticalScroll)
        scroll.remove_children(".al-block")
        budgets = budgets_for(snap.budgets, snap.tree, row)
        if budgets or snap.budgets:
            text = ("\n".join(escape(budget_line(b)) for b in budgets) if budgets
                    else f"none binds {escape(scope)} ({len(snap.budgets)} on the cluster)")
            scroll.mount(Static(f"[b]Slurm budgets[/b] (GrpTRESMins against decayed usage)\n{text}",
                                classes="al-block al-status"))
        if not snap.allocations:
            title.update("This cluster has no service-unit allocations loaded"
                         + (" (its Slurm budgets are below)." if snap.budgets else "."))
            return
        if not statuses:
            title.update(f"No allocation is charged through {scope} "
                         f"({len(snap.allocations)} allocations on the cluster). Select another "
                         "association in the tree (1), or press m for your own.")
            return
        title.update(f"Allocations of {scope} (SU = billing-hours)")
        scroll.mount_all(self._block(s, standing.me) for s in statuses)

    def _block(self, s: AllocationStatus, me: str) -> Vertical:
        table: DataTable = DataTable(cursor_type="row", zebra_stripes=True)
        table.add_columns("user", "SU", "share")
        total = sum(v for _, v in s.by_user) or 1.0
        for user, su in s.by_user:
            name = f"{user} (you)" if me and user == me else user
            table.add_row(name, f"{su:,.0f}", f"{su / total:.1%}")
        parts: list[Widget] = [Static(status_markup(s), classes="al-status")]
        if s.by_user:
            parts.append(table)
        return Vertical(*parts, classes="al-block")
