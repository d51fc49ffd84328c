"""``fairtop`` without a subcommand: read the config, pick the source, run the app."""

from __future__ import annotations

import argparse
from functools import partial
from typing import Callable

from tui import config
from tui.model import Snapshot
from tui.sources.errors import SourceUnavailable
from tui.view import current_user


def _folder_snapshot(folder: str) -> Snapshot:
    from tui.sources.saved import load_folder  # written separately; a missing module shows as a load error

    return load_folder(folder)


def _slurm_snapshot() -> Snapshot:
    try:
        from tui.sources import slurm_cli
    except ImportError:
        slurm_cli = None
    live = getattr(slurm_cli, "live_snapshot", None)
    if live is None:
        raise SourceUnavailable("the live Slurm source is not available yet; use --demo or --from DIR")
    return live()


def _rest_snapshot(where: str) -> Snapshot:
    from tui.sources import slurmrestd

    if where.startswith(("http://", "https://")):
        return slurmrestd.live_snapshot(url=where)
    return slurmrestd.live_snapshot(socket=where)


def make_loader(settings: config.Settings, me: str) -> Callable[[], Snapshot]:
    """The function the app's worker calls to read the configured source."""
    if settings.source == "folder":
        return partial(_folder_snapshot, str(settings.folder))
    if settings.source == "slurm":
        return _slurm_snapshot
    if settings.source == "slurmrestd":
        return partial(_rest_snapshot, str(settings.slurmrestd))
    from tui.sources.demo import demo_snapshot

    return partial(demo_snapshot, seed=0, me=me or None)


def build_app(args: argparse.Namespace):  # noqa: ANN201 - FairtopApp, imported lazily
    """The configured app, not yet running (tests and the screenshot script use this)."""
    from tui.app.app import FairtopApp

    settings = config.load(getattr(args, "config", None), config.cli_overrides(args))
    me = settings.user or current_user()
    state = config.load_state()
    return FairtopApp(settings, make_loader(settings, me), me, state)


def run_app(args: argparse.Namespace) -> int:
    """Run the TUI until the user quits; remembers the theme and source in the state file."""
    app = build_app(args)
    app.run()
    app.state.last_source = "folder:" + str(app.settings.folder) if app.settings.source == "folder" \
        else app.settings.source
    try:
        config.save_state(app.state)
    except OSError:
        pass  # a read-only home must not turn a clean exit into an error
    return app.return_code or 0
