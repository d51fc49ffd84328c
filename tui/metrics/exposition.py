"""A snapshot as OpenMetrics text: the whole fairshare tree (Slurm associations or PBS
entities), every allocation, pending jobs per account, the scheduler and the snapshot's time.

The text is made once per snapshot (:func:`snapshot_body`); a scrape adds only the snapshot's age
(:func:`age_tail`), so a scrape costs no recomputation. Slurm values come from the code path of
``fairtop report --format json`` (:func:`tui.analysis.report_inputs.report_inputs`), so what the
report leaves blank is left out here too.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timezone

from tui.allocations.coldfront import ColdFrontAllocation
from tui.analysis.allocations import allocation_status
from tui.analysis.report_inputs import report_inputs
from tui.formats.openmetrics import Family, association_families, label_set, number, pbs_families
from tui.formats.pbsfs import pbs_rows
from tui.formats.sshare import report_blocks
from tui.model import Allocation, Snapshot

__all__ = ["ALLOCATION_METRICS", "COLDFRONT_METRICS", "SNAPSHOT_METRICS", "age_tail", "allocation_families",
           "coldfront_families", "merge", "snapshot_body", "snapshot_families"]

#: AllocationStatus attribute -> (metric, help).
ALLOCATION_METRICS = {
    "granted": ("fairtop_allocation_credits", "SU granted (credits)"),
    "pre_debited": ("fairtop_allocation_pre_debits", "SU held for running jobs (pre-debits)"),
    "used": ("fairtop_allocation_debits", "SU debited by finished jobs"),
    "remaining": ("fairtop_allocation_balance", "SU left: credits - debits - pre-debits (negative: overdrawn)"),
    "burn_per_day": ("fairtop_allocation_burn_rate", "SU debited per day over the elapsed period"),
    "exhaustion": ("fairtop_allocation_exhaustion_timestamp_seconds",
                   "when the balance runs out at the burn rate (absent: not before the end, or unknown)"),
}
COLDFRONT_METRICS = {
    "budget": ("fairtop_coldfront_budget", "a ColdFront allocation's usage attribute: its value, the budget granted "
               "(in the attribute's unit: Core Usage (Hours) in core-hours)"),
    "usage": ("fairtop_coldfront_usage", "what ColdFront last learnt of its usage (from XDMoD; absent: no usage "
              "record)"),
}
SNAPSHOT_METRICS = {
    "age": ("fairtop_snapshot_age_seconds", "seconds since the snapshot was taken, at the scrape"),
    "time": ("fairtop_snapshot_timestamp_seconds", "when the snapshot was taken (Unix time)"),
    "info": ("fairtop_scheduler_info", "the scheduler and its release (version \"unknown\" when the source "
             "did not say)"),
    "warnings": ("fairtop_snapshot_warnings", "warnings about the snapshot (fairtop report prints them), "
                 "engine-vs-printed disagreements included"),
    "pending": ("fairtop_account_pending_jobs", "pending jobs of the account's own associations"),
    "priority": ("fairtop_account_pending_priority_max", "the highest priority among the account's pending jobs"),
    "cluster_pending": ("fairtop_cluster_pending_jobs", "pending jobs of the cluster, those without an account "
                        "included"),
}


def allocation_families(allocations: Iterable[Allocation], now: datetime, labels: Mapping[str, str]) -> list[Family]:
    """Balance, burn rate and projected exhaustion of each allocation at ``now`` (as the
    allocations pane computes them), labelled ``labels`` + allocation and project."""
    fams = {key: Family(name, text) for key, (name, text) in ALLOCATION_METRICS.items()}
    for alloc in allocations:
        status = allocation_status(alloc, now)
        one = label_set({**labels, "allocation": alloc.allocation_id, "project": alloc.project})
        for key, fam in fams.items():
            value = getattr(status, key)
            if isinstance(value, datetime):
                value = value.timestamp()
            if value is not None:
                fam.add(one, number(float(value)))
    return list(fams.values())


def coldfront_families(allocations: Iterable[ColdFrontAllocation], labels: Mapping[str, str]) -> list[Family]:
    """Budget and usage of each public usage attribute of each ColdFront allocation, labelled
    ``labels`` + allocation, project, resource, status, account and attribute (private
    attributes, kept for a staff reader, are never served)."""
    fams = {key: Family(name, text) for key, (name, text) in COLDFRONT_METRICS.items()}
    for a in allocations:
        for attr in a.usage:
            if not attr.public:
                continue
            one = label_set({**labels, "allocation": str(a.id), "project": a.project, "resource": a.resource,
                             "status": a.status, "account": a.slurm_account or "", "attribute": attr.name})
            for key, value in (("budget", attr.budget), ("usage", attr.usage)):
                if value is not None:
                    fams[key].add(one, number(value))
    return list(fams.values())


def _pending(snap: Snapshot, cluster: str) -> list[Family]:
    """Pending jobs and their highest priority per account, and the cluster's pending jobs;
    nothing when the source has no jobs (unknown, not 0). Every account of the tree gets its
    count, 0 included."""
    if snap.capabilities is not None and "jobs" not in snap.capabilities:
        return []
    count: dict[str, int] = defaultdict(int)
    top: dict[str, int] = {}
    pending = 0
    for job in snap.jobs:
        if job.state == "PENDING":
            pending += 1
            if not job.account:  # squeue without accounts: the snapshot warns; no account to count it under
                continue
            count[job.account] += 1
            if job.priority is not None:
                top[job.account] = max(job.priority, top.get(job.account, job.priority))
    if snap.tree is not None:
        for i in range(snap.tree.size):
            if not snap.tree.is_user[i] and i > 0:
                count.setdefault(str(snap.tree.account[i]), 0)
    jobs, prio = Family(*SNAPSHOT_METRICS["pending"]), Family(*SNAPSHOT_METRICS["priority"])
    for account in sorted(count):
        labels = label_set({"cluster": cluster, "account": account})
        jobs.add(labels, str(count[account]))
        if account in top:
            prio.add(labels, str(top[account]))
    total = Family(*SNAPSHOT_METRICS["cluster_pending"])
    total.add(label_set({"cluster": cluster}), str(pending))
    return [jobs, prio, total]


def snapshot_body(snap: Snapshot) -> tuple[str, list[str]]:
    """Every family of ``snap`` but its age as text, and the warnings."""
    fams, notes = snapshot_families(snap)
    return "".join(f.text() for f in fams), notes


def merge(parts: Iterable[Sequence[Family]]) -> str:
    """The families of several snapshots (clusters) as one text: each family once, with the
    samples of every part (the format allows one ``# TYPE`` per family)."""
    heads: dict[str, str] = {}
    samples: dict[str, list[str]] = defaultdict(list)
    for fams in parts:
        for fam in fams:
            if fam.samples:
                heads.setdefault(fam.name, fam.head)
                samples[fam.name] += fam.samples
    return "".join(head + "".join(samples[name]) for name, head in heads.items())


def snapshot_families(snap: Snapshot) -> tuple[list[Family], list[str]]:
    """Every family of ``snap`` but its age, and the warnings (as ``fairtop report`` gives them)."""
    cluster = snap.cluster
    notes = list(snap.warnings)
    fams: list[Family] = []
    if snap.pbs is not None:
        fams += pbs_families(cluster, pbs_rows(snap.pbs))
        scheduler = "pbs"
    elif snap.tree is not None:
        got = report_inputs(snap)
        notes = got.notes
        no_usage = snap.capabilities is not None and "usage" not in snap.capabilities
        fams += association_families(cluster, got.tree, report_blocks(got.tree, got.result, got.damping,
                                                                      printed=got.printed),
                                     range(got.tree.size) if no_usage else snap.usage_unknown)
        scheduler = "slurm"
    else:
        scheduler = "unknown"
    fams += _pending(snap, cluster)
    fams += allocation_families(snap.allocations, _aware(snap.taken_at), {"cluster": cluster, "origin": "snapshot"})
    one = label_set({"cluster": cluster})
    for key, value in (("time", number(_aware(snap.taken_at).timestamp())), ("warnings", str(len(notes)))):
        fam = Family(*SNAPSHOT_METRICS[key])
        fam.add(one, value)
        fams.append(fam)
    info = Family(*SNAPSHOT_METRICS["info"])
    info.add(label_set({"cluster": cluster, "scheduler": scheduler, "version": snap.scheduler_version or "unknown",
                        "algorithm": snap.settings.algorithm if scheduler == "slurm" else ""}), "1")
    fams.append(info)
    return fams, notes


def _aware(t: datetime) -> datetime:
    return t if t.tzinfo is not None else t.replace(tzinfo=timezone.utc)


def age_tail(snaps: Snapshot | Iterable[Snapshot], now: datetime | None = None) -> str:
    """The snapshots' ages at ``now`` (default: the clock), as the family that ends the scrape."""
    now = now or datetime.now(timezone.utc)
    age = Family(*SNAPSHOT_METRICS["age"])
    for snap in [snaps] if isinstance(snaps, Snapshot) else snaps:
        age.add(label_set({"cluster": snap.cluster}), number(round((now - _aware(snap.taken_at)).total_seconds(), 3)))
    return age.text()
