"""``fairtop history``: usage per day from sacct, and sshare's RawUsage rebuilt from the jobs, from a
capture, the configured source or live sacct; with ``--cluster``, each cluster's under a cluster column."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tui.cli.inputs import warn
from tui.cli.source_flags import CLUSTER_HELP
from tui.sources import registry
from tui.sources.errors import InputError

if TYPE_CHECKING:
    from datetime import datetime

    from tui.analysis.history import DailyUsage, HistoryCheck


def add_parser(sub: argparse._SubParsersAction) -> None:
    hist = sub.add_parser("history", help="usage per day from sacct, and RawUsage rebuilt from the jobs",
                          description="Usage per day (billing x seconds, per account and user) over the last N "
                                      "days, the decayed usage it implies, and sshare's RawUsage rebuilt from "
                                      "the jobs with Slurm's decay law.")
    hist.add_argument("--account", metavar="A", help="only this account (and the accounts below it)")
    hist.add_argument("--user", dest="history_user", metavar="U", help="only this user's jobs")
    hist.add_argument("--days", default="7", metavar="N", help="days to show, ending today (default 7)")
    hist.add_argument("--format", choices=("table", "json", "csv"), default="table",
                      help="csv: the daily rows only")
    hist.add_argument("--from", dest="history_from", metavar="DIR",
                      help="a capture folder with sacct_a_P.psv (default: the configured source, else live sacct)")
    hist.add_argument("--cluster", dest="report_cluster", metavar="NAME|all", help=CLUSTER_HELP)


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(_history(args))
    return 0


def _history(args: argparse.Namespace) -> str:
    """``fairtop history``: from ``--from DIR``, the configured folder, or live sacct + sshare;
    with ``--cluster``, each cluster's (a folder or live ``-M NAME``) under a cluster column."""
    from tui import config
    from tui.analysis.history_output import format_history_csv, format_history_json, format_history_table

    days_text = str(args.days).strip()
    if not (days_text.isascii() and days_text.isdigit()) or not 1 <= int(days_text) <= 3660:
        raise InputError("fairtop history", f"--days takes a whole number of days from 1 to 3660, not {args.days!r}")
    days = int(days_text)
    folder = args.history_from
    pick = args.report_cluster
    targets: dict[str, tuple[str | None, str]] = {}
    """cluster -> (folder or None for live, -M name)"""
    settings = config.load(getattr(args, "config", None), config.cli_overrides(args))
    if pick and folder is None and settings.cluster and not any(
            getattr(args, f"source_{c.name}", None) for c in registry.SOURCES.values()):
        names = [c.name for c in settings.cluster] if pick == "all" else [n.strip() for n in pick.split(",")]
        for name in names:
            src = config.make_sources(settings, pick=name)[name]
            if src.name not in ("folder", "slurm"):
                raise InputError("fairtop history", f"cluster {name!r} (source {src.name}) has no accounting records")
            targets[name] = (src.value if src.name == "folder" else None, name if src.name == "slurm" else "")
    elif pick and folder is not None:
        targets[pick] = (folder, "")
    elif folder is None:
        import shutil

        if settings.source == "folder":
            folder = settings.folder
        elif settings.source == "demo" and (args.source_demo or not shutil.which("sacct")):
            folder = DEMO_HISTORY  # the demo's made-up past
        elif not (settings.source == "slurm"
                  or (settings.source == "demo" and not args.source_demo and shutil.which("sacct"))):
            raise InputError("fairtop history", f"the {settings.source} source has no accounting records; "
                             "use --from DIR (a capture with sacct_a_P.psv) or a live cluster (--slurm)")
        if pick == "all" and folder is None:
            raise InputError("--cluster", "all needs [[cluster]] tables in the config; name live clusters: a,b")
        for name in (pick.split(",") if pick else [""]):
            targets[name.strip()] = (folder, name.strip() if folder is None else "")
    else:
        targets[""] = (folder, "")
    results = {name: _history_one(args, days, where, on) for name, (where, on) in targets.items()}
    if not pick:
        daily, check = results[""]
        if args.format == "csv":
            return format_history_csv(daily)
        return format_history_json(daily, check) if args.format == "json" else format_history_table(daily, check)
    import json

    from tui.formats.tabular import cluster_column, format_csv, with_cluster

    if args.format == "csv":
        rows = [row for name, (daily, _) in results.items()
                for row in with_cluster(name, daily.rows())]
        return format_csv(rows, ["cluster", "date", "account", "user", "usage", "su", "decayed_usage"])
    if args.format == "json":
        docs = [{"cluster": name, **json.loads(format_history_json(daily, check))}
                for name, (daily, check) in results.items()]
        for doc in docs:
            for row in doc["daily"]:
                row["cluster"] = doc["cluster"]
        return json.dumps(docs, indent=1) + "\n"
    width = max(7, *(len(n) for n in results))
    return "\n".join(cluster_column(name, format_history_table(daily, check), width)
                     for name, (daily, check) in results.items())


DEMO_HISTORY = "\0demo"
"""``fairtop history`` on the built-in demo: its made-up accounting records, not a folder."""


def _history_one(args: argparse.Namespace, days: int, folder: str | None, on: str) -> tuple[DailyUsage, HistoryCheck]:
    """One cluster's daily usage and RawUsage check: a capture folder, or live (``on``: ``-M``)."""
    from datetime import datetime, timedelta, timezone

    from tui.analysis.history import check_raw_usage, daily_usage, logged_cycles, select_jobs
    from tui.sources import sacct
    from tui.sources.ctld_log import load_saved_log

    cycles: list[float] | None = None
    anchors: list[float] = []
    if folder == DEMO_HISTORY:
        from tui.sources.demo import demo_history

        snap = registry.make("demo", "slurm", getattr(args, "user", None) or "").load()
        last_cycle: datetime | None
        jobs, last_cycle = demo_history(snap)
    elif folder is not None:
        source = registry.make("folder", folder)
        source.check()
        snap = source.load()
        jobs, last_cycle = sacct.load_saved_history(folder)
        cycles, anchors = logged_cycles(load_saved_log(folder), jobs, last_cycle, snap.taken_at)
    else:
        from tui.sources.slurm_cli import snapshot_at_cycle

        snap, last_cycle = snapshot_at_cycle(on)
        hl = snap.settings.decay_half_life_s
        back = max(timedelta(days=days), timedelta(seconds=10 * hl if hl > 0 else 366 * 86400))
        jobs = sacct.live_history(datetime.now(timezone.utc) - back, cluster=on)
    if snap.tree is None:
        raise InputError(str(folder or "live"), "not a Slurm snapshot (PBS has no sacct)")
    warn(snap.warnings)
    mine = select_jobs(jobs, args.account, args.history_user, snap.tree)
    today = snap.taken_at.astimezone(snap.zone)  # the cluster's days, whoever reads the capture
    daily = daily_usage(mine, today, days, snap.settings.decay_half_life_s)
    check = check_raw_usage(jobs, snap.tree, snap.settings, last_cycle, snap.taken_at, cycles=cycles, anchors=anchors,
                            tz=snap.zone)
    if args.account or args.history_user:
        check = check.only(args.account, args.history_user, snap.tree)
    return daily, check
