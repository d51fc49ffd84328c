"""Site factors per allocation and per pending job (seed 004's power and sigmoid rules)."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from tui.allocations.records import AllocationRecord
from tui.allocations.site_factor_jobs import allocation_site_factors, format_factors, job_factors
from tui.engine.site_factor import SiteFactorParams
from tui.model import Allocation, Job

NOW = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)


def alloc(aid: str, used: float, ends_in_days: float, granted: float = 100.0) -> Allocation:
    return Allocation(aid, f"p{aid}", granted, used, 0.0, start=NOW - timedelta(days=30),
                      end=NOW + timedelta(days=ends_in_days))


def test_power_rule_by_hand() -> None:
    f = allocation_site_factors([alloc("a", 36, 10), alloc("b", 0, 40), alloc("old", 0, -1)], NOW)
    assert set(f) == {"a", "b"}  # the ended one is not active
    # a: credit 1 - 36/100 = 0.64, temporal 1 - 10/40 = 0.75; sqrt(0.64) * 0.75**2 = 0.8 * 0.5625 = 0.45
    assert (f["a"].credit, f["a"].temporal, f["a"].site, f["a"].value) == pytest.approx((0.64, 0.75, 0.45, 4500))
    # b ends last: temporal 0, so its factor is 0 whatever its credit
    assert (f["b"].credit, f["b"].temporal, f["b"].value) == (1.0, 0.0, 0)


def test_sigmoid_rule_with_configured_parameters() -> None:
    # l = 0 makes S the identity (the formula's limit): s = credit * temporal = 0.64 * 0.75 = 0.48
    params = SiteFactorParams(rule="sigmoid", sigmoid_credit=(0.0, 0.5), sigmoid_temporal=(0.0, 0.5), scale=1000)
    f = allocation_site_factors([alloc("a", 36, 10), alloc("b", 0, 40)], NOW, params)
    assert f["a"].site == pytest.approx(0.48) and f["a"].value == 480
    assert "S(credit; 0, 0.5) x S(temporal; 0, 0.5)" in f["a"].describe()


def record(rid: int, account: str, resource: str, end: str, credits: int, debits: int) -> AllocationRecord:
    return AllocationRecord(rid, rid, account, 7000 + rid, account, resource, "startup", "2026-02-01", end,
                            credits, 0, debits, credits - debits)


def test_pending_jobs_take_their_accounts_allocation() -> None:
    recs = [record(1, "chem", "cpu", "2026-03-11", 6000, 2160), record(2, "bio", "cpu", "2026-04-10", 6000, 0),
            record(3, "chem", "gpu", "2026-04-10", 600, 0)]
    jobs = [Job("11", "alice", "chem", "debug", "PENDING", {"cpu": 1}),
            Job("12", "bob", "chem", "gpu", "PENDING", {"cpu": 1, "gres/gpu": 1}),
            Job("13", "carol", "phys", "debug", "PENDING", {"cpu": 1})]
    out = job_factors(jobs, recs, NOW)
    # chem cpu: credit 1 - 2160/6000 = 0.64; ends 2026-03-11 00:00, 9.5 days away; the last ends in 39.5:
    # temporal 1 - 9.5/39.5 = 30/39.5; 0.8 * (30/39.5)**2 = 0.46146...
    assert out[0].value == round(10000 * 0.8 * (30 / 39.5) ** 2) == 4615
    assert out[1].alloc is not None and out[1].alloc.id == 3 and out[1].value == 0  # gpu ends last
    assert (out[2].factor, out[2].value, out[2].why) == (None, 0, "no active cpu allocation for account phys")
    text = format_factors(out, applied=False)
    assert text.splitlines()[0].startswith("11  chem/alice: would set SiteFactor=4615  (allocation 1 (chem, cpu, "
                                           "3,840 of 6,000 min left)")
    assert text.endswith("(dry run: --apply sets them with scontrol update job=ID SiteFactor=N)\n")
