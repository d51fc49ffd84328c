"""``fairtop serve``: the app served to a browser through textual-serve (:mod:`tui.serve`), on
127.0.0.1 behind a one-time token; each session runs the app in a child process."""

from __future__ import annotations

import argparse
import sys

from tui.cli import app_start
from tui.cli.source_flags import app_options
from tui.sources import registry
from tui.sources.errors import InputError


def add_parser(sub: argparse._SubParsersAction) -> None:
    serve = sub.add_parser("serve", help="serve the app to a browser (textual-serve) on 127.0.0.1, behind a token",
                           description="Serve fairtop through textual-serve. The first line of output is the "
                                       "URL with its one-time token; reach it from your desktop with "
                                       "'ssh -L PORT:127.0.0.1:PORT login-node'.")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    serve.add_argument("--port", default="8000", metavar="P", help="port (default 8000; 0: any free port)")
    app_options(serve, again=True)


def run(args: argparse.Namespace) -> int:
    """``fairtop serve``: check the options here (a bad source fails in the terminal), then serve."""
    from tui.serve import child_command, serve

    port_text = str(args.port).strip()
    if not (port_text.isascii() and port_text.isdigit()) or int(port_text) > 65535:
        raise InputError("fairtop serve", f"--port takes a port number 0-65535, not {args.port!r}")
    chosen = [cls.flag for cls in registry.SOURCES.values()
              if getattr(args, f"source_{cls.name}", None) not in (None, False)]
    if len(chosen) > 1:
        raise InputError("fairtop serve", f"one source at a time, not {' and '.join(chosen)}")
    app_start.build_app(args)
    try:
        return serve(child_command(args), host=args.host, port=int(port_text))
    except OSError as exc:
        print(f"fairtop serve: cannot listen on {args.host}:{port_text}: {exc.strerror or exc}", file=sys.stderr)
        return 1
