"""Errors raised when outside data cannot be turned into a snapshot.

Every source raises :class:`InputError` (never a bare exception) so the CLI can print one line
naming the input and exit 2, and the app can show the message instead of half-loaded data.
"""

from __future__ import annotations


class InputError(ValueError):
    """Outside data that cannot be read: names the input and, where known, the line."""

    def __init__(self, source: str, message: str, line: int | None = None) -> None:
        self.source = source
        self.line = line
        self.message = message
        where = f"{source}:{line}" if line is not None else source
        super().__init__(f"{where}: {message}")


class SourceUnavailable(RuntimeError):
    """A live source that did not answer: missing command, non-zero exit, timeout, refused."""
