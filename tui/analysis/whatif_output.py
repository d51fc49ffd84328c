"""``fairtop whatif`` output: the projection as JSON (the stable contract), CSV or a table.

JSON: ``{"t_hours": [...], "series": [{"account", "user", "raw_usage", "fairshare", ...}], ...}``;
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

from tui.analysis.scenario import ScenarioResult

__all__ = ["whatif_dict", "format_whatif_json", "format_whatif_csv", "format_whatif_table"]

_OPTIONAL = ("rank", "ahead", "level_fs", "priority_fairshare", "tree_usage")


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
        series.append(obj)
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
                     "end_hours": res.campaign_end_h},
        "recovery_hours": [None if r is None else r for r in res.recovery_h],
        "target": res.target,
        "pending": [{"job_id": p.job_id, "account": p.account, "user": p.user, "priority": _list(p.priority),
                     "age": _list(p.age), "fairshare": _list(p.fairshare)} for p in res.pending],
        "answers": res.sentences(),
    }


def format_whatif_json(res: ScenarioResult) -> str:
    return json.dumps(whatif_dict(res), indent=1) + "\n"


def format_whatif_csv(res: ScenarioResult) -> str:
    """Long form: one line per step and series."""
    out = io.StringIO()
    cols = ["t_hours", "date", "account", "user", "raw_usage", "fairshare", *_OPTIONAL]
    w = csv.writer(out, lineterminator="\n")
    w.writerow(cols)
    for s in res.series:
        for k, th in enumerate(res.t_hours):
            row: list[Any] = [f"{th:g}", f"{res.date(th):%Y-%m-%dT%H:%M}", s.account, s.user,
                              repr(float(s.raw_usage[k])), _cell(s.fairshare[k])]
            for key in _OPTIONAL:
                v = getattr(s, key)
                row.append("" if v is None else _cell(v[k]))
            w.writerow(row)
    return out.getvalue()


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
    for s in res.series:
        head += [f"{s.label} usage", "fairshare"] + (["rank"] if s.rank is not None else [])
    rows = [head]
    for k in idx:
        r = [f"{res.date(res.t_hours[k]):%Y-%m-%d %H:%M}", f"{res.t_hours[k]:g}"]
        for s in res.series:
            r += [f"{s.raw_usage[k]:,.0f}" if res.algorithm != "model" else f"{s.raw_usage[k]:,.1f}",
                  "" if math.isnan(s.fairshare[k]) else f"{s.fairshare[k]:.6f}"]
            if s.rank is not None:
                r.append(f"{s.rank[k]}/{res.users}")
        rows.append(r)
    widths = [max(len(r[i]) for r in rows) for i in range(len(head))]
    for r in rows:
        lines.append("  ".join(c.rjust(wd) for c, wd in zip(r, widths)).rstrip())
    return "\n".join(lines) + "\n"
