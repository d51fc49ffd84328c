"""``fairtop`` without a subcommand: read the config, make the source, run the app."""

from __future__ import annotations

import argparse
import gc

from tui import config


def build_app(args: argparse.Namespace):  # noqa: ANN201 - FairtopApp, imported lazily
    """The configured app, not yet running (tests and the screenshot script use this)."""
    from tui.app.app import FairtopApp
    from tui.app.clusters import Cluster

    overrides = config.cli_overrides(args)
    settings = config.load(getattr(args, "config", None), overrides)
    me = config.viewer(settings)
    sources = config.make_sources(settings, me, getattr(args, "cluster", None), "source" in overrides)
    for source in sources.values():
        source.check()
    clusters = [Cluster(name, s.load, s.is_live(), s.describe(), s.refresh_now, s.load_stages, s.instant)
                for name, s in sources.items()]
    first = clusters[0]
    return FairtopApp(settings, first.loader, me, config.load_state(), live=first.live,
                      source_name=first.source_name, on_reload=first.on_reload, clusters=clusters,
                      stages=first.stages)


def run_app(args: argparse.Namespace) -> int:
    """Run the TUI until the user quits; remembers the theme and source in the state file."""
    # No cycle collection until the first frame is drawn (FairtopApp.on_mount turns it back
    # on): the start-up's imports and widgets are all kept, and the collector's passes over
    # them were 0.05-0.08 s of the first frame (bench/README.md, issue 33).
    gc.disable()
    try:
        app = build_app(args)
        app.run()
    finally:
        gc.enable()
    if app.standing is not None:  # a source that never loaded is not worth remembering
        app.state.last_source = app.source_name
    try:
        config.save_state(app.state)
    except OSError:
        pass  # a read-only home must not turn a clean exit into an error
    return app.return_code or 0
