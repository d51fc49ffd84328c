"""``fairtop``: the parser, assembled from the command modules (:mod:`tui.cli.commands`), and
:func:`main`, which hands the parsed options to the command's ``run`` (the app without one).

Bad input never shows a traceback: one line naming the file (and line), exit status 2.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Iterable, Sequence

from tui import __version__
from tui.allocations.errors import AllocationError
from tui.cli import app_start, standing
from tui.cli.inputs import EXIT_INPUT
from tui.cli.source_flags import app_options
from tui.cli.startup import drop_script_folder, messages_looked_up_once
from tui.sources.errors import InputError, SourceUnavailable


def _assemble() -> tuple[argparse.ArgumentParser, dict[str, Callable[[argparse.Namespace], int]]]:
    """The whole parser, and which ``run`` each command name goes to."""
    from tui.cli.commands import add_commands  # every command module: not for `fairtop standing`'s fast path

    parser = argparse.ArgumentParser(
        prog="fairtop",
        description="Where you stand on an HPC cluster: fairshare, allocations, what-if planning.",
    )
    parser.add_argument("--version", action="version", version=f"fairtop {__version__}")
    app_options(parser)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    return parser, add_commands(sub)


def build_parser() -> argparse.ArgumentParser:
    return _assemble()[0]


def _demo_before_command(argv: Sequence[str], commands: Iterable[str]) -> list[str]:
    """``fairtop --demo jobs`` as ``fairtop --demo=slurm jobs``: --demo's optional KIND would take the
    command's name and refuse it ("invalid choice: 'jobs'"), the first thing a newcomer tries."""
    names, out = set(commands), list(argv)
    for i, token in enumerate(out[:-1]):
        if token == "--":
            break
        if token == "--demo" and out[i + 1] in names:
            out[i] = "--demo=slurm"
    return out


def main(argv: Sequence[str] | None = None) -> int:
    if argv is None:
        drop_script_folder()
    argv = sys.argv[1:] if argv is None else argv
    if list(argv[:1]) == ["standing"]:
        return standing.run_fast(argv[1:])
    with messages_looked_up_once():
        parser, runs = _assemble()
        args = parser.parse_args(_demo_before_command(argv, runs))
    try:
        if args.command is None:
            return app_start.run_app(args)
        return runs[args.command](args)
    except InputError as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return EXIT_INPUT
    except SourceUnavailable as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return 1
    except AllocationError as exc:
        print(f"fairtop: {exc}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        return 0
    except KeyboardInterrupt:
        return 130
