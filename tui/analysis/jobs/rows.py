"""Pending jobs as rows for programs: ``fairtop standing --format json``'s ``pending`` and
``fairtop jobs --format json|csv``.

What the scheduler printed keeps its printed form (the Reason as squeue gave it, sprio's parts as
numbers, the StartTime as an ISO time); what fairtop works out is in words, as the text format
says it. A value the source does not have is ``null`` in JSON and an empty cell in CSV.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from tui.analysis.jobs.explain import PendingJob

__all__ = ["JOB_COLUMNS", "pending_facts", "pending_rows"]

JOB_COLUMNS = ("job_id", "partition", "reason", "kind", "ahead", "own_ahead", "held_back_by", "start_estimate",
               "sched_nodes", "user", "account", "qos", "priority", "factor", "factor_mine", "factor_theirs",
               "reason_words", "estimate", "moves")
"""``fairtop jobs``' rows' keys, in order (the CSV header): :func:`pending_facts`' first."""


def pending_facts(p: PendingJob) -> dict[str, Any]:
    """One pending job as ``fairtop standing --format json`` gives it: the scheduler's values as
    printed, its place, and the part holding it back in words."""
    place = p.place
    return {"job_id": p.job.job_id, "partition": p.job.partition, "reason": p.job.reason,
            "kind": p.meaning.kind if p.meaning is not None else None,
            "ahead": place.ahead if place is not None else None,
            "own_ahead": place.own_ahead if place is not None else None,
            "held_back_by": p.held_back_by.words if p.held_back_by is not None else None,
            "start_estimate": p.job.start_time.isoformat() if p.job.start_time is not None else None,
            "sched_nodes": p.job.sched_nodes}


def pending_rows(explained: Sequence[PendingJob]) -> list[dict[str, Any]]:
    """:func:`pending_facts` with the job's owner, QOS, priority, sprio's part against the job
    just ahead (header and both values) and the explanation's words (``moves`` joined by " | ")."""
    rows = []
    for p in explained:
        job, gap = p.job, p.held_back_by
        rows.append({**pending_facts(p), "user": job.user, "account": job.account, "qos": job.qos,
                     "priority": job.priority, "factor": gap.factor if gap is not None else None,
                     "factor_mine": gap.mine if gap is not None else None,
                     "factor_theirs": gap.theirs if gap is not None else None,
                     "reason_words": p.why, "estimate": p.estimate, "moves": " | ".join(p.moves)})
    return rows
