"""``fairtop whatif SCENARIO.toml``: a campaign of jobs projected over time (usage, fairshare, rank),
on a source's whole association tree or on the scenario's own model."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING

from tui.cli.inputs import read_input, warn
from tui.sources import registry
from tui.sources.errors import InputError

if TYPE_CHECKING:
    from tui.model import Algorithm, Snapshot


def add_parser(sub: argparse._SubParsersAction) -> None:
    wif = sub.add_parser("whatif", help="project a scenario of jobs over time: usage, fairshare, rank",
                         description="Project a campaign of jobs (a TOML scenario) over time. With a "
                                     "source, Slurm's decay law over the whole association tree; without "
                                     "one, the scenario's [model] (seed 000's single-user model).")
    wif.add_argument("scenario", metavar="SCENARIO.toml",
                     help="horizon, step and [[jobs]] (or [model]); see docs/whatif.md")
    wsrc = wif.add_mutually_exclusive_group()
    wsrc.add_argument("--demo", action="store_true", help="the built-in demo Slurm cluster")
    wsrc.add_argument("--from", dest="from_dir", metavar="DIR", help="a saved capture ('fairtop capture')")
    wsrc.add_argument("--slurm", action="store_true", help="the live cluster")
    wsrc.add_argument("--sshare", metavar="FILE", help="saved 'sshare -a -l -P' output (default settings)")
    wif.add_argument("--since", metavar="DIR", help="an earlier capture of the same cluster: with others = "
                     "\"observed\", everyone keeps the pace seen between it and now (--demo without it: "
                     "the week before, from the demo's own accounting records)")
    wif.add_argument("--now", metavar="ISO", help="time 0 as an ISO date-time (default: the snapshot's time)")
    wif.add_argument("--format", choices=("table", "json", "csv"), default="table",
                     help="table (default), json (the contract of docs/whatif.md) or csv (one row per step)")
    wif.add_argument("--cluster", dest="report_cluster", metavar="NAME",
                     help="plan on this cluster: a [[cluster]] of the config, or with --slurm one asked with -M")


def run(args: argparse.Namespace) -> int:
    sys.stdout.write(_whatif(args))
    return 0


def _whatif(args: argparse.Namespace) -> str:
    """``whatif SCENARIO.toml``: load the scenario and the source, project, format."""
    from datetime import datetime

    from tui.analysis.planner import (
        format_whatif_csv,
        format_whatif_json,
        format_whatif_table,
        load_scenario,
        run_scenario,
    )
    from tui.model import PrioritySettings, Snapshot

    scenario = load_scenario(args.scenario)
    now = None
    if args.now:
        try:
            now = datetime.fromisoformat(args.now)
        except ValueError:
            raise InputError("--now", f"not an ISO date-time: {args.now!r}") from None
    snap = None
    if args.demo:
        snap = registry.make("demo", "slurm", args.user or "").load()
    elif args.from_dir:
        snap = registry.make("folder", args.from_dir).load()
    elif args.slurm:
        snap = registry.make("slurm", None, cluster=args.report_cluster or "").load()
    elif args.report_cluster and not args.sshare:
        from tui import config

        if args.report_cluster == "all" or "," in args.report_cluster:
            raise InputError("--cluster", "a plan runs on one cluster: give one NAME (run it once per cluster)")
        settings = config.load(getattr(args, "config", None))
        source = config.make_sources(settings, pick=args.report_cluster)[args.report_cluster]
        source.check()
        snap = source.load()
    elif args.sshare:
        from tui.sources.sshare import parse_sshare

        table = parse_sshare(read_input(args.sshare), args.sshare)
        algorithm: Algorithm = "fair_tree" if "LevelFS" in table.header else "classic"
        snap = Snapshot(cluster="", source=args.sshare, tree=table.tree,
                        settings=PrioritySettings(algorithm=algorithm))
    earlier = registry.make("folder", args.since).load() if args.since else None
    if earlier is None and args.demo and scenario.others == "observed" and snap is not None:
        earlier = _demo_week_before(snap)
    warn([*(snap.warnings if snap else ()), *(earlier.warnings if earlier else ())])
    result = run_scenario(scenario, snap, now, args.scenario, earlier)
    if args.format == "json":
        return format_whatif_json(result)
    if args.format == "csv":
        return format_whatif_csv(result)
    return format_whatif_table(result)


def _demo_week_before(snap: Snapshot) -> Snapshot:
    """The demo as it stood a week ago, rebuilt from its own accounting records (the History tab's):
    what ``others = "observed"`` measures the pace against when no ``--since`` is given."""
    from dataclasses import replace

    from tui.analysis.history import usage_back_then
    from tui.sources.demo import demo_history

    assert snap.tree is not None
    jobs, last = demo_history(snap)
    usage, then = usage_back_then(jobs, snap.tree, snap.settings, last, 7)
    return replace(snap, tree=replace(snap.tree, usage_raw=usage.astype(snap.tree.usage_raw.dtype)), taken_at=then,
                   source=f"{snap.source}, a week earlier from its accounting records")
