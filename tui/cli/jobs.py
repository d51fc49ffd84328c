"""``fairtop jobs``: why each of your pending jobs waits (:mod:`tui.analysis.jobs`): Slurm's reason in
words with the job's own numbers, its place in its partition's queue, its priority parts against the
job just ahead, the scheduler's start estimate, and what would move it. The source is chosen as for
``fairtop standing`` (the flags, else the config)."""

from __future__ import annotations

import argparse
import sys

from tui.cli.inputs import EXIT_INPUT, warn
from tui.cli.source_flags import app_options
from tui.sources.errors import InputError, SourceUnavailable


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser("jobs", help="why your pending jobs wait, and what would move them",
                            description="Each of your pending jobs: Slurm's reason in words (with your limit, "
                                        "budget, dependency or begin time), its place in its partition's queue, "
                                        "its priority against the job just ahead, the scheduler's start estimate, "
                                        "and what would move it. Exit status 2 with one line when the source "
                                        "cannot be read.")
    app_options(parser, again=True)
    parser.add_argument("--format", choices=("text", "table", "json", "csv"), default="text",
                        help="text: each job in words (the default); table: a line per job, pending then "
                             "running, as the Jobs pane lists them; json, csv: a row per pending job with the "
                             "scheduler's fields as printed and fairtop's words")


def run(args: argparse.Namespace) -> int:
    from tui.standing_line import chosen_source

    try:
        me, _, source, _ = chosen_source(args)
        source.one_user = True  # the user's jobs as Job, the queue as columns (100,000 jobs: issue 35)
        source.check()
        snap = source.load()
    except (InputError, SourceUnavailable, OSError) as exc:
        print(f"fairtop jobs: {exc}", file=sys.stderr)
        return EXIT_INPUT
    from tui.analysis.jobs import explain_pending, pending_summary
    from tui.analysis.standing import build_standing

    warn(snap.warnings)
    standing = build_standing(snap, me)
    if args.format == "table":
        from tui.analysis.jobs import jobs_view

        view = jobs_view(standing, me)
        sys.stdout.write("\n".join([view.title, view.header, *view.lines]) + "\n")
        return 0
    explained = explain_pending(standing)
    if args.format in ("json", "csv"):
        from tui.analysis.jobs.rows import JOB_COLUMNS, pending_rows
        from tui.formats.tabular import format_csv, format_json

        rows = pending_rows(explained)
        sys.stdout.write(format_json(rows) if args.format == "json" else format_csv(rows, JOB_COLUMNS))
        return 0
    if not explained:
        sys.stdout.write(f"{me or 'no user'}: no pending jobs in {snap.source}\n")
        return 0
    blocks = [f"{me}: {pending_summary(explained)}"] + ["\n".join(p.lines) for p in explained]
    sys.stdout.write("\n\n".join(blocks) + "\n")
    return 0
