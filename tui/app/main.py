"""``fairtop`` without a subcommand: read the config, make the source, run the app."""

from __future__ import annotations

import argparse

from tui import config


def build_app(args: argparse.Namespace):  # noqa: ANN201 - FairtopApp, imported lazily
    """The configured app, not yet running (tests and the screenshot script use this)."""
    from tui.app.app import FairtopApp

    settings = config.load(getattr(args, "config", None), config.cli_overrides(args))
    me = settings.user or config.current_user()
    source = config.make_source(settings, me)
    source.check()
    return FairtopApp(settings, source.load, me, config.load_state(), live=source.is_live(),
                      source_name=source.describe(), on_reload=source.refresh_now, stages=source.load_stages)


def run_app(args: argparse.Namespace) -> int:
    """Run the TUI until the user quits; remembers the theme and source in the state file."""
    app = build_app(args)
    app.run()
    if app.standing is not None:  # a source that never loaded is not worth remembering
        app.state.last_source = app.source_name
    try:
        config.save_state(app.state)
    except OSError:
        pass  # a read-only home must not turn a clean exit into an error
    return app.return_code or 0
