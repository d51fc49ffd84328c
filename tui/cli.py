"""Command line: ``fairtop`` (the app), ``fairtop report``, ``fairtop info``, ``fairtop capture``.

Bad input never shows a traceback: one line naming the file (and line), exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from collections.abc import Sequence

from tui import __version__
from tui.model import AssocTree, PbsTree
from tui.sources import registry
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
    sources = parser.add_mutually_exclusive_group()
    for cls in registry.SOURCES.values():
        dest = f"source_{cls.name}"
        if cls.choices:
            sources.add_argument(cls.flag, dest=dest, nargs="?", const=cls.choices[0], choices=cls.choices,
                                 metavar=cls.metavar, help=cls.help)
        elif cls.metavar:
            sources.add_argument(cls.flag, dest=dest, metavar=cls.metavar, help=cls.help)
        else:
            sources.add_argument(cls.flag, dest=dest, action="store_true", help=cls.help)
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
    cap = sub.add_parser("capture", help="save a live cluster's command outputs into DIR (for --from DIR)")
    cap.add_argument("dir", metavar="DIR")
    cap.add_argument("--pbs", action="store_true",
                     help="a PBS Professional server: resource_group, pbsfs output and sched_config")
    return parser


def _slurm_report(tree: AssocTree, fmt: str, algorithm: str, damping: float, title: str) -> str:
    """The engine's recomputation of ``tree`` as a table (under ``title``), json or csv."""
    from tui.engine import compute
    from tui.formats.sshare import format_table, report_rows
    from tui.formats.tabular import format_csv, format_json

    result = compute(tree, algorithm, damping)
    if fmt == "json":
        return format_json(report_rows(tree, result, damping))
    if fmt == "csv":
        return format_csv(report_rows(tree, result, damping))
    head = f"# {title}: {algorithm.replace('_', ' ')}"
    if algorithm == "classic":
        head += f", FairShareDampeningFactor {damping:g}"
    elif tree.sibling_order is not None:
        head += "; ties between sibling accounts follow sacctmgr LFT order"
    else:
        head += "; ties between sibling accounts follow the printed (sshare) order"
    return head + "\n" + format_table(tree, result, damping)


def _pbs_report(tree: PbsTree, fmt: str) -> str:
    from tui.formats.pbsfs import format_pbs_csv, format_pbs_table, pbs_rows
    from tui.formats.tabular import format_json

    rows = pbs_rows(tree)
    if fmt == "json":
        return format_json(rows)
    if fmt == "csv":
        return format_pbs_csv(rows)
    return format_pbs_table(rows)


def _report_sshare(args: argparse.Namespace) -> str:
    from tui.sources.sshare import parse_sshare

    table = parse_sshare(_read(args.sshare), args.sshare)
    algorithm = args.algorithm or ("fair_tree" if "LevelFS" in table.header
                                   else "classic" if "NormUsage" in table.header else "fair_tree")
    return _slurm_report(table.tree, args.format, algorithm, args.damping or 1, args.sshare)


def _report_pbs(args: argparse.Namespace) -> str:
    if not args.pbs_usage:
        raise InputError("fairtop report", "--pbs-resource-group needs --pbs-usage FILE")
    from tui.sources.pbs import read_pbs

    return _pbs_report(read_pbs(args.pbs_resource_group, args.pbs_usage, unknown_shares=args.pbs_unknown_shares),
                       args.format)


def _report_folder(args: argparse.Namespace) -> str:
    """``report --from DIR``: a Slurm capture (algorithm and dampening from its config unless
    given) or a PBS folder."""
    snap = registry.make("folder", args.from_dir).load()
    if snap.pbs is not None:
        return _pbs_report(snap.pbs, args.format)
    assert snap.tree is not None
    damping = args.damping if args.damping is not None else snap.settings.dampening
    out = _slurm_report(snap.tree, args.format, args.algorithm or snap.settings.algorithm, damping, snap.source)
    if args.format != "table":
        return out
    head, _, table = out.partition("\n")
    return head + "\n" + "".join(f"# warning: {w}\n" for w in snap.warnings) + table


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
            if args.pbs:
                # capture() comes with the `pbs` branch; drop this ignore when it lands (mypy will say)
                from tui.sources.pbs_folder import capture as capture_pbs  # type: ignore[attr-defined]

                sys.stdout.write(capture_pbs(args.dir))
                return 0
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
