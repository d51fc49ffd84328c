"""``fairtop standing``: where you stand, in one line (:mod:`tui.standing_line`), for a login banner,
a prompt or a dashboard. ``fairtop standing ...`` has a parser of its own (:func:`run_fast`); after
top-level options (``fairtop --slurm standing``) the whole parser's is used."""

from __future__ import annotations

import argparse
from collections.abc import Sequence

from tui.cli.source_flags import app_options

STANDING_HELP = "where you stand, in one line: for a login banner, a prompt, a dashboard"
STANDING_DESCRIPTION = ("The line the app shows above the tree (FairShare, users ahead, what holds you back, pending "
                        "jobs, allocation), from the same source the app reads. Exit status 2 with one line when the "
                        "source cannot be read.")


def add_parser(sub: argparse._SubParsersAction) -> None:
    _standing_options(sub.add_parser("standing", help=STANDING_HELP, description=STANDING_DESCRIPTION))


def run(args: argparse.Namespace) -> int:
    from tui.standing_line import run as print_standing

    return print_standing(args)


def _standing_options(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    app_options(parser, again=True)
    parser.add_argument("--format", dest="standing_format", choices=("line", "json"), default="line",
                        help="line: the one line (default); json: one object with the line, its parts and its values "
                             "(user, cluster, source, taken_at, fairshare, users_ahead, users, pending_jobs, "
                             "allocation)")
    return parser


def run_fast(argv: Sequence[str]) -> int:
    """``fairtop standing ...`` with its own parser: a banner runs it at every login, and building the
    other commands' parsers took as long as reading a small snapshot (bench/standing.py)."""
    from tui.standing_line import run as print_standing

    parser = argparse.ArgumentParser(prog="fairtop standing", description=STANDING_DESCRIPTION)
    args = _standing_options(parser).parse_args(argv)
    args.command = "standing"
    return print_standing(args)
