"""The commands of ``fairtop``, one module each (or one a family), in the order ``fairtop --help``
lists them. Each module has ``add_parser(sub)``, which adds its command(s) to the subparsers, and
``run(args) -> int``, which runs them. A new command is a new module and one line in
:data:`COMMANDS`."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Protocol

from tui.cli import (
    allocations,
    capture,
    hash_password,
    history,
    info,
    jobs,
    metrics,
    replay,
    report,
    serve,
    serve_allocations,
    standing,
    whatif,
)


class Command(Protocol):
    """What a command module provides."""

    def add_parser(self, sub: argparse._SubParsersAction) -> None: ...

    def run(self, args: argparse.Namespace) -> int: ...


COMMANDS: tuple[Command, ...] = (
    report,
    whatif,
    standing,
    jobs,
    info,
    capture,
    history,
    replay,
    serve,
    allocations,  # balance, allocations hook|site-factor|publish-balances
    serve_allocations,
    metrics,  # serve-metrics
    hash_password,
)


def add_commands(sub: argparse._SubParsersAction) -> dict[str, Callable[[argparse.Namespace], int]]:
    """Every command's parser added to ``sub``; returns which ``run`` each command name goes to."""
    runs: dict[str, Callable[[argparse.Namespace], int]] = {}
    for command in COMMANDS:
        known = len(sub.choices)
        command.add_parser(sub)
        runs.update(dict.fromkeys(list(sub.choices)[known:], command.run))
    return runs
