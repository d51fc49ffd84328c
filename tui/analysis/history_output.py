"""``fairtop history``: daily usage and the RawUsage cross-check as a table, JSON or CSV."""

from __future__ import annotations

import json

from tui.analysis.history import DailyUsage, HistoryCheck
from tui.formats.tabular import format_csv

__all__ = ["format_history_table", "format_history_json", "format_history_csv"]


def _num(x: float) -> str:
    return f"{x:,.0f}" if abs(x) >= 100 else f"{x:,.2f}"


def format_history_table(daily: DailyUsage, check: HistoryCheck | None) -> str:
    """Per day: usage of every (account, user) and all together, then the cross-check."""
    lines = [f"# usage per day (billing x seconds; SU = billing-hours), {len(daily.days)} days to "
             f"{daily.now.isoformat(timespec='seconds')}; decayed = at the end of the day, "
             f"half-life {daily.half_life_s} s"]
    head = f"{'date':<10}  {'account':<16} {'user':<12} {'usage':>16} {'SU':>12} {'decayed':>16}"
    lines += [head, "-" * len(head)]
    total, decayed = daily.total(), daily.total_decayed()
    for i, day in enumerate(daily.days):
        for k, (acct, user) in enumerate(daily.keys):
            if daily.usage[k, i]:
                lines.append(f"{day.isoformat():<10}  {acct:<16.16} {user:<12.12} {_num(daily.usage[k, i]):>16} "
                             f"{daily.usage[k, i] / 3600:>12,.2f} {_num(daily.decayed[k, i]):>16}")
        lines.append(f"{day.isoformat():<10}  {'(all)':<16} {'':<12} {_num(total[i]):>16} "
                     f"{total[i] / 3600:>12,.2f} {_num(decayed[i]):>16}")
    if check is None:
        return "\n".join(lines) + "\n"
    if check.logged:
        lines += ["", f"# RawUsage rebuilt from the jobs (Slurm's decay law on slurmctld's logged cycles to "
                  f"{check.last_cycle.isoformat(timespec='seconds')}) against sshare; tolerance = 1e-6 relative + 1"]
    else:
        lines += ["", f"# RawUsage rebuilt from the jobs (Slurm's decay law, cycles every {check.period_s} s to "
                  f"{check.last_cycle.isoformat(timespec='seconds')}) against sshare; tolerance = one period's decay"]
    lines += [f"# note: {n}" for n in check.notes]
    head = f"{'association':<24} {'RawUsage':>16} {'rebuilt':>16} {'rel diff':>10} {'tolerance':>12}  verdict"
    lines += [head, "-" * len(head)]
    for r in check.rows:
        rel = "-" if r.rel_diff is None else f"{r.rel_diff:+.4%}"
        verdict = "agrees" if r.agrees else "DIFFERS: " + r.note
        lines.append(f"{r.label:<24.24} {_num(r.printed):>16} {_num(r.rebuilt):>16} {rel:>10} "
                     f"{_num(r.tolerance):>12}  {verdict}")
    lines.append(f"# largest relative difference {check.max_rel_diff:.4%}; "
                 + ("every association agrees" if check.agrees else "some associations differ (see verdicts)"))
    return "\n".join(lines) + "\n"


def format_history_json(daily: DailyUsage, check: HistoryCheck | None) -> str:
    """``{"days": [...], "daily": [rows], "check": {...} | null}``."""
    doc: dict[str, object] = {"now": daily.now.isoformat(), "half_life_s": daily.half_life_s,
                              "days": [d.isoformat() for d in daily.days], "daily": daily.rows(), "check": None}
    if check is not None:
        doc["check"] = {"last_cycle": check.last_cycle.isoformat(), "last_cycle_assumed": check.last_cycle_assumed,
                        "period_s": check.period_s, "half_life_s": check.half_life_s,
                        "max_rel_diff": check.max_rel_diff, "agrees": check.agrees, "notes": list(check.notes),
                        "unmatched": check.unmatched, "rows": [r.as_dict() for r in check.rows]}
    return json.dumps(doc, indent=1) + "\n"


def format_history_csv(daily: DailyUsage) -> str:
    """The daily rows only (date, account, user, usage, su, decayed_usage)."""
    return format_csv(daily.rows(), ["date", "account", "user", "usage", "su", "decayed_usage"])
