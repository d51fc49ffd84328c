"""``fairtop allocations site-factor``: each pending job's site factor from its allocation (seed 004).

The factors of every active allocation (credit: the unused share of the grant, counting held
pre-debits as used; temporal: how near its end is, against the active allocation that ends last)
come from :func:`tui.engine.site_factor.site_factors`; a pending job gets its allocation's factor
(by Slurm account, GPU jobs from the ``gpu`` allocation), scaled to Slurm's integer SiteFactor.
A dry run prints job, factor and why; ``--apply`` runs ``scontrol update job=ID SiteFactor=N``.
The allocations pane shows the same factors (:func:`allocation_site_factors`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from tui.allocations.client import to_model
from tui.allocations.records import AllocationRecord
from tui.engine.site_factor import SEED_PARAMS, SiteFactorParams, site_factors
from tui.model import Allocation, Job
from tui.sources.commands import run
from tui.sources.slurm_text import SQUEUE_FIELDS, parse_squeue

__all__ = ["SiteFactor", "JobFactor", "allocation_site_factors", "job_factors", "pending_jobs", "apply",
           "format_factors"]


@dataclass(frozen=True)
class SiteFactor:
    """One active allocation's factors."""

    credit: float
    temporal: float
    site: float
    value: int
    """Slurm's integer SiteFactor (``scale x site``, rounded)."""
    days_left: float
    params: SiteFactorParams

    def form(self) -> str:
        p = self.params
        if p.rule == "power":
            return f"credit^{p.n_credit:g} x temporal^{p.n_temporal:g}"
        return (f"S(credit; {p.sigmoid_credit[0]:g}, {p.sigmoid_credit[1]:g}) x "
                f"S(temporal; {p.sigmoid_temporal[0]:g}, {p.sigmoid_temporal[1]:g})")

    def describe(self) -> str:
        return (f"site factor {self.site:.3f} = {self.form()} with credit {self.credit:.3f}, temporal "
                f"{self.temporal:.3f} ({self.days_left:.1f} days left) -> SiteFactor={self.value}")


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo else t.replace(tzinfo=timezone.utc)


def allocation_site_factors(allocs: Iterable[Allocation], now: datetime,
                            params: SiteFactorParams = SEED_PARAMS) -> dict[str, SiteFactor]:
    """The factors of the allocations active at ``now``, by allocation id.

    The temporal factor is relative to the active allocation that ends last, so pass one
    origin's allocations together. Held pre-debits count as used credit. An allocation ends at
    its ``end`` (the ledger's end date, 00:00 UTC).
    """
    now = _aware(now)
    active = [a for a in allocs if a.start is not None and a.end is not None
              and _aware(a.start) <= now < _aware(a.end)]
    if not active:
        return {}
    left = np.array([(_aware(a.end) - now).total_seconds() / 86400 for a in active if a.end is not None])
    fc, ft, s = site_factors([a.used_su + a.pre_debited_su for a in active], [a.granted_su for a in active],
                             left, params)
    return {a.allocation_id: SiteFactor(float(c), float(t), float(v), round(params.scale * float(v)), float(d), params)
            for a, c, t, v, d in zip(active, fc, ft, s, left)}


@dataclass(frozen=True)
class JobFactor:
    job: Job
    alloc: AllocationRecord | None
    factor: SiteFactor | None
    why: str

    @property
    def value(self) -> int:
        return self.factor.value if self.factor is not None else 0


def job_factors(jobs: Iterable[Job], records: list[AllocationRecord], now: datetime,
                params: SiteFactorParams = SEED_PARAMS) -> list[JobFactor]:
    """Each pending job's factor: that of its account's active allocation for its resource."""
    factors = allocation_site_factors([to_model(r, user_names=False) for r in records], now, params)
    out = []
    for job in jobs:
        resource = "gpu" if job.tres.get("gres/gpu", 0) > 0 else "cpu"
        rec = next((r for r in records if r.account == job.account and r.resource == resource
                    and str(r.id) in factors), None)
        if rec is None:
            out.append(JobFactor(job, None, None, f"no active {resource} allocation for account {job.account}"))
            continue
        f = factors[str(rec.id)]
        why = (f"allocation {rec.id} ({rec.project_name}, {resource}, {rec.balance:,} of {rec.credits:,} min left): "
               f"{f.describe()}")
        out.append(JobFactor(job, rec, f, why))
    return out


def pending_jobs() -> list[Job]:
    """Pending jobs of every user (``squeue -a -t PENDING``)."""
    args = ["squeue", "-a", "-t", "PENDING", "-O", ",".join(f"{n}:|" for n in SQUEUE_FIELDS)]
    return [j for j in parse_squeue(run(args).stdout, "squeue") if j.state == "PENDING"]


def apply(factors: Iterable[JobFactor]) -> list[str]:
    """``scontrol update job=ID SiteFactor=N`` for each job (an argument list each)."""
    done = []
    for f in factors:
        run(["scontrol", "update", f"job={f.job.job_id}", f"SiteFactor={f.value}"])
        done.append(f.job.job_id)
    return done


def format_factors(factors: list[JobFactor], applied: bool) -> str:
    if not factors:
        return "no pending jobs\n"
    width = max(len(f.job.job_id) for f in factors)
    verb = "set" if applied else "would set"
    lines = [f"{f.job.job_id:>{width}}  {f.job.account}/{f.job.user}: {verb} SiteFactor={f.value}  ({f.why})"
             for f in factors]
    if not applied:
        lines.append("(dry run: --apply sets them with scontrol update job=ID SiteFactor=N)")
    return "\n".join(lines) + "\n"
