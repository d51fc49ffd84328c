"""``fairtop whatif`` output: the projection as JSON (the stable contract), CSV or a table.

JSON: ``{"t_hours": [...], "series": [{"account", "user", "raw_usage", "fairshare", ...}], ...}``;
each series also carries ``raw_usage_before``/``fairshare_before`` (without the campaign),
``balance`` (SU free at each step, with ``balance_source``; absent with ``balance_note`` when
unknown), and ``priority`` with ``priority_parts`` (its first job line's, see ``planned``);
NaN (no value, e.g. a Fair Tree account's fairshare) and inf (LevelFS without usage) become
``null``, as in ``fairtop report``.
"""

from __future__ import annotations

import csv
import io
import json
import math
from typing import Any

import numpy as np

from tui.analysis.planner.answers import AdminAnswer
from tui.analysis.planner.priority import PlannedPriority
from tui.analysis.planner.result import ScenarioResult

__all__ = ["whatif_dict", "format_whatif_json", "format_whatif_csv", "format_whatif_table"]

_OPTIONAL = ("rank", "ahead", "level_fs", "priority_fairshare", "tree_usage", "raw_usage_before", "fairshare_before",
             "rank_before", "fairshare_stop")


def _list(x: np.ndarray) -> list[Any]:
    out: list[Any] = []
    for v in x.tolist():
        if isinstance(v, float) and not math.isfinite(v):
            out.append(None)  # NaN (no value) and inf (LevelFS of no usage), as `report` does
        else:
            out.append(v)
    return out


def whatif_dict(res: ScenarioResult) -> dict[str, Any]:
    """The JSON object of the contract (plus ``now``, ``law``, ``algorithm`` and the answers)."""
    series = []
    for s in res.series:
        obj: dict[str, Any] = {"account": s.account, "user": s.user, "raw_usage": _list(s.raw_usage),
                               "fairshare": _list(s.fairshare)}
        for key in _OPTIONAL:
            value = getattr(s, key)
            if value is not None:
                obj[key] = _list(np.asarray(value))
        if s.balance is not None:
            b = s.balance
            obj["balance"] = _list(b.balance)
            obj["balance_held"] = _list(b.held)
            obj["balance_source"] = b.account.label
            obj["balance_refused"] = [{"job": j, "hours": h} for j, h in b.refused]
            obj["balance_pace_su_per_day"] = b.account.pace_su_per_day
            obj["balance_runs_out_with_pace_hours"] = b.runs_out_with_pace_h(res.t_hours)
        else:
            obj["balance_note"] = s.balance_note or "no balance in this model"
        mine = next((p for p in res.planned if (p.account, p.user) == (s.account, s.user)), None)
        if mine is not None:
            obj["priority"] = _list(mine.priority)
            obj["priority_parts"] = _parts(mine)
        series.append(obj)
    held = float(sum(c.held_billing_seconds if c.held_billing_seconds is not None else c.billing_seconds
                     for c in res.costs))
    return {
        "now": res.now.isoformat(timespec="seconds"),
        "law": res.law,
        "algorithm": res.algorithm,
        "half_life_s": res.half_life_s,
        "usage_unit": res.usage_unit,
        "users": res.users,
        "t_hours": _list(res.t_hours),
        "series": series,
        "campaign": {"billing_seconds": res.total_billing_seconds, "su": res.total_billing_seconds / 3600.0,
                     "held_billing_seconds": held, "held_su": held / 3600.0, "end_hours": res.campaign_end_h},
        "planned": [{"job": p.job, "account": p.account, "user": p.user, "submit_hours": p.submit_h,
                     "priority": _list(p.priority), "parts": _parts(p), "notes": list(p.notes)} for p in res.planned],
        "shares_now": [{"account": x.label.split("/")[0], "user": x.label.split("/")[1] if "/" in x.label else "",
                        "fairshare_before": x.before, "fairshare_after": x.after, "rank_before": x.rank_before,
                        "rank_after": x.rank_after} for x in res.shares_now],
        "admin": None if res.admin is None else _admin(res.admin),
        "recovery_hours": [None if r is None else r for r in res.recovery_h],
        "target": res.target,
        "pending": [{"job_id": p.job_id, "account": p.account, "user": p.user, "priority": _list(p.priority),
                     "age": _list(p.age), "fairshare": _list(p.fairshare)} for p in res.pending],
        "answers": res.sentences(),
    }


def _parts(p: PlannedPriority) -> dict[str, Any]:
    return {k: (_list(v) if isinstance(v, np.ndarray) else v) for k, v in p.parts().items()}


