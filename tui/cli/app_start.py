"""The one door from the command line to the app: :mod:`tui.app.main`, imported only when the app
is started (``fairtop`` without a command) or built to check its options (``fairtop serve``), so
no other command loads Textual. Import contracts in pyproject.toml name this module."""

from __future__ import annotations

import argparse


def run_app(args: argparse.Namespace) -> int:
    """``fairtop [options]``: run the TUI until the user quits (:func:`tui.app.main.run_app`)."""
    from tui.app.main import run_app

    return run_app(args)


def build_app(args: argparse.Namespace) -> None:
    """Build the app without running it: a bad source or config fails here, in the terminal."""
    from tui.app.main import build_app

    build_app(args)
