"""ColdFront's allocations beside Slurm's own budgets: the two numbers a user at a ColdFront site
sees, why they differ, and which one stops jobs. Pure: records in, records and text out.

ColdFront pushes budgets into Slurm (``coldfront slurm_dump`` writes ``GrpTRESMins=cpu=...`` onto
the account's line from its ``slurm_specs``, e.g. Core Usage (Hours) x 60) and learns usage back
only from XDMoD (``coldfront xdmod_usage``), days late or never. Slurm counts every job as it
ends (GrpTRESRaw, decayed with PriorityDecayHalfLife unless the QOS has NoDecay) and refuses new
jobs of the account once it reaches GrpTRESMins: the scheduler's number stops jobs, ColdFront's
stops nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from tui.allocations.coldfront import ColdFrontAllocation, ColdFrontView, UsageAttribute
from tui.model import Budget
from tui.sources.errors import InputError, SourceUnavailable

if TYPE_CHECKING:
    from tui.sources.registry import Source

__all__ = ["TRES_OF", "Reconciled", "coldfront_json", "coldfront_lines", "coldfront_summary", "reconcile",
           "slurm_budgets"]

TRES_OF = {"Core Usage (Hours)": "cpu", "Accelerator Usage (Hours)": "gres/gpu"}
"""The Slurm TRES whose minutes a ColdFront usage attribute counts in hours."""
AGREE = 0.005
"""Relative difference under which the two usages agree (rounding, a job ending meanwhile)."""


@dataclass(frozen=True)
class Reconciled:
    """One usage attribute of a ColdFront allocation beside the Slurm budget on its account."""

    allocation: ColdFrontAllocation
    attribute: UsageAttribute
    budget: Budget | None
    """The account's GrpTRESMins on the attribute's TRES; None: Slurm has none."""
    difference_hours: float | None
    """Slurm's used hours minus ColdFront's usage; None when either is unknown."""
    cause: str
    """The likeliest cause of the difference (or why there is nothing to compare)."""
    enforced_by: str
    """Which number stops jobs, in words."""

    @property
    def slurm_used_hours(self) -> float | None:
        b = self.budget
        return b.used_minutes / 60 if b is not None and b.used_minutes is not None else None


def _cause(attr: UsageAttribute, budget: Budget, account: str) -> tuple[float | None, str]:
    used = budget.used_minutes
    notes = []
    if attr.budget is not None and round(attr.budget * 60) != budget.limit_minutes:
        notes.append(f"Slurm's limit ({budget.limit_minutes:,} min = {budget.limit_minutes / 60:,.0f} h) is not "
                     f"ColdFront's budget ({attr.budget:,.0f} h): slurm_dump and sacctmgr load have not run since "
                     "the budget changed")
    if used is None:
        return None, "; ".join([*notes, "the source gives Slurm's limit but not its usage (scontrol show assoc_mgr "
                                        "has GrpTRESRaw)"])
    if attr.usage is None:
        return None, "; ".join([*notes, "ColdFront has no usage record for this attribute"])
    diff = used / 60 - attr.usage
    scale = max(abs(used / 60), abs(attr.usage), 1.0)
    if abs(diff) <= AGREE * scale:
        why = "they agree"
    elif attr.usage == 0:
        why = "ColdFront has no usage yet: coldfront xdmod_usage has not run (or XDMoD has no jobs of " \
              f"account {account})"
    elif diff > 0:
        why = "ColdFront's usage dates from the last XDMoD sync (coldfront xdmod_usage); Slurm counts every job " \
              "as it ends"
    else:
        why = "Slurm's usage decays with PriorityDecayHalfLife (no NoDecay on the QOS) or was reset, while " \
              "XDMoD's total in ColdFront never decays"
    return diff, "; ".join([*notes, why])


def _enforcer(budget: Budget | None, account: str, tres: str) -> str:
    if budget is None:
        return (f"nothing: Slurm has no GrpTRESMins {tres} on account {account}, and ColdFront does not stop jobs "
                "(run coldfront slurm_dump and sacctmgr load to push its budget)")
    if budget.used_minutes is None:
        return f"Slurm: GrpTRESMins {tres}={budget.limit_minutes:,} on {account} (its usage unknown here)"
    left = budget.limit_minutes - budget.used_minutes
    if left <= 0:
        return (f"Slurm: GrpTRESRaw {tres}={budget.used_minutes:,} has reached GrpTRESMins "
                f"{tres}={budget.limit_minutes:,}: new jobs of {account} wait (AssocGrp*MinutesLimit)")
    return (f"Slurm: jobs of {account} start until GrpTRESRaw {tres} reaches GrpTRESMins "
            f"{tres}={budget.limit_minutes:,} ({left:,} min = {left / 60:,.1f} h left); ColdFront's number stops "
            "nothing")


def reconcile(allocations: Iterable[ColdFrontAllocation], budgets: Sequence[Budget]) -> list[Reconciled]:
    """Each usage attribute with a Slurm TRES (:data:`TRES_OF`) of each allocation that names a
    ``slurm_account_name``, beside that account's own GrpTRESMins (not a user's)."""
    by_key = {(b.account, b.tres): b for b in budgets if not b.user}
    out = []
    for a in allocations:
        if not a.slurm_account:
            continue
        for attr in a.usage:
            tres = TRES_OF.get(attr.name)
            if tres is None:
                continue
            budget = by_key.get((a.slurm_account, tres))
            diff, cause = (_cause(attr, budget, a.slurm_account) if budget is not None
                           else (None, f"no Slurm budget to compare: account {a.slurm_account} has no GrpTRESMins "
                                       f"{tres} in this snapshot"))
            out.append(Reconciled(a, attr, budget, diff, cause, _enforcer(budget, a.slurm_account, tres)))
    return out


def _amount(value: float | None, unit: str) -> str:
    return "unknown" if value is None else f"{value:,.1f} {unit}".rstrip()


def _attribute_line(attr: UsageAttribute) -> str:
    unit = attr.unit.lower()
    budget = _amount(attr.budget, unit) if attr.budget is not None else repr(attr.budget_text)
    used = _amount(attr.usage, unit) if attr.usage is not None else "unknown (no usage record)"
    share = (f" ({attr.usage / attr.budget:.0%})" if attr.budget and attr.usage is not None else "")
    return f"{attr.name}: budget {budget} · ColdFront's usage {used}{share}"


def coldfront_lines(view: ColdFrontView, reconciled: Sequence[Reconciled] = ()) -> list[str]:
    """The view as text: one block per allocation; its reconciliation with Slurm under each
    usage attribute that has one."""
    if not view.allocations:
        return [f"ColdFront {view.url}: no allocations of yours (none of a project you lead, manage or use)"]
    rec = {(r.allocation.id, r.attribute.name): r for r in reconciled}
    when = (f" as the site's publisher read them at {view.published_at.astimezone():%Y-%m-%d %H:%M}"
            if view.published_at else "")
    out = [f"ColdFront {view.url}: {len(view.allocations)} allocation(s){when}"]
    for a in view.allocations:
        out.append(f"#{a.id} {a.project} · {a.resource} · {a.status}"
                   + (f" · Slurm account {a.slurm_account}" if a.slurm_account else ""))
        out.append(f"  {a.end_text()}")
        if a.slurm_specs is not None:
            out.append(f"  slurm_specs (staff only): {a.slurm_specs}")
        if not a.usage:
            out.append("  no usage attribute (no budget in ColdFront)")
        for attr in a.usage:
            out.append(f"  {_attribute_line(attr)}")
            r = rec.get((a.id, attr.name))
            if r is None:
                continue
            if r.budget is not None:
                out.append(f"    Slurm's own usage (GrpTRESRaw {r.budget.tres}): "
                           f"{_amount(r.slurm_used_hours, 'h')} · difference "
                           f"{'unknown' if r.difference_hours is None else f'{r.difference_hours:+,.1f} h'}")
            out.append(f"    why: {r.cause}")
            out.append(f"    stops jobs: {r.enforced_by}")
    return out


def coldfront_json(view: ColdFrontView, reconciled: Sequence[Reconciled] = ()) -> dict[str, Any]:
    """The view as JSON-ready data (unknown numbers are null, never 0)."""
    rec = {(r.allocation.id, r.attribute.name): r for r in reconciled}

    def attribute(a: ColdFrontAllocation, attr: UsageAttribute) -> dict[str, Any]:
        item: dict[str, Any] = {"name": attr.name, "budget": attr.budget, "budget_text": attr.budget_text,
                                "usage": attr.usage}
        r = rec.get((a.id, attr.name))
        if r is not None:
            item["slurm"] = {
                "tres": TRES_OF[attr.name],
                "grp_tres_mins": r.budget.limit_minutes if r.budget else None,
                "grp_tres_raw": r.budget.used_minutes if r.budget else None,
                "difference_hours": r.difference_hours, "cause": r.cause, "enforced_by": r.enforced_by,
            }
        return item

    def allocation(a: ColdFrontAllocation) -> dict[str, Any]:
        item: dict[str, Any] = {
            "id": a.id, "project": a.project, "resource": a.resource, "status": a.status,
            "slurm_account": a.slurm_account, "end_date": None, "ended": a.ended, "end": a.end_text(),
            "page": a.page, "usage": [attribute(a, attr) for attr in a.usage],
        }
        if a.slurm_specs is not None:
            item["slurm_specs"] = a.slurm_specs
        return item

    doc: dict[str, Any] = {"coldfront": view.url, "staff": view.staff,
                           "allocations": [allocation(a) for a in view.allocations]}
    if view.published_at is not None:
        doc["published_at"] = view.published_at.isoformat()
    return doc


def slurm_budgets(source: Source | None) -> tuple[tuple[Budget, ...] | None, str]:
    """The GrpTRESMins budgets of ``source``'s snapshot, and where they come from; (None, why)
    when there is no source (the demo's budgets are made up) or it cannot be read."""
    if source is None:
        return None, "not compared: no cluster source (set source in the config, or run on the cluster)"
    try:
        source.check()
        snap = source.load()
    except (InputError, SourceUnavailable, OSError) as exc:
        return None, f"not compared: {exc}"
    if not snap.budgets:
        return (), f"{snap.source}: no GrpTRESMins budgets"
    return snap.budgets, f"GrpTRESMins budgets of {snap.source} ({len(snap.budgets)})"


def coldfront_summary(view: ColdFrontView, reconciled: Sequence[Reconciled] = ()) -> str:
    """One line (``fairtop standing``): each allocation with a budget, its share used in
    ColdFront and, where Slurm has a budget on its account, Slurm's own count; ended ones last."""
    rec = {(r.allocation.id, r.attribute.name): r for r in reconciled}
    parts, ended = [], 0
    for a in view.allocations:
        if a.ended:
            ended += 1
            continue
        for attr in a.usage:
            if attr.budget is None:
                continue
            used = "usage unknown" if attr.usage is None else f"{attr.usage:,.0f} used" + (
                f" ({attr.usage / attr.budget:.0%})" if attr.budget else "")
            part = f"{a.slurm_account or a.resource} {attr.name}: {used} of {attr.budget:,.0f}"
            r = rec.get((a.id, attr.name))
            if r is not None and r.budget is not None and r.slurm_used_hours is not None:
                part += f", Slurm counts {r.slurm_used_hours:,.0f} of {r.budget.limit_minutes / 60:,.0f} and stops jobs"
            parts.append(part)
    if not view.allocations:
        return "ColdFront: no allocations of yours"
    tail = f" · {ended} ended" if ended else ""
    return "ColdFront: " + (" · ".join(parts) if parts else "no budgets") + tail