def _admin(a: AdminAnswer) -> dict[str, Any]:
    up = a.upkeep
    return {"halving_usage": a.halving_usage, "mean_usage": a.mean_usage, "users": a.users,
            "dampening_now": a.dampening_now, "slurm_dampening": a.slurm_dampening,
            "drift_days": _list(a.drift_days), "drift": _list(a.drift), "drift_slurm": _list(a.drift_slurm),
            "padding": a.padding, "upkeep_every_hours": a.check_every_s / 3600.0, "upkeep_amount": a.upkeep_amount,
            "upkeep_worst_slip": up.worst_slip(a.padding), "upkeep_jobs": int(up.ran.sum()),
            "upkeep_hours": _list(up.times[up.ran] / 3600.0)}


def format_whatif_json(res: ScenarioResult) -> str:
    return json.dumps(whatif_dict(res), indent=1) + "\n"


def format_whatif_csv(res: ScenarioResult) -> str:
    """Long form: one line per step and series."""
    out = io.StringIO()
    cols = ["t_hours", "date", "account", "user", "raw_usage", "fairshare", *_OPTIONAL, "balance", "priority"]
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    prio = _priority_by_label(res)
    for s in res.series:
        for k, th in enumerate(res.t_hours):
            row: list[Any] = [f"{th:g}", f"{res.date(th):%Y-%m-%dT%H:%M}", s.account, s.user,
                              repr(float(s.raw_usage[k])), _cell(s.fairshare[k])]
            for key in _OPTIONAL:
                v = getattr(s, key)
                row.append("" if v is None else _cell(v[k]))
            row.append("" if s.balance is None else _cell(s.balance.balance[k]))
            row.append("" if prio.get(s.label) is None else _cell(prio[s.label][k]))
            w.writerow(row)
    return out.getvalue()


def _priority_by_label(res: ScenarioResult) -> dict[str, np.ndarray]:
    """Each series' first job line's priority, by series label."""
    out: dict[str, np.ndarray] = {}
    for p in res.planned:
        out.setdefault(f"{p.account}/{p.user}" if p.user else p.account, p.priority)
    return out


def _cell(v: Any) -> str:
    if isinstance(v, (np.integer, int)):
        return str(int(v))
    f = float(v)
    return "" if math.isnan(f) else repr(f)


def format_whatif_table(res: ScenarioResult, max_rows: int = 25) -> str:
    """The answers, then a table of at most ``max_rows`` steps (every step's numbers are in
    the JSON and CSV)."""
    lines = [f"# what-if: {res.algorithm.replace('_', ' ')}, "
             + {"slurm": "Slurm's decay law", "pbs": "PBS decay"}.get(res.law, "seed 000's continuous model")
             + f", half-life {res.half_life_s / 86400:g} days, from {res.now:%Y-%m-%d %H:%M %Z}".rstrip()]
    lines += [f"  {s}" for s in res.sentences()]
    m = res.t_hours.size
    idx = np.unique(np.linspace(0, m - 1, min(m, max_rows)).round().astype(int))
    head = ["date", "hours"]
    prio = _priority_by_label(res)
    for s in res.series:
        head += [f"{s.label} usage", "fairshare"] + (["before -> after"] if s.fairshare_before is not None else []) \
            + (["rank"] if s.rank is not None else []) + (["balance SU"] if s.balance is not None else []) \
            + (["priority"] if s.label in prio else [])
    rows = [head]
    for k in idx:
        r = [f"{res.date(res.t_hours[k]):%Y-%m-%d %H:%M}", f"{res.t_hours[k]:g}"]
        for s in res.series:
            r += [f"{s.raw_usage[k]:,.0f}" if res.algorithm != "model" else f"{s.raw_usage[k]:,.1f}",
                  "" if math.isnan(s.fairshare[k]) else f"{s.fairshare[k]:.6f}"]
            if s.fairshare_before is not None:
                fb = s.fairshare_before[k]
                r.append("" if math.isnan(fb) or math.isnan(s.fairshare[k]) else f"{fb:.4f} -> {s.fairshare[k]:.4f}")
            if s.rank is not None:
                r.append(f"{s.rank[k]}/{res.users}")
            if s.balance is not None:
                r.append(f"{s.balance.balance[k]:,.1f}")
            if s.label in prio:
                v = prio[s.label][k]
                r.append("" if math.isnan(v) else f"{v:,.0f}")
        rows.append(r)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        lines.append("  ".join(c.rjust(wd) for c, wd in zip(r, widths)).rstrip())
    return "\n".join(lines) + "\n"
