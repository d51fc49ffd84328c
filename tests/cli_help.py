"""Every ``--help`` text of the command line, as a user sees it at 80 columns.

``python -m tests.cli_help`` writes them into ``tests/fixtures/cli_help/`` (one file per command
path: ``fairtop.txt``, ``fairtop_report.txt``, ``fairtop_allocations_hook.txt``, ...), and
``tests/test_cli_help.py`` compares each with a fresh one byte for byte: a restructuring of
``tui.cli`` must leave them all as they were. The command paths come from the parser itself, so
a new command without its fixture fails the test. argparse's layout changes between Python
minor versions, so the version that wrote the fixtures is kept beside them.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import sys
from collections.abc import Iterator
from pathlib import Path

from tui.cli import build_parser, main

FOLDER = Path(__file__).resolve().parent / "fixtures" / "cli_help"
VERSION_FILE = FOLDER / "PYTHON"
#: argparse wraps at shutil.get_terminal_size(), which reads $COLUMNS first; Python 3.14's colour
#: help is off under NO_COLOR.
ENVIRONMENT = {"COLUMNS": "80", "LINES": "24", "NO_COLOR": "1"}


def python_version() -> str:
    return f"{sys.version_info.major}.{sys.version_info.minor}"


def command_paths(parser: argparse.ArgumentParser | None = None,
                  prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """``()`` for ``fairtop`` itself, then every subcommand's path, depth first, in the parser's order."""
    parser = parser or build_parser()
    yield prefix
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from command_paths(child, (*prefix, name))


def fixture_file(path: tuple[str, ...]) -> Path:
    return FOLDER / ("_".join(("fairtop", *path)) + ".txt")


@contextlib.contextmanager
def fixed_terminal() -> Iterator[None]:
    """:data:`ENVIRONMENT` set, and put back as it was."""
    saved = {key: os.environ.get(key) for key in ENVIRONMENT}
    os.environ.update(ENVIRONMENT)
    try:
        yield
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


def help_text(path: tuple[str, ...]) -> str:
    """What ``fairtop PATH... --help`` prints, through the real entry point (``fairtop standing`` has
    a parser of its own)."""
    out = io.StringIO()
    with fixed_terminal(), contextlib.redirect_stdout(out), contextlib.suppress(SystemExit):
        main([*path, "--help"])
    return out.getvalue()


def parser_help(path: tuple[str, ...]) -> str:
    """The help of PATH's parser within :func:`build_parser` (``fairtop --slurm standing --help``)."""
    parser = build_parser()
    for name in path:
        parser = next(action for action in parser._actions
                      if isinstance(action, argparse._SubParsersAction)).choices[name]
    with fixed_terminal():
        return parser.format_help()


def write_fixtures() -> list[Path]:
    """Write every help text (and the Python version) afresh; files of commands gone are removed."""
    FOLDER.mkdir(parents=True, exist_ok=True)
    for old in FOLDER.glob("fairtop*.txt"):
        old.unlink()
    written = []
    for path in command_paths():
        target = fixture_file(path)
        target.write_text(help_text(path), encoding="utf-8")
        written.append(target)
    VERSION_FILE.write_text(python_version() + "\n", encoding="utf-8")
    return written


if __name__ == "__main__":
    for file in write_fixtures():
        print(file.relative_to(Path.cwd()) if file.is_relative_to(Path.cwd()) else file)
