"""The source flags every command that reads a cluster shares: one flag a source of the registry
(``--demo``, ``--from DIR``, ``--slurm``, ...), ``--user``, ``--theme``, ``--cluster``, ``--config``."""

from __future__ import annotations

import argparse

from tui.sources import registry

CLUSTER_HELP = ("NAME, a,b or all: the config's [[cluster]] tables, or clusters of the live slurmdbd (-M); "
                "the output then carries a cluster column.")


def app_options(parser: argparse.ArgumentParser, again: bool = False) -> None:
    """The app's options (source flags from the registry, --user, --theme, --config).

    ``again``: on a subcommand (``fairtop serve --from DIR`` as ``fairtop --from DIR serve``),
    with SUPPRESS defaults so an option not given there keeps the top level's value.
    """
    kw: dict = {"default": argparse.SUPPRESS} if again else {}
    sources = parser.add_mutually_exclusive_group()
    for cls in registry.SOURCES.values():
        dest = f"source_{cls.name}"
        if cls.choices:
            sources.add_argument(cls.flag, dest=dest, nargs="?", const=cls.choices[0], choices=cls.choices,
                                 metavar=cls.metavar, help=cls.help, **kw)
        elif cls.metavar:
            sources.add_argument(cls.flag, dest=dest, metavar=cls.metavar, help=cls.help, **kw)
        else:
            sources.add_argument(cls.flag, dest=dest, action="store_true", help=cls.help, **kw)
    parser.add_argument("--user", help="the user to highlight and jump to (default: the Unix user)", **kw)
    parser.add_argument("--theme", help="theme name (see themes/)", **kw)
    parser.add_argument("--cluster", metavar="NAME", help="the cluster to show first (a [[cluster]] of the config; "
                        "with --slurm: NAME or a,b, asked with -M)", **kw)
    parser.add_argument("--config", metavar="FILE", help="config file (default: see 'fairtop info')", **kw)
