"""``fairtop allocations site-factor``: each pending job's site factor from its allocation (seed 004).

The factors of every active allocation (credit: the unused share of the grant, counting held
pre-debits as used; temporal: how near its end is, against the active allocation that ends last)
come from :func:`tui.engine.site_factor.site_factors`; a pending job gets its allocation's factor
(by Slurm account, GPU jobs from the ``gpu`` allocation), scaled to Slurm's integer SiteFactor.
A dry run prints job, factor and why; ``--apply`` runs ``scontrol update job=ID SiteFactor=N``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone

import numpy as np

from tui.allocations.records import AllocationRecord
from tui.engine.site_factor import SEED_PARAMS, SiteFactorParams, site_factors
from tui.model import Job
from tui.sources.commands import run
from tui.sources.slurm_text import SQUEUE_FIELDS, parse_squeue

__all__ = ["AllocFactor", "JobFactor", "allocation_factors", "job_factors", "pending_jobs", "apply",
           "format_factors"]


@dataclass(frozen=True)
class AllocFactor:
    alloc: AllocationRecord
    credit: float
    temporal: float
    site: float
    days_left: float


@dataclass(frozen=True)
class JobFactor:
    job: Job
    factor: AllocFactor | None
    value: int
    """The integer SiteFactor to set."""
    why: str


def _end(day: str) -> datetime:
    """An allocation ends at the close of its end date."""
    return datetime.fromisoformat(day).replace(tzinfo=timezone.utc) + timedelta(days=1)


def allocation_factors(allocs: Iterable[AllocationRecord], now: datetime,
                       params: SiteFactorParams = SEED_PARAMS) -> list[AllocFactor]:
    """Factors of the allocations active at ``now`` (others are left out)."""
    today = now.astimezone(timezone.utc).date().isoformat()
    active = [a for a in allocs if a.start <= today <= a.end]
    if not active:
        return []
    left = np.array([(_end(a.end) - now).total_seconds() / 86400 for a in active])
    fc, ft, s = site_factors([a.debits + a.predebits for a in active], [a.credits for a in active], left, params)
    return [AllocFactor(a, float(c), float(t), float(v), float(d))
            for a, c, t, v, d in zip(active, fc, ft, s, left)]


def job_factors(jobs: Iterable[Job], factors: list[AllocFactor],
                params: SiteFactorParams = SEED_PARAMS) -> list[JobFactor]:
    """Each pending job's factor: that of its account's active allocation for its resource."""
    out = []
    form = (f"credit^{params.n_credit:g} x temporal^{params.n_temporal:g}" if params.rule == "power"
            else f"S(credit; {params.sigmoid_credit[0]:g}, {params.sigmoid_credit[1]:g}) x "
                 f"S(temporal; {params.sigmoid_temporal[0]:g}, {params.sigmoid_temporal[1]:g})")
    for job in jobs:
        resource = "gpu" if job.tres.get("gres/gpu", 0) > 0 else "cpu"
        f = next((f for f in factors if f.alloc.account == job.account and f.alloc.resource == resource), None)
        if f is None:
            out.append(JobFactor(job, None, 0, f"no active {resource} allocation for account {job.account}"))
            continue
        value = round(params.scale * f.site)
        why = (f"allocation {f.alloc.id} ({f.alloc.project_name}, {resource}): credit {f.credit:.3f} "
               f"({f.alloc.balance:,} of {f.alloc.credits:,} min left), temporal {f.temporal:.3f} "
               f"({f.days_left:.1f} days left); {params.rule} {form} = {f.site:.4f}")
        out.append(JobFactor(job, f, value, why))
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
