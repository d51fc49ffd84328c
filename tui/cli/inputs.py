"""What the commands share about their input: a named file read (one line when it cannot be),
a snapshot's warnings on stderr, and the exit status of bad input."""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from tui.sources.errors import InputError

EXIT_INPUT = 2


def read_input(path: str) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as exc:
        raise InputError(path, exc.strerror or str(exc)) from None


def warn(warnings: Sequence[str]) -> None:
    """What the user must know about a snapshot, on stderr whatever the format (stdout stays
    the table, JSON or CSV alone)."""
    for w in warnings:
        print(f"fairtop: warning: {w}", file=sys.stderr)
