"""What every start of ``fairtop`` saves in file system calls (a round trip each on NFS or Lustre):
argparse's messages looked up once, and the console script's folder taken off ``sys.path``."""

from __future__ import annotations

import argparse
import functools
import gettext
import os
import sys
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def messages_looked_up_once() -> Iterator[None]:
    """argparse translates each help message it is given (``gettext``), and CPython looks for the
    catalogue on disk at every call, found or not: 4 file system calls a message, ~190 for our
    subcommands at every start. Where no catalogue exists (the usual case: one look, 4 calls)
    every message is its own translation, as gettext's fallback would say; else each message is
    looked up once while the parser is built."""
    translate = argparse._  # type: ignore[attr-defined]
    domain = gettext.textdomain()
    if gettext.find(domain, gettext.bindtextdomain(domain)) is None:
        argparse._ = str  # type: ignore[attr-defined]
    else:
        argparse._ = functools.cache(translate)  # type: ignore[attr-defined]
    try:
        yield
    finally:
        argparse._ = translate  # type: ignore[attr-defined]


def drop_script_folder() -> None:
    """Take the console script's own folder (``.venv/bin``, ``/usr/bin``) off ``sys.path``.

    Python puts a script's folder first on ``sys.path``, so every top-level import made after
    this stats it before finding the module elsewhere: ~120 file system calls of the app's start
    (a round trip each on NFS or Lustre). A ``bin`` folder holds no modules of ours; a
    ``python -m tui.cli`` run (whose first entry is the working folder) is left as it is.
    """
    script = sys.argv[0] if sys.argv else ""
    if script and sys.path and sys.path[0] == os.path.dirname(os.path.abspath(script)) \
            and not script.endswith(".py"):
        del sys.path[0]
