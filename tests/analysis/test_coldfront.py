"""ColdFront's usage beside Slurm's own (tui.analysis.coldfront.reconcile): the difference, its
likeliest cause, and which number stops jobs. Pure: records in, records out."""

from __future__ import annotations

import pytest

from tui.allocations.coldfront import ColdFrontAllocation, ColdFrontView, UsageAttribute
from tui.analysis.coldfront import coldfront_json, coldfront_lines, reconcile
from tui.model import Budget


def alloc(budget: float | None = 150000.0, usage: float | None = 41234.5, account: str | None = "cgray-metered",
          name: str = "Core Usage (Hours)", status: str = "Active") -> ColdFrontAllocation:
    attr = UsageAttribute(name, budget, str(budget), usage)
    return ColdFrontAllocation(4, "QGP", "University Metered HPC", status, (attr,), account,
                               "https://cf.example/allocation/4/")


def limit(used: int | None, limit_minutes: int = 9_000_000, tres: str = "cpu", user: str = "") -> Budget:
    return Budget("cgray-metered", user, tres, limit_minutes, used)


def test_slurm_ahead_of_coldfront_is_the_xdmod_lag() -> None:
    [r] = reconcile([alloc()], [limit(2_700_000)])
    assert r.slurm_used_hours == 45000.0
    assert r.difference_hours == pytest.approx(3765.5)
    assert r.cause == ("ColdFront's usage dates from the last XDMoD sync (coldfront xdmod_usage); Slurm counts "
                       "every job as it ends")
    assert r.enforced_by == ("Slurm: jobs of cgray-metered start until GrpTRESRaw cpu reaches GrpTRESMins "
                             "cpu=9,000,000 (6,300,000 min = 105,000.0 h left); ColdFront's number stops nothing")


def test_slurm_behind_coldfront_is_decay_or_a_reset() -> None:
    [r] = reconcile([alloc()], [limit(600_000)])
    assert r.difference_hours == pytest.approx(-31234.5)
    assert r.cause.startswith("Slurm's usage decays with PriorityDecayHalfLife")


def test_no_xdmod_usage_yet_and_agreement() -> None:
    [r] = reconcile([alloc(usage=0.0)], [limit(60)])
    assert r.cause.startswith("ColdFront has no usage yet: coldfront xdmod_usage has not run")
    [r] = reconcile([alloc(usage=1000.0)], [limit(60_010)])
    assert r.cause == "they agree"


def test_a_limit_that_is_not_coldfronts_budget_says_slurm_dump_has_not_run() -> None:
    [r] = reconcile([alloc(budget=200000.0)], [limit(2_700_000)])
    assert r.cause.startswith("Slurm's limit (9,000,000 min = 150,000 h) is not ColdFront's budget (200,000 h): "
                              "slurm_dump and sacctmgr load have not run since the budget changed; ")


def test_an_exhausted_budget_holds_jobs() -> None:
    [r] = reconcile([alloc()], [limit(9_000_000)])
    assert r.enforced_by == ("Slurm: GrpTRESRaw cpu=9,000,000 has reached GrpTRESMins cpu=9,000,000: new jobs of "
                             "cgray-metered wait (AssocGrp*MinutesLimit)")


def test_unknowns_stay_unknown() -> None:
    [r] = reconcile([alloc()], [limit(None)])
    assert r.difference_hours is None and r.slurm_used_hours is None
    assert "gives Slurm's limit but not its usage" in r.cause
    [r] = reconcile([alloc(usage=None)], [limit(5)])
    assert r.difference_hours is None and r.cause == "ColdFront has no usage record for this attribute"
    lines = coldfront_lines(ColdFrontView("https://cf.example", False, (alloc(usage=None),)), [r])
    assert "  Core Usage (Hours): budget 150,000.0 hours · ColdFront's usage unknown (no usage record)" in lines
    assert coldfront_json(ColdFrontView("x", False, (alloc(usage=None),)), [r])["allocations"][0]["usage"][0][
        "slurm"]["difference_hours"] is None


def test_no_budget_in_slurm_means_nothing_stops_jobs() -> None:
    [r] = reconcile([alloc()], [limit(5, user="cgray"), limit(5, tres="billing")])  # a user's, another TRES
    assert r.budget is None
    assert r.enforced_by.startswith("nothing: Slurm has no GrpTRESMins cpu on account cgray-metered")


def test_what_is_not_reconciled() -> None:
    assert reconcile([alloc(account=None)], [limit(5)]) == []  # no slurm_account_name
    assert reconcile([alloc(name="Cloud Storage Quota (TB)")], [limit(5)]) == []  # no Slurm TRES
    [r] = reconcile([alloc(name="Accelerator Usage (Hours)")], [limit(120, tres="gres/gpu")])
    assert r.slurm_used_hours == 2.0
