"""The command line, one room: ``fairtop`` (the app) and its commands, one module each
(:mod:`tui.cli.commands` lists them; :mod:`tui.cli.entry` assembles the parser and runs one).
``tui.cli:main`` is the console script; ``python -m tui.cli`` runs it too (:mod:`tui.cli.__main__`)."""

from tui.cli.entry import build_parser, main

__all__ = ["build_parser", "main"]
