"""``fairtop info``: every file fairtop reads or writes, each config file checked, the source in use,
and what a live session costs the controller."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from tui.cli.inputs import EXIT_INPUT
from tui.sources import registry
from tui.sources.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    info = sub.add_parser("info", help="print the config, state and theme paths in use, and check the config",
                          description="Every file fairtop reads or writes: the config files in their precedence "
                                      "(each valid, INVALID with the reason, or not found; exit 2 when one is "
                                      "invalid), the state file, the example config, the theme folders (yours "
                                      "included), and what a live session costs the controller.")
    info.add_argument("--config", metavar="FILE", default=argparse.SUPPRESS,
                      help="check this config file too (as 'fairtop --config FILE')")


def run(args: argparse.Namespace) -> int:
    """``fairtop info``: every path, each config file valid or not (exit 2 when one is not), and
    what a live session costs the controller."""
    from tui import config
    from tui.sources.slurm_cli import Cadence

    sys.stdout.write(config.describe_paths(args.config))
    try:
        settings = config.load(args.config)
    except config.ConfigError as exc:
        print(f"fairtop: the configuration is invalid: {exc}", file=sys.stderr)
        return EXIT_INPUT
    sys.stdout.write(_source_line(settings))
    cadence = Cadence(jobs_s=settings.refresh_rate)
    rates = cadence.per_minute()
    from tui.sources.rest_sshare import per_minute
    from tui.sources.slurmrestd import LiveRest

    rest = per_minute(cadence, LiveRest.slow_s_default, with_sshare=False)
    both = per_minute(cadence, LiveRest.slow_s_default)
    clusters = "".join(f"  {c.name:<12} {c.source}" + (f" -M {c.name}" if c.source == "slurm" else "")
                       + (f" {c.value}" if c.value else "") + "\n" for c in settings.cluster)
    if clusters:
        sys.stdout.write("clusters ([[cluster]]; c or :cluster NAME switches):\n" + clusters)
    sys.stdout.write(
        f"live Slurm (--slurm), per session: squeue and sprio every {cadence.jobs_s:g} s (refresh_rate), "
        f"sshare and assoc_mgr once per PriorityCalcPeriod ({cadence.usage_s:g} s until the cluster's "
        f"is read), sacctmgr and scontrol config/partitions every {cadence.slow_s:g} s: "
        f"{rates['slurmctld']:.1f} commands a minute to slurmctld, {rates['slurmdbd']:.1f} to slurmdbd\n"
        f"slurmrestd (--slurmrestd), per session: jobs every {cadence.jobs_s:g} s, associations and partitions "
        f"every {LiveRest.slow_s_default:g} s: {rest['slurmctld']:.1f} requests a minute to slurmctld, "
        f"{rest['slurmdbd']:.1f} to slurmdbd; --slurmrestd-sshare adds sshare and assoc_mgr once per "
        f"PriorityCalcPeriod and the config every {cadence.slow_s:g} s: {both['slurmctld']:.1f} a minute to "
        f"slurmctld, {both['slurmdbd']:.1f} to slurmdbd\n")
    return 0


def _source_line(settings: Any) -> str:
    """``fairtop info``'s line on the source: which, and why (named, or found here); for a
    published capture split by PrivateData, which part this user reads."""
    from tui import config

    value = getattr(settings, registry.source_class(settings.source).setting or "", None)
    line = f"source:       {settings.source}" + (f" {value}" if isinstance(value, str) and value else "")
    line += f"  (found: {settings.source_why})" if settings.source_why else "  (named by a flag or a config file)"
    if settings.source == "folder":
        try:
            source = config.make_source(settings)
            source.folder()  # type: ignore[attr-defined]
            note = source.view_note  # type: ignore[attr-defined]
        except (InputError, ValueError) as exc:
            note = str(exc)
        if note:
            line += f"\n              {note}"
    return line + "\n"
