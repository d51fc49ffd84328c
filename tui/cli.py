"""Command line: ``fairtop`` (the app), ``fairtop report``, ``fairtop info``, ``fairtop capture``.

Bad input never shows a traceback: one line naming the file (and line), exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Sequence

from tui import __version__
from tui.sources.errors import InputError, SourceUnavailable

EXIT_INPUT = 2


def _read(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, exc.strerror or str(exc)) from None


def _positive(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not value > 0 or value == float("inf"):
        raise argparse.ArgumentTypeError(f"must be a number > 0, got {text!r}")
    return value


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="fairtop",
        description="Where you stand on an HPC cluster: fairshare, allocations, what-if planning.",
    )
    parser.add_argument("--version", action="version", version=f"fairtop {__version__}")
    parser.add_argument("--demo", action="store_true", help="use the built-in demo cluster (the default)")
    parser.add_argument("--from", dest="from_dir", metavar="DIR", help="read saved command outputs from DIR")
    parser.add_argument("--slurm", action="store_true",
                        help="read the live cluster (sshare, scontrol, sacctmgr, sprio, squeue)")
    parser.add_argument("--slurmrestd", metavar="SOCKET|URL",
                        help="read slurmrestd at a unix socket or URL (JWT from $SLURM_JWT)")
    parser.add_argument("--user", help="the user to highlight and jump to (default: the Unix user)")
    parser.add_argument("--theme", help="theme name (see themes/)")
    parser.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    rep = sub.add_parser("report", help="print the engine's fairshare recomputation of saved outputs",
                         description="Recompute fairshare from raw shares and raw usage alone.")
    src = rep.add_mutually_exclusive_group(required=True)
    src.add_argument("--sshare", metavar="FILE", help="saved 'sshare -a -l -P' output")
    src.add_argument("--pbs-resource-group", metavar="FILE", help="PBS resource_group file")
    src.add_argument("--from", dest="from_dir", metavar="DIR",
                     help="a folder of saved command outputs (as 'fairtop capture' writes)")
    rep.add_argument("--pbs-usage", metavar="FILE", help="PBS usage: 'pbsfs' output or 'entity usage' lines")
    rep.add_argument("--pbs-unknown-shares", type=int, default=0, metavar="N",
                     help="sched_config unknown_shares (default 0, as OpenPBS)")
    rep.add_argument("--algorithm", choices=("fair_tree", "classic"),
                     help="Slurm algorithm (default: from the file: LevelFS column means Fair Tree)")
    rep.add_argument("--damping", type=_positive, default=None, metavar="D",
                     help="FairShareDampeningFactor for classic (default 1)")
    rep.add_argument("--format", choices=("table", "json", "csv"), default="table")

    sub.add_parser("info", help="print the config, state and theme paths in use")
    cap = sub.add_parser("capture", help="save a live cluster's command outputs into DIR")
    cap.add_argument("dir", metavar="DIR")
    return parser


def _report_sshare(args: argparse.Namespace) -> str:
    from tui.engine import compute
    from tui.report import format_csv, format_json, format_table, report_rows
    from tui.sources.sshare import parse_sshare

    table = parse_sshare(_read(args.sshare), args.sshare)
    algorithm = args.algorithm or ("fair_tree" if "LevelFS" in table.header
                                   else "classic" if "NormUsage" in table.header else "fair_tree")
    damping = args.damping or 1
    result = compute(table.tree, algorithm, damping)
    if args.format == "json":
        return format_json(report_rows(table.tree, result, damping))
    if args.format == "csv":
        return format_csv(report_rows(table.tree, result, damping))
    title = f"# {args.sshare}: {algorithm.replace('_', ' ')}"
    if algorithm == "classic":
        title += f", FairShareDampeningFactor {damping:g}"
    else:
        title += "; ties between sibling accounts follow the printed (sshare) order"
    return title + "\n" + format_table(table.tree, result, damping)


def _report_pbs(args: argparse.Namespace) -> str:
    if not args.pbs_usage:
        raise InputError("fairtop report", "--pbs-resource-group needs --pbs-usage FILE")
    from tui import report_pbs

    rows = report_pbs.pbs_report_rows(args.pbs_resource_group, args.pbs_usage,
                                      unknown_shares=args.pbs_unknown_shares)
    if args.format == "json":
        from tui.report import format_json

        return format_json(rows)
    if args.format == "csv":
        return report_pbs.format_pbs_csv(rows)
    return report_pbs.format_pbs_table(rows)


def _report_folder(args: argparse.Namespace) -> str:
    from tui.sources import saved

    return saved.report_folder(args.from_dir, fmt=args.format, algorithm=args.algorithm,
                               damping=args.damping)


def _info(args: argparse.Namespace) -> str:
    from tui import config

    return config.describe_paths(args.config)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "report":
            if args.sshare:
                out = _report_sshare(args)
            elif args.pbs_resource_group:
                out = _report_pbs(args)
            else:
                out = _report_folder(args)
            sys.stdout.write(out)
            return 0
        if args.command == "info":
            sys.stdout.write(_info(args))
            return 0
        if args.command == "capture":
            from tui.sources import slurm_cli

            sys.stdout.write(slurm_cli.capture(args.dir))
            return 0
        from tui.app.main import run_app

        return run_app(args)
    except InputError as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except SourceUnavailable as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
