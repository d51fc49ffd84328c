"""Allocation balances, burn rates and projected exhaustion (hand-derived values)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tests.treebuild import tree_from_text
from tui.analysis.allocations import allocation_status, allocations_for, balance_bar
from tui.model import Allocation

START = datetime(2026, 1, 1, tzinfo=timezone.utc)
END = START + timedelta(days=365)


def alloc(granted=1000.0, used=300.0, pre=100.0, **kw):
    return Allocation(kw.pop("id", "1"), kw.pop("project", "lab"), granted, used, pre, START, END, **kw)


def test_burn_rate_and_exhaustion():
    s = allocation_status(alloc(use_by_user={"bo": 100.0, "al": 200.0, "cy": 100.0}, failures=2),
                          START + timedelta(days=30))
    assert (s.granted, s.used, s.pre_debited, s.remaining) == (1000, 300, 100, 600)
    assert s.elapsed_days == 30 and s.burn_per_day == 10
    assert s.exhaustion == START + timedelta(days=90)  # 600 SU at 10 SU/day after day 30
    assert s.by_user == (("al", 200.0), ("bo", 100.0), ("cy", 100.0))
    assert s.failures == 2 and not s.exhausted
    assert s.fractions() == pytest.approx((0.3, 0.1, 0.6))
    assert balance_bar(s, 10) == ("███", "▒", "░░░░░░")


def test_no_exhaustion_when_idle_or_after_the_end():
    idle = allocation_status(alloc(used=0, pre=0), START + timedelta(days=30))
    assert idle.burn_per_day == 0 and idle.exhaustion is None
    slow = allocation_status(alloc(granted=10_000), START + timedelta(days=30))
    assert slow.exhaustion is None  # 9,600 SU / 10 per day = 960 days > end
    fresh = allocation_status(alloc(), START)
    assert fresh.elapsed_days == 0 and fresh.burn_per_day is None and fresh.exhaustion is None


def test_overdrawn_and_after_the_end():
    s = allocation_status(alloc(granted=1000, used=950, pre=100), START + timedelta(days=400))
    assert s.remaining == -50 and s.exhausted and s.exhaustion == START + timedelta(days=400)
    assert s.elapsed_days == 365  # capped at the end
    assert s.burn_per_day == pytest.approx(950 / 365)
    assert s.fractions() == pytest.approx((0.95, 0.05, 0.0))
    used, pre, rest = balance_bar(s, 20)
    assert (len(used), len(pre), len(rest)) == (19, 1, 0)


def test_small_parts_stay_visible_and_bar_fills_width():
    s = allocation_status(alloc(granted=1000, used=2, pre=1), START + timedelta(days=1))
    used, pre, rest = balance_bar(s, 30)
    assert (len(used), len(pre), len(rest)) == (1, 1, 28)


def test_allocations_for_row_uses_accounts_on_the_path():
    tree = tree_from_text("""
chem 1
  lab1 1
    @ann 1 5
  lab2 1
    @bob 1 5
""")
    allocs = (alloc(id="2", project="lab2"), alloc(id="1", project="lab1"), alloc(id="3", project="chem"))
    now = START + timedelta(days=10)
    ann = next(i for i in range(tree.size) if tree.user[i] == "ann")
    assert [s.allocation.allocation_id for s in allocations_for(allocs, tree, ann, now)] == ["3", "1"]
    assert [s.project for s in allocations_for(allocs, tree, None, now)] == ["chem", "lab1", "lab2"]
    naive = allocation_status(alloc(), datetime(2026, 1, 11))
    assert naive.elapsed_days == 10


def test_budget_lines_say_what_is_known() -> None:
    from tui.analysis.allocations import budget_line, budgets_for
    from tui.model import Budget

    tree = tree_from_text("""
chem 1
  @carol 1
phys 1
  @alice 1
""")
    budgets = (Budget("chem", "", "billing", 120_000, 126_000, 600), Budget("phys", "alice", "cpu", 5000, None))
    assert [b.account for b in budgets_for(budgets, tree, 2)] == ["chem"]  # carol: her account's budget
    assert [b.user for b in budgets_for(budgets, tree, 4)] == ["alice"]
    assert budget_line(budgets[0]) == (
        "chem: GrpTRESMins billing=120,000 · used 126,000 billing-minutes (2,100.0 SU) (105%) · left 0 "
        "billing-minutes (0.0 SU) · exhausted: Slurm holds new jobs (AssocGrpBillingMinutes) · running jobs "
        "still commit 600 billing-minutes (10.0 SU)")
    assert "used unknown" in budget_line(budgets[1])
